// redis-tasks.mjs: MCP Tasks shared across mcp-demo --redis instances
// (issue 13), for test/redis-tasks.sh, which starts a redis-server, three
// instances (all with --metrics) and nginx round-robin over them. Raw
// HTTP requests, each sent to the instance named, and the official
// TypeScript SDK client (its experimental tasks API) through nginx.
// Two phases, so that the script between them can stop instances:
//
//   a   2025-11-25 (a session, Mcp-Session-Id): the tasks capability; a
//       task made on instance 1, polled (tasks/get) on 2, its result
//       waited for (tasks/result) on 3, listed (tasks/list) on 2;
//       tasks/cancel on 2 of a task running on 1: cancelled there, the
//       call on 1 stops (its worker free, its log), a tasks/result
//       waiting on 3 gets an error, tasks/get says so everywhere; a cancel of a completed task: -32602; another session
//       sees none of them (-32602); a short ttl expires everywhere and
//       its key <prefix>task:<id> goes; DELETE of a session leaves no
//       <prefix>task:<id> of its tasks nor <prefix>stasks:<sid>, even
//       after its running call ends; the SDK's callToolStream, getTask,
//       listTasks, cancelTask through nginx; 2026-07-28's extension
//       io.modelcontextprotocol/tasks: a task made on 1, polled on 2,
//       cancelled on 3 (the call on 1 stops), an unknown taskId -32602
//       on every instance. Then it leaves, for phase b, a completed task
//       of instance 1 and two tasks running on instance 3, one for 1.5 s,
//       one made just now (in STATE).
//   b   (after instance 1's SIGTERM and instance 3's kill -9) on instance
//       2: the completed task and its result are still there; the tasks
//       of the lost instance fail within a few seconds (the young one
//       too), the older one's tasks/result a -32603 error, also to one
//       waiting since the kill.
//
// Prints TAP; exits 1 if an assertion failed. MCP_TIME_SCALE stretches
// the time bounds (the sanitizer build).
//
//   node test/node/redis-tasks.mjs a|b --ports P1,P2,P3 --logs L1,L2,L3
//       --sock REDIS_SOCKET --prefix PREFIX --url NGINX_URL --state FILE
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

import { done, errText, globalTimeout, is, ok, show, sleep, tap, textOf } from './harness.mjs';
import { closeHandles, del, killAll, post } from './http-client.mjs';

const phase = process.argv[2];
const opt = {};
for (let i = 3; i + 1 < process.argv.length; i += 2)
	opt[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const PORTS = [null, ...opt.ports.split(',').map(Number)];	// PORTS[1] is instance 1
const LOGS = [null, ...opt.logs.split(',')];
const PREFIX = opt.prefix;
const SCALE = Number(process.env.MCP_TIME_SCALE || 1) || 1;
const T = (ms) => ms * SCALE;
const V = '2025-11-25';
const V26 = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const RELATED = 'io.modelcontextprotocol/related-task';
const TERMINAL = ['completed', 'failed', 'cancelled'];
const UNKNOWN = 'f'.repeat(32);

const timer = globalTimeout(T(90000), () => { killAll(); done(); process.exit(1); });

// redis-cli on the test's redis-server: its output, trimmed.
function rcli(...args) {
	try {
		return execFileSync('redis-cli', ['-s', opt.sock, ...args], { encoding: 'utf8',
		    stdio: ['ignore', 'pipe', 'pipe'] }).trim();
	} catch (e) {
		return `redis-cli failed: ${e.message}`;
	}
}

const log = (i) => {
	try {
		return readFileSync(LOGS[i], 'utf8');
	} catch {
		return '';
	}
};
const logLines = (i, ...words) => log(i).split('\n').filter((l) => words.every((w) => l.includes(w)));

// mcp_workers_busy of instance I (its --metrics), or null.
async function busy(i) {
	try {
		const r = await fetch(`http://127.0.0.1:${PORTS[i]}/metrics`);
		const m = /^mcp_workers_busy (\d+)$/m.exec(await r.text());
		return m ? Number(m[1]) : null;
	} catch {
		return null;
	}
}

// Waits until at most BUSY of instance I's workers are busy (none by
// default), LIMIT ms at most: true if so.
async function idle(i, limit = T(2000), busyMax = 0) {
	const end = Date.now() + limit;
	do {
		const b = await busy(i);
		if (b !== null && b <= busyMax)
			return true;
		await sleep(50);
	} while (Date.now() < end);
	return false;
}

// ---- 2025-11-25: a session, raw requests to the instance named ---------------

let seq = 100;

class Session {
	// Opens a session on instance I.
	static async open(i) {
		const s = new Session();
		const x = await post(PORTS[i], { jsonrpc: '2.0', id: 1, method: 'initialize', params: {
			protocolVersion: V, capabilities: {}, clientInfo: { name: 'redis-tasks', version: '1' } } })
		    .done();
		s.init = x.answer(1);
		s.sid = x.headers['mcp-session-id'];
		s.initX = x;
		const y = await post(PORTS[i], { jsonrpc: '2.0', method: 'notifications/initialized' },
		    { sid: s.sid, version: V }).done();
		s.ready = typeof s.sid === 'string' && y.status === 202;
		return s;
	}

	// METHOD with PARAMS on instance I: {x, msg} (the exchange, the answer).
	async ask(i, method, params = {}, ms = T(10000)) {
		const id = seq++;
		const x = await post(PORTS[i], { jsonrpc: '2.0', id, method, params },
		    { sid: this.sid, version: V }).done(ms);
		return { x, msg: x.answer(id), why: x.summary() };
	}

	// A task-augmented call of sleep MS on instance I: the answer's task.
	async task(i, ms, ttl = 30000) {
		const r = await this.ask(i, 'tools/call', { name: 'sleep', arguments: { ms }, task: { ttl } });
		r.task = r.msg?.result?.task;
		r.id = r.task?.taskId;
		return r;
	}

	get(i, id) { return this.ask(i, 'tasks/get', { taskId: id }); }

	// Polls tasks/get on instance I until the task is terminal (or LIMIT
	// ms pass, or an error): the last answer.
	async settled(i, id, limit = T(5000)) {
		const end = Date.now() + limit;
		let r;
		do {
			r = await this.get(i, id);
			if (!r.msg?.result || TERMINAL.includes(r.msg.result.status))
				return r;
			await sleep(50);
		} while (Date.now() < end);
		return r;
	}

	async close(i) {
		return del(PORTS[i], this.sid, { headers: { 'MCP-Protocol-Version': V } }).done();
	}
}

const errCode = (r) => r?.msg?.error?.code;
const status = (r) => r?.msg?.result?.status;

async function capability() {
	const s = await Session.open(1);
	ok(s.ready && s.init?.result?.protocolVersion === V, `a ${V} session opened on instance 1`,
	    s.initX.summary());
	is(s.init?.result?.capabilities?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } },
	    'initialize on an instance with --redis: capabilities.tasks (list, cancel, requests.tools.call)',
	    show(s.init));
	return s;
}

async function acrossInstances(s) {
	const t0 = Date.now();
	const c = await s.task(1, 1500);
	const took = Date.now() - t0;
	ok(/^[0-9a-f]{32}$/.test(c.id ?? '') && c.task.status === 'working' && took < T(1000),
	    `a task-augmented tools/call of sleep 1500 on instance 1: a CreateTaskResult at once (${took} ms)`,
	    c.why);
	const id = c.id;
	let r = await s.get(2, id);
	ok(status(r) === 'working' && r.msg.result.taskId === id, 'tasks/get on instance 2: working', r.why);
	const t1 = Date.now();
	r = await s.ask(3, 'tasks/result', { taskId: id });
	const waited = Date.now() - t1;
	ok(textOf(r.msg?.result) === 'slept 1500 ms' && r.msg.result._meta?.[RELATED]?.taskId === id,
	    'tasks/result on instance 3: the CallToolResult, with _meta related-task naming the task', r.why);
	ok(waited >= 700, `... after waiting for the task to end (${waited} ms)`);
	r = await s.get(2, id);
	ok(status(r) === 'completed', 'tasks/get on instance 2 after: completed', r.why);
	r = await s.get(3, id);
	ok(status(r) === 'completed', 'tasks/get on instance 3: completed too', r.why);
	const second = await s.task(2, 10);
	r = await s.settled(1, second.id ?? UNKNOWN);
	ok(status(r) === 'completed', 'a task made on instance 2, polled to its end on instance 1: completed', r.why);
	r = await s.ask(2, 'tasks/list');
	const listed = (r.msg?.result?.tasks ?? []).map((t) => t.taskId).sort();
	is(listed, [id, second.id].sort(), 'tasks/list on instance 2: the session\'s two tasks', r.why);
	r = await s.ask(1, 'tasks/list');
	is((r.msg?.result?.tasks ?? []).map((t) => t.taskId).sort(), [id, second.id].sort(),
	    'tasks/list on instance 1: the same two', r.why);
	return id;
}

async function cancelAcross(s, completed) {
	const b0 = await busy(1);
	const c = await s.task(1, 60000);
	const id = c.id ?? UNKNOWN;
	await sleep(T(200));
	const b = await busy(1);
	ok(b === b0 + 1, `a task sleeping 60 s on instance 1 holds one of its workers (mcp_workers_busy ${b0}, ` +
	    `then ${b})`);
	// A tasks/result waiting for it on instance 3 meanwhile.
	const waiter = s.ask(3, 'tasks/result', { taskId: id }).then((w) => ({ ...w, at: Date.now() }));
	await sleep(T(100));
	const t0 = Date.now();
	let r = await s.ask(2, 'tasks/cancel', { taskId: id });
	ok(r.msg?.result?.taskId === id && status(r) === 'cancelled',
	    'tasks/cancel on instance 2 of a task running on instance 1: the Task, cancelled', r.why);
	const w = await waiter;
	ok(w.msg?.error !== undefined && w.msg.error.code !== -32601 && w.at - t0 < T(2000),
	    `a tasks/result waiting for it on instance 3: answered with an error (${w.at - t0} ms after the ` +
	    'cancel)', w.why);
	const free = await idle(1, T(2000), b0);
	ok(free, `the sleep on instance 1 stopped: its worker is free (${Date.now() - t0} ms)`);
	const lines = logLines(1, id).filter((l) => /cancel/i.test(l));
	ok(lines.length > 0, 'instance 1 logged the task\'s call cancelled', logLines(1, id).join('\n'));
	ok(!logLines(1, id).some((l) => l.includes('outcome=ok')), 'and it did not finish it', log(1).slice(-800));
	for (const i of [1, 2, 3]) {
		r = await s.get(i, id);
		ok(status(r) === 'cancelled', `tasks/get on instance ${i}: cancelled`, r.why);
	}
	r = await s.ask(3, 'tasks/result', { taskId: id });
	ok(r.msg?.error !== undefined && r.msg.error.code !== -32601 && /cancel/i.test(r.msg.error.message),
	    'tasks/result on instance 3 of the cancelled task: an error saying it was cancelled', r.why);
	r = await s.ask(3, 'tasks/cancel', { taskId: id });
	is(errCode(r), -32602, 'tasks/cancel again on instance 3: -32602', r.why);
	r = await s.ask(2, 'tasks/cancel', { taskId: completed });
	is(errCode(r), -32602, 'tasks/cancel on instance 2 of the task completed on instance 1: -32602', r.why);
	r = await s.ask(1, 'tasks/cancel', { taskId: completed });
	is(errCode(r), -32602, 'the same on instance 1: -32602', r.why);
	r = await s.get(3, completed);
	ok(status(r) === 'completed', 'and it stays completed', r.why);
	return id;
}

async function otherSession(ids) {
	const o = await Session.open(3);
	ok(o.ready && o.sid !== undefined, 'another session opened on instance 3', o.initX.summary());
	for (const i of [1, 2, 3]) {
		const r = await o.get(i, ids[0]);
		is(errCode(r), -32602, `the other session's tasks/get of the first session's task on instance ${i}: ` +
		    '-32602', r.why);
	}
	let r = await o.ask(1, 'tasks/result', { taskId: ids[0] });
	is(errCode(r), -32602, 'its tasks/result of it on instance 1: -32602', r.why);
	r = await o.ask(2, 'tasks/cancel', { taskId: ids[0] });
	is(errCode(r), -32602, 'its tasks/cancel of it on instance 2: -32602', r.why);
	r = await o.ask(2, 'tasks/list');
	ok(Array.isArray(r.msg?.result?.tasks) && !r.msg.result.tasks.some((t) => ids.includes(t.taskId)),
	    'its tasks/list on instance 2: none of the first session\'s tasks', r.why);
	await o.close(3);
}

async function shortTtl(s) {
	const c = await s.task(1, 100, 1500);
	const id = c.id ?? UNKNOWN;
	ok(c.task?.ttl === 1500, 'a task with ttl 1500 ms on instance 1: its ttl kept', c.why);
	let r = await s.settled(2, id);
	const t0 = Date.now();
	ok(status(r) === 'completed', 'polled on instance 2: completed', r.why);
	const key = `${PREFIX}task:${id}`;
	const pttl = Number(rcli('pttl', key));
	ok(pttl > 0 && pttl <= 1500 + 1000, `its key ${PREFIX}task:<id> is in Redis, with a TTL (${pttl} ms)`);
	await sleep(Math.max(0, 1500 + T(700) - (Date.now() - t0)));
	r = await s.get(3, id);
	is(errCode(r), -32602, 'after its ttl: tasks/get on instance 3: -32602', r.why);
	r = await s.get(1, id);
	is(errCode(r), -32602, '... and on instance 1, which ran it: -32602', r.why);
	r = await s.ask(2, 'tasks/result', { taskId: id });
	is(errCode(r), -32602, '... tasks/result on instance 2: -32602', r.why);
	is(rcli('exists', key), '0', `its key ${PREFIX}task:<id> is gone`);
}

async function deleted() {
	const d = await Session.open(2);
	const a = await d.task(2, 10);
	await d.settled(2, a.id ?? UNKNOWN);
	const b = await d.task(1, T(1500));
	const ids = [a.id, b.id];
	await sleep(T(100));
	const before = ids.map((id) => rcli('exists', `${PREFIX}task:${id}`)).join();
	const sk = rcli('exists', `${PREFIX}stasks:${d.sid}`);
	ok(ids.every(Boolean) && before === '1,1' && sk === '1',
	    `a session on instance 2 with a completed task and one running on instance 1: ${PREFIX}task:<id> of ` +
	    `each and ${PREFIX}stasks:<sid> in Redis (${before}; ${sk})`);
	const x = await d.close(3);
	ok(x.status === 200 || x.status === 204, `DELETE of the session on instance 3 (${x.status})`, x.summary());
	const left = () => {
		const out = rcli('--scan', '--pattern', `${PREFIX}*`);
		if (out.startsWith('redis-cli failed'))
			return [out];
		return out.split('\n').filter((k) => ids.some((id) => k === `${PREFIX}task:${id}`) || k.includes(d.sid));
	};
	await sleep(T(300));
	let l = left();
	ok(l.length === 0, `after it, no ${PREFIX}task:<id> of its tasks nor ${PREFIX}stasks:<sid> (SCAN)`, show(l));
	await sleep(T(1700));
	l = left();
	ok(l.length === 0, '... nor once the call that was running would have ended', show(l));
	ok(await idle(1), 'instance 1 is idle again');
	const r = await (await Session.open(1)).get(1, b.id ?? UNKNOWN);
	is(errCode(r), -32602, 'another session\'s tasks/get of it: -32602', r.why);
}

// ---- the SDK through nginx ---------------------------------------------------

async function sdkClient() {
	const client = new Client({ name: 'redis-tasks-sdk', version: '1.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(opt.url));
	try {
		await client.connect(transport);
	} catch (e) {
		ok(false, 'SDK: connect through nginx', errText(e));
		return;
	}
	const tasks = client.experimental.tasks;
	is(client.getServerCapabilities()?.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } },
	    'SDK: connected through nginx; the server declares tasks');
	const made = [];
	for (let round = 1; round <= 2; round++) {
		const kinds = [];
		let last, err;
		try {
			for await (const m of tasks.callToolStream({ name: 'sleep', arguments: { ms: 2200 } },
			    CallToolResultSchema, { task: { ttl: 30000 } })) {
				kinds.push(m.type);
				if (m.type === 'taskCreated')
					made.push(m.task.taskId);
				last = m;
			}
		} catch (e) {
			err = errText(e);
		}
		ok(kinds[0] === 'taskCreated' && kinds.at(-1) === 'result' &&
		    textOf(last?.result) === 'slept 2200 ms',
		    `SDK round ${round}: callToolStream of sleep 2200 as a task: created, polled, its result ` +
		    `(${kinds.join(' ')})`, err, show(last));
	}
	try {
		const got = await tasks.getTask(made[0]);
		ok(got.status === 'completed', 'SDK: getTask of the first: completed', show(got));
		const list = await tasks.listTasks();
		const ids = list.tasks.map((t) => t.taskId);
		ok(made.length === 2 && made.every((id) => ids.includes(id)), 'SDK: listTasks has both', show(list));
		const c = await client.request({ method: 'tools/call', params: { name: 'sleep',
		    arguments: { ms: 60000 }, task: { ttl: 30000 } } }, CreateTaskResultSchema);
		await sleep(T(200));
		const cancelled = await tasks.cancelTask(c.task.taskId);
		ok(cancelled.status === 'cancelled', 'SDK: cancelTask of a running task: cancelled', show(cancelled));
		const after = await tasks.getTask(c.task.taskId);
		ok(after.status === 'cancelled', 'SDK: getTask then: cancelled', show(after));
	} catch (e) {
		ok(false, 'SDK: getTask, listTasks, cancelTask', errText(e));
	}
	let free = true;
	for (const i of [1, 2, 3])
		free = await idle(i) && free;
	ok(free, 'no worker of any instance still busy (the cancelled sleep stopped where it ran)');
	try {
		await transport.terminateSession();
		ok(true, 'SDK: terminateSession');
	} catch (e) {
		ok(false, 'SDK: terminateSession', errText(e));
	}
	await client.close();
}

// ---- 2026-07-28: the extension, stateless requests ------------------------------

const META = {
	'io.modelcontextprotocol/protocolVersion': V26,
	'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [EXT]: {} } },
	'io.modelcontextprotocol/clientInfo': { name: 'redis-tasks-ext', version: '1.0.0' },
};

// METHOD with PARAMS on instance I (of PORTS, or of the conformance
// servers' CPORTS with phase c), the extension declared: {x, msg}.
async function ext(i, method, params, ports = PORTS) {
	const id = `e${seq++}`;
	const headers = { 'MCP-Protocol-Version': V26, 'Mcp-Method': method };
	const name = params.name ?? params.taskId;
	if (name !== undefined)
		headers['Mcp-Name'] = name;
	const x = await post(ports[i], { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } },
	    { headers }).done(T(10000));
	return { x, msg: x.answer(id), why: x.summary() };
}

// tasks/get of ID on instance I until its status is one of WANT.
async function extSettled(i, id, limit = T(5000), ports = PORTS, want = TERMINAL) {
	const end = Date.now() + limit;
	let r;
	do {
		r = await ext(i, 'tasks/get', { taskId: id }, ports);
		if (!r.msg?.result || want.includes(r.msg.result.status))
			return r;
		await sleep(50);
	} while (Date.now() < end);
	return r;
}

async function extension() {
	let r = await ext(1, 'tools/call', { name: 'sleep', arguments: { ms: 800 } });
	const id = r.msg?.result?.taskId;
	ok(r.msg?.result?.resultType === 'task' && /^[0-9a-f]{32}$/.test(id ?? '') &&
	    r.msg.result.status === 'working' && r.x.headers['mcp-session-id'] === undefined,
	    `${V26}: tools/call of sleep 800 on instance 1, the extension declared: a task (resultType "task")`,
	    r.why);
	r = await ext(2, 'tasks/get', { taskId: id ?? UNKNOWN });
	ok(r.msg?.result?.taskId === id && r.msg.result.status === 'working' && r.msg.result.result === undefined,
	    `${V26}: tasks/get on instance 2: working, no result yet`, r.why);
	r = await extSettled(2, id ?? UNKNOWN);
	ok(r.msg?.result?.status === 'completed' && textOf(r.msg.result.result) === 'slept 800 ms',
	    `${V26}: polled on instance 2: completed, the result inline`, r.why);
	r = await ext(3, 'tasks/get', { taskId: id ?? UNKNOWN });
	ok(r.msg?.result?.status === 'completed' && textOf(r.msg.result.result) === 'slept 800 ms',
	    `${V26}: tasks/get on instance 3: the same`, r.why);

	const b0 = await busy(1);
	r = await ext(1, 'tools/call', { name: 'sleep', arguments: { ms: 60000 } });
	const k = r.msg?.result?.taskId ?? UNKNOWN;
	await sleep(T(200));
	const b = await busy(1);
	ok(r.msg?.result?.resultType === 'task' && b === b0 + 1,
	    `${V26}: a task sleeping 60 s on instance 1 (mcp_workers_busy ${b0}, then ${b})`, r.why);
	const t0 = Date.now();
	r = await ext(3, 'tasks/cancel', { taskId: k });
	ok(r.msg?.result !== undefined && r.msg.error === undefined,
	    `${V26}: tasks/cancel on instance 3: acknowledged`, r.why);
	r = await extSettled(2, k, T(3000));
	ok(r.msg?.result?.status === 'cancelled' && r.msg.result.result === undefined,
	    `${V26}: tasks/get on instance 2: cancelled`, r.why);
	r = await ext(1, 'tasks/get', { taskId: k });
	ok(r.msg?.result?.status === 'cancelled', `${V26}: tasks/get on instance 1: cancelled`, r.why);
	ok(await idle(1, T(2000), b0),
	    `${V26}: the sleep on instance 1 stopped: its worker is free (${Date.now() - t0} ms)`);
	ok(logLines(1, k).some((l) => /cancel/i.test(l)), `${V26}: instance 1 logged the call cancelled`,
	    logLines(1, k).join('\n'));

	for (const i of [1, 2, 3]) {
		r = await ext(i, 'tasks/get', { taskId: UNKNOWN });
		is(r.msg?.error?.code, -32602, `${V26}: tasks/get of a taskId that does not exist on instance ${i}: ` +
		    '-32602', r.why);
	}
	r = await ext(2, 'tasks/cancel', { taskId: UNKNOWN });
	is(r.msg?.error?.code, -32602, `${V26}: tasks/cancel of it on instance 2: -32602`, r.why);
}

// ---- phase a: for b, a completed task of instance 1, two running on 3 --------

// The first of those two runs for 1.5 s before the kill, the second for
// a moment only: its instance is lost before it has said much of it.
async function leave() {
	const s = await Session.open(1);
	const w = await s.task(3, 60000, 60000);
	const t0 = Date.now();
	const c = await s.task(1, 300, 60000);
	const r = await s.settled(1, c.id ?? UNKNOWN);
	ok(status(r) === 'completed', 'for later: a task of 300 ms completed on instance 1', r.why);
	await sleep(Math.max(0, 1500 - (Date.now() - t0)));
	const y = await s.task(3, 60000, 60000);
	const g = [await s.get(2, w.id ?? UNKNOWN), await s.get(2, y.id ?? UNKNOWN)];
	ok(g.every((x) => status(x) === 'working'), 'for later: two tasks of 60 s running on instance 3, one ' +
	    `made ${Date.now() - t0} ms ago, one just now (working, says instance 2)`, g[0].why, g[1].why);
	ok(await busy(1) === 0, 'instance 1 runs nothing (its SIGTERM drains nothing)');
	writeFileSync(opt.state, JSON.stringify({ sid: s.sid, done: c.id, lost: w.id, young: y.id }));
}

// Polls tasks/get of ID on instance 2 until it is no longer working, or
// the time after the kill passes LIMIT: [answer, ms since the kill].
async function whenLost(s, id, t0, limit = T(8000)) {
	let r;
	do {
		r = await s.get(2, id);
		if (status(r) !== 'working')
			break;
		await sleep(100);
	} while (Date.now() - t0 < limit);
	return [r, Date.now() - t0];
}

async function phaseB() {
	const st = JSON.parse(readFileSync(opt.state, 'utf8'));
	const s = Object.assign(new Session(), { sid: st.sid });
	let r = await s.get(2, st.done);
	ok(status(r) === 'completed', 'instance 1 stopped (SIGTERM): tasks/get on instance 2 of its completed ' +
	    'task: completed', r.why);
	r = await s.ask(2, 'tasks/result', { taskId: st.done });
	ok(textOf(r.msg?.result) === 'slept 300 ms' && r.msg.result._meta?.[RELATED]?.taskId === st.done,
	    '... tasks/result on instance 2: its result, from Redis', r.why);
	const t0 = Number(opt.killed || Date.now());
	// A tasks/result waiting for the lost instance's task meanwhile.
	const waiter = s.ask(2, 'tasks/result', { taskId: st.lost }, T(15000))
	    .then((w) => ({ ...w, at: Date.now() - t0 }));
	let took;
	[r, took] = await whenLost(s, st.lost, t0);
	ok(status(r) === 'failed' && took < T(8000),
	    `instance 3 killed (-9) with the task running: tasks/get on instance 2 says failed (${took} ms after)`,
	    r.why);
	ok(/lost|instance/i.test(r.msg?.result?.statusMessage ?? ''),
	    `... its statusMessage names the lost instance (${r.msg?.result?.statusMessage})`, r.why);
	r = await s.ask(2, 'tasks/result', { taskId: st.lost });
	is(errCode(r), -32603, '... its tasks/result on instance 2: a JSON-RPC error -32603', r.why);
	const w = await waiter;
	ok(errCode(w) === -32603 && w.at < took + T(2000),
	    `... and a tasks/result that waited for it since the kill: -32603 too (at ${w.at} ms)`, w.why);
	[r, took] = await whenLost(s, st.young, t0);
	ok(status(r) === 'failed' && took < T(8000),
	    `the task made on instance 3 just before the kill: failed too (${took} ms after)`, r.why);
	r = await s.ask(2, 'tasks/list');
	const ids = (r.msg?.result?.tasks ?? []).map((t) => t.taskId).sort();
	is(ids, [st.done, st.lost, st.young].sort(), 'tasks/list on instance 2: all three still', r.why);
	const x = await s.close(2);
	ok(x.status === 200 || x.status === 204, `DELETE of that session on instance 2 (${x.status})`, x.summary());
}

// ---- phase c: a task that asks the client, across instances -----------------

// Two conformance-server instances (CONFORMANCE_TASKS=1, one state key):
// its confirm_delete and multi_input ask from inside their task, its
// test_tool_with_task asks first (MCP_TOOL_INPUT_FIRST).
async function inputAcross() {
	const C = [null, ...opt.cports.split(',').map(Number)];
	const c = (i, m, p) => ext(i, m, p, C);
	let r = await c(1, 'tools/call', { name: 'confirm_delete', arguments: {} });
	const id = r.msg?.result?.taskId ?? UNKNOWN;
	ok(r.msg?.result?.resultType === 'task', `${V26}: confirm_delete on conformance-server 1: a task`, r.why);
	r = await extSettled(2, id, T(5000), C, ['input_required', ...TERMINAL]);
	const asked = r.msg?.result?.inputRequests ?? {};
	const keys = Object.keys(asked);
	ok(r.msg?.result?.status === 'input_required' && keys.length === 1 &&
	    asked[keys[0]]?.method === 'elicitation/create',
	    `${V26}: tasks/get on 2: input_required, its elicitation/create in inputRequests (${keys})`, r.why);
	r = await c(2, 'tasks/update', { taskId: id, inputResponses: {
		[keys[0] ?? 'x']: { action: 'accept', content: { confirm: true } } } });
	ok(r.msg?.result?.resultType === 'complete' && !('status' in (r.msg?.result ?? { status: 1 })),
	    `${V26}: tasks/update on 2 with its answer: acknowledged`, r.why);
	r = await extSettled(1, id, T(5000), C);
	ok(r.msg?.result?.status === 'completed' && textOf(r.msg.result.result) === 'Delete: action=accept',
	    `${V26}: the task ran again on 1 with the answer: completed (${textOf(r.msg?.result?.result)})`, r.why);

	r = await c(1, 'tools/call', { name: 'multi_input', arguments: {} });
	const m = r.msg?.result?.taskId ?? UNKNOWN;
	r = await extSettled(2, m, T(5000), C, ['input_required', ...TERMINAL]);
	const two = Object.keys(r.msg?.result?.inputRequests ?? {});
	ok(r.msg?.result?.status === 'input_required' && two.length === 2,
	    `${V26}: multi_input: two requests open, seen on 2 (${two})`, r.why);
	const answer = (n) => ({ action: 'accept', content: { name: n } });
	r = await c(2, 'tasks/update', { taskId: m, inputResponses: { [two[0] ?? 'x']: answer('partial-1'),
		unasked: answer('ignored') } });
	ok(r.msg?.result?.resultType === 'complete', `${V26}: tasks/update on 2 with one answer (and a key ` +
	    'never asked): acknowledged', r.why);
	r = await c(1, 'tasks/get', { taskId: m });
	is(Object.keys(r.msg?.result?.inputRequests ?? {}), two.slice(1),
	    `${V26}: tasks/get on 1: still input_required, only the other request open`, r.why);
	r = await c(1, 'tasks/update', { taskId: m, inputResponses: { [two[1] ?? 'y']: answer('partial-2') } });
	r = await extSettled(2, m, T(5000), C);
	ok(r.msg?.result?.status === 'completed' && textOf(r.msg.result.result) === 'Got partial-1 and partial-2',
	    `${V26}: the second answered on 1: completed, seen on 2 (${textOf(r.msg?.result?.result)})`, r.why);

	// A second round asks under the first round's key: the answer
	// relayed through 2 is the first round's, not the second's.
	r = await c(1, 'tools/call', { name: 'confirm_twice', arguments: {} });
	const tw = r.msg?.result?.taskId ?? UNKNOWN;
	r = await extSettled(2, tw, T(5000), C, ['input_required', ...TERMINAL]);
	const sure = (v) => ({ action: 'accept', content: { confirm: v } });
	r = await c(2, 'tasks/update', { taskId: tw, inputResponses: { sure: sure('no') } });
	ok(r.msg?.result?.resultType === 'complete', `${V26}: confirm_twice: "no" on 2, acknowledged`, r.why);
	await sleep(T(3000));	/* time for a stale answer to be re-sent */
	r = await c(1, 'tasks/get', { taskId: tw });
	ok(r.msg?.result?.status === 'input_required' &&
	    r.msg.result.inputRequests?.sure?.params?.message === 'Really sure?',
	    `${V26}: confirm_twice on 1: asks again under the same key, not answered by the first "no"`, r.why);
	r = await c(2, 'tasks/update', { taskId: tw, inputResponses: { sure: sure('yes') } });
	r = await extSettled(1, tw, T(5000), C);
	is(textOf(r.msg?.result?.result), 'confirm=yes (asked twice)',
	    `${V26}: confirm_twice, answered again on 2: completed`, r.why);

	r = await c(1, 'tools/call', { name: 'test_tool_with_task', arguments: {} });
	const first = r.msg?.result;
	ok(first?.resultType === 'input_required' && first.taskId === undefined &&
	    first.inputRequests?.user_name !== undefined && typeof first.requestState === 'string',
	    `${V26}: test_tool_with_task (MCP_TOOL_INPUT_FIRST) on 1: input_required first, no task`, r.why);
	r = await c(2, 'tools/call', { name: 'test_tool_with_task', arguments: {},
		requestState: first?.requestState, inputResponses: { user_name: answer('Ada') } });
	const late = r.msg?.result?.taskId ?? UNKNOWN;
	ok(r.msg?.result?.resultType === 'task', `${V26}: its retry on 2, answered: a task`, r.why);
	r = await extSettled(1, late, T(5000), C);
	ok(r.msg?.result?.status === 'completed' && textOf(r.msg.result.result) === 'Hello from the task, Ada!',
	    `${V26}: polled on 1: completed (${textOf(r.msg?.result?.result)})`, r.why);
}

try {
	if (phase === 'c') {
		await inputAcross();
	} else if (phase === 'a') {
		const s = await capability();
		const done1 = await acrossInstances(s);
		const cancelled = await cancelAcross(s, done1);
		await otherSession([done1, cancelled]);
		await shortTtl(s);
		await s.close(2);
		await deleted();
		await sdkClient();
		await extension();
		await leave();
	} else {
		await phaseB();
	}
} catch (e) {
	ok(false, `phase ${phase} ran to its end`, e.stack || String(e));
}
clearTimeout(timer);
closeHandles();
tap.label = '';
done();
process.exit();
