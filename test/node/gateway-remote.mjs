// gateway-remote.mjs: `mcp-gateway --url` between the official TypeScript
// SDK's stdio client (StdioClientTransport, which launches the gateway as
// an agent would) and a remote server: the SDK's own McpServer on
// Streamable HTTP and on legacy SSE (peer-server.mjs), and mcp-demo with
// a bearer token. Tools, progress, resources, prompts, completion, logs,
// sampling, elicitation and roots reach the agent and back; a cancel goes
// through; a 401 is reported with its WWW-Authenticate; stdin EOF and
// SIGTERM end the gateway with status 0. Prints TAP.
//
//   node test/node/gateway-remote.mjs GATEWAY MCP_DEMO [GROUP...]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
	CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
	LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { errText, is, ok, runGroups, sleep, textOf } from './harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const [GATEWAY, DEMO] = process.argv.slice(2, 4);
process.argv.splice(2, 2);	// the rest: groups to run

// A server on port 0; resolves with its port and process.
function server(cmd, args, fromStderr) {
	return new Promise((resolve, reject) => {
		const p = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
		let buf = '';
		const look = (d) => {
			buf += d;
			const m = buf.match(/PORT (\d+)\n/) || buf.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
			if (m)
				resolve({ port: Number(m[1]), proc: p });
		};
		(fromStderr ? p.stderr : p.stdout).on('data', look);
		p.on('exit', (c) => reject(new Error(`server exited ${c}: ${buf}`)));
		setTimeout(() => reject(new Error('server did not start')), 10000);
	});
}

// The agent: the SDK's stdio client running the gateway.
async function agent(url, extra = [], env = {}) {
	const c = new Client({ name: 'agent', version: '1' },
	    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
	const logs = [];
	c.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
		model: 'test', role: 'assistant',
		content: { type: 'text', text: `sampled: ${req.params.messages[0].content.text}` },
	}));
	c.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
	c.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///agent/root', name: 'root' }] }));
	c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
	const t = new StdioClientTransport({ command: GATEWAY, args: ['--url', url, ...extra], stderr: 'pipe',
	    env: { ...getDefaultEnvironment(), ...env } });
	const err = [];
	t.stderr?.on('data', (d) => err.push(String(d)));
	await c.connect(t);
	return { c, t, logs, err };
}

async function features(label, mode) {
	const peer = await server('node', [path.join(HERE, 'peer-server.mjs'), mode], false);
	try {
		const url = `http://127.0.0.1:${peer.port}/${mode === 'sse' ? 'sse' : 'mcp'}`;
		const { c, logs } = await agent(url, mode === 'sse' ? ['--transport', 'sse'] : []);
		is(c.getServerVersion()?.name, 'peer-server', `${label}: the server's serverInfo reaches the agent`);
		const tools = await c.listTools();
		ok(tools.tools.length >= 30, `${label}: tools/list (${tools.tools.length})`);
		const add = await c.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
		is(add.structuredContent, { sum: 42 }, `${label}: tools/call with structuredContent`);
		const steps = [];
		const slow = await c.callTool({ name: 'slow', arguments: { ms: 300, steps: 3 } }, undefined,
		    { onprogress: (p) => steps.push(p.progress) });
		is(textOf(slow), 'done', `${label}: a call with progress`);
		ok(steps.length >= 2, `${label}: progress reaches the agent under its own token`, steps);
		is(textOf(await c.callTool({ name: 'sample', arguments: { prompt: 'hi' } })), 'sampled: hi',
		    `${label}: sampling/createMessage from the server reaches the agent, and back`);
		ok(textOf(await c.callTool({ name: 'elicit', arguments: {} })).includes('Ada'),
		    `${label}: elicitation/create, and back`);
		ok(textOf(await c.callTool({ name: 'roots', arguments: {} })).includes('file:///agent/root'),
		    `${label}: roots/list, and back`);
		await c.setLoggingLevel('debug');
		await c.callTool({ name: 'log', arguments: { text: 'through' } });
		await sleep(200);
		ok(logs.some((l) => l.data === 'through'), `${label}: a log notification reaches the agent`, logs);
		is((await c.readResource({ uri: 'peer://hello' })).contents[0].text, 'hello', `${label}: resources/read`);
		is((await c.getPrompt({ name: 'greet', arguments: { name: 'Bo' } })).messages[0].content.text,
		    'Hello, Bo', `${label}: prompts/get`);
		is((await c.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'b' } }))
		    .completion.values, ['bob'], `${label}: completion/complete`);
		// A cancel from the agent ends the call at the server: the SDK's
		// slow tool stops early, so the next call is answered at once.
		const ac = new AbortController();
		const p = c.callTool({ name: 'slow', arguments: { ms: 5000, steps: 5 } }, undefined, { signal: ac.signal });
		await sleep(300);
		ac.abort('enough');
		let aborted = false;
		try { await p; } catch { aborted = true; }
		ok(aborted, `${label}: the agent's cancel ends its call`);
		const many = await Promise.all(Array.from({ length: 20 }, (_, i) =>
		    c.callTool({ name: 'echo', arguments: { text: `m${i}` } })));
		ok(many.every((r, i) => textOf(r) === `m${i}`), `${label}: 20 calls at once, each answer to its caller`);
		await c.ping();
		ok(true, `${label}: ping`);
		await c.close();
	} finally {
		peer.proc.kill('SIGTERM');
	}
}

async function auth() {
	const dir = mkdtempSync(path.join(tmpdir(), 'gw-'));
	writeFileSync(path.join(dir, 'token'), 'gw-secret-token\n');
	const demo = await server(DEMO, ['--http', '127.0.0.1:0', '--auth-token-file', path.join(dir, 'token')], true);
	try {
		const url = `http://127.0.0.1:${demo.port}/mcp`;
		let msg = '';
		try {
			await agent(url);
		} catch (e) {
			msg = errText(e);
		}
		ok(/HTTP 401/.test(msg) && /WWW-Authenticate: Bearer/.test(msg),
		    'auth: a 401 reaches the agent clearly, with its WWW-Authenticate', msg);
		// As an agent's configuration gives it: the token in env.
		const { c } = await agent(url, ['--header', 'Authorization: Bearer $GW_TOKEN'],
		    { GW_TOKEN: 'gw-secret-token' });
		is(textOf(await c.callTool({ name: 'echo', arguments: { text: 'in' } })), 'in',
		    'auth: the header, its value from the environment, lets the agent in');
		await c.close();
	} finally {
		demo.proc.kill('SIGTERM');
	}
}

// The gateway by hand, to see how it ends.
async function ending() {
	const demo = await server(DEMO, ['--http', '127.0.0.1:0'], true);
	try {
		const url = `http://127.0.0.1:${demo.port}/mcp`;
		for (const how of ['eof', 'sigterm']) {
			const g = spawn(GATEWAY, ['--url', url], { stdio: ['pipe', 'pipe', 'inherit'] });
			let outb = '';
			g.stdout.on('data', (d) => { outb += d; });
			g.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
				protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) + '\n');
			for (let i = 0; i < 50 && !outb.includes('"id":1'); i++)
				await sleep(100);
			ok(outb.includes('"serverInfo"'), `ending ${how}: initialized`);
			const t0 = Date.now();
			const exited = new Promise((r) => g.on('exit', (code, sig) => r({ code, sig })));
			if (how === 'eof')
				g.stdin.end();
			else
				g.kill('SIGTERM');
			const e = await Promise.race([exited, sleep(5000).then(() => ({ code: 'hung' }))]);
			is(e.code, 0, `ending ${how}: the gateway exits with status 0`);
			ok(Date.now() - t0 < 3000, `ending ${how}: within 3 s (${Date.now() - t0} ms)`);
			if (e.code === 'hung')
				g.kill('SIGKILL');
		}
	} finally {
		demo.proc.kill('SIGTERM');
	}
}

await runGroups([
	['http', () => features('ts-sdk http', 'http'), 60000],
	['sse', () => features('ts-sdk sse', 'sse'), 60000],
	['auth', auth, 30000],
	['ending', ending, 30000],
]);
