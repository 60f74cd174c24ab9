// stdio-stress.mjs SERVER: a concurrency stress of a stdio server (the
// ThreadSanitizer run of test/tsan.sh): 4,000 calls pipelined at once,
// echoes, adds and sleeps of 0 to 20 ms, one in five cancelled while in
// flight, duplicates of ids in flight, then 40 sleeps of 2 s and SIGTERM
// in their middle. Checks that every request is answered exactly once
// (a result, or the shutdown error, or nothing for a cancelled one) and
// that the server exits 0. Prints one JSON line of counts; exits 1 on a
// failure. Node 20, no npm packages.
import { spawn } from 'node:child_process';

const srv = spawn(process.argv[2], ['--grace-ms', '500', '--workers', '4'], { stdio: ['pipe', 'pipe', 'inherit'] });
const answers = new Map();
let buf = '', bad = 0;
srv.stdout.setEncoding('utf8');
srv.stdout.on('data', (d) => {
	buf += d;
	let k;
	while ((k = buf.indexOf('\n')) >= 0) {
		const line = buf.slice(0, k);
		buf = buf.slice(k + 1);
		let m;
		try { m = JSON.parse(line); } catch { bad++; continue; }
		if ('id' in m)
			answers.set(JSON.stringify(m.id), (answers.get(JSON.stringify(m.id)) || 0) + 1);
	}
});
const exited = new Promise((r) => srv.on('exit', (code, signal) => r({ code, signal })));
const send = (m) => srv.stdin.write(JSON.stringify(m) + '\n');
const call = (id, name, args) => send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

send({ jsonrpc: '2.0', id: 'init', method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stress', version: '1' } } });
send({ jsonrpc: '2.0', method: 'notifications/initialized' });
const N = 4000, cancelled = new Set();
for (let i = 0; i < N; i++) {
	const k = i % 3;
	if (k === 0)
		call(i, 'echo', { text: `n${i}` });
	else if (k === 1)
		call(i, 'add', { a: i, b: 1 });
	else
		call(i, 'sleep', { ms: i % 21 });
	if (i % 5 === 2) {
		send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: i } });
		cancelled.add(i);
	}
	if (i % 97 === 0)
		call(i, 'echo', { text: 'a duplicate id, maybe still in flight' });
}
const t0 = Date.now();
while (Date.now() - t0 < 30000 && [...Array(N).keys()].some((i) => !cancelled.has(i) && !answers.has(String(i))))
	await sleep(50);
for (let i = 0; i < 40; i++)
	call(`late${i}`, 'sleep', { ms: 2000 });
await sleep(300);
srv.kill('SIGTERM');
const ex = await exited;
const missing = [...Array(N).keys()].filter((i) => !cancelled.has(i) && !answers.has(String(i)));
const late = [...Array(40).keys()].filter((i) => answers.get(JSON.stringify(`late${i}`)) !== 1);
const twice = [...answers].filter(([id, n]) => n > 1 && !/^\d+$/.test(id) || n > 2);
const good = ex.code === 0 && bad === 0 && missing.length === 0 && late.length === 0 && twice.length === 0;
console.log(JSON.stringify({ exit: ex, answered: answers.size, missing: missing.slice(0, 5), late, twice, bad }));
process.exit(good ? 0 : 1);
