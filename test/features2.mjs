// features2.mjs: resources, resource templates, prompts and completion,
// against the test server build/feat-server (test/feat-server.c) on stdio
// AND on the legacy HTTP+SSE transport, with the official TypeScript SDK
// client: lists, reads (text, binary, templates, an unknown URI), subscribe
// and unsubscribe with resources/updated delivered only to subscribers,
// prompts (arguments, a missing one, images, embedded resources),
// completion (the 100-value cap), and list_changed after a registration
// made at run time from a worker thread. Then the additions to
// build/mcp-demo, and version gating on raw stdio.
//
// Prints TAP on stdout; exits 1 if any assertion failed. Node 20; the SDK
// comes from test/node/node_modules. Run from anywhere:
//
//   node test/features2.mjs [stdio|sse] ...
//
// FEAT_SERVER and MCP_DEMO in the environment name other binaries.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import {
	closeSdk, httpServerFor, killAll, openSdk as openSdkConn, sdk, show, stderrLog, stop, track,
} from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { McpError } = sdk.types;

let SERVER = path.resolve(process.env.FEAT_SERVER ?? path.join(HERE, '../build/feat-server'));
const DEMO = path.resolve(process.env.MCP_DEMO ?? path.join(HERE, '../build/mcp-demo'));
const GLOBAL_TIMEOUT_MS = 60000;
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

const want = process.argv.slice(2);
const KINDS = ['stdio', 'sse'].filter(k => !want.some(a => ['stdio', 'sse'].includes(a)) || want.includes(k));

// ---- TAP -------------------------------------------------------------------

let n = 0;
let failed = 0;
let label = '';

function out(s) {
	process.stdout.write(s + '\n');
}

function diag(s) {
	for (const line of String(s).split('\n'))
		out('# ' + (line.length > 1000 ? line.slice(0, 1000) + '...' : line));
}


function ok(cond, name, info) {
	n++;
	out(`${cond ? '' : 'not '}ok ${n} - ${label}${name}`);
	if (!cond) {
		failed++;
		if (info !== undefined)
			diag(typeof info === 'string' ? info : show(info));
	}
	return !!cond;
}

function is(got, want, name, extra) {
	const good = isDeepStrictEqual(got, want);
	return ok(good, name, good ? undefined :
	    `${extra === undefined ? '' : (typeof extra === 'string' ? extra : show(extra)) + '\n'}` +
	    `expected: ${show(want)}\n     got: ${show(got)}`);
}

// ---- processes (test/node/mcp-clients.mjs) -------------------------------------

function finish() {
	killAll();
	if (failed > 0 && stderrLog.length > 0) {
		diag('---- server stderr (last 40 lines) ----');
		diag(stderrLog.slice(-40).join('\n'));
	}
	out(`1..${n}`);
	if (failed > 0)
		diag(`failed ${failed} of ${n}`);
	process.exit(failed > 0 ? 1 : 0);
}

const globalTimer = setTimeout(() => {
	label = '';
	ok(false, `global timeout: the test did not finish within ${GLOBAL_TIMEOUT_MS / 1000} s`);
	finish();
}, GLOBAL_TIMEOUT_MS);

// ---- helpers ---------------------------------------------------------------

const sleep = ms => new Promise(r => setTimeout(r, ms));

// What P resolves to, or null after MS.
function within(p, ms) {
	let timer;
	return Promise.race([p, new Promise(r => { timer = setTimeout(() => r(null), ms); })])
	    .finally(() => clearTimeout(timer));
}

// Settles P, and at most after LIMIT ms, into {value} or {error}; never throws.
async function settle(p, limit = 10000) {
	const t0 = Date.now();
	let timer;
	const timeout = new Promise(r => {
		timer = setTimeout(() => r({ error: new Error(`no answer within ${limit} ms`), timedOut: true }), limit);
	});
	const r = await Promise.race([
		p.then(value => ({ value }), error => ({ error })),
		timeout
	]);
	clearTimeout(timer);
	r.ms = Date.now() - t0;
	return r;
}

function errText(e) {
	if (e instanceof McpError)
		return `McpError ${e.code}: ${e.message}`;
	return e instanceof Error ? `${e.name}: ${e.message}` : show(e);
}

function textOf(result) {
	return result?.content?.filter(c => c.type === 'text').map(c => c.text).join('\n') ?? '';
}

// ---- servers -----------------------------------------------------------------

// The HTTP server for ARGS (one per set of options), started once: its base
// URL, from the "listening on http://.../sse" line on stderr.
const httpServers = new Map();

const httpServer = args => httpServerFor(httpServers, SERVER, args);

// ---- SDK connections -----------------------------------------------------------

// The SDK client on KIND to SERVER with ARGS (test/node/mcp-clients.mjs);
// conn.received records every message the transport hands up, in order.
function openSdk(kind, args = [], tag = 'sdk') {
	return openSdkConn({ kind, server: SERVER, args, tag, httpServer,
	    clientInfo: { name: 'libmcp-features', version: '1.0.0' } });
}

// Waits up to MS for a received message matching PRED (from index FROM on).
async function waitFor(conn, pred, ms = 3000, from = 0) {
	const t0 = Date.now();
	for (;;) {
		const m = conn.received.slice(from).find(e => pred(e.msg));
		if (m !== undefined || Date.now() - t0 > ms)
			return m?.msg;
		await sleep(20);
	}
}

const isNote = method => m => m?.method === method;

async function rpcError(p) {
	const r = await settle(p);
	return r.error instanceof McpError ? r.error : { code: 'none', r };
}

// ---- the groups ----------------------------------------------------------------

async function resourcesGroup(kind) {
	const conn = await openSdk(kind, [], 'resources');
	if (!ok(!conn.connectError, 'connect succeeds', conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	is(client.getServerCapabilities(), {
		tools: { listChanged: true },
		resources: { subscribe: true, listChanged: true },
		prompts: { listChanged: true },
		logging: {},
		completions: {}
	}, 'capabilities: tools, resources, prompts, logging, completions');

	let r = await settle(client.listResources());
	const res = r.value?.resources ?? [];
	is(res.map(x => x.uri), ['test://static-text', 'test://static-binary', 'test://watched-resource'],
	    'resources/list: three resources, in registration order', r.error && errText(r.error));
	is(res[0], { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource',
	    description: 'A static text resource for testing', mimeType: 'text/plain' },
	    'resources/list: every field of static-text, with its title');
	is(res[1]?.size, 70, 'resources/list: the binary resource has its size');
	ok(r.value?.nextCursor === undefined, 'resources/list: one page, no nextCursor');

	r = await settle(client.listResourceTemplates());
	is(r.value?.resourceTemplates, [{ uriTemplate: 'test://template/{id}/data', name: 'template',
	    title: 'Resource Template', description: 'A resource template with parameter substitution',
	    mimeType: 'application/json' }], 'resources/templates/list', r.error && errText(r.error));

	r = await settle(client.readResource({ uri: 'test://static-text' }));
	is(r.value?.contents, [{ uri: 'test://static-text', mimeType: 'text/plain',
	    text: 'This is the content of the static text resource.' }], 'read: text', r.error && errText(r.error));
	r = await settle(client.readResource({ uri: 'test://static-binary' }));
	is(r.value?.contents, [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_B64 }],
	    'read: binary, base64-encoded by the library', r.error && errText(r.error));
	r = await settle(client.readResource({ uri: 'test://template/123/data' }));
	const c = r.value?.contents ?? [];
	ok(c[0]?.uri === 'test://template/123/data' && c[0]?.mimeType === 'application/json' &&
	    c[0]?.text?.includes('123'), 'read through a template: the variable reaches the callback', r.value ?? errText(r.error));
	is(JSON.parse(c[0]?.text ?? 'null'), { id: '123', templateTest: true, data: 'Data for ID: 123' },
	    'read through a template: the exact fixture text');
	is(c[1], { uri: 'test://template/sub', mimeType: 'text/plain', text: 'sub' },
	    'read: a second contents item with its own uri and type');
	r = await settle(client.readResource({ uri: 'test://template/a%20b/data' }));
	ok(r.value?.contents?.[0]?.text?.includes('Data for ID: a b'), 'read through a template: %20 is decoded',
	    r.value ?? errText(r.error));

	let e = await rpcError(client.readResource({ uri: 'test://nope' }));
	is([e.code, e.data], [-32002, { uri: 'test://nope' }], 'read: unknown URI gives -32002 with data.uri', e);
	e = await rpcError(client.readResource({ uri: 'test://template/1/2/data' }));
	is(e.code, -32002, 'read: a URI that matches no template (slash in a variable) gives -32002', e);
	e = await rpcError(client.readResource({ uri: 'test://template/missing/data' }));
	is([e.code, e.message], [-32002, 'MCP error -32002: no such id'],
	    'read: the callback can answer with its own JSON-RPC error', e);
	e = await rpcError(client.request({ method: 'resources/read', params: {} },
	    sdk.types.ReadResourceResultSchema));
	is(e.code, -32602, 'read: no uri gives -32602', e);

	// Subscriptions: only subscribers hear of updates.
	r = await settle(client.subscribeResource({ uri: 'test://watched-resource' }));
	is(r.value, {}, 'resources/subscribe returns {}', r.error && errText(r.error));
	e = await rpcError(client.subscribeResource({ uri: 'test://nope' }));
	is(e.code, -32002, 'subscribe: unknown URI gives -32002', e);
	let from = conn.received.length;
	r = await settle(client.callTool({ name: 'touch', arguments: { uri: 'test://watched-resource' } }));
	is(textOf(r.value), 'rc 0', 'mcp_resource_notify_updated from a worker returns MCP_OK', r.error && errText(r.error));
	let note = await waitFor(conn, isNote('notifications/resources/updated'), 3000, from);
	is(note?.params, { uri: 'test://watched-resource' }, 'notifications/resources/updated arrives with the uri');
	from = conn.received.length;
	await settle(client.callTool({ name: 'touch', arguments: { uri: 'test://static-text' } }));
	note = await waitFor(conn, isNote('notifications/resources/updated'), 300, from);
	ok(note === undefined, 'no update for a resource the session did not subscribe to', note);
	r = await settle(client.unsubscribeResource({ uri: 'test://watched-resource' }));
	is(r.value, {}, 'resources/unsubscribe returns {}', r.error && errText(r.error));
	from = conn.received.length;
	await settle(client.callTool({ name: 'touch', arguments: { uri: 'test://watched-resource' } }));
	note = await waitFor(conn, isNote('notifications/resources/updated'), 300, from);
	ok(note === undefined, 'no update after unsubscribe', note);
	await closeSdk(conn);
}

async function promptsGroup(kind) {
	const conn = await openSdk(kind, [], 'prompts');
	if (!ok(!conn.connectError, 'connect succeeds', conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	let r = await settle(client.listPrompts());
	const ps = r.value?.prompts ?? [];
	is(ps.map(p => p.name), ['test_simple_prompt', 'test_prompt_with_arguments',
	    'test_prompt_with_embedded_resource', 'test_prompt_with_image'], 'prompts/list: four prompts in order',
	    r.error && errText(r.error));
	ok(ps.every(p => p.description), 'prompts/list: every prompt has a description');
	is(ps[0]?.title, 'Simple Test Prompt', 'prompts/list: title');
	is(ps[1]?.arguments, [{ name: 'arg1', description: 'First test argument', required: true },
	    { name: 'arg2', description: 'Second test argument', required: true }], 'prompts/list: arguments');

	r = await settle(client.getPrompt({ name: 'test_simple_prompt' }));
	is(r.value?.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
	    'prompts/get without arguments', r.error && errText(r.error));
	r = await settle(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'testValue1', arg2: 'testValue2' } }));
	is(r.value?.messages?.[0]?.content?.text, "Prompt with arguments: arg1='testValue1', arg2='testValue2'",
	    'prompts/get: arguments reach the callback', r.error && errText(r.error));
	let e = await rpcError(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'x' } }));
	is(e.code, -32602, 'prompts/get: a missing required argument gives -32602', e);
	ok(/arg2/.test(e.message ?? ''), 'prompts/get: and the message names it', e.message);
	e = await rpcError(client.getPrompt({ name: 'nope' }));
	is(e.code, -32602, 'prompts/get: an unknown prompt gives -32602', e);
	r = await settle(client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } }));
	is(r.value?.messages, [
		{ role: 'user', content: { type: 'resource', resource: { uri: 'test://example-resource',
		    mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
		{ role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } }
	], 'prompts/get: an embedded resource message', r.error && errText(r.error));
	r = await settle(client.getPrompt({ name: 'test_prompt_with_image' }));
	is(r.value?.messages, [
		{ role: 'user', content: { type: 'image', data: PNG_B64, mimeType: 'image/png' } },
		{ role: 'assistant', content: { type: 'text', text: 'Please analyze the image above.' } }
	], 'prompts/get: an image, then an assistant message', r.error && errText(r.error));

	r = await settle(client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
	    argument: { name: 'arg1', value: 'v' } }));
	const comp = r.value?.completion;
	ok(comp?.values?.length === 100 && comp.values[0] === 'v0' && comp.values[99] === 'v99',
	    'completion: at most 100 values', r.error ? errText(r.error) : comp?.values?.length);
	is([comp?.total, comp?.hasMore], [150, true], 'completion: total counts them all, hasMore is true');
	r = await settle(client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
	    argument: { name: 'arg2', value: 'b' }, context: { arguments: { arg1: 'a' } } }));
	is(r.value?.completion?.values, ['a-b'], 'completion: context.arguments reach the callback',
	    r.error && errText(r.error));
	r = await settle(client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
	    argument: { name: 'id', value: '1' } }));
	is(r.value?.completion, { values: ['123', '124', '125'], total: 3, hasMore: false },
	    'completion of a template variable', r.error && errText(r.error));
	e = await rpcError(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'a', value: '' } }));
	is(e.code, -32602, 'completion: an unknown prompt gives -32602', e);
	await closeSdk(conn);
}

async function changedGroup(kind) {
	const conn = await openSdk(kind, [], 'changed');
	if (!ok(!conn.connectError, 'connect succeeds', conn.connectError && errText(conn.connectError)))
		return;
	const other = kind === 'sse' ? await openSdk(kind, [], 'changed2') : null;
	const { client } = conn;
	const step = async (tool, args, method, what) => {
		const from = conn.received.length;
		const from2 = other?.received.length;
		const r = await settle(client.callTool({ name: tool, arguments: args }));
		is(textOf(r.value), 'rc 0', `${tool} from a worker thread succeeds`, r.error && errText(r.error));
		ok(await waitFor(conn, isNote(method), 3000, from), `${method} after ${what}`);
		if (other)
			ok(await waitFor(other, isNote(method), 3000, from2), `${method} reaches a second session too`);
	};
	await step('add_resource', { uri: 'test://new' }, 'notifications/resources/list_changed', 'a resource is added');
	let r = await settle(client.listResources());
	is(r.value?.resources?.at(-1)?.uri, 'test://new', 'the new resource is listed last');
	r = await settle(client.readResource({ uri: 'test://new' }));
	is(r.value?.contents?.[0]?.text, 'added at run time', 'and can be read', r.error && errText(r.error));
	await step('remove_resource', { uri: 'test://new' }, 'notifications/resources/list_changed', 'a resource is removed');
	const e = await rpcError(client.readResource({ uri: 'test://new' }));
	is(e.code, -32002, 'the removed resource is gone', e);
	await step('add_prompt', { name: 'late_prompt' }, 'notifications/prompts/list_changed', 'a prompt is added');
	r = await settle(client.listPrompts());
	is(r.value?.prompts?.at(-1)?.name, 'late_prompt', 'the new prompt is listed last');
	await step('add_tool', { name: 'late_tool' }, 'notifications/tools/list_changed', 'a tool is added');
	r = await settle(client.listTools());
	is(r.value?.tools?.at(-1)?.name, 'late_tool', 'the new tool is listed last');
	await step('remove_tool', { name: 'late_tool' }, 'notifications/tools/list_changed', 'a tool is removed');
	if (other)
		await closeSdk(other);
	await closeSdk(conn);
}

// The additions to mcp-demo: a resource, a template, a prompt, completion.
async function demoGroup(kind) {
	const conn = await openSdk(kind, [], 'demo');
	if (!ok(!conn.connectError, 'mcp-demo: connect succeeds', conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	let r = await settle(client.listTools());
	is(r.value?.tools?.map(t => t.name), ['echo', 'add', 'sleep', 'fail'], 'mcp-demo: the four tools are unchanged');
	r = await settle(client.listResources());
	is(r.value?.resources?.map(x => x.uri), ['demo://readme'], 'mcp-demo: one static resource');
	r = await settle(client.readResource({ uri: 'demo://greeting/J%C3%B6rg' }));
	is(r.value?.contents?.[0]?.text, 'Hello, J\u00f6rg!', 'mcp-demo: the greeting template decodes its variable',
	    r.error && errText(r.error));
	r = await settle(client.getPrompt({ name: 'review', arguments: { language: 'c' } }));
	is(r.value?.messages?.map(m => m.role), ['user', 'assistant'], 'mcp-demo: the review prompt',
	    r.error && errText(r.error));
	r = await settle(client.complete({ ref: { type: 'ref/prompt', name: 'review' }, argument: { name: 'language', value: 'py' } }));
	is(r.value?.completion?.values, ['python'], 'mcp-demo: completion of the prompt argument');
	r = await settle(client.complete({ ref: { type: 'ref/resource', uri: 'demo://greeting/{name}' }, argument: { name: 'name', value: 'b' } }));
	is(r.value?.completion?.values, ['bob'], 'mcp-demo: completion of the template variable');
	await closeSdk(conn);
}

// Raw stdio: what an older protocol version must not see.
function rawSession(version, lines) {
	return new Promise(resolve => {
		const child = spawn(SERVER, [], { stdio: ['pipe', 'pipe', 'pipe'] });
		const p = track(child, `raw ${version}`);
		let buf = '';
		child.stdout.on('data', d => { buf += d.toString('utf8'); });
		const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version,
		    capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
		child.stdin.write([init, ...lines].map(m => JSON.stringify(m)).join('\n') + '\n');
		setTimeout(() => child.stdin.end(), 500);
		p.exited.then(() => {
			const byId = {};
			for (const l of buf.split('\n').filter(Boolean))
				try { const m = JSON.parse(l); byId[m.id] = m; } catch { /* counted below */ }
			resolve(byId);
		});
	});
}

async function versionGroup() {
	const req = [
		{ jsonrpc: '2.0', id: 1, method: 'resources/list' },
		{ jsonrpc: '2.0', id: 2, method: 'prompts/list' },
		{ jsonrpc: '2.0', id: 3, method: 'resources/templates/list' },
		{ jsonrpc: '2.0', id: 4, method: 'resources/list', params: { cursor: 'bogus' } },
		{ jsonrpc: '2.0', id: 5, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'test_simple_prompt' }, argument: { name: 'x', value: '' } } }
	];
	let m = await rawSession('2025-03-26', req);
	ok(m[0]?.result?.capabilities?.completions !== undefined, '2025-03-26: completions declared');
	ok(m[1]?.result?.resources?.every(x => x.title === undefined) && m[1]?.result?.resources?.length === 3,
	    '2025-03-26: resources/list sends no title', m[1]);
	ok(m[2]?.result?.prompts?.every(x => x.title === undefined), '2025-03-26: prompts/list sends no title', m[2]);
	ok(m[3]?.result?.resourceTemplates?.every(x => x.title === undefined), '2025-03-26: templates list sends no title', m[3]);
	is(m[4]?.error?.code, -32602, 'a bad cursor gives -32602', m[4]);
	is(m[5]?.result?.completion, { values: [], hasMore: false }, 'completion with nothing to offer: an empty list', m[5]);
	m = await rawSession('2024-11-05', req.slice(0, 1));
	ok(m[0]?.result && m[0].result.capabilities.completions === undefined,
	    '2024-11-05: no completions capability (it did not exist)', m[0]?.result?.capabilities);
	m = await rawSession('2025-06-18', req.slice(0, 1));
	is(m[1]?.result?.resources?.[0]?.title, 'Static Text Resource', '2025-06-18: resources/list sends the title');
}

async function main() {
	if (!ok(existsSync(SERVER), `server binary exists: ${SERVER}`))
		return;
	for (const kind of KINDS) {
		const groups = { resources: resourcesGroup, prompts: promptsGroup, changed: changedGroup };
		for (const g of Object.keys(groups)) {
			label = `${kind}: ${g}: `;
			try {
				await groups[g](kind);
			} catch (e) {
				ok(false, 'the group threw', e?.stack ?? show(e));
			}
		}
	}
	label = 'raw: ';
	try {
		await versionGroup();
	} catch (e) {
		ok(false, 'the group threw', e?.stack ?? show(e));
	}
	label = '';
	for (const srv of httpServers.values()) {
		const { p, base } = await srv;
		if (base === null)
			continue;
		await stop(p, 'SIGTERM', 6000);
		ok(p.exit?.code === 0, `the HTTP server (${base}) exits 0 on SIGTERM`, p.exit);
	}
	// mcp-demo, with its own HTTP server.
	httpServers.clear();
	SERVER = DEMO;
	for (const kind of KINDS) {
		label = `${kind}: demo: `;
		try {
			await demoGroup(kind);
		} catch (e) {
			ok(false, 'the group threw', e?.stack ?? show(e));
		}
	}
	label = '';
	for (const srv of httpServers.values()) {
		const { p } = await srv;
		await stop(p, 'SIGTERM', 6000);
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
finish();
