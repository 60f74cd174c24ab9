// features4.mjs: annotations and icons against build/feat-server
// (test/feat-server.c: the tool annotated, which returns one annotated
// block of each content type and has icons, and the tool decorate,
// which adds an annotated resource, template and prompt with icons) on
// stdio AND on the legacy HTTP+SSE transport:
//
//   sdk    the official TypeScript SDK client (2025-11-25): every field
//          arrives, and the SDK's own validation accepts it all
//   raw    byte-level JSON-RPC at 2024-11-05, 2025-03-26, 2025-06-18 and
//          2025-11-25: exactly the fields each version knows (content
//          annotations audience and priority in all four, lastModified
//          from 2025-06-18, icons from 2025-11-25)
//
// Prints TAP on stdout; exits 1 if any assertion failed. Node 20; the SDK
// comes from test/node/node_modules. Run from anywhere:
//
//   node test/features4.mjs [stdio|sse] [sdk|raw] ...
//
// FEAT_SERVER in the environment names another binary.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diag, errText, globalTimeout, is, ok, settle, tap } from './node/harness.mjs';
import { RawSse, RawStdio, closeSdk, end, openSdk as openSdkConn, show, startHttp, stop } from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.resolve(process.env.FEAT_SERVER ?? path.join(HERE, '../build/feat-server'));

const want = process.argv.slice(2);
const KINDS = ['stdio', 'sse'].filter(k => !want.some(a => ['stdio', 'sse'].includes(a)) || want.includes(k));
const ALL_GROUPS = ['sdk', 'raw'];
const GROUPS = ALL_GROUPS.filter(g => !want.some(a => ALL_GROUPS.includes(a)) || want.includes(g));
const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

tap.show = show;
const globalTimer = globalTimeout(45000, end, '');

// The base64 of the feat-server's 70-byte PNG (CONFORMANCE.md PNG_B64).
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const ICONS = [{ src: 'https://example.com/icon.png', mimeType: 'image/png', sizes: ['48x48'], theme: 'light' },
    { src: 'data:image/svg+xml;base64,PHN2Zy8+', sizes: ['any'] }];
const MODIFIED = '2025-01-12T15:00:58Z';
const DECORATED = 'rc 0 0 0 0 0 0 0 0';
// decorate a second time on the same server: the three registrations
// find their entry there (MCP_EEXIST), the setters still work.
const REDECORATED = 'rc -3 0 0 -3 0 0 -3 0';

// ---- what each version should see -------------------------------------------------

// Annotations A at version V: lastModified only from 2025-06-18; null
// when nothing is left.
function ann(v, a) {
	const o = { ...a };
	if (v < '2025-06-18')
		delete o.lastModified;
	return Object.keys(o).length ? o : null;
}

// X with annotations A (left out when null).
const withAnn = (x, a) => (a === null ? x : { ...x, annotations: a });
// X with the icons (from 2025-11-25).
const withIcons = (v, x) => (v >= '2025-11-25' ? { ...x, icons: ICONS } : x);

// The content of the tool annotated at version V.
function annotatedContent(v) {
	const both = { audience: ['user', 'assistant'], lastModified: MODIFIED };
	const link = { audience: ['user'], priority: 0.25, lastModified: '2025-06-18T09:30:00.5+02:00' };
	return [
		withAnn({ type: 'text', text: 'for the user' }, { audience: ['user'], priority: 0.5 }),
		withAnn({ type: 'image', data: PNG_B64, mimeType: 'image/png' },
		    ann(v, { audience: ['assistant'], priority: 1, lastModified: MODIFIED })),
		v >= '2025-03-26' ? withAnn({ type: 'audio', data: PNG_B64, mimeType: 'audio/wav' }, ann(v, both)) :
		    withAnn({ type: 'text', text: '[audio audio/wav, 70 bytes: not supported by protocol 2024-11-05]' },
			ann(v, both)),
		withAnn({ type: 'resource', resource: { uri: 'test://annotated/embedded', mimeType: 'text/plain',
		    text: 'embedded' } }, { priority: 0 }),
		v >= '2025-06-18' ? withAnn({ type: 'resource_link', uri: 'test://static-text', name: 'static-text',
		    mimeType: 'text/plain' }, link) :
		    withAnn({ type: 'text', text: 'static-text: test://static-text' }, ann(v, link)),
		// MCP_ESTATE (-4) with no block yet and for a second annotation;
		// MCP_EINVAL (-2) for priority 1.5, audience 4, a bare date, NaN.
		withAnn({ type: 'text', text: 'codes: none -4 twice -4 priority -2 audience -2 date -2 nan -2 ok 0 0 0 0 0' },
		    { audience: ['user'] }),
		{ type: 'text', text: 'empty 0, then 0' },
	];
}

const annotatedTool = v => withIcons(v, { name: 'annotated', inputSchema: { type: 'object' },
    description: 'Annotated content blocks of every type' });
const annotatedResource = v => withIcons(v, withAnn({ uri: 'test://annotated', name: 'annotated',
    description: 'An annotated resource', mimeType: 'text/plain' },
    ann(v, { audience: ['user', 'assistant'], priority: 0.8, lastModified: MODIFIED })));
const annotatedTemplate = v => withIcons(v, { uriTemplate: 'test://annotated/{x}', name: 'annotated-template',
    annotations: { audience: ['assistant'] } });
const annotatedPrompt = v => withIcons(v, { name: 'annotated_prompt', description: 'An annotated prompt' });
const promptMessages = v => [
	{ role: 'user', content: withAnn({ type: 'text', text: 'An annotated prompt message.' },
	    ann(v, { audience: ['user'], priority: 0.3, lastModified: MODIFIED })) },
	{ role: 'assistant', content: { type: 'text', text: 'Not annotated.' } },
];
const readContents = [{ uri: 'test://annotated', mimeType: 'text/plain', text: 'annotated' },
    { uri: 'test://annotated', mimeType: 'text/plain', text: 'annotate rc -2' }];

// ---- servers ----------------------------------------------------------------------

let httpPromise = null;
function httpServer() {
	httpPromise ??= startHttp(SERVER, [], 'http');
	return httpPromise;
}

// decorate has run on the HTTP server (stdio: every client its own process).
let sseDecorated = false;
function decoratedText(kind) {
	if (kind !== 'sse')
		return DECORATED;
	const t = sseDecorated ? REDECORATED : DECORATED;
	sseDecorated = true;
	return t;
}

// ---- sdk ----------------------------------------------------------------------------

async function sdkGroup(kind) {
	const v = '2025-11-25';
	const conn = await openSdkConn({ kind, server: SERVER, tag: 'sdk', httpServer,
	    clientInfo: { name: 'libmcp-features4', version: '1.0.0' } });
	if (!ok(!conn.connectError, 'sdk: connect', conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	is(client.getServerVersion()?.name, 'feat-server', 'sdk: connected to feat-server');
	let r = await settle(client.listTools());
	const tools = r.value?.tools ?? [];
	is(tools.find(t => t.name === 'annotated'), annotatedTool(v), 'sdk: tools/list: the tool annotated with its icons',
	    r.error && errText(r.error));
	is(tools.filter(t => t.icons !== undefined).map(t => t.name), ['annotated'], 'sdk: tools/list: no other tool has icons');
	r = await settle(client.callTool({ name: 'annotated', arguments: {} }));
	is(r.value?.content, annotatedContent(v), 'sdk: tools/call annotated: every block with its annotations',
	    r.error && errText(r.error));
	r = await settle(client.callTool({ name: 'decorate', arguments: {} }));
	is(r.value?.content, [{ type: 'text', text: decoratedText(kind) }], 'sdk: decorate registers and annotates',
	    r.error && errText(r.error));
	r = await settle(client.listResources());
	is(r.value?.resources?.find(x => x.uri === 'test://annotated'), annotatedResource(v),
	    'sdk: resources/list: the annotated resource, annotations and icons', r.error && errText(r.error));
	r = await settle(client.listResourceTemplates());
	is(r.value?.resourceTemplates?.find(x => x.uriTemplate === 'test://annotated/{x}'), annotatedTemplate(v),
	    'sdk: resources/templates/list: the annotated template', r.error && errText(r.error));
	r = await settle(client.listPrompts());
	is(r.value?.prompts?.find(x => x.name === 'annotated_prompt'), annotatedPrompt(v),
	    'sdk: prompts/list: the prompt with icons', r.error && errText(r.error));
	r = await settle(client.getPrompt({ name: 'annotated_prompt' }));
	is(r.value?.messages, promptMessages(v), 'sdk: prompts/get: an annotated message, then a plain one',
	    r.error && errText(r.error));
	r = await settle(client.readResource({ uri: 'test://annotated' }));
	is(r.value?.contents, readContents, 'sdk: resources/read: contents carry no annotations (MCP_EINVAL)',
	    r.error && errText(r.error));
	is(conn.errors.map(errText), [], 'sdk: the SDK reported no errors (its validation accepted every field)');
	await closeSdk(conn);
}

// ---- raw, at each version -------------------------------------------------------------

async function openRaw(kind, tag, version) {
	let c;
	if (kind === 'stdio') {
		c = new RawStdio(SERVER, [], `stdio ${tag}`, { clientName: 'libmcp-features4' });
	} else {
		const srv = await httpServer();
		if (srv.base === null)
			return { error: 'the HTTP server did not start' };
		c = await RawSse.open(srv.base, `sse ${tag}`, { clientName: 'libmcp-features4' });
		if (!c.endpoint)
			return { error: `no endpoint event (status ${c.status})` };
	}
	const r = await c.init(version, {});
	if (r?.msg?.result?.protocolVersion !== version) {
		c.close();
		return { error: `initialize: ${show(r?.msg)}` };
	}
	return { c };
}

async function rawGroup(kind) {
	for (const v of VERSIONS) {
		const { c, error } = await openRaw(kind, `raw ${v}`, v);
		if (!ok(c !== undefined, `raw ${v}: initialize`, error))
			continue;
		const result = async (method, params) => (await c.request(method, params))?.msg?.result;
		let r = await result('tools/list');
		is(r?.tools?.find(t => t.name === 'annotated'), annotatedTool(v),
		    `raw ${v}: tools/list: the tool annotated${v >= '2025-11-25' ? ', with icons' : ', no icons'}`);
		const call = await c.request('tools/call', { name: 'annotated', arguments: {} });
		is(call?.msg?.result?.content, annotatedContent(v), `raw ${v}: tools/call annotated: the content blocks as ${v} knows them`);
		ok(v >= '2025-06-18' || !call?.raw.includes('lastModified'), `raw ${v}: no "lastModified" anywhere in the result`,
		    call?.raw);
		r = await result('tools/call', { name: 'decorate', arguments: {} });
		is(r?.content, [{ type: 'text', text: decoratedText(kind) }], `raw ${v}: decorate`);
		const lists = [];
		r = await c.request('resources/list');
		lists.push(r?.raw);
		is(r?.msg?.result?.resources?.find(x => x.uri === 'test://annotated'), annotatedResource(v),
		    `raw ${v}: resources/list: the annotated resource`);
		r = await c.request('resources/templates/list');
		lists.push(r?.raw);
		is(r?.msg?.result?.resourceTemplates?.find(x => x.uriTemplate === 'test://annotated/{x}'), annotatedTemplate(v),
		    `raw ${v}: resources/templates/list: the annotated template`);
		r = await c.request('prompts/list');
		lists.push(r?.raw);
		is(r?.msg?.result?.prompts?.find(x => x.name === 'annotated_prompt'), annotatedPrompt(v),
		    `raw ${v}: prompts/list: the prompt`);
		r = await c.request('prompts/get', { name: 'annotated_prompt' });
		lists.push(r?.raw);
		is(r?.msg?.result?.messages, promptMessages(v), `raw ${v}: prompts/get: the messages`);
		if (v < '2025-11-25')
			ok(lists.every(l => l !== undefined && !l.includes('"icons"')), `raw ${v}: no "icons" in any list`, lists);
		if (v < '2025-06-18')
			ok(lists.every(l => l !== undefined && !l.includes('lastModified')), `raw ${v}: no "lastModified" in any list`,
			    lists);
		is(c.bad, [], `raw ${v}: every message was JSON`);
		c.close();
	}
}

// ---- main ------------------------------------------------------------------------------

async function main() {
	if (!ok(existsSync(SERVER), `server binary exists: ${SERVER}`))
		return;
	const groups = { sdk: sdkGroup, raw: rawGroup };
	for (const kind of KINDS) {
		for (const g of GROUPS) {
			tap.label = `${kind}: `;
			const t = Date.now();
			try {
				await groups[g](kind);
			} catch (e) {
				ok(false, `${g}: the group threw`, e?.stack ?? show(e));
			}
			diag(`${kind} ${g}: ${Date.now() - t} ms`);
		}
	}
	tap.label = '';
	if (httpPromise !== null) {
		const { p, base } = await httpPromise;
		if (base !== null) {
			await stop(p, 'SIGTERM', 8000);
			ok(p.exit?.code === 0, `the HTTP server (${base}) exits 0 on SIGTERM`, p.exit);
		}
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
end();
