// redis-resume.mjs: the official TypeScript SDK's own resumption through
// nginx, round-robin over three mcp-demo --redis instances (test/redis2.sh
// starts them). A client calls sleep with progress and keeps the
// resumption token the SDK hands it (the SSE event id); once some progress
// has come it drops its connection (the transport closed, no cancel). A
// second client on the same session (the SDK's reconnect: a transport with
// its sessionId, no new initialize) asks for the same call with that
// token: the SDK sends a GET with Last-Event-ID, which nginx may give any
// instance, and gets the rest of the progress and the answer. Done three
// times. Prints TAP.
//
//   node test/node/redis-resume.mjs --url URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { errText, finish, globalTimeout, ok, sleep, textOf } from './harness.mjs';

const opt = {};
for (let i = 2; i + 1 < process.argv.length; i += 2)
	opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

globalTimeout(60000, () => finish());

const MS = 2000;
for (let round = 1; round <= 3; round++) {
	const c1 = new Client({ name: 'redis-resume', version: '1.0.0' });
	const t1 = new StreamableHTTPClientTransport(new URL(opt.url));
	let token, before = 0;
	try {
		await c1.connect(t1);
	} catch (e) {
		ok(false, `round ${round}: connect through nginx`, errText(e));
		continue;
	}
	const sid = t1.sessionId;
	const req = { method: 'tools/call', params: { name: 'sleep', arguments: { ms: MS } } };
	// Its promise is left: the connection goes before the answer.
	c1.request(req, CallToolResultSchema, {
		onprogress: () => { before++; },
		onresumptiontoken: (t) => { token = t; },
		timeout: 30000,
	}).catch(() => {});
	const t0 = Date.now();
	while ((before < 2 || token === undefined) && Date.now() - t0 < 5000)
		await sleep(20);
	await t1.close();
	ok(before >= 2 && typeof token === 'string',
	    `round ${round}: progress on the first connection (${before}), and a resumption token (${token})`);

	const t2 = new StreamableHTTPClientTransport(new URL(opt.url), { sessionId: sid });
	const c2 = new Client({ name: 'redis-resume', version: '1.0.0' });
	let after = 0;
	try {
		await c2.connect(t2);	// a known session: no initialize
		// The replayed progress names the first request's token, which
		// this client never made: count it on the wire.
		const seen = t2.onmessage;
		t2.onmessage = (m, extra) => {
			if (m.method === 'notifications/progress')
				after++;
			seen(m, extra);
		};
		const r = await c2.request(req, CallToolResultSchema, {
			resumptionToken: token,
			timeout: 30000,
		});
		ok(textOf(r) === `slept ${MS} ms` && after >= 1,
		    `round ${round}: the same call resumed on a new connection with Last-Event-ID: ${after} more progress notifications, then its answer`,
		    textOf(r));
	} catch (e) {
		ok(false, `round ${round}: the call resumed with the token`, errText(e));
	}
	await t2.terminateSession().catch(() => {});
	await t2.close();
}
finish();
