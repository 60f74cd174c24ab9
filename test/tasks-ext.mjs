// tasks-ext.mjs: the Tasks extension io.modelcontextprotocol/tasks of
// protocol 2026-07-28 against build/task-server (test/task-server.c), on
// stdio and Streamable HTTP: server/discover declares it; a tools/call
// whose clientCapabilities.extensions declare it runs a tool that may be
// a task as one (CreateTaskResult: the Task itself, resultType "task"),
// one without runs plainly, and a tool that must be a task is -32021 for
// it (400 over HTTP); tasks/get polls (the result or the error inline
// once it ended; isError is completed, a JSON-RPC error failed);
// tasks/update acknowledges inputResponses; a task's request to the
// client fails at once; tasks/cancel stops the call;
// no tasks/list nor tasks/result; unknown ids -32602; tasks/* from a
// client that does not declare the extension -32021; Mcp-Name carries
// the taskId over HTTP; a task outlives the POST that made it, and only
// its subject sees it (TASK_AUTH: token "user-NAME"); --max-session-tasks
// per subject; SIGTERM waits for a running task. test/tasks.sh covers
// 2025-11-25, which is unchanged. Prints TAP; exits 1 when an assertion
// fails. Node 20, no npm packages; run from the repository root
// (test/tasks-ext.sh does).
import { spawn } from 'node:child_process';
import { done, ok, is, show, tap } from './node/harness.mjs';
import { killAll, post, Server } from './node/http-client.mjs';

const PROG = process.env.TASK_SERVER || 'build/task-server';
const SCALE = Number(process.env.MCP_TIME_SCALE || 1);
const V = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const META = (ext) => ({
	'io.modelcontextprotocol/protocolVersion': V,
	'io.modelcontextprotocol/clientCapabilities': ext ? { extensions: { [EXT]: {} } } : {},
	'io.modelcontextprotocol/clientInfo': { name: 'tasks-ext-test', version: '1.0.0' },
});
const req = (id, method, params = {}, ext = true) =>
	({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META(ext) } });
const call = (id, name, args = {}, ext = true) => req(id, 'tools/call', { name, arguments: args }, ext);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isErr = (m, code) => m && m.error && m.error.code === code && typeof m.error.message === 'string';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const text = (r) => r && Array.isArray(r.content) && r.content[0] && r.content[0].text;

// The fields of a Task as the extension has them.
function taskShape(r, where) {
	ok(r && /^[0-9a-f]{32}$/.test(r.taskId) && typeof r.status === 'string' && ISO.test(r.createdAt) &&
	    ISO.test(r.lastUpdatedAt) && Number.isInteger(r.ttlMs) && Number.isInteger(r.pollIntervalMs) &&
	    r.ttl === undefined && r.pollInterval === undefined && r.task === undefined,
	`${where}: a Task (taskId, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs), not the 2025-11-25 shape`,
	show(r));
}

class Stdio {
	constructor(args = []) {
		this.proc = spawn(PROG, ['--stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
		this.msgs = [];
		this.waiters = [];
		this.stderr = '';
		this.exited = new Promise((r) => this.proc.on('exit', (code, signal) => r({ code, signal })));
		let rest = '';
		this.proc.stdout.setEncoding('utf8');
		this.proc.stdout.on('data', (d) => {
			rest += d;
			let i;
			while ((i = rest.indexOf('\n')) >= 0) {
				const line = rest.slice(0, i);
				rest = rest.slice(i + 1);
				try { this.msgs.push(JSON.parse(line)); } catch { this.msgs.push({ unparsable: line }); }
			}
			for (const w of this.waiters.splice(0))
				w();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.proc.stdin.on('error', () => {});
	}

	async ask(m, ms = 5000 * SCALE) {
		this.proc.stdin.write(JSON.stringify(m) + '\n');
		const end = Date.now() + ms;
		for (;;) {
			const a = this.msgs.find((x) => JSON.stringify(x.id) === JSON.stringify(m.id) &&
			    (x.result || x.error));
			if (a || Date.now() > end)
				return a;
			await new Promise((r) => { this.waiters.push(r); setTimeout(r, 50); });
		}
	}
}

let seq = 0;

// Polls tasks/get through ASK until the task is terminal; the last answer.
async function settle(ask, taskId, ms = 8000 * SCALE) {
	const end = Date.now() + ms;
	let m;
	do {
		m = await ask(req(`g${seq++}`, 'tasks/get', { taskId }));
		if (!m?.result || ['completed', 'failed', 'cancelled'].includes(m.result.status))
			return m;
		await sleep(50);
	} while (Date.now() < end);
	return m;
}

async function stdioTasks() {
	tap.label = 'stdio: ';
	const s = new Stdio();
	const ask = (m) => s.ask(m);
	const d = await ask(req('d', 'server/discover', {}, false));
	is(d?.result?.capabilities?.extensions, { [EXT]: {} }, 'server/discover: capabilities.extensions names ' + EXT);

	let m = await ask(call('c1', 'slow', { ms: 300 }));
	const r = m?.result;
	ok(r && r.resultType === 'task' && r.status === 'working' &&
	    r._meta?.['io.modelcontextprotocol/serverInfo']?.name === 'task-test',
	'tools/call of an optional tool, the extension declared: resultType "task", working, serverInfo', show(m));
	taskShape(r, 'CreateTaskResult');
	const id = r?.taskId;
	m = await ask(req('g0', 'tasks/get', { taskId: id }));
	ok(m?.result?.resultType === 'complete' && m.result.taskId === id && m.result.status === 'working' &&
	    m.result.result === undefined, 'tasks/get while it works: resultType complete, working, no result', show(m));
	taskShape(m?.result, 'tasks/get');
	m = await settle(ask, id);
	ok(m?.result?.status === 'completed' && text(m.result.result) === 'slept 300',
	    'polled to its end: completed, with the tool\'s result inline', show(m));
	ok(Date.parse(m?.result?.lastUpdatedAt) >= Date.parse(m?.result?.createdAt), 'lastUpdatedAt >= createdAt');

	m = await ask(call('p1', 'slow', { ms: 10 }, false));
	ok(m?.result?.resultType === 'complete' && text(m.result) === 'slept 10',
	    'the same tool without the extension: runs plainly', show(m));
	m = await ask({ ...call('p2', 'slow', { ms: 10 }, false), params: { ...call('p2', 'slow', { ms: 10 }, false)
		.params, task: { ttl: 1000 } } });
	ok(m?.result?.resultType === 'complete' && text(m.result) === 'slept 10',
	    'a 2025-11-25 params.task without the extension: ignored, runs plainly', show(m));
	m = await ask(call('p3', 'plain', {}));
	ok(m?.result?.resultType === 'complete' && text(m.result) === 'plain ok',
	    'a tool that may not be a task, the extension declared: runs plainly', show(m));
	m = await ask(call('r1', 'must', {}, false));
	ok(isErr(m, -32021) && is_ext(m.error.data), 'a required tool without the extension: -32021, ' +
	    'data.requiredCapabilities.extensions names it', show(m));
	m = await ask(call('r2', 'must', {}));
	ok(m?.result?.resultType === 'task', 'a required tool with it: a task', show(m));
	m = await settle(ask, m?.result?.taskId);
	ok(m?.result?.status === 'completed' && text(m.result.result) === 'must ok', '... completed: "must ok"', show(m));

	m = await ask(call('f1', 'fails', {}));
	m = await settle(ask, m?.result?.taskId);
	ok(m?.result?.status === 'completed' && m.result.result?.isError === true && m.result.error === undefined,
	    'a tool error (isError): completed, the result with isError inline', show(m));
	m = await ask(call('f2', 'rpcfail', {}));
	m = await settle(ask, m?.result?.taskId);
	ok(m?.result?.status === 'failed' && m.result.error?.code === -32050 && m.result.result === undefined,
	    'a JSON-RPC error: failed, the error inline', show(m));
	m = await ask(call('q1', 'quick', {}));
	const qid = m?.result?.taskId;
	ok(m?.result?.resultType === 'task', 'a loop tool: a task too', show(m));
	m = await settle(ask, qid);
	ok(m?.result?.status === 'completed' && text(m.result.result) === 'quick', '... completed', show(m));

	// A task's callback that asks the client (elicitation declared):
	// the task is input_required, with its request in tasks/get; an
	// answer through tasks/update runs the callback again with it.
	const elicit = (id, ext) => {
		const q = call(id, 'asks', {}, ext);
		q.params._meta['io.modelcontextprotocol/clientCapabilities'] = ext ?
			{ elicitation: {}, extensions: { [EXT]: {} } } : { elicitation: {} };
		return q;
	};
	m = await ask(elicit('el1', true));
	const eid = m?.result?.taskId;
	ok(m?.result?.resultType === 'task', 'a tool that elicits, the extension declared: a task', show(m));
	for (let i = 0; i < 100 && m?.result?.status !== 'input_required'; i++) {
		await sleep(20);
		m = await ask(req(`eg${i}`, 'tasks/get', { taskId: eid }));
	}
	ok(m?.result?.status === 'input_required' && m.result.inputRequests?.['input-1']?.method ===
	    'elicitation/create' && m.result.result === undefined,
	    '... input_required, its elicitation in inputRequests', show(m));
	m = await ask(req('eu1', 'tasks/update', { taskId: eid, inputResponses: { elsewhere: { action: 'accept' } } }));
	m = await ask(req('eg-a', 'tasks/get', { taskId: eid }));
	ok(m?.result?.status === 'input_required', '... an answer to a key never asked changes nothing', show(m));
	m = await ask(req('eu2', 'tasks/update', { taskId: eid, inputResponses: {
		'input-1': { action: 'accept', content: { name: 'Cy' } } } }));
	ok(m?.result?.resultType === 'complete' && Object.keys(m.result).sort().join() === '_meta,resultType',
	    '... tasks/update with its answer: an empty result', show(m));
	m = await settle(ask, eid);
	ok(m?.result?.status === 'completed' && text(m.result.result) === 'hello Cy',
	    '... the callback ran again with it: completed (hello Cy)', show(m));
	m = await ask(elicit('el2', false));
	ok(m?.result?.resultType === 'input_required' && m.result.inputRequests?.['input-1']?.method ===
	    'elicitation/create', 'the same tool run plainly: input_required, as before', show(m));

	// tasks/update: acknowledged (nothing is outstanding), checked.
	m = await ask(req('u1', 'tasks/update', { taskId: qid, inputResponses: { nope: { action: 'accept' } } }));
	ok(m?.result?.resultType === 'complete' && Object.keys(m.result).sort().join() === '_meta,resultType',
	    'tasks/update with inputResponses: an empty result (resultType complete)', show(m));
	m = await ask(req('u2', 'tasks/update', { taskId: qid }));
	ok(isErr(m, -32602), 'tasks/update without inputResponses: -32602', show(m));
	m = await ask(req('u3', 'tasks/update', { taskId: '0'.repeat(32), inputResponses: {} }));
	ok(isErr(m, -32602), 'tasks/update of an unknown task: -32602', show(m));

	// tasks/cancel: the call stops.
	m = await ask(call('k1', 'slow', { ms: 5000 }));
	const kid = m?.result?.taskId;
	await sleep(100);
	m = await ask(req('k2', 'tasks/cancel', { taskId: kid }));
	ok(m?.result?.resultType === 'complete' && m.result.status === undefined,
	    'tasks/cancel: an empty result', show(m));
	m = await settle(ask, kid, 2000 * SCALE);
	ok(m?.result?.status === 'cancelled' && m.result.result === undefined, 'then tasks/get: cancelled', show(m));
	await sleep(200 * SCALE);
	m = await ask(call('k3', 'stopped', {}));
	ok(Number(text(m?.result)) >= 1, 'the slow call saw its cancellation', show(m));
	m = await ask(req('k4', 'tasks/cancel', { taskId: qid }));
	const still = await ask(req('k5', 'tasks/get', { taskId: qid }));
	ok(m?.result?.resultType === 'complete' && still?.result?.status === 'completed',
	    'tasks/cancel of a completed task: acknowledged, and it stays completed', show(m), show(still));

	for (const [i, [method, p]] of [['tasks/get', { taskId: 'f'.repeat(32) }], ['tasks/get', { taskId: 7 }],
		['tasks/get', {}], ['tasks/cancel', { taskId: 'nope' }]].entries()) {
		m = await ask(req(`e${i}`, method, p));
		ok(isErr(m, -32602), `${method} ${show(p)}: -32602`, show(m));
	}
	// The extension not declared on the request: -32021, whatever the id
	// (the spec's MUST for tasks/get, tasks/update and tasks/cancel).
	for (const [i, [method, p]] of [['tasks/get', { taskId: qid }], ['tasks/update', { taskId: qid,
		inputResponses: {} }], ['tasks/cancel', { taskId: qid }], ['tasks/get', { taskId: 'f'.repeat(32) }]]
		.entries()) {
		m = await ask(req(`nx${i}`, method, p, false));
		ok(isErr(m, -32021) && is_ext(m.error.data), `${method} without the extension declared: -32021 naming it`,
		    show(m));
	}
	for (const method of ['tasks/list', 'tasks/result']) {
		m = await ask(req(`x-${method}`, method, { taskId: qid }));
		ok(isErr(m, -32601), `${method}: not in the extension (-32601)`, show(m));
	}

	s.proc.stdin.end();
	is((await s.exited).code, 0, 'exits 0 when stdin closes');

	// --max-session-tasks 3: the tasks kept for one subject (anonymous
	// here), ended ones too, until their ttl.
	const s2 = new Stdio(['--max-session-tasks', '3']);
	const held = [];
	for (let i = 0; i < 3; i++)
		held.push((await s2.ask(call(`h${i}`, 'slow', { ms: i === 0 ? 10 : 3000 })))?.result?.taskId);
	await settle((q) => s2.ask(q), held[0]);
	m = await s2.ask(call('h3', 'slow', { ms: 10 }));
	ok(held.every(Boolean) && isErr(m, -32000) && /--max-session-tasks/.test(m.error.message),
	    'past --max-session-tasks (3 kept, one of them ended; a 4th asked): -32000 naming it', show(m));
	m = await s2.ask(call('h4', 'plain', {}));
	ok(text(m?.result) === 'plain ok', 'a tool that is no task still runs', show(m));
	for (const t of held.slice(1))
		await s2.ask(req(`hc${t}`, 'tasks/cancel', { taskId: t }));
	s2.proc.stdin.end();
	is((await s2.exited).code, 0, 'exits 0 when stdin closes');
}

function is_ext(data) {
	return data && data.requiredCapabilities && data.requiredCapabilities.extensions &&
	    typeof data.requiredCapabilities.extensions[EXT] === 'object';
}

// ---- HTTP --------------------------------------------------------------------

function mpost(port, body, { token, name, omitName } = {}) {
	const headers = { 'MCP-Protocol-Version': V, 'Mcp-Method': body.method };
	if (token)
		headers.Authorization = `Bearer ${token}`;
	const n = name ?? body.params.name ?? body.params.taskId;
	if (!omitName && n !== undefined)
		headers['Mcp-Name'] = n;
	return post(port, body, { headers }).done();
}

async function httpTasks() {
	tap.label = 'http: ';
	const srv = await new Server(PROG, [], {}).start();
	const port = srv.port;
	const ask = async (m) => (await mpost(port, m)).answer(m.id);
	let x = await mpost(port, call('c1', 'slow', { ms: 400 }));
	const r = x.answer('c1')?.result;
	ok(x.status === 200 && r?.resultType === 'task' && x.headers['mcp-session-id'] === undefined,
	    'a task over HTTP: 200, resultType "task", no Mcp-Session-Id', x.summary());
	taskShape(r, 'CreateTaskResult');
	x = await mpost(port, req('g1', 'tasks/get', { taskId: r?.taskId }), { omitName: true });
	ok(x.status === 400 && isErr(x.answer('g1'), -32020), 'tasks/get without Mcp-Name: 400, -32020', x.summary());
	x = await mpost(port, req('g2', 'tasks/get', { taskId: r?.taskId }), { name: 'f'.repeat(32) });
	ok(x.status === 400 && isErr(x.answer('g2'), -32020), 'tasks/get whose Mcp-Name is another id: 400, -32020',
	    x.summary());
	const m = await settle(ask, r?.taskId);
	ok(m?.result?.status === 'completed' && text(m.result.result) === 'slept 400',
	    'polled by later POSTs (Mcp-Name: the taskId): the task outlived its POST, completed', show(m));
	x = await mpost(port, req('g3', 'tasks/get', { taskId: r?.taskId }, false));
	ok(x.status === 400 && isErr(x.answer('g3'), -32021), 'tasks/get without the extension declared: 400, -32021',
	    x.summary());
	x = await mpost(port, call('r1', 'must', {}, false));
	ok(x.status === 400 && isErr(x.answer('r1'), -32021), 'a required tool without the extension: 400, -32021',
	    x.summary());

	// SIGTERM while a task runs: the drain waits for it.
	x = await mpost(port, call('t1', 'slow', { ms: 600 }));
	ok(x.answer('t1')?.result?.resultType === 'task', 'a task of 600 ms', x.summary());
	const t0 = Date.now();
	srv.proc.kill('SIGTERM');
	const exit = await srv.exited;
	ok(exit.code === 0 && Date.now() - t0 >= 300, `SIGTERM: exits 0 once the task's call ended (${Date.now() - t0} ms)`,
	    show(exit));
}

async function httpAuth() {
	tap.label = 'http auth: ';
	process.env.TASK_AUTH = '1';
	const srv = await new Server(PROG, ['--max-session-tasks', '1'], {}).start();
	delete process.env.TASK_AUTH;
	const port = srv.port;
	let x = await mpost(port, call('a1', 'slow', { ms: 800 }), { token: 'user-alice' });
	const id = x.answer('a1')?.result?.taskId;
	ok(x.status === 200 && id, 'alice makes a task', x.summary());
	x = await mpost(port, req('b1', 'tasks/get', { taskId: id }), { token: 'user-bob' });
	ok(isErr(x.answer('b1'), -32602), 'bob\'s tasks/get of it: -32602, not found', x.summary());
	x = await mpost(port, req('b2', 'tasks/cancel', { taskId: id }), { token: 'user-bob' });
	ok(isErr(x.answer('b2'), -32602), 'bob\'s tasks/cancel of it: -32602', x.summary());
	x = await mpost(port, call('b3', 'slow', { ms: 10 }), { token: 'user-bob' });
	ok(x.answer('b3')?.result?.resultType === 'task', 'bob may still make his own (--max-session-tasks 1 is per ' +
	    'subject)', x.summary());
	x = await mpost(port, call('a2', 'slow', { ms: 10 }), { token: 'user-alice' });
	ok(isErr(x.answer('a2'), -32000), 'alice\'s second while hers is kept: -32000', x.summary());
	x = await mpost(port, req('a3', 'tasks/get', { taskId: id }), { token: 'user-alice' });
	ok(x.answer('a3')?.result?.taskId === id, 'alice\'s own tasks/get: her task', x.summary());
	x = await mpost(port, req('n1', 'tasks/get', { taskId: id }));
	ok(x.status === 401, 'no token: 401', x.summary());
	srv.proc.kill('SIGTERM');
	is((await srv.exited).code, 0, 'exits 0 at SIGTERM');
}

const groups = { stdioTasks, httpTasks, httpAuth };
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
