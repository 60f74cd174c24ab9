// http-client.mjs: what the raw HTTP tests of libmcp share
// (test/http.mjs, test/streamable.mjs, test/defects.mjs, test/stages.mjs):
// the servers under test,
// started with --http on a free port; one HTTP exchange read as it
// arrives (status, headers, SSE events); raw TCP connections; MCP
// messages; and a group runner that closes what a group opened and
// checks that its servers outlived it. Node 20, no npm packages;
// loopback traffic only.
import http from 'node:http';
import net from 'node:net';
import {
	Child, SseParser, Waitable, children, listening, ok, showJson as show, within,
} from './harness.mjs';

export const DEMO = process.env.MCP_DEMO || 'build/mcp-demo';
export const CONF = process.env.CONFORMANCE_SERVER || 'build/conformance-server';
export const FEAT = process.env.FEAT_SERVER || 'build/feat-server';
export const SID = /^[0-9a-f]{32}$/;
export const ZERO_SID = '0'.repeat(32);
export const ACCEPT = 'application/json, text/event-stream';
export const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

// ---- what a group opens, closed when it ends ---------------------------

export const handles = new Set();	// sockets, requests, agents, timers, functions
let started = [];			// servers started by the current group

export function track(h) {
	handles.add(h);
	return h;
}

export function closeHandles() {
	for (const h of handles) {
		try {
			if (typeof h === 'function')
				h();
			else if (typeof h.hasRef === 'function')
				clearInterval(h);
			else if (h instanceof http.Agent)
				h.destroy();
			else if (h.destroy)
				h.destroy();
		} catch { /* already gone */ }
	}
	handles.clear();
}

// (test/node/harness.mjs kills them too when the script exits.)
export function killAll() {
	for (const s of children)
		s.kill('SIGKILL');
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
	process.on(sig, () => { killAll(); process.exit(1); });

// ---- the servers under test ---------------------------------------------

/*
 * A server started with --http ADDR (a free loopback port by default).
 * stdin 'pipe' keeps a pipe open (and unused), 'ignore' gives /dev/null;
 * stdout 'pipe' collects the first 100,000 characters of stdout.
 */
export class Server extends Child {
	constructor(prog, args, { addr = '127.0.0.1:0', stdin = 'pipe', stdout = 'ignore',
	    stderrMax = 200000 } = {}) {
		super(prog, ['--http', addr, ...args], [stdin, stdout, 'pipe'], { stderrMax });
		this.prog = prog;
		started.push(this);
		this.port = null;
		this.expectExit = false;
		if (this.proc.stdout) {
			this.stdout = '';
			this.proc.stdout.setEncoding('utf8');
			this.proc.stdout.on('data', (d) => {
				if (this.stdout.length < 100000)
					this.stdout += d;
				this._wake();
			});
		}
		if (this.proc.stdin)
			this.proc.stdin.on('error', () => { /* closed */ });
	}

	// Waits for the line "listening on http://ADDR:PORT"; throws when it
	// does not come.
	async start(ms = 10000) {
		const l = () => listening(this.stderr.slice(0, this.stderr.lastIndexOf('\n') + 1));
		await this.until(() => l() !== null || this.exit !== null ||
		    this.spawnError !== undefined, ms);
		const m = l();
		if (!m || this.exit !== null)
			throw new Error(`${this.prog} ${this.args.join(' ')} did not start: ` +
			    `exit ${show(this.exit)} ${this.spawnError || ''}\nstderr: ${this.stderr.slice(-600)}`);
		this.addr = m.addr;
		this.port = m.port;
		this.listenLine = `listening on ${m.url}`;
		return this;
	}

	// VmRSS (or another field of /proc/PID/status) in kB; null when gone.
	rss(field = 'VmRSS') {
		return this.status([field])?.[field] ?? null;
	}

	tail(n = 800) {
		return `server stderr: ${this.stderr.slice(-n)}`;
	}
}

export const startServer = (args = [], prog = DEMO) => new Server(prog, args).start();

// ---- HTTP ----------------------------------------------------------------

/*
 * One HTTP exchange with node:http, read as it arrives: status, headers,
 * raw (the body so far), and for a text/event-stream body its items
 * (SseParser's comments and events, t in ms since the request) and msgs
 * (the JSON of its events' data, when there is any). ended once the
 * response is over (complete: it ended normally), or on an error (status
 * 0 when no headers came). body: a string, sent as is, or an object,
 * sent as JSON; Content-Length is always set.
 */
export class Exchange extends Waitable {
	constructor(port, method, path, { headers = {}, body, agent = false, host = '127.0.0.1' } = {}) {
		super();
		this.t0 = Date.now();
		this.status = null;
		this.headers = {};
		this.raw = '';		// the first 64 Mi characters
		this.bytes = 0;		// characters received in all
		this.items = [];
		this.msgs = [];
		this.ended = false;
		this.complete = false;
		this.error = null;
		this.parser = new SseParser((it) => this._item(it));
		const h = { ...headers };
		let payload = null;
		if (body !== undefined) {
			payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
			h['Content-Length'] = payload.length;
		}
		this.req = track(http.request({ host, port, method, path, headers: h, agent }, (res) => {
			this.res = res;
			this.status = res.statusCode;
			this.headers = res.headers;
			this.tHeaders = Date.now() - this.t0;
			this.localPort = res.socket && res.socket.localPort;
			res.setEncoding('utf8');
			res.on('data', (d) => {
				this.bytes += d.length;
				if (this.raw.length < 64 * 1024 * 1024)
					this.raw += d;
				if (this.sse)
					this.parser.feed(d, Date.now() - this.t0);
				this._wake();
			});
			res.on('end', () => {
				this.complete = true;
				this._end();
			});
			res.on('close', () => this._end());
			res.on('error', () => this._end());
			this._wake();
		}));
		this.req.on('error', (e) => {
			this.error = e.code || e.message;
			if (this.status === null)
				this.status = 0;
			this._end();
		});
		this.req.end(payload ?? undefined);
	}

	get sse() {
		return /^text\/event-stream\s*(;|$)/i.test(this.headers['content-type'] || '');
	}

	_item(it) {
		this.items.push(it);
		if (it.type === 'event' && it.data !== '') {
			try {
				this.msgs.push(JSON.parse(it.data));
			} catch {
				this.msgs.push({ unparsable: it.data });
			}
		}
	}

	_end() {
		if (!this.ended) {
			this.ended = true;
			this.endedAt = Date.now() - this.t0;
			handles.delete(this.req);
		}
		this._wake();
	}

	async done(ms = 8000) {
		await this.until(() => this.ended, ms);
		return this;
	}

	async head(ms = 8000) {
		await this.until(() => this.status !== null || this.ended, ms);
		return this;
	}

	json() {
		try {
			return JSON.parse(this.raw);
		} catch {
			return undefined;
		}
	}

	events() {
		return this.items.filter((i) => i.type === 'event');
	}

	comments() {
		return this.items.filter((i) => i.type === 'comment');
	}

	// Every message of the body: the SSE events' JSON, or the JSON body.
	messages() {
		if (this.sse)
			return this.msgs;
		const j = this.json();
		return j === undefined ? [] : [j];
	}

	answer(id) {
		return this.messages().find((m) => m && !('method' in m) &&
		    JSON.stringify(m.id) === JSON.stringify(id));
	}

	close() {
		this.req.destroy();
		handles.delete(this.req);
	}

	summary() {
		return `${this.status} ${this.error || ''} ${show(this.headers)} ${show(this.raw.slice(0, 400))}`;
	}
}

// POST to /mcp (or path): msg is an object (sent as JSON) or a string.
export function post(port, msg, { sid, version, accept = ACCEPT, ctype = 'application/json',
    headers = {}, path = '/mcp', agent } = {}) {
	const h = { ...headers };
	if (accept !== null)
		h.Accept = accept;
	if (ctype !== null)
		h['Content-Type'] = ctype;
	if (sid)
		h['Mcp-Session-Id'] = sid;
	if (version)
		h['MCP-Protocol-Version'] = version;
	return new Exchange(port, 'POST', path, { headers: h, body: msg, agent });
}

export function get(port, { sid, last, accept = 'text/event-stream', headers = {}, path = '/mcp' } = {}) {
	const h = { ...headers };
	if (accept !== null)
		h.Accept = accept;
	if (sid)
		h['Mcp-Session-Id'] = sid;
	if (last !== undefined)
		h['Last-Event-ID'] = last;
	return new Exchange(port, 'GET', path, { headers: h });
}

export function del(port, sid, { headers = {}, path = '/mcp' } = {}) {
	const h = { ...headers };
	if (sid)
		h['Mcp-Session-Id'] = sid;
	return new Exchange(port, 'DELETE', path, { headers: h });
}

/*
 * A raw TCP connection: data collects what comes back (latin1, its first
 * keep characters), bytes counts all of it, closedAt is ms after connect
 * when the server closed it.
 */
export function rawConn(port, { host = '127.0.0.1', keep = Infinity } = {}) {
	const c = Object.assign(new Waitable(),
	    { data: '', bytes: 0, closedAt: null, error: null, t0: Date.now() });
	c.sock = track(net.connect({ port, host }));
	c.connected = new Promise((res) => {
		c.sock.on('connect', () => res(true));
		c.sock.on('error', (e) => { c.error = e.code || e.message; res(false); c._wake(); });
	});
	c.sock.on('data', (d) => {
		c.bytes += d.length;
		if (c.data.length < keep)
			c.data += d.toString('latin1');
		c._wake();
	});
	c.sock.on('close', () => {
		c.closedAt = Date.now() - c.t0;
		c._wake();
	});
	// The status of the first response, once its headers are in.
	c.status = () => {
		const m = c.data.match(/^HTTP\/1\.[01] (\d{3})/);
		return m && c.data.includes('\r\n\r\n') ? Number(m[1]) : null;
	};
	return c;
}

// ---- MCP -----------------------------------------------------------------

export const INIT = (id = 'init', version = '2025-11-25', capabilities = {}) => ({
	jsonrpc: '2.0', id, method: 'initialize',
	params: { protocolVersion: version, capabilities,
	    clientInfo: { name: 'streamable-test', version: '1' } },
});
export const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };
export const call = (id, name, args, token) => ({
	jsonrpc: '2.0', id, method: 'tools/call',
	params: { name, arguments: args, ...(token !== undefined ? { _meta: { progressToken: token } } : {}) },
});
export const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });
export const textOf = (m) => m && m.result && Array.isArray(m.result.content) &&
    m.result.content[0] ? m.result.content[0].text : undefined;
export const isErr = (m, code) => m && m.jsonrpc === '2.0' && m.error && m.error.code === code &&
    typeof m.error.message === 'string' && !('result' in m);
export const isResult = (m, id) => m && m.jsonrpc === '2.0' && JSON.stringify(m.id) === JSON.stringify(id) &&
    m.result && !('error' in m);
export const isJsonType = (x) => /^application\/json\s*(;|$)/i.test(x.headers['content-type'] || '');
// The event ids of an exchange's events, as [route, seq] pairs.
export const idsOf = (x) => x.events().map((e) => (e.other.id || '').split('-').map(Number));

// initialize (at VERSION) and notifications/initialized: the session id.
export async function open(srv, { version = '2025-11-25', headers = {}, path, capabilities } = {}) {
	const r = await post(srv.port, INIT('init', version, capabilities), { headers, path }).done();
	const sid = r.headers['mcp-session-id'];
	if (r.status !== 200 || !SID.test(sid || ''))
		throw new Error(`initialize: ${r.summary()}\n${srv.tail()}`);
	const n = await post(srv.port, INITIALIZED, { sid, headers, path }).done();
	if (n.status !== 202)
		throw new Error(`notifications/initialized: ${n.summary()}`);
	return sid;
}

// A message of exactly len bytes: an echo call padded with x.
export function sized(id, len) {
	const pad = len - JSON.stringify(call(id, 'echo', { text: '' })).length;
	const s = JSON.stringify(call(id, 'echo', { text: 'x'.repeat(pad) }));
	if (Buffer.byteLength(s) !== len)
		throw new Error('sizing');
	return s;
}

export async function group(name, fn, ms = 30000) {
	const t = {
		dead: false,
		ok(cond, desc, ...why) {
			return t.dead ? !!cond : ok(cond, desc, ...why);
		},
	};
	started = [];
	let timer;
	try {
		await Promise.race([fn(t), new Promise((_, rej) => {
			timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms);
		})]);
	} catch (e) {
		t.dead = true;
		ok(false, `${name}: completes`, e.stack || String(e), ...started.map((s) => s.tail()));
	} finally {
		clearTimeout(timer);
		t.dead = true;
	}
	for (const s of started)
		if (s.port !== null && !s.expectExit)
			ok(s.exit === null, `${name}: the server (${s.prog} ${s.args.join(' ')}) is still running at the end`,
			    `exit ${show(s.exit)}`, s.tail());
	closeHandles();
	for (const s of [...children]) {
		s.kill('SIGKILL');
		await within(s.exited, 3000);
	}
}

