// service.mjs: running a libmcp server as a service (the systemd,
// metrics, logs and reload issue), each as an operator meets it:
//   - GET /metrics after scripted traffic, read by a strict Prometheus
//     text-format parser (test/node/prom.mjs), the counts matching the
//     traffic exactly: requests by method and outcome, tools, the
//     histogram, sessions and why they ended, HTTP statuses by route,
//     body bytes both ways, the limits that refused, slow closes, the
//     pool, the process; --metrics-listen beside stdio; the Host check
//     and the bearer token in front of it;
//   - --log-format json behind a real nginx that sets X-Request-Id: every
//     line parses, a request's id is on all of its lines (the access
//     line, the call's end, the callback's own mcp_log), the client gets
//     it back, and nginx's access log has the same id; lines are bounded
//     and a client's bytes escaped;
//   - socket activation the way systemd does it (test/sdrun.c): the
//     passed socket, READY=1, WATCHDOG=1 and STOPPING=1 on a notify
//     socket of the test's own, and a restart under load that refuses no
//     connection and finishes the call in flight;
//   - SIGHUP: a rotated --auth-token-file (old token 401, new 200, open
//     connections kept), a bad one ignored, --log-file reopened.
// Prints TAP; exits 1 when an assertion fails. Node 20, no npm packages;
// loopback traffic only. Run from the repository root (test/service.sh).
//
//   node test/service.mjs [NAME ...]	only the groups whose names contain NAME
import http from 'node:http';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Child, eachLine, runGroups, showJson as show, sleep } from './node/harness.mjs';
import {
	DEMO, Exchange, INIT, INITIALIZED, Server, call, del, get, group, isErr, isResult, killAll,
	open, ping, post, rawConn, textOf, track,
} from './node/http-client.mjs';
import { parse } from './node/prom.mjs';

const SDRUN = `${process.env.MCP_BUILD || 'build'}/sdrun`;

// GET PATH on PORT: { status, headers, text }.
function fetchText(port, path, headers = {}) {
	return new Promise((resolve) => {
		const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
			let text = '';
			res.setEncoding('utf8');
			res.on('data', (d) => { text += d; });
			res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
		});
		req.on('error', (e) => resolve({ status: 0, error: e.code || e.message, text: '' }));
	});
}

// The metrics on PORT, parsed; throws on a scrape the parser refuses.
async function scrape(port, path = '/metrics', headers = {}) {
	const r = await fetchText(port, path, headers);
	if (r.status !== 200)
		throw new Error(`GET ${path}: ${r.status} ${r.error || ''} ${r.text.slice(0, 200)}`);
	if (!/^text\/plain; version=0\.0\.4/.test(r.headers['content-type'] || ''))
		throw new Error(`GET ${path}: Content-Type ${r.headers['content-type']}`);
	return { m: parse(r.text), bytes: Buffer.byteLength(r.text), text: r.text };
}

const bytes = (x) => Buffer.byteLength(x.raw);
const bodyOf = (msg) => typeof msg === 'string' ? msg : JSON.stringify(msg);

// ---- metrics: the counts match the traffic -------------------------------

async function metricsExact(t) {
	const srv = await new Server(DEMO, ['--metrics', '--access-log', '--tool-timeout', '400',
	    '--max-message', '4096', '--stream-after-ms', '100']).start();
	const P = srv.port;
	// Every exchange, to tally routes, statuses and bytes.
	const sent = [];	// { route, status, in, out }
	const run = async (route, x, body) => {
		await x.done(10000);
		sent.push({ route, status: x.status, in: body === undefined ? 0 :
		    Buffer.byteLength(bodyOf(body)), out: bytes(x) });
		return x;
	};
	const P1 = (msg, o = {}) => run('/mcp', post(P, msg, o), msg);
	const init = INIT('init', '2025-06-18');
	const r0 = await P1(init);
	const sid = r0.headers['mcp-session-id'];
	t.ok(r0.status === 200 && sid, 'metrics: a session opens', r0.summary());
	await P1(INITIALIZED, { sid });
	for (let i = 0; i < 5; i++)
		await P1(ping(`p${i}`), { sid });
	for (let i = 0; i < 7; i++)
		await P1(call(`e${i}`, 'echo', { text: `hello ${i}` }), { sid });
	for (let i = 0; i < 3; i++)
		await P1(call(`f${i}`, 'fail', { message: 'no' }), { sid });
	await P1(call('bad', 'echo', {}), { sid });		// schema: isError
	for (let i = 0; i < 2; i++)
		await P1(call(`u${i}`, 'no-such-tool', {}), { sid });
	await P1({ jsonrpc: '2.0', id: 'm', method: 'no/such/method' }, { sid });
	await P1('{"jsonrpc":', { sid });			// -32700
	await P1({ jsonrpc: '2.0', id: 'l1', method: 'tools/list' }, { sid });
	await P1({ jsonrpc: '2.0', id: 'l2', method: 'tools/list' }, { sid });
	// A call past --tool-timeout (400 ms): timed out.
	const slow = await P1(call('slow', 'sleep', { ms: 3000 }), { sid });
	t.ok(slow.answer('slow')?.result?.isError === true, 'metrics: the slow call timed out', slow.summary());
	// A call the client cancels.
	const cx = post(P, call('cx', 'sleep', { ms: 5000 }), { sid });
	await cx.head(3000);
	// While it runs: one call in flight, a worker busy.
	await sleep(150);
	const mid = await scrape(P);
	sent.push({ route: '/metrics', status: 200, in: 0, out: mid.bytes });
	t.ok(mid.m.value('mcp_calls_in_flight') === 1, 'metrics: mcp_calls_in_flight is 1 while a call runs',
	    mid.m.value('mcp_calls_in_flight'));
	t.ok(mid.m.value('mcp_workers_busy') >= 1, 'metrics: a worker is busy meanwhile',
	    mid.m.value('mcp_workers_busy'));
	await P1({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cx' } }, { sid });
	await cx.done(5000);
	sent.push({ route: '/mcp', status: cx.status, in: Buffer.byteLength(JSON.stringify(call('cx', 'sleep',
	    { ms: 5000 }))), out: bytes(cx) });
	// A body over --max-message: 413.
	const big = JSON.stringify(call('big', 'echo', { text: 'x'.repeat(5000) }));
	const r413 = await P1(big, { sid });
	t.ok(r413.status === 413, 'metrics: a body over --max-message gets 413', r413.status);
	// An unknown path, a second session left open, the first deleted.
	await run('other', new Exchange(P, 'GET', '/nope', {}));
	const r2 = await P1(INIT('init2', '2025-11-25'));
	const sid2 = r2.headers['mcp-session-id'];
	await run('/mcp', del(P, sid));
	// A legacy session: opened, one ping, and left.
	const sse = get(P, { path: '/sse' });
	await sse.until(() => sse.events().length > 0, 5000);
	const ep = sse.events()[0].data;
	const pm = await run('/messages', post(P, ping('sp'), { path: ep, accept: null }), ping('sp'));
	t.ok(pm.status === 202, 'metrics: POST /messages is accepted', pm.summary());
	await sse.until(() => sse.msgs.some((x) => x.id === 'sp'), 5000);
	sse.close();
	await sleep(300);
	sent.push({ route: '/sse', status: 200, in: 0, out: bytes(sse) });

	const { m, text } = await scrape(P);
	const v = (name, labels) => m.value(name, labels) ?? 0;
	const req = (method, outcome, code) => v('mcp_requests_total',
	    code === undefined ? { method, outcome } : { method, outcome, code: String(code) });
	t.ok(req('initialize', 'ok') === 2, 'metrics: initialize ok 2', req('initialize', 'ok'));
	t.ok(req('ping', 'ok') === 6, 'metrics: ping ok 6 (5 on /mcp, 1 on the legacy session)',
	    req('ping', 'ok'));
	t.ok(req('tools/call', 'ok') === 7, 'metrics: tools/call ok 7', req('tools/call', 'ok'));
	t.ok(req('tools/call', 'is_error') === 4, 'metrics: tools/call is_error 4 (3 fail, 1 bad arguments)',
	    req('tools/call', 'is_error'));
	t.ok(req('tools/call', 'error', -32602) === 2, 'metrics: tools/call error -32602 (unknown tool) 2',
	    req('tools/call', 'error', -32602));
	t.ok(req('tools/call', 'timeout') === 1, 'metrics: tools/call timeout 1', req('tools/call', 'timeout'));
	t.ok(req('tools/call', 'cancelled') === 1, 'metrics: tools/call cancelled 1',
	    req('tools/call', 'cancelled'));
	t.ok(req('other', 'error', -32601) === 1, 'metrics: an unknown method counts as other, -32601',
	    req('other', 'error', -32601));
	t.ok(req('invalid', 'error', -32700) === 1, 'metrics: the parse error counts as invalid, -32700',
	    req('invalid', 'error', -32700));
	t.ok(req('tools/list', 'ok') === 2, 'metrics: tools/list ok 2', req('tools/list', 'ok'));
	t.ok(!text.includes('no/such/method') && !text.includes('no-such-tool'),
	    'metrics: names a client made up are no label values');
	// ... and nothing else: 2 + 6 + 7 + 4 + 2 + 1 + 1 + 1 + 1 + 2 = 27.
	t.ok(m.sum('mcp_requests_total') === 27, 'metrics: 27 requests in all', m.sum('mcp_requests_total'),
	    text.split('\n').filter((l) => l.startsWith('mcp_requests')).join('\n'));
	const tool = (name, outcome) => v('mcp_tool_calls_total', { tool: name, outcome });
	t.ok(tool('echo', 'ok') === 7 && tool('echo', 'is_error') === 1 && tool('fail', 'is_error') === 3 &&
	    tool('sleep', 'timeout') === 1 && tool('sleep', 'cancelled') === 1,
	    'metrics: per tool: echo 7 ok + 1 is_error, fail 3 is_error, sleep 1 timeout + 1 cancelled',
	    text.split('\n').filter((l) => l.startsWith('mcp_tool_calls')).join('\n'));
	const count = (name) => v('mcp_tool_call_duration_seconds_count', { tool: name });
	t.ok(count('echo') === 8 && count('fail') === 3 && count('sleep') === 2,
	    'metrics: the histogram counts every call of each tool (echo 8, fail 3, sleep 2)',
	    count('echo'), count('fail'), count('sleep'));
	const le = (name, b) => v('mcp_tool_call_duration_seconds_bucket', { tool: name, le: b });
	t.ok(le('sleep', '0.1') === 0 && le('sleep', '0.5') === 2,
	    'metrics: sleep\'s two calls fall between 0.1 s and 0.5 s (timed out at 0.4, cancelled at ~0.2)',
	    le('sleep', '0.1'), le('sleep', '0.5'));
	const ssum = v('mcp_tool_call_duration_seconds_sum', { tool: 'sleep' });
	t.ok(ssum > 0.4 && ssum < 1.0, 'metrics: sleep\'s _sum is its calls\' time', ssum);
	// Sessions.
	t.ok(v('mcp_sessions', { transport: 'streamable_http' }) === 1 &&
	    v('mcp_sessions', { transport: 'sse' }) === 0, 'metrics: one /mcp session open, no /sse one',
	    text.split('\n').filter((l) => l.startsWith('mcp_sessions{')).join('\n'));
	t.ok(v('mcp_sessions_opened_total', { transport: 'streamable_http' }) === 2 &&
	    v('mcp_sessions_opened_total', { transport: 'sse' }) === 1,
	    'metrics: two /mcp sessions and one /sse session opened');
	t.ok(v('mcp_sessions_ended_total', { transport: 'streamable_http', reason: 'deleted' }) === 1 &&
	    v('mcp_sessions_ended_total', { transport: 'sse', reason: 'closed' }) === 1 &&
	    m.sum('mcp_sessions_ended_total') === 2,
	    'metrics: ended: one /mcp deleted, one /sse closed by its client',
	    text.split('\n').filter((l) => l.startsWith('mcp_sessions_ended')).join('\n'));
	t.ok(v('mcp_calls_in_flight') === 0, 'metrics: nothing in flight at the end');
	// HTTP, exactly as sent.
	const want = new Map();
	for (const s of sent)
		want.set(`${s.route} ${s.status}`, (want.get(`${s.route} ${s.status}`) || 0) + 1);
	const got = new Map();
	for (const s of m.samples.filter((x) => x.name === 'mcp_http_responses_total'))
		got.set(`${s.labels.route} ${s.labels.status}`, s.value);
	const norm = (mp) => JSON.stringify([...mp].sort());
	t.ok(norm(got) === norm(want), 'metrics: HTTP responses by route and status match what was sent',
	    `got ${norm(got)}`, `want ${norm(want)}`);
	const bin = sent.reduce((a, s) => a + s.in, 0);
	const bout = sent.reduce((a, s) => a + s.out, 0);
	t.ok(v('mcp_http_request_body_bytes_total') === bin,
	    `metrics: request body bytes are the ${bin} sent`, v('mcp_http_request_body_bytes_total'));
	t.ok(v('mcp_http_response_body_bytes_total') === bout,
	    `metrics: response body bytes are the ${bout} received`, v('mcp_http_response_body_bytes_total'));
	t.ok(v('mcp_http_refused_total', { limit: 'too_large' }) === 1, 'metrics: one refused as too large');
	t.ok(v('mcp_workers') >= 1 && v('mcp_workers_max') === 64 && v('mcp_queue_capacity') === 1024 &&
	    v('mcp_queue_depth') === 0, 'metrics: the pool\'s figures',
	    v('mcp_workers'), v('mcp_workers_max'), v('mcp_queue_capacity'), v('mcp_queue_depth'));
	const rss = v('process_resident_memory_bytes');
	t.ok(Math.abs(rss / 1024 - srv.rss()) < 2048, 'metrics: RSS matches /proc (within 2 MiB)', rss, srv.rss());
	t.ok(v('process_open_fds') >= 5 && v('process_open_fds') < 100, 'metrics: open fds', v('process_open_fds'));
	const start = v('process_start_time_seconds');
	t.ok(Math.abs(start - Date.now() / 1000) < 60 && v('mcp_uptime_seconds') >= 0,
	    'metrics: start time and uptime', start);
	t.ok(sid2, 'metrics: the second session is there to be counted');
}

// ---- metrics: the limits -------------------------------------------------

async function metricsLimits(t) {
	const srv = await new Server(DEMO, ['--metrics-listen', '127.0.0.1:0', '--max-per-ip', '3',
	    '--max-sessions', '1', '--request-timeout', '1', '--grace-ms', '3000']).start();
	await srv.until(() => /metrics on http:\/\/127\.0\.0\.1:(\d+)/.test(srv.stderr), 3000);
	const MP = Number(/metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(srv.stderr)[1]);
	const P = srv.port;
	// Per IP: three connections stay, two more are refused.
	const conns = [];
	for (let i = 0; i < 5; i++) {
		const c = rawConn(P);
		await c.connected;
		conns.push(c);
		await sleep(30);
	}
	await sleep(300);
	const closed = conns.filter((c) => c.closedAt !== null).length;
	t.ok(closed === 2, 'limits: two of five connections from one address are refused (--max-per-ip 3)',
	    closed);
	let { m } = await scrape(MP);
	t.ok(m.value('mcp_http_refused_total', { limit: 'per_ip' }) === 2, 'limits: refused per_ip is 2',
	    m.value('mcp_http_refused_total', { limit: 'per_ip' }));
	// Slowloris: one of them sends half a request and stalls.
	conns[0].sock.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
	await conns[0].until(() => conns[0].closedAt !== null, 4000);
	for (const c of conns)
		c.sock.destroy();
	await sleep(300);
	({ m } = await scrape(MP));
	t.ok(m.value('mcp_http_slow_closed_total') >= 1, 'limits: the stalled request is a slow close',
	    m.value('mcp_http_slow_closed_total'));
	// --max-sessions 1: a second initialize gets 503.
	const a = await post(P, INIT('a')).done();
	const b = await post(P, INIT('b')).done();
	t.ok(a.status === 200 && b.status === 503, 'limits: the second session gets 503', a.status, b.status);
	({ m } = await scrape(MP));
	t.ok(m.value('mcp_http_refused_total', { limit: 'max_sessions' }) === 1,
	    'limits: refused max_sessions is 1');
	// The metrics listener takes 64 connections at most: the rest are
	// refused, and counted as the total limit.
	const many = [];
	for (let i = 0; i < 70; i++) {
		const c = rawConn(MP);
		many.push(c);
	}
	await Promise.all(many.map((c) => c.connected));
	await sleep(400);
	const refused = many.filter((c) => c.closedAt !== null).length;
	for (const c of many)
		c.sock.destroy();
	await sleep(300);
	({ m } = await scrape(MP));
	t.ok(refused === 6 && m.value('mcp_http_refused_total', { limit: 'total' }) === 6,
	    'limits: 6 of 70 connections over the listener\'s 64 are refused, counted as total',
	    refused, m.value('mcp_http_refused_total', { limit: 'total' }));
	// Draining: a call runs, SIGTERM; the metrics listener still answers,
	// and a POST on a kept-alive connection gets 503.
	const sid = a.headers['mcp-session-id'];
	await post(P, INITIALIZED, { sid }).done();
	const agent = track(new http.Agent({ keepAlive: true, maxSockets: 1 }));
	const warm = await post(P, ping('w'), { sid, agent }).done();
	const long = post(P, call('long', 'sleep', { ms: 1500 }), { sid });
	await sleep(200);
	srv.kill('SIGTERM');
	srv.expectExit = true;
	await sleep(200);
	const late = await post(P, ping('late'), { sid, agent }).done();
	({ m } = await scrape(MP));
	t.ok(warm.status === 200 && late.status === 503 &&
	    m.value('mcp_http_refused_total', { limit: 'draining' }) === 1,
	    'limits: while draining, a request gets 503, counted as draining', late.status,
	    m.value('mcp_http_refused_total', { limit: 'draining' }));
	await long.done(5000);
	t.ok(textOf(long.answer('long')) === 'slept 1500 ms', 'limits: the call in flight finishes',
	    long.summary());
	const e = await srv.exited;
	t.ok(e.code === 0, 'limits: exit 0', show(e));
}

// ---- metrics: clients that leave at once -----------------------------------

async function metricsLeave(t) {
	const srv = await new Server(DEMO, ['--metrics-listen', '127.0.0.1:0']).start();
	await srv.until(() => /metrics on http:\/\/127\.0\.0\.1:(\d+)/.test(srv.stderr), 3000);
	const MP = Number(/metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(srv.stderr)[1]);
	const N = 300;
	const conns = [];
	for (let i = 0; i < N; i++) {
		const c = rawConn(srv.port);
		c.sock.on('connect', () => c.sock.write(`GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
		conns.push(c);
	}
	await Promise.all(conns.map((c) => c.until(() => c.data.includes('sessionId='), 10000)));
	let { m } = await scrape(MP);
	t.ok(m.value('mcp_sessions', { transport: 'sse' }) === N, `leave: ${N} /sse sessions open`,
	    m.value('mcp_sessions', { transport: 'sse' }));
	for (const c of conns)
		c.sock.destroy();
	await sleep(1000);
	({ m } = await scrape(MP));
	t.ok(m.value('mcp_sessions', { transport: 'sse' }) === 0 &&
	    m.value('mcp_sessions_opened_total', { transport: 'sse' }) === N &&
	    m.value('mcp_sessions_ended_total', { transport: 'sse', reason: 'closed' }) === N,
	    `leave: all ${N} leaving at once are counted as ended by their clients within a second`,
	    m.value('mcp_sessions', { transport: 'sse' }),
	    m.value('mcp_sessions_ended_total', { transport: 'sse', reason: 'closed' }));
	t.ok(m.value('mcp_http_responses_total', { route: '/sse', status: '200' }) === N,
	    'leave: each stream counted as one 200 on /sse');
}

// ---- metrics beside stdio, and who may read them --------------------------

async function metricsStdio(t) {
	const c = new Child(DEMO, ['--metrics-listen', '127.0.0.1:0', '--workers', '2'], ['pipe', 'pipe', 'pipe']);
	await c.until(() => /metrics on http:\/\/127\.0\.0\.1:(\d+)/.test(c.stderr), 5000);
	const MP = Number(/metrics on http:\/\/127\.0\.0\.1:(\d+)/.exec(c.stderr)?.[1]);
	t.ok(MP > 0, 'stdio: --metrics-listen logs its address', c.stderr.slice(0, 300));
	const answers = new Map();
	eachLine(c.proc.stdout, (l) => {
		try {
			const msg = JSON.parse(l);
			answers.set(JSON.stringify(msg.id), msg);
		} catch { /* not ours */ }
		c._wake();
	});
	const send = (m) => c.proc.stdin.write(`${JSON.stringify(m)}\n`);
	send(INIT(1, '2025-06-18'));
	send(INITIALIZED);
	for (let i = 0; i < 10; i++)
		send(call(`c${i}`, 'add', { a: i, b: 1 }));
	send(ping('p'));
	await c.until(() => answers.size === 12, 5000);
	t.ok(answers.size === 12, 'stdio: every request answered', answers.size);
	const { m } = await scrape(MP);
	t.ok(m.value('mcp_sessions', { transport: 'stdio' }) === 1 &&
	    m.value('mcp_sessions_opened_total', { transport: 'stdio' }) === 1,
	    'stdio: the stdio session is counted, open');
	t.ok(m.value('mcp_requests_total', { method: 'tools/call', outcome: 'ok' }) === 10 &&
	    m.value('mcp_tool_calls_total', { tool: 'add', outcome: 'ok' }) === 10 &&
	    m.value('mcp_requests_total', { method: 'ping', outcome: 'ok' }) === 1,
	    'stdio: 10 add calls and a ping counted');
	t.ok(m.value('mcp_http_responses_total', { route: '/metrics', status: '200' }) === undefined,
	    'stdio: the first scrape counts no scrape before it');
	const evil = await fetchText(MP, '/metrics', { Host: 'evil.example' });
	t.ok(evil.status === 403, 'stdio: /metrics answers 403 to a foreign Host (DNS rebinding)', evil.status);
	const other = await fetchText(MP, '/mcp');
	t.ok(other.status === 404, 'stdio: the metrics listener serves nothing else', other.status);
	const hz = await fetchText(MP, '/healthz');
	t.ok(hz.status === 200, 'stdio: ... but /healthz', hz.status);
	c.proc.stdin.end();
	const e = await Promise.race([c.exited, sleep(5000).then(() => null)]);
	t.ok(e && e.code === 0, 'stdio: end of input ends the server, metrics listener and all', show(e));

	// On the main address, /metrics is behind the bearer token.
	const dir = mkdtempSync(join(tmpdir(), 'libmcp-svc-'));
	try {
		writeFileSync(join(dir, 'token'), 'sekrit\n');
		const srv = await new Server(DEMO, ['--metrics', '--auth-token-file', join(dir, 'token')]).start();
		const no = await fetchText(srv.port, '/metrics');
		const yes = await fetchText(srv.port, '/metrics', { Authorization: 'Bearer sekrit' });
		t.ok(no.status === 401 && yes.status === 200, 'auth: /metrics needs the token on the main address',
		    no.status, yes.status);
		const after = parse(yes.text);
		t.ok(after.value('mcp_http_responses_total', { route: '/metrics', status: '401' }) === 1,
		    'auth: the 401 is counted under the route it asked for, /metrics');
		// A client that leaves before the answer's headers: 499.
		const leaver = await new Server(DEMO, ['--metrics', '--stream-after-ms', '1000']).start();
		const lsid = await open(leaver);
		const gone = post(leaver.port, call('gone', 'sleep', { ms: 3000 }), { sid: lsid });
		await sleep(150);
		gone.close();
		await sleep(300);
		const lm = (await scrape(leaver.port)).m;
		t.ok(lm.value('mcp_http_responses_total', { route: '/mcp', status: '499' }) === 1 &&
		    lm.value('mcp_requests_total', { method: 'tools/call', outcome: 'cancelled' }) === 1,
		    'leave: a POST whose client left before its headers is a 499, and its call cancelled',
		    lm.value('mcp_http_responses_total', { route: '/mcp', status: '499' }));
		const plain = await new Server(DEMO, []).start();
		const off = await fetchText(plain.port, '/metrics');
		t.ok(off.status === 404, 'auth: without --metrics there is no /metrics', off.status);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

// ---- JSON logs by request id, behind nginx -------------------------------

function nginxBin() {
	for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx'])
		if (existsSync(p))
			return p;
	return null;
}

// nginx on docs/nginx.conf, in DIR, in front of PORT: its port.
async function startNginx(dir, port) {
	const free = await new Promise((res) => {
		const s = http.createServer().listen(0, '127.0.0.1', () => {
			const p = s.address().port;
			s.close(() => res(p));
		});
	});
	const block = readFileSync('docs/nginx.conf', 'utf8')
	    .replace(/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${free};`)
	    .replace(/^(\s*)server 127\.0\.0\.1:8080;/m, `$1server 127.0.0.1:${port};`);
	if (!block.includes(`listen 127.0.0.1:${free};`) || !block.includes(`server 127.0.0.1:${port};`))
		throw new Error('docs/nginx.conf: listen or server line not found');
	writeFileSync(join(dir, 'libmcp.conf'), block);
	writeFileSync(join(dir, 'nginx.conf'), `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
    log_format rid '$request_id $status "$request"';
    access_log ${dir}/access.log rid;
    client_body_temp_path ${dir}/body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/libmcp.conf;
}
`);
	const ng = new Child(nginxBin(), ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')],
	    ['ignore', 'ignore', 'pipe']);
	for (let i = 0; i < 50; i++) {
		const r = await fetchText(free, '/healthz', { Host: 'mcp.example.com' });
		if (r.status === 200)
			return { ng, port: free };
		await sleep(100);
	}
	throw new Error(`nginx did not start: ${ng.stderr}`);
}

async function jsonLogs(t) {
	if (nginxBin() === null) {
		t.ok(false, 'logs: nginx is installed (tools/bootstrap.sh test)');
		return;
	}
	const dir = mkdtempSync(join(tmpdir(), 'libmcp-logs-'));
	try {
		const srv = await new Server(DEMO, ['--log-format', 'json', '--access-log', '--log-level', 'debug',
		    '--allow-host', 'mcp.example.com', '--stream-after-ms', '50']).start();
		const { port: NP } = await startNginx(dir, srv.port);
		const H = { Host: 'mcp.example.com' };
		const i = await post(NP, INIT('init', '2025-11-25'), { headers: H }).done();
		const sid = i.headers['mcp-session-id'];
		await post(NP, INITIALIZED, { sid, headers: H }).done();
		const s = await post(NP, call('s1', 'sleep', { ms: 120 }), { sid, headers: H }).done();
		const e = await post(NP, call('e1', 'echo', { text: 'hi' }), { sid, headers: H }).done();
		// A client's bytes in what gets logged: a tool name with quotes,
		// a newline, control bytes, and one far over the line bound.
		const nasty = 'a"b\\c\nd\u0001e\u001b[31m\u2028f';
		const n1 = await post(NP, call('n1', nasty, {}), { sid, headers: H }).done();
		await post(NP, { jsonrpc: '2.0', method: nasty }, { sid, headers: H }).done();
		const n2 = await post(NP, call('n2', 'x'.repeat(100000), {}), { sid, headers: H }).done();
		t.ok(textOf(s.answer('s1')) === 'slept 120 ms' && textOf(e.answer('e1')) === 'hi' &&
		    isErr(n1.answer('n1'), -32602) && n2.status !== 0, 'logs: the calls through nginx are answered',
		    s.summary(), n1.summary());
		const ids = [i, s, e, n1].map((x) => x.headers['x-request-id']);
		t.ok(ids.every((x) => /^[0-9a-f]{32}$/.test(x || '')) && new Set(ids).size === 4,
		    'logs: each response carries nginx\'s $request_id (32 hex digits), one per request', show(ids));
		// A line far over the bound, of bytes that each take six to
		// escape: the URL of a refused request (logged at info).
		const longUrl = `/${'%01'.repeat(1500)}`;
		const lx = await new Exchange(srv.port, 'GET', longUrl, { headers: { Host: 'evil.example' } }).done();
		await sleep(300);
		const lines = srv.stderr.split('\n').filter((l) => l !== '');
		const bad = lines.filter((l) => { try { JSON.parse(l); return false; } catch { return true; } });
		t.ok(lines.length > 10 && bad.length === 0, `logs: each of ${lines.length} lines is one JSON object`,
		    ...bad.slice(0, 3));
		const recs = lines.map((l) => { try { return JSON.parse(l); } catch { return {}; } });
		t.ok(lines.every((l) => Buffer.byteLength(l) < 4096), 'logs: every line is under 4 KiB',
		    Math.max(...lines.map((l) => Buffer.byteLength(l))));
		const lrid = lx.headers['x-request-id'];
		const cut = recs.find((r) => r.request === lrid && /^http: 403 GET \//.test(r.msg || ''));
		t.ok(lx.status === 403 && cut && cut.msg.length > 500 && cut.msg.length < 4096 &&
		    /^\/\u0001+$/.test(cut.msg.slice(14, 600)),
		    'logs: a line cut at the bound is still one JSON object, with its tags, its bytes escaped',
		    lx.status, show(cut).slice(0, 200));
		t.ok(recs.every((r) => typeof r.time === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(r.time) &&
		    ['err', 'warn', 'notice', 'info', 'debug'].includes(r.level) && typeof r.msg === 'string' &&
		    r.pid === srv.pid), 'logs: each has time, level, msg and pid');
		// The sleep call: its access line, the callback's own line, its end.
		const rid = s.headers['x-request-id'];
		const of = recs.filter((r) => r.request === rid);
		const access = of.find((r) => r.route === '/mcp' && r.status === 200 && r.method === 'POST');
		const cb = of.find((r) => /sleeping 120 ms/.test(r.msg));
		const end = of.find((r) => r.outcome === 'ok' && r.tool === 'sleep');
		t.ok(access && typeof access.duration_ms === 'number' && access.bytes_in > 0 && access.bytes_out > 0,
		    'logs: the access line of the call carries its request id, duration and bytes', show(of));
		t.ok(cb && cb.tool === 'sleep' && cb.session === sid && cb.id === 's1',
		    'logs: the callback\'s mcp_log line carries the request id, tool, session and JSON-RPC id', show(cb));
		t.ok(end && end.duration_ms >= 100 && end.session === sid && end.id === 's1',
		    'logs: the call\'s end line has its duration and outcome', show(end));
		t.ok(of.every((r) => r.session === undefined || r.session === sid),
		    'logs: the request\'s lines name no other session');
		const irid = i.headers['x-request-id'];
		const iacc = recs.find((r) => r.request === irid && r.route === '/mcp');
		t.ok(iacc && iacc.session === sid, 'logs: the initialize access line names the session it opened',
		    show(iacc));
		// Hostile bytes, escaped, never raw.
		const raw = srv.stderr;
		t.ok(!raw.includes('\u0001') && !raw.includes('\u001b') && !raw.includes('d\u0001'),
		    'logs: no control byte from a client is written raw');
		const nline = recs.find((r) => /^ignoring notification /.test(r.msg || ''));
		t.ok(nline && nline.msg === `ignoring notification ${nasty}`,
		    'logs: a client\'s method name, logged, is escaped as JSON and reads back as sent', show(nline));
		// nginx's access log has the same ids.
		const nlog = readFileSync(join(dir, 'access.log'), 'utf8');
		t.ok(ids.every((x) => nlog.includes(`${x} `)), 'logs: nginx\'s access log shows the same ids',
		    nlog.slice(0, 400));
		// Text format: one line each, bounded, escaped.
		const tsrv = await new Server(DEMO, ['--access-log']).start();
		const ok1 = await post(tsrv.port, INIT('x'), { headers: { 'X-Request-Id': 'bad id;"x"' } }).done();
		const ok2 = await post(tsrv.port, INIT('y'), { headers: { 'X-Request-Id': 'trace-42' } }).done();
		await sleep(200);
		const tl = tsrv.stderr.split('\n').filter((l) => /POST \/mcp/.test(l));
		t.ok(tl.length === 2 && tl[1].includes('[request trace-42]') && ok2.headers['x-request-id'] === 'trace-42' &&
		    /^[0-9a-f]{20}$/.test(ok1.headers['x-request-id'] || '') && !tsrv.stderr.includes('bad id'),
		    'logs: text access lines; a usable X-Request-Id is kept, a bad one replaced by one of ours',
		    ok1.headers['x-request-id'], ...tl);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

// ---- socket activation, as systemd does it -------------------------------

class SdRun extends Child {
	constructor(args, sdargs = []) {
		super(SDRUN, [...sdargs, '--', DEMO, ...args], ['ignore', 'pipe', 'pipe']);
		this.lines = [];
		eachLine(this.proc.stdout, (l) => {
			this.lines.push({ l, t: Date.now() });
			this._wake();
		});
	}

	get port() {
		const m = this.lines.find((x) => /^port \d+$/.test(x.l));
		return m ? Number(m.l.split(' ')[1]) : null;
	}

	pids() {
		return this.lines.filter((x) => x.l.startsWith('start ')).map((x) => Number(x.l.split(' ')[1]));
	}

	notes(pid, what) {
		return this.lines.filter((x) => x.l.startsWith(`notify ${pid} `) && x.l.includes(what));
	}
}

async function socketActivation(t) {
	if (!existsSync(SDRUN)) {
		t.ok(false, `activation: ${SDRUN} is built`);
		return;
	}
	const sd = new SdRun(['--http', 'systemd', '--grace-ms', '5000'], ['-w', '200000']);
	await sd.until(() => sd.port !== null && sd.pids().length === 1, 5000);
	const [pid1] = sd.pids();
	await sd.until(() => sd.notes(pid1, 'READY=1').length > 0, 5000);
	t.ok(sd.notes(pid1, 'READY=1').length === 1, 'activation: READY=1 from the server\'s own pid',
	    ...sd.lines.map((x) => x.l));
	const P = sd.port;
	const hz = await fetchText(P, '/healthz');
	t.ok(hz.status === 200, 'activation: the server answers on the socket systemd passed', hz.status);
	t.ok(/listening on http:\/\/127\.0\.0\.1:(\d+)\/sse/.exec(sd.stderr)?.[1] === String(P),
	    'activation: it logs the passed socket\'s address', sd.stderr.slice(0, 300));
	await sleep(700);
	const wd = sd.notes(pid1, 'WATCHDOG=1').length;
	t.ok(wd >= 4 && wd <= 12, 'activation: WATCHDOG=1 every WATCHDOG_USEC/2 (100 ms)', wd);
	const sid = await open({ port: P, tail: () => sd.stderr });
	// Restart under load: fresh connections all the while, and a call in
	// flight on the old process.
	const inflight = post(P, call('r', 'sleep', { ms: 800 }), { sid });
	await sleep(100);
	let stop = false;
	const results = [];
	const load = (async () => {
		while (!stop) {
			const r = await fetchText(P, '/healthz');
			results.push(r.status);
		}
	})();
	await sleep(200);
	sd.proc.kill('SIGUSR1');
	await sd.until(() => sd.pids().length === 2, 8000);
	const pid2 = sd.pids()[1];
	await sd.until(() => sd.notes(pid2, 'READY=1').length > 0, 5000);
	await sleep(300);
	stop = true;
	await load;
	await inflight.done(5000);
	t.ok(textOf(inflight.answer('r')) === 'slept 800 ms', 'activation: the call in flight at the restart is answered',
	    inflight.summary());
	t.ok(sd.notes(pid1, 'STOPPING=1').length === 1, 'activation: STOPPING=1 when the old one drains');
	t.ok(sd.lines.some((x) => x.l === `exit ${pid1} 0`), 'activation: the old one exits 0',
	    ...sd.lines.map((x) => x.l).slice(-6));
	const bad = results.filter((s) => s !== 200);
	t.ok(results.length > 20 && bad.length === 0,
	    `activation: no connection refused or lost across the restart (${results.length} requests)`,
	    show(bad.slice(0, 10)));
	const after = await post(P, INIT('again')).done();
	t.ok(after.status === 200 && pid2 !== pid1, 'activation: the new process serves', after.status);
	sd.proc.kill('SIGTERM');
	await sd.exited;
	t.ok(sd.lines.some((x) => x.l === `exit ${pid2} 0`), 'activation: stopped, it exits 0');

	const mnone = spawnSync(DEMO, ['--metrics-listen', 'systemd'], { encoding: 'utf8', timeout: 5000,
	    input: '', env: { PATH: process.env.PATH } });
	t.ok(mnone.status !== 0 && /--metrics-listen systemd: no socket was passed/.test(mnone.stderr),
	    '--metrics-listen systemd without a passed socket names that option', mnone.status, mnone.stderr);
	// No socket passed: a clear error, not a crash.
	const none = spawnSync(DEMO, ['--http', 'systemd'], { encoding: 'utf8', timeout: 5000, env: { PATH: process.env.PATH } });
	t.ok(none.status !== 0 && none.status !== null && /no socket was passed/.test(none.stderr),
	    '--http systemd without a passed socket: a clear error', none.status, none.stderr);
}

// ---- SIGHUP ----------------------------------------------------------------

async function reload(t) {
	const dir = mkdtempSync(join(tmpdir(), 'libmcp-hup-'));
	try {
		const tok = join(dir, 'token');
		const log = join(dir, 'server.log');
		writeFileSync(tok, 'old-token\n');
		const child = new Child(DEMO, ['--http', '127.0.0.1:0', '--auth-token-file', tok, '--log-file', log,
		    '--access-log'], ['ignore', 'ignore', 'pipe']);
		let port = null;
		for (let i = 0; i < 50 && port === null; i++) {
			await sleep(100);
			const m = existsSync(log) && /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(readFileSync(log, 'utf8'));
			port = m ? Number(m[1]) : null;
		}
		t.ok(port !== null && child.stderr === '', 'reload: with --log-file the log goes to the file, not stderr',
		    child.stderr);
		const A = { Authorization: 'Bearer old-token' };
		const B = { Authorization: 'Bearer new-token' };
		const sid = await open({ port, tail: () => '' }, { headers: A });
		// Open connections: an /sse stream and a kept-alive agent.
		const sse = get(port, { path: '/sse', headers: A });
		await sse.until(() => sse.events().length > 0, 5000);
		const ep = sse.events()[0].data;
		const agent = track(new http.Agent({ keepAlive: true, maxSockets: 1 }));
		const k1 = await post(port, ping('k1'), { sid, headers: A, agent }).done();
		const sock1 = k1.localPort;
		writeFileSync(tok, 'new-token\n');
		renameSync(log, `${log}.1`);
		child.kill('SIGHUP');
		await sleep(300);
		const a = await post(port, ping('a'), { sid, headers: A }).done();
		const b = await post(port, ping('b'), { sid, headers: B }).done();
		t.ok(a.status === 401 && b.status === 200, 'reload: after SIGHUP the old token gets 401, the new one 200',
		    a.status, b.status);
		const k2 = await post(port, ping('k2'), { sid, headers: B, agent }).done();
		t.ok(k2.status === 200 && k2.localPort === sock1, 'reload: the kept-alive connection is the same one',
		    sock1, k2.localPort);
		const pm = await post(port, ping('sp'), { path: ep, accept: null, headers: B }).done();
		await sse.until(() => sse.msgs.some((m) => m.id === 'sp'), 3000);
		t.ok(pm.status === 202 && !sse.ended && sse.msgs.some((m) => isResult(m, 'sp')),
		    'reload: the /sse stream opened with the old token is still open and gets its answer', pm.status);
		t.ok(existsSync(log) && /SIGHUP: auth token re-read/.test(readFileSync(log, 'utf8')) &&
		    /listening on/.test(readFileSync(`${log}.1`, 'utf8')),
		    'reload: --log-file reopened: new lines in a new file, the old ones in the rotated one');
		// A bad file keeps the token in use.
		writeFileSync(tok, '\n');
		child.kill('SIGHUP');
		await sleep(300);
		const c = await post(port, ping('c'), { sid, headers: B }).done();
		t.ok(c.status === 200 && /keeping the auth token in use/.test(readFileSync(log, 'utf8')),
		    'reload: an empty token file is refused, the token in use stays', c.status);
		t.ok(child.alive(), 'reload: the server runs on after both reloads');
		sse.close();
		child.kill('SIGTERM');
		const e = await child.exited;
		t.ok(e.code === 0, 'reload: exit 0', show(e));
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

async function main() {
	await runGroups([
		['metrics exact', metricsExact, 40000], ['metrics limits', metricsLimits, 40000],
		['metrics leave', metricsLeave],
		['metrics stdio', metricsStdio], ['json logs', jsonLogs], ['activation', socketActivation, 40000],
		['reload', reload],
	], { run: group, times: 'SERVICE_TIMES' });
	killAll();
	process.exit(process.exitCode);
}

main();
