// long.mjs: calls that run for minutes, as agents make them (builds,
// searches, model calls), with the official TypeScript SDK's clients on
// every transport: stdio (StdioClientTransport), the legacy HTTP+SSE
// (SSEClientTransport), and Streamable HTTP (StreamableHTTPClientTransport)
// with SSE bodies, with JSON bodies and stateless; each over HTTP
// directly and through nginx (test/long.sh runs it with a short
// proxy_read_timeout). Every client calls mcp-demo's sleep for 30 s and
// for 3 min at once, with a request timeout that allows them, and must
// get both results. Prints TAP; exits 1 when an assertion failed.
//
//   node test/node/long.mjs --stdio SERVER [--sse URL] [--mcp NAME=URL]...
//	[--short MS] [--long MS]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { errText, finish, ok, settle, textOf } from './harness.mjs';

const opt = { stdio: null, sse: [], mcp: [], short: 30000, long: 180000 };
for (let a = process.argv.slice(2), i = 0; i < a.length; i++) {
	if (a[i] === '--stdio')
		opt.stdio = a[++i];
	else if (a[i] === '--sse')
		opt.sse.push(a[++i]);
	else if (a[i] === '--mcp')
		opt.mcp.push(a[++i]);
	else if (a[i] === '--short')
		opt.short = Number(a[++i]);
	else if (a[i] === '--long')
		opt.long = Number(a[++i]);
}

const clients = [];
if (opt.stdio)
	clients.push(['stdio', () => new StdioClientTransport({ command: opt.stdio, args: [], stderr: 'ignore' })]);
for (const s of opt.sse) {
	const [name, url] = s.split('=');
	clients.push([name, () => new SSEClientTransport(new URL(url))]);
}
for (const s of opt.mcp) {
	const [name, url] = s.split('=');
	clients.push([name, () => new StreamableHTTPClientTransport(new URL(url))]);
}

// One client: connect, both sleeps at once, close.
async function run(name, make) {
	const client = new Client({ name: 'long', version: '1' });
	const c = await settle(client.connect(make()), 20000);
	if (!ok(!c.error, `${name}: connects`, c.error && errText(c.error)))
		return;
	const limit = opt.long + 60000;
	const call = (ms) => settle(client.callTool({ name: 'sleep', arguments: { ms } }, undefined,
	    { timeout: limit }), limit);
	const [s, l] = await Promise.all([call(opt.short), call(opt.long)]);
	ok(!s.error && textOf(s.value) === `slept ${opt.short} ms`,
	    `${name}: a ${opt.short / 1000} s call gets its result (${Math.round(s.ms / 1000)} s)`,
	    s.error && errText(s.error), s.value);
	ok(!l.error && textOf(l.value) === `slept ${opt.long} ms`,
	    `${name}: a ${opt.long / 1000} s call gets its result (${Math.round(l.ms / 1000)} s)`,
	    l.error && errText(l.error), l.value);
	await settle(client.close(), 5000);
}

await Promise.all(clients.map(([name, make]) => run(name, make)));
finish();
