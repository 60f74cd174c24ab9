// features.mjs: progress notifications, logging/setLevel, tool timeouts
// and a few hostile inputs, against the reference server build/mcp-demo,
// on stdio AND on the legacy HTTP+SSE transport. Each transport gets:
//
//   sdk      the official TypeScript SDK client: onprogress on callTool,
//            the logging capability, setLoggingLevel, an aborted call
//   raw      byte-level JSON-RPC: progress tokens and their JSON types,
//            bogus tokens, ordering against the response line, cancel,
//            logging/setLevel, stray responses, a 1 MiB cursor
//   timeout  a server started with --tool-timeout 300
//
// Prints TAP on stdout; exits 1 if any assertion failed. Node 20; the SDK
// comes from test/node/node_modules. Run from anywhere:
//
//   node test/features.mjs [stdio|sse] [sdk|raw|timeout] ...
//
// Arguments pick transports and groups (default: all of both). The
// server's stderr is shown as TAP comments only when something failed.
// MCP_DEMO in the environment names another server binary.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import {
	diag, errText, globalTimeout, is, ok, settle, sleep, tap, textOf, within,
} from './node/harness.mjs';
import {
	RawSse, RawStdio, closeSdk as closeSdkConn, end, httpServerFor, isProgress, openSdk as openSdkConn,
	rawToken, show, stop,
} from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const SERVER = path.resolve(process.env.MCP_DEMO ?? path.join(HERE, '../build/mcp-demo'));
const GLOBAL_TIMEOUT_MS = 60000;
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

const want = process.argv.slice(2);
const KINDS = ['stdio', 'sse'].filter(k => !want.some(a => ['stdio', 'sse'].includes(a)) || want.includes(k));
const GROUPS = ['sdk', 'raw', 'timeout'].filter(g =>
    !want.some(a => ['sdk', 'raw', 'timeout'].includes(a)) || want.includes(g));

// ---- TAP (test/node/harness.mjs; tap.label names the transport) ---------------

tap.show = show;

const globalTimer = globalTimeout(GLOBAL_TIMEOUT_MS, end, '');

// ---- helpers ---------------------------------------------------------------

function increasing(xs) {
	return xs.every((x, i) => i === 0 || x > xs[i - 1]);
}

// ---- servers -----------------------------------------------------------------

// The HTTP server for ARGS (one per set of options), started once: its base
// URL, from the "listening on http://.../sse" line on stderr.
const httpServers = new Map();

const httpServer = args => httpServerFor(httpServers, SERVER, args);

// ---- raw connections -----------------------------------------------------------

// test/node/mcp-clients.mjs: RawStdio, RawSse; request ids from 1000.
const RAW = { nextId: 1000, clientName: 'libmcp-features' };

// A raw, initialized connection of KIND to a server with ARGS.
async function openRaw(kind, args = [], tag = 'raw') {
	let c;
	if (kind === 'stdio') {
		c = new RawStdio(SERVER, args, `stdio ${tag}`, RAW);
	} else {
		const srv = await httpServer(args);
		if (srv.base === null)
			return { error: 'the HTTP server did not start' };
		c = await RawSse.open(srv.base, `sse ${tag}`, RAW);
		if (!c.endpoint)
			return { error: `no endpoint event (status ${c.status}, ${c.error ?? 'no error'})` };
	}
	const r = await c.init();
	if (!r?.msg?.result) {
		c.close();
		return { error: `initialize failed: ${show(r?.msg)}` };
	}
	c.initResult = r.msg.result;
	return { c };
}

const sleepCall = (id, ms, meta) => ({
	jsonrpc: '2.0', id, method: 'tools/call',
	params: { name: 'sleep', arguments: { ms }, ...(meta === undefined ? {} : { _meta: meta }) }
});

// ---- SDK connections -----------------------------------------------------------

// The SDK client on KIND to a server with ARGS (test/node/mcp-clients.mjs);
// conn.received records every message the transport hands up, in order.
function openSdk(kind, args = [], tag = 'sdk') {
	return openSdkConn({ kind, server: SERVER, args, tag, httpServer,
	    clientInfo: { name: 'libmcp-features', version: '1.0.0' } });
}

const closeSdk = closeSdkConn;

// ---- sdk: onprogress, the logging capability, an aborted call ---------------

async function sdkGroup(kind) {
	const conn = await openSdk(kind, [], 'sdk');
	if (!ok(!conn.connectError, 'sdk: connect (initialize handshake) succeeds',
	    conn.connectError && errText(conn.connectError)))
		return;
	const { client } = conn;
	const caps = client.getServerCapabilities();
	ok(caps?.logging !== null && typeof caps?.logging === 'object' && !Array.isArray(caps.logging),
	    'sdk: server capabilities declare logging (an object)', caps);
	let r = await settle(client.setLoggingLevel('warning'), 5000);
	is(r.error ? errText(r.error) : r.value, {}, 'sdk: setLoggingLevel("warning") resolves with {}');

	// -- onprogress: sleep 450 reports at 100, 200, 300 and 400 ms
	const events = [];
	let resolved = false;
	const p = client.callTool({ name: 'sleep', arguments: { ms: 450 } }, undefined, {
		onprogress: ev => events.push({ ...ev, afterResult: resolved })
	});
	p.then(() => { resolved = true; }, () => { resolved = true; });
	r = await settle(p, 5000);
	is(r.error ? errText(r.error) : { text: textOf(r.value), isError: r.value.isError ?? false },
	    { text: 'slept 450 ms', isError: false }, 'sdk: sleep 450 with onprogress: "slept 450 ms"');
	ok(events.length >= 3, `sdk: sleep 450: onprogress called ${events.length} times (>= 3)`, events);
	ok(events.length > 0 && increasing(events.map(e => e.progress)),
	    `sdk: sleep 450: progress values increase (${events.map(e => e.progress).join(', ')})`, events);
	ok(events.length > 0 && events.every(e => e.total === 450 && e.progress > 0 && e.progress < 450),
	    'sdk: sleep 450: every event has total 450 and 0 < progress < 450', events);
	ok(events.length > 0 && events.every(e => !e.afterResult),
	    'sdk: sleep 450: every onprogress came before callTool resolved', events);
	const req = conn.sent.find(m => m.msg.method === 'tools/call' && m.msg.params?.arguments?.ms === 450)?.msg;
	const tok = req?.params?._meta?.progressToken;
	const resp = conn.received.find(e => !('method' in e.msg) && e.msg.id === req?.id);
	const prog = conn.received.filter(e => e.msg.method === 'notifications/progress' &&
	    e.msg.params?.progressToken === tok);
	ok(tok !== undefined && resp !== undefined && prog.length === events.length &&
	    prog.every(e => e.seq < resp.seq),
	    `sdk: sleep 450: the ${prog.length} notifications with the SDK's token ${show(tok)} all came before the response`,
	    { tok, prog: prog.map(e => e.seq), resp: resp?.seq });

	// -- abort after 250 ms: progress stops, no response
	const ac = new AbortController();
	const aborted = [];
	const t0 = Date.now();
	let tAbort = Infinity;
	const pc = client.callTool({ name: 'sleep', arguments: { ms: 2000 } }, undefined, {
		signal: ac.signal, onprogress: ev => aborted.push({ ...ev, t: Date.now() })
	});
	// Abort between the 200 and 300 ms ticks, 50 ms from each: a progress
	// sent while the cancel is on its way is a race the spec allows, and
	// the SDK would report it (at 210 ms, a loaded machine made one).
	setTimeout(() => { tAbort = Date.now(); ac.abort('features test cancels'); }, 250);
	r = await settle(pc, 5000);
	ok(r.error && !r.timedOut && r.ms < 1500,
	    `sdk: aborting sleep 2000 at 250 ms rejects the call (after ${r.ms} ms)`,
	    r.error ? errText(r.error) : { resolvedWith: r.value });
	const creq = conn.sent.find(m => m.msg.method === 'tools/call' && m.msg.params?.arguments?.ms === 2000)?.msg;
	const ctok = creq?.params?._meta?.progressToken;
	const note = conn.sent.find(m => m.msg.method === 'notifications/cancelled')?.msg;
	ok(creq !== undefined && ctok !== undefined && note?.params?.requestId === creq.id,
	    'sdk: the request carried a progressToken and the SDK sent notifications/cancelled for it', { creq, note });
	await sleep(Math.max(0, t0 + 1100 - Date.now()));
	const cprog = conn.received.filter(e => e.msg.method === 'notifications/progress' &&
	    e.msg.params?.progressToken === ctok);
	ok(cprog.filter(e => e.t < tAbort).length >= 1,
	    `sdk: progress came for the call before the abort (${cprog.filter(e => e.t < tAbort).length} notifications)`,
	    cprog.map(e => ({ at: e.t - t0, p: e.msg.params.progress })));
	const late = cprog.filter(e => e.t > tAbort + 150);
	is(late.map(e => ({ at: e.t - t0, progress: e.msg.params.progress })), [],
	    'sdk: no progress for the aborted call later than 150 ms after the abort (watched for 850 ms)',
	    `abort at ${tAbort - t0} ms`);
	is(conn.received.filter(e => !('method' in e.msg) && e.msg.id === creq?.id).map(e => e.msg), [],
	    'sdk: no response for the aborted call');
	r = await settle(client.callTool({ name: 'echo', arguments: { text: 'after abort' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'after abort', 'sdk: an echo after the abort works');
	is(conn.errors.map(errText), [], 'sdk: the SDK reported no errors (e.g. progress for an unknown token)');
	await closeSdk(conn);
}

// ---- raw: tokens, ordering, cancel, logging, hostile --------------------------

async function rawGroup(kind) {
	const { c, error } = await openRaw(kind, [], 'raw');
	if (!ok(c !== undefined, 'raw: initialize succeeds', error))
		return;
	const caps = c.initResult.capabilities;
	ok(isDeepStrictEqual(caps?.logging, {}) && typeof caps?.tools === 'object',
	    'raw: initialize result declares capabilities.logging ({}) next to tools', caps);

	// -- logging/setLevel
	for (const level of LEVELS) {
		const r = await c.request('logging/setLevel', { level });
		is(r?.msg, { jsonrpc: '2.0', id: r?.msg?.id, result: {} },
		    `raw: logging/setLevel "${level}" returns {}`);
	}
	for (const [params, what] of [
		[{ level: 'verbose' }, '"verbose"'],
		[{ level: '' }, 'an empty string'],
		[{ level: 3 }, 'the number 3'],
		[{}, 'no level']
	]) {
		const r = await c.request('logging/setLevel', params);
		ok(r?.msg?.error?.code === -32602 && r.msg.result === undefined,
		    `raw: logging/setLevel with ${what} gives error -32602`, r?.msg);
	}

	// -- tokens echoed with their JSON type (all at once: sleep 350, so
	// progress at 100, 200 and 300 ms)
	const tokens = [
		['"tok-abc"', 'a string token'],
		['"7"', 'a string token that looks like a number'],
		['42', 'an integer token'],
		['0', 'the integer token zero'],
		['-5', 'a negative integer token'],
		['9007199254740993', 'the integer token 2^53+1, exactly as written:']
	];
	const base = c.msgs.length;
	const ids = tokens.map((_, k) => 100 + k);
	await Promise.all(tokens.map(([tok], k) => c.send(
	    `{"jsonrpc":"2.0","id":${ids[k]},"method":"tools/call","params":{"name":"sleep",` +
	    `"arguments":{"ms":350},"_meta":{"progressToken":${tok}}}}`)));
	await c.until(() => ids.every(id => c.responses(id).length > 0), 5000);
	await sleep(200);	// anything late would show up now
	for (const [k, [tok, what]] of tokens.entries()) {
		const resp = c.responses(ids[k]);
		const prog = c.progress(tok);
		const vals = prog.map(e => e.msg?.params?.progress);
		ok(resp.length === 1 && textOf(resp[0].msg.result) === 'slept 350 ms',
		    `raw: ${what} ${tok}: the call succeeds ("slept 350 ms")`, resp.map(e => e.raw));
		ok(prog.length >= 3 && prog.every(e => e.raw.includes(`"progressToken":${tok},`)),
		    `raw: ${what} ${tok}: ${prog.length} progress notifications (>= 3), the token echoed byte for byte`,
		    prog.map(e => e.raw));
		if (tok !== '9007199254740993')
			ok(prog.length > 0 && prog.every(e => isDeepStrictEqual(e.msg.params.progressToken, JSON.parse(tok))),
			    `raw: ${what} ${tok}: the token keeps its JSON type (${typeof JSON.parse(tok)})`,
			    prog.map(e => e.msg.params.progressToken));
		ok(prog.length > 0 && increasing(vals) && prog.every(e => e.msg.params.total === 350),
		    `raw: ${what} ${tok}: progress increases (${vals.join(', ')}) with total 350`, prog.map(e => e.raw));
		ok(resp.length === 1 && prog.every(e => e.seq < resp[0].seq),
		    `raw: ${what} ${tok}: every progress line came before the response line`,
		    { prog: prog.map(e => e.seq), resp: resp.map(e => e.seq) });
	}
	const known = new Set(tokens.map(t => t[0]));
	const stray = c.msgs.slice(base).filter(e => isProgress(e) && !known.has(rawToken(e)));
	is(stray.map(e => e.raw), [], 'raw: no progress notification with any other token');

	// -- bogus tokens and no token: each on its own connection, at once
	const bogus = [
		['{"a":1}', 'an object token'],
		['1.5', 'a float token'],
		['null', 'a null token'],
		['true', 'a boolean token'],
		['[1]', 'an array token'],
		[undefined, 'no _meta'],
		['-', '_meta without progressToken']
	];
	const conns = await Promise.all(bogus.map((_, k) => openRaw(kind, [], `bogus${k}`)));
	await Promise.all(bogus.map(async ([tok, what], k) => {
		const bc = conns[k].c;
		if (bc === undefined) {
			ok(false, `raw: ${what}: a connection for it`, conns[k].error);
			return;
		}
		const meta = tok === undefined ? '' : tok === '-' ? ',"_meta":{}' :
		    `,"_meta":{"progressToken":${tok}}`;
		bc.bogusWhat = what;
		await bc.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep",` +
		    `"arguments":{"ms":250}${meta}}}`);
		await bc.answer(1, 5000);
		await sleep(150);
	}));
	for (const [k, [tok, what]] of bogus.entries()) {
		const bc = conns[k].c;
		if (bc === undefined)
			continue;
		const resp = bc.responses(1);
		ok(resp.length === 1 && textOf(resp[0].msg.result) === 'slept 250 ms' && !resp[0].msg.result.isError,
		    `raw: ${what}${tok && tok !== '-' ? ` ${tok}` : ''}: the call succeeds ("slept 250 ms")`,
		    resp.map(e => e.raw));
		is(bc.msgs.filter(isProgress).map(e => e.raw), [],
		    `raw: ${what}${tok && tok !== '-' ? ` ${tok}` : ''}: no progress notification at all`);
	}
	await Promise.all(conns.map(x => x.c?.close()));

	// -- ordering under a tight race: sleep 101..120 ms, progress at 100 ms
	// and the response 1..20 ms after it, 20 calls at once
	const ord = Array.from({ length: 20 }, (_, k) => ({ id: 200 + k, ms: 101 + k, tok: `"ord-${k}"` }));
	await Promise.all(ord.map(o => c.send(sleepCall(o.id, o.ms, { progressToken: JSON.parse(o.tok) }))));
	await c.until(() => ord.every(o => c.responses(o.id).length > 0), 5000);
	await sleep(300);
	const wrong = ord.filter(o => {
		const r = c.responses(o.id);
		return r.length !== 1 || textOf(r[0].msg.result) !== `slept ${o.ms} ms`;
	});
	is(wrong.map(o => ({ id: o.id, got: c.responses(o.id).map(e => e.raw) })), [],
	    'raw: 20 concurrent sleeps of 101..120 ms with tokens: each gets exactly its own result');
	const withProg = ord.filter(o => c.progress(o.tok).length >= 1);
	ok(withProg.length === ord.length,
	    `raw: 20 concurrent sleeps: each got its progress at 100 ms (${withProg.length} of 20)`,
	    ord.filter(o => !withProg.includes(o)).map(o => o.tok));
	const after = ord.flatMap(o => {
		const r = c.responses(o.id)[0];
		return c.progress(o.tok).filter(e => r === undefined || e.seq > r.seq).map(e => e.raw);
	});
	is(after, [], 'raw: 20 concurrent sleeps: no progress line after its call\'s response line (watched 300 ms on)');

	// -- cancel: sleep 2000 with a token, notifications/cancelled at 250 ms
	const t0 = Date.now();
	await c.send(sleepCall(300, 2000, { progressToken: 'cancel-me' }));
	await sleep(250);
	const cs = await c.send({ jsonrpc: '2.0', method: 'notifications/cancelled',
		params: { requestId: 300, reason: 'features test' } });
	const tCancel = Date.now();
	if (kind === 'sse')
		is(cs.status, 202, 'raw: the POST of notifications/cancelled gets 202');
	await sleep(Math.max(0, tCancel + 800 - Date.now()));
	const cprog = c.progress('"cancel-me"');
	ok(cprog.filter(e => e.t < tCancel).length >= 1,
	    `raw: cancel: progress came before the cancellation (${cprog.filter(e => e.t < tCancel).length})`,
	    cprog.map(e => ({ at: e.t - t0, raw: e.raw })));
	is(cprog.filter(e => e.t > tCancel + 100).map(e => ({ at: e.t - t0, raw: e.raw })), [],
	    'raw: cancel: no progress later than 100 ms after notifications/cancelled (watched 800 ms)',
	    `cancelled at ${tCancel - t0} ms`);
	is(c.responses(300).map(e => e.raw), [], 'raw: cancel: no response for the cancelled call');
	let r = await c.request('ping');
	is(r?.msg?.result, {}, 'raw: cancel: the session still answers ping');

	// -- hostile: responses to requests the server never sent
	const before = c.msgs.length;
	const s1 = await c.send({ jsonrpc: '2.0', id: 'never-sent', result: {} });
	const s2 = await c.send({ jsonrpc: '2.0', id: 77, error: { code: -32000, message: 'nope' } });
	const s3 = await c.send({ jsonrpc: '2.0', id: 78, result: { roots: [] } });
	if (kind === 'sse')
		is([s1.status, s2.status, s3.status], [202, 202, 202], 'raw: stray responses: each POST gets 202');
	await sleep(300);
	is(c.msgs.slice(before).map(e => e.raw), [],
	    'raw: stray responses (result and error, ids the server never used): no output at all');
	r = await c.request('ping');
	is(c.msgs.slice(before).map(e => e.msg), [{ jsonrpc: '2.0', id: r?.msg?.id, result: {} }],
	    'raw: stray responses: then a ping is answered, and that is the only output');

	// -- hostile: a 1 MiB cursor
	for (const [cursor, what] of [
		['A'.repeat(1 << 20), '1 MiB cursor of "A"'],
		['c' + '0'.repeat((1 << 20) - 1), '1 MiB cursor "c000..." (the cursor format, far too long)']
	]) {
		r = await c.request('tools/list', { cursor }, 8000);
		ok(r?.msg?.error?.code === -32602 && r.msg.result === undefined,
		    `raw: tools/list with a ${what} gives error -32602`,
		    r ? r.raw.slice(0, 300) : 'no answer');
	}
	r = await c.request('tools/list', { cursor: 5 });
	ok(r?.msg?.error?.code === -32602, 'raw: tools/list with a numeric cursor gives error -32602', r?.raw);
	r = await c.request('tools/list');
	ok(Array.isArray(r?.msg?.result?.tools) && r.msg.result.tools.length === 4,
	    'raw: then tools/list without a cursor still lists the 4 tools', r?.raw?.slice(0, 300));
	is(c.bad, [], 'raw: every line/event from the server was JSON');
	c.close();
	if (kind === 'stdio') {
		await within(c.p.exited, 3000);
		is(c.p.exit, { code: 0, signal: null }, 'raw: the server exits 0 at the end of stdin');
	}
}

// ---- timeout: --tool-timeout 300 ------------------------------------------------

async function timeoutGroup(kind) {
	const args = ['--tool-timeout', '300'];
	const { c, error } = await openRaw(kind, args, 'timeout');
	if (!ok(c !== undefined, 'timeout: initialize succeeds (--tool-timeout 300)', error))
		return;
	const t0 = Date.now();
	await c.send(sleepCall(1, 2000, { progressToken: 'to' }));
	const a = await c.answer(1, 3000);
	const dt = (a?.t ?? Date.now()) - t0;
	const res = a?.msg?.result;
	ok(res?.isError === true && /timed out/.test(textOf(res)),
	    'timeout: sleep 2000 gets an isError result mentioning "timed out"', a?.raw ?? 'no answer');
	is(textOf(res), 'tool sleep timed out after 300 ms', 'timeout: the text is "tool sleep timed out after 300 ms"');
	ok(a !== undefined && dt >= 280 && dt <= 1500, `timeout: it came after ${dt} ms (300..1500)`);
	let r = await c.request('tools/call', { name: 'echo', arguments: { text: 'still here' } });
	is(r?.msg?.result?.content, [{ type: 'text', text: 'still here' }], 'timeout: an echo right after works');
	r = await c.request('tools/call', { name: 'sleep', arguments: { ms: 100 } });
	ok(textOf(r?.msg?.result) === 'slept 100 ms' && !r.msg.result.isError,
	    'timeout: sleep 100 (under the limit) still succeeds', r?.raw);
	await sleep(Math.max(0, t0 + 2400 - Date.now()));
	is(c.responses(1).length, 1, 'timeout: exactly one response for the timed-out id (watched until 2.4 s)',
	    c.responses(1).map(e => e.raw));
	const prog = c.progress('"to"');
	ok(prog.length >= 1 && a !== undefined && prog.every(e => e.seq < a.seq),
	    `timeout: its progress (${prog.length} notifications) all came before the timeout result, none after`,
	    { prog: prog.map(e => [e.seq, e.raw]), answer: a?.seq });
	c.close();

	// The SDK sees the same thing as a tool result.
	const conn = await openSdk(kind, args, 'timeout-sdk');
	if (!ok(!conn.connectError, 'timeout: the SDK client connects', conn.connectError && errText(conn.connectError)))
		return;
	r = await settle(conn.client.callTool({ name: 'sleep', arguments: { ms: 2000 } }), 5000);
	ok(!r.error && r.value.isError === true && /timed out/.test(textOf(r.value)) && r.ms <= 1500,
	    `timeout: SDK callTool sleep 2000 resolves with an isError "timed out" result (${r.ms} ms)`,
	    r.error ? errText(r.error) : r.value);
	r = await settle(conn.client.callTool({ name: 'echo', arguments: { text: 'ok' } }), 5000);
	is(r.error ? errText(r.error) : textOf(r.value), 'ok', 'timeout: SDK echo after it works');
	await sleep(1900);
	is(conn.errors.map(errText), [], 'timeout: the SDK reported no errors (no late second response)');
	await closeSdk(conn);
}

// ---- main ------------------------------------------------------------------

async function main() {
	if (!ok(existsSync(SERVER), `server binary exists: ${SERVER}`))
		return;
	for (const kind of KINDS) {
		const groups = { sdk: sdkGroup, raw: rawGroup, timeout: timeoutGroup };
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
	for (const srv of httpServers.values()) {
		const { p, base } = await srv;
		if (base === null)
			continue;
		await stop(p, 'SIGTERM', 6000);
		ok(p.exit?.code === 0, `the HTTP server (${base}) exits 0 on SIGTERM`, p.exit);
	}
}

try {
	await main();
} catch (e) {
	ok(false, 'the test script itself threw', e?.stack ?? show(e));
}
clearTimeout(globalTimer);
end();
