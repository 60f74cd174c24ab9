// gateway-faults.mjs: mcp-gateway serving a stdio server that fails, over
// real sockets and processes, with the processes checked in /proc. Prints
// TAP.
//
//   node gateway-faults.mjs GATEWAY MCP_DEMO QUIRK_SERVER [memcheck]
//
// With "memcheck", GATEWAY runs under valgrind (memcheck, exit 99 on an
// error or a definite leak) through a shorter conversation, and its exit
// status is checked.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const [GW, DEMO, QUIRK, mode] = process.argv.slice(2);
const memcheck = mode === 'memcheck';
let n = 0, failed = 0;
const ok = (cond, what, info) => {
	n++;
	if (!cond) failed++;
	console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${what}`);
	if (!cond && info !== undefined)
		console.log(String(info).split('\n').slice(-15).map((l) => `#   ${l}`).join('\n'));
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(fn, ms, step = 50) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await fn();
		if (v || Date.now() > end) return v;
		await sleep(step);
	}
}

// ---- processes ----------------------------------------------------------

function start(args) {
	const argv = memcheck ? ['valgrind', '-q', '--leak-check=full',
	    '--errors-for-leak-kinds=definite', '--error-exitcode=99', GW, ...args] : [GW, ...args];
	const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
	const g = { p, log: '', port: 0, exited: null };
	p.stderr.setEncoding('utf8');
	p.stderr.on('data', (d) => { g.log += d; });
	p.on('exit', (code, sig) => { g.exited = { code, sig }; });
	return until(() => {
		const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(g.log);
		if (m) g.port = Number(m[1]);
		return g.port || g.exited;
	}, memcheck ? 30000 : 10000).then(() => g);
}
async function stop(g, sig = 'SIGTERM') {
	if (!g.exited) {
		g.p.kill(sig);
		await until(() => g.exited, 30000);
	}
	if (memcheck)
		ok(g.exited && g.exited.code === 0, `memcheck: no memory error or leak in that gateway (exit ${JSON.stringify(g.exited)})`, g.log);
	return g.exited;
}
// The gateway's own pid (valgrind runs it in the process it starts).
const gwpid = (g) => g.p.pid;
function children(pid) {
	const out = [];
	for (const d of readdirSync('/proc')) {
		if (!/^\d+$/.test(d)) continue;
		let st;
		try { st = readFileSync(`/proc/${d}/stat`, 'utf8'); } catch { continue; }
		const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
		if (Number(f[1]) === pid) out.push({ pid: Number(d), state: f[0] });
	}
	return out;
}
const alive = (pid) => { try { readFileSync(`/proc/${pid}/stat`); return true; } catch { return false; } };
const fds = (pid) => readdirSync(`/proc/${pid}/fd`).length;
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

// ---- HTTP ---------------------------------------------------------------

// POST MSG to /mcp; the messages of the answer (JSON or SSE), its status
// and session id.
async function post(g, sid, msg, timeoutMs = 30000) {
	const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
	if (sid) headers['mcp-session-id'] = sid;
	const ctl = new AbortController();
	const t = setTimeout(() => ctl.abort(), timeoutMs);
	try {
		const r = await fetch(`http://127.0.0.1:${g.port}/mcp`, { method: 'POST', headers, body: JSON.stringify(msg), signal: ctl.signal });
		const text = await r.text();
		let msgs = [];
		if ((r.headers.get('content-type') || '').startsWith('text/event-stream'))
			msgs = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).map((l) => JSON.parse(l.slice(6)));
		else if (text.length > 0)
			try { msgs = [JSON.parse(text)]; } catch { msgs = []; }
		return { status: r.status, sid: r.headers.get('mcp-session-id'), msgs, text };
	} catch (e) {
		return { status: 0, msgs: [], text: String(e) };
	} finally {
		clearTimeout(t);
	}
}
const answerOf = (r, id) => r.msgs.find((m) => m.id === id && m.method === undefined);
async function open(g) {
	const r = await post(g, null, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {
	    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'faults', version: '1' } } });
	if (r.sid)
		await post(g, r.sid, { jsonrpc: '2.0', method: 'notifications/initialized' });
	return r;
}
const call = (g, sid, id, name, args, ms) => post(g, sid, { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }, ms);
async function del(g, sid) {
	const r = await fetch(`http://127.0.0.1:${g.port}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': sid } });
	await r.text();
	return r.status;
}
const quirk = (q) => ['node', QUIRK, 'stdio', q];
const T = memcheck ? 60000 : 20000;

// ---- a child killed mid-call: the call's error at once, then 404 --------

{
	const g = await start(['--http', '127.0.0.1:0', '--', DEMO]);
	const o = await open(g);
	ok(o.status === 200 && o.sid, 'a session through the gateway', g.log);
	const pending = call(g, o.sid, 2, 'sleep', { ms: 60000 }, 60000);
	const kids = await until(() => children(gwpid(g)).filter((c) => c.state !== 'Z').length === 1 &&
	    children(gwpid(g)), T);
	await sleep(300);	// the call has reached the child
	const t0 = Date.now();
	if (kids) process.kill(kids[0].pid, 'SIGKILL');
	const r = await pending;
	const a = answerOf(r, 2);
	ok(a && a.error && /was killed by signal 9/.test(a.error.message),
	    'a child killed mid-call: the call gets an error naming the signal', JSON.stringify(r.msgs));
	ok(Date.now() - t0 < 5000, `... at once (${Date.now() - t0} ms), not when the call would have ended`);
	const r2 = await call(g, o.sid, 3, 'echo', { text: 'x' });
	ok(r2.status === 404, `... and the session ends: its next request gets 404 (${r2.status})`, r2.text);
	ok(await until(() => children(gwpid(g)).length === 0, T), '... the child is reaped, no zombie');
	const e = await stop(g);
	ok(e && (e.code === 0), `the gateway exits 0 on SIGTERM (${JSON.stringify(e)})`, g.log);
}

// ---- back-to-back requests on one kept-alive connection -----------------

// A request read while the loop is in its prepare phase (where the
// server answers) was sent to the child only at the next timer, 200 ms
// later: 50 in a row took 10 s. They take milliseconds each.
{
	const g = await start(['--http', '127.0.0.1:0', '--', DEMO]);
	const o = await open(g);
	const t0 = Date.now();
	let good = 0;
	for (let i = 0; i < 50; i++) {
		const r = await call(g, o.sid, 10 + i, 'echo', { text: `k${i}` });
		if (answerOf(r, 10 + i)?.result?.content?.[0]?.text === `k${i}`) good++;
	}
	const ms = Date.now() - t0;
	ok(good === 50, `50 calls one after the other, each answered (${good})`);
	ok(ms < (memcheck ? 30000 : 5000), `... none waits for a timer: ${ms} ms for 50 (a 200 ms stall each would be 10 s)`);
	await del(g, o.sid);
	await stop(g);
}

// ---- SIGTERM mid-call: the call finishes, then the gateway exits --------

{
	const g = await start(['--http', '127.0.0.1:0', '--', DEMO]);
	const o = await open(g);
	const pending = call(g, o.sid, 2, 'sleep', { ms: 1500 });
	const kid = await until(() => children(gwpid(g))[0], T);
	await sleep(300);
	g.p.kill('SIGTERM');
	const r = await pending;
	const a = answerOf(r, 2);
	ok(a && a.result && /slept 1500 ms/.test(JSON.stringify(a.result)),
	    'SIGTERM mid-call: the call still gets its answer (the grace period)', JSON.stringify(r.msgs) + g.log);
	const e = await until(() => g.exited, T);
	ok(e && e.code === 0, `... and the gateway exits 0 (${JSON.stringify(e)})`, g.log);
	ok(kid && !alive(kid.pid), '... its child is gone with it');
	await stop(g);
}

// ---- junk on the child's stdout: logged, skipped ------------------------

{
	const g = await start(['--http', '127.0.0.1:0', '-v', '--', ...quirk('junk')]);
	const o = await open(g);
	const r = await call(g, o.sid, 2, 'q', {});
	const a = answerOf(r, 2);
	ok(a && a.result && a.result.content[0].text === 'ok', 'a child that writes junk lines: the answers still come', JSON.stringify(r.msgs) + g.log);
	ok(/not JSON|not a JSON|skipp/i.test(g.log), '... and the junk is logged', g.log);
	await del(g, o.sid);
	await stop(g);
}

// ---- a child that never answers initialize ------------------------------

{
	const g = await start(['--http', '127.0.0.1:0', '--init-timeout', '1', '--', ...quirk('mute')]);
	const t0 = Date.now();
	const o = await open(g);
	const a = answerOf(o, 1);
	ok(a && a.error && /did not answer initialize within 1 s/.test(a.error.message),
	    'a child that never answers initialize: a clear error', JSON.stringify(o.msgs) + g.log);
	ok(Date.now() - t0 < (memcheck ? 15000 : 4000), `... within the timeout (${Date.now() - t0} ms)`);
	ok(await until(() => children(gwpid(g)).length === 0, T), '... and the child is ended and reaped');
	await stop(g);
}

// ---- a child that ignores SIGTERM and EOF; its stderr in the log --------

{
	const g = await start(['--http', '127.0.0.1:0', '--', ...quirk('stubborn')]);
	const o = await open(g);
	const l = await post(g, o.sid, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
	ok(answerOf(l, 2)?.result?.tools?.length === 1, 'a stubborn child serves', l.text);
	ok(await until(() => new RegExp(`session ${o.sid.slice(0, 8)}: stderr: stubborn: tools/list`).test(g.log), 5000),
	    "... its stderr goes to the gateway's log, tagged with the session", g.log);
	const kid = children(gwpid(g))[0];
	const t0 = Date.now();
	ok(await del(g, o.sid) === 200, '... DELETE ends its session');
	await sleep(1000);
	ok(kid && alive(kid.pid), '... it outlives the closing of its stdin and SIGTERM for a while');
	ok(await until(() => !alive(kid.pid), 10000), `... then SIGKILL ends it, reaped (${Date.now() - t0} ms)`);
	ok(children(gwpid(g)).length === 0, '... no zombie left');
	await stop(g);
}

// ---- --max-children: 503 with the reason --------------------------------

{
	const g = await start(['--http', '127.0.0.1:0', '--max-children', '2', '--', DEMO]);
	const a = await open(g), b = await open(g), c = await open(g);
	ok(a.status === 200 && b.status === 200, 'two sessions under --max-children 2');
	ok(c.status === 503 && /--max-children/.test(c.text), `the third gets 503 with the reason (${c.status} ${c.text})`);
	await del(g, a.sid);
	const d = await until(async () => { const r = await open(g); return r.status === 200 ? r : null; }, 5000, 200);
	ok(d && d.status === 200, 'once one has ended, a new session opens');
	await stop(g);
}

// ---- --shared: one child; restarted when it dies; sessions wait ---------

{
	const g = await start(['--http', '127.0.0.1:0', '--shared', '--', DEMO]);
	const a = await open(g), b = await open(g);
	const ra = await call(g, a.sid, 2, 'echo', { text: 'a' }), rb = await call(g, b.sid, 2, 'echo', { text: 'b' });
	ok(answerOf(ra, 2)?.result?.content?.[0]?.text === 'a' && answerOf(rb, 2)?.result?.content?.[0]?.text === 'b',
	    '--shared: two sessions, the same id, each its own answer', ra.text + rb.text);
	ok(children(gwpid(g)).length === 1, '... through one child');
	const pending = call(g, a.sid, 3, 'sleep', { ms: 60000 }, 60000);
	await sleep(500);
	const old = children(gwpid(g))[0];
	process.kill(old.pid, 'SIGKILL');
	const rp = await pending;
	ok(answerOf(rp, 3)?.error, '... the child killed: the call in flight gets an error', rp.text);
	const c = await open(g);
	ok(c.status === 200 && answerOf(c, 1)?.result?.serverInfo, '... a new session waits for the restarted child', c.text + g.log);
	ok(/restarting the shared server/.test(g.log), '... which the log says');
	const rc = await call(g, c.sid, 2, 'echo', { text: 'c' });
	ok(answerOf(rc, 2)?.result?.content?.[0]?.text === 'c', '... and it serves', rc.text);
	const kids = children(gwpid(g));
	ok(kids.length === 1 && kids[0].pid !== old.pid, '... one new child, the old one reaped');
	await stop(g);
}

// ---- --stateless: a child per request -----------------------------------

{
	const g = await start(['--http', '127.0.0.1:0', '--stateless', '--', DEMO]);
	const r = await call(g, null, 7, 'echo', { text: 'once' });
	ok(answerOf(r, 7)?.result?.content?.[0]?.text === 'once', '--stateless: a request with no session is answered', r.text + g.log);
	ok(await until(() => children(gwpid(g)).length === 0, T), '... and its child ends with it');
	await stop(g);
}

// ---- 200 sessions, each its own child; all closed; twice ---------------

// N sessions with a call each, then all deleted; the gateway's RSS with
// them open and after.
async function cycle(g, N, round) {
	const sids = [];
	for (let i = 0; i < N; i += 20) {
		const batch = await Promise.all(Array.from({ length: Math.min(20, N - i) }, () => open(g)));
		for (const o of batch) sids.push(o.sid);
	}
	ok(sids.every((s) => s), `round ${round}: ${N} sessions open`);
	ok(children(gwpid(g)).length === N, `... with ${N} children (${children(gwpid(g)).length})`);
	const rs = await Promise.all(sids.map((s, i) => call(g, s, 2, 'echo', { text: `n${i}` })));
	ok(rs.every((r, i) => answerOf(r, 2)?.result?.content?.[0]?.text === `n${i}`), '... each answered by its own child');
	const fd = fds(gwpid(g)), rss = rssKb(gwpid(g));
	const st = await Promise.all(sids.map((s) => del(g, s)));
	ok(st.every((s) => s === 200), `... all ${N} deleted at once`);
	ok(await until(() => children(gwpid(g)).length === 0, 30000, 200), `... every child ended and reaped (${children(gwpid(g)).length} left)`);
	return { fd, rss };
}

if (!memcheck) {
	const N = 200;
	const g = await start(['--http', '127.0.0.1:0', '--max-children', String(N + 10), '--', DEMO]);
	await sleep(200);
	const fd0 = fds(gwpid(g)), rss0 = rssKb(gwpid(g));
	const c1 = await cycle(g, N, 1);
	const fd1 = await until(() => fds(gwpid(g)) <= fd0 && fds(gwpid(g)), 5000) || fds(gwpid(g));
	ok(fd1 <= fd0, `... no fd leaked: ${fd0} at the start, ${c1.fd} with ${N} sessions, ${fd1} after`);
	const rss1 = rssKb(gwpid(g));
	const c2 = await cycle(g, N, 2);
	const fd2 = await until(() => fds(gwpid(g)) <= fd0 && fds(gwpid(g)), 5000) || fds(gwpid(g));
	ok(fd2 <= fd0, `... no fd leaked: ${fd2} after`);
	const rss2 = rssKb(gwpid(g));
	console.log(`# RSS (KiB): ${rss0} at the start; ${c1.rss} with ${N} sessions, ${rss1} after; ${c2.rss} with ${N} again, ${rss2} after`);
	// AddressSanitizer keeps what is freed in quarantine (its design):
	// there LeakSanitizer checks for leaks, and these two do not apply.
	if (!process.env.MCP_SANITIZE) {
		ok(rss1 - rss0 < 4096 && rss2 - rss0 < 4096, `... memory back near its start after each round (${rss0} -> ${rss1}, ${rss2} KiB)`);
		ok(c2.rss - c1.rss < 2048, `... and a second round takes no more than the first (${c1.rss}, ${c2.rss} KiB)`);
	}
	await stop(g);
}

console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
