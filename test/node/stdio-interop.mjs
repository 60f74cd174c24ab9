// stdio-interop.mjs: interop test of a libmcp server (default: the
// reference server build/mcp-demo) against the official MCP TypeScript SDK
// client over stdio. Prints TAP on stdout; exits 1 if any assertion failed.
//
//   node test/node/stdio-interop.mjs [path/to/server]
//
// The server's stderr is captured and shown as TAP comments only when
// something failed, so a passing run prints nothing but TAP.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';

import {
	diag, errText, finish, globalTimeout, is, ok, settle, show, sleep, textOf,
} from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.resolve(process.argv[2] ?? path.join(HERE, '../../build/mcp-demo'));
const EXPECTED_NAME = 'mcp-demo';
const LATEST = '2025-11-25';
const OLDER = ['2025-06-18', '2025-03-26', '2024-11-05'];
const GLOBAL_TIMEOUT_MS = 60000;

// ---- TAP (./harness.mjs) -------------------------------------------------

const children = new Set();	// spawned server processes, killed on timeout
const stderrLog = [];		// captured server stderr, shown on failure

function killChildren() {
	for (const c of children) {
		try { c.kill('SIGKILL'); } catch { /* gone */ }
	}
}

const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, () => {
	killChildren();
	finish(stderrLog);
});

// ---- helpers ---------------------------------------------------------------

// A connection: the SDK client, its transport, the child process, and every
// JSON-RPC message sent and received (through the transport's send and
// onmessage, which the SDK's Protocol chains to).
async function open(label, { rewriteVersion, args = [] } = {}) {
	const transport = new StdioClientTransport({
		command: SERVER,
		args,
		stderr: 'pipe'
	});
	transport.stderr.on('data', chunk => {
		for (const line of chunk.toString('utf8').split('\n'))
			if (line !== '')
				stderrLog.push(`[${label}] ${line}`);
	});
	const conn = { transport, sent: [], received: [], errors: [], child: null, exit: null };
	const send = transport.send.bind(transport);
	transport.send = (msg, opts) => {
		if (rewriteVersion && msg.method === 'initialize')
			msg = { ...msg, params: { ...msg.params, protocolVersion: rewriteVersion } };
		conn.sent.push({ t: Date.now(), msg });
		return send(msg, opts);
	};
	transport.onmessage = msg => {
		conn.received.push({ t: Date.now(), msg });
	};
	// The SDK keeps the ChildProcess in a private field; we need it to see
	// how the process ends, and to kill it if the test times out.
	const start = transport.start.bind(transport);
	transport.start = async () => {
		await start();
		const child = transport._process;
		if (!child)
			return;
		conn.child = child;
		children.add(child);
		conn.exited = new Promise(resolve => {
			child.once('exit', (code, signal) => {
				conn.exit = { code, signal, t: Date.now() };
				children.delete(child);
				resolve();
			});
		});
	};
	const client = new Client({ name: 'libmcp-stdio-interop', version: '1.0.0' });
	client.onerror = e => conn.errors.push(e);
	conn.client = client;
	const r = await settle(client.connect(transport), 10000);
	conn.connectError = r.error;
	return conn;
}

function initResponse(conn) {
	const req = conn.sent.find(m => m.msg.method === 'initialize');
	if (!req)
		return undefined;
	return conn.received.find(m => m.msg.id === req.msg.id && !('method' in m.msg))?.msg;
}

// Closes the client and waits (up to LIMIT ms) for the process to end.
async function shut(conn, limit = 6000) {
	const t0 = Date.now();
	await settle(conn.client.close(), limit);
	if (conn.exited)
		await Promise.race([conn.exited, sleep(Math.max(0, limit - (Date.now() - t0)))]);
	// ms: from close() to the process's end (or to giving up).
	return { ms: (conn.exit?.t ?? Date.now()) - t0, exit: conn.exit };
}

function responsesFor(conn, id) {
	return conn.received.filter(m => !('method' in m.msg) && m.msg.id === id);
}

// A word in a message: not part of a longer identifier.
function mentions(text, word) {
	return new RegExp(`(^|[^A-Za-z0-9_])${word}([^A-Za-z0-9_]|$)`).test(text);
}

// ---- the tests -------------------------------------------------------------

async function main() {
	if (!ok(existsSync(SERVER), `server binary exists: ${SERVER}`))
		return;

	// -- initialize. Default settings: the pool starts with one worker a
	// core and grows while slow calls hold every worker, so the 10
	// concurrent sleeps below run at once and the echoes do not wait.
	const conn = await open('main', { args: [] });
	const { client } = conn;
	if (!ok(!conn.connectError, 'connect: initialize handshake succeeds',
	    conn.connectError && errText(conn.connectError)))
		return;
	const info = client.getServerVersion();
	is(info?.name, EXPECTED_NAME, 'initialize: serverInfo.name');
	ok(typeof info?.version === 'string' && info.version.length > 0,
	    `initialize: serverInfo.version is a non-empty string (${show(info?.version)})`, info);
	is(initResponse(conn)?.result?.protocolVersion, LATEST,
	    `initialize: protocol version ${LATEST} negotiated`);
	ok(typeof client.getServerCapabilities()?.tools === 'object',
	    'initialize: server capabilities include tools', client.getServerCapabilities());

	// -- tools/list
	const lr = await settle(client.listTools());
	ok(!lr.error, 'tools/list succeeds', lr.error && errText(lr.error));
	const tools = lr.value?.tools ?? [];
	is(tools.map(t => t.name), ['echo', 'add', 'sleep', 'fail'],
	    'tools/list: exactly echo, add, sleep, fail in registration order');
	is(lr.value?.nextCursor, undefined, 'tools/list: one page, no nextCursor');
	const byName = Object.fromEntries(tools.map(t => [t.name, t]));
	const schemaGist = s => s && ({
		type: s.type,
		properties: Object.fromEntries(Object.entries(s.properties ?? {}).map(
		    ([k, v]) => [k, Object.fromEntries(Object.entries(v).filter(
			([kk]) => ['type', 'minimum', 'maximum'].includes(kk)))])),
		required: [...(s.required ?? [])].sort()
	});
	is(schemaGist(byName.echo?.inputSchema),
	    { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
	    'tools/list: echo inputSchema {text: string}, text required', show(byName.echo?.inputSchema));
	is(schemaGist(byName.add?.inputSchema),
	    { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
	    'tools/list: add inputSchema {a: number, b: number}, both required', show(byName.add?.inputSchema));
	is(schemaGist(byName.sleep?.inputSchema),
	    { type: 'object', properties: { ms: { type: 'integer', minimum: 0, maximum: 600000 } }, required: ['ms'] },
	    'tools/list: sleep inputSchema {ms: integer 0..600000}, ms required', show(byName.sleep?.inputSchema));
	is(schemaGist(byName.fail?.inputSchema),
	    { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
	    'tools/list: fail inputSchema {message: string}, message required', show(byName.fail?.inputSchema));
	is(schemaGist(byName.add?.outputSchema),
	    { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
	    'tools/list: add outputSchema {sum: number}, sum required', show(byName.add?.outputSchema));
	is(['echo', 'sleep', 'fail'].filter(t => byName[t]?.outputSchema !== undefined), [],
	    'tools/list: echo, sleep and fail declare no outputSchema');

	// -- tools/call, one per tool
	const hello = 'hello, "world"\n\tüñí©ødé ✓ 🚀 \\ end';
	let r = await settle(client.callTool({ name: 'echo', arguments: { text: hello } }));
	is(r.error ? errText(r.error) : { content: r.value.content, isError: r.value.isError ?? false },
	    { content: [{ type: 'text', text: hello }], isError: false },
	    'echo: returns exactly one text block with the text (quotes, escapes, UTF-8 intact)');

	ok(client.getToolOutputValidator('add') !== undefined,
	    'add: the SDK compiled a validator from the declared outputSchema');
	r = await settle(client.callTool({ name: 'add', arguments: { a: 2, b: 40.5 } }));
	ok(!r.error, 'add {a: 2, b: 40.5}: the SDK accepts the result (structuredContent validates against outputSchema)',
	    r.error && errText(r.error));
	is(r.value?.structuredContent, { sum: 42.5 }, 'add {a: 2, b: 40.5}: structuredContent is {sum: 42.5}');
	ok(r.value?.content?.length === 1 && r.value.content[0].type === 'text' &&
	    /(^|[^0-9.])42\.5([^0-9]|$)/.test(r.value.content[0].text) && !r.value.isError,
	    'add {a: 2, b: 40.5}: one text block showing 42.5, not an error', r.value ?? errText(r.error));
	r = await settle(client.callTool({ name: 'add', arguments: { a: -7, b: 3 } }));
	is(r.error ? errText(r.error) : r.value.structuredContent, { sum: -4 },
	    'add {a: -7, b: 3}: structuredContent is {sum: -4}');

	const boom = 'boom: the disk is on fire';
	r = await settle(client.callTool({ name: 'fail', arguments: { message: boom } }));
	is(r.error ? errText(r.error) : { content: r.value.content, isError: r.value.isError },
	    { content: [{ type: 'text', text: boom }], isError: true },
	    'fail: result has isError: true and exactly the message as text');

	r = await settle(client.callTool({ name: 'sleep', arguments: { ms: 50 } }));
	is(r.error ? errText(r.error) : { content: r.value.content, isError: r.value.isError ?? false },
	    { content: [{ type: 'text', text: 'slept 50 ms' }], isError: false },
	    'sleep {ms: 50}: returns "slept 50 ms"');
	ok(r.ms >= 45, `sleep {ms: 50}: really took >= 50 ms (took ${r.ms} ms)`);

	// -- input schema violations: isError results naming the bad field
	const bad = [
		['echo', { text: 5 }, 'text', 'echo {text: 5} (wrong type)'],
		['echo', {}, 'text', 'echo {} (missing text)'],
		['sleep', { ms: 700000 }, 'ms', 'sleep {ms: 700000} (above maximum)'],
		['sleep', { ms: -1 }, 'ms', 'sleep {ms: -1} (below minimum)'],
		['sleep', { ms: 1.5 }, 'ms', 'sleep {ms: 1.5} (not an integer)'],
		['add', { a: 1 }, 'b', 'add {a: 1} (missing b)'],
		['add', { a: 1, b: '2' }, 'b', 'add {a: 1, b: "2"} (wrong type)']
	];
	for (const [name, args, field, what] of bad) {
		r = await settle(client.callTool({ name, arguments: args }), 5000);
		ok(!r.error && r.value.isError === true && mentions(textOf(r.value), field),
		    `${what}: isError result whose text mentions "${field}"`,
		    r.error ? `got a rejection instead: ${errText(r.error)}` : r.value);
	}

	// -- unknown tool: a JSON-RPC error, not a result
	r = await settle(client.callTool({ name: 'no-such-tool', arguments: {} }));
	ok(r.error instanceof McpError, 'unknown tool: the call rejects with an McpError (a JSON-RPC error)',
	    r.error ? errText(r.error) : { resolvedWith: r.value });
	is(r.error?.code, -32602, 'unknown tool: error code is -32602 (invalid params)');

	// -- cancellation through an AbortSignal
	const ac = new AbortController();
	const pSleep = client.callTool({ name: 'sleep', arguments: { ms: 10000 } }, undefined, { signal: ac.signal });
	setTimeout(() => ac.abort('interop test cancels'), 100);
	r = await settle(pSleep, 12000);
	ok(r.error && !r.timedOut, 'cancel: aborting the sleep 10000 call rejects it',
	    r.error ? errText(r.error) : { resolvedWith: r.value });
	ok(r.ms < 2000, `cancel: the rejection came promptly (${r.ms} ms after the call, abort at 100 ms)`);
	const sleepReq = conn.sent.find(m => m.msg.method === 'tools/call' &&
	    m.msg.params?.name === 'sleep' && m.msg.params?.arguments?.ms === 10000)?.msg;
	const cancelNote = conn.sent.find(m => m.msg.method === 'notifications/cancelled')?.msg;
	ok(sleepReq !== undefined && cancelNote?.params?.requestId === sleepReq.id,
	    'cancel: the client sent notifications/cancelled for the sleep request id',
	    { sleepReq, cancelNote });
	const cancelledId = sleepReq?.id;
	r = await settle(client.callTool({ name: 'echo', arguments: { text: 'still here' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'still here',
	    'cancel: the server stays usable (an echo right after works)');
	await sleep(400);
	is(responsesFor(conn, cancelledId).map(m => m.msg), [],
	    'cancel: no response for the cancelled request id (within 500 ms of the cancel)');

	// -- concurrency: 10 sleep 200 ms and 10 echo, all at once, interleaved
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
	    '20 concurrent calls (10 sleep 200 ms, 10 echo): every one resolves with its own correct result',
	    all.error ? errText(all.error) : wrong);
	ok(!all.error && total < 2000,
	    `20 concurrent calls: all done in ${total} ms (< 2000; serial would be >= 2000)`);
	ok(!all.error && total >= 195, `20 concurrent calls: the sleeps really slept (${total} ms >= 200)`);
	const lastEcho = Math.max(...res.filter(x => !x.isSleep).map(x => x.t));
	const firstSleep = Math.min(...res.filter(x => x.isSleep).map(x => x.t));
	ok(!all.error && lastEcho < firstSleep,
	    `20 concurrent calls: every echo came back (last at ${lastEcho} ms) before the first sleep (${firstSleep} ms)`,
	    res.map(x => `#${x.i} ${x.isSleep ? 'sleep' : 'echo '} at ${x.t} ms`).join('\n'));

	// -- ping
	r = await settle(client.ping(), 5000);
	is(r.error ? errText(r.error) : r.value, {}, 'ping: answered with an empty result');

	// -- what the whole session looked like
	const requestIds = conn.sent.filter(m => 'id' in m.msg && 'method' in m.msg).map(m => m.msg.id);
	const responseIds = conn.received.filter(m => !('method' in m.msg)).map(m => m.msg.id);
	const unanswered = requestIds.filter(id => id !== cancelledId && !responseIds.includes(id));
	const dup = responseIds.filter((id, k) => responseIds.indexOf(id) !== k);
	const stray = responseIds.filter(id => !requestIds.includes(id));
	ok(unanswered.length === 0 && dup.length === 0 && stray.length === 0,
	    `session: each of the ${requestIds.length - 1} other requests got exactly one response, no strays`,
	    { unanswered, duplicated: dup, stray });
	is(conn.errors.map(errText), [],
	    'session: the SDK reported no transport or protocol errors (stdout carried only JSON-RPC)');

	// -- close: the SDK ends stdin, waits 2 s, then SIGTERM, 2 s, SIGKILL
	const c = await shut(conn);
	ok(conn.exit !== null && c.ms < 5000,
	    `close: the server process ended within 5 s of client.close() (${c.ms} ms)`, conn.exit ?? 'still running');
	ok(conn.exit !== null && (conn.exit.code === 0 || conn.exit.signal === 'SIGTERM'),
	    'close: the server exited with status 0, or by the SDK\'s SIGTERM', conn.exit);
	// Shutdown flushes in-flight responses: one still running the cancelled
	// sleep would show up here.
	is(responsesFor(conn, cancelledId).map(m => m.msg), [],
	    'cancel: no response for the cancelled id all session long, shutdown included');
	if (conn.exit?.signal === 'SIGTERM')
		diag('note: the server did not exit on stdin EOF within 2 s; the SDK had to send SIGTERM');

	// -- one worker: a cancelled call must give its worker back. First a
	// call cancelled while it waits in the queue behind a sleep 300, then
	// one cancelled while it runs; with a single worker, the echo after
	// each can only come back quickly if the cancelled sleep did not run on.
	const one = await open('workers1',
	    { args: ['--workers', '1', '--max-workers', '1'] });
	if (ok(!one.connectError, 'one worker: connect with --workers 1',
	    one.connectError && errText(one.connectError))) {
		const c1 = one.client;
		const findSleep = ms => one.sent.find(m => m.msg.method === 'tools/call' &&
		    m.msg.params?.name === 'sleep' && m.msg.params?.arguments?.ms === ms)?.msg?.id;

		const pFirst = settle(c1.callTool({ name: 'sleep', arguments: { ms: 300 } }), 5000);
		await sleep(20);
		const acQ = new AbortController();
		const pQueued = settle(c1.callTool({ name: 'sleep', arguments: { ms: 10001 } }, undefined,
		    { signal: acQ.signal }), 12000);
		await sleep(80);
		acQ.abort('cancelled while queued');
		const rq = await pQueued;
		ok(rq.error && !rq.timedOut, 'one worker: a queued sleep 10001 cancelled after 100 ms rejects',
		    rq.error ? errText(rq.error) : { resolvedWith: rq.value });
		const rf = await pFirst;
		is(rf.error ? errText(rf.error) : textOf(rf.value), 'slept 300 ms',
		    'one worker: the sleep 300 ahead of it completes normally');
		let e = await settle(c1.callTool({ name: 'echo', arguments: { text: 'after queued cancel' } }), 12000);
		ok(!e.error && textOf(e.value) === 'after queued cancel' && e.ms < 1500,
		    `one worker: an echo after it answers in ${e.ms} ms (< 1500: the cancelled queued call did not run)`,
		    e.error ? errText(e.error) : e.value);

		const acR = new AbortController();
		const pRun = settle(c1.callTool({ name: 'sleep', arguments: { ms: 10002 } }, undefined,
		    { signal: acR.signal }), 12000);
		await sleep(100);
		acR.abort('cancelled while running');
		const rr = await pRun;
		ok(rr.error && !rr.timedOut, 'one worker: a running sleep 10002 cancelled after 100 ms rejects',
		    rr.error ? errText(rr.error) : { resolvedWith: rr.value });
		e = await settle(c1.callTool({ name: 'echo', arguments: { text: 'after running cancel' } }), 12000);
		ok(!e.error && textOf(e.value) === 'after running cancel' && e.ms < 1500,
		    `one worker: an echo after it answers in ${e.ms} ms (< 1500: the sleep stopped early)`,
		    e.error ? errText(e.error) : e.value);

		const s1 = await shut(one);
		ok(one.exit !== null && (one.exit.code === 0 || one.exit.signal === 'SIGTERM') && s1.ms < 5000,
		    `one worker: the server exits cleanly after close (${s1.ms} ms)`, one.exit ?? 'still running');
		const ids = [findSleep(10001), findSleep(10002)];
		is(ids.flatMap(id => responsesFor(one, id).map(m => m.msg)), [],
		    'one worker: no response for either cancelled id, shutdown included', { ids });
		is(one.errors.map(errText), [], 'one worker: the SDK reported no errors');
	}

	// -- older clients: protocol version negotiation
	for (const v of [...OLDER, '1999-01-01']) {
		const o = await open(`v${v}`, { rewriteVersion: v });
		const got = initResponse(o)?.result?.protocolVersion;
		if (v === '1999-01-01') {
			is(got, LATEST, `initialize with unsupported version ${v}: server offers ${LATEST}`,
			    o.connectError && errText(o.connectError));
		} else {
			ok(!o.connectError && got === v, `initialize with ${v}: server agrees to ${v}`,
			    o.connectError ? errText(o.connectError) : { got });
			const e = await settle(o.client.callTool({ name: 'echo', arguments: { text: v } }), 5000);
			is(e.error ? errText(e.error) : textOf(e.value), v, `protocol ${v}: echo works`);
		}
		const s = await shut(o);
		ok(o.exit !== null, `protocol ${v}: server process ended after close (${s.ms} ms)`, o.exit ?? 'still running');
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
killChildren();
finish(stderrLog);
