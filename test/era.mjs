// era.mjs: protocol 2026-07-28, the stateless core, beside the versions of
// initialize, on stdio (JSON lines to a child process) and on Streamable
// HTTP (raw fetch), against build/mcp-demo and build/conformance-server:
// server/discover; resultType, _meta serverInfo and (lists, discover,
// resources/read) ttlMs and cacheScope on every modern result; -32602 for
// a missing _meta field or a bad logLevel, -32022 with the supported
// list, -32601 for the methods the era removed, -32021 for a capability
// the client did not declare; on HTTP their statuses (400, 404), the
// Mcp-Method, Mcp-Name and Mcp-Param-* checks (-32020, base64 values), no
// Mcp-Session-Id and no event ids, 405 for GET, and a closed response
// stream cancelling its call; on stdio, no message for a cancelled
// request; and a legacy TypeScript SDK client (1.32.2) on the same
// server at the same time, which sees nothing of any of this. No npm
// SDK speaks 2026-07-28 yet, hence the raw requests. Prints TAP; exits 1
// when an assertion fails. Node 20; run from the repository root
// (test/era.sh does).
import net from 'node:net';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { done, is, ok, show, tap } from './node/harness.mjs';
import { CONF, DEMO, FEAT, killAll, startServer } from './node/http-client.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SDK = path.join(HERE, 'node/node_modules/@modelcontextprotocol/sdk/dist/esm');
const load = (p) => import(pathToFileURL(path.join(SDK, p)).href);

const V = '2026-07-28';
const SERVER = 'io.modelcontextprotocol/serverInfo';
const META = (extra = {}) => ({
	'io.modelcontextprotocol/protocolVersion': V,
	'io.modelcontextprotocol/clientCapabilities': {},
	'io.modelcontextprotocol/clientInfo': { name: 'era-test', version: '1.0.0' },
	...extra,
});
const req = (id, method, params = {}, meta = META()) =>
	({ jsonrpc: '2.0', id, method, params: meta === null ? params : { ...params, _meta: meta } });
const CACHED = new Set(['server/discover', 'tools/list', 'resources/list', 'resources/templates/list',
	'prompts/list', 'resources/read']);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The fields every modern result has; ttlMs and cacheScope where the
// method is cacheable (and only there).
function modern(m, method, name, where) {
	const r = m && m.result;
	ok(r && r.resultType === 'complete', `${where}: ${method}: resultType "complete"`, show(m));
	ok(r && r._meta && r._meta[SERVER] && r._meta[SERVER].name === name &&
	    typeof r._meta[SERVER].version === 'string',
	    `${where}: ${method}: _meta["${SERVER}"] names ${name}`, show(m));
	if (CACHED.has(method))
		ok(r && Number.isInteger(r.ttlMs) && r.ttlMs >= 0 &&
		    (r.cacheScope === 'public' || r.cacheScope === 'private'),
		    `${where}: ${method}: ttlMs (an integer >= 0) and cacheScope (public or private)`, show(r));
	else
		ok(r && r.ttlMs === undefined && r.cacheScope === undefined,
		    `${where}: ${method}: no caching hints`, show(r));
}

const isErr = (m, code) => m && m.error && m.error.code === code && typeof m.error.message === 'string';

// ---- stdio ------------------------------------------------------------------

class Stdio {
	constructor(prog, args = []) {
		this.proc = spawn(prog, ['--stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
		this.msgs = [];
		this.stderr = '';
		this.waiters = [];
		let rest = '';
		this.proc.stdout.setEncoding('utf8');
		this.proc.stdout.on('data', (d) => {
			rest += d;
			let i;
			while ((i = rest.indexOf('\n')) >= 0) {
				const line = rest.slice(0, i);
				rest = rest.slice(i + 1);
				let m;
				try { m = JSON.parse(line); } catch { m = { unparsable: line }; }
				m.at = Date.now();
				this.msgs.push(m);
			}
			this.wake();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.proc.stdin.on('error', () => {});
	}

	wake() {
		for (const w of this.waiters.splice(0))
			w();
	}

	send(m) {
		this.proc.stdin.write(JSON.stringify(m) + '\n');
	}

	// The answer to ID (waits up to MS).
	async answer(id, ms = 5000) {
		const end = Date.now() + ms;
		for (;;) {
			const m = this.msgs.find((x) => x.id === id && (x.result || x.error));
			if (m || Date.now() > end)
				return m;
			await new Promise((r) => { this.waiters.push(r); setTimeout(r, 50); });
		}
	}

	async ask(m, ms) {
		this.send(m);
		return this.answer(m.id, ms);
	}

	close() {
		this.proc.stdin.end();
		return new Promise((r) => {
			const t = setTimeout(() => { this.proc.kill('SIGKILL'); r(null); }, 5000);
			this.proc.on('exit', (code) => { clearTimeout(t); r(code); });
		});
	}
}

async function stdioDemo() {
	tap.label = 'stdio mcp-demo: ';
	const s = new Stdio(DEMO);
	const d = await s.ask(req('d', 'server/discover'));
	modern(d, 'server/discover', 'mcp-demo', 'stdio');
	const r = d && d.result;
	ok(r && Array.isArray(r.supportedVersions) && r.supportedVersions[0] === V &&
	    r.supportedVersions.includes('2025-11-25') && r.supportedVersions.includes('2024-11-05'),
	    'server/discover: supportedVersions, 2026-07-28 first, then the versions of initialize', show(r));
	ok(r && r.capabilities && r.capabilities.tools && r.capabilities.resources && r.capabilities.prompts &&
	    r.capabilities.completions, 'server/discover: capabilities tools, resources, prompts, completions',
	show(r && r.capabilities));
	ok(r && typeof r.instructions === 'string', 'server/discover: instructions', show(r));
	ok(r && r.protocolVersion === undefined && r.serverInfo === undefined,
	    'server/discover: nothing of initialize\'s result (protocolVersion, serverInfo)', show(r));
	const calls = [
		['tools/list', {}], ['resources/list', {}], ['resources/templates/list', {}], ['prompts/list', {}],
		['resources/read', { uri: 'demo://readme' }], ['tools/call', { name: 'echo', arguments: { text: 'hi' } }],
		['prompts/get', { name: 'review', arguments: { language: 'C' } }],
		['completion/complete', { ref: { type: 'ref/prompt', name: 'review' },
			argument: { name: 'language', value: 'p' } }],
	];
	const got = await Promise.all(calls.map(([method, p], i) => s.ask(req(`m${i}`, method, p))));
	calls.forEach(([method], i) => modern(got[i], method, 'mcp-demo', 'stdio'));
	ok(got[0]?.result?.tools?.some((t) => t.name === 'echo'), 'tools/list: the tools', show(got[0]));
	ok(got[4]?.result?.contents?.[0]?.uri === 'demo://readme', 'resources/read: the contents', show(got[4]));
	is(got[5]?.result?.content, [{ type: 'text', text: 'hi' }], 'tools/call echo: its content');

	// The _meta's required fields, and the version; clientInfo is a SHOULD.
	let m = await s.ask(req('e0', 'tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': V,
		'io.modelcontextprotocol/clientCapabilities': {} }));
	modern(m, 'tools/list', 'mcp-demo', 'stdio: no clientInfo');
	m = await s.ask(req('e1', 'tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': V }));
	ok(isErr(m, -32602), 'no clientCapabilities: -32602', show(m));
	m = await s.ask(req('e2', 'tools/list', {}, {
		'io.modelcontextprotocol/protocolVersion': 7,
		'io.modelcontextprotocol/clientCapabilities': {} }));
	ok(isErr(m, -32602), 'a protocolVersion that is no string: -32602', show(m));
	m = await s.ask(req('e3', 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '1900-01-01' })));
	ok(isErr(m, -32022) && m.error.data?.requested === '1900-01-01' &&
	    Array.isArray(m.error.data?.supported) && m.error.data.supported.includes(V),
	'an unsupported version: -32022, data.supported (with 2026-07-28) and data.requested', show(m));
	m = await s.ask(req('e4', 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '2025-11-25' })));
	ok(isErr(m, -32022), 'a version of initialize\'s in _meta: -32022 (served after initialize only)', show(m));
	m = await s.ask(req('e5', 'tools/list', {}, META({ 'io.modelcontextprotocol/logLevel': 'loud' })));
	ok(isErr(m, -32602), 'a logLevel that is no level: -32602', show(m));
	for (const method of ['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'no/such'])
		ok(isErr(await s.ask(req(`x-${method}`, method, method.startsWith('resources') ?
		    { uri: 'demo://readme' } : method === 'logging/setLevel' ? { level: 'debug' } : {})), -32601),
		`${method}: -32601 in this era`);
	m = await s.ask(req('e6', 'resources/read', { uri: 'demo://none' }));
	ok(isErr(m, -32602), 'an unknown resource: -32602, not -32002', show(m));
	m = await s.ask(req('e7', 'tools/call', { name: 'nope', arguments: {} }));
	ok(isErr(m, -32602), 'an unknown tool: -32602', show(m));

	// Cancellation: nothing more for the request once it is cancelled,
	// neither its progress nor its answer.
	s.send(req('slow', 'tools/call', { name: 'sleep', arguments: { ms: 3000 } }, META({ progressToken: 'pt' })));
	const t0 = Date.now();
	while (!s.msgs.some((x) => x.method === 'notifications/progress') && Date.now() - t0 < 3000)
		await sleep(20);
	ok(s.msgs.some((x) => x.method === 'notifications/progress' && x.params.progressToken === 'pt'),
	    'tools/call sleep with a progressToken: progress notifications come');
	s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow', reason: 'test' } });
	const cancelledAt = Date.now();
	await sleep(400);
	m = await s.ask(req('after', 'tools/list'));
	modern(m, 'tools/list', 'mcp-demo', 'stdio: after a cancel');
	ok(!s.msgs.some((x) => x.at > cancelledAt + 50 && x.method === 'notifications/progress') &&
	    !s.msgs.some((x) => x.id === 'slow'), 'after notifications/cancelled: no progress and no answer ' +
	    'for the cancelled request', show(s.msgs.filter((x) => x.id === 'slow' || x.at > cancelledAt)));

	// Then initialize: this process is legacy from here on.
	m = await s.ask({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: {
		protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } });
	ok(m?.result?.protocolVersion === '2025-11-25' && m.result.resultType === undefined,
	    'initialize after modern requests: 2025-11-25, a legacy result', show(m));
	s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
	m = await s.ask({ jsonrpc: '2.0', id: 'l1', method: 'tools/list', params: {} });
	ok(m?.result?.tools && m.result.resultType === undefined && m.result._meta === undefined &&
	    m.result.ttlMs === undefined, 'initialized: tools/list has no resultType, _meta or ttlMs', show(m));
	m = await s.ask(req('l2', 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '1900-01-01' })));
	ok(m?.result?.tools && m.result.resultType === undefined,
	    'initialized: a modern _meta is ignored (legacy answer, no -32022)', show(m));
	m = await s.ask({ jsonrpc: '2.0', id: 'l3', method: 'ping' });
	is(m?.result, {}, 'initialized: ping answers {}');
	m = await s.ask({ jsonrpc: '2.0', id: 'l4', method: 'server/discover', params: { _meta: META() } });
	ok(isErr(m, -32601), 'initialized: server/discover is unknown (-32601)', show(m));
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

async function stdioConformance() {
	tap.label = 'stdio conformance-server: ';
	const s = new Stdio(CONF);
	// Logging per request: notifications/message only with a logLevel,
	// and only at or above it.
	const logs = (id) => s.msgs.filter((x) => x.method === 'notifications/message').length;
	let before = logs();
	let m = await s.ask(req('g1', 'tools/call', { name: 'test_tool_with_logging', arguments: {} }));
	modern(m, 'tools/call', 'mcp-conformance-test-server', 'stdio');
	is(logs() - before, 0, 'no logLevel in _meta: no notifications/message');
	before = logs();
	m = await s.ask(req('g2', 'tools/call', { name: 'test_tool_with_logging', arguments: {} },
	    META({ 'io.modelcontextprotocol/logLevel': 'info' })));
	const g2 = s.msgs.findIndex((x) => x.id === 'g2');
	ok(logs() - before === 3 && s.msgs.slice(0, g2).filter((x) => x.method === 'notifications/message').length >=
	    before + 3, 'logLevel info: its three notifications/message, before the answer',
	show(s.msgs.slice(-5)));
	before = logs();
	m = await s.ask(req('g3', 'tools/call', { name: 'test_tool_with_logging', arguments: {} },
	    META({ 'io.modelcontextprotocol/logLevel': 'error' })));
	is(logs() - before, 0, 'logLevel error: no info messages');
	// A capability the client did not declare.
	m = await s.ask(req('s1', 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } }));
	ok(isErr(m, -32021) && m.error.data?.requiredCapabilities?.sampling !== undefined,
	    'test_sampling without the sampling capability: -32021, data.requiredCapabilities.sampling', show(m));
	m = await s.ask(req('s2', 'tools/call', { name: 'test_elicitation', arguments: { message: 'hi' } }));
	ok(isErr(m, -32021) && m.error.data?.requiredCapabilities?.elicitation !== undefined,
	    'test_elicitation without the elicitation capability: -32021', show(m));
	ok(!s.msgs.some((x) => x.method && x.id !== undefined), 'no request from the server, ever', show(s.msgs));
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

// ---- Streamable HTTP ----------------------------------------------------------

// A modern POST; HEADERS override (undefined removes) the usual ones.
async function mpost(port, body, headers = {}, signal) {
	const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
		'mcp-protocol-version': V, 'mcp-method': body.method };
	const name = body.params?.name ?? body.params?.uri;
	if (['tools/call', 'prompts/get', 'resources/read'].includes(body.method) && name !== undefined)
		h['mcp-name'] = name;
	for (const [k, v] of Object.entries(headers))
		if (v === undefined)
			delete h[k];
		else
			h[k] = v;
	const r = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: h,
		body: JSON.stringify(body), signal });
	const text = await r.text();
	const ctype = r.headers.get('content-type') || '';
	let msgs = [];
	if (ctype.startsWith('text/event-stream'))
		msgs = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6)
		    .map((l) => JSON.parse(l.slice(6)));
	else if (text.length > 0)
		try { msgs = [JSON.parse(text)]; } catch { msgs = [{ unparsable: text }]; }
	return { status: r.status, headers: r.headers, text, msgs, msg: msgs.find((x) => x.id === body.id),
		summary: `${r.status} ${show(Object.fromEntries(r.headers))} ${text.slice(0, 600)}` };
}

async function httpDemo() {
	tap.label = 'http mcp-demo: ';
	const srv = await startServer(['-v']);
	const port = srv.port;
	let x = await mpost(port, req(1, 'server/discover'));
	ok(x.status === 200, 'server/discover: 200', x.summary);
	modern(x.msg, 'server/discover', 'mcp-demo', 'http');
	ok(x.headers.get('mcp-session-id') === null, 'server/discover: no Mcp-Session-Id', x.summary);
	ok(!/^id:/m.test(x.text), 'server/discover: no SSE event ids (nothing to resume)', x.summary);
	const calls = [
		['tools/list', {}], ['resources/list', {}], ['resources/templates/list', {}], ['prompts/list', {}],
		['resources/read', { uri: 'demo://readme' }], ['tools/call', { name: 'echo', arguments: { text: 'hi' } }],
		['prompts/get', { name: 'review', arguments: { language: 'C' } }],
	];
	const got = await Promise.all(calls.map(([method, p], i) => mpost(port, req(10 + i, method, p))));
	calls.forEach(([method], i) => {
		ok(got[i].status === 200 && got[i].headers.get('mcp-session-id') === null,
		    `${method}: 200, no Mcp-Session-Id`, got[i].summary);
		modern(got[i].msg, method, 'mcp-demo', 'http');
	});
	is(got[5].msg?.result?.content, [{ type: 'text', text: 'hi' }], 'tools/call echo: its content');

	// Header checks: -32020 and 400.
	const hm = async (desc, body, headers, code = -32020, status = 400) => {
		const r = await mpost(port, body, headers);
		ok(r.status === status && isErr(r.msg, code), `${desc}: ${status} + ${code}`, r.summary);
	};
	const echo = (id) => req(id, 'tools/call', { name: 'echo', arguments: { text: 'x' } });
	await hm('no Mcp-Method', req(20, 'tools/list'), { 'mcp-method': undefined });
	await hm('Mcp-Method tools/call for a tools/list body', req(21, 'tools/list'), { 'mcp-method': 'tools/call' });
	await hm('no Mcp-Name on tools/call', echo(22), { 'mcp-name': undefined });
	await hm('Mcp-Name add for a call of echo', echo(23), { 'mcp-name': 'add' });
	await hm('Mcp-Name "=?base64?!!!!?=" (not base64)', echo(24), { 'mcp-name': '=?base64?!!!!?=' });
	await hm('Mcp-Name in base64 of another name', echo(25), { 'mcp-name': `=?base64?${btoa('add')}?=` });
	await hm('no Mcp-Name on resources/read', req(26, 'resources/read', { uri: 'demo://readme' }),
	    { 'mcp-name': undefined });
	await hm('no MCP-Protocol-Version header, _meta saying 2026-07-28', req(27, 'tools/list'),
	    { 'mcp-protocol-version': undefined });
	await hm('MCP-Protocol-Version 2026-07-28, _meta saying 1900-01-01',
	    req(28, 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '1900-01-01' })));
	x = await mpost(port, echo(29), { 'mcp-name': `=?base64?${btoa('echo')}?=` });
	ok(x.status === 200 && x.msg?.result?.resultType === 'complete', 'Mcp-Name in base64 ("=?base64?ZWNobw==?="): ' +
	    'decoded and accepted', x.summary);
	const nb = req(30, 'resources/read', { uri: 'demo://greeting/Zoë' });
	x = await mpost(port, nb, { 'mcp-name': `=?base64?${Buffer.from('demo://greeting/Zoë').toString('base64')}?=` });
	ok(x.status === 200 && /Zoë/.test(JSON.stringify(x.msg?.result?.contents)),
	    'resources/read of a non-ASCII uri with a base64 Mcp-Name: 200, its contents', x.summary);

	// The body as the protocol reads it is what the headers are checked
	// against: ids that only its reader takes (1.0, 1e0, beyond 64
	// bits), deep nesting, repeated headers; each was once served with
	// the checks skipped.
	const meta = JSON.stringify(META());
	const evil = (id, extra = '') => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo",` +
	    `"arguments":{"text":"pwned"${extra}},"_meta":${meta}}}`;
	const raw = async (desc, body, headers) => {
		const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
			'mcp-protocol-version': V, ...headers };
		for (const k of Object.keys(h))
			if (h[k] === undefined)
				delete h[k];
		const r = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: h, body });
		const text = await r.text();
		let m;
		try { m = JSON.parse(text); } catch { m = undefined; }
		ok(r.status === 400 && isErr(m, -32020) && !text.includes('pwned'),
		    `${desc}: 400 + -32020, not served`, `${r.status} ${text.slice(0, 300)}`);
	};
	await raw('id 1.0, Mcp-Method tools/list and Mcp-Name add for a call of echo', evil('1.0'),
	    { 'mcp-method': 'tools/list', 'mcp-name': 'add' });
	await raw('id 1e0 and no Mcp-Method or Mcp-Name', evil('1e0'), {});
	await raw('id 2.0 and no MCP-Protocol-Version header', evil('2.0'),
	    { 'mcp-protocol-version': undefined, 'mcp-method': 'tools/call', 'mcp-name': 'echo' });
	await raw('id 123456789012345678901234567890, Mcp-Method tools/list', evil('123456789012345678901234567890'),
	    { 'mcp-method': 'tools/list', 'mcp-name': 'echo' });
	await raw('arguments nested 510 deep, Mcp-Method tools/list',
	    evil('3', `,"x":${'['.repeat(510)}${']'.repeat(510)}`), { 'mcp-method': 'tools/list', 'mcp-name': 'echo' });
	// Two Mcp-Name lines (fetch would join them): a raw request.
	const twice = await new Promise((resolve) => {
		const body = JSON.stringify(req(31, 'tools/call', { name: 'echo', arguments: { text: 'pwned' } }));
		const sock = net.connect(port, '127.0.0.1', () => sock.end(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
		    `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
		    `MCP-Protocol-Version: ${V}\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nMcp-Name: add\r\n` +
		    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`));
		let got = '';
		sock.on('data', (d) => { got += d; });
		sock.on('close', () => resolve(got));
		sock.on('error', () => resolve(got));
	});
	ok(/^HTTP\/1\.1 400/.test(twice) && /-32020/.test(twice) && !twice.includes('pwned'),
	    'Mcp-Name sent twice (echo, then add): 400 + -32020, not served', twice.slice(0, 400));

	// The _meta, the version, the methods.
	await hm('no _meta (header 2026-07-28)', req(40, 'tools/list', {}, null), {}, -32602);
	await hm('no clientCapabilities', req(41, 'tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': V }),
	    {}, -32602);
	x = await mpost(port, req(42, 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '1900-01-01' })),
	    { 'mcp-protocol-version': '1900-01-01' });
	ok(x.status === 400 && isErr(x.msg, -32022) && x.msg.error.data?.supported?.[0] === V &&
	    x.msg.error.data?.requested === '1900-01-01', 'version 1900-01-01 (header and _meta): 400 + -32022 with ' +
	    'data.supported and data.requested', x.summary);
	await hm('an unknown method', req(43, 'no/such'), {}, -32601, 404);
	await hm('ping', req(44, 'ping'), {}, -32601, 404);
	await hm('logging/setLevel', req(45, 'logging/setLevel', { level: 'debug' }), {}, -32601, 404);
	x = await mpost(port, req(46, 'resources/read', { uri: 'demo://none' }));
	ok(x.status === 200 && isErr(x.msg, -32602), 'an unknown resource: -32602 (not -32002), 200', x.summary);
	x = await fetch(`http://127.0.0.1:${port}/mcp`, { headers: { accept: 'text/event-stream',
		'mcp-protocol-version': V } });
	ok(x.status === 405, 'GET /mcp with MCP-Protocol-Version 2026-07-28: 405', String(x.status));
	await x.text();

	// Closing the response stream cancels the call.
	const ac = new AbortController();
	const slow = mpost(port, req(50, 'tools/call', { name: 'sleep', arguments: { ms: 4000 } }), {}, ac.signal)
	    .catch((e) => e);
	const t0 = Date.now();
	while (!/sleeping 4000 ms/.test(srv.stderr) && Date.now() - t0 < 3000)
		await sleep(20);
	ac.abort();
	const t1 = Date.now();
	while (!/tools\/call: cancelled/.test(srv.stderr) && Date.now() - t1 < 2500)
		await sleep(20);
	await slow;
	ok(/tools\/call: cancelled/.test(srv.stderr) && Date.now() - t1 < 2500,
	    'a tools/call whose client closed the response: cancelled within a second or two', srv.tail(1200));
	ok(!/slept 4000 ms/.test(srv.stderr), 'the cancelled sleep never finished', srv.tail(600));
	srv.proc.kill('SIGTERM');
}

// A legacy SDK client and modern requests on one server at once.
async function mixed() {
	tap.label = 'http conformance-server, mixed: ';
	const srv = await startServer([], CONF);
	const port = srv.port;
	const { Client } = await load('client/index.js');
	const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
	const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
	const seen = [];
	const start = transport.start.bind(transport);
	transport.start = async () => {
		const h = transport.onmessage;
		transport.onmessage = (msg, extra) => { seen.push(msg); h?.(msg, extra); };
		return start();
	};
	const client = new Client({ name: 'legacy', version: '1.0.0' }, { capabilities: {} });
	await client.connect(transport);
	ok(transport.sessionId && /^[0-9a-f]{32}$/.test(transport.sessionId), 'the SDK client has a session',
	    show(transport.sessionId));
	const modernReqs = (k) => [
		mpost(port, req(`d${k}`, 'server/discover')),
		mpost(port, req(`t${k}`, 'tools/call', { name: 'test_simple_text', arguments: {} })),
		mpost(port, req(`l${k}`, 'tools/list')),
		mpost(port, req(`p${k}`, 'ping')),
		mpost(port, req(`v${k}`, 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '1999-01-01' })),
		    { 'mcp-protocol-version': '1999-01-01' }),
		mpost(port, req(`h${k}`, 'tools/list'), { 'mcp-method': 'tools/call' }),
	];
	const legacy = (k) => [client.listTools(), client.callTool({ name: 'test_simple_text', arguments: {} }),
		client.ping(), client.callTool({ name: 'test_tool_with_logging', arguments: {} }),
		client.listResources(), client.listPrompts()];
	const rounds = await Promise.all([0, 1, 2].map((k) => Promise.all([Promise.all(modernReqs(k)),
		Promise.allSettled(legacy(k))])));
	let modernGood = true;
	let why = '';
	for (const [ms] of rounds) {
		const [d, t, l, p, v, h] = ms;
		const good = d.status === 200 && d.msg?.result?.resultType === 'complete' &&
		    t.status === 200 && t.msg?.result?._meta?.[SERVER] && l.msg?.result?.ttlMs !== undefined &&
		    p.status === 404 && isErr(p.msg, -32601) && v.status === 400 && isErr(v.msg, -32022) &&
		    h.status === 400 && isErr(h.msg, -32020) && ms.every((x) => x.headers.get('mcp-session-id') === null);
		if (!good)
			why = ms.map((x) => x.summary).join('\n');
		modernGood &&= good;
	}
	ok(modernGood, 'three rounds of modern requests beside the SDK client: results dressed, -32601/404, ' +
	    '-32022/400, -32020/400, no Mcp-Session-Id', why);
	const legacyRes = rounds.flatMap(([, ls]) => ls);
	ok(legacyRes.every((x) => x.status === 'fulfilled'), 'the SDK client\'s 18 requests all succeed',
	    show(legacyRes.filter((x) => x.status !== 'fulfilled')));
	const text = JSON.stringify(seen);
	ok(seen.length >= 18, `the SDK client received its answers (${seen.length} messages)`);
	ok(!/resultType|io\.modelcontextprotocol\/|ttlMs|cacheScope/.test(text),
	    'nothing the SDK client received has resultType, ttlMs, cacheScope or an io.modelcontextprotocol/ key',
	    text.slice(0, 2000));
	ok(!/-3202[012]/.test(text), 'the SDK client never saw -32020, -32021 or -32022', text.slice(0, 1000));
	ok(seen.some((x) => x.method === 'notifications/message'),
	    'the legacy session still gets its log notifications (no logLevel needed)', text.slice(0, 600));
	// A legacy session's requests with a modern _meta stay legacy.
	const r = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: {
		'content-type': 'application/json', accept: 'application/json, text/event-stream',
		'mcp-session-id': transport.sessionId, 'mcp-protocol-version': '2025-11-25' },
	body: JSON.stringify(req('z', 'tools/list', {}, META({ 'io.modelcontextprotocol/protocolVersion': '1999-01-01' }))) });
	const body = await r.text();
	ok(r.status === 200 && /"tools"/.test(body) && !/resultType|-32022/.test(body),
	    'the session\'s own POST with a modern _meta: a legacy answer, no -32022', `${r.status} ${body.slice(0, 300)}`);
	// Logging per request, on the request's own stream.
	const lg = (id, meta) => mpost(port, req(id, 'tools/call', { name: 'test_tool_with_logging', arguments: {} },
	    meta));
	let y = await lg('log0', META());
	ok(y.status === 200 && y.msg?.result?.resultType === 'complete' &&
	    !y.msgs.some((m) => m.method === 'notifications/message'),
	'modern test_tool_with_logging without a logLevel: its result, no notifications/message', y.summary);
	y = await lg('log1', META({ 'io.modelcontextprotocol/logLevel': 'debug' }));
	ok(y.status === 200 && y.msgs.filter((m) => m.method === 'notifications/message').length === 3 &&
	    y.msgs[y.msgs.length - 1].id === 'log1', 'with logLevel debug: three notifications/message on its ' +
	    'stream, then the result', y.summary);
	// -32021 over HTTP: 400.
	const x = await mpost(port, req('cap', 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } }));
	ok(x.status === 400 && isErr(x.msg, -32021) && x.msg.error.data?.requiredCapabilities?.sampling !== undefined,
	    'test_sampling without the sampling capability: 400 + -32021', x.summary);
	await client.close();
	srv.proc.kill('SIGTERM');
	// A modern answer is not streamed at --stream-after-ms (nothing to
	// prime): the error still gets its own status.
	const now = await startServer(['--stream-after-ms', '0'], CONF);
	const z = await mpost(now.port, req('cap0', 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } }));
	ok(z.status === 400 && isErr(z.msg, -32021), '--stream-after-ms 0: still 400 + -32021, not 200 and a stream',
	    z.summary);
	now.proc.kill('SIGTERM');
}


// The other shapes a modern answer can take: a loop tool, a tool past its
// time limit (both on stdio), --stateless and --json-response (HTTP).
async function shapes() {
	tap.label = 'shapes: ';
	const s = new Stdio(DEMO, ['--loop-tools', '--tool-timeout', '200']);
	let m = await s.ask(req('loop', 'tools/call', { name: 'echo', arguments: { text: 'on the loop' } }));
	modern(m, 'tools/call', 'mcp-demo', 'stdio --loop-tools: echo');
	is(m?.result?.content, [{ type: 'text', text: 'on the loop' }], 'stdio --loop-tools: echo: its content');
	m = await s.ask(req('late', 'tools/call', { name: 'sleep', arguments: { ms: 3000 } }));
	modern(m, 'tools/call', 'mcp-demo', 'stdio --tool-timeout 200: sleep 3000');
	ok(m?.result?.isError === true && /timed out/.test(JSON.stringify(m.result.content)),
	    'stdio --tool-timeout 200: sleep 3000: a tool error that says it timed out', show(m));
	is(await s.close(), 0, 'stdio: exits 0 when stdin closes');

	const srv = await startServer(['--stateless', '--json-response']);
	let x = await mpost(srv.port, req(1, 'tools/call', { name: 'echo', arguments: { text: 'j' } }));
	ok(x.status === 200 && /^application\/json/.test(x.headers.get('content-type') || ''),
	    '--stateless --json-response: a modern tools/call is answered 200 with a JSON body', x.summary);
	modern(x.msg, 'tools/call', 'mcp-demo', '--stateless --json-response');
	x = await mpost(srv.port, req(2, 'no/such'));
	ok(x.status === 404 && isErr(x.msg, -32601), '--stateless --json-response: an unknown method: 404 + -32601',
	    x.summary);
	// A legacy stateless request beside them: as before.
	const r = await fetch(`http://127.0.0.1:${srv.port}/mcp`, { method: 'POST', headers: {
		'content-type': 'application/json', accept: 'application/json, text/event-stream',
		'mcp-protocol-version': '2025-11-25' },
	body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
	const body = await r.text();
	ok(r.status === 200 && /"tools"/.test(body) && !/resultType|ttlMs|io\.modelcontextprotocol/.test(body),
	    '--stateless: a legacy tools/list (2025-11-25, no _meta): a legacy answer', `${r.status} ${body.slice(0, 300)}`);
	const r2 = await fetch(`http://127.0.0.1:${srv.port}/mcp`, { method: 'POST', headers: {
		'content-type': 'application/json', accept: 'application/json, text/event-stream',
		'mcp-protocol-version': '2024-13-01' },
	body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }) });
	const b2 = await r2.text();
	ok(r2.status === 400 && !/-3202[012]/.test(b2), '--stateless: a bad legacy version header, no _meta: 400, ' +
	    'no modern error', `${r2.status} ${b2}`);
	srv.proc.kill('SIGTERM');
}

// A callback's own -32002 (examples/notes-server.c, "no such note"):
// -32602 in 2026-07-28, still -32002 to a legacy session.
async function notesCode() {
	tap.label = 'stdio notes-server: ';
	const NOTES = `${process.env.MCP_BUILD || 'build'}/notes-server`;
	let s = new Stdio(NOTES);
	const m = await s.ask(req('n', 'resources/read', { uri: 'notes://nope' }));
	ok(isErr(m, -32602), 'resources/read of a missing note in 2026-07-28: the callback\'s -32002 becomes -32602',
	    show(m));
	is(await s.close(), 0, 'exits 0 when stdin closes');
	s = new Stdio(NOTES);
	await s.ask({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25',
		capabilities: {}, clientInfo: { name: 'era-test', version: '1' } } });
	s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
	const l = await s.ask({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'notes://nope' } });
	ok(isErr(l, -32002), 'the same read in a 2025-11-25 session: -32002, as the callback said', show(l));
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

// x-mcp-header: feat-server's routed mirrors region, opts.n and
// opts.flag into Mcp-Param-Region, -N and -Flag; each header must say
// its argument (base64 where the value needs it), and come only with it.
async function paramHeaders() {
	tap.label = 'http feat-server: ';
	const srv = await startServer([], FEAT);
	const port = srv.port;
	const l = await mpost(port, req(1, 'tools/list'));
	const tool = l.msg?.result?.tools?.find((t) => t.name === 'routed');
	ok(tool?.inputSchema?.properties?.region?.['x-mcp-header'] === 'Region' &&
	    tool?.inputSchema?.properties?.opts?.properties?.n?.['x-mcp-header'] === 'N',
	    'tools/list: routed\'s inputSchema carries its x-mcp-header annotations', show(tool));
	const call = (id, args, headers) => mpost(port, req(id, 'tools/call', { name: 'routed', arguments: args }),
	    headers);
	const b64 = (v) => `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`;
	const good = [
		['a plain value', { region: 'us-west1' }, { 'mcp-param-region': 'us-west1' }],
		['every header, integer and boolean as the spec writes them',
		    { region: 'eu', opts: { n: -42, flag: false } },
		    { 'mcp-param-region': 'eu', 'mcp-param-n': '-42', 'mcp-param-flag': 'false' }],
		['a non-ASCII value in base64', { region: 'Zürich 世界' }, { 'mcp-param-region': b64('Zürich 世界') }],
		['a value with spaces around it in base64', { region: ' padded ' }, { 'mcp-param-region': b64(' padded ') }],
		['a value that looks like the sentinel, in base64', { region: '=?base64?x?=' },
		    { 'mcp-param-region': b64('=?base64?x?=') }],
		['the header name in another case', { region: 'us' }, { 'MCP-PARAM-REGION': 'us' }],
		['an undeclared Mcp-Param-* header is ignored', { region: 'us' },
		    { 'mcp-param-region': 'us', 'mcp-param-other': 'whatever' }],
	];
	let id = 10;
	for (const [desc, args, headers] of good) {
		const r = await call(id++, args, headers);
		ok(r.status === 200 && r.msg?.result?.content?.[0]?.text === `routed to ${args.region}`,
		    `${desc}: served`, r.summary);
	}
	const bad = [
		['Mcp-Param-Region missing', { region: 'us' }, {}],
		['Mcp-Param-Region says another value', { region: 'us' }, { 'mcp-param-region': 'eu' }],
		['Mcp-Param-N says another integer', { region: 'us', opts: { n: 7 } },
		    { 'mcp-param-region': 'us', 'mcp-param-n': '07' }],
		['Mcp-Param-Flag in another case than the spec\'s', { region: 'us', opts: { flag: true } },
		    { 'mcp-param-region': 'us', 'mcp-param-flag': 'True' }],
		['Mcp-Param-N given without opts.n', { region: 'us' }, { 'mcp-param-region': 'us', 'mcp-param-n': '1' }],
		['a base64 header that decodes to another value', { region: 'us' }, { 'mcp-param-region': b64('eu') }],
		['a base64 header that is not base64', { region: 'us' }, { 'mcp-param-region': '=?base64?***?=' }],
		['a plain value that the client had to encode', { region: '=?base64?dXM=?=' },
		    { 'mcp-param-region': '=?base64?dXM=?=' }],
	];
	for (const [desc, args, headers] of bad) {
		const r = await call(id++, args, headers);
		ok(r.status === 400 && isErr(r.msg, -32020) && /Mcp-Param-/.test(r.msg.error.message),
		    `${desc}: 400 + -32020, naming the header`, r.summary);
	}
	// Node's fetch refuses to send a control character; a raw request can.
	const raw = await new Promise((resolve) => {
		const body = JSON.stringify(req(99, 'tools/call', { name: 'routed', arguments: { region: 'a\u0001b' } }));
		const sock = net.connect(port, '127.0.0.1', () => sock.end(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
		    `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
		    `MCP-Protocol-Version: ${V}\r\nMcp-Method: tools/call\r\nMcp-Name: routed\r\n` +
		    `Mcp-Param-Region: a\u0001b\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
		    `Connection: close\r\n\r\n${body}`));
		let out = '';
		sock.on('data', (d) => { out += d; });
		sock.on('close', () => resolve(out));
		sock.on('error', () => resolve(out));
	});
	ok(/^HTTP\/1\.1 400/.test(raw) && /-32020/.test(raw), 'a control character in Mcp-Param-Region: 400 + -32020',
	    raw.slice(0, 400));
	// A legacy session never sees any of this.
	const legacy = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: {
		'content-type': 'application/json', accept: 'application/json, text/event-stream' },
	body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25',
		capabilities: {}, clientInfo: { name: 'era-test', version: '1' } } }) });
	const sid = legacy.headers.get('mcp-session-id');
	await legacy.text();
	const lh = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
		'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
	await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: lh,
		body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
	const lr = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: lh,
		body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
			params: { name: 'routed', arguments: { region: 'us' } } }) });
	const lt = await lr.text();
	ok(lr.status === 200 && /routed to us/.test(lt) && !/-32020/.test(lt),
	    'a 2025-11-25 session calls routed without any Mcp-Param-* header', lt.slice(0, 300));
}

const groups = { stdioDemo, stdioConformance, httpDemo, mixed, shapes, notesCode, paramHeaders };
const want = process.argv.slice(2);
for (const [name, fn] of Object.entries(groups)) {
	if (want.length > 0 && !want.some((w) => name.includes(w)))
		continue;
	try {
		await fn();
	} catch (e) {
		ok(false, `${name}: ran to its end`, e.stack);
	}
}
tap.label = '';
killAll();
done();
process.exit();
