// redis-client.mjs: the official TypeScript SDK's Streamable HTTP client
// through nginx in front of several mcp-demo --redis instances
// (test/redis.sh starts them): initialize, tools/list, echo calls one
// after another and twelve at once, three sleeps at once; the session's
// key in Redis (redis-cli) with its TTL, renewed by activity once half
// of it is gone, and not written for every request; then
// terminateSession (DELETE). Prints TAP, and the
// session's id as "# sid ID" for the shell's checks after it.
//
//   node test/node/redis-client.mjs --url URL --sock PATH --prefix P \
//       --timeout S
//
// URL: nginx's /mcp; PATH: Redis's unix socket; P: --redis-prefix; S:
// the servers' --session-timeout (the key's TTL is S * 1.5).
import { execFileSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { diag, errText, finish, globalTimeout, is, ok, sleep, textOf } from './harness.mjs';

const opt = {};
for (let i = 2; i + 1 < process.argv.length; i += 2)
	opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const timeout = Number(opt.timeout);
const ttlMax = timeout + Math.ceil(timeout / 2);

globalTimeout(40000, () => finish());

function ttl(sid) {
	return Number(execFileSync('redis-cli', ['-s', opt.sock, 'TTL', `${opt.prefix}session:${sid}`])
	    .toString().trim());
}

const client = new Client({ name: 'redis-client', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(opt.url));
try {
	await client.connect(transport);
	ok(true, 'SDK: connect (initialize, notifications/initialized) through nginx');
} catch (e) {
	ok(false, 'SDK: connect (initialize, notifications/initialized) through nginx', errText(e));
	finish();
}
const sid = transport.sessionId;
ok(/^[0-9a-f]{32}$/.test(sid ?? ''), `SDK: the session id is 32 hex digits (${sid})`);
diag(`sid ${sid}`);
const t0 = Date.now();
let t = ttl(sid);
ok(t > ttlMax - 3 && t <= ttlMax, `Redis: ${opt.prefix}session:<id> exists with a TTL of at most ${ttlMax} s (${t})`);

// Tasks are shared through Redis (test/redis-tasks.sh): a session any
// instance may serve is offered them like any other (mcp-demo's sleep
// may run as one).
const caps = client.getServerCapabilities();
ok(caps && caps.tools && caps.tasks && caps.tasks.list && caps.tasks.cancel &&
    caps.tasks.requests?.tools?.call, `SDK: the tasks capability on a shared session (${JSON.stringify(caps)})`);
try {
	const listed = (await client.listTools()).tools;
	const tools = listed.map((x) => x.name);
	ok(tools.includes('echo') && tools.includes('sleep'), `SDK: tools/list names echo and sleep (${tools.join(' ')})`);
	ok(listed.find((x) => x.name === 'sleep')?.execution?.taskSupport === 'optional' &&
	    !('execution' in (listed.find((x) => x.name === 'echo') ?? {})),
	    'SDK: and sleep says execution.taskSupport optional, echo nothing');
} catch (e) {
	ok(false, 'SDK: tools/list', errText(e));
}

function sets() {
	const info = execFileSync('redis-cli', ['-s', opt.sock, 'INFO', 'commandstats']).toString();
	return Number(/cmdstat_set:calls=(\d+)/.exec(info)?.[1] ?? 0);
}
const sets0 = sets();
let good = 0;
const bad = [];
for (let i = 0; i < 12; i++) {
	try {
		const r = await client.callTool({ name: 'echo', arguments: { text: `one ${i}` } });
		if (textOf(r) === `one ${i}`)
			good++;
		else
			bad.push(r);
	} catch (e) {
		bad.push(errText(e));
	}
}
is(good, 12, 'SDK: 12 echo calls one after another, each answered with its text', bad.slice(0, 3));

const many = await Promise.allSettled(Array.from({ length: 12 }, (_, i) =>
    client.callTool({ name: 'echo', arguments: { text: `many ${i}` } })));
is(many.filter((r, i) => r.status === 'fulfilled' && textOf(r.value) === `many ${i}`).length, 12,
    'SDK: 12 echo calls at once, each answered with its text',
    many.filter((r) => r.status === 'rejected').map((r) => errText(r.reason)).slice(0, 3));

const written = sets() - sets0;
ok(sets0 >= 2 && written <= 3, `Redis: not written for every request: ${written} SETs for 24 calls (${sets0} before them: the initialize, each instance adopting the session)`);

// Shorter than half the timeout: a call running longer would renew the
// key by itself (the heartbeat of a session with calls in flight).
const wait = Math.floor(timeout / 4) * 1000;
const started = Date.now();
const sleeps = await Promise.allSettled([0, 1, 2].map(() =>
    client.callTool({ name: 'sleep', arguments: { ms: wait } }, undefined, { timeout: 20000 })));
const took = Date.now() - started;
ok(sleeps.every((r) => r.status === 'fulfilled' && !r.value.isError) && took >= wait && took < wait + 5000,
    `SDK: 3 sleep calls of ${wait} ms at once, all answered (in ${took} ms)`,
    sleeps.map((r) => r.status === 'rejected' ? errText(r.reason) : r.value));

// Past the time the key would have aged to less than half its TTL
// without a write: a request (or the heartbeat of the SDK's open GET
// stream) has renewed it.
while (Date.now() - t0 < (timeout - 1) * 1000)
	await sleep(100);
try {
	const r = await client.callTool({ name: 'echo', arguments: { text: 'renew' } });
	ok(textOf(r) === 'renew', 'SDK: one more echo call');
} catch (e) {
	ok(false, 'SDK: one more echo call', errText(e));
}
let after = 0;
for (let i = 0; i < 20 && after < ttlMax - 2; i++) {
	after = ttl(sid);
	if (after < ttlMax - 2)
		await sleep(50);
}
ok(after >= ttlMax - 2, `Redis: renewed: TTL ${after} s, ${Math.round((Date.now() - t0) / 1000)} s after initialize (unrenewed: ${ttlMax - timeout + 1} s at most)`);

try {
	await transport.terminateSession();
	ok(transport.sessionId === undefined, 'SDK: terminateSession (DELETE through nginx)');
} catch (e) {
	ok(false, 'SDK: terminateSession (DELETE through nginx)', errText(e));
}
t = ttl(sid);
is(t, -2, 'Redis: the key is gone once the session is deleted (TTL -2)');
await client.close();
finish();
