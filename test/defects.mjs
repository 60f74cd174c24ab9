// defects.mjs: the defects of the hardening issue over HTTP, each as the
// user met it: a call longer than --request-timeout over /mcp (SSE and
// JSON bodies, stateless), SIGTERM with a stateless call in flight, the
// drain after an answer sent whole, a kept-alive connection that carried
// a stream, clients that leave (/sse, the standalone stream, a POST
// waiting for its answer, a live stream, and 1,000 at once), a body over
// --max-message as Node's fetch sends it, a template variable that is
// not UTF-8, a request cancelled before its answer, requests to the
// client before notifications/initialized, and the auth challenge's
// details. Each group fails on the code before the fix. Prints TAP;
// exits 1 when an assertion fails. Node 20, no npm packages; loopback
// traffic only. Run from the repository root (test/defects.sh does).
//
//   node test/defects.mjs [NAME ...]	only the groups whose names contain NAME
import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runGroups, showJson as show, sleep, within } from './node/harness.mjs';
import {
	FEAT, INIT, INITIALIZED, call, get, group, isErr, isResult, killAll, open, ping, post, rawConn,
	startServer, textOf, track,
} from './node/http-client.mjs';

const SLOW = 12000;	// ms: past the default --request-timeout (10 s)

// A POST of a JSON body with Node's fetch (undici), as the SDKs send it:
// the status and body it could read, or the error it met.
async function fetchPost(port, path, body, headers = {}) {
	try {
		const r = await fetch(`http://127.0.0.1:${port}${path}`, {
			method: 'POST', body,
			headers: { 'Content-Type': 'application/json',
			    Accept: 'application/json, text/event-stream', ...headers },
		});
		return { status: r.status, text: await r.text() };
	} catch (e) {
		return { status: 0, error: (e.cause && e.cause.code) || e.message };
	}
}

// An /sse session on a raw connection: its id once the endpoint came.
async function sseSession(port) {
	const c = rawConn(port);
	await c.connected;
	c.sock.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
	await c.until(() => /sessionId=[0-9a-f]{32}/.test(c.data) || c.closedAt !== null, 5000);
	const m = /sessionId=([0-9a-f]{32})/.exec(c.data);
	c.sid = m ? m[1] : null;
	return c;
}

const postSse = (port, sid, msg) => new Promise((res) => {
	const body = JSON.stringify(msg);
	const req = track(http.request({ host: '127.0.0.1', port, method: 'POST',
	    path: `/messages?sessionId=${sid}`, agent: false,
	    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
	(r) => { r.resume(); r.on('end', () => res(r.statusCode)); }));
	req.on('error', () => res(0));
	req.end(body);
});

// ---- 1. calls longer than --request-timeout -------------------------------

async function longCalls(t) {
	const [sse, json, stateless] = await Promise.all([
		startServer([]), startServer(['--json-response', '--keepalive', '2']),
		startServer(['--stateless']),
	]);
	const sid = await open(sse);
	const jsid = await open(json);
	const xs = [
		post(sse.port, call('s', 'sleep', { ms: SLOW }), { sid }),
		post(json.port, call('j', 'sleep', { ms: SLOW }), { sid: jsid }),
		post(stateless.port, call('n', 'sleep', { ms: SLOW })),
	];
	await Promise.all(xs.map((x) => x.done(SLOW + 8000)));
	const [s, j, n] = xs;
	t.ok(s.status === 200 && s.complete && textOf(s.answer('s')) === `slept ${SLOW} ms`,
	    `/mcp, default flags: a ${SLOW / 1000} s call (past --request-timeout) gets its answer`, s.summary());
	t.ok(s.items[0] && s.items[0].type === 'event' && /^\d+-0$/.test(s.items[0].other.id || '') &&
	    s.items[0].tFirst < 1000,
	    '... and an event id within 1 s of the POST (the priming event)', show(s.items[0]));
	t.ok(j.status === 200 && j.complete && /^application\/json/.test(j.headers['content-type'] || '') &&
	    textOf(j.json()) === `slept ${SLOW} ms`,
	    `--json-response: a ${SLOW / 1000} s call gets its answer as a JSON body`, j.summary());
	t.ok(/^\n+\{/.test(j.raw) && j.headers['transfer-encoding'] === 'chunked',
	    '--json-response: the body is kept alive with blank lines before the JSON (--keepalive 2)',
	    show(j.raw.slice(0, 40)));
	t.ok(n.status === 200 && n.complete && textOf(n.answer('n')) === `slept ${SLOW} ms`,
	    `--stateless: a ${SLOW / 1000} s call gets its answer`, n.summary());
	// The sweep still cuts a slow client: half a request, then nothing.
	const c = rawConn(sse.port);
	await c.connected;
	c.sock.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
	await c.until(() => c.closedAt !== null, 14000);
	t.ok(c.closedAt !== null && c.closedAt >= 9000,
	    'a client that sends half a request is still cut after --request-timeout (10 s)', `closed at ${c.closedAt}`);
}

// ---- 3. SIGTERM with a stateless call in flight ---------------------------

async function statelessSigterm(t) {
	for (const extra of [[], ['--keepalive', '1']]) {
		const srv = await startServer(['--stateless', ...extra]);
		const x = post(srv.port, call('c', 'sleep', { ms: 1500 }));
		await sleep(300);
		srv.expectExit = true;
		const t0 = Date.now();
		srv.kill('SIGTERM');
		await x.done(8000);
		const ex = await within(srv.exited, 8000);
		const what = `--stateless ${extra.join(' ')}`.trim();
		t.ok(x.status === 200 && textOf(x.answer('c')) === 'slept 1500 ms',
		    `${what}: SIGTERM with a call in flight: its answer still comes`, x.summary(), srv.tail());
		t.ok(ex && ex.code === 0 && ex.signal === null && ex.at - t0 >= 1000 && ex.at - t0 < 4000,
		    `${what}: the server waits for it, then exits 0`, `${show(ex)} after ${ex && ex.at - t0} ms`);
	}
	const srv = await startServer(['--stateless', '--grace-ms', '500']);
	const x = post(srv.port, call('g', 'sleep', { ms: 8000 }));
	await sleep(300);
	srv.expectExit = true;
	srv.kill('SIGTERM');
	await x.done(6000);
	const ex = await within(srv.exited, 6000);
	const a = x.answer('g');
	t.ok(a && a.error && /shutting down/.test(a.error.message) && ex && ex.code === 0,
	    '--stateless --grace-ms 500, SIGTERM mid-call: the call gets "server shutting down", exit 0',
	    x.summary(), show(ex));
}

// ---- 4. the drain after an answer sent whole ------------------------------

async function drainWhole(t) {
	const srv = await startServer(['--grace-ms', '8000', '--stream-after-ms', '5000']);
	const sid = await open(srv);
	const x = post(srv.port, call('w', 'sleep', { ms: 1000 }), { sid });
	await sleep(200);
	srv.expectExit = true;
	const t0 = Date.now();
	srv.kill('SIGTERM');
	await x.done(5000);
	const ex = await within(srv.exited, 10000);
	t.ok(x.status === 200 && x.headers['content-length'] && textOf(x.answer('w')) === 'slept 1000 ms',
	    'SIGTERM with a call in flight: its answer goes out whole', x.summary());
	t.ok(ex && ex.code === 0 && ex.at - t0 < 3000,
	    '--grace-ms 8000: the server exits once that answer is out, not at the end of the grace period',
	    `${show(ex)} after ${ex && ex.at - t0} ms`);
}

// ---- 6. a kept-alive connection that carried a stream ---------------------

async function keptAlive(t) {
	const srv = await startServer(['--idle-timeout', '2', '--request-timeout', '2', '--keepalive', '1']);
	const sid = await open(srv);
	const c = rawConn(srv.port);
	await c.connected;
	const body = JSON.stringify(call('k', 'sleep', { ms: 1500 }));
	c.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
	    `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
	    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
	await c.until(() => c.data.includes('0\r\n\r\n') || c.closedAt !== null, 5000);
	const streamed = /transfer-encoding: chunked/i.test(c.data) && c.data.includes('slept 1500 ms');
	const doneAt = Date.now() - c.t0;
	t.ok(streamed && c.closedAt === null, 'a POST answered as a live stream; the connection is kept alive',
	    show(c.data.slice(0, 300)));
	await c.until(() => c.closedAt !== null, 6000);
	t.ok(c.closedAt !== null && c.closedAt - doneAt < 4500,
	    'then idle: the server closes it after --idle-timeout (2 s), like any kept-alive connection',
	    `closed ${c.closedAt === null ? 'never' : `${c.closedAt - doneAt} ms after the stream`}`);
	// Half a request after a stream: --request-timeout applies again.
	const d = rawConn(srv.port);
	await d.connected;
	d.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
	    `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
	    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
	await d.until(() => d.data.includes('0\r\n\r\n') || d.closedAt !== null, 5000);
	const at = Date.now() - d.t0;
	d.sock.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
	await d.until(() => d.closedAt !== null, 6000);
	t.ok(d.closedAt !== null && d.closedAt - at < 4500,
	    'half a request after a stream on the same connection: cut after --request-timeout (2 s)',
	    `closed ${d.closedAt === null ? 'never' : `${d.closedAt - at} ms later`}`);
}

// ---- 7. clients that leave ------------------------------------------------

// One worker: a call that was not cancelled holds it, and an echo from
// another session waits behind it.
async function echoWithin(srv, ms) {
	const sid = await open(srv);
	const e = await post(srv.port, call('probe', 'echo', { text: 'free' }), { sid }).done(ms + 2000);
	return e.endedAt !== undefined && e.endedAt < ms && textOf(e.answer('probe')) === 'free';
}

async function clientsLeave(t) {
	const one = ['--workers', '1', '--max-workers', '1', '--keepalive', '30'];
	// /sse: the session ends and its call is cancelled at once.
	let srv = await startServer(one);
	let c = await sseSession(srv.port);
	t.ok(c.sid !== null, '/sse: a session opens', show(c.data.slice(0, 200)));
	t.ok(await postSse(srv.port, c.sid, INIT(1, '2024-11-05')) === 202 &&
	    await postSse(srv.port, c.sid, call('slow', 'sleep', { ms: 20000 })) === 202,
	    '/sse: initialize and a 20 s sleep are accepted (202)');
	await sleep(300);
	c.sock.destroy();
	await sleep(1000);
	t.ok(await postSse(srv.port, c.sid, ping('after')) === 404,
	    '/sse: 1 s after its client left, the session is gone (404), not at the next keepalive (30 s)');
	t.ok(await echoWithin(srv, 1500), '/sse: its sleep was cancelled: the one worker is free again');
	// The standalone GET stream: a new one may open at once.
	let sid = await open(srv);
	let g = get(srv.port, { sid });
	await g.head(3000);
	g.close();
	await sleep(700);
	const g2 = get(srv.port, { sid });
	await g2.head(3000);
	t.ok(g.status === 200 && g2.status === 200,
	    '/mcp: a standalone stream dropped by its client: a new GET 0.7 s later gets 200, not 409',
	    `${g.status} then ${g2.summary()}`);
	g2.close();
	// A POST still waiting for its answer: no event id went out, so
	// nobody can resume it; its call is cancelled.
	srv = await startServer([...one, '--stream-after-ms', '10000']);
	sid = await open(srv);
	let x = post(srv.port, call('w', 'sleep', { ms: 20000 }), { sid });
	await sleep(300);
	x.close();
	await sleep(600);
	t.ok(await echoWithin(srv, 1500), '/mcp: a POST whose client left before any answer: its call is cancelled');
	// A live stream with an event id: not a cancellation (the spec);
	// the answer waits for a resumption.
	srv = await startServer([...one]);
	sid = await open(srv);
	x = post(srv.port, call('live', 'sleep', { ms: 1500 }), { sid });
	await x.until(() => x.items.length > 0, 3000);
	const id = x.items[0] && x.items[0].other.id;
	x.close();
	await sleep(300);
	const r = await get(srv.port, { sid, last: id }).done(5000);
	t.ok(/^\d+-0$/.test(id || '') && r.status === 200 && textOf(r.answer('live')) === 'slept 1500 ms',
	    '/mcp: a primed stream dropped mid-call: the call goes on; Last-Event-ID gets its answer',
	    `${id} ${r.summary()}`);
	// A 2025-06-18 stream with no event id yet: cancelled.
	sid = await open(srv, { version: '2025-06-18' });
	x = post(srv.port, call('old', 'sleep', { ms: 20000 }), { sid });
	await x.head(3000);
	await sleep(100);
	x.close();
	await sleep(600);
	t.ok(x.status === 200 && await echoWithin(srv, 1500),
	    '/mcp: a stream that carried no event id (2025-06-18), dropped: its call is cancelled', x.summary());
}

// 1,000 clients leave at once, then 1,000 new ones come (--max-per-ip
// is 1,000): they must all get in.
async function thousand(t) {
	const srv = await startServer([]);
	const N = 1000;
	const open1 = async () => {
		const cs = [];
		for (let i = 0; i < N; i += 100)
			cs.push(...await Promise.all(Array.from({ length: Math.min(100, N - i) }, () => sseSession(srv.port))));
		return cs;
	};
	const first = await open1();
	t.ok(first.every((c) => c.sid !== null), `${N} /sse sessions open`,
	    `${first.filter((c) => c.sid === null).length} failed`);
	for (const c of first)
		c.sock.destroy();
	await sleep(1000);
	const t0 = Date.now();
	const second = await open1();
	const bad = second.filter((c) => c.sid === null);
	t.ok(bad.length === 0, `/sse: 1 s after they all left, ${N} new sessions from the same address all get in ` +
	    `(${Date.now() - t0} ms)`, `${bad.length} refused: ${show(bad[0] && bad[0].data.slice(0, 100))} ${bad[0] && bad[0].error}`);
	for (const c of second)
		c.sock.destroy();
	// /mcp: 1,000 sessions with their standalone streams, the same way.
	const streams = async () => {
		const gs = [];
		for (let i = 0; i < N; i += 100)
			gs.push(...await Promise.all(Array.from({ length: Math.min(100, N - i) }, async () => {
				const sid = await open(srv);
				const g = get(srv.port, { sid });
				await g.head(5000);
				return g;
			})));
		return gs;
	};
	await sleep(1000);
	const g1 = await streams();
	t.ok(g1.every((g) => g.status === 200), `/mcp: ${N} sessions, each with its standalone stream open`,
	    show(g1.filter((g) => g.status !== 200).slice(0, 2).map((g) => g.summary())));
	for (const g of g1)
		g.close();
	await sleep(1000);
	let g2;
	try {
		g2 = await streams();
	} catch (e) {
		g2 = [];
		t.ok(false, '/mcp: the second thousand connect', String(e));
	}
	t.ok(g2.length === N && g2.every((g) => g.status === 200),
	    `/mcp: 1 s after those ${N} clients left, ${N} new sessions and streams all get in`,
	    show(g2.filter((g) => g.status !== 200).slice(0, 2).map((g) => g.summary())));
	for (const g of g2)
		g.close();
}

// ---- 13. a body over --max-message, as fetch sends it --------------------

async function tooLarge(t) {
	const srv = await startServer(['--max-message', '65536']);
	const sid = await open(srv);
	const big = JSON.stringify({ method: 'tools/call', params: { name: 'echo',
	    arguments: { text: 'x'.repeat(1 << 20) } }, jsonrpc: '2.0', id: 'big' });
	const results = [];
	for (let i = 0; i < 10; i++)
		results.push(await fetchPost(srv.port, '/mcp', big, { 'Mcp-Session-Id': sid }));
	const good = results.filter((r) => r.status === 413 && isErr(JSON.parse(r.text), -32600) &&
	    JSON.parse(r.text).id === 'big');
	t.ok(good.length === 10, '/mcp: a 1 MiB body over --max-message 65536, ten times with fetch: ten 413s read, ' +
	    'each a JSON-RPC error with the request\'s id (sent last), no reset', show(results.filter((r) => !good.includes(r))));
	const c = await sseSession(srv.port);
	const r2 = [];
	for (let i = 0; i < 10; i++)
		r2.push(await fetchPost(srv.port, `/messages?sessionId=${c.sid}`, big));
	t.ok(r2.every((r) => r.status === 413 && JSON.parse(r.text).id === 'big'),
	    '/messages: the same, ten 413s with the id', show(r2.filter((r) => r.status !== 413)));
	c.sock.destroy();
	// The connection lives on after a body read and thrown away.
	const agent = track(new http.Agent({ keepAlive: true, maxSockets: 1 }));
	const a = await post(srv.port, big, { sid, agent }).done();
	const b = await post(srv.port, ping('after'), { sid, agent }).done();
	t.ok(a.status === 413 && b.status === 200 && isResult(b.answer('after'), 'after') &&
	    a.localPort === b.localPort,
	    'after a 413 the same kept-alive connection carries the next request', `${a.summary()} / ${b.summary()}`);
	// Far over the limit: answered at once, the rest read and dropped
	// (lingering close): the client reads the 413, then an orderly end.
	const d = rawConn(srv.port);
	await d.connected;
	const total = 80 * 1024 * 1024;
	d.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
	    `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\nContent-Length: ${total}\r\n\r\n`);
	const chunk = Buffer.alloc(1 << 20, 'x');
	let sent = 0;
	while (sent < total && d.closedAt === null && d.error === null) {
		if (!d.sock.write(chunk))
			await Promise.race([new Promise((res) => d.sock.once('drain', res)), sleep(2000)]);
		sent += chunk.length;
	}
	d.sock.end();
	await d.until(() => d.closedAt !== null, 8000);
	t.ok(d.status() === 413 && d.error === null,
	    `Content-Length 80 MiB, sent in full: the 413 is read, and the connection ends without a reset`,
	    `status ${d.status()} error ${d.error} sent ${sent} ${show(d.data.slice(0, 120))}`);
}

// ---- 8. a template variable that is not UTF-8 -------------------------------

async function templates(t) {
	const srv = await startServer([], FEAT);
	const sid = await open(srv);
	const read = (id, uri) => post(srv.port, { jsonrpc: '2.0', id, method: 'resources/read',
	    params: { uri } }, { sid }).done();
	let r = await read(1, 'test://template/%C3/data');
	t.ok(r.status === 200 && isErr(r.answer(1), -32002),
	    'feat-server: test://template/%C3/data (not UTF-8 once decoded) does not match: -32002', r.summary(), srv.tail());
	r = await read(2, 'test://template/%C3%B6/data');
	t.ok(r.status === 200 && /Data for ID: \u00f6/.test(r.answer(2)?.result?.contents?.[0]?.text || ''),
	    'test://template/%C3%B6/data matches, and the callback reads "\u00f6"', r.summary());
	const demo = await startServer([]);
	const ds = await open(demo);
	r = await post(demo.port, { jsonrpc: '2.0', id: 3, method: 'resources/read',
	    params: { uri: 'demo://greeting/%C3' } }, { sid: ds }).done();
	t.ok(isErr(r.answer(3), -32002), 'mcp-demo: demo://greeting/%C3: -32002, not "Hello, (null)!"', r.summary());
}

// ---- the spec's details ---------------------------------------------------

// A request cancelled before its answer: its POST gets a body of a
// JSON-RPC type (an empty event stream), not 202.
async function cancelledPost(t) {
	for (const extra of [[], ['--json-response']]) {
		const srv = await startServer(['--stream-after-ms', '10000', ...extra]);
		const sid = await open(srv);
		const x = post(srv.port, call('c', 'sleep', { ms: 20000 }), { sid });
		await sleep(300);
		const n = await post(srv.port, { jsonrpc: '2.0', method: 'notifications/cancelled',
		    params: { requestId: 'c', reason: 'test' } }, { sid }).done();
		await x.done(5000);
		const what = extra.length ? '--json-response' : 'SSE bodies';
		t.ok(n.status === 202 && x.status === 200 && /^text\/event-stream/.test(x.headers['content-type'] || '') &&
		    x.raw === '' && x.complete,
		    `${what}: a request cancelled before its answer: 200 with an empty event stream, not 202`, x.summary());
	}
}

// Requests to the client wait for notifications/initialized.
async function beforeInitialized(t) {
	const srv = await startServer([], FEAT);
	const r = await post(srv.port, INIT('i', '2025-11-25', { sampling: {} })).done();
	const sid = r.headers['mcp-session-id'];
	const x = post(srv.port, call('s', 'sample', { prompt: 'hi', timeout_ms: 10000 }), { sid });
	await sleep(800);
	const early = x.msgs.filter((m) => m.method === 'sampling/createMessage');
	t.ok(r.status === 200 && early.length === 0,
	    'sampling/createMessage is not sent before the client\'s notifications/initialized', show(x.msgs));
	await post(srv.port, INITIALIZED, { sid }).done();
	await x.until(() => x.msgs.some((m) => m.method === 'sampling/createMessage'), 3000);
	const req = x.msgs.find((m) => m.method === 'sampling/createMessage');
	t.ok(req, 'once it came, the request goes out on the call\'s stream', show(x.msgs));
	if (req)
		await post(srv.port, { jsonrpc: '2.0', id: req.id, result: { role: 'assistant',
		    content: { type: 'text', text: 'hello' }, model: 'm' } }, { sid }).done();
	await x.done(5000);
	t.ok(/sampled: hello/.test(textOf(x.answer('s'))), 'and the tool gets its answer', x.summary());

	// A held request whose call is cancelled is never sent: the cancel
	// and notifications/initialized come in one batch, before the
	// worker's next look at its call.
	const r2 = await post(srv.port, INIT('i', '2025-03-26', { sampling: {} })).done();
	const sid2 = r2.headers['mcp-session-id'];
	const g = get(srv.port, { sid: sid2 });
	const c = post(srv.port, call('c', 'sample', { prompt: 'hi', timeout_ms: 10000 }), { sid: sid2 });
	await sleep(500);
	await post(srv.port, [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } },
	    INITIALIZED], { sid: sid2 }).done();
	await sleep(1000);
	const sent = [...g.msgs, ...c.msgs].filter((m) => m.method === 'sampling/createMessage');
	t.ok(g.status === 200 && sent.length === 0,
	    'a held sampling request whose call was cancelled is not sent once notifications/initialized comes',
	    show(g.msgs), c.summary());
	g.close();
	c.close();
}

// The 401: scopes, the metadata, and CORS for a browser client.
async function authDetails(t) {
	const dir = mkdtempSync(join(tmpdir(), 'mcp-auth-'));
	const file = join(dir, 'token');
	writeFileSync(file, 'sekrit\n');
	try {
		const srv = await startServer(['--auth-token-file', file, '--authorization-server',
		    'https://auth.example.com', '--auth-scopes', 'mcp:read  mcp:write']);
		const origin = 'http://localhost:3000';
		let x = await post(srv.port, INIT(1), { headers: { Origin: origin } }).done();
		const www = x.headers['www-authenticate'] || '';
		t.ok(x.status === 401 && /scope="mcp:read mcp:write"/.test(www) &&
		    /resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/.test(www),
		    '401: the challenge names the scopes (--auth-scopes) and the metadata', show(x.headers));
		t.ok(x.headers['access-control-allow-origin'] === origin &&
		    /WWW-Authenticate/i.test(x.headers['access-control-expose-headers'] || ''),
		    '401: CORS headers, exposing WWW-Authenticate to a browser client', show(x.headers));
		x = await post(srv.port, INIT(1), { headers: { Origin: origin, Authorization: 'Bearer nope' } }).done();
		t.ok(x.status === 401 && /error="invalid_token"/.test(x.headers['www-authenticate'] || ''),
		    '401 for a wrong token: error="invalid_token"', show(x.headers));
		const meta = (path) => new Promise((res) => {
			http.get({ host: '127.0.0.1', port: srv.port, path }, (r) => {
				let b = '';
				r.on('data', (d) => { b += d; });
				r.on('end', () => { try { res(JSON.parse(b)); } catch { res(null); } });
			}).on('error', () => res(null));
		});
		const m1 = await meta('/.well-known/oauth-protected-resource/mcp');
		const m0 = await meta('/.well-known/oauth-protected-resource');
		t.ok(m1 && m1.resource === `http://127.0.0.1:${srv.port}/mcp` &&
		    JSON.stringify(m1.scopes_supported) === '["mcp:read","mcp:write"]',
		    'the metadata of /mcp: its resource, and scopes_supported', show(m1));
		t.ok(m0 && m0.resource === `http://127.0.0.1:${srv.port}`,
		    'the root-form metadata names the identifier its URL was built from: the origin (RFC 9728 §3.3)',
		    show(m0));
		x = await post(srv.port, INIT(2), { headers: { Origin: origin, Authorization: 'Bearer sekrit' } }).done();
		const expose = x.headers['access-control-expose-headers'] || '';
		t.ok(x.status === 200 && /Mcp-Session-Id/i.test(expose) && /Mcp-Protocol-Version/i.test(expose),
		    'a success exposes Mcp-Session-Id and Mcp-Protocol-Version', show(x.headers));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

// ---- big answers (found in review) ------------------------------------------

// A 6 MiB answer streamed to a client that pauses: the keepalives do not
// land inside it. One answer larger than --max-queued does not cut its
// own stream. A large whole body to a slow reader is served past
// --request-timeout; one nobody reads is cut after --idle-timeout.
async function bigAnswers(t) {
	const big = 6 << 20;
	const text = 'b'.repeat(big);
	let srv = await startServer(['--keepalive', '1', '--stream-after-ms', '0', '--max-message', String(10 << 20)]);
	let sid = await open(srv);
	let x = post(srv.port, call('k', 'echo', { text }), { sid });
	await x.head(5000);
	x.res.pause();
	await sleep(3500);
	x.res.resume();
	await x.done(20000);
	t.ok(x.status === 200 && x.sse && textOf(x.answer('k')) === text && x.comments().length === 0,
	    'a 6 MiB answer on a live stream, its client paused 3.5 s, --keepalive 1: the event arrives whole ' +
	    '(no keepalive in the middle of it)', `${x.summary().slice(0, 300)} comments ${x.comments().length}`);

	// One event larger than --max-queued (8 MiB): delivered.
	const huge = 'h'.repeat(9 << 20);
	srv = await startServer(['--max-message', String(12 << 20), '--stream-after-ms', '0']);
	sid = await open(srv, { version: '2025-06-18' });
	x = await post(srv.port, call('q', 'echo', { text: huge }), { sid }).done(20000);
	t.ok(x.headers['transfer-encoding'] === 'chunked' && textOf(x.answer('q')) === huge,
	    '/mcp: one 9 MiB answer on a live stream, over the default --max-queued (8 MiB), is delivered, not cut',
	    x.summary().slice(0, 300));
	const g = get(srv.port, { path: '/sse' });
	await g.until(() => g.items.some((i) => i.event === 'endpoint'), 5000);
	const ssid = /sessionId=([0-9a-f]{32})/.exec(g.items[0].data)[1];
	await postSse(srv.port, ssid, INIT(1, '2024-11-05'));
	await postSse(srv.port, ssid, call('q', 'echo', { text: huge }));
	await g.until(() => g.msgs.some((m) => m && m.id === 'q'), 20000);
	t.ok(textOf(g.msgs.find((m) => m && m.id === 'q')) === huge,
	    '/sse: the same 9 MiB answer goes down the stream, and the session lives', `${g.bytes} bytes`);
	g.close();

	// A whole body of 6 MiB, its reader slow: served past --request-timeout.
	srv = await startServer(['--request-timeout', '2', '--idle-timeout', '3', '--stream-after-ms', '10000',
	    '--max-message', String(10 << 20)]);
	sid = await open(srv);
	x = post(srv.port, call('w', 'echo', { text }), { sid });
	await x.head(5000);
	x.res.pause();
	await sleep(2500);
	x.res.resume();
	await x.done(20000);
	t.ok(x.headers['content-length'] && textOf(x.answer('w')) === text,
	    'a 6 MiB whole body, its reader paused 2.5 s (--request-timeout 2, --idle-timeout 3): delivered in full',
	    x.summary().slice(0, 300));
	// ... and one nobody reads: cut once its writes stall for --idle-timeout.
	const c = rawConn(srv.port);
	await c.connected;
	const body = JSON.stringify(call('n', 'echo', { text }));
	c.sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${srv.port}\r\nContent-Type: application/json\r\n` +
	    `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
	    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
	await sleep(300);
	c.sock.pause();
	const t0 = Date.now();
	await c.until(() => c.closedAt !== null, 1);
	c.sock.resume();
	// Drain nothing: a paused socket sees the close only when resumed.
	c.sock.pause();
	await sleep(7000);
	c.sock.resume();
	await c.until(() => c.closedAt !== null, 3000);
	t.ok(c.closedAt !== null && c.closedAt - (t0 - c.t0) < 12000,
	    'a 6 MiB whole body nobody reads: the connection is cut after --idle-timeout (3 s)',
	    `closed at ${c.closedAt}, t0 ${t0 - c.t0}`);
}

async function main() {
	await runGroups([
		['long calls', longCalls, 40000], ['stateless sigterm', statelessSigterm, 30000],
		['drain whole', drainWhole], ['kept alive', keptAlive], ['clients leave', clientsLeave, 60000],
		['thousand', thousand, 90000], ['too large', tooLarge, 60000], ['templates', templates],
		['cancelled post', cancelledPost], ['before initialized', beforeInitialized],
		['auth details', authDetails], ['big answers', bigAnswers, 60000],
	], { run: group, times: 'DEFECTS_TIMES' });
	killAll();
	process.exit(process.exitCode);
}

main();
