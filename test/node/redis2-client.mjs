// redis2-client.mjs: the official TypeScript SDK's Streamable HTTP client
// through nginx, balancing round-robin over two conformance-server --redis
// instances (test/redis2.sh starts them): sampling and elicitation
// requests of calls, answered by the SDK on POSTs that nginx sends to
// either instance, so that some reach the one not running the call; a
// call cancelled by the SDK (an AbortSignal: notifications/cancelled),
// wherever that POST lands. Prints TAP.
//
//   node test/node/redis2-client.mjs --url URL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { errText, finish, globalTimeout, ok, sleep, textOf } from './harness.mjs';

const opt = {};
for (let i = 2; i + 1 < process.argv.length; i += 2)
	opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

globalTimeout(60000, () => finish());

const client = new Client({ name: 'redis2-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } });
let nsampled = 0, nelicited = 0;
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
	nsampled++;
	if (req.params.messages[0].content.text === 'never')
		await sleep(2000);	/* cancelled meanwhile */
	return { role: 'assistant', model: 'test',
	    content: { type: 'text', text: `echo ${req.params.messages[0].content.text}` } };
});
client.setRequestHandler(ElicitRequestSchema, () => {
	nelicited++;
	return { action: 'accept', content: { username: 'u', email: 'e@x' } };
});
const transport = new StreamableHTTPClientTransport(new URL(opt.url));
try {
	await client.connect(transport);
	ok(true, 'SDK: connect through nginx (sampling and elicitation declared)');
} catch (e) {
	ok(false, 'SDK: connect through nginx', errText(e));
	finish();
}

// One after another, so that the calls and the answers alternate
// between the two instances.
const texts = [];
for (let i = 0; i < 6; i++) {
	try {
		const r = await client.callTool({ name: 'test_sampling', arguments: { prompt: `p${i}` } });
		texts.push(textOf(r));
	} catch (e) {
		texts.push(errText(e));
	}
}
ok(texts.every((t, i) => t === `LLM response: echo p${i}`) && nsampled === 6,
    `SDK: 6 calls asking for sampling, each answered through whichever instance nginx chose (${nsampled} asked)`, texts);
const etexts = [];
for (let i = 0; i < 4; i++) {
	try {
		const r = await client.callTool({ name: 'test_elicitation', arguments: { message: `m${i}` } });
		etexts.push(textOf(r));
	} catch (e) {
		etexts.push(errText(e));
	}
}
ok(etexts.every((t) => t.startsWith('User response: action=accept')) && nelicited === 4,
    `SDK: 4 calls asking for elicitation, each answered (${nelicited} asked)`, etexts);

// Cancels: the SDK sends notifications/cancelled on its own POST.
let cancelled = 0;
const ctexts = [];
for (let i = 0; i < 4; i++) {
	const ac = new AbortController();
	const t0 = Date.now();
	const p = client.callTool({ name: 'test_sampling', arguments: { prompt: 'never' } },
	    undefined, { signal: ac.signal });
	await sleep(50);
	ac.abort('test');
	try {
		await p;
		ctexts.push('answered');
	} catch (e) {
		cancelled++;
		ctexts.push(`${Date.now() - t0} ms: ${errText(e)}`);
	}
}
ok(cancelled === 4, `SDK: 4 calls aborted by the client (notifications/cancelled)`, ctexts);
try {
	const r = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'after' } });
	ok(textOf(r) === 'LLM response: echo after', 'SDK: the session goes on after the cancels', textOf(r));
} catch (e) {
	ok(false, 'SDK: the session goes on after the cancels', errText(e));
}
try {
	await transport.terminateSession();
	ok(true, 'SDK: terminateSession');
} catch (e) {
	ok(false, 'SDK: terminateSession', errText(e));
}
await client.close();
finish();
