// tasks.mjs: the 2025-11-25 Tasks utility (task-augmented tools/call,
// tasks/get, tasks/result, tasks/list, tasks/cancel,
// notifications/tasks/status, execution.taskSupport), against
// build/task-server (test/task-server.c), with the official TypeScript
// SDK client (its experimental tasks API) on stdio AND on Streamable
// HTTP, and raw JSON-RPC for what the SDK will not send: a 2025-06-18
// session, and an HTTP client that drops its tasks/result stream and
// comes back for the answer on a new POST. Groups:
//
//   basic    capability, execution in tools/list, create, get, list
//            (paginated: --page-size 2), result after completion, a loop
//            tool's task, the status notification
//   wait     tasks/result before the task ends waits for it
//   cancel   tasks/cancel mid-call (the callback sees it), then
//            tasks/result and tasks/cancel of the cancelled task; a
//            cancel of a completed task is -32602
//   rules    forbidden + task and required + plain: -32601; required as a
//            task works; unknown taskId: -32602; failed tasks (isError,
//            a JSON-RPC error) and their results
//   ttl      a short ttl expires (-32602 afterwards); a long one is
//            clamped to --task-ttl
//   limits   --max-tasks and --max-task-bytes
//   timeout  --tool-timeout ends a task's call: the task fails
//   legacy   a 2025-06-18 session: no tasks capability, no execution,
//            params.task ignored
//   drop     (http) tasks/result's stream cut by the client; the answer
//            fetched on a new POST
//   term     (http) SIGTERM with a task running: the drain waits for it
//
// At the end every server gets SIGTERM and must exit 0 (under the
// sanitizers, a leak would make it fail).
//
// Prints TAP; exits 1 if an assertion failed. TASK_SERVER names another
// binary (the sanitizer build); MCP_TIME_SCALE stretches the time bounds.
//
//   node test/tasks.mjs [stdio|http] [group...]

import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diag, errText, globalTimeout, is, ok, sleep, tap, textOf, within } from './node/harness.mjs';
import {
	RawStdio, closeSdk, end, httpServerFor, openSdk, sdk, show, startHttp,
} from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TASK = path.resolve(process.env.TASK_SERVER ??
    path.join(HERE, '..', process.env.MCP_BUILD ?? 'build', 'task-server'));
const SCALE = Number(process.env.MCP_TIME_SCALE ?? 1) || 1;
const T = ms => ms * SCALE;

const want = process.argv.slice(2);
const ALL_KINDS = ['stdio', 'http'];
const KINDS = ALL_KINDS.filter(k => !want.some(a => ALL_KINDS.includes(a)) || want.includes(k));
const ALL_GROUPS = ['basic', 'wait', 'cancel', 'rules', 'ttl', 'limits', 'timeout', 'legacy', 'drop',
    'term'];
const GROUPS = ALL_GROUPS.filter(g => !want.some(a => ALL_GROUPS.includes(a)) || want.includes(g));

const {
	CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema, ListTasksResultSchema,
	CancelTaskResultSchema,
} = sdk.types;
const RELATED = 'io.modelcontextprotocol/related-task';
const ARGS = ['--task-ttl', '20000', '--page-size', '2'];

tap.show = show;
const globalTimer = globalTimeout(T(90000), end, '');

const servers = new Map();
const conns = [];

async function open(kind, args = ARGS) {
	const conn = await openSdk({
		kind, server: TASK, args, tag: `${kind} ${args.join(' ')}`,
		httpServer: a => httpServerFor(servers, TASK, a),
		clientInfo: { name: 'tasks-test', version: '1.0.0' },
	});
	if (conn.connectError)
		throw new Error(`connect: ${errText(conn.connectError)}`);
	conns.push(conn);
	return conn;
}

// The outcome of P: {value} or {error}.
async function outcome(p) {
	try {
		return { value: await p };
	} catch (error) {
		return { error };
	}
}

// A task-augmented tools/call of NAME: the CreateTaskResult's task.
async function createTask(conn, name, args = {}, task = {}) {
	const r = await conn.client.request({ method: 'tools/call',
	    params: { name, arguments: args, task } }, CreateTaskResultSchema);
	return r.task;
}

const tasks = c => c.client.experimental.tasks;

// Polls tasks/get until the task is terminal (or LIMIT ms pass).
async function settled(conn, id, limit = T(5000)) {
	const t0 = Date.now();
	let t;
	do {
		t = await tasks(conn).getTask(id);
		if (['completed', 'failed', 'cancelled'].includes(t.status))
			return t;
		await sleep(30);
	} while (Date.now() - t0 < limit);
	return t;
}

const resultOf = (conn, id) => conn.client.request({ method: 'tasks/result',
    params: { taskId: id } }, CallToolResultSchema);

// ---- groups -----------------------------------------------------------------------

async function basic(kind) {
	const conn = await open(kind);
	const caps = conn.client.getServerCapabilities();
	is(caps?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } },
	    'the tasks capability is declared');
	const tools = [];
	let tc;
	do {
		const page = await conn.client.listTools(tc ? { cursor: tc } : undefined);
		tools.push(...page.tools);
		tc = page.nextCursor;
	} while (tc !== undefined && tools.length < 100);
	const by = Object.fromEntries(tools.map(t => [t.name, t.execution]));
	is([by.slow, by.must, by.plain], [{ taskSupport: 'optional' },
	    { taskSupport: 'required' }, undefined],
	    'tools/list: execution.taskSupport optional, required, absent for forbidden');
	const t0 = Date.now();
	const task = await createTask(conn, 'slow', { ms: 300 }, { ttl: 10000 });
	ok(Date.now() - t0 < T(250), 'the CreateTaskResult comes at once, before the tool ends',
	    `${Date.now() - t0} ms`);
	ok(/^[0-9a-f]{32}$/.test(task.taskId), 'the task id is 128 bits in hex', task.taskId);
	is([task.status, task.ttl, typeof task.createdAt, typeof task.lastUpdatedAt],
	    ['working', 10000, 'string', 'string'], 'the new task: working, its ttl, its times');
	ok(!Number.isNaN(Date.parse(task.createdAt)), 'createdAt is an ISO 8601 time', task.createdAt);
	const got = await tasks(conn).getTask(task.taskId);
	is([got.taskId, got.status], [task.taskId, 'working'], 'tasks/get while it runs: working');
	const more = [await createTask(conn, 'quick'), await createTask(conn, 'quick')];
	const seen = [];
	let cursor, pages = 0;
	do {
		const page = await tasks(conn).listTasks(cursor);
		seen.push(...page.tasks.map(t => t.taskId));
		cursor = page.nextCursor;
		pages++;
	} while (cursor !== undefined && pages < 10);
	is([pages, seen.sort()], [2, [task.taskId, ...more.map(t => t.taskId)].sort()],
	    'tasks/list: every task, over two pages of two (--page-size 2)');
	const bad = await outcome(tasks(conn).listTasks('nonsense'));
	is(bad.error?.code, -32602, 'tasks/list with a cursor never given: -32602', bad);
	const done = await settled(conn, task.taskId);
	is(done.status, 'completed', 'tasks/get after the tool ended: completed', done);
	const r = await resultOf(conn, task.taskId);
	is([textOf(r), r._meta?.[RELATED]], ['slept 300', { taskId: task.taskId }],
	    'tasks/result: the tool\'s result, with the related-task _meta');
	const q = await resultOf(conn, more[0].taskId);
	is(textOf(q), 'quick', 'a loop tool (MCP_TOOL_LOOP) runs as a task too');
	if (kind === 'stdio') {
		const notes = conn.received.filter(e => e.msg.method === 'notifications/tasks/status' &&
		    e.msg.params?.taskId === task.taskId).map(e => e.msg.params.status);
		is(notes, ['completed'], 'notifications/tasks/status when the task completed');
	}
}

async function wait(kind) {
	const conn = await open(kind);
	const task = await createTask(conn, 'slow', { ms: 700 });
	const t0 = Date.now();
	const r = await resultOf(conn, task.taskId);
	const took = Date.now() - t0;
	ok(took >= 500, 'tasks/result before the end waits for the task', `${took} ms`);
	is(textOf(r), 'slept 700', 'and then answers with its result');
	const again = await resultOf(conn, task.taskId);
	is(textOf(again), 'slept 700', 'tasks/result can be asked again');
	// The SDK's own flow: create, poll tasks/get (pollInterval), fetch.
	const kinds = [];
	let last;
	for await (const m of tasks(conn).callToolStream({ name: 'slow', arguments: { ms: 100 } },
	    CallToolResultSchema, { task: { ttl: 5000 } })) {
		kinds.push(m.type);
		last = m;
	}
	ok(kinds[0] === 'taskCreated' && kinds.at(-1) === 'result' && textOf(last.result) === 'slept 100',
	    'the SDK\'s callToolStream: taskCreated, then the result', kinds, last);
}

async function cancel(kind) {
	const conn = await open(kind);
	const before = Number(textOf(await conn.client.callTool({ name: 'stopped' })));
	const task = await createTask(conn, 'slow', { ms: 20000 });
	await sleep(100);
	const waiting = outcome(resultOf(conn, task.taskId));
	const c = await conn.client.request({ method: 'tasks/cancel',
	    params: { taskId: task.taskId } }, CancelTaskResultSchema);
	is([c.taskId, c.status], [task.taskId, 'cancelled'], 'tasks/cancel mid-call: cancelled');
	const w = await waiting;
	ok(w.error !== undefined, 'a tasks/result waiting for it is answered with an error', w);
	let after = before;
	for (let i = 0; i < 50 && after === before; i++) {
		await sleep(20);
		after = Number(textOf(await conn.client.callTool({ name: 'stopped' })));
	}
	is(after, before + 1, 'the callback saw its call cancelled (mcp_call_cancelled)');
	is((await tasks(conn).getTask(task.taskId)).status, 'cancelled',
	    'tasks/get: still cancelled after the callback returned');
	const again = await outcome(tasks(conn).cancelTask(task.taskId));
	is(again.error?.code, -32602, 'tasks/cancel of a cancelled task: -32602', again);
	const done = await createTask(conn, 'quick');
	await settled(conn, done.taskId);
	const late = await outcome(tasks(conn).cancelTask(done.taskId));
	is(late.error?.code, -32602, 'tasks/cancel of a completed task: -32602', late);
	ok(/completed/.test(late.error?.message ?? ''), 'and the error says it completed', late);
}

async function rules(kind) {
	const conn = await open(kind);
	const plainTask = await outcome(createTask(conn, 'plain'));
	is(plainTask.error?.code, -32601, 'a forbidden tool called as a task: -32601', plainTask);
	const mustPlain = await outcome(conn.client.callTool({ name: 'must' }));
	is(mustPlain.error?.code, -32601, 'a required tool called plainly: -32601', mustPlain);
	const mustTask = await createTask(conn, 'must');
	is(textOf(await resultOf(conn, mustTask.taskId)), 'must ok', 'a required tool as a task runs');
	is(textOf(await conn.client.callTool({ name: 'slow', arguments: { ms: 1 } })), 'slept 1',
	    'an optional tool called plainly runs as ever');
	for (const m of ['get', 'result', 'cancel']) {
		const r = await outcome(conn.client.request({ method: `tasks/${m}`,
		    params: { taskId: '0123456789abcdef0123456789abcdef' } }, GetTaskResultSchema));
		is(r.error?.code, -32602, `tasks/${m} of an unknown taskId: -32602`, r);
	}
	const noId = await outcome(conn.client.request({ method: 'tasks/get', params: {} },
	    GetTaskResultSchema));
	is(noId.error?.code, -32602, 'tasks/get without a taskId: -32602', noId);
	const f = await createTask(conn, 'fails');
	const fr = await resultOf(conn, f.taskId);
	is([(await tasks(conn).getTask(f.taskId)).status, fr.isError, textOf(fr)],
	    ['failed', true, 'it failed'], 'a tool error: the task failed, its result has isError');
	const e = await createTask(conn, 'rpcfail');
	const er = await outcome(resultOf(conn, e.taskId));
	is([er.error?.code, (await tasks(conn).getTask(e.taskId)).status], [-32050, 'failed'],
	    'a JSON-RPC error: tasks/result gives that error, the task failed', er);
}

async function ttl(kind) {
	const conn = await open(kind);
	const short = await createTask(conn, 'quick', {}, { ttl: 300 });
	is(short.ttl, 300, 'a short ttl is kept as asked');
	await settled(conn, short.taskId);
	await sleep(T(600));
	const gone = await outcome(tasks(conn).getTask(short.taskId));
	is(gone.error?.code, -32602, 'after its ttl the task is gone: -32602', gone);
	const res = await outcome(resultOf(conn, short.taskId));
	is(res.error?.code, -32602, 'and so is its result', res);
	const long = await createTask(conn, 'quick', {}, { ttl: 99999999 });
	is(long.ttl, 20000, 'a longer ttl is clamped to --task-ttl');
	const none = await createTask(conn, 'quick');
	is(none.ttl, 20000, 'no ttl asked: --task-ttl');
	// The ttl runs from the task's end: one that runs past it is
	// answered, then kept for its ttl.
	const longer = await createTask(conn, 'slow', { ms: 800 }, { ttl: 300 });
	const l = await outcome(resultOf(conn, longer.taskId));
	is(l.value?.content?.[0]?.text, 'slept 800', 'a task that runs past its ttl is answered (the ttl runs from ' +
	    'its end)', l);
	const kept = await outcome(tasks(conn).getTask(longer.taskId));
	is(kept.value?.status, 'completed', 'and kept once it has ended', kept);
	await sleep(T(600));
	const later = await outcome(tasks(conn).getTask(longer.taskId));
	is(later.error?.code, -32602, 'then forgotten, its ttl after its end', later);
	// --task-ttl bounds a task that is still working.
	const hard = await open(kind, ['--task-ttl', '300']);
	const waiter = await createTask(hard, 'slow', { ms: 3000 });
	const w = await outcome(resultOf(hard, waiter.taskId));
	ok(w.error?.code === -32602 && /expired/.test(w.error.message),
	    'a task still working after --task-ttl expires; its tasks/result waiter: -32602, expired', w);
	const zero = await createTask(conn, 'quick', {}, { ttl: 0 });
	is(zero.ttl, 20000, 'ttl 0 (no preference): --task-ttl');
}

async function limits(kind) {
	const conn = await open(kind, ['--max-tasks', '3', '--max-task-bytes', '4000']);
	const big = await createTask(conn, 'big', { n: 10000 });
	const br = await outcome(resultOf(conn, big.taskId));
	ok(br.error?.code === -32603 && /--max-task-bytes/.test(br.error.message),
	    'a result past --max-task-bytes: the task fails with -32603, saying why', br);
	const small = await createTask(conn, 'big', { n: 100 });
	is(textOf(await resultOf(conn, small.taskId)).length, 100, 'a small result is kept');
	const slow = await createTask(conn, 'slow', { ms: 10000 });
	const over = await outcome(createTask(conn, 'quick'));
	ok(over.error?.code === -32000 && /--max-tasks/.test(over.error.message),
	    'a task past --max-tasks: -32000, saying why', over);
	await tasks(conn).cancelTask(slow.taskId);
	is(textOf(await conn.client.callTool({ name: 'plain' })), 'plain ok',
	    'plain calls go on at the limit');
	// One session cannot take every task the server keeps.
	const SARGS = ['--max-session-tasks', '2'];
	const one = await open(kind, SARGS);
	await createTask(one, 'quick');
	await createTask(one, 'quick');
	const third = await outcome(createTask(one, 'quick'));
	ok(third.error?.code === -32000 && /--max-session-tasks/.test(third.error.message),
	    'a session past --max-session-tasks: -32000, saying why', third);
	if (kind !== 'stdio') {
		const other = await open(kind, SARGS);
		const t = await outcome(createTask(other, 'quick'));
		ok(typeof t.value?.taskId === 'string', 'another session of the same server still gets its task', t);
	}
}

// ---- raw JSON-RPC: legacy sessions, dropped streams -----------------------------

const INIT = v => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {
	protocolVersion: v, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

// One POST to URL: {status, headers, msgs} (the JSON-RPC messages of its
// body, JSON or SSE); ONREQ gets the request (to cut it).
function rawPost(url, body, headers = {}, onreq) {
	return new Promise(resolve => {
		const u = new URL(url);
		const data = JSON.stringify(body);
		const req = http.request({ host: u.hostname, port: u.port, path: u.pathname,
		    method: 'POST', agent: false, headers: { 'content-type': 'application/json',
		    accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(data),
		    ...headers } }, res => {
			let b = '';
			res.setEncoding('utf8');
			res.on('data', d => { b += d; });
			res.on('end', () => {
				const msgs = [];
				const texts = /event-stream/.test(res.headers['content-type'] ?? '') ?
				    b.split('\n').filter(l => l.startsWith('data:')).map(l => l.slice(5)) :
				    b.trim() ? [b] : [];
				for (const t of texts)
					try { msgs.push(JSON.parse(t)); } catch { /* a priming event */ }
				resolve({ status: res.statusCode, headers: res.headers, msgs });
			});
			res.on('error', e => resolve({ error: e.message }));
		});
		req.on('error', e => resolve({ error: e.message }));
		onreq?.(req);
		req.end(data);
	});
}

// A raw Streamable HTTP session at BASE speaking VERSION: post(msg).
async function rawHttp(base, version) {
	const url = base + '/mcp';
	const init = await rawPost(url, INIT(version));
	const sid = init.headers?.['mcp-session-id'];
	const h = { 'mcp-protocol-version': version, ...(sid ? { 'mcp-session-id': sid } : {}) };
	await rawPost(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
	let id = 1;
	return {
		init: init.msgs?.find(m => m.id === 0),
		post: (method, params, onreq) => {
			const my = ++id;
			return rawPost(url, { jsonrpc: '2.0', id: my, method, params }, h, onreq)
			    .then(r => ({ ...r, id: my, msg: r.msgs?.find(m => m.id === my) }));
		},
		// A request with the id ID, used before.
		postAs: (my, method, params) => rawPost(url, { jsonrpc: '2.0', id: my, method, params }, h)
		    .then(r => ({ ...r, msg: r.msgs?.find(m => m.id === my) })),
	};
}

// A raw stdio session speaking VERSION: ask(method, params) -> message.
async function rawStdio(version) {
	const raw = new RawStdio(TASK, ARGS, `raw stdio ${version}`);
	conns.push({ raw });
	const init = (await raw.init(version))?.msg;
	return { init, raw, ask: async (m, p) => (await raw.request(m, p))?.msg };
}

async function legacy(kind) {
	let init, ask;
	if (kind === 'stdio') {
		({ init, ask } = await rawStdio('2025-06-18'));
	} else {
		const srv = await httpServerFor(servers, TASK, ARGS);
		const s = await rawHttp(srv.base, '2025-06-18');
		init = s.init;
		ask = async (m, p) => (await s.post(m, p)).msg;
	}
	is(init?.result?.protocolVersion, '2025-06-18', 'legacy: 2025-06-18 negotiated', init);
	ok(init?.result?.capabilities && !('tasks' in init.result.capabilities),
	    'legacy: no tasks capability', init);
	const tools = [];
	let list, cursor;
	do {
		list = await ask('tools/list', cursor ? { cursor } : {});
		tools.push(...(list?.result?.tools ?? []));
		cursor = list?.result?.nextCursor;
	} while (cursor !== undefined && tools.length < 100);
	ok(tools.length === 9 && tools.every(t => !('execution' in t)),
	    'legacy: no execution in tools/list (all 9 tools)', tools);
	const must = await ask('tools/call', { name: 'must' });
	is(must?.result?.content?.[0]?.text, 'must ok', 'legacy: a required tool runs plainly', must);
	const slow = await ask('tools/call', { name: 'slow', arguments: { ms: 5 }, task: {} });
	ok(slow?.result?.content?.[0]?.text === 'slept 5' && !('task' in slow.result),
	    'legacy: params.task is ignored, the call answered as ever', slow);
	const get = await ask('tasks/list', {});
	is(get?.error?.code, -32601, 'legacy: tasks/list is no method', get);
	if (kind === 'stdio') {
		// The key spelt with an escape is the key.
		const { ask: ask2 } = await rawStdio('2025-11-25');
		const esc = await ask2('tools/call', JSON.parse('{"name":"slow","arguments":{"ms":5},' +
		    '"\\u0074ask":{}}'));
		ok(typeof esc?.result?.task?.taskId === 'string', '"\\u0074ask" asks for a task as "task" does', esc);
		// A task's notes say which task they belong to.
		const { ask: ask3, raw } = await rawStdio('2025-11-25');
		const made = await ask3('tools/call', { name: 'slow', arguments: { ms: 300 }, task: {},
			_meta: { progressToken: 'tp' } });
		const tid = made?.result?.task?.taskId;
		await raw.until(() => raw.progress('"tp"').length > 0, 3000);
		const note = raw.progress('"tp"')[0]?.msg;
		ok(typeof tid === 'string' && note?.params?._meta?.[RELATED]?.taskId === tid &&
		    note.params.progressToken === 'tp', 'a task\'s progress carries _meta related-task with its id', note);
		return;
	}
	// A stateless 2025-11-25 session has no tasks capability: no
	// execution either (a client would refuse a "required" tool).
	const st = await httpServerFor(servers, TASK, [...ARGS, '--stateless']);
	const ss = await rawHttp(st.base, '2025-11-25');
	ok(ss.init?.result && !('tasks' in ss.init.result.capabilities), 'stateless 2025-11-25: no tasks capability',
	    ss.init);
	const sl = (await ss.post('tools/list', {})).msg;
	ok(Array.isArray(sl?.result?.tools) && sl.result.tools.length > 0 &&
	    sl.result.tools.every(t => !('execution' in t)), 'stateless 2025-11-25: no execution in tools/list', sl);
}

async function drop(kind) {
	if (kind !== 'http')
		return;
	const srv = await httpServerFor(servers, TASK, ARGS);
	const s = await rawHttp(srv.base, '2025-11-25');
	const c = await s.post('tools/call', { name: 'slow', arguments: { ms: 1500 }, task: {} });
	const id = c.msg?.result?.task?.taskId;
	ok(typeof id === 'string', 'raw HTTP: the CreateTaskResult', c);
	const reuse = await s.postAs(c.id, 'ping', {});
	is(reuse.msg?.result, {}, 'the tools/call\'s id is free again once answered', reuse);
	// tasks/result on a stream the client cuts after 200 ms, as a client
	// with a short timeout would.
	let cut;
	const first = await s.post('tasks/result', { taskId: id }, req => {
		cut = setTimeout(() => req.destroy(), 200);
	});
	clearTimeout(cut);
	ok(first.msg === undefined, 'the first tasks/result was cut before its answer', first);
	const mid = await s.post('tasks/get', { taskId: id });
	is(mid.msg?.result?.status, 'working', 'the task runs on after the cut', mid);
	const again = await s.post('tasks/result', { taskId: id });
	is([again.msg?.result?.content?.[0]?.text, again.msg?.result?._meta?.[RELATED]?.taskId],
	    ['slept 1500', id], 'a new POST of tasks/result gets the answer', again);
}

// The tool's time limit binds a task's call as a plain one.
async function timeout(kind) {
	const conn = await open(kind, ['--tool-timeout', '300']);
	const before = Number(textOf(await conn.client.callTool({ name: 'stopped' })));
	const task = await createTask(conn, 'slow', { ms: 5000 });
	const t0 = Date.now();
	const r = await resultOf(conn, task.taskId);
	const took = Date.now() - t0;
	ok(took < T(2500) && r.isError === true && /timed out/.test(textOf(r)),
	    'past --tool-timeout: the task\'s result is the timeout\'s isError', r, `${took} ms`);
	is((await tasks(conn).getTask(task.taskId)).status, 'failed', 'and the task failed');
	let after = before;
	for (let i = 0; i < 50 && after === before; i++) {
		await sleep(20);
		after = Number(textOf(await conn.client.callTool({ name: 'stopped' })));
	}
	is(after, before + 1, 'the callback was told to stop');
}

// SIGTERM with a task's call running: the drain waits for it, as for a
// plain call, and the server exits 0 (a sanitizer build: no leak).
async function term(kind) {
	if (kind !== 'http')
		return;
	const srv = await startHttp(TASK, ARGS, 'http term');
	const s = await rawHttp(srv.base, '2025-11-25');
	const c = await s.post('tools/call', { name: 'slow', arguments: { ms: 800 }, task: {} });
	ok(typeof c.msg?.result?.task?.taskId === 'string', 'a task is running', c);
	const t0 = Date.now();
	srv.p.child.kill('SIGTERM');
	const exit = await within(srv.p.exited, T(5000));
	const took = Date.now() - t0;
	is(exit, { code: 0, signal: null }, 'SIGTERM: the server exits 0');
	ok(took >= 500, 'after the task\'s call has finished (the drain waits for it)',
	    `${took} ms`);
}

const GROUP_FNS = { basic, wait, cancel, rules, ttl, limits, timeout, legacy, drop, term };

for (const kind of KINDS)
	for (const g of GROUPS) {
		tap.label = `${kind} ${g}: `;
		const t0 = Date.now();
		try {
			await GROUP_FNS[g](kind);
		} catch (e) {
			ok(false, 'completes', e.stack || String(e));
		}
		if (process.env.TASKS_TIMES)
			diag(`${kind} ${g}: ${Date.now() - t0} ms`);
	}
tap.label = '';
for (const c of conns)
	if (c.client)
		await closeSdk(c);
	else
		await c.raw.close();
for (const c of conns) {
	const p = c.p ?? c.raw?.p;
	if (p !== undefined)
		is(await within(p.exited, T(5000)), { code: 0, signal: null },
		    `${p.child.spawnargs.slice(1).join(' ')}: exits 0`);
}
for (const [args, started] of servers) {
	const { p } = await started;
	p.child.kill('SIGTERM');
	is(await within(p.exited, T(5000)), { code: 0, signal: null },
	    `http ${args}: exits 0 on SIGTERM`);
}
clearTimeout(globalTimer);
end();
