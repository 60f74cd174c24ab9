// mcp-clients.mjs: the clients test/features.mjs, test/features2.mjs and
// test/features3.mjs share: the processes they spawn (with every server's
// stderr kept for a failure report), a server started with --http, the
// official SDK client over stdio or SSE, and raw JSON-RPC clients over
// stdio and over the legacy HTTP+SSE transport. Node 20; the SDK comes
// from test/node/node_modules.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inspect, isDeepStrictEqual } from 'node:util';
import { SseParser, Waitable, eachLine, finish, listening, settle, within } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SDK = path.join(HERE, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const load = (p) => import(pathToFileURL(path.join(SDK, p)).href);

// The SDK modules: Client, StdioClientTransport, SSEClientTransport,
// StreamableHTTPClientTransport, and types (types.js: McpError, the
// request schemas).
export const sdk = {
	Client: (await load('client/index.js')).Client,
	StdioClientTransport: (await load('client/stdio.js')).StdioClientTransport,
	SSEClientTransport: (await load('client/sse.js')).SSEClientTransport,
	StreamableHTTPClientTransport: (await load('client/streamableHttp.js')).StreamableHTTPClientTransport,
	types: await load('types.js'),
};

// A value as util.inspect shows it, on one line, strings cut at 300
// characters (what these scripts set as tap.show).
export function show(v) {
	return inspect(v, { depth: 8, breakLength: Infinity, maxStringLength: 300 });
}

// ---- processes ---------------------------------------------------------------

export const stderrLog = [];	// every server's stderr, shown on failure
export const procs = new Set();	// {child, exited, exit}: everything we spawned
export const sockets = new Set();	// open HTTP requests (SSE streams), destroyed at the end

// Follows CHILD: {child, exit, exited}; its stderr lines go to stderrLog,
// tagged with TAG.
export function track(child, tag) {
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

export function killAll() {
	for (const s of sockets)
		try { s.destroy(); } catch { /* gone */ }
	for (const p of procs)
		try { p.child.kill('SIGKILL'); } catch { /* gone */ }
}

// Ends the run: kills what is left, then harness.mjs finish(stderrLog).
export function end() {
	killAll();
	finish(stderrLog);
}

// Asks P to end (SIGTERM, or end of stdin), SIGKILL after LIMIT ms.
export async function stop(p, how = 'SIGTERM', limit = 3000) {
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

// ---- servers over HTTP -----------------------------------------------------------

// Starts SERVER with --http 127.0.0.1:0 and ARGS: resolves to {p, base},
// base the URL from the "listening on http://.../sse" line on stderr, null
// when the server did not start within 5 s.
export function startHttp(server, args, tag) {
	return new Promise(resolve => {
		// stdin stays an open pipe: were stdio served too, EOF would end it.
		const child = spawn(server, ['--http', '127.0.0.1:0', ...args],
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

// The server in SERVERS (a Map, by ARGS) for SERVER with ARGS, started
// once with startHttp.
export function httpServerFor(servers, server, args) {
	const key = args.join(' ');
	if (!servers.has(key))
		servers.set(key, startHttp(server, args, `http ${key}`.trim()));
	return servers.get(key);
}

// POSTs BODY (JSON) to URL: {status, body}, or {error}.
export function post(url, body) {
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

// ---- SDK connections -----------------------------------------------------------

/*
 * The SDK client on KIND ('stdio': SERVER spawned with ARGS; 'http':
 * Streamable HTTP to /mcp of the server httpServer(ARGS) resolves to,
 * {base}; else legacy SSE to its /sse), named CLIENTINFO, with
 * CAPABILITIES when given and the request HANDLERS ([[schema, name, fn]]:
 * fn(request, extra) => result). conn.received records every message the
 * transport hands up, in order, conn.sent every message sent, conn.handled
 * every request a handler got; conn.connectError, when connecting failed.
 */
export async function openSdk({ kind, server, args = [], tag = 'sdk', httpServer, clientInfo,
    capabilities, handlers = [] }) {
	let transport;
	const conn = { received: [], sent: [], errors: [], handled: [] };
	if (kind === 'stdio') {
		transport = new sdk.StdioClientTransport({ command: server, args, stderr: 'pipe' });
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
		transport = kind === 'http' ?
		    new sdk.StreamableHTTPClientTransport(new URL(srv.base + '/mcp')) :
		    new sdk.SSEClientTransport(new URL(srv.base + '/sse'));
	}
	const send = transport.send.bind(transport);
	transport.send = (msg, o) => {
		conn.sent.push({ t: Date.now(), msg });
		return send(msg, o);
	};
	const client = capabilities === undefined ? new sdk.Client(clientInfo) :
	    new sdk.Client(clientInfo, { capabilities });
	client.onerror = e => conn.errors.push(e);
	for (const [schema, name, fn] of handlers)
		client.setRequestHandler(schema, (req, extra) => {
			conn.handled.push({ t: Date.now(), name, req });
			return fn(req, extra);
		});
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

export async function closeSdk(conn) {
	await settle(conn.client.close(), 3000);
	if (conn.p)
		await stop(conn.p, 'SIGTERM', 3000);
}

// ---- raw connections -----------------------------------------------------------

export const isRequest = m => m !== undefined && typeof m.method === 'string' && 'id' in m;
export const isResponse = m => m !== undefined && !('method' in m);
export const isProgress = e => e.msg?.method === 'notifications/progress';

// The raw JSON text of a progress notification's token, as the server wrote
// it (the server writes compact JSON; 2^53+1 would not survive JSON.parse).
export function rawToken(e) {
	const m = /"progressToken":("(?:[^"\\]|\\.)*"|[^,}]*)/.exec(e.raw);
	return m ? m[1] : undefined;
}

/*
 * Every message from the server, in order: {seq, t, raw, msg}; every
 * message sent, in order: {t, msg}. send() takes an object or a string
 * (one message) and resolves once it is written (stdio) or its POST is
 * answered (SSE: {status, body}). OPTS: nextId, the first request id;
 * clientName, the clientInfo name init() sends.
 */
export class Raw extends Waitable {
	constructor(tag, { nextId = 1, clientName = 'libmcp-test' } = {}) {
		super();
		this.tag = tag;
		this.msgs = [];
		this.sent = [];
		this.bad = [];
		this.nextId = nextId;
		this.clientName = clientName;
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
		return this.msgs.filter(e => e.msg && isResponse(e.msg) && isDeepStrictEqual(e.msg.id, id));
	}

	// The progress notifications whose token is, as JSON text, TOKENRAW.
	progress(tokenRaw) {
		return this.msgs.filter(e => isProgress(e) && rawToken(e) === tokenRaw);
	}

	// The requests the server sent (for METHOD, when given), from seq FROM on.
	serverRequests(method, from = 0) {
		return this.msgs.slice(from).filter(e => isRequest(e.msg) && (method === undefined || e.msg.method === method));
	}

	// The ids of the requests this client sent.
	clientIds() {
		return this.sent.filter(s => isRequest(s.msg)).map(s => s.msg.id);
	}

	async answer(id, ms = 5000) {
		await this.until(() => this.responses(id).length > 0 || this.gone(), ms);
		return this.responses(id)[0];
	}

	// Sends a request without waiting: its id.
	async call(method, params, id = this.nextId++) {
		const m = { jsonrpc: '2.0', id, method };
		if (params !== undefined)
			m.params = params;
		await this.send(m);
		return id;
	}

	// Sends a request and waits for its answer: the entry, or undefined.
	async request(method, params, ms = 5000) {
		return this.answer(await this.call(method, params), ms);
	}

	tool(name, args, id) {
		return this.call('tools/call', { name, arguments: args }, id);
	}

	// Waits for the Nth (from 1) server request for METHOD from seq FROM on.
	async serverRequest(method, from = 0, nth = 1, ms = 5000) {
		await this.until(() => this.serverRequests(method, from).length >= nth || this.gone(), ms);
		return this.serverRequests(method, from)[nth - 1];
	}

	async init(version = '2025-11-25', capabilities = {}) {
		const r = await this.request('initialize', {
			protocolVersion: version, capabilities,
			clientInfo: { name: this.clientName, version: '1' }
		});
		await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
		return r;
	}
}

// SERVER spawned with ARGS, spoken to on its stdin and stdout.
export class RawStdio extends Raw {
	constructor(server, args, tag, opts) {
		super(tag, opts);
		this.child = spawn(server, args, { stdio: ['pipe', 'pipe', 'pipe'] });
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
		this.sent.push({ t: Date.now(), msg: m });
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

// A session of the legacy HTTP+SSE transport; c.posts: the answers to its
// POSTs, in order.
export class RawSse extends Raw {
	// Opens a session (GET /sse) on the server at BASE; resolves once the
	// endpoint event has come.
	static open(base, tag, opts) {
		const c = new RawSse(tag, opts);
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
		this.sent.push({ t: Date.now(), msg: m });
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
