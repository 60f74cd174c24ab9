// stages.mjs: SIGTERM at every stage of a call -- queued behind a busy
// worker, running, answered but not yet delivered to a client that is
// not reading, and streaming its notes -- on every transport: stdio, the
// legacy /sse with /messages, Streamable HTTP with SSE bodies, with JSON
// bodies (--json-response) and --stateless. Each case starts its own
// build/mcp-demo with one worker and a 1.5 s grace period, sends SIGTERM
// at that stage, and checks what the client gets: the answer of a call
// that finishes within the grace period, the "server shutting down"
// error of one that does not, every byte of an answer the client reads
// late; and that the server exits 0, in time. Prints TAP; exits 1 when
// an assertion fails. Node 20, no npm packages; loopback traffic only.
// Run from the repository root (test/stages.sh does).
//
//   node test/stages.mjs [NAME ...]	only the cases whose names contain NAME
import { Server as StdioServer, call as scall, ping as sping } from './hostile.mjs';
import { ok, runGroups, showJson as show, sleep, within } from './node/harness.mjs';
import {
	INIT, call, get, group, killAll, open, post, startServer, textOf,
} from './node/http-client.mjs';

const BASE = ['--workers', '1', '--max-workers', '1', '--grace-ms', '1500'];
// An answer larger than what the pipe (64 KiB) or the sockets' buffers
// (a few MiB each way on loopback) hold: it cannot all be written before
// the client reads.
const BIG_STDIO = 3 << 20;
const BIG_HTTP = 24 << 20;
const isShutdown = (m) => m && m.error && /shutting down/.test(m.error.message);

// ---- one client per transport, with the same few verbs ------------------

// stdio: the Server of hostile.mjs.
async function stdioClient(extra) {
	const s = new StdioServer([...BASE, ...extra]);
	await s.init();
	return {
		name: 'stdio', srv: s,
		send: (m) => s.write(m),
		answer: (id, ms) => s.answer(id, ms),
		got: (id) => JSON.stringify(s.answers(id)[0] || '').length,
		pause: () => s.proc.stdout.pause(),
		resume: () => s.proc.stdout.resume(),
		term: () => s.kill('SIGTERM'),
		exited: (ms) => within(s.exited, ms),
		notes: () => s.msgs.filter((m) => m.method === 'notifications/progress').length,
	};
}

// /sse: one stream; POSTs to its endpoint.
async function sseClient(extra) {
	const srv = await startServer([...BASE, ...extra]);
	const g = get(srv.port, { path: '/sse' });
	await g.until(() => g.items.some((i) => i.event === 'endpoint'), 5000);
	const sid = /sessionId=([0-9a-f]{32})/.exec(g.items[0].data)[1];
	const send = (m) => post(srv.port, m, { path: `/messages?sessionId=${sid}` }).done(20000);
	const cl = {
		name: '/sse', srv, send,
		answer: async (id, ms) => {
			await g.until(() => g.msgs.some((m) => m && m.id === id), ms);
			return g.msgs.find((m) => m && m.id === id);
		},
		got: () => g.bytes,
		pause: () => g.res.pause(),
		resume: () => g.res.resume(),
		term: () => srv.kill('SIGTERM'),
		exited: (ms) => within(srv.exited, ms),
		notes: () => g.msgs.filter((m) => m && m.method === 'notifications/progress').length,
	};
	srv.expectExit = true;
	await send(INIT('i', '2024-11-05'));
	await cl.answer('i', 3000);
	return cl;
}

// /mcp: one POST per request, each read as it comes.
async function mcpClient(extra, name) {
	const srv = await startServer([...BASE, ...extra]);
	const stateless = extra.includes('--stateless');
	const sid = stateless ? undefined : await open(srv);
	const xs = new Map();
	let paused = false;
	srv.expectExit = true;
	return {
		name, srv,
		send: (m) => {
			const x = post(srv.port, m, { sid });
			if (paused)
				x.req.on('response', (r) => r.pause());
			xs.set(m.id, x);
		},
		answer: async (id, ms) => {
			const x = xs.get(id);
			await x.done(ms);
			return x.answer(id);
		},
		got: (id) => (xs.get(id).complete ? xs.get(id).bytes : 0),
		pause: () => { paused = true; },
		resume: () => {
			for (const x of xs.values())
				if (x.res)
					x.res.resume();
		},
		term: () => srv.kill('SIGTERM'),
		exited: (ms) => within(srv.exited, ms),
		notes: () => [...xs.values()].reduce((n, x) =>
		    n + x.msgs.filter((m) => m.method === 'notifications/progress').length, 0),
	};
}

const TRANSPORTS = [
	['stdio', (x) => stdioClient(x)],
	['/sse', (x) => sseClient(x)],
	['/mcp', (x) => mcpClient(x, '/mcp')],
	['/mcp --json-response', (x) => mcpClient(['--json-response', ...x], '/mcp --json-response')],
	['/mcp --stateless', (x) => mcpClient(['--stateless', ...x], '/mcp --stateless')],
];

// ---- the stages ------------------------------------------------------------

const callOf = (cl) => (cl.name === 'stdio' ? scall : call);

// Queued: the one worker runs A; B waits behind it.
async function queued(t, make, what) {
	const cl = await make([]);
	const c = callOf(cl);
	cl.send(c('A', 'sleep', { ms: 600 }));
	cl.send(c('B', 'echo', { text: 'behind A' }));
	cl.send(c('C', 'sleep', { ms: 5000 }));
	await sleep(200);
	const t0 = Date.now();
	cl.term();
	const [a, b, cc] = await Promise.all([cl.answer('A', 6000), cl.answer('B', 6000), cl.answer('C', 6000)]);
	const ex = await cl.exited(8000);
	t.ok(textOf(a) === 'slept 600 ms' && textOf(b) === 'behind A' && isShutdown(cc),
	    `${what}: SIGTERM with a call queued behind a running one: both finish within the grace period; ` +
	    'the one that cannot gets "server shutting down"', show([a, b, cc]));
	t.ok(ex && ex.code === 0 && ex.at - t0 < 5000, `${what}: queued: exit 0 (${ex && ex.at - t0} ms)`, show(ex));
}

// Running: one call inside the grace period, one past it.
async function running(t, make, what) {
	const cl = await make(['--max-workers', '2', '--workers', '2']);
	const c = callOf(cl);
	cl.send(c('short', 'sleep', { ms: 800 }));
	cl.send(c('long', 'sleep', { ms: 8000 }));
	await sleep(200);
	const t0 = Date.now();
	cl.term();
	const [s, l] = await Promise.all([cl.answer('short', 6000), cl.answer('long', 6000)]);
	const ex = await cl.exited(8000);
	t.ok(textOf(s) === 'slept 800 ms' && isShutdown(l) && l.id === 'long',
	    `${what}: SIGTERM with calls running: the short one's result, the long one's "server shutting down"`,
	    show([s, l]));
	t.ok(ex && ex.code === 0 && ex.at - t0 >= 1300 && ex.at - t0 < 5000,
	    `${what}: running: exit 0 after the grace period (${ex && ex.at - t0} ms)`, show(ex));
}

// Answered, not delivered: the client stops reading, an answer bigger
// than the socket and pipe buffers is made, SIGTERM, then the client
// reads again: it gets every byte.
async function unsent(t, make, what) {
	const big = what === 'stdio' ? BIG_STDIO : BIG_HTTP;
	const cl = await make(['--max-message', String(big + 4096)]);
	const c = callOf(cl);
	cl.pause();
	const text = 'u'.repeat(big);
	cl.send(c('big', 'echo', { text }));
	await sleep(what === 'stdio' ? 500 : 1500);
	const t0 = Date.now();
	cl.term();
	await sleep(400);
	const early = await cl.exited(0);
	const resumed = Date.now();
	cl.resume();
	const a = await cl.answer('big', 15000);
	const ex = await cl.exited(15000);
	const got = cl.got('big');
	t.ok(!early && got >= big && textOf(a) === text,
	    `${what}: SIGTERM with a ${big >> 20} MiB answer made but not yet read: the server waits, and ` +
	    'the client that reads again gets all of it', `exited before the read: ${show(early)}, got ${got}`);
	t.ok(ex && ex.code === 0 && ex.at >= resumed && ex.at - t0 < 6000,
	    `${what}: unsent: exit 0 once it went out (${ex && ex.at - t0} ms)`, show(ex));
}

// Streaming: a call sending progress notes every 100 ms.
async function streaming(t, make, what) {
	const cl = await make([]);
	const c = callOf(cl);
	const m = c('st', 'sleep', { ms: 900 });
	m.params._meta = { progressToken: 'pt' };
	cl.send(m);
	await sleep(350);
	const before = cl.notes();
	const t0 = Date.now();
	cl.term();
	const a = await cl.answer('st', 6000);
	const ex = await cl.exited(8000);
	const json = what.includes('json');
	t.ok(textOf(a) === 'slept 900 ms' && (json || cl.notes() > before),
	    `${what}: SIGTERM while a call streams its progress: ${json ? '' : 'the notes go on, then '}its result`,
	    `${before} notes before, ${cl.notes()} after`, show(a));
	t.ok(ex && ex.code === 0 && ex.at - t0 < 5000, `${what}: streaming: exit 0 (${ex && ex.at - t0} ms)`, show(ex));
}

const STAGES = [['queued', queued], ['running', running], ['unsent', unsent], ['streaming', streaming]];

async function main() {
	const tests = [];
	for (const [tname, make] of TRANSPORTS)
		for (const [sname, fn] of STAGES)
			tests.push([`${tname} ${sname}`, (t) => fn(t, make, tname), 30000]);
	await runGroups(tests, { run: group, times: 'STAGES_TIMES' });
	killAll();
	process.exit(process.exitCode);
}

main();
