// sse-interop.mjs: interop test of a libmcp server's legacy HTTP+SSE
// transport (docs/HTTP.md) against the official MCP TypeScript SDK's
// SSEClientTransport. Prints TAP on stdout; exits 1 if any assertion failed.
//
//   node test/node/sse-interop.mjs [options] [path/to/server]
//
// By default it starts the server (build/mcp-demo) with
// `--http 127.0.0.1:0 --keepalive K`, reads the port from its
// "listening on http://..." log line, and stops it with SIGTERM at the end.
// With --url it connects to a server that is already running (test/nginx.sh
// gives it nginx's address) and starts nothing.
//
//   --url BASE       connect to BASE (http://HOST:PORT[/base-path]); /sse is added
//   --keepalive S    the server's keepalive interval in seconds (default 1;
//                    passed to the server this script starts)
//   --idle S         stay idle S seconds on the first stream, counting
//                    keepalives, before the first call (default 3; 0: none)
//   --label TEXT     prefix for every test name (e.g. "nginx: ")
//
// Every request the SDK makes goes through a recording fetch: the POSTs'
// statuses, and each SSE stream's raw lines with their arrival times, so
// keepalive comments, reconnections and what came down which stream can
// be checked, not only what the SDK hands up.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import {
	SseParser, diag, eachLine, errText, finish, globalTimeout, is, listening, ok, settle,
	show, sleep, tap, textOf,
} from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const GLOBAL_TIMEOUT_MS = 60000;
const LATEST = '2025-11-25';
const KNOWN_VERSIONS = [LATEST, '2025-06-18', '2025-03-26', '2024-11-05'];

// ---- options ---------------------------------------------------------------

const opt = { url: null, keepalive: 1, idle: 3, label: '', server: null };
{
	const a = process.argv.slice(2);
	for (let i = 0; i < a.length; i++) {
		const need = () => {
			if (i + 1 >= a.length) {
				process.stderr.write(`sse-interop: ${a[i]} needs a value\n`);
				process.exit(2);
			}
			return a[++i];
		};
		switch (a[i]) {
		case '--url': opt.url = need().replace(/\/+$/, ''); break;
		case '--keepalive': opt.keepalive = Number(need()); break;
		case '--idle': opt.idle = Number(need()); break;
		case '--label': opt.label = need(); break;
		default:
			if (a[i].startsWith('-')) {
				process.stderr.write(`sse-interop: unknown option ${a[i]}\n`);
				process.exit(2);
			}
			opt.server = path.resolve(a[i]);
		}
	}
	if (opt.server === null)
		opt.server = path.resolve(process.env.MCP_DEMO ?? path.join(HERE, '../../build/mcp-demo'));
	tap.label = opt.label;
}

// ---- TAP (./harness.mjs; tap.label is --label) ---------------------------

let child = null;		// the server this script started, if any
let childExit = null;		// {code, signal, t} once it has ended
const stderrLog = [];		// its stderr, shown on failure
let listenLine = null;		// the URL in its "listening on" line

function killChild() {
	if (child && childExit === null) {
		try { child.kill('SIGKILL'); } catch { /* gone */ }
	}
}

const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, () => {
	killChild();
	finish(stderrLog);
});

// ---- helpers ---------------------------------------------------------------

// True when S is JSON with no whitespace outside its strings.
function compactJson(s) {
	try { JSON.parse(s); } catch { return false; }
	return !/\s/.test(s.replace(/"(?:[^"\\]|\\.)*"/g, '""'));
}

// Starts the server, resolves to its base URL from the "listening on" line.
function startServer() {
	return new Promise(resolve => {
		const args = ['--http', '127.0.0.1:0', '--keepalive', String(opt.keepalive)];
		// stdin stays an open pipe: were stdio served too, EOF would end it.
		child = spawn(opt.server, args, { stdio: ['pipe', 'ignore', 'pipe'] });
		let done = false;
		const finishWith = v => {
			if (!done) {
				done = true;
				clearTimeout(timer);
				resolve(v);
			}
		};
		const timer = setTimeout(() => finishWith(null), 5000);
		eachLine(child.stderr, line => {
			stderrLog.push(line);
			// docs/HTTP.md: "listening on http://ADDR:PORT"; a trailing
			// /sse (the stream's URL) is taken too.
			const l = listening(line);
			if (l) {
				listenLine = l.url;
				finishWith(l.base);
			}
		});
		child.on('error', e => {
			stderrLog.push(`spawn: ${e.message}`);
			finishWith(null);
		});
		child.once('exit', (code, signal) => {
			childExit = { code, signal, t: Date.now() };
			finishWith(null);
		});
	});
}

// ---- a recorded SSE connection ----------------------------------------------

// conn.gets: every GET (the SSE stream and any reconnection), with its
// response headers and its lines [{t, line}]; conn.posts: every POST with
// its status; conn.received: what the transport handed up.
function recordingFetch(conn) {
	return async (url, init) => {
		const method = (init?.method ?? 'GET').toUpperCase();
		const rec = { method, url: String(url), t0: Date.now() };
		if (method === 'POST') {
			try { rec.body = JSON.parse(init.body); } catch { rec.body = init?.body; }
			conn.posts.push(rec);
		} else {
			rec.lines = [];
			conn.gets.push(rec);
		}
		let res;
		try {
			res = await fetch(url, init);
		} catch (e) {
			rec.error = errText(e);
			throw e;
		}
		rec.t = Date.now();
		rec.status = res.status;
		rec.headers = Object.fromEntries(res.headers);
		if (method !== 'GET' || !res.body)
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
			}
		});
		return new Response(res.body.pipeThrough(tee),
		    { status: res.status, statusText: res.statusText, headers: res.headers });
	};
}

// The events of one stream, from its lines: [{t, event, data (its lines),
// other fields by name}] and comments [{t, comment}].
function eventsOf(get) {
	const evs = [];
	const parser = new SseParser(it => evs.push(it.type === 'comment' ?
	    { t: it.t, comment: it.text.trim() } :
	    { t: it.tFirst, event: it.event, data: it.dataLines, ...it.other }));
	for (const { t, line } of get?.lines ?? [])
		parser.line(line, t);
	return evs;
}

// Every JSON-RPC message that came down any stream: [{t, stream, msg, raw}].
function streamMessages(conn) {
	const msgs = [];
	conn.gets.forEach((g, stream) => {
		for (const ev of eventsOf(g)) {
			if (ev.event !== 'message')
				continue;
			const raw = ev.data.join('\n');
			let msg;
			try { msg = JSON.parse(raw); } catch { msg = undefined; }
			msgs.push({ t: ev.t, stream, msg, raw, lines: ev.data.length });
		}
	});
	return msgs;
}

function responsesFor(conn, id) {
	return streamMessages(conn).filter(m => m.msg && !('method' in m.msg) && m.msg.id === id);
}

async function open(base) {
	const conn = { gets: [], posts: [], sent: [], received: [], errors: [] };
	const transport = new SSEClientTransport(new URL(base + '/sse'),
	    { fetch: recordingFetch(conn) });
	const send = transport.send.bind(transport);
	transport.send = (msg, o) => {
		conn.sent.push({ t: Date.now(), msg });
		return send(msg, o);
	};
	const client = new Client({ name: 'libmcp-sse-interop', version: '1.0.0' });
	client.onerror = e => conn.errors.push({ t: Date.now(), e });
	// The SDK chains its own handler on onmessage when connecting; wrap it
	// afterwards to see everything the transport hands up.
	conn.client = client;
	conn.transport = transport;
	const r = await settle(client.connect(transport), 10000);
	conn.connectError = r.error;
	const handler = transport.onmessage;
	transport.onmessage = (msg, extra) => {
		conn.received.push({ t: Date.now(), msg });
		handler?.(msg, extra);
	};
	return conn;
}

// ---- the tests -------------------------------------------------------------

async function main() {
	let base = opt.url;
	if (base === null) {
		if (!ok(existsSync(opt.server), `server binary exists: ${opt.server}`))
			return;
		base = await startServer();
		if (!ok(base !== null,
		    `server started with --http 127.0.0.1:0 --keepalive ${opt.keepalive} and logged "listening on http://..."`,
		    childExit ? `it exited: ${show(childExit)}` : 'no such line within 5 s'))
			return;
		ok(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/.test(base),
		    `the logged address is 127.0.0.1 with the real port, not 0 (${base})`);
		if (listenLine !== base)
			diag(`note: the server logged "listening on ${listenLine}", docs/HTTP.md says "listening on http://ADDR:PORT"`);
	}

	// -- connect: GET /sse, the endpoint event, initialize over POST
	const conn = await open(base);
	const { client } = conn;
	if (!ok(!conn.connectError, `connect: SSEClientTransport to ${base}/sse and the initialize handshake succeed`,
	    conn.connectError && `${errText(conn.connectError)}\nGETs: ${show(conn.gets.map(g => ({ status: g.status, headers: g.headers, lines: g.lines?.slice(0, 6) })))}`))
		return;
	const g0 = conn.gets[0];
	const ct = g0.headers['content-type'] ?? '';
	ok(g0.status === 200 && /^text\/event-stream(\s*;|$)/.test(ct),
	    `GET /sse: 200 text/event-stream (${g0.status} ${ct})`, g0.headers);
	ok(/(^|,)\s*no-cache\s*(,|$)/.test(g0.headers['cache-control'] ?? '') &&
	    /(^|,)\s*no-transform\s*(,|$)/.test(g0.headers['cache-control'] ?? ''),
	    `GET /sse: Cache-Control has no-cache and no-transform (${g0.headers['cache-control']})`);
	if (opt.url === null) {
		is(g0.headers['x-accel-buffering'], 'no', 'GET /sse: X-Accel-Buffering: no');
		// libmicrohttpd labels a stream's connection "close" (it ends with
		// the stream; docs/HTTP.md): check the open-ended chunked body.
		is(g0.headers['transfer-encoding'], 'chunked', 'GET /sse: an open-ended chunked body');
		ok(g0.headers['content-length'] === undefined, 'GET /sse: no Content-Length', g0.headers);
	}
	const evs0 = eventsOf(g0);
	const firstEvent = evs0.find(e => !('comment' in e));
	ok(firstEvent?.event === 'endpoint' && firstEvent.data.length === 1 &&
	    /^\/messages\?sessionId=[0-9a-f]{32}$/.test(firstEvent.data[0]),
	    `the first event is "endpoint" with data /messages?sessionId= and 32 lower-case hex digits (${show(firstEvent?.data)})`,
	    firstEvent);
	const endpointMs = firstEvent ? firstEvent.t - g0.t0 : Infinity;
	ok(endpointMs < 1000, `the endpoint event arrived ${endpointMs} ms after the GET (< 1000: not buffered)`);
	ok(!!conn.transport._endpoint && conn.transport._endpoint.origin === new URL(base).origin,
	    `the SDK resolved the endpoint against the stream's URL (${conn.transport._endpoint?.href})`);

	const info = client.getServerVersion();
	ok(typeof info?.name === 'string' && info.name.length > 0 && typeof info?.version === 'string',
	    `initialize: serverInfo ${show(info)}`, info);
	const initMsg = streamMessages(conn).find(m => m.msg?.result?.protocolVersion !== undefined)?.msg;
	ok(KNOWN_VERSIONS.includes(initMsg?.result?.protocolVersion),
	    `initialize: the answer came down the stream with protocol version ${initMsg?.result?.protocolVersion}`, initMsg);
	if (initMsg?.result?.protocolVersion !== LATEST)
		diag(`note: the SDK asked for ${LATEST}, the server answered ${initMsg?.result?.protocolVersion}`);
	ok(typeof client.getServerCapabilities()?.tools === 'object',
	    'initialize: server capabilities include tools', client.getServerCapabilities());
	is(conn.posts.map(p => p.status), [202, 202],
	    'initialize and notifications/initialized: each POST got 202', conn.posts.map(p => ({ method: p.body?.method, status: p.status })));

	// -- idle: the stream stays open on keepalives alone
	if (opt.idle > 0) {
		const tIdle = Date.now();
		await sleep(opt.idle * 1000);
		const tEnd = Date.now();
		const all = eventsOf(g0);
		const kas = all.filter(e => e.comment === 'keepalive' && e.t >= tIdle && e.t <= tEnd);
		const want = Math.max(1, Math.floor(opt.idle / opt.keepalive) - 1);
		ok(kas.length >= want,
		    `idle ${opt.idle} s: ${kas.length} ": keepalive" comments came down the stream (>= ${want} at one per ${opt.keepalive} s)`,
		    all.filter(e => e.t >= tIdle).map(e => ({ at: e.t - tIdle, ...e })));
		const times = [tIdle, ...g0.lines.filter(l => l.t >= tIdle && l.t <= tEnd).map(l => l.t), tEnd];
		let gap = 0;
		for (let k = 1; k < times.length; k++)
			gap = Math.max(gap, times[k] - times[k - 1]);
		ok(gap <= opt.keepalive * 1000 + 1000,
		    `idle ${opt.idle} s: the longest silence on the stream was ${gap} ms (<= keepalive + 1 s)`);
		ok(conn.gets.length === 1 && g0.ended === undefined,
		    `idle ${opt.idle} s: still on the first stream (${conn.gets.length} GET /sse)`,
		    conn.gets.map(g => ({ status: g.status, t0: g.t0 - tIdle, ended: g.ended && g.ended - tIdle })));
		is(conn.errors.map(x => errText(x.e)), [], `idle ${opt.idle} s: the SDK reported no errors`);
		const r = await settle(client.callTool({ name: 'echo', arguments: { text: 'after idle' } }), 5000);
		const id = conn.sent.findLast(m => m.msg.method === 'tools/call')?.msg.id;
		ok(!r.error && textOf(r.value) === 'after idle' && responsesFor(conn, id).every(m => m.stream === 0) &&
		    responsesFor(conn, id).length === 1,
		    `idle ${opt.idle} s: then a tools/call echo is answered on that same stream (${r.ms} ms)`,
		    r.error ? errText(r.error) : { value: r.value, on: responsesFor(conn, id) });
	}

	// -- tools/list
	const lr = await settle(client.listTools());
	ok(!lr.error, 'tools/list succeeds', lr.error && errText(lr.error));
	is((lr.value?.tools ?? []).map(t => t.name), ['echo', 'add', 'sleep', 'fail'],
	    'tools/list: echo, add, sleep, fail');

	// -- tools/call, one per tool
	const hello = 'hello, "world"\n\tüñí©ødé ✓ 🚀 \\ end';
	let r = await settle(client.callTool({ name: 'echo', arguments: { text: hello } }));
	is(r.error ? errText(r.error) : { content: r.value.content, isError: r.value.isError ?? false },
	    { content: [{ type: 'text', text: hello }], isError: false },
	    'echo: the text comes back intact (quotes, escapes, newline, UTF-8)');
	r = await settle(client.callTool({ name: 'add', arguments: { a: 2, b: 40.5 } }));
	ok(!r.error && r.value.structuredContent?.sum === 42.5 && !r.value.isError,
	    'add {a: 2, b: 40.5}: structuredContent {sum: 42.5}, accepted by the SDK\'s outputSchema validator',
	    r.error ? errText(r.error) : r.value);
	const boom = 'boom: the disk is on fire';
	r = await settle(client.callTool({ name: 'fail', arguments: { message: boom } }));
	is(r.error ? errText(r.error) : { content: r.value.content, isError: r.value.isError },
	    { content: [{ type: 'text', text: boom }], isError: true },
	    'fail: an isError result with the message');
	r = await settle(client.callTool({ name: 'sleep', arguments: { ms: 50 } }));
	ok(!r.error && textOf(r.value) === 'slept 50 ms' && r.ms >= 45,
	    `sleep {ms: 50}: "slept 50 ms" after ${r.ms} ms`, r.error ? errText(r.error) : r.value);
	r = await settle(client.callTool({ name: 'no-such-tool', arguments: {} }));
	ok(r.error instanceof McpError && r.error.code === -32602,
	    'unknown tool: a JSON-RPC error -32602', r.error ? errText(r.error) : { resolvedWith: r.value });

	// -- 20 at once: 10 sleep 200 ms and 10 echo, interleaved
	const calls = [];
	const t0 = Date.now();
	for (let i = 0; i < 20; i++) {
		const isSleep = i % 2 === 0;
		const req = isSleep ? { name: 'sleep', arguments: { ms: 200 } }
		    : { name: 'echo', arguments: { text: `concurrent #${i}` } };
		const want = isSleep ? 'slept 200 ms' : `concurrent #${i}`;
		calls.push(client.callTool(req).then(
		    v => ({ i, isSleep, want, got: textOf(v), isError: v.isError, t: Date.now() - t0 }),
		    e => ({ i, isSleep, want, got: errText(e), isError: 'rejected', t: Date.now() - t0 })));
	}
	const all = await settle(Promise.all(calls), 15000);
	const total = Date.now() - t0;
	const res = all.value ?? [];
	const wrong = res.filter(x => x.got !== x.want || x.isError);
	ok(!all.error && res.length === 20 && wrong.length === 0,
	    '20 concurrent calls (10 sleep 200 ms, 10 echo): each resolves with its own correct result',
	    all.error ? errText(all.error) : wrong);
	ok(!all.error && total < 2000 && total >= 195,
	    `20 concurrent calls: all done in ${total} ms (>= 200, and < 2000 where serial would take 2000)`);
	const lastEcho = Math.max(...res.filter(x => !x.isSleep).map(x => x.t));
	const firstSleep = Math.min(...res.filter(x => x.isSleep).map(x => x.t));
	ok(!all.error && lastEcho < firstSleep,
	    `20 concurrent calls: every echo came back (last at ${lastEcho} ms) before the first sleep (${firstSleep} ms)`,
	    res.map(x => `#${x.i} ${x.isSleep ? 'sleep' : 'echo '} at ${x.t} ms`).join('\n'));
	const concurrentPosts = conn.posts.filter(p => p.t0 >= t0);
	ok(concurrentPosts.length === 20 && concurrentPosts.every(p => p.status === 202),
	    `20 concurrent calls: each POST got 202 (${[...new Set(concurrentPosts.map(p => p.status))].join(', ')})`,
	    concurrentPosts.map(p => p.status ?? p.error));

	// -- cancellation through an AbortSignal
	const ac = new AbortController();
	const pSleep = client.callTool({ name: 'sleep', arguments: { ms: 10000 } }, undefined, { signal: ac.signal });
	setTimeout(() => ac.abort('interop test cancels'), 100);
	r = await settle(pSleep, 12000);
	ok(r.error && !r.timedOut && r.ms < 2000,
	    `cancel: aborting the sleep 10000 call rejects it promptly (${r.ms} ms after the call, abort at 100 ms)`,
	    r.error ? errText(r.error) : { resolvedWith: r.value });
	const sleepReq = conn.sent.find(m => m.msg.method === 'tools/call' &&
	    m.msg.params?.arguments?.ms === 10000)?.msg;
	const cancelledId = sleepReq?.id;
	r = await settle(client.callTool({ name: 'echo', arguments: { text: 'still here' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'still here',
	    'cancel: the server stays usable (an echo right after works)');
	await sleep(400);
	// (the SDK rejects without waiting for the notification's POST)
	const cancelPost = conn.posts.find(p => p.body?.method === 'notifications/cancelled');
	ok(cancelledId !== undefined && cancelPost?.body?.params?.requestId === cancelledId && cancelPost.status === 202,
	    `cancel: notifications/cancelled for that id was POSTed and got 202 (${cancelPost?.status})`,
	    { sleepReq, cancelPost });
	is(responsesFor(conn, cancelledId).map(m => m.msg), [],
	    'cancel: no response for the cancelled id came down the stream (within 500 ms of the cancel)');

	// -- ping
	r = await settle(client.ping(), 5000);
	is(r.error ? errText(r.error) : r.value, {}, 'ping: answered with an empty result');

	// -- the whole session
	const msgs = streamMessages(conn);
	const notCompact = msgs.filter(m => m.lines !== 1 || !compactJson(m.raw));
	ok(msgs.length > 0 && notCompact.length === 0,
	    `stream: each of the ${msgs.length} message events is one data line of compact JSON`,
	    notCompact.slice(0, 3));
	const requestIds = conn.sent.filter(m => 'id' in m.msg && 'method' in m.msg).map(m => m.msg.id);
	const responseIds = msgs.filter(m => m.msg && !('method' in m.msg)).map(m => m.msg.id);
	const unanswered = requestIds.filter(id => id !== cancelledId && !responseIds.includes(id));
	const dup = responseIds.filter((id, k) => responseIds.indexOf(id) !== k);
	const stray = responseIds.filter(id => !requestIds.includes(id));
	ok(unanswered.length === 0 && dup.length === 0 && stray.length === 0,
	    `session: each of the ${requestIds.length - 1} other requests got exactly one response, no strays`,
	    { unanswered, duplicated: dup, stray });
	const badPosts = conn.posts.filter(p => p.status !== 202);
	ok(badPosts.length === 0, `session: all ${conn.posts.length} POSTs got 202`,
	    badPosts.map(p => ({ method: p.body?.method, status: p.status, error: p.error })));
	ok(conn.gets.length === 1, `session: one stream all along, no reconnection (${conn.gets.length} GET /sse)`);
	is(conn.errors.map(x => errText(x.e)), [], 'session: the SDK reported no transport or protocol errors');

	// -- close: the stream goes, the session ends, its endpoint gets 404
	const endpoint = conn.transport._endpoint?.href;
	const tClose = Date.now();
	const c = await settle(client.close(), 5000);
	ok(!c.error, `close: client.close() resolves (${c.ms} ms)`, c.error && errText(c.error));
	// A suspended stream cannot see its client leave: a keepalive write
	// finds it, and over TCP the first write after the peer's close still
	// succeeds (the reset comes back to it), so the second one fails. Poll
	// until a POST to the old endpoint gets 404, for two keepalives and 1.5 s.
	let last = null;
	const limit = 2 * opt.keepalive * 1000 + 1500;
	while (Date.now() - tClose < limit) {
		try {
			const pr = await fetch(endpoint, {
				method: 'POST', headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
			});
			last = { status: pr.status, body: await pr.text() };
		} catch (e) {
			last = { error: errText(e) };
		}
		if (last.status === 404)
			break;
		await sleep(200);
	}
	let body404;
	try { body404 = JSON.parse(last?.body); } catch { body404 = last?.body; }
	ok(last?.status === 404 && body404?.error?.code === -32600,
	    `close: the session ends; a POST to its endpoint gets 404 with JSON-RPC -32600 (${Date.now() - tClose} ms after close; limit ${limit} ms)`,
	    last);
	is(responsesFor(conn, cancelledId).map(m => m.msg), [],
	    'cancel: no response for the cancelled id all session long');

	// -- the server's own shutdown
	if (child) {
		const tTerm = Date.now();
		child.kill('SIGTERM');
		while (childExit === null && Date.now() - tTerm < 6000)
			await sleep(50);
		ok(childExit !== null && childExit.code === 0,
		    `SIGTERM: the server exits 0 (${childExit ? `${childExit.t - tTerm} ms` : 'still running after 6 s'})`,
		    childExit ?? 'still running');
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
killChild();
finish(stderrLog);
