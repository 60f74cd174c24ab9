// streamable-interop.mjs: interop test of libmcp's Streamable HTTP
// transport (/mcp) against the official MCP TypeScript SDK's
// StreamableHTTPClientTransport: build/mcp-demo (tool calls, 20 at once,
// an aborted call, progress, DELETE on close, a 2025-03-26 client that
// sends no MCP-Protocol-Version, the fallback of a Streamable HTTP client
// given the /sse URL) and build/conformance-server (logging, sampling and
// elicitation answered by the client's handlers, and test_reconnection:
// the SDK resumes the closed stream by itself with Last-Event-ID). Prints
// TAP on stdout; exits 1 if any assertion failed.
//
//   node test/node/streamable-interop.mjs [options]
//
// By default it starts both servers with `--http 127.0.0.1:0 --keepalive K
// --sse-retry 300` and stops them at the end. With --demo and --conf it
// uses servers that are already running (test/interop-streamable.sh gives
// it nginx's addresses) and starts nothing.
//
//   --demo BASE      mcp-demo at BASE (http://HOST:PORT); /mcp is added
//   --conf BASE      conformance-server at BASE
//   --keepalive S    the servers' --keepalive (default 1)
//   --idle S         first stay idle S seconds on the standalone stream,
//                    which must survive on keepalives (default 0: none)
//   --label TEXT     prefix for every test name (e.g. "nginx: ")
//
// Every request the SDK makes goes through a recording fetch: methods,
// request headers, statuses, and each text/event-stream body's lines.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
	CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema, McpError,
} from '@modelcontextprotocol/sdk/types.js';

import {
	SseParser, diag, eachLine, errText, finish, globalTimeout, is, listening, ok, settle, show,
	sleep, tap, textOf,
} from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const GLOBAL_TIMEOUT_MS = 60000;
const SID = /^[0-9a-f]{32}$/;

// ---- options ---------------------------------------------------------------

const opt = { demo: null, conf: null, keepalive: 1, idle: 0, label: '' };
{
	const a = process.argv.slice(2);
	for (let i = 0; i < a.length; i++) {
		const need = () => {
			if (i + 1 >= a.length) {
				process.stderr.write(`streamable-interop: ${a[i]} needs a value\n`);
				process.exit(2);
			}
			return a[++i];
		};
		switch (a[i]) {
		case '--demo': opt.demo = need().replace(/\/+$/, ''); break;
		case '--conf': opt.conf = need().replace(/\/+$/, ''); break;
		case '--keepalive': opt.keepalive = Number(need()); break;
		case '--idle': opt.idle = Number(need()); break;
		case '--label': opt.label = need(); break;
		default:
			process.stderr.write(`streamable-interop: unknown option ${a[i]}\n`);
			process.exit(2);
		}
	}
	tap.label = opt.label;
}

// ---- the servers -------------------------------------------------------------

const stderrLog = [];
const servers = [];

function killServers() {
	for (const s of servers)
		if (s.exit === null)
			try { s.child.kill('SIGKILL'); } catch { /* gone */ }
}

const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, () => {
	killServers();
	finish(stderrLog);
});

// Starts PROG: resolves to its base URL, or null.
function startServer(prog) {
	return new Promise((resolve) => {
		const s = { exit: null };
		s.child = spawn(path.resolve(HERE, '../..', prog),
		    ['--http', '127.0.0.1:0', '--keepalive', String(opt.keepalive), '--sse-retry', '300'],
		    { stdio: ['pipe', 'ignore', 'pipe'] });
		servers.push(s);
		const timer = setTimeout(() => resolve(null), 5000);
		eachLine(s.child.stderr, (line) => {
			stderrLog.push(`[${path.basename(prog)}] ${line}`);
			const l = listening(line);
			if (l) {
				clearTimeout(timer);
				resolve(l.base);
			}
		});
		s.child.on('error', (e) => {
			stderrLog.push(`spawn ${prog}: ${e.message}`);
			resolve(null);
		});
		s.child.on('exit', (code, signal) => {
			s.exit = { code, signal };
			resolve(null);
		});
	});
}

// ---- a recorded connection -------------------------------------------------------

// conn.reqs: every request {method, url, headers (sent, lower case), body,
// status, resHeaders, lines [{t, line}] of an SSE body, ended}.
function recordingFetch(conn) {
	return async (url, init = {}) => {
		const method = (init.method ?? 'GET').toUpperCase();
		const headers = Object.fromEntries(new Headers(init.headers ?? {}));
		const rec = { method, url: String(url), headers, t0: Date.now(), lines: [] };
		if (init.body !== undefined)
			try { rec.body = JSON.parse(init.body); } catch { rec.body = init.body; }
		conn.reqs.push(rec);
		let res;
		try {
			res = await fetch(url, init);
		} catch (e) {
			rec.error = errText(e);
			throw e;
		}
		rec.status = res.status;
		rec.resHeaders = Object.fromEntries(res.headers);
		if (!/^text\/event-stream/.test(res.headers.get('content-type') ?? '') || !res.body)
			return res;
		const dec = new TextDecoder();
		let partial = '';
		const take = (text, t) => {
			partial += text;
			let k;
			while ((k = partial.indexOf('\n')) >= 0) {
				rec.lines.push({ t, line: partial.slice(0, k).replace(/\r$/, '') });
				partial = partial.slice(k + 1);
			}
		};
		const tee = new TransformStream({
			transform(chunk, ctl) {
				take(dec.decode(chunk, { stream: true }), Date.now());
				ctl.enqueue(chunk);
			},
			flush() {
				take(dec.decode(), Date.now());
				rec.ended = Date.now();
			},
		});
		return new Response(res.body.pipeThrough(tee),
		    { status: res.status, statusText: res.statusText, headers: res.headers });
	};
}

// The SSE items of a recorded request: events {id, event, data, retry,
// t} and comments {comment, t}.
function eventsOf(rec) {
	const evs = [];
	const parser = new SseParser((it) => evs.push(it.type === 'comment' ?
	    { t: it.t, comment: it.text.trim() } :
	    { t: it.tFirst, event: it.event, data: it.data, id: it.other.id, retry: it.other.retry }));
	for (const { t, line } of rec?.lines ?? [])
		parser.line(line, t);
	return evs;
}

// Every JSON-RPC message that came down an SSE body: [{rec, id, msg}].
function streamed(conn) {
	const out = [];
	for (const rec of conn.reqs)
		for (const ev of eventsOf(rec))
			if (ev.data !== undefined && ev.data !== '') {
				let msg;
				try { msg = JSON.parse(ev.data); } catch { msg = { unparsable: ev.data }; }
				out.push({ rec, id: ev.id, msg });
			}
	return out;
}

/*
 * The SDK client over StreamableHTTPClientTransport to URL, with
 * CAPABILITIES and request HANDLERS ([[schema, fn]]). version: ask for
 * this protocol version and never send MCP-Protocol-Version (a
 * 2025-03-26 client).
 */
async function open(url, { capabilities, handlers = [], version } = {}) {
	const conn = { reqs: [], sent: [], errors: [] };
	const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch(conn) });
	const send = transport.send.bind(transport);
	transport.send = (msg, o) => {
		if (version && msg.method === 'initialize')
			msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
		conn.sent.push({ t: Date.now(), msg });
		return send(msg, o);
	};
	if (version)
		transport.setProtocolVersion = () => { /* sends no MCP-Protocol-Version */ };
	const client = new Client({ name: 'libmcp-streamable-interop', version: '1.0.0' },
	    capabilities ? { capabilities } : undefined);
	client.onerror = (e) => conn.errors.push({ t: Date.now(), e });
	for (const [schema, fn] of handlers)
		client.setRequestHandler(schema, fn);
	conn.client = client;
	conn.transport = transport;
	const r = await settle(client.connect(transport), 10000);
	conn.connectError = r.error;
	return conn;
}

const posts = (conn, pred = () => true) => conn.reqs.filter((r) => r.method === 'POST' && pred(r));
const gets = (conn) => conn.reqs.filter((r) => r.method === 'GET');
const postFor = (conn, method) => posts(conn, (r) => r.body?.method === method);
const errors = (conn) => conn.errors.map((x) => errText(x.e));

async function rawPost(url, headers, body) {
	try {
		const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json',
		    accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
		return { status: r.status, body: await r.text() };
	} catch (e) {
		return { status: 0, body: errText(e) };
	}
}

// ---- mcp-demo ----------------------------------------------------------------------

async function demo(base) {
	const url = `${base}/mcp`;
	const conn = await open(url);
	const { client, transport } = conn;
	if (!ok(!conn.connectError, `demo: the SDK connects to ${url}`, conn.connectError && errText(conn.connectError)))
		return;
	const init = postFor(conn, 'initialize')[0];
	ok(init?.status === 200 && SID.test(init.resHeaders['mcp-session-id'] ?? '') &&
	    transport.sessionId === init.resHeaders['mcp-session-id'],
	    'demo: initialize: 200 with an Mcp-Session-Id the transport took', init && { status: init.status, h: init.resHeaders });
	is(transport.protocolVersion, '2025-11-25', 'demo: the negotiated version is 2025-11-25');
	const inited = postFor(conn, 'notifications/initialized')[0];
	ok(inited?.status === 202, 'demo: notifications/initialized: 202', inited?.status);
	await sleep(200);
	const g0 = gets(conn)[0];
	ok(g0?.status === 200 && /^text\/event-stream/.test(g0.resHeaders['content-type'] ?? '') &&
	    g0.headers['mcp-session-id'] === transport.sessionId,
	    'demo: the SDK\'s standalone GET stream: 200 text/event-stream', g0 && { status: g0.status, h: g0.resHeaders });
	const pe = eventsOf(g0)[0];
	ok(pe && pe.id === '0-0' && pe.retry === '300' && pe.data === '',
	    'demo: the GET stream starts with the priming event (id 0-0, retry 300)', eventsOf(g0).slice(0, 2));

	if (opt.idle > 0) {
		// Meanwhile a call nearly as long, silent but for keepalives.
		const t0 = Date.now();
		const ms = opt.idle * 1000 - 500;
		const long = settle(client.callTool({ name: 'sleep', arguments: { ms } }), opt.idle * 1000 + 5000);
		await sleep(opt.idle * 1000);
		const lr = await long;
		ok(!lr.error && textOf(lr.value) === `slept ${ms} ms`,
		    `demo: a call of ${ms} ms, silent but for keepalives, gets its result`, lr.error ? errText(lr.error) : lr.value);
		const lp = posts(conn, (p) => p.body?.params?.arguments?.ms === ms)[0];
		const lk = eventsOf(lp).filter((e) => e.comment === 'keepalive');
		ok(lk.length >= Math.floor(ms / 1000 / opt.keepalive) - 2 && lk.length >= 1,
		    `demo: its POST stream carried ${lk.length} keepalive comments`, eventsOf(lp));
		const kas = eventsOf(g0).filter((e) => e.comment === 'keepalive' && e.t >= t0);
		ok(kas.length >= Math.floor(opt.idle / opt.keepalive) - 1 && kas.length >= 1,
		    `demo: idle ${opt.idle} s: ${kas.length} keepalive comments on the GET stream`, eventsOf(g0));
		ok(gets(conn).length === 1 && g0.ended === undefined,
		    `demo: idle ${opt.idle} s: still the first GET stream, not cut, no reconnection`,
		    gets(conn).map((g) => ({ status: g.status, ended: g.ended && g.ended - t0 })));
	}

	const lr = await settle(client.listTools());
	is((lr.value?.tools ?? []).map((t) => t.name), ['echo', 'add', 'sleep', 'fail'], 'demo: tools/list: echo, add, sleep, fail');
	const hello = 'hello, "world"\n\tüñí ✓ 🚀 \\ end';
	let r = await settle(client.callTool({ name: 'echo', arguments: { text: hello } }));
	is(r.error ? errText(r.error) : textOf(r.value), hello, 'demo: echo: the text comes back intact');
	r = await settle(client.callTool({ name: 'add', arguments: { a: 2, b: 40.5 } }));
	ok(!r.error && r.value.structuredContent?.sum === 42.5,
	    'demo: add: structuredContent {sum: 42.5}, accepted by the SDK\'s outputSchema check', r.error ? errText(r.error) : r.value);
	r = await settle(client.callTool({ name: 'fail', arguments: { message: 'boom' } }));
	ok(!r.error && r.value.isError === true && textOf(r.value) === 'boom', 'demo: fail: an isError result',
	    r.error ? errText(r.error) : r.value);
	r = await settle(client.callTool({ name: 'nope', arguments: {} }));
	ok(r.error instanceof McpError && r.error.code === -32602, 'demo: an unknown tool: McpError -32602',
	    r.error ? errText(r.error) : r.value);
	const later = posts(conn, (p) => p.body?.method === 'tools/call');
	ok(later.length >= 4 && later.every((p) => p.headers['mcp-protocol-version'] === '2025-11-25' &&
	    p.headers['mcp-session-id'] === transport.sessionId && p.status === 200),
	    'demo: every call POST carried Mcp-Session-Id and MCP-Protocol-Version 2025-11-25, and got 200',
	    later.map((p) => ({ status: p.status, v: p.headers['mcp-protocol-version'] })));

	// 20 at once
	const t0 = Date.now();
	const calls = Array.from({ length: 20 }, (_, i) => {
		const isSleep = i % 2 === 0;
		const want = isSleep ? 'slept 200 ms' : `concurrent #${i}`;
		return client.callTool(isSleep ? { name: 'sleep', arguments: { ms: 200 } } :
		    { name: 'echo', arguments: { text: want } }).then(
		    (v) => ({ i, isSleep, want, got: textOf(v), t: Date.now() - t0 }),
		    (e) => ({ i, isSleep, want, got: errText(e), t: Date.now() - t0 }));
	});
	const all = await settle(Promise.all(calls), 15000);
	const res = all.value ?? [];
	const total = Date.now() - t0;
	ok(res.length === 20 && res.every((x) => x.got === x.want),
	    '20 concurrent calls (10 sleep 200 ms, 10 echo): each resolves with its own result'.replace(/^/, 'demo: '),
	    all.error ? errText(all.error) : res.filter((x) => x.got !== x.want));
	ok(res.length === 20 && total < 2000, `demo: 20 concurrent calls done in ${total} ms (serial: 2000)`);
	const lastEcho = Math.max(...res.filter((x) => !x.isSleep).map((x) => x.t));
	const firstSleep = Math.min(...res.filter((x) => x.isSleep).map((x) => x.t));
	ok(res.length === 20 && lastEcho < firstSleep,
	    `demo: 20 concurrent calls: the echos (last at ${lastEcho} ms) came before the sleeps (first at ${firstSleep} ms)`);

	// progress
	const prog = [];
	let resolved = false;
	r = await settle(client.callTool({ name: 'sleep', arguments: { ms: 450 } }, undefined,
	    { onprogress: (p) => prog.push({ ...p, afterResult: resolved }) }));
	resolved = true;
	ok(!r.error && textOf(r.value) === 'slept 450 ms', 'demo: sleep 450 with onprogress: its result',
	    r.error && errText(r.error));
	is(prog.map((p) => [p.progress, p.total, p.afterResult]),
	    [[100, 450, false], [200, 450, false], [300, 450, false], [400, 450, false]],
	    'demo: onprogress got 100, 200, 300, 400 of 450, all before the result');
	const pp = posts(conn, (p) => p.body?.params?.arguments?.ms === 450)[0];
	const pevs = eventsOf(pp);
	ok(pp?.resHeaders?.['content-type']?.startsWith('text/event-stream') && pevs[0]?.retry === '300' &&
	    pevs.filter((e) => e.data).length === 5,
	    'demo: they came down that POST\'s own stream (priming, 4 progress, the result)', pevs);
	const pt = pevs.filter((e) => e.data).map((e) => e.t);
	ok(pt.length === 5 && pt[4] - pt[0] >= 250,
	    `demo: each came as it was made, not held back: the first progress ${pt[4] - pt[0]} ms before the result`,
	    pt.map((t) => t - pp.t0));

	// abort
	const ac = new AbortController();
	const pSleep = client.callTool({ name: 'sleep', arguments: { ms: 10000 } }, undefined, { signal: ac.signal });
	setTimeout(() => ac.abort('interop test cancels'), 150);
	r = await settle(pSleep, 12000);
	ok(r.error && r.ms < 2000, `demo: aborting a sleep 10000 rejects it promptly (${r.ms} ms)`,
	    r.error ? errText(r.error) : r.value);
	const sreq = conn.sent.find((s) => s.msg.params?.arguments?.ms === 10000)?.msg;
	await sleep(400);
	const cp = postFor(conn, 'notifications/cancelled')[0];
	ok(sreq && cp?.body?.params?.requestId === sreq.id && cp.status === 202,
	    'demo: notifications/cancelled for its id was POSTed, 202', cp && { body: cp.body, status: cp.status });
	const sp = posts(conn, (p) => p.body?.id === sreq?.id && p.body?.method === 'tools/call')[0];
	ok(sp && sp.status !== undefined && (sp.ended !== undefined || sp.status === 202) &&
	    !streamed(conn).some((m) => m.msg.id === sreq.id && !('method' in m.msg)),
	    'demo: the cancelled call\'s POST ended without a result', sp && { status: sp.status, lines: sp.lines });
	r = await settle(client.callTool({ name: 'echo', arguments: { text: 'still here' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'still here', 'demo: the session goes on after the abort');

	r = await settle(client.ping(), 5000);
	is(r.error ? errText(r.error) : r.value, {}, 'demo: ping');
	ok(streamed(conn).every((m) => !m.msg.unparsable) &&
	    eventsOf(g0).every((e) => e.data === undefined || e.data === '' || 'method' in JSON.parse(e.data)),
	    'demo: every event is JSON; the GET stream carried no response', eventsOf(g0));
	// SDK 1.32.2 resumes a POST stream that ended with an error response
	// when it saw an event id (it counts only results as answers): a body
	// sent whole that ends on an error carries no ids, so the unknown
	// tool's error must cause no resumption and no client error at all.
	const errAnswers = streamed(conn).filter((m) => m.msg.error && !('method' in m.msg));
	ok(errAnswers.length > 0 && errAnswers.every((m) => !m.id),
	    'demo: the error answers came without event ids', errAnswers);
	ok(gets(conn).every((g) => g.status === 200 && !g.headers['last-event-id']) &&
	    errors(conn).length === 0,
	    'demo: the SDK reported no errors and tried no resumption',
	    { errors: errors(conn), gets: gets(conn).map((g) => [g.status, g.headers['last-event-id']]) });

	// DELETE on close
	const sid = transport.sessionId;
	r = await settle(transport.terminateSession(), 5000);
	const d = conn.reqs.find((q) => q.method === 'DELETE');
	ok(!r.error && d?.status === 200 && d.headers['mcp-session-id'] === sid,
	    'demo: transport.terminateSession(): DELETE with the session id, 200', r.error ? errText(r.error) : d);
	const after = await rawPost(url, { 'mcp-session-id': sid }, { jsonrpc: '2.0', id: 1, method: 'ping' });
	ok(after.status === 404 && /-32001/.test(after.body), 'demo: after the DELETE, the session id gets 404 (-32001)', after);
	await sleep(300);
	ok(g0.ended !== undefined, 'demo: and the standalone stream was ended by the server', { ended: g0.ended });
	await settle(client.close(), 3000);
}

// A client at 2025-03-26 that sends no MCP-Protocol-Version.
async function oldClient(base) {
	const url = `${base}/mcp`;
	const conn = await open(url, { version: '2025-03-26' });
	if (!ok(!conn.connectError, 'old client: a client asking for 2025-03-26 connects', conn.connectError && errText(conn.connectError)))
		return;
	const init = postFor(conn, 'initialize')[0];
	const r0 = streamed(conn).find((m) => m.rec === init)?.msg;
	is(r0?.result?.protocolVersion, '2025-03-26', 'old client: the server answers protocolVersion 2025-03-26');
	let r = await settle(conn.client.callTool({ name: 'echo', arguments: { text: 'old' } }));
	is(r.error ? errText(r.error) : textOf(r.value), 'old', 'old client: echo works');
	const prog = [];
	r = await settle(conn.client.callTool({ name: 'sleep', arguments: { ms: 250 } }, undefined,
	    { onprogress: (p) => prog.push(p.progress) }));
	ok(!r.error && textOf(r.value) === 'slept 250 ms' && prog.join() === '100,200',
	    'old client: sleep 250 with onprogress: 100, 200, then the result', r.error ? errText(r.error) : prog);
	await sleep(100);
	ok(conn.reqs.length >= 5 && conn.reqs.every((q) => q.headers['mcp-protocol-version'] === undefined),
	    'old client: none of its requests carried MCP-Protocol-Version',
	    conn.reqs.map((q) => q.headers['mcp-protocol-version']));
	ok(conn.reqs.filter((q) => q.method === 'POST' && q.body?.method !== 'initialize').every((q) => [200, 202].includes(q.status)),
	    'old client: every POST after initialize got 200 or 202', conn.reqs.map((q) => `${q.method} ${q.status}`));
	const primed = conn.reqs.flatMap((q) => eventsOf(q)).filter((e) => e.retry !== undefined || e.data === '');
	ok(gets(conn)[0]?.status === 200 && primed.length === 0,
	    'old client: its streams (GET and the POST with progress) carry no priming event', primed);
	is(errors(conn), [], 'old client: the SDK reported no errors');
	await settle(conn.transport.terminateSession(), 3000);
	await settle(conn.client.close(), 3000);
}

// A Streamable HTTP client given the /sse URL: 405, then the legacy transport.
async function fallback(base) {
	const conn = await open(`${base}/sse`);
	const p = posts(conn)[0];
	ok(conn.connectError && p?.status === 405 && (conn.connectError.code === 405 || /405/.test(errText(conn.connectError))),
	    'fallback: StreamableHTTPClientTransport on the /sse URL: its POST gets 405, connect fails',
	    conn.connectError ? `${errText(conn.connectError)}, POST ${p?.status}` : 'connected');
	await settle(conn.client.close(), 2000);
	const client = new Client({ name: 'libmcp-fallback', version: '1.0.0' });
	const sse = new SSEClientTransport(new URL(`${base}/sse`));
	const c = await settle(client.connect(sse), 8000);
	const r = c.error ? c : await settle(client.callTool({ name: 'echo', arguments: { text: 'legacy' } }));
	ok(!c.error && textOf(r.value) === 'legacy', 'fallback: then SSEClientTransport on GET /sse connects and calls echo',
	    c.error ? errText(c.error) : r.error ? errText(r.error) : r.value);
	await settle(client.close(), 3000);
}

// ---- conformance-server ----------------------------------------------------------------

async function conformance(base) {
	const url = `${base}/mcp`;
	const handled = [];
	const conn = await open(url, {
		capabilities: { sampling: {}, elicitation: {} },
		handlers: [
			[CreateMessageRequestSchema, (req) => {
				handled.push(req);
				return { role: 'assistant', model: 'interop-model',
				    content: { type: 'text', text: `sampled "${req.params.messages[0].content.text}"` } };
			}],
			[ElicitRequestSchema, (req) => {
				handled.push(req);
				return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
			}],
		],
	});
	const { client } = conn;
	if (!ok(!conn.connectError, `conf: the SDK connects to ${url} with sampling and elicitation`,
	    conn.connectError && errText(conn.connectError)))
		return;
	const logs = [];
	client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push({ n, t: Date.now() }));

	let r = await settle(client.callTool({ name: 'test_tool_with_logging', arguments: {} }));
	const tRes = Date.now();
	ok(!r.error && textOf(r.value) === 'Tool with logging executed successfully', 'conf: test_tool_with_logging: its result',
	    r.error && errText(r.error));
	is(logs.map((l) => [l.n.params.level, l.n.params.data]),
	    [['info', 'Tool execution started'], ['info', 'Tool processing data'], ['info', 'Tool execution completed']],
	    'conf: the three notifications/message reached the client\'s handler');
	ok(logs.length === 3 && logs.every((l) => l.t <= tRes), 'conf: all of them before the result');

	const prog = [];
	r = await settle(client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined,
	    { onprogress: (p) => prog.push(p.progress) }));
	const tok = posts(conn, (p) => p.body?.params?.name === 'test_tool_with_progress')[0]?.body?.params?._meta?.progressToken;
	ok(!r.error && tok !== undefined && textOf(r.value) === String(tok) && prog.join() === '0,50,100',
	    'conf: test_tool_with_progress: onprogress 0, 50, 100, then the result (the progressToken as text)',
	    r.error ? errText(r.error) : { prog, tok, v: r.value });

	r = await settle(client.callTool({ name: 'test_sampling', arguments: { prompt: 'Say hi' } }));
	is(r.error ? errText(r.error) : textOf(r.value), 'LLM response: sampled "Say hi"',
	    'conf: test_sampling: the client handler\'s answer is in the tool result');
	const sp = posts(conn, (p) => p.body?.params?.name === 'test_sampling')[0];
	const sreq = streamed(conn).find((m) => m.msg.method === 'sampling/createMessage');
	ok(sreq && sreq.rec === sp, 'conf: sampling/createMessage came down the tool call\'s own POST stream',
	    sreq && { on: sreq.rec.body });
	await sleep(100);
	const sans = posts(conn, (p) => sreq && p.body?.id === sreq.msg.id && 'result' in p.body)[0];
	ok(sans?.status === 202, 'conf: the SDK POSTed its answer under the server\'s id: 202', sans && sans.status);

	r = await settle(client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } }));
	is(r.error ? errText(r.error) : textOf(r.value),
	    'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
	    'conf: test_elicitation: the client handler\'s answer is in the tool result');
	ok(handled.length === 2 && handled[1].params.message === 'Who are you?',
	    'conf: the handlers got one sampling and one elicitation request', handled.map((h) => h.method));

	// test_reconnection: the POST stream closes after the priming event;
	// the SDK comes back with GET and Last-Event-ID by itself.
	const t0 = Date.now();
	r = await settle(client.callTool({ name: 'test_reconnection', arguments: {} }), 10000);
	ok(!r.error && /Reconnection test completed successfully/.test(textOf(r.value)),
	    `conf: test_reconnection: the SDK gets the result (${r.ms} ms)`, r.error ? errText(r.error) : r.value);
	const rp = posts(conn, (p) => p.body?.params?.name === 'test_reconnection')[0];
	const rpe = eventsOf(rp);
	ok(rp?.status === 200 && rpe.length === 1 && /^\d+-0$/.test(rpe[0].id ?? '') && rpe[0].retry === '300' && rp.ended,
	    'conf: its POST stream was only the priming event, then closed', rp && rpe);
	const resume = gets(conn).find((g) => g.t0 >= t0 && g.headers['last-event-id'] !== undefined);
	ok(resume && rpe[0] && resume.headers['last-event-id'] === rpe[0].id && resume.status === 200,
	    `conf: the SDK resumed with GET, Last-Event-ID ${rpe[0]?.id}: 200`, resume && { h: resume.headers, status: resume.status });
	const got = streamed(conn).find((m) => m.rec === resume && !('method' in m.msg));
	ok(got && /Reconnection/.test(textOf(got.msg.result)) && got.id === `${rpe[0]?.id.split('-')[0]}-1`,
	    'conf: the result came down the resumed stream, as the route\'s next event', got && { id: got.id });
	await sleep(100);
	ok(resume?.ended !== undefined, 'conf: and the resumed stream ended after it');
	is(errors(conn), [], 'conf: the SDK reported no errors');
	const sid = conn.transport.sessionId;
	r = await settle(conn.transport.terminateSession(), 3000);
	const d = conn.reqs.find((q) => q.method === 'DELETE');
	ok(!r.error && d?.status === 200 && d.headers['mcp-session-id'] === sid, 'conf: terminateSession: DELETE 200',
	    r.error ? errText(r.error) : d);
	await settle(client.close(), 3000);
}

// ---- main ------------------------------------------------------------------------------

async function main() {
	let demoBase = opt.demo, confBase = opt.conf;
	if (demoBase === null)
		demoBase = await startServer(process.env.MCP_DEMO || 'build/mcp-demo');
	if (confBase === null)
		confBase = await startServer(process.env.CONFORMANCE_SERVER || 'build/conformance-server');
	if (!ok(demoBase && confBase, 'both servers are there (build/mcp-demo, build/conformance-server)',
	    stderrLog.slice(-5).join('\n')))
		return;
	await demo(demoBase);
	await oldClient(demoBase);
	await fallback(demoBase);
	await conformance(confBase);
	for (const s of servers) {
		const t = Date.now();
		s.child.kill('SIGTERM');
		while (s.exit === null && Date.now() - t < 6000)
			await sleep(50);
		ok(s.exit?.code === 0, `the server exits 0 on SIGTERM (${show(s.exit)})`);
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
killServers();
finish(stderrLog);
