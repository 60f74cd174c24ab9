// deferred.mjs: calls finished later (mcp_call_defer(3)) and
// notifications outside a call (mcp_server_log(3)), with the official
// TypeScript SDK client on stdio AND on Streamable HTTP, against
// build/deferred-server (examples/deferred-server.c: delay, remind,
// broadcast, echo) and build/feat-server (test/feat-server.c: late,
// finish_inside, finish_undeferred, session_id, notify_to). Groups:
//
//   free     --workers 1 --max-workers 1: 8 calls deferred to the
//            example's timer thread for 1 s each, and an echo answered
//            meanwhile; they all end together, after ~1 s; progress from
//            the timer thread before the answer; a call finished inside
//            its callback; mcp_call_finish on a call not deferred
//   cancel   notifications/cancelled for a deferred call: no answer, the
//            holder's later finish (ignoring the cancel: late, poll
//            false) is dropped; the example's timer thread finishes a
//            cancelled call at once
//   timeout  --tool-timeout 300 on a deferred call: the isError result
//            at the time limit, and nothing more when it is finished
//   term     SIGTERM with deferred calls in flight: answered within the
//            grace period; after it, the error "server shutting down";
//            the exit waits for a holder that finishes late
//   logs     mcp_call_session_id; a log message to one session reaches
//            it alone, to all reaches all, each filtered by its own
//            logging/setLevel; list_changed and resources/updated to one
//            session; a session that ended is MCP_ENOENT; the example's
//            reminder, sent by its timer thread to one session
//   stress   (stdio) 300 deferred calls finishing while they are
//            cancelled and time out, then SIGTERM with 40 in flight:
//            every call answered at most once, the others exactly once
//
// Prints TAP; exits 1 if an assertion failed. Node 20; the SDK comes from
// test/node/node_modules. DEFERRED_SERVER and FEAT_SERVER name other
// binaries (the sanitizer builds); MCP_TIME_SCALE stretches the time
// bounds for slow builds; SAN_LOG_DIR, when set, is where a sanitizer
// writes its reports, and any there fails the run.
//
//   node test/deferred.mjs [stdio|http] [free|cancel|timeout|term|logs|stress] ...

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diag, errText, globalTimeout, ok, settle, sleep, tap, textOf, within } from './node/harness.mjs';
import {
	RawStdio, closeSdk, end, openSdk, sdk, show, startHttp, stderrLog, stop,
} from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFERRED = path.resolve(process.env.DEFERRED_SERVER ??
    path.join(HERE, '..', process.env.MCP_BUILD ?? 'build', 'deferred-server'));
const FEAT = path.resolve(process.env.FEAT_SERVER ?? path.join(HERE, '../build/feat-server'));
const SCALE = Number(process.env.MCP_TIME_SCALE ?? 1) || 1;
const T = ms => ms * SCALE;
const GLOBAL_TIMEOUT_MS = T(150000);

const want = process.argv.slice(2);
const ALL_KINDS = ['stdio', 'http'];
const KINDS = ALL_KINDS.filter(k => !want.some(a => ALL_KINDS.includes(a)) || want.includes(k));
const ALL_GROUPS = ['free', 'cancel', 'timeout', 'term', 'logs', 'stress'];
const GROUPS = ALL_GROUPS.filter(g => !want.some(a => ALL_GROUPS.includes(a)) || want.includes(g));

const { LoggingMessageNotificationSchema } = sdk.types;

tap.show = show;
const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, end, '');

// ---- servers and clients ---------------------------------------------------------

// HTTP servers shared by the groups, by binary and arguments; the groups
// that kill theirs start their own.
const httpServers = new Map();
function httpFor(server, args) {
	const key = [server, ...args].join(' ');
	if (!httpServers.has(key))
		httpServers.set(key, startHttp(server, args, `http ${path.basename(server)} ${args.join(' ')}`.trim()));
	return httpServers.get(key);
}

// An SDK client of KIND on SERVER with ARGS (stdio: a process of its own;
// http: the shared server, or SRV when given). conn.logs: the
// notifications/message it got, {t, params}.
async function open(kind, server, args, tag, srv) {
	const conn = await openSdk({ kind, server, args, tag, clientInfo: { name: 'libmcp-deferred', version: '1' },
	    httpServer: () => srv ?? httpFor(server, args) });
	if (conn.client) {
		conn.logs = [];
		conn.client.setNotificationHandler(LoggingMessageNotificationSchema,
		    n => conn.logs.push({ t: Date.now(), params: n.params }));
	}
	return conn;
}

const call = (conn, name, args, opts, ms = T(10000)) =>
    settle(conn.client.callTool({ name, arguments: args }, undefined, opts), ms);
const outcome = r => r.error ? errText(r.error) : { text: textOf(r.value), isError: r.value.isError ?? false };

// The id the SDK gave to the tools/call whose arguments satisfy PRED.
function sentId(conn, pred) {
	return conn.sent.find(s => s.msg.method === 'tools/call' && pred(s.msg.params?.arguments ?? {}))?.msg.id;
}

// The responses CONN got for ID.
const answersTo = (conn, id) => conn.received.filter(e => !('method' in e.msg) && e.msg.id === id);

// The lines of the servers' stderr whose tag starts with TAG that match RE.
const logged = (tag, re) => stderrLog.filter(l => l.startsWith(`[${tag}`) && re.test(l));

// Waits until CONN has a log message whose data is DATA: true, or false
// after MS.
async function logArrives(conn, data, ms = T(3000)) {
	const t0 = Date.now();
	while (Date.now() - t0 < ms) {
		if (conn.logs.some(l => l.params?.data === data))
			return true;
		await sleep(20);
	}
	return false;
}

// ---- free: the worker is free while a call waits ----------------------------------

async function freeGroup(kind) {
	const args = ['--workers', '1', '--max-workers', '1'];
	const conn = await open(kind, DEFERRED, args, 'free');
	if (!ok(!conn.connectError, 'free: connect to deferred-server --workers 1 --max-workers 1',
	    conn.connectError && errText(conn.connectError)))
		return;
	const N = 8;
	const t0 = Date.now();
	const delays = [...Array(N).keys()].map(i =>
	    call(conn, 'delay', { ms: 1000, text: `d${i}` }).then(r => ({ ...r, at: Date.now() - t0 })));
	await sleep(150);
	const e = await call(conn, 'echo', { text: 'meanwhile' });
	const echoAt = Date.now() - t0;
	const rs = await Promise.all(delays);
	const ats = rs.map(r => r.at);
	ok(!e.error && textOf(e.value) === 'meanwhile' && echoAt < 150 + T(600),
	    `free: with one worker and ${N} deferred calls waiting on the timer thread, an echo is answered at once (at ${echoAt} ms)`,
	    outcome(e));
	ok(rs.every((r, i) => !r.error && textOf(r.value) === `d${i}` && !r.value.isError),
	    `free: the ${N} deferred calls are answered, each with its own text`, rs.map(outcome));
	ok(Math.min(...ats) >= 900 && Math.max(...ats) < T(2500) && echoAt < Math.min(...ats),
	    `free: all after ~1 s, together, not one after another (${Math.min(...ats)}-${Math.max(...ats)} ms), the echo first`,
	    ats);

	// Progress from the timer thread, half way, before the answer.
	const prog = [];
	let resolved = false;
	const pr = call(conn, 'delay', { ms: 400, text: 'p' }, { onprogress: p => prog.push({ ...p, resolved }) });
	pr.then(() => { resolved = true; });
	const r = await pr;
	ok(!r.error && textOf(r.value) === 'p' && prog.length === 1 && prog[0].progress === 1 &&
	    prog[0].total === 2 && prog[0].message === 'half way' && !prog[0].resolved,
	    'free: progress sent by the timer thread reaches the client before the answer', outcome(r), prog);
	await closeSdk(conn);

	// What only the test server does: finished inside the callback, and
	// mcp_call_finish on a call not deferred.
	const f = await open(kind, FEAT, [], 'free-feat');
	if (!ok(!f.connectError, 'free: connect to feat-server', f.connectError && errText(f.connectError)))
		return;
	let x = await call(f, 'finish_inside', {});
	ok(!x.error && textOf(x.value) === 'defer 0 0', 'free: a call deferred (twice) and finished inside its callback is answered once',
	    outcome(x), answersTo(f, sentId(f, () => true)).length);
	x = await call(f, 'finish_undeferred', {});
	ok(!x.error && textOf(x.value) === 'finish -4',
	    'free: mcp_call_finish on a call that was not deferred: MCP_ESTATE, and the call is answered as usual', outcome(x));
	const prog2 = [];
	x = await call(f, 'late', { ms: 300, text: 'from a thread' }, { onprogress: p => prog2.push(p) });
	ok(!x.error && textOf(x.value) === 'from a thread' && prog2.length === 1 && prog2[0].message === 'started' &&
	    f.logs.some(l => l.params?.logger === 'late' && /finishing in 300 ms/.test(l.params?.data)),
	    'free: a call finished by a thread of its own, with its progress and log message from that thread',
	    outcome(x), prog2, f.logs);
	await closeSdk(f);
}

// ---- cancel --------------------------------------------------------------------

async function cancelGroup(kind) {
	const args = ['-v'];
	const conn = await open(kind, FEAT, args, `cancel-${kind}`);
	if (!ok(!conn.connectError, 'cancel: connect', conn.connectError && errText(conn.connectError)))
		return;
	// A holder that does not look: it finishes at 800 ms with a result.
	const ac = new AbortController();
	const p = call(conn, 'late', { ms: 800, text: 'stubborn', poll: false }, { signal: ac.signal });
	await sleep(200);
	ac.abort('deferred test cancels');
	const r = await p;
	const id = sentId(conn, a => a.text === 'stubborn');
	const cancel = conn.sent.find(s => s.msg.method === 'notifications/cancelled' && s.msg.params?.requestId === id);
	ok(r.error && id !== undefined && cancel !== undefined,
	    'cancel: the SDK aborts a deferred call and sends notifications/cancelled for it', outcome(r), id);
	await sleep(T(1200));	/* past the holder's finish at 800 ms */
	ok(answersTo(conn, id).length === 0,
	    'cancel: no answer ever comes for it, though its holder set a result and finished it later',
	    answersTo(conn, id).map(e => e.msg));
	const e = await call(conn, 'finish_inside', {});
	ok(!e.error && textOf(e.value) === 'defer 0 0', 'cancel: the server answers the next call', outcome(e));
	await closeSdk(conn);

	// The example's timer thread polls, and finishes a cancelled call at once.
	const d = await open(kind, DEFERRED, args, `cancel-ex-${kind}`);
	if (!ok(!d.connectError, 'cancel: connect to the example', d.connectError && errText(d.connectError)))
		return;
	const ac2 = new AbortController();
	const p2 = call(d, 'delay', { ms: 5000, text: 'never' }, { signal: ac2.signal });
	await sleep(200);
	const t0 = Date.now();
	ac2.abort('deferred test cancels');
	await p2;
	const id2 = sentId(d, a => a.text === 'never');
	let seen = false;
	while (!seen && Date.now() - t0 < T(2000)) {
		seen = logged(kind === 'stdio' ? `stdio cancel-ex-${kind}` : `http deferred-server ${args.join(' ')}`,
		    /delay: cancelled, finishing it now/).length > 0;
		if (!seen)
			await sleep(20);
	}
	ok(seen && Date.now() - t0 < T(1000),
	    `cancel: the example's timer thread sees the cancel and finishes the call at once (${Date.now() - t0} ms)`);
	await sleep(300);
	ok(answersTo(d, id2).length === 0, 'cancel: and no answer comes for it', answersTo(d, id2).map(x => x.msg));
	await closeSdk(d);
}

// ---- timeout -------------------------------------------------------------------

async function timeoutGroup(kind) {
	const args = ['--tool-timeout', '300'];
	const conn = await open(kind, DEFERRED, args, `timeout-${kind}`);
	if (!ok(!conn.connectError, 'timeout: connect (--tool-timeout 300)', conn.connectError && errText(conn.connectError)))
		return;
	let t0 = Date.now();
	let r = await call(conn, 'delay', { ms: 3000, text: 'too slow' });
	let ms = Date.now() - t0;
	ok(!r.error && r.value.isError === true && /tool delay timed out after 300 ms/.test(textOf(r.value)) &&
	    ms >= 250 && ms < T(1500),
	    `timeout: a deferred call past the time limit gets the isError result at the limit (${ms} ms)`, outcome(r));
	r = await call(conn, 'echo', { text: 'after' });
	ok(!r.error && textOf(r.value) === 'after', 'timeout: the server answers the next call', outcome(r));
	await closeSdk(conn);

	const f = await open(kind, FEAT, args, `timeout-feat-${kind}`);
	if (!ok(!f.connectError, 'timeout: connect to feat-server', f.connectError && errText(f.connectError)))
		return;
	t0 = Date.now();
	r = await call(f, 'late', { ms: 900, text: 'late anyway', poll: false });
	ms = Date.now() - t0;
	const id = sentId(f, a => a.text === 'late anyway');
	ok(!r.error && r.value.isError === true && /timed out after 300 ms/.test(textOf(r.value)) && ms < T(1500),
	    `timeout: a holder that ignores the limit: the client has the timeout's answer (${ms} ms)`, outcome(r));
	await sleep(T(1200));
	ok(answersTo(f, id).length === 1, 'timeout: its finish at 900 ms is dropped: one answer in all',
	    answersTo(f, id).map(e => e.msg));
	r = await call(f, 'finish_inside', {});
	ok(!r.error && textOf(r.value) === 'defer 0 0', 'timeout: the server answers the next call', outcome(r));
	await closeSdk(f);
}

// ---- term: SIGTERM with deferred calls in flight ---------------------------------

// A server of its own, and a client: {conn, p}.
async function own(kind, server, args, tag) {
	if (kind === 'stdio') {
		const conn = await open(kind, server, args, tag);
		return { conn, p: conn.p };
	}
	const srv = await startHttp(server, args, `http ${tag}`);
	if (srv.base === null)
		return { conn: { connectError: new Error('the HTTP server did not start') } };
	const conn = await open(kind, server, args, tag, srv);
	return { conn, p: srv.p };
}

const shuttingDown = r => r.error && /-32603/.test(errText(r.error)) && /server shutting down/.test(errText(r.error));

async function termGroup(kind) {
	// Within the grace period (5 s): the answer comes, then the exit.
	let { conn, p } = await own(kind, DEFERRED, [], `term-a-${kind}`);
	if (!ok(!conn.connectError, 'term: connect', conn.connectError && errText(conn.connectError)))
		return;
	let pr = call(conn, 'delay', { ms: 800, text: 'in time' });
	await sleep(150);
	let t0 = Date.now();
	p.child.kill('SIGTERM');
	let r = await pr;
	let ex = await within(p.exited, T(5000));
	let ms = Date.now() - t0;
	ok(!r.error && textOf(r.value) === 'in time',
	    'term: SIGTERM with a deferred call that ends within the grace period: it is answered', outcome(r));
	ok(ex?.code === 0 && ms < T(3000), `term: then the server exits 0, without waiting out the grace period (${ms} ms)`, ex);
	await closeSdk(conn);

	// Past the grace period: the error, then the exit (the example's
	// timer thread finishes the cancelled call at once).
	({ conn, p } = await own(kind, DEFERRED, ['--grace-ms', '500'], `term-b-${kind}`));
	if (!ok(!conn.connectError, 'term: connect (--grace-ms 500)', conn.connectError && errText(conn.connectError)))
		return;
	pr = call(conn, 'delay', { ms: 60000, text: 'never' });
	await sleep(150);
	t0 = Date.now();
	p.child.kill('SIGTERM');
	r = await pr;
	const errAt = Date.now() - t0;
	ex = await within(p.exited, T(5000));
	ms = Date.now() - t0;
	ok(shuttingDown(r) && errAt >= 400 && errAt < T(2500),
	    `term: --grace-ms 500, a deferred call of 60 s: the error -32603 "server shutting down" when the grace period ends (${errAt} ms)`,
	    outcome(r));
	ok(ex?.code === 0 && ms < T(3000), `term: then the server exits 0 (${ms} ms)`, ex);
	await closeSdk(conn);

	// A holder that finishes late anyway: the exit waits for its finish.
	({ conn, p } = await own(kind, FEAT, ['--grace-ms', '300'], `term-c-${kind}`));
	if (!ok(!conn.connectError, 'term: connect to feat-server (--grace-ms 300)', conn.connectError && errText(conn.connectError)))
		return;
	pr = call(conn, 'late', { ms: 1500, text: 'stubborn', poll: false });
	await sleep(150);
	t0 = Date.now();
	p.child.kill('SIGTERM');
	r = await pr;
	ex = await within(p.exited, T(6000));
	ms = Date.now() - t0;
	ok(shuttingDown(r), 'term: a holder that ignores the cancel: the client gets the shutdown error all the same', outcome(r));
	ok(ex?.code === 0 && ms >= 1100 && ms < T(4000),
	    `term: and the server exits 0 once the call is finished, not before (${ms} ms)`, ex);
	await closeSdk(conn);
}

// ---- logs: notifications outside a call ------------------------------------------

async function logsGroup(kind) {
	const ids = {};
	const names = kind === 'stdio' ? ['A'] : ['A', 'B', 'C'];
	const cs = {};
	for (const n of names) {
		cs[n] = await open(kind, FEAT, [], `logs-${n}-${kind}`);
		if (!ok(!cs[n].connectError, `logs: connect ${n}`, cs[n].connectError && errText(cs[n].connectError)))
			return;
		const r = await call(cs[n], 'session_id', {});
		ids[n] = r.error ? null : textOf(r.value);
	}
	if (kind === 'stdio')
		ok(ids.A === 'stdio', 'logs: mcp_call_session_id on stdio is "stdio"', ids);
	else
		ok(names.every(n => ids[n] === cs[n].transport.sessionId) && new Set(Object.values(ids)).size === 3,
		    'logs: mcp_call_session_id is each session\'s Mcp-Session-Id', ids, names.map(n => cs[n].transport.sessionId));
	// The standalone GET stream carries what has no call: wait for it.
	for (const n of names) {
		let got = false;
		for (let i = 0; i < 15 && !got; i++) {
			await call(cs[n], 'notify_to', { session: ids[n], what: 'log', text: `probe ${n}` });
			got = await logArrives(cs[n], `probe ${n}`, 200);
		}
		ok(got, `logs: ${n}: a log message sent to its own session arrives`, cs[n].logs);
	}
	const quiet = async (ms = T(400)) => sleep(ms);
	const heard = (n, data) => cs[n].logs.some(l => l.params?.data === data);

	// To one session.
	const to = kind === 'stdio' ? 'A' : 'B';
	let r = await call(cs.A, 'notify_to', { session: ids[to], what: 'log', level: 'warn', text: 'to one' });
	const arrived = await logArrives(cs[to], 'to one');
	await quiet();
	ok(!r.error && textOf(r.value) === 'rc 0' && arrived &&
	    names.filter(n => n !== to).every(n => !heard(n, 'to one')),
	    `logs: mcp_server_log_to ${to} from A's call: it reaches ${to} alone`, outcome(r));
	const one = cs[to].logs.find(l => l.params?.data === 'to one')?.params;
	ok(one?.level === 'warning' && one?.logger === 'notify', 'logs: with its level (warning) and logger', one);

	// To all.
	r = await call(cs.A, 'notify_to', { what: 'log', text: 'to all' });
	for (const n of names)
		await logArrives(cs[n], 'to all');
	ok(!r.error && textOf(r.value) === 'rc 0' && names.every(n => heard(n, 'to all')),
	    `logs: mcp_server_log: it reaches every session (${names.join(', ')})`, outcome(r));

	// Each session's level.
	const lv = kind === 'stdio' ? 'A' : 'C';
	r = await settle(cs[lv].client.setLoggingLevel('error'));
	ok(!r.error, `logs: ${lv} sets logging/setLevel error`, r.error && errText(r.error));
	await call(cs.A, 'notify_to', { what: 'log', level: 'notice', text: 'notice to all' });
	await call(cs.A, 'notify_to', { session: ids[lv], what: 'log', level: 'info', text: 'info to one' });
	await call(cs.A, 'notify_to', { what: 'log', level: 'err', text: 'error to all' });
	const lvArrived = await logArrives(cs[lv], 'error to all');
	await quiet();
	ok(lvArrived && !heard(lv, 'notice to all') && !heard(lv, 'info to one'),
	    `logs: ${lv} gets the error, not the notice nor the info sent to it alone`,
	    cs[lv].logs.map(l => l.params?.data));
	if (kind === 'http')
		ok(heard('A', 'notice to all') && heard('B', 'notice to all'),
		    'logs: A and B, at the default level, get the notice', cs.A.logs.length, cs.B.logs.length);

	// list_changed and resources/updated to one session.
	const notes = (n, method) => cs[n].received.filter(e => e.msg.method === method);
	const before = Object.fromEntries(names.map(n => [n, notes(n, 'notifications/tools/list_changed').length]));
	r = await call(cs.A, 'notify_to', { session: ids[to], what: 'tools' });
	await quiet();
	ok(!r.error && textOf(r.value) === 'rc 0' &&
	    names.every(n => notes(n, 'notifications/tools/list_changed').length - before[n] === (n === to ? 1 : 0)),
	    `logs: tools/list_changed to ${to}: ${to} alone gets it, once`, outcome(r));
	r = await settle(cs[to].client.subscribeResource({ uri: 'test://watched-resource' }));
	ok(!r.error, `logs: ${to} subscribes to test://watched-resource`, r.error && errText(r.error));
	const ub = Object.fromEntries(names.map(n => [n, notes(n, 'notifications/resources/updated').length]));
	await call(cs.A, 'notify_to', { session: ids[to], what: 'updated' });
	if (kind === 'http')
		await call(cs.A, 'notify_to', { session: ids.A, what: 'updated' });	/* not subscribed */
	await quiet();
	ok(names.every(n => notes(n, 'notifications/resources/updated').length - ub[n] === (n === to ? 1 : 0)) &&
	    notes(to, 'notifications/resources/updated').at(-1)?.msg.params?.uri === 'test://watched-resource',
	    `logs: resources/updated to ${to}, subscribed, reaches it; to a session not subscribed, nothing`,
	    names.map(n => notes(n, 'notifications/resources/updated').length - ub[n]));

	// A session that is gone, or never was: MCP_ENOENT (-6).
	r = await call(cs.A, 'notify_to', { session: 'no-such-session', what: 'log', text: 'x' });
	ok(!r.error && textOf(r.value) === 'rc -6', 'logs: a session id nobody has: MCP_ENOENT', outcome(r));
	if (kind === 'http') {
		await settle(cs.C.transport.terminateSession(), 3000);
		await sleep(100);
		r = await call(cs.A, 'notify_to', { session: ids.C, what: 'log', text: 'too late' });
		ok(!r.error && textOf(r.value) === 'rc -6', 'logs: C ended its session (DELETE): a message to it is MCP_ENOENT',
		    outcome(r));
		r = await call(cs.A, 'notify_to', { session: ids.C, what: 'tools' });
		const r2 = await call(cs.A, 'notify_to', { session: ids.C, what: 'updated' });
		ok(textOf(r.value) === 'rc -6' && textOf(r2.value) === 'rc -6', 'logs: so are list_changed and updated to it',
		    outcome(r), outcome(r2));
	}
	for (const n of names)
		await closeSdk(cs[n]);

	// The example: a reminder from its timer thread to the caller's session.
	const ex = kind === 'stdio' ? ['A'] : ['A', 'B'];
	const es = {};
	for (const n of ex) {
		es[n] = await open(kind, DEFERRED, [], `remind-${n}-${kind}`);
		if (!ok(!es[n].connectError, `logs: connect ${n} to the example`, es[n].connectError && errText(es[n].connectError)))
			return;
	}
	if (kind === 'http') {
		/* the GET streams: a broadcast that both hear */
		let both = false;
		for (let i = 0; i < 15 && !both; i++) {
			await call(es.B, 'broadcast', { text: `hello ${i}` });
			await sleep(100);
			both = ex.every(n => heard2(es[n], `hello ${i}`));
		}
		ok(both, 'logs: the example\'s broadcast (mcp_server_log from a worker) reaches both sessions');
	}
	const t0 = Date.now();
	r = await call(es.A, 'remind', { ms: 300, text: 'ring' });
	ok(!r.error && /^reminder for session \S+ in 300 ms$/.test(textOf(r.value)),
	    'logs: the example\'s remind answers at once', outcome(r));
	const rang = await logArrives(es.A, 'ring', T(3000));
	const at = Date.now() - t0;
	await quiet();
	const ring = es.A.logs.find(l => l.params?.data === 'ring')?.params;
	ok(rang && at >= 250 && ring?.logger === 'reminder' && ring?.level === 'notice',
	    `logs: 300 ms later its timer thread's mcp_server_log_to reaches the session (${at} ms)`, es.A.logs);
	if (kind === 'http')
		ok(!heard2(es.B, 'ring'), 'logs: and only that session', es.B.logs);
	for (const n of ex)
		await closeSdk(es[n]);
}

const heard2 = (conn, data) => conn.logs.some(l => l.params?.data === data);

// ---- stress (stdio, raw): finishing races cancelling and timing out -----------------

async function stressGroup(kind) {
	if (kind !== 'stdio')
		return;
	const c = new RawStdio(FEAT, ['--tool-timeout', '40', '--workers', '2', '--max-workers', '4'],
	    'stress', { nextId: 1, clientName: 'libmcp-deferred-stress' });
	const init = await c.init('2025-06-18');
	if (!ok(init?.msg?.result, 'stress: initialize', init?.msg))
		return;
	const rnd = n => Math.floor(Math.random() * n);
	const ids = [];
	const cancelled = new Set();
	for (let i = 0; i < 300; i++) {
		const id = `s${i}`;
		const which = i % 3;
		const params = which === 0 ? { name: 'late', arguments: { ms: rnd(60), poll: Boolean(i % 2) }, _meta: { progressToken: id } } :
		    which === 1 ? { name: 'finish_inside', arguments: {} } :
		    { name: 'late', arguments: { ms: rnd(20), text: id } };
		await c.call('tools/call', params, id);
		ids.push(id);
		if (rnd(3) === 0) {
			const cid = ids[rnd(ids.length)];
			cancelled.add(cid);
			await c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: cid } });
		}
		if (i % 25 === 0)
			await sleep(rnd(30));
	}
	const done = await c.until(() => ids.every(id => cancelled.has(id) || c.responses(id).length > 0), T(20000));
	await sleep(T(300));
	const twice = ids.filter(id => c.responses(id).length > 1);
	const missing = ids.filter(id => !cancelled.has(id) && c.responses(id).length === 0);
	ok(done && twice.length === 0 && missing.length === 0,
	    `stress: 300 deferred calls (${cancelled.size} cancelled, time limit 40 ms): each answered at most once, the others exactly once`,
	    { twice, missing });
	await c.close();
	ok(c.p.exit?.code === 0, 'stress: end of input: exit 0', c.p.exit);
	ok(c.bad.length === 0, 'stress: every line on stdout is JSON', c.bad);

	// SIGTERM with 40 in flight, some past the grace period, some of
	// those with holders that do not look.
	const d = new RawStdio(FEAT, ['--workers', '2', '--grace-ms', '300'], 'stress-term',
	    { nextId: 1, clientName: 'libmcp-deferred-stress' });
	if (!ok((await d.init('2025-06-18'))?.msg?.result, 'stress: initialize (SIGTERM)'))
		return;
	const last = [];
	for (let i = 0; i < 40; i++) {
		const id = `t${i}`;
		await d.call('tools/call', { name: 'late', arguments: { ms: i % 2 ? 100 : 1500, poll: Boolean(i % 4) } }, id);
		last.push(id);
	}
	/* Every one running (its holder logs as it starts): the signal stops
	 * input, and what was not read yet would never be. */
	const running = await d.until(() => d.msgs.filter(e => e.msg?.method === 'notifications/message').length >= 40,
	    T(5000));
	ok(running, 'stress: 40 calls deferred, each holder running');
	d.child.kill('SIGTERM');
	const ex = await within(d.p.exited, T(8000));
	await sleep(100);
	const short = last.filter((id, i) => i % 2);
	ok(ex?.code === 0 && last.every(id => d.responses(id).length === 1) &&
	    short.every(id => d.responses(id)[0].msg.result !== undefined),
	    'stress: SIGTERM with 40 in flight: each answered once (the short ones with their result), exit 0',
	    ex, last.filter(id => d.responses(id).length !== 1), short.filter(id => d.responses(id)[0]?.msg.result === undefined));
}

// ---- main ------------------------------------------------------------------

function sanReports() {
	const dir = process.env.SAN_LOG_DIR;
	if (!dir || !existsSync(dir))
		return;
	const files = readdirSync(dir).filter(f => readFileSync(path.join(dir, f), 'utf8').trim() !== '');
	ok(files.length === 0, `no sanitizer report from any server (${dir})`,
	    files.map(f => readFileSync(path.join(dir, f), 'utf8').split('\n').slice(0, 30).join('\n')).join('\n----\n'));
}

async function main() {
	if (!ok(existsSync(DEFERRED) && existsSync(FEAT), `servers built: ${DEFERRED}, ${FEAT}`))
		return;
	const groups = { free: freeGroup, cancel: cancelGroup, timeout: timeoutGroup, term: termGroup, logs: logsGroup,
	    stress: stressGroup };
	for (const kind of KINDS)
		for (const g of GROUPS) {
			if (g === 'stress' && kind !== 'stdio')
				continue;
			tap.label = `${kind}: `;
			const t = Date.now();
			try {
				await groups[g](kind);
			} catch (e) {
				ok(false, `${g}: the group threw`, e?.stack ?? show(e));
			}
			diag(`${kind} ${g}: ${Date.now() - t} ms`);
		}
	tap.label = '';
	for (const [key, sp] of httpServers) {
		const { p, base } = await sp;
		if (base === null)
			continue;
		ok(p.exit === null, `the HTTP server ${key.replace(/^\S*\//, '')} is still running at the end`, p.exit);
		await stop(p, 'SIGTERM', T(8000));
		ok(p.exit?.code === 0, `it exits 0 on SIGTERM`, p.exit);
	}
	await sleep(200);
	sanReports();
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
end();
