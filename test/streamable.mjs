// streamable.mjs: the Streamable HTTP transport at /mcp, over raw HTTP
// (node:http): every status of POST, GET and DELETE, the framing of the
// answers (a whole SSE body with Content-Length, or a live chunked
// stream with its priming event, keepalives and ids), --json-response,
// --stateless, the standalone GET stream and its list_changed events,
// replays after Last-Event-ID (test_reconnection of
// build/conformance-server, a dropped standalone stream of
// build/feat-server, and resumptions that take over a stream the server
// still holds), --event-log, a session flood against
// --max-sessions, DELETE, --session-timeout, Host/Origin and bearer
// checks, and SIGTERM with calls in flight. Prints TAP; exits 1 when an
// assertion fails. Node 20, no npm packages; loopback traffic only. Run
// from the repository root (test/streamable.sh does).
//
//   node test/streamable.mjs [NAME ...]	only the groups whose names contain NAME
//
// STREAMABLE_TIMES=1 in the environment adds the time of each group.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { ok, runGroups, showJson as show, sleep, within } from './node/harness.mjs';
import {
	ACCEPT, CONF, DEMO, Exchange, FEAT, INIT, INITIALIZED, SID, VERSIONS, ZERO_SID, call, del, get, group, idsOf,
	isErr, isJsonType, isResult, killAll, open, ping, post, rawConn, sized, startServer, textOf, track,
} from './node/http-client.mjs';

// ---- the tests -------------------------------------------------------------

// Initialize, and answers that are ready at once: one whole SSE body.
async function wholeBodies(t) {
	const srv = await startServer(['--keepalive', '1']);
	const port = srv.port;
	const agent = track(new http.Agent({ keepAlive: true, maxSockets: 1 }));
	const r = await post(port, INIT(1), { agent }).done();
	const sid = r.headers['mcp-session-id'];
	t.ok(r.status === 200, 'POST /mcp initialize without Mcp-Session-Id: 200', r.summary(), srv.tail());
	t.ok(SID.test(sid || ''), 'initialize: the answer carries Mcp-Session-Id, 32 lower-case hex digits', show(sid));
	t.ok(r.sse && r.headers['content-length'] === String(Buffer.byteLength(r.raw)) &&
	    r.headers['transfer-encoding'] === undefined && r.complete,
	    'initialize: a whole text/event-stream body with Content-Length, not chunked', r.summary());
	// A 2025-11-25 session: the priming event first, then the answer.
	const WHOLE = /^id: (\d+)-0\nretry: 1000\ndata: \n\nevent: message\nid: (\d+)-1\ndata: ([^\n]*)\n\n$/;
	const whole = (raw) => {
		const w = WHOLE.exec(raw);
		return w && w[1] === w[2] ? [w[0], w[1], w[3]] : null;
	};
	const m = whole(r.raw);
	let res;
	try { res = m && JSON.parse(m[2]); } catch { res = undefined; }
	t.ok(m && isResult(res, 1), 'initialize: the body is exactly the priming event "id: <route>-0\\nretry: 1000\\n' +
	    'data: \\n\\n", then "event: message\\nid: <route>-1\\ndata: <json>\\n\\n"', show(r.raw));
	t.ok(res && res.result.protocolVersion === '2025-11-25' && res.result.serverInfo.name === 'mcp-demo',
	    'initialize: protocolVersion 2025-11-25, serverInfo mcp-demo', show(res));
	t.ok(!/close/i.test(r.headers.connection || ''), 'initialize: the connection is kept alive (no Connection: close)',
	    show(r.headers));
	const r2 = await post(port, INIT(2), { agent }).done();
	t.ok(r2.status === 200 && SID.test(r2.headers['mcp-session-id'] || '') && r2.headers['mcp-session-id'] !== sid,
	    'a second initialize: another session, another id', r2.summary());
	t.ok(r2.localPort === r.localPort, 'the second POST went over the same kept-alive connection',
	    `${r.localPort} then ${r2.localPort}`);
	let x = await post(port, INITIALIZED, { sid, agent }).done();
	t.ok(x.status === 202 && x.raw === '', 'notifications/initialized: 202, empty body', x.summary());
	x = await post(port, { jsonrpc: '2.0', id: 'client-side', result: {} }, { sid, agent }).done();
	t.ok(x.status === 202 && x.raw === '', 'a JSON-RPC response (result): 202, empty body', x.summary());
	x = await post(port, { jsonrpc: '2.0', id: 'client-side-2', error: { code: -1, message: 'no' } }, { sid, agent }).done();
	t.ok(x.status === 202 && x.raw === '', 'a JSON-RPC response (error): 202, empty body', x.summary());
	const e1 = await post(port, call('e1', 'echo', { text: 'one' }), { sid, agent }).done();
	const e2 = await post(port, call('e2', 'echo', { text: 'two' }), { sid, agent }).done();
	const m1 = whole(e1.raw);
	const m2 = whole(e2.raw);
	t.ok(e1.status === 200 && m1 && textOf(JSON.parse(m1[2])) === 'one' && e1.headers['content-length'],
	    'tools/call echo: 200, a whole body: the priming event and the result', e1.summary());
	t.ok(m1 && m2 && Number(m2[1]) > Number(m1[1]) && Number(m1[1]) > Number(m[1]),
	    'each POST has its own route: the ids\' route numbers grow (initialize, echo, echo)',
	    `${m && m[1]} ${m1 && m1[1]} ${m2 && m2[1]}`);
	t.ok(e2.localPort === r.localPort, 'all of these went over one kept-alive connection', `${e2.localPort}`);
	const nt = await post(port, call('nt', 'no_such_tool', {}), { sid, agent }).done();
	const em = /^event: message\ndata: ([^\n]*)\n\n$/.exec(nt.raw);
	t.ok(nt.status === 200 && em && isErr(JSON.parse(em[1]), -32602),
	    'an error answer sent whole: exactly "event: message\\ndata: <json>\\n\\n", no priming event, no id',
	    nt.summary());
	const p = await post(port, ping('p'), { sid, agent }).done();
	t.ok(p.status === 200 && isResult(p.answer('p'), 'p') && Object.keys(p.answer('p').result).length === 0,
	    'ping: 200, an empty result', p.summary());
	// The same listener serves the legacy transport.
	const s = get(port, { path: '/sse' });
	await s.until(() => s.events().length > 0 || s.ended, 3000);
	t.ok(s.status === 200 && s.events()[0] && s.events()[0].event === 'endpoint' &&
	    /^\/messages\?sessionId=[0-9a-f]{32}$/.test(s.events()[0].data),
	    'the same port serves the legacy GET /sse (its endpoint event)', s.summary());
	s.close();
	agent.destroy();
}

// Answers that are not ready at once: a live stream.
async function liveStreams(t) {
	const srv = await startServer(['--keepalive', '1']);
	const port = srv.port;
	const sid = await open(srv);
	const x = await post(port, call('p', 'sleep', { ms: 350 }, 'tok'), { sid }).done();
	t.ok(x.status === 200 && x.sse && x.headers['transfer-encoding'] === 'chunked' &&
	    x.headers['content-length'] === undefined,
	    'sleep 350 with a progressToken: 200, a chunked text/event-stream', x.summary());
	t.ok(/no-cache/.test(x.headers['cache-control'] || ''), 'the stream has Cache-Control: no-cache',
	    show(x.headers));
	const pm = /^id: (\d+)-0\nretry: 1000\ndata: \n\n/.exec(x.raw);
	t.ok(pm, 'a 2025-11-25 session: the stream starts with the priming event "id: <route>-0\\nretry: 1000\\ndata: \\n\\n"',
	    show(x.raw.slice(0, 200)));
	const evs = x.events();
	const route = pm ? Number(pm[1]) : -1;
	const ids = idsOf(x);
	t.ok(evs.length === 5 && ids.every(([r2, s], k) => r2 === route && s === k),
	    'its events have the ids <route>-0 to <route>-4, in order', show(evs.map((e) => e.other.id)));
	const body = evs.slice(1);
	t.ok(body.every((e) => e.fields.length === 3 && e.fields[0] === 'event: message' &&
	    /^id: \d+-\d+$/.test(e.fields[1]) && e.fields[2].startsWith('data: ')),
	    'each event after the priming is "event: message", "id: ...", one "data: " line', show(body.map((e) => e.fields)));
	const prog = x.msgs.filter((mm) => mm.method === 'notifications/progress');
	t.ok(prog.length === 3 && prog.every((mm, k) => mm.params.progressToken === 'tok' &&
	    mm.params.progress === 100 * (k + 1) && mm.params.total === 350),
	    'three progress notifications (100, 200, 300 of 350) come first', show(x.msgs));
	t.ok(x.msgs.length === 4 && textOf(x.msgs[3]) === 'slept 350 ms' && x.msgs[3].id === 'p',
	    'then the result, last', show(x.msgs));
	t.ok(x.complete, 'then the stream ends (the response is complete)', `ended ${x.ended} complete ${x.complete}`);
	t.ok(prog.length > 0 && evs[1].tFirst < evs[4].tFirst - 150,
	    'the progress events arrived as they were made, not with the result',
	    show(evs.map((e) => e.tFirst)));

	// 2025-06-18: no priming event.
	const old = await open(srv, { version: '2025-06-18' });
	const y = await post(port, call('q', 'sleep', { ms: 250 }, 7), { sid: old }).done();
	t.ok(y.status === 200 && y.sse && y.events().length === 3 && y.msgs[0].method === 'notifications/progress' &&
	    !/^retry:/m.test(y.raw) && textOf(y.msgs[2]) === 'slept 250 ms',
	    'a 2025-06-18 session: no priming event, no retry field; progress, progress, result', show(y.raw));

	// Not answered within --stream-after-ms (200): a stream, primed at
	// once with an event id to resume by, then keepalives.
	const z = post(port, call('slow', 'sleep', { ms: 2600 }), { sid });
	await z.head(5000);
	t.ok(z.status === 200 && z.sse && z.headers['transfer-encoding'] === 'chunked' &&
	    z.tHeaders >= 150 && z.tHeaders < 1000,
	    'sleep 2600, no notes: the headers come after --stream-after-ms (200 ms), as a chunked stream',
	    `${z.tHeaders} ms ${z.summary()}`);
	await z.until(() => z.items.length > 0 || z.ended, 3000);
	t.ok(z.items[0] && z.items[0].type === 'event' && /^\d+-0$/.test(z.items[0].other.id || '') &&
	    z.items[0].tFirst < 1000,
	    'that stream\'s priming event, with its event id, reaches the client within 1 s of the POST',
	    show(z.items[0]));
	await z.done(6000);
	const zc = z.comments();
	t.ok(/^id: \d+-0\nretry: 1000\ndata: \n\n/.test(z.raw), 'that stream starts with the priming event',
	    show(z.raw.slice(0, 100)));
	t.ok(zc.length >= 1 && zc.every((c) => c.line === ': keepalive'),
	    'then ": keepalive" comments while the call runs', show(z.raw));
	t.ok(z.complete && z.msgs.length === 1 && textOf(z.msgs[0]) === 'slept 2600 ms' && z.endedAt >= 2500,
	    'then the result, and the stream ends', z.summary());

	// A POST still waiting (--stream-after-ms 3000): its route cannot be
	// resumed yet.
	const w = await startServer(['--keepalive', '1', '--stream-after-ms', '3000']);
	const wsid = await open(w);
	const wz = post(w.port, call('slow', 'sleep', { ms: 1500 }), { sid: wsid });
	await sleep(200);
	const wr = await get(w.port, { sid: wsid, last: '3-0' }).done(3000);
	t.ok(wz.status === null && wr.status === 409,
	    'a GET with Last-Event-ID naming a POST that is still waiting for its answer: 409', wr.summary());
	await wz.done(5000);
	t.ok(wz.status === 200 && wz.headers['content-length'] && textOf(wz.answer('slow')) === 'slept 1500 ms',
	    '--stream-after-ms 3000: a 1.5 s call still gets a whole body', wz.summary());

	// 20 at once, on one session.
	const xs = Array.from({ length: 20 }, (_, k) =>
	    post(port, k % 2 ? call(k, 'echo', { text: `n${k}` }) : call(k, 'sleep', { ms: 150 }), { sid }));
	await Promise.all(xs.map((e) => e.done()));
	const good = xs.filter((e, k) => e.status === 200 &&
	    textOf(e.answer(k)) === (k % 2 ? `n${k}` : 'slept 150 ms') && e.messages().length === 1);
	t.ok(good.length === 20, '20 concurrent POSTs on one session: each gets its own answer, alone',
	    show(xs.filter((e) => !good.includes(e)).map((e) => e.summary()).slice(0, 2)));
}

async function statuses(t) {
	const srv = await startServer(['--max-message', '2048']);
	const port = srv.port;
	const sid = await open(srv, { version: '2025-06-18' });
	const pingWith = (opts, id = 'a') => post(port, ping(id), { sid, ...opts }).done();

	for (const a of [null, 'application/json', 'text/event-stream', 'text/html, application/xml',
	    'application/json, text/html']) {
		const r = await pingWith({ accept: a });
		t.ok(r.status === 406 && isErr(r.json(), r.json()?.error?.code),
		    `POST with Accept ${a === null ? 'absent' : `"${a}"`}: 406 with a JSON-RPC error`, r.summary());
	}
	for (const a of ['text/event-stream, application/json', 'application/json,text/event-stream',
	    '*/*', 'application/*, text/*', 'text/event-stream;q=0.9, application/json;q=0.5',
	    'application/json, */*']) {
		const r = await pingWith({ accept: a });
		t.ok(r.status === 200 && isResult(r.answer('a'), 'a'), `POST with Accept "${a}": 200 and answered`, r.summary());
	}
	let r = await pingWith({ ctype: 'text/plain' });
	t.ok(r.status === 415 && r.json()?.error, 'Content-Type: text/plain: 415 with a JSON-RPC error', r.summary());
	r = await pingWith({ ctype: null });
	t.ok(r.status === 415, 'no Content-Type: 415', r.summary());
	r = await pingWith({ ctype: 'application/json; charset=utf-8' });
	t.ok(r.status === 200 && r.answer('a'), 'Content-Type: application/json; charset=utf-8: 200', r.summary());

	r = await post(port, sized('fit', 2048), { sid }).done();
	t.ok(r.status === 200 && textOf(r.answer('fit')) !== undefined, '--max-message 2048: a 2048-byte POST is answered',
	    r.summary());
	r = await post(port, sized('big', 2049), { sid }).done();
	t.ok(r.status === 413 && r.json()?.error, '--max-message 2048: a 2049-byte POST gets 413 with a JSON-RPC error',
	    r.summary());

	r = await post(port, ping('nosid')).done();
	t.ok(r.status === 400 && r.json()?.error && !r.headers['mcp-session-id'],
	    'a ping without Mcp-Session-Id: 400 with a JSON-RPC error', r.summary());
	r = await post(port, INITIALIZED).done();
	t.ok(r.status === 400, 'a notification without Mcp-Session-Id: 400', r.summary());
	r = await post(port, ping('zero'), { sid: ZERO_SID }).done();
	t.ok(r.status === 404 && isErr(r.json(), -32001), 'an unknown Mcp-Session-Id: 404, JSON-RPC error -32001',
	    r.summary());
	r = await post(port, ping('short'), { sid: 'abc' }).done();
	t.ok(r.status === 404 && isErr(r.json(), -32001), 'a malformed Mcp-Session-Id (abc): 404, -32001', r.summary());

	r = await post(port, { jsonrpc: '2.0', id: 'bad-init', method: 'initialize',
	    params: { capabilities: {}, clientInfo: { name: 'x', version: '1' } } }).done();
	const bj = r.json();
	t.ok(r.status === 400 && isJsonType(r) && bj && bj.id === 'bad-init' && bj.error &&
	    typeof bj.error.code === 'number' && !('result' in bj),
	    'initialize without protocolVersion: 400, application/json, the JSON-RPC error for its id', r.summary());
	t.ok(r.status === 400 && r.headers['mcp-session-id'] === undefined, 'that failed initialize gets no Mcp-Session-Id',
	    show(r.headers));

	for (const v of [undefined, ...VERSIONS]) {
		r = await pingWith({ version: v }, `v${v}`);
		t.ok(r.status === 200 && isResult(r.answer(`v${v}`), `v${v}`),
		    `a 2025-06-18 session, MCP-Protocol-Version ${v === undefined ? 'absent' : v}: 200`, r.summary());
	}
	for (const v of ['2099-01-01', '2025-06-18x', 'garbage', '2025-6-18']) {
		r = await pingWith({ version: v }, 'bad-version');
		const j = r.json();
		t.ok(r.status === 400 && isErr(j, -32000) && !(j.error.code <= -32020 && j.error.code >= -32022),
		    `MCP-Protocol-Version ${v}: 400, JSON-RPC error -32000`, r.summary());
	}
	r = await post(port, '{"jsonrpc":"2.0","id":"bj","method":', { sid }).done();
	t.ok(r.status === 400 && isErr(r.json(), -32700) && isJsonType(r), 'a body that is not JSON: 400, -32700',
	    r.summary());
	r = await post(port, '{"x":1}', { sid }).done();
	t.ok(r.status === 400 && isErr(r.json(), -32600) && isJsonType(r),
	    'valid JSON that is not JSON-RPC ({"x":1}): 400, JSON-RPC error -32600', r.summary());
	r = await post(port, { jsonrpc: '2.0', id: 'nm', method: 'no/such/method' }, { sid }).done();
	t.ok(r.status === 200 && isErr(r.answer('nm'), -32601),
	    'an unknown method: 200, its -32601 error answered on the route like any answer', r.summary());

	const allow = (x) => (x.headers.allow || '').split(',').map((s) => s.trim().toUpperCase()).sort().join(',');
	for (const m of ['PUT', 'PATCH']) {
		const x = await new Exchange(port, m, '/mcp', { headers: { 'Mcp-Session-Id': sid } }).done();
		t.ok(x.status === 405 && allow(x) === 'DELETE,GET,POST', `${m} /mcp: 405, Allow: GET, POST, DELETE`,
		    x.summary());
	}
	let g = await get(port, { sid, accept: 'application/json' }).done(3000);
	t.ok(g.status === 406, 'GET /mcp with Accept: application/json: 406', g.summary());
	g = await get(port, { sid, accept: null }).done(3000);
	t.ok(g.status === 406, 'GET /mcp without Accept: 406', g.summary());
	g = await get(port, {}).done(3000);
	t.ok(g.status === 400, 'GET /mcp without Mcp-Session-Id: 400', g.summary());
	g = await get(port, { sid: ZERO_SID }).done(3000);
	t.ok(g.status === 404 && isErr(g.json(), -32001), 'GET /mcp with an unknown session: 404, -32001', g.summary());
	g = await get(port, { sid, version: undefined, headers: { 'MCP-Protocol-Version': '1999-01-01' } }).done(3000);
	t.ok(g.status === 400 && isErr(g.json(), -32000), 'GET /mcp with MCP-Protocol-Version 1999-01-01: 400, -32000',
	    g.summary());
	let d = await del(port, ZERO_SID).done();
	t.ok(d.status === 404 && isErr(d.json(), -32001), 'DELETE /mcp with an unknown session: 404, -32001', d.summary());
	d = await del(port, undefined).done();
	t.ok(d.status === 400, 'DELETE /mcp without Mcp-Session-Id: 400', d.summary());
	r = await post(port, ping('still'), { sid }).done();
	t.ok(r.status === 200 && r.answer('still'), 'the session still works after all that', r.summary());
}

async function basePath(t) {
	const srv = await startServer(['--base-path', '/x']);
	const port = srv.port;
	const r = await post(port, INIT(1), { path: '/x/mcp' }).done();
	const sid = r.headers['mcp-session-id'];
	t.ok(r.status === 200 && SID.test(sid || '') && isResult(r.answer(1), 1),
	    '--base-path /x: initialize at POST /x/mcp: 200 with a session', r.summary());
	const p = await post(port, ping('p'), { sid, path: '/x/mcp' }).done();
	t.ok(p.status === 200 && p.answer('p'), '--base-path /x: a ping at /x/mcp with the session: 200', p.summary());
	const o = await post(port, INIT(2)).done();
	t.ok(o.status === 404, '--base-path /x: POST /mcp is 404', o.summary());
	const g = get(port, { sid, path: '/x/mcp' });
	await g.head(3000);
	t.ok(g.status === 200 && g.sse, '--base-path /x: GET /x/mcp opens the standalone stream', g.summary());
	g.close();
	const d = await del(port, sid, { path: '/x/mcp' }).done();
	t.ok(d.status === 200, '--base-path /x: DELETE /x/mcp: 200', d.summary());
}

// --json-response: application/json answers; notes go to the GET stream.
async function jsonResponse(t) {
	const srv = await startServer(['--json-response', '--keepalive', '1']);
	const port = srv.port;
	const r = await post(port, INIT(1)).done();
	const sid = r.headers['mcp-session-id'];
	t.ok(r.status === 200 && isJsonType(r) && SID.test(sid || '') && isResult(r.json(), 1) &&
	    r.headers['content-length'] === String(Buffer.byteLength(r.raw)),
	    '--json-response: initialize is answered with an application/json body (the response object) and a session',
	    r.summary());
	await post(port, INITIALIZED, { sid }).done();
	let x = await post(port, call('e', 'echo', { text: 'json' }), { sid }).done();
	t.ok(x.status === 200 && isJsonType(x) && textOf(x.json()) === 'json' && x.json().id === 'e',
	    '--json-response: tools/call echo: application/json, the single response object', x.summary());
	x = await post(port, call('p1', 'sleep', { ms: 250 }, 'tk'), { sid }).done();
	t.ok(x.status === 200 && isJsonType(x) && textOf(x.json()) === 'slept 250 ms',
	    '--json-response: a call with progress and no GET stream open: its notes are dropped, the answer is JSON',
	    x.summary());
	const g = get(port, { sid });
	await g.head(3000);
	t.ok(g.status === 200 && g.sse, '--json-response: GET /mcp opens the standalone stream', g.summary());
	x = await post(port, call('p2', 'sleep', { ms: 350 }, 'tk2'), { sid }).done();
	t.ok(x.status === 200 && isJsonType(x) && textOf(x.json()) === 'slept 350 ms',
	    '--json-response: a call with progress, GET stream open: the answer is JSON', x.summary());
	await g.until(() => g.msgs.filter((m) => m.method === 'notifications/progress').length >= 3, 2000);
	const prog = g.msgs.filter((m) => m.method === 'notifications/progress');
	t.ok(prog.length === 3 && prog.every((m) => m.params.progressToken === 'tk2'),
	    '--json-response: its three progress notes went down the GET stream', show(g.msgs));
	t.ok(g.msgs.every((m) => 'method' in m) && !g.events().some((e) => /^0-\d+$/.test(e.other.id || '') === false &&
	    e.data !== ''), 'the GET stream carries no response, and its event ids are 0-<seq>', show(g.events()));
	x = await post(port, call('slow', 'sleep', { ms: 1600 }), { sid }).done();
	t.ok(x.status === 200 && isJsonType(x) && textOf(x.json()) === 'slept 1600 ms',
	    '--json-response: a call slower than --keepalive (sleep 1600, keepalive 1) is still one application/json body',
	    x.summary());
	g.close();
}

async function stateless(t) {
	const srv = await startServer(['--stateless', '--keepalive', '1']);
	const port = srv.port;
	let x = await post(port, call('e', 'echo', { text: 'alone' })).done();
	t.ok(x.status === 200 && textOf(x.answer('e')) === 'alone',
	    '--stateless: tools/call without initialize or session: 200, answered', x.summary());
	t.ok(x.headers['mcp-session-id'] === undefined, '--stateless: no Mcp-Session-Id on it', show(x.headers));
	x = await post(port, INIT(1)).done();
	t.ok(x.status === 200 && isResult(x.answer(1), 1) && x.answer(1).result.protocolVersion === '2025-11-25',
	    '--stateless: initialize works too', x.summary());
	t.ok(x.headers['mcp-session-id'] === undefined, '--stateless: no Mcp-Session-Id even on initialize', show(x.headers));
	x = await post(port, { jsonrpc: '2.0', id: 'l', method: 'tools/list' }).done();
	t.ok(x.status === 200 && (x.answer('l')?.result?.tools || []).map((tt) => tt.name).join() === 'echo,add,sleep,fail',
	    '--stateless: tools/list alone: the four tools', x.summary());
	// The version: the header's, else 2025-03-26 (structuredContent needs 2025-06-18).
	x = await post(port, call('a', 'add', { a: 1, b: 2 })).done();
	const a0 = x.answer('a');
	t.ok(textOf(a0) === '{"sum":3.0}' && !('structuredContent' in a0.result),
	    '--stateless, no MCP-Protocol-Version: served as 2025-03-26 (no structuredContent; the text is ' +
	    'the serialised JSON)', x.summary());
	t.ok(!/^id:/m.test(x.raw), '--stateless: events carry no id (nothing can resume them, and ids would repeat)',
	    show(x.raw));
	x = await post(port, call('a', 'add', { a: 1, b: 2 }), { version: '2025-06-18' }).done();
	const a1 = x.answer('a');
	t.ok(a1 && a1.result && a1.result.structuredContent && a1.result.structuredContent.sum === 3,
	    '--stateless, MCP-Protocol-Version 2025-06-18: served as 2025-06-18 (structuredContent)', x.summary());
	x = await post(port, call('a', 'add', { a: 1, b: 2 }), { version: '2024-13-01' }).done();
	t.ok(x.status === 400 && isErr(x.json(), -32000), '--stateless, MCP-Protocol-Version 2024-13-01: 400, -32000',
	    x.summary());
	x = await post(port, call('pr', 'sleep', { ms: 250 }, 1), { version: '2025-11-25' }).done();
	t.ok(x.status === 200 && x.sse && x.msgs.length === 3 && x.msgs[0].method === 'notifications/progress' &&
	    textOf(x.msgs[2]) === 'slept 250 ms' && x.complete,
	    '--stateless: a call with progress streams its notes, then its answer, then ends', x.summary());
	const g = await get(port, {}).done(3000);
	t.ok(g.status === 405, '--stateless: GET /mcp: 405', g.summary());
	const d = await del(port, ZERO_SID).done();
	t.ok(d.status === 405, '--stateless: DELETE /mcp: 405', d.summary());
	const xs = Array.from({ length: 20 }, (_, k) => post(port, call(k, 'echo', { text: `s${k}` })));
	await Promise.all(xs.map((e) => e.done()));
	t.ok(xs.every((e, k) => e.status === 200 && textOf(e.answer(k)) === `s${k}` && !e.headers['mcp-session-id']),
	    '--stateless: 20 concurrent calls, each answered on its own', show(xs.map((e) => e.status)));
	const s2 = await post(port, ping('p'), { sid: ZERO_SID }).done();
	t.ok(s2.status === 200 && s2.answer('p'), '--stateless: an Mcp-Session-Id header is ignored (no 404)', s2.summary());
}

// The standalone GET stream: list_changed and resource updates, 409,
// keepalives, and a replay after Last-Event-ID.
async function standalone(t) {
	const srv = await startServer(['--keepalive', '1'], FEAT);
	const port = srv.port;
	const sid = await open(srv);
	const g0 = get(port, { sid });
	await g0.until(() => g0.events().length > 0 || g0.ended, 3000);
	t.ok(g0.status === 200 && g0.sse && g0.headers['transfer-encoding'] === 'chunked',
	    'GET /mcp with the session: 200, a chunked text/event-stream', g0.summary());
	t.ok(/^id: 0-0\nretry: 1000\ndata: \n\n/.test(g0.raw), 'a 2025-11-25 session: it starts with the priming event id 0-0',
	    show(g0.raw));
	const g2 = await get(port, { sid }).done(3000);
	t.ok(g2.status === 409 && !g0.ended, 'a second concurrent GET: 409 (the first stream stays)', g2.summary());
	// A client resumes only a stream it lost, which the server may not
	// have seen go yet: the resumption takes over.
	const g = get(port, { sid, last: '0-0' });
	await g.head(3000);
	await g0.done(3000);
	t.ok(g.status === 200 && g.sse && !g.ended && g0.ended,
	    'a GET with Last-Event-ID 0-0 while that stream is connected takes it over: 200, the old connection is closed',
	    `${g.summary()}; old ended ${g0.ended}`);

	let x = await post(port, call('t1', 'add_tool', { name: 'extra1' }), { sid }).done();
	await g.until(() => g.msgs.length >= 1, 3000);
	t.ok(textOf(x.answer('t1')) === 'rc 0' && x.messages().length === 1,
	    'add_tool: its POST carries its result only', x.summary());
	const lc = g.events().filter((e) => /tools\/list_changed/.test(e.data));
	t.ok(lc.length === 1 && lc[0].other.id === '0-1' && lc[0].event === 'message',
	    'notifications/tools/list_changed comes down the GET stream as event id 0-1', show(g.events()));
	x = await post(port, { jsonrpc: '2.0', id: 'sub', method: 'resources/subscribe',
	    params: { uri: 'test://watched-resource' } }, { sid }).done();
	const y = await post(port, call('touch', 'touch', { uri: 'test://watched-resource' }), { sid }).done();
	await g.until(() => g.msgs.some((m) => m.method === 'notifications/resources/updated'), 3000);
	const up = g.events().find((e) => /resources\/updated/.test(e.data));
	t.ok(isResult(x.answer('sub'), 'sub') && textOf(y.answer('touch')) === 'rc 0' && up && up.other.id === '0-2' &&
	    JSON.parse(up.data).params.uri === 'test://watched-resource',
	    'after resources/subscribe, touch: notifications/resources/updated on the GET stream (0-2)', show(g.events()));
	await sleep(2300);
	const ka = g.comments();
	t.ok(ka.length >= 1 && ka.every((c) => c.line === ': keepalive'),
	    '--keepalive 1: ": keepalive" comments on the GET stream', show(g.raw.slice(-200)));
	t.ok(g.msgs.every((m) => 'method' in m && !('id' in m)) && g.msgs.length === 2 && !g.ended,
	    'the GET stream carried only those two notifications, never a response, and is still open', show(g.msgs));

	// Drop it, miss two list_changed, come back with Last-Event-ID 0-2.
	const last = g.events().at(-1).other.id;
	g.close();
	for (const n of ['extra2', 'extra3']) {
		x = await post(port, call(n, 'add_tool', { name: n }), { sid }).done();
		if (textOf(x.answer(n)) !== 'rc 0')
			t.ok(false, `add_tool ${n} while the stream is gone`, x.summary());
	}
	const r = get(port, { sid, last });
	await r.head(3000);
	t.ok(r.status === 200 && r.sse, `GET with Last-Event-ID ${last} right after the drop: 200`, r.summary());
	await r.until(() => r.msgs.length >= 2, 3000);
	const rids = r.events().filter((e) => e.data !== '').map((e) => e.other.id);
	t.ok(rids.length === 2 && rids[0] === '0-3' && rids[1] === '0-4' &&
	    r.msgs.every((m) => m.method === 'notifications/tools/list_changed'),
	    'it replays what was missed: the two list_changed, ids 0-3 and 0-4', show(r.events()));
	x = await post(port, call('t5', 'add_tool', { name: 'extra5' }), { sid }).done();
	await r.until(() => r.msgs.length >= 3, 3000);
	t.ok(r.events().filter((e) => e.data !== '').at(-1)?.other.id === '0-5' && !r.ended,
	    'then it continues live: the next list_changed comes as 0-5, the stream stays open', show(r.events()));
	r.close();
	for (const bad of ['0-99', '7-1', 'abc', '0-', '-1', '0-1-2']) {
		const b = await get(port, { sid, last: bad }).done(3000);
		t.ok(b.status === 400 && b.json()?.error, `GET with Last-Event-ID ${JSON.stringify(bad)}: 400`, b.summary());
	}
}

// --event-log: what is older than the bound is not replayed.
async function eventLog(t) {
	const srv = await startServer(['--keepalive', '1', '--event-log', '300'], FEAT);
	const port = srv.port;
	const sid = await open(srv, { version: '2025-06-18' });
	const g = get(port, { sid });
	await g.head(3000);
	await post(port, call('a0', 'add_tool', { name: 'z0' }), { sid }).done();
	await g.until(() => g.msgs.length >= 1, 3000);
	const first = g.events()[0]?.other.id;
	t.ok(g.status === 200 && first === '0-1' && !/^retry:/m.test(g.raw),
	    'a 2025-06-18 session: no priming event; the first list_changed is 0-1', g.summary());
	g.close();
	for (let i = 1; i <= 8; i++)
		await post(port, call(`a${i}`, 'add_tool', { name: `z${i}` }), { sid }).done();
	const r = get(port, { sid, last: '0-1' });
	await r.head(3000);
	await r.until(() => r.events().some((e) => e.other.id === '0-9'), 3000);
	await sleep(200);
	const ids = r.events().map((e) => e.other.id);
	const seqs = ids.map((s) => Number(s.split('-')[1]));
	t.ok(r.status === 200 && ids.at(-1) === '0-9', '--event-log 300: a replay from 0-1 ends with the newest event, 0-9',
	    `${r.summary()} ${show(ids)}`);
	t.ok(ids.length >= 1 && ids.length <= 4 && seqs.every((s, k) => k === 0 || s === seqs[k - 1] + 1),
	    '--event-log 300: only the newest events (at most 300 bytes\' worth, 1 to 4 of the 8 missed), in order',
	    show(ids));
	r.close();
}

// test_reconnection: the POST stream ends after its priming event; the
// answer is picked up with GET and Last-Event-ID.
async function reconnection(t) {
	const srv = await startServer(['--keepalive', '1', '--sse-retry', '250'], CONF);
	const port = srv.port;
	const sid = await open(srv);
	const x = await post(port, call('rc', 'test_reconnection', {}), { sid }).done(5000);
	const m = /^id: (\d+)-0\nretry: 250\ndata: \n\n$/.exec(x.raw);
	t.ok(x.status === 200 && x.sse && m && x.complete && x.msgs.length === 0,
	    'test_reconnection: the POST stream is only the priming event (retry 250, --sse-retry) and ends',
	    x.summary());
	t.ok(x.endedAt < 1000, `the POST stream ends right away (${x.endedAt} ms), before the answer`);
	const route = m ? m[1] : '1';
	const r = get(port, { sid, last: `${route}-0` });
	await r.done(4000);
	t.ok(r.status === 200 && r.sse && r.complete,
	    `GET with Last-Event-ID ${route}-0: 200, a stream that ends once the answer is in`, r.summary());
	const res = r.answer('rc');
	t.ok(isResult(res, 'rc') && /Reconnection test completed successfully/.test(textOf(res)) &&
	    r.events().filter((e) => e.data !== '').length === 1 &&
	    r.events().filter((e) => e.data !== '')[0].other.id === `${route}-1`,
	    `the replay holds the result, as event ${route}-1`, r.summary());
	// A POST stream resumed while still connected: the resumption takes
	// over, replaying the server's request to the client.
	const sid2 = await open(srv, { capabilities: { sampling: {} } });
	const ps = post(port, call('ps', 'test_sampling', { prompt: 'again' }), { sid: sid2 });
	await ps.until(() => ps.msgs.length >= 1 || ps.ended, 3000);
	const sreq = ps.msgs[0];
	const sev = ps.events().find((e) => e.data !== '');
	const pr = sev?.other.id?.split('-')[0];
	t.ok(sreq && sreq.method === 'sampling/createMessage' && sev.other.id === `${pr}-1` &&
	    /^id: \d+-0\nretry: 250/.test(ps.raw),
	    'test_sampling: its POST stream has the priming event, then sampling/createMessage as <route>-1', ps.summary());
	const tk = get(port, { sid: sid2, last: `${pr}-0` });
	await tk.until(() => tk.msgs.length >= 1 || tk.ended, 3000);
	await ps.done(3000);
	t.ok(tk.status === 200 && tk.msgs[0]?.method === 'sampling/createMessage' &&
	    JSON.stringify(tk.msgs[0].id) === JSON.stringify(sreq?.id) && tk.events()[0]?.other.id === `${pr}-1`,
	    `GET with Last-Event-ID ${pr}-0 while that POST stream is connected: 200, it replays the request (${pr}-1)`,
	    tk.summary());
	t.ok(ps.ended && !ps.answer('ps'), 'the POST connection it took over from is closed', ps.summary());
	const ans = await post(port, { jsonrpc: '2.0', id: sreq?.id, result: { role: 'assistant', model: 'm',
	    content: { type: 'text', text: 'resumed' } } }, { sid: sid2 }).done();
	await tk.done(3000);
	t.ok(ans.status === 202 && tk.complete && textOf(tk.answer('ps')) === 'LLM response: resumed' &&
	    tk.events().at(-1)?.other.id === `${pr}-2`,
	    'the client\'s answer (202) lets the tool finish: its result comes down the resumed stream, which ends',
	    `${ans.status} ${tk.summary()}`);
	const lg = await post(port, call('lg', 'test_tool_with_logging', {}), { sid }).done();
	t.ok(lg.sse && lg.msgs.length === 4 && lg.msgs.slice(0, 3).every((mm) => mm.method === 'notifications/message') &&
	    isResult(lg.msgs[3], 'lg'), 'test_tool_with_logging: three notifications/message, then the result, on its POST',
	    lg.summary());
}

async function keepalive(t) {
	const srv = await startServer(['--keepalive', '1']);
	const sid = await open(srv);
	const g = get(srv.port, { sid });
	await g.head(3000);
	await sleep(3400);
	const ka = g.comments();
	t.ok(ka.length >= 2 && ka.length <= 5, '--keepalive 1: 2 to 5 ": keepalive" comments on an idle GET stream in 3.4 s',
	    show(ka.map((c) => c.t)));
	t.ok(ka.every((c) => c.line === ': keepalive'), 'each is exactly ": keepalive"', show(ka.map((c) => c.line)));
	const gaps = ka.slice(1).map((c, i) => c.t - ka[i].t);
	t.ok(gaps.length >= 1 && gaps.every((x) => x >= 400 && x <= 2500), 'they come about every second',
	    show(gaps));
	t.ok(!g.ended && g.events().length === 1, 'the idle stream stays open with no event but the priming one',
	    show(g.events()));
	g.close();
}

// --max-sessions against a flood of initializes, and DELETE.
async function flood(t) {
	const srv = await startServer(['--max-sessions', '50']);
	const port = srv.port;
	const agent = track(new http.Agent({ keepAlive: true, maxSockets: 16 }));
	const xs = Array.from({ length: 60 }, (_, k) => post(port, INIT(k), { agent }));
	await Promise.all(xs.map((x) => x.done(10000)));
	const okd = xs.filter((x) => x.status === 200 && SID.test(x.headers['mcp-session-id'] || ''));
	const busy = xs.filter((x) => x.status === 503);
	t.ok(okd.length === 50 && busy.length === 10,
	    '--max-sessions 50, 60 concurrent initializes: exactly 50 get a session, 10 get 503',
	    `${okd.length} ok, ${busy.length} 503, others ${show(xs.filter((x) => ![200, 503].includes(x.status)).map((x) => x.summary()).slice(0, 2))}`);
	t.ok(busy.every((x) => x.json()?.error && !x.headers['mcp-session-id']),
	    'each 503 has a JSON-RPC error body and no session id', show(busy.slice(0, 1).map((x) => x.summary())));
	const sids = okd.map((x) => x.headers['mcp-session-id']);
	t.ok(new Set(sids).size === 50, 'the 50 session ids are all different');
	const more = await post(port, INIT('more'), { agent }).done();
	t.ok(more.status === 503, 'at the limit, one more initialize: 503', more.summary());
	const ds = await Promise.all(sids.slice(0, 5).map((s) => del(port, s).done()));
	t.ok(ds.every((d) => d.status === 200), 'DELETE of 5 sessions: 200 each', show(ds.map((d) => d.status)));
	const gone = await post(port, ping('gone'), { sid: sids[0] }).done();
	t.ok(gone.status === 404 && isErr(gone.json(), -32001), 'a deleted session: POST gets 404, -32001', gone.summary());
	const again = await del(port, sids[0]).done();
	t.ok(again.status === 404, 'a deleted session: DELETE again gets 404', again.summary());
	const gg = await get(port, { sid: sids[0] }).done(3000);
	t.ok(gg.status === 404, 'a deleted session: GET gets 404', gg.summary());
	const alive = await post(port, ping('alive'), { sid: sids[5] }).done();
	t.ok(alive.status === 200 && alive.answer('alive'), 'the other sessions are untouched', alive.summary());
	const nx = await Promise.all(Array.from({ length: 6 }, (_, k) => post(port, INIT(`n${k}`), { agent }).done()));
	t.ok(nx.filter((x) => x.status === 200).length === 5 && nx.filter((x) => x.status === 503).length === 1,
	    'after the 5 DELETEs: 6 new initializes, 5 get in and 1 gets 503', show(nx.map((x) => x.status)));
	agent.destroy();

	// The legacy /sse sessions count too, and a failed initialize does not.
	const s2 = await startServer(['--max-sessions', '2']);
	const bad = await post(s2.port, { jsonrpc: '2.0', id: 'b', method: 'initialize', params: {} }).done();
	const legacy = get(s2.port, { path: '/sse' });
	await legacy.until(() => legacy.events().length > 0 || legacy.ended, 3000);
	const one = await post(s2.port, INIT('one')).done();
	const two = await post(s2.port, INIT('two')).done();
	t.ok(bad.status === 400 && legacy.status === 200 && one.status === 200 && two.status === 503,
	    '--max-sessions 2: a failed initialize takes no place; one GET /sse and one /mcp session fill it (then 503)',
	    `${bad.status} ${legacy.status} ${one.status} ${two.status}`);
	const third = await get(s2.port, { path: '/sse' }).done(2000);
	t.ok(third.status === 503, '--max-sessions 2: and GET /sse gets 503 too', third.summary());
	legacy.close();
}

async function deleteInFlight(t) {
	const srv = await startServer(['--keepalive', '1']);
	const port = srv.port;
	const sid = await open(srv);
	const g = get(port, { sid });
	await g.head(3000);
	const x = post(port, call('long', 'sleep', { ms: 5000 }, 'lp'), { sid });
	await x.until(() => x.msgs.length >= 1 || x.ended, 3000);
	const t0 = Date.now();
	const d = await del(port, sid).done();
	t.ok(d.status === 200 && d.raw === '', 'DELETE with a stream and a call in flight: 200', d.summary());
	await Promise.all([g.done(3000), x.done(3000)]);
	t.ok(g.ended && x.ended && Date.now() - t0 < 2000, 'the GET stream and the call\'s stream end with the session',
	    `GET ended ${g.ended}, POST ended ${x.ended} after ${Date.now() - t0} ms`);
	t.ok(!x.answer('long'), 'the deleted call sends no result', x.summary());
	const p = await post(port, ping('after'), { sid }).done();
	t.ok(p.status === 404, 'and the session is gone (404)', p.summary());
}

async function idleSessions(t) {
	const srv = await startServer(['--session-timeout', '1']);
	const port = srv.port;
	const a = await open(srv);
	const b = await open(srv);
	const t0 = Date.now();
	const bad = [];
	while (Date.now() - t0 < 3000) {
		const r = await post(port, ping('busy'), { sid: b }).done();
		if (r.status !== 200)
			bad.push(r.status);
		await sleep(300);
	}
	const ra = await post(port, ping('idle'), { sid: a }).done();
	t.ok(ra.status === 404 && isErr(ra.json(), -32001), '--session-timeout 1: a session idle for 3 s is gone (404)',
	    ra.summary());
	t.ok(bad.length === 0, '--session-timeout 1: a session used every 300 ms meanwhile stays', show(bad));
	await sleep(2600);
	const rb = await post(port, ping('late'), { sid: b }).done();
	t.ok(rb.status === 404, '--session-timeout 1: then idle 2.6 s, it is gone too', rb.summary());
}

async function hostOriginAuth(t) {
	const srv = await startServer([]);
	const port = srv.port;
	const sid = await open(srv);
	let r = await post(port, INIT(1), { headers: { Host: 'evil.example.com' } }).done();
	t.ok(r.status === 403 && !r.headers['mcp-session-id'], 'initialize with Host: evil.example.com: 403', r.summary());
	r = await post(port, ping('o'), { sid, headers: { Origin: 'http://evil.example.com' } }).done();
	t.ok(r.status === 403, 'POST with Origin: http://evil.example.com: 403', r.summary());
	let g = await get(port, { sid, headers: { Origin: 'http://evil.example.com' } }).done(3000);
	t.ok(g.status === 403, 'GET with Origin: http://evil.example.com: 403', g.summary());
	let d = await del(port, sid, { headers: { Host: 'evil.example.com' } }).done();
	t.ok(d.status === 403, 'DELETE with Host: evil.example.com: 403 (and the session stays)', d.summary());
	r = await post(port, ping('o2'), { sid, headers: { Origin: 'http://localhost:3000' } }).done();
	t.ok(r.status === 200 && r.answer('o2') && r.headers['access-control-allow-origin'] === 'http://localhost:3000',
	    'POST with Origin: http://localhost:3000: 200, with Access-Control-Allow-Origin', r.summary());
	r = await post(port, ping('h'), { sid, headers: { Host: `localhost:${port}` } }).done();
	t.ok(r.status === 200 && r.answer('h'), `POST with Host: localhost:${port}: 200`, r.summary());
	const pre = await new Exchange(port, 'OPTIONS', '/mcp', { headers: { Origin: 'http://localhost:3000',
	    'Access-Control-Request-Method': 'POST',
	    'Access-Control-Request-Headers': 'content-type, mcp-session-id, mcp-protocol-version' } }).done();
	t.ok(pre.status === 204 && /mcp-session-id/i.test(pre.headers['access-control-allow-headers'] || '') &&
	    /DELETE/.test(pre.headers['access-control-allow-methods'] || ''),
	    'a CORS preflight for /mcp: 204, allowing Mcp-Session-Id and DELETE', pre.summary());

	const dir = mkdtempSync(join(tmpdir(), 'mcp-streamable-'));
	track(() => rmSync(dir, { recursive: true, force: true }));
	const token = 'tok-' + Math.random().toString(36).slice(2);
	writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
	const s2 = await startServer(['--auth-token-file', join(dir, 'token')]);
	const good = { Authorization: `Bearer ${token}` };
	const www = (x) => x.headers['www-authenticate'] || '';
	r = await post(s2.port, INIT(1)).done();
	t.ok(r.status === 401 && /^Bearer\b/.test(www(r)) && !r.headers['mcp-session-id'],
	    '--auth-token-file: initialize without Authorization: 401, WWW-Authenticate: Bearer', r.summary());
	r = await post(s2.port, INIT(1), { headers: { Authorization: 'Bearer wrong' } }).done();
	t.ok(r.status === 401 && /invalid_token/.test(www(r)), 'a wrong token: 401 with error="invalid_token"', r.summary());
	const sid2 = await open(s2, { headers: good });
	t.ok(SID.test(sid2), 'the right token: a session');
	r = await post(s2.port, ping('n'), { sid: sid2 }).done();
	t.ok(r.status === 401, 'a POST in that session without the token: 401', r.summary());
	g = await get(s2.port, { sid: sid2 }).done(3000);
	t.ok(g.status === 401 && /^Bearer\b/.test(www(g)), 'GET /mcp without the token: 401', g.summary());
	d = await del(s2.port, sid2).done();
	t.ok(d.status === 401, 'DELETE /mcp without the token: 401', d.summary());
	r = await post(s2.port, call('y', 'echo', { text: 'authorized' }), { sid: sid2, headers: good }).done();
	t.ok(r.status === 200 && textOf(r.answer('y')) === 'authorized', 'with the token: answered, the session intact',
	    r.summary());
}

async function sigterm(t) {
	const srv = await startServer(['--keepalive', '1', '--grace-ms', '5000']);
	const port = srv.port;
	const sid = await open(srv);
	const agent = track(new http.Agent({ keepAlive: true, maxSockets: 1 }));
	const warm = await post(port, ping('warm'), { sid, agent }).done();
	const g = get(port, { sid });
	await g.head(3000);
	const live = post(port, call('live', 'sleep', { ms: 1500 }, 'lt'), { sid });
	const quiet = post(port, call('quiet', 'sleep', { ms: 800 }), { sid });
	await live.until(() => live.msgs.length >= 1, 3000);
	srv.expectExit = true;
	const t0 = Date.now();
	srv.kill('SIGTERM');
	await sleep(150);
	const late = await post(port, ping('late'), { sid, agent }).done();
	t.ok(warm.status === 200 && late.status === 503 && late.json()?.error,
	    'SIGTERM: a new POST (on a connection kept alive from before) gets 503 with a JSON-RPC error', late.summary());
	const fresh = await post(port, INIT('fresh')).done(2000);
	t.ok(fresh.status !== 200, 'SIGTERM: no new session is made', fresh.summary());
	await Promise.all([live.done(8000), quiet.done(8000)]);
	t.ok(textOf(live.answer('live')) === 'slept 1500 ms' && live.complete,
	    'SIGTERM: a call in flight on a live stream gets its result down the stream, which then ends', live.summary());
	t.ok(quiet.status === 200 && textOf(quiet.answer('quiet')) === 'slept 800 ms',
	    'SIGTERM: a call in flight whose POST had no answer yet gets its result', quiet.summary());
	await g.done(5000);
	t.ok(g.ended, 'SIGTERM: the standalone GET stream ends', `ended ${g.ended}`);
	const ex = await within(srv.exited, 8000);
	t.ok(ex && ex.code === 0 && ex.signal === null && ex.at - t0 < 5000,
	    'SIGTERM: the process exits 0, within the grace period', `${show(ex)} after ${ex && ex.at - t0} ms`);

	const s2 = await startServer(['--keepalive', '1', '--grace-ms', '400']);
	const sid2 = await open(s2);
	const long = post(s2.port, call('long', 'sleep', { ms: 60000 }), { sid: sid2 });
	await sleep(200);
	s2.expectExit = true;
	s2.kill('SIGTERM');
	await long.done(5000);
	const la = long.answer('long');
	t.ok(la && la.error && /shutting down/.test(la.error.message) && !('result' in la),
	    'SIGTERM --grace-ms 400 with a sleep 60000: its POST gets the error "server shutting down"', long.summary());
	const ex2 = await within(s2.exited, 5000);
	t.ok(ex2 && ex2.code === 0, 'SIGTERM --grace-ms 400: the process exits 0', show(ex2));
}

// ---- running the groups --------------------------------------------------

// Hostile and odd input: Last-Event-ID values at the edges, many waiting
// POSTs whose clients vanish, bytes that are not UTF-8, the in-flight cap,
// an answer to a request never sent, and a 2025-03-26 batch.
async function hostile(t) {
	const srv = await startServer(['--max-inflight', '8']);
	const port = srv.port;
	const sid = await open(srv);
	const lasts = ['99999999999999999999-1', '1-99999999999999999999999', '4294967296-0', '-1-0',
	    '1-', '-', 'abc', '1-2-3', '1 -2', '', '0x1-1', `${'9'.repeat(5000)}-1`];
	const codes = [];
	for (const last of lasts) {
		const g = await get(port, { sid, last }).done(3000);
		codes.push(g.status);
	}
	t.ok(codes.every((c) => c === 400), 'Last-Event-ID values that are malformed, out of range or unknown: 400 each',
	    show(lasts.map((l, i) => [l.slice(0, 30), codes[i]])));

	// 8 slow calls (the --max-inflight cap) whose clients go away, then more.
	const slow = [];
	for (let i = 0; i < 8; i++)
		slow.push(post(port, call(`s${i}`, 'sleep', { ms: 3000 }), { sid }));
	await sleep(400);	/* all 8 are in (they answer nothing for 3 s) */
	const over = await post(port, call('over', 'sleep', { ms: 10 }), { sid }).done(3000);
	const om = over.answer('over');
	t.ok(over.status === 200 && isErr(om, -32000), '--max-inflight 8: a ninth call in flight is answered -32000 at once',
	    over.summary());
	for (const x of slow)
		x.close();
	const t0 = Date.now();
	const p = await post(port, ping('alive'), { sid }).done(3000);
	t.ok(p.status === 200 && isResult(p.answer('alive'), 'alive') && Date.now() - t0 < 1000,
	    'the 8 clients vanish mid-call: the session answers a ping at once', p.summary());
	await sleep(3000);
	const after = await post(port, call('after', 'echo', { text: 'ok' }), { sid }).done(3000);
	t.ok(textOf(after.answer('after')) === 'ok', 'once they finish, the session takes calls again (the slots came back)',
	    after.summary());

	// Not UTF-8 inside a string, and a lone NUL escape.
	const bad = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"echo",' +
	    '"arguments":{"text":"'), Buffer.from([0xff, 0xfe, 0xc0]), Buffer.from('"}}}')]);
	const u = await new Promise((res) => {
		const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/mcp', headers: {
			'Content-Type': 'application/json', Accept: ACCEPT, 'Mcp-Session-Id': sid, 'Content-Length': bad.length,
		} }, (r) => { let d = ''; r.on('data', (c) => { d += c; }); r.on('end', () => res({ status: r.statusCode, d })); });
		req.on('error', (e) => res({ status: 0, d: String(e) }));
		req.end(bad);
	});
	t.ok(u.status === 400 && /-32700|-32600/.test(u.d), 'a body with bytes that are not UTF-8: 400 with a JSON-RPC error',
	    show(u));
	const z = await post(port, '{"jsonrpc":"2.0","id":"z","method":"tools/call","params":{"name":"echo",' +
	    '"arguments":{"text":"a\\u0000b"}}}', { sid }).done(3000);
	t.ok(z.status === 200 && textOf(z.answer('z')) === 'a\u0000b',
	    'a \\u0000 in a string: valid JSON, echoed whole', z.summary());

	// The client answers a request the server never sent: 202, ignored.
	const r = await post(port, { jsonrpc: '2.0', id: 's999', result: {} }, { sid }).done(3000);
	t.ok(r.status === 202 && r.raw === '', 'a response to a request never sent: 202, ignored', r.summary());

	// A batch: only in 2025-03-26 sessions; the answers come as one array.
	const old = await open(srv, { version: '2025-03-26' });
	const bt = await post(port, [ping('b1'), call('b2', 'echo', { text: 'in a batch' })], { sid: old }).done(3000);
	const arr = bt.messages()[0];
	t.ok(bt.status === 200 && Array.isArray(arr) && arr.length === 2 &&
	    arr.some((m) => isResult(m, 'b1')) && arr.some((m) => textOf(m) === 'in a batch'),
	    'a 2025-03-26 batch of a ping and a call: one event whose data is the array of both answers', bt.summary());
	const nb = await post(port, [ping('n1')], { sid }).done(3000);
	t.ok(nb.status === 400 && isErr(nb.json(), -32600), 'a batch in a 2025-11-25 session: 400, -32600', nb.summary());
}

async function main() {
	await runGroups([
		['whole bodies', wholeBodies], ['live streams', liveStreams], ['statuses', statuses],
		['base path', basePath], ['json response', jsonResponse], ['stateless', stateless],
		['standalone stream', standalone], ['event log', eventLog], ['reconnection', reconnection],
		['keepalive', keepalive], ['flood', flood], ['delete in flight', deleteInFlight],
		['idle sessions', idleSessions], ['host origin auth', hostOriginAuth], ['sigterm', sigterm],
		['hostile', hostile],
	], { run: group, times: 'STREAMABLE_TIMES' });
	killAll();
	// (a timer of a wait that came true early must not hold the exit)
	process.exit(process.exitCode);
}

main();
