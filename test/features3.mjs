// features3.mjs: requests from the server to the client, made from inside
// a tool callback, against build/feat-server (test/feat-server.c: the
// tools sample, elicit and roots) on stdio AND on the legacy HTTP+SSE
// transport. Each transport gets:
//
//   sdk    the official TypeScript SDK client with the sampling,
//          elicitation and roots capabilities and a handler for each:
//          the answers reach the tool's result; a JSON-RPC error answer;
//          a timeout_ms the client's handler outlasts (the server cancels
//          its request, so the SDK aborts the handler and never answers);
//          5 concurrent samples; a client that declared url-mode
//          elicitation
//   nocap  an SDK client without those capabilities: refused at once,
//          nothing sent
//   raw    byte-level JSON-RPC: the shape of the server's requests, their
//          ids against the client's, an answer after the timeout, an
//          error answer, 5 concurrent requests answered out of order, a
//          cancelled tools/call while its request is pending; the
//          notifications/cancelled the server sends for exactly the
//          requests it gave up on
//   roots  notifications/roots/list_changed: the callback set with
//          mcp_server_on_roots_changed runs once per notification and
//          lists the new roots (SDK client: sendRootsListChanged); not
//          for a client that declared no roots, nor before initialize
//   modes  url-mode elicitation gated on the declared capability and on
//          protocol version 2025-11-25
//   eof    (stdio) end of stdin while a request to the client is pending
//
// Prints TAP on stdout; exits 1 if any assertion failed. Node 20; the SDK
// comes from test/node/node_modules. Run from anywhere:
//
//   node test/features3.mjs [stdio|sse] [sdk|nocap|raw|modes|eof|roots] ...
//
// FEAT_SERVER in the environment names another binary.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import {
	diag, errText, globalTimeout, is, ok, settle, sleep, tap, textOf, within,
} from './node/harness.mjs';
import {
	RawSse, RawStdio, closeSdk, end, isRequest, isResponse, openSdk as openSdkConn, sdk, show,
	startHttp, stop,
} from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
    LoggingMessageNotificationSchema } = sdk.types;

const SERVER = path.resolve(process.env.FEAT_SERVER ?? path.join(HERE, '../build/feat-server'));
const GLOBAL_TIMEOUT_MS = 45000;

const want = process.argv.slice(2);
const KINDS = ['stdio', 'sse'].filter(k => !want.some(a => ['stdio', 'sse'].includes(a)) || want.includes(k));
const ALL_GROUPS = ['sdk', 'nocap', 'raw', 'modes', 'eof', 'roots'];
const GROUPS = ALL_GROUPS.filter(g => !want.some(a => ALL_GROUPS.includes(a)) || want.includes(g));

const ROOTS = [{ uri: 'file:///tmp/project-a', name: 'a' }, { uri: 'file:///home/u/b' }];
const ESTATE = 'not allowed in this state';

tap.show = show;

const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, end, '');

// ---- the HTTP server -------------------------------------------------------------

// One server with --http 127.0.0.1:0 for the whole run, started on first
// use: {p, base}, base null when it did not start.
let httpPromise = null;

function httpServer() {
	httpPromise ??= startHttp(SERVER, [], 'http');
	return httpPromise;
}

// ---- raw connections -----------------------------------------------------------

// test/node/mcp-clients.mjs: RawStdio, RawSse; request ids from 1 (small
// integers: what a careless server would use too).
const RAW = { nextId: 1, clientName: 'libmcp-features3' };

// A raw, initialized connection of KIND.
async function openRaw(kind, tag, version, capabilities) {
	let c;
	if (kind === 'stdio') {
		c = new RawStdio(SERVER, [], `stdio ${tag}`, RAW);
	} else {
		const srv = await httpServer();
		if (srv.base === null)
			return { error: 'the HTTP server did not start' };
		c = await RawSse.open(srv.base, `sse ${tag}`, RAW);
		if (!c.endpoint)
			return { error: `no endpoint event (status ${c.status}, ${c.error ?? 'no error'})` };
	}
	const r = await c.init(version, capabilities);
	if (!r?.msg?.result) {
		c.close();
		return { error: `initialize failed: ${show(r?.msg)}` };
	}
	c.initResult = r.msg.result;
	return { c };
}

// What a tool call's response says: {text, isError} (isError false when
// absent), or the raw message when it is no result.
function outcome(entry) {
	const res = entry?.msg?.result;
	if (res === undefined)
		return entry === undefined ? 'no response' : entry.raw;
	return { text: textOf(res), isError: res.isError ?? false };
}

function sdkOutcome(r) {
	if (r.error)
		return errText(r.error);
	return { text: textOf(r.value), isError: r.value.isError ?? false };
}

// The sampling result a client sends back.
const sampled = text => ({ model: 'test-model', role: 'assistant', content: { type: 'text', text } });

// ---- SDK connections -----------------------------------------------------------

// The SDK client on KIND with CAPABILITIES and the request HANDLERS
// ({sample, elicit, roots}: each (request, extra) => result); conn.received
// records every message the transport hands up, conn.sent every message
// sent, conn.handled every request a handler got.
function openSdk(kind, tag, capabilities, handlers = {}) {
	return openSdkConn({ kind, server: SERVER, tag, httpServer, capabilities,
	    clientInfo: { name: 'libmcp-features3', version: '1.0.0' },
	    handlers: [
		[CreateMessageRequestSchema, 'sample', handlers.sample],
		[ElicitRequestSchema, 'elicit', handlers.elicit],
		[ListRootsRequestSchema, 'roots', handlers.roots],
	    ].filter(([, , fn]) => fn) });
}

const callTool = (conn, name, args, ms = 8000) => settle(conn.client.callTool({ name, arguments: args }), ms);

// ---- sdk: the three requests answered by the SDK's handlers ---------------------

// The sampling handler: answers "echo: PROMPT"; a prompt "delay:MS:..."
// answers after MS, "fail" with a JSON-RPC error -32042, "late:MS" after
// MS (past the tool's timeout_ms). The SDK aborts a handler's signal when
// the server cancels its request: aborted records {id, reason}.
const aborted = [];
function sampleHandler(req, extra) {
	const prompt = req.params.messages?.[0]?.content?.text ?? '';
	extra?.signal?.addEventListener('abort', () => aborted.push({ id: extra.requestId, reason: extra.signal.reason }));
	if (prompt === 'fail')
		throw Object.assign(new Error('client says no'), { code: -32042 });
	const m = /^(?:delay|late):(\d+)/.exec(prompt);
	if (m)
		return sleep(Number(m[1])).then(() => sampled(`echo: ${prompt}`));
	return sampled(`echo: ${prompt}`);
}

function elicitHandler(req) {
	if (req.params.message === 'decline')
		return { action: 'decline' };
	if (req.params.mode === 'url')
		return { action: 'accept' };
	return { action: 'accept', content: { name: 'Ada' } };
}

const FULL_CAPS = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
const HANDLERS = { sample: sampleHandler, elicit: elicitHandler, roots: () => ({ roots: ROOTS }) };

async function sdkGroup(kind) {
	const conn = await openSdk(kind, 'sdk', FULL_CAPS, HANDLERS);
	if (!ok(!conn.connectError, 'sdk: connect with sampling, elicitation and roots', conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	let r = await settle(client.listTools());
	const names = r.value?.tools?.map(t => t.name) ?? [];
	ok(['sample', 'elicit', 'roots'].every(x => names.includes(x)), 'sdk: tools/list has sample, elicit and roots',
	    r.error ? errText(r.error) : names);

	// -- sampling
	let from = conn.received.length;
	r = await callTool(conn, 'sample', { prompt: 'hello' });
	is(sdkOutcome(r), { text: 'sampled: echo: hello', isError: false },
	    'sdk: sample: the client handler\'s answer is in the tool\'s result');
	const sreq = conn.received.slice(from).filter(e => e.msg.method === 'sampling/createMessage');
	is(sreq.map(e => ({ messages: e.msg.params?.messages, maxTokens: e.msg.params?.maxTokens })),
	    [{ messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }], maxTokens: 100 }],
	    'sdk: sample: exactly one sampling/createMessage, with the tool\'s params');
	const sresp = conn.sent.filter(s => isResponse(s.msg) && sreq.length && isDeepStrictEqual(s.msg.id, sreq[0].msg.id));
	ok(sresp.length === 1 && sresp[0].msg.result?.content?.text === 'echo: hello',
	    'sdk: sample: the SDK answered it under the server\'s id', sresp.map(s => s.msg));

	// -- elicitation, form mode
	from = conn.received.length;
	r = await callTool(conn, 'elicit', { message: 'Your name?' });
	is(sdkOutcome(r), { text: 'elicited: action=accept content={"name":"Ada"}', isError: false },
	    'sdk: elicit (form): action and content reach the tool');
	const ereq = conn.received.slice(from).filter(e => e.msg.method === 'elicitation/create').map(e => e.msg.params);
	is(ereq.map(p => ({ message: p?.message, requestedSchema: p?.requestedSchema, mode: p?.mode })),
	    [{ message: 'Your name?', mode: undefined, requestedSchema: { type: 'object',
		properties: { name: { type: 'string' } }, required: ['name'] } }],
	    'sdk: elicit (form): one elicitation/create with message and requestedSchema');
	r = await callTool(conn, 'elicit', { message: 'decline' });
	is(sdkOutcome(r), { text: 'elicited: action=decline content=null', isError: false },
	    'sdk: elicit (form): a decline without content');

	// -- url mode for a client that declared elicitation {} (form only)
	from = conn.received.length;
	r = await callTool(conn, 'elicit', { message: 'Open this', mode: 'url' });
	is(sdkOutcome(r), { text: `elicitation failed: ${ESTATE}`, isError: true },
	    'sdk: elicit (url) to a client that declared elicitation {} (form only): refused');
	ok(r.ms < 1000, `sdk: elicit (url): refused at once (${r.ms} ms)`);
	is(conn.received.slice(from).filter(e => e.msg.method === 'elicitation/create').map(e => e.msg), [],
	    'sdk: elicit (url): no elicitation/create was sent');

	// -- roots
	from = conn.received.length;
	r = await callTool(conn, 'roots', {});
	ok(!r.error && r.value.isError !== true && /^roots: /.test(textOf(r.value)),
	    'sdk: roots: a "roots: " result', sdkOutcome(r));
	let list;
	try { list = JSON.parse(textOf(r.value).replace(/^roots: /, '')); } catch { list = textOf(r.value); }
	is(list, ROOTS, 'sdk: roots: the client\'s roots, as compact JSON in the result');
	is(conn.received.slice(from).filter(e => e.msg.method === 'roots/list').map(e => e.msg.params ?? null).length, 1,
	    'sdk: roots: exactly one roots/list');

	// -- a JSON-RPC error from the client: MCP_ECLIENT
	r = await callTool(conn, 'sample', { prompt: 'fail' });
	is(sdkOutcome(r), { text: 'sampling failed: the client answered with an error: client says no (-32042)', isError: true },
	    'sdk: sample: a client error answer gives the MCP_ECLIENT path, with its message and code');

	// -- timeout_ms 500, the client answers after 1500 ms
	from = conn.received.length;
	aborted.length = 0;	// ids are per server process: the other transport's may match
	r = await callTool(conn, 'sample', { prompt: 'late:1500', timeout_ms: 500 });
	is(sdkOutcome(r), { text: 'sampling failed: timed out', isError: true },
	    'sdk: sample with timeout_ms 500, answered after 1500 ms: "timed out"');
	ok(!r.error && r.ms >= 450 && r.ms < 1300, `sdk: sample timeout: after ${r.ms} ms (450..1300)`);
	const lreq = conn.received.slice(from).find(e => e.msg.method === 'sampling/createMessage');
	const tcall = conn.sent.filter(s => s.msg.method === 'tools/call').at(-1)?.msg;
	is(conn.received.slice(from).filter(e => e.msg.method === 'notifications/cancelled').map(e => e.msg.params),
	    [{ requestId: lreq?.msg.id, reason: 'timed out' }],
	    'sdk: sample timeout: the server sent notifications/cancelled for its request, reason "timed out"');
	is(aborted.filter(a => lreq && a.id === lreq.msg.id), [{ id: lreq?.msg.id, reason: 'timed out' }],
	    'sdk: sample timeout: so the SDK aborted the handler\'s signal, with that reason');
	await sleep(1300);	// the handler's 1500 ms are over
	is(conn.sent.filter(s => isResponse(s.msg) && lreq && s.msg.id === lreq.msg.id).map(s => s.msg), [],
	    'sdk: sample timeout: and the SDK sent no late answer to the cancelled request');
	r = await callTool(conn, 'sample', { prompt: 'after late' });
	is(sdkOutcome(r), { text: 'sampled: echo: after late', isError: false },
	    'sdk: after the late answer, sampling still works');
	is(conn.received.filter(e => isResponse(e.msg) && e.msg.id === tcall?.id).length, 1,
	    'sdk: the timed-out tools/call got exactly one response');

	// -- 5 concurrent samples, answered in the reverse order
	from = conn.received.length;
	const prompts = [0, 1, 2, 3, 4].map(k => `delay:${(5 - k) * 80}:c${k}`);
	const rs = await Promise.all(prompts.map(p => callTool(conn, 'sample', { prompt: p })));
	is(rs.map(sdkOutcome), prompts.map(p => ({ text: `sampled: echo: ${p}`, isError: false })),
	    'sdk: 5 concurrent samples (answered in reverse order): each gets its own answer');
	const cids = conn.received.slice(from).filter(e => e.msg.method === 'sampling/createMessage').map(e => e.msg.id);
	ok(cids.length === 5 && new Set(cids.map(x => JSON.stringify(x))).size === 5,
	    'sdk: 5 concurrent samples: 5 requests, with 5 distinct ids', cids);
	const served = conn.handled.filter(h => h.name === 'sample' && /^delay:/.test(h.req.params.messages[0].content.text));
	const spread = served.length ? Math.max(...served.map(h => h.t)) - Math.min(...served.map(h => h.t)) : -1;
	ok(served.length === 5 && spread < 300,
	    `sdk: 5 concurrent samples: all 5 requests were out at once, none waited for another (within ${spread} ms)`,
	    served.map(h => h.t - served[0].t));

	is(conn.errors.map(errText), [], 'sdk: the SDK reported no errors (no stray or duplicate message)');
	await closeSdk(conn);

	// -- a client that declared url-mode elicitation
	const uconn = await openSdk(kind, 'sdk-url', { elicitation: { form: {}, url: {} } }, { elicit: elicitHandler });
	if (!ok(!uconn.connectError, 'sdk: connect with elicitation {form, url}', uconn.connectError && errText(uconn.connectError)))
		return;
	from = uconn.received.length;
	r = await callTool(uconn, 'elicit', { message: 'Open this', mode: 'url' });
	is(sdkOutcome(r), { text: 'elicited: action=accept content=null', isError: false },
	    'sdk: elicit (url) to a client that declared url mode: sent and answered');
	const ureq = uconn.received.slice(from).filter(e => e.msg.method === 'elicitation/create').map(e => e.msg.params);
	is(ureq, [{ mode: 'url', message: 'Open this', url: 'https://example.com/x', elicitationId: 'e1' }],
	    'sdk: elicit (url): the params as the tool gave them');
	r = await callTool(uconn, 'elicit', { message: 'Form too' });
	is(sdkOutcome(r), { text: 'elicited: action=accept content={"name":"Ada"}', isError: false },
	    'sdk: elicit (form) to the same client works too');
	r = await callTool(uconn, 'sample', { prompt: 'x' });
	is(sdkOutcome(r), { text: `sampling failed: ${ESTATE}`, isError: true },
	    'sdk: sample to a client that declared only elicitation: refused');
	r = await callTool(uconn, 'roots', {});
	is(sdkOutcome(r), { text: `roots failed: ${ESTATE}`, isError: true },
	    'sdk: roots to a client that declared only elicitation: refused');
	is(uconn.received.filter(e => ['sampling/createMessage', 'roots/list'].includes(e.msg.method)).map(e => e.msg), [],
	    'sdk: no sampling/createMessage and no roots/list was sent to it');
	is(uconn.errors.map(errText), [], 'sdk: (url client) the SDK reported no errors');
	await closeSdk(uconn);
}

// ---- nocap: a client without the capabilities --------------------------------------

async function nocapGroup(kind) {
	const conn = await openSdk(kind, 'nocap', {});
	if (!ok(!conn.connectError, 'nocap: connect without capabilities', conn.connectError && errText(conn.connectError)))
		return;
	for (const [tool, args, what] of [
		['sample', { prompt: 'hi' }, 'sampling'],
		['elicit', { message: 'name?' }, 'elicitation'],
		['elicit', { message: 'open', mode: 'url' }, 'elicitation'],
		['roots', {}, 'roots']
	]) {
		const r = await callTool(conn, tool, args);
		is(sdkOutcome(r), { text: `${what} failed: ${ESTATE}`, isError: true },
		    `nocap: ${tool} ${JSON.stringify(args)}: an isError "${what} failed: ${ESTATE}"`);
		ok(!r.error && r.ms < 500, `nocap: ${tool}: refused at once (${r.ms} ms)`);
	}
	await sleep(200);
	is(conn.received.filter(e => isRequest(e.msg)).map(e => e.msg), [],
	    'nocap: the stream from the server carried no request at all (no sampling/createMessage, ...)');
	is(conn.errors.map(errText), [], 'nocap: the SDK reported no errors');
	await closeSdk(conn);

	// The same on a raw connection: the stream shows nothing but the responses.
	const { c, error } = await openRaw(kind, 'nocap-raw', '2025-11-25', {});
	if (!ok(c !== undefined, 'nocap: raw initialize without capabilities', error))
		return;
	const from = c.msgs.length;
	const id = await c.tool('sample', { prompt: 'hi' });
	const a = await c.answer(id, 3000);
	is(outcome(a), { text: `sampling failed: ${ESTATE}`, isError: true }, 'nocap: raw sample: refused');
	await sleep(200);
	is(c.msgs.slice(from).map(e => e.raw), [a?.raw],
	    'nocap: raw: the only thing the server wrote was the tool\'s response (no sampling/createMessage)');
	c.close();
}

// ---- raw: the requests on the wire -----------------------------------------------

async function rawGroup(kind) {
	const { c, error } = await openRaw(kind, 'raw', '2025-11-25',
	    { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } });
	if (!ok(c !== undefined, 'raw: initialize with sampling, elicitation and roots', error))
		return;
	// The client also uses a few ids a server might pick for itself. ("s1"
	// is only reported: libmcp's ids are "s1", "s2"..., in a space of their
	// own, which JSON-RPC allows: a request and a response never mix up.)
	let r;
	for (const id of [0, '1', 's1', 'srv-1', 'mcp-1']) {
		await c.call('ping', undefined, id);
		await c.answer(id, 3000);
	}

	// -- one sample, answered by hand
	let from = c.msgs.length;
	let id = await c.tool('sample', { prompt: 'raw hello' });
	let sr = await c.serverRequest('sampling/createMessage', from);
	ok(sr !== undefined, 'raw: sample: a sampling/createMessage request comes', c.msgs.slice(from).map(e => e.raw));
	is(sr && { jsonrpc: sr.msg.jsonrpc, method: sr.msg.method, params: sr.msg.params },
	    { jsonrpc: '2.0', method: 'sampling/createMessage',
		params: { messages: [{ role: 'user', content: { type: 'text', text: 'raw hello' } }], maxTokens: 100 } },
	    'raw: sample: jsonrpc 2.0, the tool\'s params exactly, an id');
	ok(sr !== undefined && (typeof sr.msg.id === 'string' || Number.isInteger(sr.msg.id)),
	    'raw: sample: the id is a string or an integer', sr?.msg.id);
	await sleep(100);
	is(c.responses(id).map(e => e.raw), [], 'raw: sample: no tools/call response before the client answered');
	let s = await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('by hand') });
	if (kind === 'sse')
		is(s.status, 202, 'raw: sample: the POST with the client\'s answer gets 202');
	let a = await c.answer(id);
	is(outcome(a), { text: 'sampled: by hand', isError: false }, 'raw: sample: the answer reaches the tool\'s result');

	// -- elicitation and roots on the wire
	from = c.msgs.length;
	id = await c.tool('elicit', { message: 'Who?' });
	sr = await c.serverRequest('elicitation/create', from);
	is(sr?.msg.params, { message: 'Who?', requestedSchema: { type: 'object',
	    properties: { name: { type: 'string' } }, required: ['name'] } }, 'raw: elicit: the params exactly');
	await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: { action: 'accept', content: { name: 'Bo', n: 3 } } });
	a = await c.answer(id);
	ok(outcome(a).isError === false && /^elicited: action=accept content=/.test(outcome(a).text) &&
	    isDeepStrictEqual(JSON.parse(outcome(a).text.replace(/^elicited: action=accept content=/, '')), { name: 'Bo', n: 3 }),
	    'raw: elicit: action and content reach the tool', outcome(a));
	from = c.msgs.length;
	id = await c.tool('roots', {});
	sr = await c.serverRequest('roots/list', from);
	ok(sr !== undefined && (sr.msg.params === undefined || isDeepStrictEqual(sr.msg.params, {})),
	    'raw: roots: a roots/list request with no params (or {})', sr?.raw);
	await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: { roots: [] } });
	a = await c.answer(id);
	is(outcome(a), { text: 'roots: []', isError: false }, 'raw: roots: an empty list');

	// -- an error answer
	from = c.msgs.length;
	id = await c.tool('sample', { prompt: 'e' });
	sr = await c.serverRequest('sampling/createMessage', from);
	s = await c.send({ jsonrpc: '2.0', id: sr?.msg.id, error: { code: -32603, message: 'model unavailable' } });
	if (kind === 'sse')
		is(s.status, 202, 'raw: the POST with an error answer gets 202');
	a = await c.answer(id);
	is(outcome(a), { text: 'sampling failed: the client answered with an error: model unavailable (-32603)', isError: true },
	    'raw: an error answer gives MCP_ECLIENT, with the client\'s message and code');

	// -- timeout_ms 500, then the answer after it
	from = c.msgs.length;
	const t0 = Date.now();
	id = await c.tool('sample', { prompt: 'never', timeout_ms: 500 });
	sr = await c.serverRequest('sampling/createMessage', from);
	a = await c.answer(id, 3000);
	const dt = (a?.t ?? Date.now()) - t0;
	is(outcome(a), { text: 'sampling failed: timed out', isError: true }, 'raw: timeout_ms 500, no answer: "timed out"');
	ok(a !== undefined && dt >= 450 && dt < 1300, `raw: timeout: after ${dt} ms (450..1300)`);
	await sleep(100);
	const cancels = c.msgs.slice(from).filter(e => e.msg?.method === 'notifications/cancelled');
	is(cancels.map(e => e.msg), [{ jsonrpc: '2.0', method: 'notifications/cancelled',
	    params: { requestId: sr?.msg.id, reason: 'timed out' } }],
	    'raw: timeout: the server cancels its own request: notifications/cancelled, its id, reason "timed out"');
	ok(cancels.length === 1 && a !== undefined && cancels[0].seq < a.seq,
	    'raw: timeout: the cancellation comes before the tool\'s response', c.msgs.slice(from).map(e => e.raw));
	const before = c.msgs.length;
	s = await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('too late') });
	if (kind === 'sse')
		is(s.status, 202, 'raw: the POST with the late answer gets 202');
	await sleep(300);
	is(c.msgs.slice(before).map(e => e.raw), [], 'raw: the late answer: no output at all (no second response)');
	r = await c.request('ping');
	is(c.msgs.slice(before).map(e => e.msg), [{ jsonrpc: '2.0', id: r?.msg?.id, result: {} }],
	    'raw: the late answer: then a ping is answered, and that is the only output');
	is(c.responses(id).length, 1, 'raw: the timed-out tools/call got exactly one response');
	if (kind === 'stdio')
		ok(!c.gone(), 'raw: the server is still running after the late answer', c.p.exit);

	// -- answers with the wrong id are ignored; the right one is taken
	from = c.msgs.length;
	id = await c.tool('sample', { prompt: 'wrong ids' });
	sr = await c.serverRequest('sampling/createMessage', from);
	const wrongId = typeof sr?.msg.id === 'number' ? String(sr.msg.id) : 987654;
	await c.send({ jsonrpc: '2.0', id: wrongId, result: sampled('wrong id type') });
	await c.send({ jsonrpc: '2.0', id: 'no-such-request', result: sampled('unknown id') });
	await sleep(150);
	is(c.responses(id).map(e => e.raw), [], `raw: answers with id ${JSON.stringify(wrongId)} and "no-such-request" do not complete the request`);
	await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('right id') });
	a = await c.answer(id);
	is(outcome(a), { text: 'sampled: right id', isError: false }, 'raw: then the answer with the right id does');

	// -- another session answering this session's request is ignored
	const o = await openRaw(kind, 'raw-other', '2025-11-25', { sampling: {} });
	if (ok(o.c !== undefined, `raw: a second session (${kind === 'stdio' ? 'another process' : 'same server'})`, o.error)) {
		from = c.msgs.length;
		id = await c.tool('sample', { prompt: 'mine' });
		sr = await c.serverRequest('sampling/createMessage', from);
		const ofrom = o.c.msgs.length;
		s = await o.c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('from the other session') });
		await sleep(150);
		is(c.responses(id).map(e => e.raw), [], 'raw: an answer to this session\'s request sent by another session does not complete it');
		is(o.c.msgs.slice(ofrom).map(e => e.raw), [], 'raw: and the other session gets no output for it');
		await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('from my session') });
		a = await c.answer(id);
		is(outcome(a), { text: 'sampled: from my session', isError: false }, 'raw: then this session\'s own answer completes it');
		o.c.close();
	}

	// -- 5 concurrent samples, answered in reverse order
	from = c.msgs.length;
	const ids = [];
	for (let k = 0; k < 5; k++)
		ids.push(await c.tool('sample', { prompt: `p${k}` }));
	await c.until(() => c.serverRequests('sampling/createMessage', from).length >= 5, 5000);
	const reqs = c.serverRequests('sampling/createMessage', from);
	is(reqs.map(e => e.msg.params?.messages?.[0]?.content?.text).sort(), ['p0', 'p1', 'p2', 'p3', 'p4'],
	    'raw: 5 concurrent samples: 5 requests out at once, one per prompt');
	ok(new Set(reqs.map(e => JSON.stringify(e.msg.id))).size === reqs.length,
	    'raw: 5 concurrent samples: their ids are distinct', reqs.map(e => e.msg.id));
	for (const e of [...reqs].reverse())
		await c.send({ jsonrpc: '2.0', id: e.msg.id, result: sampled(`answer to ${e.msg.params.messages[0].content.text}`) });
	await c.until(() => ids.every(x => c.responses(x).length > 0), 5000);
	is(ids.map(x => outcome(c.responses(x)[0])), [0, 1, 2, 3, 4].map(k => ({ text: `sampled: answer to p${k}`, isError: false })),
	    'raw: 5 concurrent samples answered in reverse order: each tools/call gets its own answer');

	// -- a tools/call cancelled while its sample is pending
	from = c.msgs.length;
	id = await c.tool('sample', { prompt: 'to cancel', timeout_ms: 5000 });
	sr = await c.serverRequest('sampling/createMessage', from);
	await c.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'test' } });
	await sleep(300);
	const tcancel = c.msgs.slice(from).filter(e => e.msg?.method === 'notifications/cancelled');
	is(tcancel.map(e => e.msg.params), [{ requestId: sr?.msg.id, reason: 'cancelled' }],
	    'raw: cancel: the server in turn cancels the sample it was waiting for (reason "cancelled")');
	is(c.responses(id).map(e => e.raw), [], 'raw: cancel: no response for the cancelled tools/call');
	await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('after cancel') });
	await sleep(200);
	is(c.responses(id).map(e => e.raw), [], 'raw: cancel: still none after the client answered the sample');
	from = c.msgs.length;
	id = await c.tool('sample', { prompt: 'next' });
	sr = await c.serverRequest('sampling/createMessage', from);
	await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('next answer') });
	a = await c.answer(id);
	is(outcome(a), { text: 'sampled: next answer', isError: false }, 'raw: cancel: a sample after it works');

	// -- the client uses the id of the server's pending request for a
	// request of its own: the two directions do not mix
	from = c.msgs.length;
	const outer = await c.tool('sample', { prompt: 'outer' });
	const so = await c.serverRequest('sampling/createMessage', from);
	const inner = so?.msg.id ?? 'missing';
	await c.tool('sample', { prompt: 'inner' }, inner);
	const si = await c.serverRequest('sampling/createMessage', from, 2);
	ok(si !== undefined && !isDeepStrictEqual(si.msg.id, so?.msg.id),
	    `raw: a client request with the id of the server's pending request (${JSON.stringify(inner)}) is taken as a request`,
	    c.msgs.slice(from).map(e => e.raw));
	await c.send({ jsonrpc: '2.0', id: si?.msg.id, result: sampled('inner answer') });
	await c.send({ jsonrpc: '2.0', id: so?.msg.id, result: sampled('outer answer') });
	await c.until(() => c.responses(outer).length > 0 && c.responses(inner).length > 0, 5000);
	is([outer, inner].map(x => c.responses(x).map(outcome)), [[{ text: 'sampled: outer answer', isError: false }],
	    [{ text: 'sampled: inner answer', isError: false }]],
	    'raw: and the answers of both directions reach the right calls');

	// -- odd answers: a null result, a number, an error that is no object,
	// the same answer twice; no crash, one response per call
	for (const [answer, what] of [
		[{ result: null }, 'result null'],
		[{ result: 42 }, 'result 42'],
		[{ error: 'boom' }, 'error "boom"'],
		[{ result: sampled('twice') }, 'the same answer twice'],
	]) {
		from = c.msgs.length;
		id = await c.tool('sample', { prompt: what, timeout_ms: 1000 });
		sr = await c.serverRequest('sampling/createMessage', from);
		await c.send({ jsonrpc: '2.0', id: sr?.msg.id, ...answer });
		if (what === 'the same answer twice')
			await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: sampled('second') });
		a = await c.answer(id, 3000);
		await sleep(100);
		ok(a !== undefined && c.responses(id).length === 1 && typeof outcome(a).text === 'string' &&
		    (what !== 'the same answer twice' || outcome(a).text === 'sampled: twice'),
		    `raw: an answer with ${what}: exactly one tool response (${show(outcome(a))})`, c.responses(id).map(e => e.raw));
	}
	r = await c.request('ping');
	ok(r?.msg?.result !== undefined, 'raw: after the odd answers the server still answers ping', r?.raw);

	// -- the server's ids against the client's
	const srvIds = c.serverRequests().map(e => JSON.stringify(e.msg.id));
	const cliAll = new Set(c.clientIds().map(x => JSON.stringify(x)));
	if (srvIds.some(x => cliAll.has(x)))
		diag(`raw: note: server request ids equal to client ids: ${srvIds.filter(x => cliAll.has(x)).join(', ')} ` +
		    '(the client used them on purpose: "s1" and the deliberate reuse above)');
	const cliIds = new Set(c.clientIds().filter(x => x !== 's1' && !isDeepStrictEqual(x, inner)).map(x => JSON.stringify(x)));
	ok(srvIds.length >= 12, `raw: the server sent ${srvIds.length} requests in this session`);
	is(srvIds.filter(x => cliIds.has(x)), [], `raw: no server request id equals any of the client's ${cliIds.size} ids (${[...cliIds].slice(0, 8).join(', ')}, ...)`);
	is(srvIds.length - new Set(srvIds).size, 0, 'raw: the server never reused one of its request ids in the session', srvIds);
	is(c.msgs.filter(e => e.msg?.method === 'notifications/cancelled').length, 2,
	    'raw: notifications/cancelled came only for the two requests the server gave up on, none for answered ones');
	is(c.bad, [], 'raw: every line/event from the server was JSON');
	c.close();
}

// ---- modes: url-mode elicitation gated by capability and version -------------------

async function modesGroup(kind) {
	const cases = [
		['2025-11-25', { elicitation: { form: {} } }, 'url', false, '2025-11-25, elicitation {form} only'],
		['2025-11-25', { elicitation: {} }, 'url', false, '2025-11-25, elicitation {} (form only)'],
		['2025-06-18', { elicitation: { form: {}, url: {} } }, 'url', false, '2025-06-18 declaring {form, url}'],
		['2025-06-18', { elicitation: {} }, 'form', true, '2025-06-18, elicitation {}: form'],
		['2025-11-25', { elicitation: { url: {} } }, 'url', true, '2025-11-25 declaring {url}'],
		['2025-11-25', { elicitation: { form: {}, url: {} } }, 'url', true, '2025-11-25 declaring {form, url}'],
	];
	await Promise.all(cases.map(async ([version, caps, mode, allowed, what]) => {
		const { c, error } = await openRaw(kind, `modes ${what}`, version, caps);
		if (!ok(c !== undefined, `modes: ${what}: initialize`, error))
			return;
		const neg = c.initResult.protocolVersion;
		const from = c.msgs.length;
		const t0 = Date.now();
		const id = await c.tool('elicit', { message: 'm', mode, timeout_ms: 3000 });
		if (!allowed) {
			const a = await c.answer(id, 3000);
			is(outcome(a), { text: `elicitation failed: ${ESTATE}`, isError: true },
			    `modes: ${what} (negotiated ${neg}): ${mode} mode refused`);
			ok(a !== undefined && a.t - t0 < 500, `modes: ${what}: at once (${a ? a.t - t0 : '-'} ms)`);
			await sleep(150);
			is(c.serverRequests(undefined, from).map(e => e.raw), [], `modes: ${what}: nothing was sent`);
		} else {
			const sr = await c.serverRequest('elicitation/create', from, 1, 3000);
			ok(sr !== undefined && (mode === 'url' ? sr.msg.params?.mode === 'url' &&
			    sr.msg.params?.url === 'https://example.com/x' && sr.msg.params?.elicitationId === 'e1' :
			    sr.msg.params?.requestedSchema !== undefined),
			    `modes: ${what} (negotiated ${neg}): the ${mode}-mode elicitation/create is sent`, sr?.raw ?? 'none');
			await c.send({ jsonrpc: '2.0', id: sr?.msg.id, result: { action: 'cancel' } });
			const a = await c.answer(id, 3000);
			is(outcome(a), { text: 'elicited: action=cancel content=null', isError: false },
			    `modes: ${what}: the answer reaches the tool`);
		}
		c.close();
	}));
	// Not promised by mcp.h, so only reported: form mode to a client that
	// declared url mode only.
	const { c } = await openRaw(kind, 'modes url-only form', '2025-11-25', { elicitation: { url: {} } });
	if (c) {
		const from = c.msgs.length;
		const id = await c.tool('elicit', { message: 'm', timeout_ms: 300 });
		const a = await c.answer(id, 3000);
		diag(`modes: form mode to a client declaring {url} only: ${c.serverRequests('elicitation/create', from).length ?
		    'sent' : 'not sent'}; result ${show(outcome(a))}`);
		c.close();
	}
}

// ---- roots: notifications/roots/list_changed reaches the callback ------------------

// The callback's report (test/feat-server.c roots_changed): a log message
// with logger "roots".
const ROOTS_LOG = /^roots changed #(\d+) \(roots-udata, tool none, token none, text rc -2\): (.*)$/;

async function rootsGroup(kind) {
	let roots = ROOTS;
	const conn = await openSdk(kind, 'roots', FULL_CAPS, { roots: () => ({ roots }) });
	if (!ok(!conn.connectError, 'roots: SDK connect with roots {listChanged}', conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	const logs = [];
	client.setNotificationHandler(LoggingMessageNotificationSchema, n => {
		if (n.params.logger === 'roots')
			logs.push(n.params.data);
	});
	const reports = () => logs.map(l => ROOTS_LOG.exec(l)).filter(Boolean);
	const waitReports = async (n) => {
		const t = Date.now();
		while (reports().length < n && Date.now() - t < 3000)
			await sleep(20);
		return reports();
	};
	let r = await callTool(conn, 'last_roots', {});
	const runs0 = Number(/^runs (\d+):/.exec(textOf(r.value))?.[1] ?? NaN);
	ok(Number.isInteger(runs0), 'roots: last_roots answers "runs N: ..."', sdkOutcome(r));
	await sleep(200);
	is(conn.received.filter(e => e.msg.method === 'roots/list').length, 0,
	    'roots: no roots/list before the client says its roots changed');

	// -- one notification: one run, which lists the roots
	let from = conn.received.length;
	await client.sendRootsListChanged();
	let rep = await waitReports(1);
	ok(rep.length === 1, 'roots: after sendRootsListChanged, the callback reports (a log message)', logs);
	is(rep[0] && JSON.parse(rep[0][2]), ROOTS, 'roots: the callback got the client\'s roots from mcp_call_roots');
	is(rep[0] && Number(rep[0][1]), runs0 + 1, 'roots: it ran once');
	is(conn.received.slice(from).filter(e => e.msg.method === 'roots/list').length, 1,
	    'roots: exactly one roots/list went to the client');
	is(conn.handled.filter(h => h.name === 'roots').length, 1, 'roots: and the SDK\'s roots handler answered it');
	r = await callTool(conn, 'last_roots', {});
	is(sdkOutcome(r), { text: `runs ${runs0 + 1}: ${JSON.stringify(ROOTS)}`, isError: false },
	    'roots: the tool last_roots sees what the callback stored');

	// -- the roots change again: the callback sees the new list
	roots = [{ uri: 'file:///srv/new', name: 'new' }];
	await client.sendRootsListChanged();
	rep = await waitReports(2);
	is(rep[1] && JSON.parse(rep[1][2]), roots, 'roots: a second notification: the callback lists the new roots');

	// -- three at once: three runs
	await Promise.all([1, 2, 3].map(() => client.sendRootsListChanged()));
	rep = await waitReports(5);
	is(rep.map(x => Number(x[1])).sort((a, b) => a - b), [1, 2, 3, 4, 5].map(k => runs0 + k),
	    'roots: three more notifications: three more runs');
	await sleep(200);
	is(reports().length, 5, 'roots: and no more');
	const reqIds = conn.sent.filter(m => isRequest(m.msg)).map(m => m.msg.id);
	is(conn.received.filter(e => isResponse(e.msg) && !reqIds.some(id => isDeepStrictEqual(id, e.msg.id))).map(e => e.msg), [],
	    'roots: the server answered no notification (every response is to a request of the client)');
	is(conn.errors.map(errText), [], 'roots: the SDK reported no errors');
	await closeSdk(conn);

	// -- a client that declared no roots, and one before initialize
	for (const [what, caps, early] of [['declared no roots', { sampling: {} }, false],
	    ['roots {listChanged}, before initialize', { roots: { listChanged: true } }, true]]) {
		let c;
		if (early) {
			// Sent before initialize, then the session is opened.
			if (kind === 'stdio') {
				c = new RawStdio(SERVER, [], 'stdio roots-early', RAW);
			} else {
				const srv = await httpServer();
				c = await RawSse.open(srv.base, 'sse roots-early', RAW);
			}
			await c.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
			await c.init('2025-11-25', caps);
		} else {
			const o = await openRaw(kind, `roots ${what}`, '2025-11-25', caps);
			if (!ok(o.c !== undefined, `roots: raw, ${what}: initialize`, o.error))
				continue;
			c = o.c;
			await c.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
		}
		await sleep(400);
		is(c.serverRequests().map(e => e.raw), [], `roots: raw, ${what}: the notification sends no roots/list`);
		c.close();
	}

	// -- a raw client: the request on the wire, an error answer
	const { c, error } = await openRaw(kind, 'roots raw', '2025-11-25', { roots: { listChanged: true } });
	if (!ok(c !== undefined, 'roots: raw, roots {listChanged}: initialize', error))
		return;
	from = c.msgs.length;
	await c.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' });
	const sr = await c.serverRequest('roots/list', from, 1, 3000);
	ok(sr !== undefined && (sr.msg.params === undefined || isDeepStrictEqual(sr.msg.params, {})),
	    'roots: raw: the notification brings a roots/list request', c.msgs.slice(from).map(e => e.raw));
	await c.send({ jsonrpc: '2.0', id: sr?.msg.id, error: { code: -32603, message: 'no roots today' } });
	await c.until(() => c.msgs.slice(from).some(e => e.msg?.method === 'notifications/message'), 3000);
	const msgs = c.msgs.slice(from).filter(e => e.msg?.method === 'notifications/message').map(e => e.msg.params);
	ok(msgs.length === 1 && msgs[0].logger === 'roots' && msgs[0].level === 'warning' &&
	    /^roots changed #\d+: roots\/list failed: the client answered with an error$/.test(msgs[0].data),
	    'roots: raw: an error answer reaches the callback (MCP_ECLIENT)', msgs);
	await sleep(200);
	is(c.msgs.slice(from).filter(e => isResponse(e.msg)).map(e => e.raw), [],
	    'roots: raw: nothing answers the notification');
	c.close();
}

// ---- eof: end of stdin with a request pending ----------------------------------------

async function eofGroup(kind) {
	if (kind !== 'stdio')
		return;
	const { c, error } = await openRaw(kind, 'eof', '2025-11-25', { sampling: {} });
	if (!ok(c !== undefined, 'eof: initialize', error))
		return;
	const id = await c.tool('sample', { prompt: 'pending' });	// the default timeout: 60 s
	const sr = await c.serverRequest('sampling/createMessage');
	ok(sr !== undefined, 'eof: the sampling request is out');
	const t0 = Date.now();
	c.child.stdin.end();
	const ex = await within(c.p.exited, 6000);
	ok(ex !== null && Date.now() - t0 < 6000,
	    `eof: end of stdin with a sample pending: the server exits without waiting for the 60 s timeout (${Date.now() - t0} ms)`, ex);
	is(ex && { code: ex.code, signal: ex.signal }, { code: 0, signal: null }, 'eof: and exits 0');
	diag(`eof: response to the pending tools/call: ${c.responses(id).map(e => e.raw).join(' ') || 'none'}`);
	if (ex === null)
		c.p.child.kill('SIGKILL');
}

// ---- main ------------------------------------------------------------------

async function main() {
	if (!ok(existsSync(SERVER), `server binary exists: ${SERVER}`))
		return;
	const groups = { sdk: sdkGroup, nocap: nocapGroup, raw: rawGroup, modes: modesGroup, eof: eofGroup,
	    roots: rootsGroup };
	for (const kind of KINDS) {
		for (const g of GROUPS) {
			if (g === 'eof' && kind !== 'stdio')
				continue;
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
			ok(p.exit === null, 'the HTTP server is still running at the end', p.exit);
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
