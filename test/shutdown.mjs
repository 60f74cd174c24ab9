// shutdown.mjs: how build/mcp-demo ends: at end of input, on SIGTERM and
// SIGINT (with and without calls outliving the grace period, and with a
// second signal), and when its reader goes away. Prints TAP; exits 1 when
// an assertion fails. Uses the server of test/hostile.mjs and the harness
// of test/node/harness.mjs. Run from the repository root (test/shutdown.sh
// does).
import { spawn } from 'node:child_process';
import { SERVER, Server, call, ping } from './hostile.mjs';
import { ok, runGroups, showJson as show, sleep, within } from './node/harness.mjs';

const slept = (m, ms) => m && m.result && !m.result.isError &&
    m.result.content[0].text === `slept ${ms} ms`;
const shuttingDown = (m, id) => m && m.id === id && m.error &&
    m.error.code === -32603 && /^server shutting down/.test(m.error.message) &&
    !('result' in m);

async function eofInFlight() {
	const s = new Server();
	await s.init();
	await s.lines(call('s', 'sleep', { ms: 300 }), call('e1', 'echo', { text: 'one' }),
	    call('e2', 'echo', { text: 'two' }), call('e3', 'echo', { text: 'three' }),
	    ping('p'));
	const t0 = Date.now();
	s.proc.stdin.end();
	const ex = await s.waitExit(15000);
	const ms = Date.now() - t0;
	ok(slept(s.answers('s')[0], 300) && s.answers('s').length === 1,
	    'EOF with a sleep 300 in flight: its result arrives, once', show(s.answers('s')));
	ok(['e1', 'e2', 'e3', 'p'].every((id) => s.answers(id).length === 1) &&
	    s.answers('e3')[0].result.content[0].text === 'three',
	    'EOF: the echos and the ping sent before it are all answered', show(s.msgs.slice(1)));
	ok(ex && ex.code === 0 && ex.signal === null, 'EOF: the process exits 0', show(ex));
	ok(ms >= 200 && ms < 5000, 'EOF: it waits for the sleep, then exits promptly', `${ms} ms`);
	await s.until(() => s.stdoutEnded, 2000);
	ok(s.stdoutEnded && s.bad.length === 0 && s.msgs.length === 6,
	    'EOF: stdout is closed, with nothing more on it', show(s.bad));
}

async function eofLongCall() {
	const s = new Server(['--grace-ms', '100']);
	await s.init();
	await s.write(call('long', 'sleep', { ms: 1500 }));
	const t0 = Date.now();
	s.proc.stdin.end();
	const ex = await s.waitExit(20000);
	const ms = Date.now() - t0;
	ok(slept(s.answers('long')[0], 1500) && ex && ex.code === 0 && ms >= 1300,
	    'EOF: a call longer than the grace period still finishes and is answered (no grace at EOF)',
	    show(s.answers('long')), show(ex), `${ms} ms`);
}

async function termShortCall(sig) {
	const s = new Server();
	await s.init();
	await s.write(call('s', 'sleep', { ms: 300 }));
	await sleep(50);
	const t0 = Date.now();
	s.kill(sig);
	const ex = await s.waitExit(15000);
	const ms = Date.now() - t0;
	ok(slept(s.answers('s')[0], 300) && s.answers('s').length === 1,
	    `${sig} with a sleep 300 in flight: its result arrives`, show(s.msgs.slice(1)), s.stderr.slice(-300));
	ok(ex && ex.code === 0 && ex.signal === null, `${sig}: exits 0`, show(ex));
	ok(ms < 3000, `${sig}: exits as soon as the call is done, not after the 5 s grace`, `${ms} ms`);
}

async function termGraceOver(sig) {
	const s = new Server(['--grace-ms', '500']);
	await s.init();
	await s.write(call('long', 'sleep', { ms: 60000 }));
	await s.write(call('short', 'sleep', { ms: 100 }));
	await sleep(50);
	const t0 = Date.now();
	s.kill(sig);
	const got = await s.until(() => s.answers('long').length > 0, 10000);
	const ms = Date.now() - t0;
	const ex = await s.waitExit(10000);
	const total = Date.now() - t0;
	const a = s.answers('long');
	ok(got && a.length === 1 && shuttingDown(a[0], 'long'),
	    `${sig}, --grace-ms 500, sleep 60000 in flight: an error -32603 "server shutting down" for its id`,
	    show(a));
	ok(ms >= 400 && ms < 4000, `${sig}: the error comes when the grace period ends (~0.5 s)`, `${ms} ms`);
	ok(slept(s.answers('short')[0], 100), `${sig}: a call that ends within the grace period gets its result`,
	    show(s.answers('short')));
	ok(ex && ex.code === 0 && ex.signal === null && total < 5000, `${sig}: then exits 0`, show(ex), `${total} ms`);
	await s.until(() => s.stdoutEnded, 2000);
	ok(s.stdoutEnded && s.msgs.length === 3 && s.bad.length === 0,
	    `${sig}: stdout closes; nothing else was written`, show(s.msgs.slice(1)));
}

async function secondSignal() {
	const s = new Server(['--grace-ms', '20000']);
	await s.init();
	await s.write(call('long', 'sleep', { ms: 60000 }));
	await sleep(50);
	s.kill('SIGTERM');
	await sleep(400);
	ok(s.alive() && s.answers('long').length === 0,
	    'after one SIGTERM, with a 20 s grace period, the server is still waiting for the call');
	const t0 = Date.now();
	s.kill('SIGTERM');
	const ex = await s.waitExit(10000);
	const ms = Date.now() - t0;
	ok(shuttingDown(s.answers('long')[0], 'long') && s.answers('long').length === 1,
	    'a second SIGTERM during the grace period: the call gets the shutdown error at once',
	    show(s.answers('long')));
	ok(ex && ex.code === 0 && ex.signal === null && ms < 3000,
	    'a second SIGTERM ends the grace period: exits 0 at once', show(ex), `${ms} ms`);
}

async function sigintThenSigterm() {
	const s = new Server(['--grace-ms', '20000']);
	await s.init();
	await s.write(call('long', 'sleep', { ms: 60000 }));
	await sleep(50);
	s.kill('SIGINT');
	await sleep(300);
	const t0 = Date.now();
	s.kill('SIGTERM');
	const ex = await s.waitExit(10000);
	ok(shuttingDown(s.answers('long')[0], 'long') && ex && ex.code === 0 &&
	    Date.now() - t0 < 3000,
	    'SIGINT then SIGTERM: the second signal ends the grace period, exit 0',
	    show(s.answers('long')), show(ex));
}

async function termIdle() {
	const s = new Server();
	await s.init();
	const t0 = Date.now();
	s.kill('SIGTERM');
	const ex = await s.waitExit(10000);
	ok(ex && ex.code === 0 && ex.signal === null && Date.now() - t0 < 2000,
	    'SIGTERM with nothing in flight: exits 0 at once', show(ex));
}

async function termBatch() {
	const s = new Server(['--grace-ms', '300']);
	await s.init('2025-03-26');
	await s.write([ping('bp'), call('bs', 'sleep', { ms: 60000 })]);
	await sleep(100);
	s.kill('SIGTERM');
	const ex = await s.waitExit(10000);
	const arr = s.msgs.find((m) => Array.isArray(m));
	const byId = Object.fromEntries((arr || []).map((m) => [m.id, m]));
	ok(arr && arr.length === 2 && byId.bp && byId.bp.result && shuttingDown(byId.bs, 'bs'),
	    'a batch (2025-03-26) with a call outliving the grace period: one array with the ping and the shutdown error',
	    show(s.msgs.slice(1)));
	ok(ex && ex.code === 0, 'exits 0 after the batch', show(ex));
}

async function readerGone() {
	const s = new Server();
	await s.init();
	await s.write(call('long', 'sleep', { ms: 60000 }));
	s.proc.stdout.destroy();
	await sleep(100);
	// Give the server something to write, so it finds out.
	for (let i = 0; i < 5; i++)
		await s.write(call(`e${i}`, 'echo', { text: 'x'.repeat(1000) }));
	const t0 = Date.now();
	let ex = await within(s.exited, 2000);
	const early = ex !== null;
	if (!ex) {
		s.proc.stdin.end();
		ex = await within(s.exited, 2000);
	}
	const ms = Date.now() - t0;
	ok(ex !== null, 'stdout closed by the reader (EPIPE), a sleep 60000 in flight: the server terminates',
	    `${early ? 'on its own' : 'after stdin closed'}, ${ms} ms`, s.stderr.slice(-400));
	ok(ex && ex.code === 0 && ex.signal === null, 'it exits with status 0', show(ex));
	if (!ex)
		s.kill();
}

async function readerGoneIdle() {
	const s = new Server();
	await s.init();
	s.proc.stdout.destroy();
	await sleep(100);
	await s.write(call('e', 'echo', { text: 'nobody reads this' }));
	await sleep(100);
	s.proc.stdin.end();
	const ex = await within(s.exited, 2000);
	ok(ex && ex.code === 0 && ex.signal === null,
	    'stdout closed by the reader, nothing in flight: exits 0 within 2 s of stdin closing', show(ex));
	if (!ex)
		s.kill();
}

async function termStuckOutput() {
	const s = new Server(['--grace-ms', '300']);
	await s.init();
	s.proc.stdout.pause();
	const text = 'y'.repeat(10000);
	let buf = '';
	for (let i = 0; i < 2000; i++)
		buf += JSON.stringify(call(i, 'echo', { text })) + '\n';
	s.write(buf);
	await sleep(1000);
	const t0 = Date.now();
	s.kill('SIGTERM');
	const ex = await s.waitExit(15000);
	const ms = Date.now() - t0;
	ok(ex && ex.code === 0 && ex.signal === null && ms < 6000,
	    'SIGTERM while the client reads nothing (output stuck): exits 0 within grace + 2 s',
	    show(ex), `${ms} ms`, s.stderr.slice(-300));
	s.proc.stdout.resume();
}

// Starts the server through sh with one of its standard descriptors
// closed (REDIR is "<&-" or ">&-"); returns its exit status and signal.
function closedFd(redir, input) {
	return new Promise((resolve) => {
		const p = spawn('sh', ['-c', `exec "$0" ${redir}`, SERVER],
		    { stdio: ['pipe', 'pipe', 'pipe'] });
		let err = '';
		p.stderr.on('data', (d) => { err += d; });
		p.stdout.on('data', () => {});
		p.stdin.on('error', () => {});
		const timer = setTimeout(() => p.kill('SIGKILL'), 10000);
		p.on('exit', (code, signal) => {
			clearTimeout(timer);
			resolve({ code, signal, err: err.slice(-300) });
		});
		p.stdin.end(input);
	});
}

async function closedStdio() {
	let r = await closedFd('<&-', '');
	ok(r.code === 0 && r.signal === null,
	    'started with standard input closed: exits 0 (no input), no crash', show(r));
	r = await closedFd('>&-', `${JSON.stringify(ping(1))}\n`);
	ok(r.code === 0 && r.signal === null,
	    'started with standard output closed: exits 0, no crash', show(r));
}

async function main() {
	await runGroups([
		['EOF with calls in flight', eofInFlight],
		['EOF with a long call', eofLongCall],
		['SIGTERM, short call', () => termShortCall('SIGTERM')],
		['SIGINT, short call', () => termShortCall('SIGINT')],
		['SIGTERM, grace over', () => termGraceOver('SIGTERM')],
		['SIGINT, grace over', () => termGraceOver('SIGINT')],
		['second SIGTERM', secondSignal],
		['SIGINT then SIGTERM', sigintThenSigterm],
		['SIGTERM idle', termIdle],
		['SIGTERM with a batch', termBatch],
		['reader gone', readerGone],
		['reader gone, idle', readerGoneIdle],
		['SIGTERM, output stuck', termStuckOutput],
		['closed stdio', closedStdio],
	], { times: 'SHUTDOWN_TIMES' });
}

main();
