// redis-sse-client.mjs: the official TypeScript SDK's legacy
// SSEClientTransport through nginx, balancing round-robin over three
// mcp-demo --redis instances (test/redis-sse.sh starts them): the GET
// /sse lands on one, its POSTs on any, so that most reach an instance
// not holding the stream (relayed through Redis). Several clients, one
// after another: each connects, initializes, lists the tools, calls echo
// and a sleep with progress. Every POST's status is recorded. Prints TAP.
//
//   node test/node/redis-sse-client.mjs --url BASE [--clients N]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

import { errText, finish, globalTimeout, ok } from './harness.mjs';

const opt = { clients: '4' };
for (let i = 2; i + 1 < process.argv.length; i += 2)
	opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

globalTimeout(60000, () => finish());

const posts = [];		// the status of every POST the SDK made
const recording = async (url, init) => {
	const r = await fetch(url, init);
	if ((init?.method ?? 'GET') === 'POST')
		posts.push(r.status);
	return r;
};

const n = Number(opt.clients);
for (let k = 0; k < n; k++) {
	const client = new Client({ name: 'redis-sse-client', version: '1.0.0' });
	const transport = new SSEClientTransport(new URL(`${opt.url}/sse`),
	    { fetch: recording });
	const t = `client ${k + 1}/${n}`;
	try {
		await client.connect(transport);
		ok(true, `SDK SSE ${t}: connect and initialize through nginx`);
	} catch (e) {
		ok(false, `SDK SSE ${t}: connect and initialize through nginx`, errText(e));
		continue;
	}
	try {
		const tools = await client.listTools();
		ok(tools.tools.some((x) => x.name === 'echo') &&
		    tools.tools.some((x) => x.name === 'sleep'),
		    `SDK SSE ${t}: tools/list names echo and sleep (${tools.tools.length} tools)`);
		const texts = [];
		for (let i = 0; i < 3; i++) {
			const r = await client.callTool({ name: 'echo', arguments: { text: `hi ${k} ${i}` } });
			texts.push(r.content?.[0]?.text);
		}
		ok(texts.every((x, i) => typeof x === 'string' && x.includes(`hi ${k} ${i}`)),
		    `SDK SSE ${t}: three echo calls, each answered down the stream`, texts);
		const prog = [];
		const r = await client.callTool({ name: 'sleep', arguments: { ms: 600 } },
		    undefined, { onprogress: (p) => prog.push(p.progress) });
		ok(prog.length >= 3 && r.content?.[0]?.text?.includes('slept 600 ms'),
		    `SDK SSE ${t}: a sleep of 600 ms: ${prog.length} progress notes and its answer`,
		    r.content, prog);
	} catch (e) {
		ok(false, `SDK SSE ${t}: the calls`, errText(e));
	}
	await client.close();
}
ok(posts.length >= n * 6 && posts.every((s) => s === 202),
    `SDK SSE: all ${posts.length} POSTs answered 202`, posts);
finish();
