// who.mjs: "who is calling", against build/who-server (test/who-server.c):
// what a callback knows of its session and of who sent the request, and
// the authentication hook with real signed tokens. test/who.sh makes the
// key and the tokens (openssl) and runs this with them:
//
//   WHO_SERVER  the server binary
//   WHO_KEY     its public key (PEM), for the hook
//   WHO_TOKENS  a JSON file: {name: JWT}: alice, alice2 (alice again,
//               claim n 2), bob, expired, noscope, badsig, badaud,
//               algnone, garbage
//
// Groups (arguments pick some by name, default all):
//   stdio       the SDK client over stdio: a tool, a resource read, a
//               prompt, a completion and the roots callback each report
//               the session (id, transport, version, clientInfo,
//               capabilities) the client opened; no identity; the
//               session's data; the hooks' counts when the server exits
//   auth        raw HTTP: no token, a bad signature, expired, the wrong
//               audience, alg "none", garbage: 401 with WWW-Authenticate;
//               valid without the scope: 403 insufficient_scope; valid:
//               200; on /mcp and on /sse
//   streamable  the SDK's Streamable HTTP client with alice's token: the
//               session matches what it sent, the identity is alice's
//   sse         the SDK's legacy SSE client with alice's token: the same
//   binding     another subject's token on alice's session: 403; a
//               refreshed token of alice's: its claims in the calls, the
//               session's first ones kept
//   stateless   a --stateless server: each request its own session
//   hooks       sessions closed (DELETE, a closed stream) are counted
//               closed at once, their data freed; opens == closes when
//               the server exits, and its exit status is 0 (ASan)
//
// Prints TAP; exits 1 if an assertion failed. Node 20; the SDK from
// test/node/node_modules.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
	diag, eachLine, globalTimeout, is, listening, ok, runGroups, settle, sleep, tap, textOf, within,
} from './node/harness.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SDK = path.join(HERE, 'node/node_modules/@modelcontextprotocol/sdk/dist/esm');
const load = (p) => import(pathToFileURL(path.join(SDK, p)).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { SSEClientTransport } = await load('client/sse.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');

const SERVER = path.resolve(process.env.WHO_SERVER ?? path.join(HERE, '../build/who-server'));
const KEY = process.env.WHO_KEY;
const TOKENS = JSON.parse(readFileSync(process.env.WHO_TOKENS, 'utf8'));
const AUD = 'who-test';
const SCOPE = 'mcp:tools';

const stderrLog = [];
const procs = new Set();

function end() {
	for (const p of procs)
		try { p.child.kill('SIGKILL'); } catch { /* gone */ }
	if (tap.failed > 0) {
		diag('---- server stderr (last 60 lines) ----');
		diag(stderrLog.slice(-60).join('\n'));
	}
}

const timer = globalTimeout(120000, () => { end(); process.exit(1); });

// ---- servers ----------------------------------------------------------------

function track(child, tag) {
	const p = { child, exit: null, lines: [] };
	procs.add(p);
	p.exited = new Promise((resolve) => child.once('exit', (code, signal) => {
		p.exit = { code, signal };
		procs.delete(p);
		resolve(p.exit);
	}));
	eachLine(child.stderr, (line) => {
		p.lines.push(line);
		stderrLog.push(`[${tag}] ${line}`);
	});
	return p;
}

// The authenticating HTTP server (ARGS added): {p, base}.
function startHttp(args = [], tag = 'http') {
	return new Promise((resolve) => {
		const child = spawn(SERVER, ['--http', '127.0.0.1:0', '-v', '--auth-scopes', SCOPE,
		    '--authorization-server', 'https://auth.example.com', ...args], {
			stdio: ['pipe', 'ignore', 'pipe'],
			env: { ...process.env, WHO_JWT_KEY: KEY, WHO_JWT_AUD: AUD, WHO_JWT_SCOPE: SCOPE },
		});
		const p = track(child, tag);
		const t = setTimeout(() => resolve({ p, base: null }), 5000);
		eachLine(child.stderr, (line) => {
			const l = listening(line);
			if (l) {
				clearTimeout(t);
				resolve({ p, base: l.base });
			}
		});
	});
}

// Ends P with SIGTERM: {code, signal, opens, closes} from its last line.
async function stopServer(p) {
	if (p.exit === null)
		p.child.kill('SIGTERM');
	const e = await within(p.exited, 10000);
	if (e === null)
		p.child.kill('SIGKILL');
	await p.exited;
	const m = p.lines.map((l) => /who: opens=(\d+) closes=(\d+)/.exec(l)).filter(Boolean).pop();
	return { ...p.exit, opens: m ? Number(m[1]) : null, closes: m ? Number(m[2]) : null };
}

// ---- SDK clients ------------------------------------------------------------

const CAPS = { roots: { listChanged: true }, sampling: {}, elicitation: {} };

// An SDK client on TRANSPORT, named NAME: {client, transport, init
// (the initialize request sent), answer (its result)}, or {error}.
async function connect(transport, name) {
	const conn = { transport };
	const send = transport.send.bind(transport);
	transport.send = (msg, o) => {
		if (msg.method === 'initialize')
			conn.init = msg.params;
		return send(msg, o);
	};
	const start = transport.start.bind(transport);
	transport.start = async () => {
		// The client has set its handler by now: see the answer too.
		const h = transport.onmessage;
		transport.onmessage = (msg, extra) => {
			if (msg.result?.protocolVersion !== undefined)
				conn.answer = msg.result;
			h?.(msg, extra);
		};
		return start();
	};
	conn.client = new Client({ name, version: '4.5.6', title: `who test ${name}` },
	    { capabilities: CAPS });
	conn.client.setRequestHandler((await load('types.js')).ListRootsRequestSchema,
	    () => ({ roots: [{ uri: 'file:///tmp', name: 'tmp' }] }));
	const r = await settle(conn.client.connect(transport), 8000);
	if (r.error)
		return { error: r.error };
	return conn;
}

const auth = (tok) => ({ headers: { Authorization: `Bearer ${tok}` } });

// The report of a tool call (whoami), parsed.
async function whoami(conn) {
	const r = await settle(conn.client.callTool({ name: 'whoami', arguments: {} }));
	if (r.error)
		return { error: String(r.error) };
	try {
		return JSON.parse(textOf(r.value));
	} catch (e) {
		return { error: `not JSON: ${textOf(r.value)}` };
	}
}

// Every callback's report, of one session: tool, read, prompt, complete,
// and the roots callback after notifications/roots/list_changed.
async function reports(conn) {
	const out = { tool: await whoami(conn) };
	let r = await settle(conn.client.readResource({ uri: 'who://me' }));
	out.read = r.error ? { error: String(r.error) } : JSON.parse(r.value.contents[0].text);
	r = await settle(conn.client.getPrompt({ name: 'who', arguments: {} }));
	out.prompt = r.error ? { error: String(r.error) } : JSON.parse(r.value.messages[0].content.text);
	r = await settle(conn.client.complete({ ref: { type: 'ref/prompt', name: 'who' },
	    argument: { name: 'x', value: '' } }));
	out.complete = r.error ? { error: String(r.error) } : JSON.parse(r.value.completion.values[0]);
	await conn.client.sendRootsListChanged();
	for (let i = 0; i < 50; i++) {
		r = await settle(conn.client.callTool({ name: 'last_roots', arguments: {} }));
		const v = r.error ? null : JSON.parse(textOf(r.value));
		if (v !== null && v.session?.id === out.tool.session?.id && v.data?.serial === out.tool.data?.serial) {
			out.roots = v;
			break;
		}
		await sleep(50);
	}
	return out;
}

// Checks that every report in R describes the session CONN opened, with
// id ID over TRANSPORT, and the identity WHO (null: none).
function checkReports(R, conn, id, transport, who) {
	for (const kind of ['tool', 'read', 'prompt', 'complete', 'roots']) {
		const v = R[kind];
		if (!ok(v !== undefined && v.error === undefined, `${kind}: the callback reported`, v))
			continue;
		is(v.kind, kind, `${kind}: reported by its own callback`);
		is(v.session.id, id, `${kind}: the session's id`);
		is(v.session.transport, transport, `${kind}: the transport`);
		is(v.session.protocol, conn.answer?.protocolVersion, `${kind}: the negotiated version`);
		is(v.session.clientInfo, conn.init.clientInfo, `${kind}: clientInfo as the client sent it`);
		is(v.session.capabilities, conn.init.capabilities, `${kind}: the capabilities as sent`);
		is(v.identity, who, `${kind}: the call's identity`);
		is(v.session.identity, who, `${kind}: the session's identity`);
		is(v.data.serial, R.tool.data.serial, `${kind}: the session's own data`);
	}
	ok(R.roots?.data.calls > R.tool.data.calls, 'the data counted every callback of the session',
	    [R.tool?.data, R.roots?.data]);
}

// ---- raw HTTP -----------------------------------------------------------------

const INIT = { jsonrpc: '2.0', id: 0, method: 'initialize', params: {
	protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function postMcp(base, body, { token, sid } = {}) {
	const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
	if (token !== undefined)
		headers.authorization = `Bearer ${token}`;
	if (sid !== undefined) {
		headers['mcp-session-id'] = sid;
		headers['mcp-protocol-version'] = '2025-06-18';
	}
	const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
	const text = await res.text();
	// One SSE event or a JSON body: the message.
	const data = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('');
	let msg = null;
	try {
		msg = JSON.parse(data || text);
	} catch { /* not JSON */ }
	return { status: res.status, www: res.headers.get('www-authenticate'),
	    sid: res.headers.get('mcp-session-id'), text, msg };
}

const callWhoami = (id) => ({ jsonrpc: '2.0', id, method: 'tools/call',
	params: { name: 'whoami', arguments: {} } });
const reportOf = (r) => { try { return JSON.parse(r.msg.result.content[0].text); } catch { return null; } };

// A raw session opened with TOKEN: its id.
async function rawSession(base, token) {
	const r = await postMcp(base, INIT, { token });
	if (r.status !== 200)
		return null;
	await postMcp(base, { jsonrpc: '2.0', method: 'notifications/initialized' }, { token, sid: r.sid });
	return r.sid;
}

// ---- the groups ---------------------------------------------------------------

let http;	// the authenticating server, shared by the HTTP groups

async function httpBase() {
	if (http === undefined)
		http = await startHttp();
	return http.base;
}

async function stdioGroup() {
	tap.label = 'stdio: ';
	const transport = new StdioClientTransport({ command: SERVER, args: ['--stdio', '-v'], stderr: 'pipe' });
	const conn = await connect(transport, 'who-stdio');
	if (!ok(conn.error === undefined, 'the SDK client connects', conn.error))
		return;
	const p = track(transport._process, 'stdio');
	const R = await reports(conn);
	checkReports(R, conn, 'stdio', 'stdio', null);
	is(R.tool.claims, null, 'no claims without authentication');
	is([R.tool.opens, R.tool.closes], [1, 0], 'the open hook ran once, the close hook not yet');
	await conn.client.close();
	const e = await stopServer(p);
	is([e.opens, e.closes], [1, 1], 'when the server ends, the session was closed once');
	is(e.code, 0, 'the server exits 0 (under ASan: no leak, the data freed)', e);
}

async function authGroup() {
	tap.label = 'auth: ';
	const base = await httpBase();
	if (!ok(base !== null, 'the server listens'))
		return;
	const meta = `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`;
	let r = await postMcp(base, INIT);
	is(r.status, 401, 'no token: 401');
	is(r.www, `Bearer scope="${SCOPE}", ${meta}`, 'no token: a plain challenge, with the scope and '
	    + 'the metadata');
	for (const [name, why] of [['badsig', 'bad signature'], ['expired', 'token expired'],
	    ['badaud', 'wrong audience'], ['algnone', 'unsupported alg'], ['garbage', 'not a JWT']]) {
		r = await postMcp(base, INIT, { token: TOKENS[name] });
		is(r.status, 401, `${name}: 401`);
		is(r.www, `Bearer error="invalid_token", error_description="${why}", scope="${SCOPE}", ${meta}`,
		    `${name}: WWW-Authenticate names invalid_token and why`);
		ok(r.sid === null, `${name}: no session`);
	}
	r = await postMcp(base, INIT, { token: '' });
	is(r.status, 401, 'an empty token: 401');
	r = await postMcp(base, INIT, { token: TOKENS.noscope });
	is(r.status, 403, 'valid, without the scope: 403');
	is(r.www, `Bearer error="insufficient_scope", error_description="the token lacks the scope", `
	    + `scope="${SCOPE}", ${meta}`, 'valid, without the scope: insufficient_scope, the scope it needs');
	ok(r.sid === null, 'valid, without the scope: no session');
	r = await postMcp(base, INIT, { token: TOKENS.alice });
	is(r.status, 200, 'valid: 200');
	ok(typeof r.sid === 'string' && r.sid.length === 32, 'valid: a session', r.sid);
	is(r.msg?.result?.serverInfo?.name, 'who-server', 'valid: initialize answered');
	// The legacy stream: the same checks at GET /sse.
	for (const [name, tok, status] of [['no token', undefined, 401], ['bad signature', TOKENS.badsig, 401],
	    ['no scope', TOKENS.noscope, 403], ['valid', TOKENS.alice, 200]]) {
		const ac = new AbortController();
		const headers = tok === undefined ? {} : { authorization: `Bearer ${tok}` };
		const res = await fetch(`${base}/sse`, { headers, signal: ac.signal });
		is(res.status, status, `GET /sse, ${name}: ${status}`);
		if (status !== 200)
			ok(res.headers.get('www-authenticate')?.startsWith('Bearer'), `GET /sse, ${name}: a challenge`);
		ac.abort();
	}
	// The hook is not asked without a token.
	const before = reportOf(await postMcp(base, callWhoami(1), { token: TOKENS.alice,
	    sid: await rawSession(base, TOKENS.alice) }))?.auth_calls;
	await postMcp(base, INIT);
	const after = reportOf(await postMcp(base, callWhoami(1), { token: TOKENS.alice,
	    sid: await rawSession(base, TOKENS.alice) }))?.auth_calls;
	// Between the two calls: initialize and initialized of one session, and the call itself.
	is(after - before, 3, 'the hook ran for every request with a token, never for one without');
}

async function httpSdkGroup(kind) {
	tap.label = `${kind}: `;
	const base = await httpBase();
	if (!ok(base !== null, 'the server listens'))
		return;
	const transport = kind === 'streamable' ?
	    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: auth(TOKENS.alice) }) :
	    new SSEClientTransport(new URL(`${base}/sse`), { requestInit: auth(TOKENS.alice) });
	const conn = await connect(transport, `who-${kind}`);
	if (!ok(conn.error === undefined, 'the SDK client connects with a token', conn.error))
		return;
	const id = kind === 'streamable' ? transport.sessionId : transport._endpoint.searchParams.get('sessionId');
	ok(typeof id === 'string' && id.length === 32, 'the session id the client knows', id);
	const R = await reports(conn);
	checkReports(R, conn, id, kind, 'alice');
	is(R.tool.claims?.sub, 'alice', 'the claims are the token\'s');
	is(R.tool.claims?.aud, AUD, 'the claims are the token\'s (aud)');
	is(R.tool.session.claims, R.tool.claims, 'the session\'s claims are the opening token\'s');
	const opened = R.tool;
	// The SDK ends a Streamable HTTP session only when asked (DELETE).
	if (kind === 'streamable')
		await transport.terminateSession();
	await conn.client.close();
	// The close hook: the session is gone, its data freed (counted).
	let closes = null;
	const sid = await rawSession(base, TOKENS.alice);
	for (let i = 0; i < 40; i++) {
		const v = reportOf(await postMcp(base, callWhoami(2), { token: TOKENS.alice, sid }));
		closes = v?.closes;
		if (closes > opened.closes)
			break;
		await sleep(50);
	}
	ok(closes > opened.closes, 'once the client closed, the close hook ran', [opened.closes, closes]);

	// Without a token the SDK client cannot connect.
	const bare = kind === 'streamable' ? new StreamableHTTPClientTransport(new URL(`${base}/mcp`)) :
	    new SSEClientTransport(new URL(`${base}/sse`));
	const r = await connect(bare, `who-${kind}-bare`);
	ok(r.error !== undefined && /401|nauthorized/.test(String(r.error)), 'no token: the SDK is refused (401)',
	    String(r.error));
	await bare.close?.().catch(() => {});
}

async function bindingGroup() {
	tap.label = 'binding: ';
	const base = await httpBase();
	const sid = await rawSession(base, TOKENS.alice);
	if (!ok(sid !== null, 'alice opens a session'))
		return;
	let r = await postMcp(base, callWhoami(1), { token: TOKENS.bob, sid });
	is(r.status, 403, 'bob\'s valid token on alice\'s session: 403');
	is(r.msg?.error?.message, 'Forbidden: the session belongs to another identity', 'bob: why');
	r = await postMcp(base, callWhoami(2), { sid });
	is(r.status, 401, 'no token on alice\'s session: 401');
	r = await postMcp(base, callWhoami(3), { token: TOKENS.alice, sid });
	let v = reportOf(r);
	is([v?.identity, v?.claims?.n, v?.session?.claims?.n], ['alice', 1, 1], 'alice\'s first token');
	r = await postMcp(base, callWhoami(4), { token: TOKENS.alice2, sid });
	v = reportOf(r);
	is([v?.identity, v?.claims?.n, v?.session?.identity, v?.session?.claims?.n], ['alice', 2, 'alice', 1],
	    'a refreshed token: its claims in the call, the session keeps the opening ones');
	// DELETE is the session's owner's too.
	const res = await fetch(`${base}/mcp`, { method: 'DELETE', headers: {
		'mcp-session-id': sid, authorization: `Bearer ${TOKENS.bob}` } });
	is(res.status, 403, 'bob cannot DELETE alice\'s session');
	r = await postMcp(base, callWhoami(5), { token: TOKENS.alice, sid });
	is(r.status, 200, 'alice\'s session is still there');
	// The legacy transport binds its session too.
	const ac = new AbortController();
	const sse = await fetch(`${base}/sse`, { headers: { authorization: `Bearer ${TOKENS.alice}` },
	    signal: ac.signal });
	const reader = sse.body.getReader();
	let got = '';
	while (!/sessionId=([0-9a-f]+)/.test(got)) {
		const { value, done } = await reader.read();
		if (done)
			break;
		got += Buffer.from(value).toString();
	}
	const legacy = /sessionId=([0-9a-f]+)/.exec(got)?.[1];
	const postLegacy = (tok) => fetch(`${base}/messages?sessionId=${legacy}`, { method: 'POST',
	    headers: { 'content-type': 'application/json', authorization: `Bearer ${tok}` },
	    body: JSON.stringify(INIT) });
	is((await postLegacy(TOKENS.bob)).status, 403, 'legacy: bob\'s token on alice\'s stream: 403');
	is((await postLegacy(TOKENS.alice)).status, 202, 'legacy: alice\'s: 202');
	ac.abort();
}

async function statelessGroup() {
	tap.label = 'stateless: ';
	const s = await startHttp(['--stateless'], 'stateless');
	if (!ok(s.base !== null, 'the server listens'))
		return;
	const v1 = reportOf(await postMcp(s.base, callWhoami(1), { token: TOKENS.alice }));
	const v2 = reportOf(await postMcp(s.base, callWhoami(2), { token: TOKENS.bob }));
	is([v1?.session?.id, v1?.session?.transport, v1?.identity, v1?.session?.clientInfo],
	    ['', 'streamable', 'alice', null], 'a stateless request: a session without id or client');
	is(v2?.identity, 'bob', 'the next request, its own identity');
	ok(v2?.data?.serial === v1?.data?.serial + 1, 'each request opened a session of its own',
	    [v1?.data, v2?.data]);
	const r = await postMcp(s.base, callWhoami(3), { token: TOKENS.noscope });
	is(r.status, 403, 'stateless too: 403 without the scope');
	const e = await stopServer(s.p);
	is(e.opens, 2, 'two sessions opened');
	is(e.closes, e.opens, 'and closed');
	is(e.code, 0, 'the server exits 0');
}

async function hooksGroup() {
	tap.label = 'hooks: ';
	if (http === undefined)
		await httpBase();
	const e = await stopServer(http.p);
	ok(e.opens > 0, 'sessions were opened', e);
	is(e.closes, e.opens, 'every one was closed once (the rest at shutdown)', e);
	is(e.code, 0, 'the server exits 0 (under ASan: no leak, every data freed)', e);
}

await runGroups([
	['stdio', stdioGroup],
	['auth', authGroup],
	['streamable', () => httpSdkGroup('streamable')],
	['sse', () => httpSdkGroup('sse')],
	['binding', bindingGroup],
	['stateless', statelessGroup],
	['hooks', hooksGroup],
]);
clearTimeout(timer);
end();
process.exit(process.exitCode);
