// features.mjs: progress notifications, logging/setLevel, tool timeouts
// and a few hostile inputs, against the reference server build/mcp-demo,
// on stdio AND on the legacy HTTP+SSE transport. Each transport gets:
//
//   sdk      the official TypeScript SDK client: onprogress on callTool,
//            the logging capability, setLoggingLevel, an aborted call
//   raw      byte-level JSON-RPC: progress tokens and their JSON types,
//            bogus tokens, ordering against the response line, cancel,
//            logging/setLevel, stray responses, a 1 MiB cursor
//   timeout  a server started with --tool-timeout 300
//
// Prints TAP on stdout; exits 1 if any assertion failed. Node 20; the SDK
// comes from test/node/node_modules. Run from anywhere:
//
//   node test/features.mjs [stdio|sse] [sdk|raw|timeout] ...
//
// Arguments pick transports and groups (default: all of both). The
// server's stderr is shown as TAP comments only when something failed.
// MCP_DEMO in the environment names another server binary.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual, inspect } from 'node:util';
import {
	SseParser, Waitable, diag, eachLine, errText, finish, globalTimeout, is, listening, ok,
	settle, sleep, tap, textOf, within,
} from './node/harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SDK = path.join(HERE, 'node/node_modules/@modelcontextprotocol/sdk/dist/esm');
const { Client } = await import(pathToFileURL(path.join(SDK, 'client/index.js')).href);
const { StdioClientTransport } = await import(pathToFileURL(path.join(SDK, 'client/stdio.js')).href);
const { SSEClientTransport } = await import(pathToFileURL(path.join(SDK, 'client/sse.js')).href);

const SERVER = path.resolve(process.env.MCP_DEMO ?? path.join(HERE, '../build/mcp-demo'));
const GLOBAL_TIMEOUT_MS = 60000;
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

const want = process.argv.slice(2);
const KINDS = ['stdio', 'sse'].filter(k => !want.some(a => ['stdio', 'sse'].includes(a)) || want.includes(k));
const GROUPS = ['sdk', 'raw', 'timeout'].filter(g =>
    !want.some(a => ['sdk', 'raw', 'timeout'].includes(a)) || want.includes(g));

// ---- TAP (test/node/harness.mjs; tap.label names the transport) ---------------

const stderrLog = [];		// every server's stderr, shown on failure

function show(v) {
	return inspect(v, { depth: 8, breakLength: Infinity, maxStringLength: 300 });
}
tap.show = show;

// ---- processes ---------------------------------------------------------------

const procs = new Set();	// {child, exited, exit}: everything we spawned
const sockets = new Set();	// open HTTP requests (SSE streams), destroyed at the end

function track(child, tag) {
	const p = { child, exit: null };
	procs.add(p);
	p.exited = new Promise(resolve => {
		child.once('exit', (code, signal) => {
			p.exit = { code, signal };
			procs.delete(p);
			resolve(p.exit);
		});
		child.once('error', e => {
			stderrLog.push(`[${tag}] spawn: ${e.message}`);
			p.exit = { error: e.message };
			procs.delete(p);
			resolve(p.exit);
		});
	});
	if (child.stderr)
		eachLine(child.stderr, line => {
			stderrLog.push(`[${tag}] ${line}`);
			if (stderrLog.length > 2000)
				stderrLog.splice(0, stderrLog.length - 1000);
		});
	return p;
}

function killAll() {
	for (const s of sockets)
		try { s.destroy(); } catch { /* gone */ }
	for (const p of procs)
		try { p.child.kill('SIGKILL'); } catch { /* gone */ }
}

// Asks P to end (SIGTERM, or end of stdin), SIGKILL after LIMIT ms.
async function stop(p, how = 'SIGTERM', limit = 3000) {
	if (p === undefined || p.exit !== null)
		return;
	try {
		if (how === 'stdin')
			p.child.stdin.end();
		else
			p.child.kill(how);
	} catch { /* gone */ }
	if (await within(p.exited, limit) === null) {
		try { p.child.kill('SIGKILL'); } catch { /* gone */ }
		await within(p.exited, 2000);
	}
}

function end() {
	killAll();
	finish(stderrLog);
}

const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, end, '');

// ---- helpers ---------------------------------------------------------------

function increasing(xs) {
	return xs.every((x, i) => i === 0 || x > xs[i - 1]);
}

const isProgress = e => e.msg?.method === 'notifications/progress';

// The raw JSON text of a progress notification's token, as the server wrote
// it (the server writes compact JSON; 2^53+1 would not survive JSON.parse).
function rawToken(e) {
	const m = /"progressToken":("(?:[^"\\]|\\.)*"|[^,}]*)/.exec(e.raw);
	return m ? m[1] : undefined;
}

// ---- servers -----------------------------------------------------------------

// The HTTP server for ARGS (one per set of options), started once: its base
// URL, from the "listening on http://.../sse" line on stderr.
const httpServers = new Map();

function httpServer(args) {
	const key = args.join(' ');
	if (!httpServers.has(key))
		httpServers.set(key, startHttp(args, `http ${key}`.trim()));
	return httpServers.get(key);
}

function startHttp(args, tag) {
	return new Promise(resolve => {
		// stdin stays an open pipe: were stdio served too, EOF would end it.
		const child = spawn(SERVER, ['--http', '127.0.0.1:0', ...args],
		    { stdio: ['pipe', 'ignore', 'pipe'] });
		const p = track(child, tag);
		const timer = setTimeout(() => resolve({ p, base: null }), 5000);
		eachLine(child.stderr, line => {
			const l = listening(line);
			if (l) {
				clearTimeout(timer);
				resolve({ p, base: l.base });
			}
		});
		p.exited.then(() => { clearTimeout(timer); resolve({ p, base: null }); });
	});
}

// ---- raw connections -----------------------------------------------------------

// Every message from the server, in order: {seq, t, raw, msg}. send() takes
// an object or a string (one message) and resolves once it is written (stdio)
// or its POST is answered (SSE: {status}).
class Raw extends Waitable {
	constructor(tag) {
		super();
		this.tag = tag;
		this.msgs = [];
		this.bad = [];
		this.nextId = 1000;
	}

	_push(raw) {
		let msg;
		try { msg = JSON.parse(raw); } catch { this.bad.push(raw); }
		this.msgs.push({ seq: this.msgs.length, t: Date.now(), raw, msg });
		this._wake();
	}

	// Resolves true once cond() holds, or cond() after MS.
	until(cond, ms = 5000) {
		return super.until(cond, ms);
	}

	responses(id) {
		return this.msgs.filter(e => e.msg && !('method' in e.msg) &&
		    isDeepStrictEqual(e.msg.id, id));
	}

	progress(tokenRaw) {
		return this.msgs.filter(e => isProgress(e) && rawToken(e) === tokenRaw);
	}

	async answer(id, ms = 5000) {
		await this.until(() => this.responses(id).length > 0 || this.gone(), ms);
		return this.responses(id)[0];
	}

	// Sends a request and waits for its answer: the entry, or undefined.
	async request(method, params, ms = 5000) {
		const id = this.nextId++;
		const m = { jsonrpc: '2.0', id, method };
		if (params !== undefined)
			m.params = params;
		await this.send(m);
		return this.answer(id, ms);
	}

	async init() {
		const r = await this.request('initialize', {
			protocolVersion: '2025-11-25', capabilities: {},
			clientInfo: { name: 'libmcp-features', version: '1' }
		});
		await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		return r;
	}
}

class RawStdio extends Raw {
	constructor(args, tag) {
		super(tag);
		this.child = spawn(SERVER, args, { stdio: ['pipe', 'pipe', 'pipe'] });
		this.p = track(this.child, tag);
		this.p.exited.then(() => this._wake());
		this.child.stdin.on('error', () => { /* reported by gone() */ });
		this.child.stdout.setEncoding('utf8');
		eachLine(this.child.stdout, line => this._push(line));
	}

	gone() {
		return this.p.exit !== null;
	}

	send(m) {
		const line = (typeof m === 'string' ? m : JSON.stringify(m)) + '\n';
		return new Promise(resolve => {
			if (!this.child.stdin.writable)
				return resolve({ error: 'stdin closed' });
			this.child.stdin.write(line, e => resolve(e ? { error: e.message } : {}));
		});
	}

	close() {
		return stop(this.p, 'stdin');
	}
}

function post(url, body) {
	return new Promise(resolve => {
		const u = new URL(url);
		const req = http.request({
			host: u.hostname, port: u.port, path: u.pathname + u.search,
			method: 'POST', agent: false,
			headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
		}, res => {
			let b = '';
			res.setEncoding('utf8');
			res.on('data', d => { b += d; });
			res.on('end', () => resolve({ status: res.statusCode, body: b }));
			res.on('error', e => resolve({ error: e.message }));
		});
		req.on('error', e => resolve({ error: e.message }));
		req.end(body);
	});
}

class RawSse extends Raw {
	// Opens a session (GET /sse) on the server at BASE; resolves once the
	// endpoint event has come.
	static open(base, tag) {
		const c = new RawSse(tag);
		c.base = base;
		c.posts = [];
		c.ended = false;
		return new Promise(resolve => {
			const u = new URL(base + '/sse');
			const req = http.request({
				host: u.hostname, port: u.port, path: u.pathname, method: 'GET',
				agent: false, headers: { accept: 'text/event-stream' }
			});
			c.req = req;
			sockets.add(req);
			const timer = setTimeout(() => resolve(c), 5000);
			req.on('error', e => { c.error = e.message; c.ended = true; c._wake(); resolve(c); });
			req.on('response', res => {
				c.status = res.statusCode;
				res.setEncoding('utf8');
				const parser = new SseParser(ev => {
					if (ev.type !== 'event')
						return;
					if (ev.event === 'endpoint') {
						c.endpoint = new URL(ev.data, base + '/sse').href;
						clearTimeout(timer);
						resolve(c);
					} else {
						c._push(ev.data);
					}
				});
				res.on('data', d => parser.feed(d, Date.now()));
				res.on('end', () => { c.ended = true; c._wake(); resolve(c); });
				res.on('error', () => { c.ended = true; c._wake(); });
			});
			req.end();
		});
	}

	gone() {
		return this.ended;
	}

	async send(m) {
		if (!this.endpoint)
			return { error: 'no endpoint' };
		const r = await post(this.endpoint, typeof m === 'string' ? m : JSON.stringify(m));
		this.posts.push(r);
		return r;
	}

	close() {
		try { this.req.destroy(); } catch { /* gone */ }
		sockets.delete(this.req);
	}
}

// A raw, initialized connection of KIND to a server with ARGS.
async function openRaw(kind, args = [], tag = 'raw') {
	let c;
	if (kind === 'stdio') {
		c = new RawStdio(args, `stdio ${tag}`);
	} else {
		const srv = await httpServer(args);
		if (srv.base === null)
			return { error: 'the HTTP server did not start' };
		c = await RawSse.open(srv.base, `sse ${tag}`);
		if (!c.endpoint)
			return { error: `no endpoint event (status ${c.status}, ${c.error ?? 'no error'})` };
	}
	const r = await c.init();
	if (!r?.msg?.result) {
		c.close();
		return { error: `initialize failed: ${show(r?.msg)}` };
	}
	c.initResult = r.msg.result;
	return { c };
}

const sleepCall = (id, ms, meta) => ({
	jsonrpc: '2.0', id, method: 'tools/call',
	params: { name: 'sleep', arguments: { ms }, ...(meta === undefined ? {} : { _meta: meta }) }
});

// ---- SDK connections -----------------------------------------------------------

// The SDK client on KIND to a server with ARGS; conn.received records every
// message the transport hands up, in order.
async function openSdk(kind, args = [], tag = 'sdk') {
	let transport;
	const conn = { received: [], sent: [], errors: [] };
	if (kind === 'stdio') {
		transport = new StdioClientTransport({ command: SERVER, args, stderr: 'pipe' });
		const start = transport.start.bind(transport);
		transport.start = async () => {
			await start();
			if (transport._process)
				conn.p = track(transport._process, `stdio ${tag}`);
		};
	} else {
		const srv = await httpServer(args);
		if (srv.base === null)
			return { connectError: new Error('the HTTP server did not start') };
		transport = new SSEClientTransport(new URL(srv.base + '/sse'));
	}
	const send = transport.send.bind(transport);
	transport.send = (msg, o) => {
		conn.sent.push({ t: Date.now(), msg });
		return send(msg, o);
	};
	const client = new Client({ name: 'libmcp-features', version: '1.0.0' });
	client.onerror = e => conn.errors.push(e);
	conn.client = client;
	conn.transport = transport;
	const r = await settle(client.connect(transport), 8000);
	conn.connectError = r.error;
	// The SDK installed its handler when connecting: wrap it.
	const handler = transport.onmessage;
	transport.onmessage = (msg, extra) => {
		conn.received.push({ seq: conn.received.length, t: Date.now(), msg });
		handler?.(msg, extra);
	};
	return conn;
}

async function closeSdk(conn) {
	await settle(conn.client.close(), 3000);
	if (conn.p)
		await stop(conn.p, 'SIGTERM', 3000);
}

// ---- sdk: onprogress, the logging capability, an aborted call ---------------

async function sdkGroup(kind) {
	const conn = await openSdk(kind, [], 'sdk');
	if (!ok(!conn.connectError, 'sdk: connect (initialize handshake) succeeds',
	    conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	const caps = client.getServerCapabilities();
	ok(caps?.logging !== null && typeof caps?.logging === 'object' && !Array.isArray(caps.logging),
	    'sdk: server capabilities declare logging (an object)', caps);
	let r = await settle(client.setLoggingLevel('warning'), 5000);
	is(r.error ? errText(r.error) : r.value, {}, 'sdk: setLoggingLevel("warning") resolves with {}');

	// -- onprogress: sleep 450 reports at 100, 200, 300 and 400 ms
	const events = [];
	let resolved = false;
	const p = client.callTool({ name: 'sleep', arguments: { ms: 450 } }, undefined, {
		onprogress: ev => events.push({ ...ev, afterResult: resolved })
	});
	p.then(() => { resolved = true; }, () => { resolved = true; });
	r = await settle(p, 5000);
	is(r.error ? errText(r.error) : { text: textOf(r.value), isError: r.value.isError ?? false },
	    { text: 'slept 450 ms', isError: false }, 'sdk: sleep 450 with onprogress: "slept 450 ms"');
	ok(events.length >= 3, `sdk: sleep 450: onprogress called ${events.length} times (>= 3)`, events);
	ok(events.length > 0 && increasing(events.map(e => e.progress)),
	    `sdk: sleep 450: progress values increase (${events.map(e => e.progress).join(', ')})`, events);
	ok(events.length > 0 && events.every(e => e.total === 450 && e.progress > 0 && e.progress < 450),
	    'sdk: sleep 450: every event has total 450 and 0 < progress < 450', events);
	ok(events.length > 0 && events.every(e => !e.afterResult),
	    'sdk: sleep 450: every onprogress came before callTool resolved', events);
	const req = conn.sent.find(m => m.msg.method === 'tools/call' && m.msg.params?.arguments?.ms === 450)?.msg;
	const tok = req?.params?._meta?.progressToken;
	const resp = conn.received.find(e => !('method' in e.msg) && e.msg.id === req?.id);
	const prog = conn.received.filter(e => e.msg.method === 'notifications/progress' &&
	    e.msg.params?.progressToken === tok);
	ok(tok !== undefined && resp !== undefined && prog.length === events.length &&
	    prog.every(e => e.seq < resp.seq),
	    `sdk: sleep 450: the ${prog.length} notifications with the SDK's token ${show(tok)} all came before the response`,
	    { tok, prog: prog.map(e => e.seq), resp: resp?.seq });

	// -- abort after 250 ms: progress stops, no response
	const ac = new AbortController();
	const aborted = [];
	const t0 = Date.now();
	let tAbort = Infinity;
	const pc = client.callTool({ name: 'sleep', arguments: { ms: 2000 } }, undefined, {
		signal: ac.signal, onprogress: ev => aborted.push({ ...ev, t: Date.now() })
	});
	// Abort just after the 200 ms tick: a progress sent while the cancel is
	// on its way is a race the spec allows, and the SDK would report it.
	setTimeout(() => { tAbort = Date.now(); ac.abort('features test cancels'); }, 210);
	r = await settle(pc, 5000);
	ok(r.error && !r.timedOut && r.ms < 1500,
	    `sdk: aborting sleep 2000 at 210 ms rejects the call (after ${r.ms} ms)`,
	    r.error ? errText(r.error) : { resolvedWith: r.value });
	const creq = conn.sent.find(m => m.msg.method === 'tools/call' && m.msg.params?.arguments?.ms === 2000)?.msg;
	const ctok = creq?.params?._meta?.progressToken;
	const note = conn.sent.find(m => m.msg.method === 'notifications/cancelled')?.msg;
	ok(creq !== undefined && ctok !== undefined && note?.params?.requestId === creq.id,
	    'sdk: the request carried a progressToken and the SDK sent notifications/cancelled for it', { creq, note });
	await sleep(Math.max(0, t0 + 1100 - Date.now()));
	const cprog = conn.received.filter(e => e.msg.method === 'notifications/progress' &&
	    e.msg.params?.progressToken === ctok);
	ok(cprog.filter(e => e.t < tAbort).length >= 1,
	    `sdk: progress came for the call before the abort (${cprog.filter(e => e.t < tAbort).length} notifications)`,
	    cprog.map(e => ({ at: e.t - t0, p: e.msg.params.progress })));
	const late = cprog.filter(e => e.t > tAbort + 150);
	is(late.map(e => ({ at: e.t - t0, progress: e.msg.params.progress })), [],
	    'sdk: no progress for the aborted call later than 150 ms after the abort (watched for 850 ms)',
	    `abort at ${tAbort - t0} ms`);
	is(conn.received.filter(e => !('method' in e.msg) && e.msg.id === creq?.id).map(e => e.msg), [],
	    'sdk: no response for the aborted call');
	r = await settle(client.callTool({ name: 'echo', arguments: { text: 'after abort' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'after abort', 'sdk: an echo after the abort works');
	is(conn.errors.map(errText), [], 'sdk: the SDK reported no errors (e.g. progress for an unknown token)');
	await closeSdk(conn);
}

// ---- raw: tokens, ordering, cancel, logging, hostile --------------------------

async function rawGroup(kind) {
	const { c, error } = await openRaw(kind, [], 'raw');
	if (!ok(c !== undefined, 'raw: initialize succeeds', error))
		return;
	const caps = c.initResult.capabilities;
	ok(isDeepStrictEqual(caps?.logging, {}) && typeof caps?.tools === 'object',
	    'raw: initialize result declares capabilities.logging ({}) next to tools', caps);

	// -- logging/setLevel
	for (const level of LEVELS) {
		const r = await c.request('logging/setLevel', { level });
		is(r?.msg, { jsonrpc: '2.0', id: r?.msg?.id, result: {} },
		    `raw: logging/setLevel "${level}" returns {}`);
	}
	for (const [params, what] of [
		[{ level: 'verbose' }, '"verbose"'],
		[{ level: '' }, 'an empty string'],
		[{ level: 3 }, 'the number 3'],
		[{}, 'no level']
	]) {
		const r = await c.request('logging/setLevel', params);
		ok(r?.msg?.error?.code === -32602 && r.msg.result === undefined,
		    `raw: logging/setLevel with ${what} gives error -32602`, r?.msg);
	}

	// -- tokens echoed with their JSON type (all at once: sleep 350, so
	// progress at 100, 200 and 300 ms)
	const tokens = [
		['"tok-abc"', 'a string token'],
		['"7"', 'a string token that looks like a number'],
		['42', 'an integer token'],
		['0', 'the integer token zero'],
		['-5', 'a negative integer token'],
		['9007199254740993', 'the integer token 2^53+1, exactly as written:']
	];
	const base = c.msgs.length;
	const ids = tokens.map((_, k) => 100 + k);
	await Promise.all(tokens.map(([tok], k) => c.send(
	    `{"jsonrpc":"2.0","id":${ids[k]},"method":"tools/call","params":{"name":"sleep",` +
	    `"arguments":{"ms":350},"_meta":{"progressToken":${tok}}}}`)));
	await c.until(() => ids.every(id => c.responses(id).length > 0), 5000);
	await sleep(200);	// anything late would show up now
	for (const [k, [tok, what]] of tokens.entries()) {
		const resp = c.responses(ids[k]);
		const prog = c.progress(tok);
		const vals = prog.map(e => e.msg?.params?.progress);
		ok(resp.length === 1 && textOf(resp[0].msg.result) === 'slept 350 ms',
		    `raw: ${what} ${tok}: the call succeeds ("slept 350 ms")`, resp.map(e => e.raw));
		ok(prog.length >= 3 && prog.every(e => e.raw.includes(`"progressToken":${tok},`)),
		    `raw: ${what} ${tok}: ${prog.length} progress notifications (>= 3), the token echoed byte for byte`,
		    prog.map(e => e.raw));
		if (tok !== '9007199254740993')
			ok(prog.length > 0 && prog.every(e => isDeepStrictEqual(e.msg.params.progressToken, JSON.parse(tok))),
			    `raw: ${what} ${tok}: the token keeps its JSON type (${typeof JSON.parse(tok)})`,
			    prog.map(e => e.msg.params.progressToken));
		ok(prog.length > 0 && increasing(vals) && prog.every(e => e.msg.params.total === 350),
		    `raw: ${what} ${tok}: progress increases (${vals.join(', ')}) with total 350`, prog.map(e => e.raw));
		ok(resp.length === 1 && prog.every(e => e.seq < resp[0].seq),
		    `raw: ${what} ${tok}: every progress line came before the response line`,
		    { prog: prog.map(e => e.seq), resp: resp.map(e => e.seq) });
	}
	const known = new Set(tokens.map(t => t[0]));
	const stray = c.msgs.slice(base).filter(e => isProgress(e) && !known.has(rawToken(e)));
	is(stray.map(e => e.raw), [], 'raw: no progress notification with any other token');

	// -- bogus tokens and no token: each on its own connection, at once
	const bogus = [
		['{"a":1}', 'an object token'],
		['1.5', 'a float token'],
		['null', 'a null token'],
		['true', 'a boolean token'],
		['[1]', 'an array token'],
		[undefined, 'no _meta'],
		['-', '_meta without progressToken']
	];
	const conns = await Promise.all(bogus.map((_, k) => openRaw(kind, [], `bogus${k}`)));
	await Promise.all(bogus.map(async ([tok, what], k) => {
		const bc = conns[k].c;
		if (bc === undefined) {
			ok(false, `raw: ${what}: a connection for it`, conns[k].error);
			return;
		}
		const meta = tok === undefined ? '' : tok === '-' ? ',"_meta":{}' :
		    `,"_meta":{"progressToken":${tok}}`;
		bc.bogusWhat = what;
		await bc.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep",` +
		    `"arguments":{"ms":250}${meta}}}`);
		await bc.answer(1, 5000);
		await sleep(150);
	}));
	for (const [k, [tok, what]] of bogus.entries()) {
		const bc = conns[k].c;
		if (bc === undefined)
			continue;
		const resp = bc.responses(1);
		ok(resp.length === 1 && textOf(resp[0].msg.result) === 'slept 250 ms' && !resp[0].msg.result.isError,
		    `raw: ${what}${tok && tok !== '-' ? ` ${tok}` : ''}: the call succeeds ("slept 250 ms")`,
		    resp.map(e => e.raw));
		is(bc.msgs.filter(isProgress).map(e => e.raw), [],
		    `raw: ${what}${tok && tok !== '-' ? ` ${tok}` : ''}: no progress notification at all`);
	}
	await Promise.all(conns.map(x => x.c?.close()));

	// -- ordering under a tight race: sleep 101..120 ms, progress at 100 ms
	// and the response 1..20 ms after it, 20 calls at once
	const ord = Array.from({ length: 20 }, (_, k) => ({ id: 200 + k, ms: 101 + k, tok: `"ord-${k}"` }));
	await Promise.all(ord.map(o => c.send(sleepCall(o.id, o.ms, { progressToken: JSON.parse(o.tok) }))));
	await c.until(() => ord.every(o => c.responses(o.id).length > 0), 5000);
	await sleep(300);
	const wrong = ord.filter(o => {
		const r = c.responses(o.id);
		return r.length !== 1 || textOf(r[0].msg.result) !== `slept ${o.ms} ms`;
	});
	is(wrong.map(o => ({ id: o.id, got: c.responses(o.id).map(e => e.raw) })), [],
	    'raw: 20 concurrent sleeps of 101..120 ms with tokens: each gets exactly its own result');
	const withProg = ord.filter(o => c.progress(o.tok).length >= 1);
	ok(withProg.length === ord.length,
	    `raw: 20 concurrent sleeps: each got its progress at 100 ms (${withProg.length} of 20)`,
	    ord.filter(o => !withProg.includes(o)).map(o => o.tok));
	const after = ord.flatMap(o => {
		const r = c.responses(o.id)[0];
		return c.progress(o.tok).filter(e => r === undefined || e.seq > r.seq).map(e => e.raw);
	});
	is(after, [], 'raw: 20 concurrent sleeps: no progress line after its call\'s response line (watched 300 ms on)');

	// -- cancel: sleep 2000 with a token, notifications/cancelled at 250 ms
	const t0 = Date.now();
	await c.send(sleepCall(300, 2000, { progressToken: 'cancel-me' }));
	await sleep(250);
	const cs = await c.send({ jsonrpc: '2.0', method: 'notifications/cancelled',
		params: { requestId: 300, reason: 'features test' } });
	const tCancel = Date.now();
	if (kind === 'sse')
		is(cs.status, 202, 'raw: the POST of notifications/cancelled gets 202');
	await sleep(Math.max(0, tCancel + 800 - Date.now()));
	const cprog = c.progress('"cancel-me"');
	ok(cprog.filter(e => e.t < tCancel).length >= 1,
	    `raw: cancel: progress came before the cancellation (${cprog.filter(e => e.t < tCancel).length})`,
	    cprog.map(e => ({ at: e.t - t0, raw: e.raw })));
	is(cprog.filter(e => e.t > tCancel + 100).map(e => ({ at: e.t - t0, raw: e.raw })), [],
	    'raw: cancel: no progress later than 100 ms after notifications/cancelled (watched 800 ms)',
	    `cancelled at ${tCancel - t0} ms`);
	is(c.responses(300).map(e => e.raw), [], 'raw: cancel: no response for the cancelled call');
	let r = await c.request('ping');
	is(r?.msg?.result, {}, 'raw: cancel: the session still answers ping');

	// -- hostile: responses to requests the server never sent
	const before = c.msgs.length;
	const s1 = await c.send({ jsonrpc: '2.0', id: 'never-sent', result: {} });
	const s2 = await c.send({ jsonrpc: '2.0', id: 77, error: { code: -32000, message: 'nope' } });
	const s3 = await c.send({ jsonrpc: '2.0', id: 78, result: { roots: [] } });
	if (kind === 'sse')
		is([s1.status, s2.status, s3.status], [202, 202, 202], 'raw: stray responses: each POST gets 202');
	await sleep(300);
	is(c.msgs.slice(before).map(e => e.raw), [],
	    'raw: stray responses (result and error, ids the server never used): no output at all');
	r = await c.request('ping');
	is(c.msgs.slice(before).map(e => e.msg), [{ jsonrpc: '2.0', id: r?.msg?.id, result: {} }],
	    'raw: stray responses: then a ping is answered, and that is the only output');

	// -- hostile: a 1 MiB cursor
	for (const [cursor, what] of [
		['A'.repeat(1 << 20), '1 MiB cursor of "A"'],
		['c' + '0'.repeat((1 << 20) - 1), '1 MiB cursor "c000..." (the cursor format, far too long)']
	]) {
		r = await c.request('tools/list', { cursor }, 8000);
		ok(r?.msg?.error?.code === -32602 && r.msg.result === undefined,
		    `raw: tools/list with a ${what} gives error -32602`,
		    r ? r.raw.slice(0, 300) : 'no answer');
	}
	r = await c.request('tools/list', { cursor: 5 });
	ok(r?.msg?.error?.code === -32602, 'raw: tools/list with a numeric cursor gives error -32602', r?.raw);
	r = await c.request('tools/list');
	ok(Array.isArray(r?.msg?.result?.tools) && r.msg.result.tools.length === 4,
	    'raw: then tools/list without a cursor still lists the 4 tools', r?.raw?.slice(0, 300));
	is(c.bad, [], 'raw: every line/event from the server was JSON');
	c.close();
	if (kind === 'stdio') {
		await within(c.p.exited, 3000);
		is(c.p.exit, { code: 0, signal: null }, 'raw: the server exits 0 at the end of stdin');
	}
}

// ---- timeout: --tool-timeout 300 ------------------------------------------------

async function timeoutGroup(kind) {
	const args = ['--tool-timeout', '300'];
	const { c, error } = await openRaw(kind, args, 'timeout');
	if (!ok(c !== undefined, 'timeout: initialize succeeds (--tool-timeout 300)', error))
		return;
	const t0 = Date.now();
	await c.send(sleepCall(1, 2000, { progressToken: 'to' }));
	const a = await c.answer(1, 3000);
	const dt = (a?.t ?? Date.now()) - t0;
	const res = a?.msg?.result;
	ok(res?.isError === true && /timed out/.test(textOf(res)),
	    'timeout: sleep 2000 gets an isError result mentioning "timed out"', a?.raw ?? 'no answer');
	is(textOf(res), 'tool sleep timed out after 300 ms', 'timeout: the text is "tool sleep timed out after 300 ms"');
	ok(a !== undefined && dt >= 280 && dt <= 1500, `timeout: it came after ${dt} ms (300..1500)`);
	let r = await c.request('tools/call', { name: 'echo', arguments: { text: 'still here' } });
	is(r?.msg?.result?.content, [{ type: 'text', text: 'still here' }], 'timeout: an echo right after works');
	r = await c.request('tools/call', { name: 'sleep', arguments: { ms: 100 } });
	ok(textOf(r?.msg?.result) === 'slept 100 ms' && !r.msg.result.isError,
	    'timeout: sleep 100 (under the limit) still succeeds', r?.raw);
	await sleep(Math.max(0, t0 + 2400 - Date.now()));
	is(c.responses(1).length, 1, 'timeout: exactly one response for the timed-out id (watched until 2.4 s)',
	    c.responses(1).map(e => e.raw));
	const prog = c.progress('"to"');
	ok(prog.length >= 1 && a !== undefined && prog.every(e => e.seq < a.seq),
	    `timeout: its progress (${prog.length} notifications) all came before the timeout result, none after`,
	    { prog: prog.map(e => [e.seq, e.raw]), answer: a?.seq });
	c.close();

	// The SDK sees the same thing as a tool result.
	const conn = await openSdk(kind, args, 'timeout-sdk');
	if (!ok(!conn.connectError, 'timeout: the SDK client connects', conn.connectError && errText(conn.connectError)))
		return;
	r = await settle(conn.client.callTool({ name: 'sleep', arguments: { ms: 2000 } }), 5000);
	ok(!r.error && r.value.isError === true && /timed out/.test(textOf(r.value)) && r.ms <= 1500,
	    `timeout: SDK callTool sleep 2000 resolves with an isError "timed out" result (${r.ms} ms)`,
	    r.error ? errText(r.error) : r.value);
	r = await settle(conn.client.callTool({ name: 'echo', arguments: { text: 'ok' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'ok', 'timeout: SDK echo after it works');
	await sleep(1900);
	is(conn.errors.map(errText), [], 'timeout: the SDK reported no errors (no late second response)');
	await closeSdk(conn);
}

// ---- main ------------------------------------------------------------------

async function main() {
	if (!ok(existsSync(SERVER), `server binary exists: ${SERVER}`))
		return;
	for (const kind of KINDS) {
		const groups = { sdk: sdkGroup, raw: rawGroup, timeout: timeoutGroup };
		for (const g of GROUPS) {
			tap.label = `${kind}: `;
			const t = Date.now();
			try {
				await groups[g](kind);
			} catch (e) {
				ok(false, `${g}: the group threw`, e?.stack ?? show(e));
			}
			diag(`${kind} ${g}: ${Date.now() - t} ms`);
		}
	}
	tap.label = '';
	for (const srv of httpServers.values()) {
		const { p, base } = await srv;
		if (base === null)
			continue;
		await stop(p, 'SIGTERM', 6000);
		ok(p.exit?.code === 0, `the HTTP server (${base}) exits 0 on SIGTERM`, p.exit);
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
end();
