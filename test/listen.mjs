// listen.mjs: subscriptions/listen (protocol 2026-07-28) against
// build/feat-server, on Streamable HTTP (each listen the SSE response of
// its own POST) and on stdio (JSON lines to a child process): the
// acknowledgment first, with the filter the server agreed to; then the
// list_changed and resources/updated notifications it asked for (the
// latter for its URIs only), each tagged with _meta subscriptionId = the
// listen's id, and nothing it did not ask for (other lists, other URIs,
// log messages); SSE keepalive comments; a closed HTTP stream ending the
// listen (the gauge mcp_listens, and the limit freeing up);
// notifications/cancelled on stdio, after which nothing comes for it;
// --max-listens and the 64 per stdio connection; bad params (-32602);
// --max-subscriptions 0 (no resources.subscribe: the URIs left out of the
// acknowledgment); --json-response (still a stream); a legacy session on
// the same server, whose list_changed has no subscriptionId; and SIGTERM,
// which ends every listen with its {resultType:"complete"} answer and
// exits at once; what a listen's reader took is not kept; a client that
// stops reading stdio amid a notification to 64 listens. Prints TAP; exits 1 when an assertion fails. Node 20,
// no npm packages; run from the repository root (test/listen.sh does).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { done, ok, is, show, skip, tap } from './node/harness.mjs';
import { FEAT, get, killAll, post, startServer } from './node/http-client.mjs';

const V = '2026-07-28';
const SUB = 'io.modelcontextprotocol/subscriptionId';
const META = {
	'io.modelcontextprotocol/protocolVersion': V,
	'io.modelcontextprotocol/clientCapabilities': {},
	'io.modelcontextprotocol/clientInfo': { name: 'listen-test', version: '1.0.0' },
};
const req = (id, method, params = {}) => ({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } });
const listenReq = (id, notifications) => req(id, 'subscriptions/listen',
    notifications === undefined ? {} : { notifications });
const notify = (id, args) => req(id, 'tools/call', { name: 'notify_to', arguments: args });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isErr = (m, code) => m && m.error && m.error.code === code && typeof m.error.message === 'string';
const tagged = (m, id) => m && m.params && m.params._meta && JSON.stringify(m.params._meta[SUB]) ===
    JSON.stringify(id);
const WATCHED = 'test://watched-resource';

// ---- HTTP -------------------------------------------------------------------

function mpost(port, body, extra = {}) {
	const headers = { 'MCP-Protocol-Version': V, 'Mcp-Method': body.method, ...extra };
	if (body.method === 'tools/call')
		headers['Mcp-Name'] = body.params.name;
	return post(port, body, { headers });
}

// A listen over HTTP: its exchange, once the acknowledgment came (or not);
// EXT: its client capabilities declare the tasks extension.
async function openListen(port, id, filter, { ext, ...extra } = {}) {
	const body = listenReq(id, filter);
	if (ext)
		body.params._meta = { ...META, 'io.modelcontextprotocol/clientCapabilities':
			{ extensions: { 'io.modelcontextprotocol/tasks': {} } } };
	const x = mpost(port, body, extra);
	await x.until(() => x.msgs.length > 0 || x.ended, 5000);
	return x;
}

// A notify_to call over HTTP; its answer.
async function fire(port, args, id = `n${Math.random()}`) {
	const x = await mpost(port, notify(id, args)).done();
	return x.answer(id);
}

async function gauge(port, name) {
	const r = await fetch(`http://127.0.0.1:${port}/metrics`);
	const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(await r.text());
	return m ? Number(m[1]) : null;
}

async function gaugeIs(port, name, want, ms = 3000) {
	const end = Date.now() + ms;
	let v;
	while ((v = await gauge(port, name)) !== want && Date.now() < end)
		await sleep(50);
	return v;
}

async function httpListen() {
	tap.label = 'http: ';
	const srv = await startServer(['--metrics', '--keepalive', '1'], FEAT);
	const port = srv.port;

	const nt = await mpost(port, listenReq('T', { toolsListChanged: true, taskIds: ['0'.repeat(32)] })).done();
	const et = nt.answer('T');
	ok(nt.status === 400 && isErr(et, -32021) && typeof et.error.data?.requiredCapabilities?.extensions?.[
	    'io.modelcontextprotocol/tasks'] === 'object' && !nt.sse,
	'taskIds without the tasks extension declared: 400, -32021 naming it, no stream', nt.summary());
	const a = await openListen(port, 'A', { toolsListChanged: true, resourceSubscriptions: [WATCHED, WATCHED],
		futureKind: true, taskIds: ['0'.repeat(32)] }, { ext: true });
	ok(a.status === 200 && a.sse, 'a listen\'s POST: 200, text/event-stream', a.summary());
	ok(a.headers['mcp-session-id'] === undefined, 'no Mcp-Session-Id', show(a.headers));
	const ack = a.msgs[0];
	ok(ack && ack.method === 'notifications/subscriptions/acknowledged' && tagged(ack, 'A'),
	    'the first message: notifications/subscriptions/acknowledged, tagged with the listen\'s id', show(ack));
	is(ack?.params?.notifications, { toolsListChanged: true, resourceSubscriptions: [WATCHED] },
	    'the acknowledged filter: what was asked and is served (an unknown kind and taskIds, not served but ' +
	    'declared, ' +
	    'left out; a URI once)');
	ok(a.events().every((e) => e.other.id === undefined), 'no event ids on a listen stream', show(a.events()));
	ok(!a.ended, 'the stream stays open after the acknowledgment', a.summary());

	const b = await openListen(port, 7, { promptsListChanged: true });
	ok(b.msgs[0]?.method === 'notifications/subscriptions/acknowledged' && tagged(b.msgs[0], 7),
	    'a second listen (id 7, a number): acknowledged, tagged 7', show(b.msgs));
	is(await gauge(port, 'mcp_listens'), 2, 'mcp_listens: 2');
	is(await gauge(port, 'mcp_calls_in_flight'), 0, 'mcp_calls_in_flight: listens are not counted as calls');

	// A legacy session on the same server, its GET stream open.
	const init = await post(port, { jsonrpc: '2.0', id: 0, method: 'initialize', params: {
		protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } } }).done();
	const sid = init.headers['mcp-session-id'];
	await post(port, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sid, version: '2025-11-25' }).done();
	const g = get(port, { sid, headers: { 'MCP-Protocol-Version': '2025-11-25' } });
	await g.head();
	ok(g.status === 200, 'legacy: a GET stream of a 2025-11-25 session', g.summary());

	const na = a.msgs.length, nb = b.msgs.length;
	ok(/rc 0/.test(JSON.stringify(await fire(port, { what: 'tools' }))), 'mcp_server_notify_list_changed(tools): rc 0');
	await a.until(() => a.msgs.length > na, 3000);
	const tl = a.msgs.slice(na);
	ok(tl.length === 1 && tl[0].method === 'notifications/tools/list_changed' && tagged(tl[0], 'A'),
	    'listen A (toolsListChanged): notifications/tools/list_changed, tagged A', show(tl));
	await g.until(() => g.msgs.some((m) => m.method === 'notifications/tools/list_changed'), 3000);
	const gl = g.msgs.find((m) => m.method === 'notifications/tools/list_changed');
	ok(gl && (gl.params === undefined || gl.params._meta === undefined),
	    'legacy: the same notification on its GET stream, with no subscriptionId', show(g.msgs));

	await fire(port, { what: 'updated', uri: WATCHED });
	await a.until(() => a.msgs.length > na + 1, 3000);
	const up = a.msgs[na + 1];
	ok(up && up.method === 'notifications/resources/updated' && up.params.uri === WATCHED && tagged(up, 'A'),
	    'listen A: notifications/resources/updated for its URI, tagged A', show(a.msgs));
	await fire(port, { what: 'updated', uri: 'test://static-text' });
	await fire(port, { what: 'resources' });
	await fire(port, { what: 'log', text: 'hello' });
	await fire(port, { what: 'prompts' });
	await b.until(() => b.msgs.length > nb, 3000);
	const pl = b.msgs.slice(nb);
	ok(pl.length === 1 && pl[0].method === 'notifications/prompts/list_changed' && tagged(pl[0], 7),
	    'listen 7 (promptsListChanged): only notifications/prompts/list_changed, tagged 7', show(b.msgs));
	await sleep(300);
	ok(a.msgs.length === na + 2, 'listen A: nothing it did not ask for (another URI, resources and prompts ' +
	    'list_changed, a log message)', show(a.msgs.slice(na)));
	ok(!b.msgs.some((m) => m.method === 'notifications/message' || m.method === 'notifications/tools/list_changed'),
	    'listen 7: no log message, no tools list_changed', show(b.msgs));

	await a.until(() => a.comments().length > 0, 2500);
	ok(a.comments().length > 0, 'SSE keepalive comments on a quiet listen (--keepalive 1)', show(a.items));

	// The client closes A: the server lets it go.
	a.close();
	is(await gaugeIs(port, 'mcp_listens', 1), 1, 'A\'s stream closed by the client: mcp_listens 1');
	ok(/rc 0/.test(JSON.stringify(await fire(port, { what: 'tools' }))) && srv.alive(),
	    'a notification after it: rc 0, the server lives');
	await sleep(200);
	ok(!b.msgs.some((m) => m.method === 'notifications/tools/list_changed'), 'listen 7 still hears no tools change');

	// Bad params: -32602, said in the body (no stream opened).
	const bad = [
		[undefined, 'no notifications'],
		['all', 'notifications a string'],
		[{ toolsListChanged: 'yes' }, 'toolsListChanged not a boolean'],
		[{ resourceSubscriptions: WATCHED }, 'resourceSubscriptions not an array'],
		[{ resourceSubscriptions: [1] }, 'a URI that is no string'],
		[{ resourceSubscriptions: [''] }, 'an empty URI'],
		[{ resourceSubscriptions: ['test://no-such-resource'] }, 'a resource that does not exist'],
	];
	for (const [i, [filter, what]] of bad.entries()) {
		const x = await mpost(port, listenReq(`bad${i}`, filter)).done();
		ok(isErr(x.answer(`bad${i}`), -32602), `${what}: -32602`, x.summary());
	}
	is(await gauge(port, 'mcp_listens'), 1, 'after the refused ones: mcp_listens 1');
	const leg = await post(port, { jsonrpc: '2.0', id: 'lg', method: 'subscriptions/listen', params:
		{ notifications: { toolsListChanged: true } } }, { sid, version: '2025-11-25' }).done();
	ok(isErr(leg.answer('lg'), -32601), 'legacy session: subscriptions/listen is no method (-32601)', leg.summary());

	// SIGTERM: B ends with its complete answer, and the process exits
	// without waiting for the grace period.
	const t0 = Date.now();
	srv.proc.kill('SIGTERM');
	await b.done(5000);
	const fin = b.answer(7);
	ok(fin && fin.result && fin.result.resultType === 'complete' && fin.result._meta?.[SUB] === 7 &&
	    fin.result._meta?.['io.modelcontextprotocol/serverInfo']?.name === 'feat-server',
	'SIGTERM: listen 7 answered {resultType:"complete", _meta subscriptionId 7, serverInfo}', show(b.msgs));
	ok(b.complete, 'its stream then ends normally', b.summary());
	const exit = await srv.exited;
	ok(exit.code === 0 && Date.now() - t0 < 3000, `the process exits 0 in ${Date.now() - t0} ms (grace 5000)`,
	    show(exit));
	g.close();
}

async function httpLimits() {
	tap.label = 'http limits: ';
	let srv = await startServer(['--metrics', '--max-listens', '2', '--max-subscriptions', '2'], FEAT);
	let port = srv.port;
	const l1 = await openListen(port, 1, { toolsListChanged: true });
	const l2 = await openListen(port, 2, { resourcesListChanged: true });
	ok(tagged(l1.msgs[0], 1) && tagged(l2.msgs[0], 2), '--max-listens 2: two listens acknowledged');
	const l3 = await openListen(port, 3, { toolsListChanged: true });
	const e3 = l3.answer(3);
	ok(isErr(e3, -32000) && /--max-listens/.test(e3.error.message) && l3.ended,
	    'a third: -32000 naming --max-listens, and no stream', l3.summary());
	l1.close();
	is(await gaugeIs(port, 'mcp_listens', 1), 1, 'the first closed: mcp_listens 1');
	const l4 = await openListen(port, 4, { toolsListChanged: true });
	ok(tagged(l4.msgs[0], 4) && !l4.ended, 'then another is taken: the limit freed up', l4.summary());
	const many = await mpost(port, listenReq('m', { resourceSubscriptions: [WATCHED, 'test://static-text',
		'test://static-binary'] })).done();
	ok(isErr(many.answer('m'), -32602) && /--max-subscriptions/.test(many.answer('m').error.message),
	    'three URIs with --max-subscriptions 2: -32602 naming it', many.summary());
	l2.close();
	l4.close();
	is(await gaugeIs(port, 'mcp_listens', 0), 0, 'all closed: mcp_listens 0');
	srv.proc.kill('SIGTERM');
	is((await srv.exited).code, 0, 'exits 0 at SIGTERM');

	// No resource subscriptions served: resources.subscribe is false, the
	// URIs are left out of the acknowledgment; --json-response: still SSE.
	srv = await startServer(['--max-subscriptions', '0', '--json-response'], FEAT);
	port = srv.port;
	const d = await mpost(port, req('d', 'server/discover')).done();
	const caps = d.answer('d')?.result?.capabilities;
	ok(caps?.resources?.subscribe === false && caps?.resources?.listChanged === true &&
	    caps?.tools?.listChanged === true && caps?.prompts?.listChanged === true,
	'--max-subscriptions 0: server/discover says resources.subscribe false, listChanged true', show(caps));
	const l = await openListen(port, 'j', { resourcesListChanged: true, resourceSubscriptions: [WATCHED] });
	ok(l.sse && l.status === 200, '--json-response: a listen is still an SSE stream', l.summary());
	is(l.msgs[0]?.params?.notifications, { resourcesListChanged: true },
	    'the acknowledgment leaves resourceSubscriptions out (not supported)');
	await fire(port, { what: 'updated', uri: WATCHED });
	await fire(port, { what: 'resources' });
	await l.until(() => l.msgs.length > 1, 3000);
	await sleep(200);
	ok(l.msgs.length === 2 && l.msgs[1].method === 'notifications/resources/list_changed' && tagged(l.msgs[1], 'j'),
	    'it hears resources list_changed and no resources/updated', show(l.msgs));
	srv.proc.kill('SIGTERM');
	await l.done(5000);
	ok(l.answer('j')?.result?.resultType === 'complete', 'SIGTERM: its complete answer', show(l.msgs));
	is((await srv.exited).code, 0, 'exits 0');
}

// A listen's stream has no session, so nothing can resume it: what its
// reader took is not kept (the event log of --event-log, 256 KiB a
// stream, is for sessions). 40 listens, each sent 80 updates of a 4 KB
// URI (some 330 KB), read at once: the server's memory barely grows.
async function httpMemory() {
	tap.label = 'http memory: ';
	const srv = await startServer(['--metrics'], FEAT);
	const port = srv.port;
	const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${srv.proc.pid}/status`, 'utf8'))[1]);
	const uri = `test://template/${'u'.repeat(4000)}/data`;
	const ls = [];
	for (let i = 0; i < 40; i++)
		ls.push(await openListen(port, `m${i}`, { resourceSubscriptions: [uri] }));
	ok(ls.every((x, i) => tagged(x.msgs[0], `m${i}`)), '40 listens of a 4 KB URI acknowledged',
	    show(ls[0].msgs));
	await fire(port, { what: 'updated', uri });
	await Promise.all(ls.map((x) => x.until(() => x.msgs.length > 1, 3000)));
	const before = rss();
	for (let i = 0; i < 80; i++)
		await fire(port, { what: 'updated', uri });
	await Promise.all(ls.map((x) => x.until(() => x.msgs.length >= 82, 5000)));
	ok(ls.every((x) => x.msgs.length === 82 && x.msgs.slice(1).every((m) =>
	    m.method === 'notifications/resources/updated' && m.params.uri === uri)),
	'each listen read its 81 updates', show(ls.map((x) => x.msgs.length)));
	const grew = rss() - before;
	if (process.env.MCP_SANITIZE)
		skip('RSS under ASan (its quarantine keeps what is freed)');
	else
		ok(grew < 4096, `the server's RSS grew by ${grew} KB (under 4 MB; keeping what was read: over 10 MB)`);
	srv.proc.kill('SIGTERM');
	await Promise.all(ls.map((x) => x.done(5000)));
	ok(ls.every((x, i) => x.answer(`m${i}`)?.result?.resultType === 'complete'),
	    'SIGTERM: each answered complete');
	is((await srv.exited).code, 0, 'exits 0');
}

// ---- stdio ------------------------------------------------------------------

class Stdio {
	constructor(prog, args = []) {
		this.proc = spawn(prog, ['--stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
		this.msgs = [];
		this.stderr = '';
		this.waiters = [];
		this.exited = new Promise((r) => this.proc.on('exit', (code, signal) => r({ code, signal })));
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
			for (const w of this.waiters.splice(0))
				w();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.proc.stdin.on('error', () => {});
	}

	send(m) {
		this.proc.stdin.write(JSON.stringify(m) + '\n');
	}

	async until(cond, ms = 5000) {
		const end = Date.now() + ms;
		while (!cond() && Date.now() < end)
			await new Promise((r) => { this.waiters.push(r); setTimeout(r, 50); });
		return cond();
	}

	async ask(m, ms) {
		this.send(m);
		await this.until(() => this.answer(m.id), ms);
		return this.answer(m.id);
	}

	answer(id) {
		return this.msgs.find((x) => JSON.stringify(x.id) === JSON.stringify(id) && (x.result || x.error));
	}

	of(id) {
		return this.msgs.filter((m) => tagged(m, id) || (m.result && m.result._meta &&
		    JSON.stringify(m.result._meta[SUB]) === JSON.stringify(id)));
	}
}

async function stdioListen() {
	tap.label = 'stdio: ';
	const s = new Stdio(FEAT);
	s.send(listenReq('a', { toolsListChanged: true, resourceSubscriptions: [WATCHED] }));
	s.send(listenReq(9, { resourcesListChanged: true }));
	await s.until(() => s.of('a').length > 0 && s.of(9).length > 0);
	const aa = s.of('a')[0], a9 = s.of(9)[0];
	ok(aa?.method === 'notifications/subscriptions/acknowledged' && aa.id === undefined,
	    'listen a: acknowledged first, tagged a', show(s.msgs));
	is(aa?.params?.notifications, { toolsListChanged: true, resourceSubscriptions: [WATCHED] },
	    'listen a: the filter acknowledged');
	ok(a9?.method === 'notifications/subscriptions/acknowledged', 'listen 9: acknowledged, tagged 9', show(s.msgs));
	ok(!s.answer('a') && !s.answer(9), 'no answer while they are open');

	await s.ask(notify('n1', { what: 'tools' }));
	await s.ask(notify('n2', { what: 'resources' }));
	await s.ask(notify('n3', { what: 'updated', uri: WATCHED }));
	await s.ask(notify('n4', { what: 'updated', uri: 'test://static-text' }));
	await s.ask(notify('n5', { what: 'prompts' }));
	await s.ask(notify('n6', { what: 'log', text: 'x' }));
	await sleep(300);
	is(s.of('a').slice(1).map((m) => [m.method, m.params.uri]),
	    [['notifications/tools/list_changed', undefined], ['notifications/resources/updated', WATCHED]],
	    'listen a: tools list_changed and resources/updated of its URI, tagged a, nothing else');
	is(s.of(9).slice(1).map((m) => m.method), ['notifications/resources/list_changed'],
	    'listen 9: resources list_changed only, tagged 9');
	ok(!s.msgs.some((m) => m.method && m.method !== 'notifications/subscriptions/acknowledged' &&
	    !tagged(m, 'a') && !tagged(m, 9)), 'no untagged notification (no session initialized: no legacy ones)',
	show(s.msgs.filter((m) => m.method)));

	const dup = await s.ask(listenReq('a', { toolsListChanged: true }));
	ok(isErr(dup, -32600), 'a listen reusing the id of an open one: -32600', show(dup));
	const badp = await s.ask(listenReq('b', { promptsListChanged: 1 }));
	ok(isErr(badp, -32602), 'a bad filter: -32602', show(badp));

	// Cancelled: nothing more for it, not even an answer.
	s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'done' } });
	const at = Date.now();
	await s.ask(notify('n7', { what: 'tools' }));
	await s.ask(notify('n8', { what: 'updated', uri: WATCHED }));
	await s.ask(notify('n9', { what: 'resources' }));
	await sleep(300);
	ok(!s.msgs.some((m) => m.at >= at && (tagged(m, 'a') || (m.id === 'a' && m.result))),
	    'after notifications/cancelled for a: nothing for it', show(s.msgs.filter((m) => m.at >= at)));
	ok(s.of(9).length === 3, 'listen 9 goes on (its second resources list_changed)', show(s.of(9)));

	// 64 per stdio connection: 9 and 63 more, then one too many.
	for (let i = 0; i < 63; i++)
		s.send(listenReq(`x${i}`, { toolsListChanged: true }));
	await s.until(() => s.of('x62').length > 0);
	ok(Array.from({ length: 63 }, (_, i) => s.of(`x${i}`).length === 1).every(Boolean), '64 listens open');
	let over = await s.ask(listenReq('over', { toolsListChanged: true }));
	ok(isErr(over, -32000) && /this connection/.test(over.error.message), 'the 65th: -32000, the connection\'s limit',
	    show(over));
	s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x0' } });
	s.send(listenReq('again', { toolsListChanged: true }));
	await s.until(() => s.of('again').length > 0 || s.answer('again'), 3000);
	ok(s.of('again')[0]?.method === 'notifications/subscriptions/acknowledged' && !s.answer('again'),
	    'one cancelled: the next is acknowledged', show(s.answer('again')));

	// SIGTERM: every open listen answered complete; exits 0 at once.
	const t0 = Date.now();
	s.proc.kill('SIGTERM');
	const exit = await s.exited;
	const open = [9, 'again', ...Array.from({ length: 62 }, (_, i) => `x${i + 1}`)];
	const fins = open.map((id) => s.answer(id));
	ok(fins.every((m, i) => m && m.result && m.result.resultType === 'complete' &&
	    JSON.stringify(m.result._meta?.[SUB]) === JSON.stringify(open[i])),
	'SIGTERM: each of the 64 open listens answered {resultType:"complete"} with its subscriptionId',
	show(fins.filter((m) => !m?.result)));
	ok(!s.msgs.some((m) => (m.id === 'a' || m.id === 'x0') && m.result),
	    'the cancelled ones get no answer (the only one with id a: the duplicate\'s -32600)',
	    show(s.msgs.filter((m) => m.id === 'a' || m.id === 'x0')));
	ok(exit.code === 0 && Date.now() - t0 < 3000, `exits 0, in ${Date.now() - t0} ms`, show(exit), s.stderr.slice(-400));
}

// stdin closed: the listens end with their answers too, and the process
// exits.
async function stdioEof() {
	tap.label = 'stdio eof: ';
	const s = new Stdio(FEAT);
	s.send(listenReq('e', { promptsListChanged: true }));
	await s.until(() => s.of('e').length > 0);
	s.proc.stdin.end();
	const exit = await s.exited;
	ok(s.answer('e')?.result?.resultType === 'complete', 'stdin closed: the listen answered complete',
	    show(s.msgs));
	is(exit.code, 0, 'exits 0');
}

// The client stops reading (its end of stdout closed) while 64 listens
// are open, and a notification for all of them comes: some 130 KB, so
// the write happens amid the sends, fails (EPIPE), and the drain ends
// every listen under the walk that is sending. The process exits 0.
async function stdioGone() {
	tap.label = 'stdio gone: ';
	const s = new Stdio(FEAT);
	const uri = `test://template/${'u'.repeat(2000)}/data`;
	for (let i = 0; i < 64; i++)
		s.send(listenReq(`g${i}`, { resourceSubscriptions: [uri] }));
	await s.until(() => s.of('g63').length > 0);
	ok(Array.from({ length: 64 }, (_, i) => s.of(`g${i}`).length === 1).every(Boolean),
	    '64 listens of a 2 KB URI acknowledged');
	s.proc.stdout.destroy();
	await sleep(100);
	s.send(notify('n', { what: 'updated', uri }));
	const t = setTimeout(() => s.proc.kill('SIGKILL'), 10000);
	const exit = await s.exited;
	clearTimeout(t);
	ok(exit.code === 0 && exit.signal === null, 'a notification to them all on a broken pipe: exits 0',
	    show(exit), s.stderr.slice(-600));
}

const groups = { httpListen, httpLimits, httpMemory, stdioListen, stdioEof, stdioGone };
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
