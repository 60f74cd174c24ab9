// mrtr.mjs: multi round-trip requests of protocol 2026-07-28. A callback
// that asks the client (mcp_call_sample, _elicit, _roots) makes its call
// answer input_required (resultType, inputRequests with method and
// params, requestState, serverInfo _meta); the retry with inputResponses
// and the requestState runs it again and gets the complete result that
// uses the answers, over as many rounds as it asks. On stdio (JSON lines
// to a child process) and Streamable HTTP (stateless POSTs with fetch),
// against build/mrtr-server, build/feat-server (its plain sample, elicit
// and roots tools, unchanged) and build/conformance-server (test_sampling,
// test_elicitation); several instances sharing --state-key-file take
// each other's retries. Tampered, truncated, garbage, misbound, huge and
// expired states are refused with -32602, as is another principal's
// state (MRTR_AUTH); a deferred call asks from its own thread; a call
// run as a task (the tasks extension) asks through its task (tasks/update);
// /metrics counts what was sent; and a legacy session still gets real
// requests from the server. Prints TAP; exits 1 when an
// assertion fails. Node 20, built-in modules only; run from the
// repository root (test/mrtr.sh does).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { done, is, ok, show, tap } from './node/harness.mjs';
import { CONF, FEAT, killAll, startServer } from './node/http-client.mjs';

const MRTR = process.env.MRTR_SERVER || 'build/mrtr-server';
const V = '2026-07-28';
const SERVER = 'io.modelcontextprotocol/serverInfo';
const CAPS = { sampling: {}, elicitation: {}, roots: {} };
const META = (caps = CAPS) => ({
	'io.modelcontextprotocol/protocolVersion': V,
	'io.modelcontextprotocol/clientCapabilities': caps,
	'io.modelcontextprotocol/clientInfo': { name: 'mrtr-test', version: '1.0.0' },
});
let nextId = 1;
const tool = (name, args = {}, extra = {}, caps = CAPS) => ({ jsonrpc: '2.0', id: `t${nextId++}`,
	method: 'tools/call', params: { name, arguments: args, _meta: META(caps), ...extra } });
const prompt = (name, extra = {}) => ({ jsonrpc: '2.0', id: `p${nextId++}`, method: 'prompts/get',
	params: { name, arguments: {}, _meta: META(), ...extra } });
const read = (uri, extra = {}) => ({ jsonrpc: '2.0', id: `r${nextId++}`, method: 'resources/read',
	params: { uri, _meta: META(), ...extra } });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isErr = (m, code) => m && m.error && m.error.code === code && typeof m.error.message === 'string';
const textOf = (m) => m?.result?.content?.[0]?.text;

// The client's answers.
const ELICIT = (name = 'Ann') => ({ action: 'accept', content: { name } });
const SAMPLE = (text = 'Paris') => ({ role: 'assistant', content: { type: 'text', text }, model: 'test-model',
	stopReason: 'endTurn' });
const ROOTS = { roots: [{ uri: 'file:///work', name: 'work' }] };
const answer = (method) => method === 'elicitation/create' ? ELICIT() : method === 'sampling/createMessage' ?
	SAMPLE() : ROOTS;

/*
 * M is input_required from server NAME asking METHODS (in order): checks
 * its fields, and returns { state, ids, reqs } (ids in the order asked).
 */
function inputRequired(m, methods, name, where) {
	const r = m?.result;
	ok(r?.resultType === 'input_required', `${where}: resultType "input_required"`, show(m));
	const ids = Object.keys(r?.inputRequests ?? {});
	is(ids.map((k) => r.inputRequests[k].method), methods, `${where}: inputRequests ask ${methods.join(', ')}`,
	    show(r?.inputRequests));
	ok(ids.every((k) => typeof r.inputRequests[k].params === 'object'), `${where}: each with its params`,
	    show(r?.inputRequests));
	ok(typeof r?.requestState === 'string' && r.requestState.length > 0, `${where}: a requestState`, show(r));
	ok(r?._meta?.[SERVER]?.name === name, `${where}: _meta["${SERVER}"] names ${name}`, show(r?._meta));
	ok(r?.content === undefined && r?.isError === undefined && r?.messages === undefined &&
	    r?.contents === undefined, `${where}: nothing of the callback's result`, show(r));
	return { state: r?.requestState, ids, reqs: r?.inputRequests ?? {} };
}

function complete(m, where) {
	ok(m?.result?.resultType === 'complete', `${where}: resultType "complete"`, show(m));
}

// A retry of REQ (a new id) with STATE and RESPONSES.
function retry(req, state, responses) {
	const params = { ...req.params };
	if (state !== undefined)
		params.requestState = state;
	if (responses !== undefined)
		params.inputResponses = responses;
	return { ...req, id: `${req.id}-${nextId++}`, params };
}

// Every input request answered the usual way.
const answers = (ir) => Object.fromEntries(ir.ids.map((k) => [k, answer(ir.reqs[k].method)]));

// ---- stdio ------------------------------------------------------------------

class Stdio {
	constructor(prog, args = [], env = {}) {
		this.proc = spawn(prog, ['--stdio', ...args], { stdio: ['pipe', 'pipe', 'pipe'],
			env: { ...process.env, ...env } });
		this.msgs = [];
		this.stderr = '';
		this.waiters = [];
		this.exit = null;
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
				this.msgs.push(m);
			}
			this.wake();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => { this.stderr += d; });
		this.proc.stdin.on('error', () => {});
		this.exited = new Promise((r) => this.proc.on('exit', (code) => { this.exit = code; this.wake(); r(code); }));
	}

	wake() {
		for (const w of this.waiters.splice(0))
			w();
	}

	send(m) {
		this.proc.stdin.write(JSON.stringify(m) + '\n');
	}

	async wait(pred, ms = 5000) {
		const end = Date.now() + ms;
		for (;;) {
			const m = this.msgs.find(pred);
			if (m || Date.now() > end || this.exit !== null)
				return m;
			await new Promise((r) => { this.waiters.push(r); setTimeout(r, 50); });
		}
	}

	async ask(m, ms) {
		this.send(m);
		return this.wait((x) => x.id === m.id && (x.result || x.error), ms);
	}

	serverRequests() {
		return this.msgs.filter((x) => x.method !== undefined && x.id !== undefined);
	}

	close() {
		this.proc.stdin.end();
		return new Promise((r) => {
			if (this.exit !== null)
				return r(this.exit);
			const t = setTimeout(() => { this.proc.kill('SIGKILL'); r(null); }, 5000);
			this.proc.on('exit', (code) => { clearTimeout(t); r(code); });
		});
	}
}

// A whole exchange through ASK (stdio or HTTP): the request, then retries
// answering everything asked, until a complete result or ROUNDS rounds.
async function roundTrip(ask, req, methods, name, where) {
	let m = await ask(req);
	let state;
	let responses;
	for (let i = 0; i < methods.length; i++) {
		const ir = inputRequired(m, methods[i], name, `${where}, round ${i + 1}`);
		state = ir.state;
		responses = answers(ir);
		m = await ask(retry(req, state, responses));
	}
	return m;
}

async function stdioFeat() {
	tap.label = 'stdio feat-server: ';
	const s = new Stdio(FEAT);
	const ask = (m) => s.ask(m);
	let m = await roundTrip(ask, tool('sample', { prompt: 'Capital of France?' }),
	    [['sampling/createMessage']], 'feat-server', 'sample');
	complete(m, 'sample retried');
	is(textOf(m), 'sampled: Paris', 'sample: the callback used the sampling answer', show(m));
	m = await roundTrip(ask, tool('elicit', { message: 'Your name?' }), [['elicitation/create']],
	    'feat-server', 'elicit');
	is(textOf(m), 'elicited: action=accept content={"name":"Ann"}', 'elicit: the callback used the answer', show(m));
	m = await roundTrip(ask, tool('roots'), [['roots/list']], 'feat-server', 'roots');
	is(textOf(m), 'roots: [{"uri":"file:///work","name":"work"}]', 'roots: the callback used the answer', show(m));
	// The request as it goes to the client: the callback's params.
	m = await s.ask(tool('sample', { prompt: 'Capital of France?' }));
	const q = Object.values(m?.result?.inputRequests ?? {})[0];
	is(q?.params?.messages?.[0]?.content?.text, 'Capital of France?', 'the input request carries the callback\'s params',
	    show(q));
	// URL elicitation needs its own capability, as in 2025-11-25.
	m = await s.ask(tool('elicit', { message: 'go', mode: 'url' }, {}, { elicitation: {} }));
	ok(isErr(m, -32021), 'url elicitation with form only declared: -32021', show(m));
	m = await s.ask(tool('elicit', { message: 'go', mode: 'url' }, {}, { elicitation: { url: {} } }));
	is(m?.result?.inputRequests?.['input-1']?.params?.mode, 'url', 'url elicitation declared: asked in url mode',
	    show(m));
	m = await s.ask(tool('sample', { prompt: 'x' }, {}, {}));
	ok(isErr(m, -32021) && m.error.data?.requiredCapabilities?.sampling !== undefined,
	    'sampling not declared: still -32021, never input_required', show(m));
	is(s.serverRequests(), [], 'no request from the server, ever');
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

async function stdioMrtr() {
	tap.label = 'stdio mrtr-server: ';
	const s = new Stdio(MRTR);
	const ask = (m) => s.ask(m);
	// Two rounds: the name first, then a sampling that uses it.
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await s.ask(req);
	const one = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'ask_twice round 1');
	is(one.ids, ['input-1'], 'ask_twice round 1: the id is input-1');
	m = await s.ask(retry(req, one.state, { 'input-1': ELICIT('Bob') }));
	const two = inputRequired(m, ['sampling/createMessage'], 'mrtr-server', 'ask_twice round 2');
	is(two.ids, ['input-2'], 'ask_twice round 2: the id is input-2');
	is(two.reqs['input-2']?.params?.messages?.[0]?.content?.text, 'Hello Bob',
	    'ask_twice round 2: the sampling uses the first round\'s answer', show(two.reqs));
	ok(two.state !== one.state, 'ask_twice round 2: a new requestState');
	// Only the second answer is sent: the first comes back in the state.
	m = await s.ask(retry(req, two.state, { 'input-2': SAMPLE('Hi Bob!') }));
	complete(m, 'ask_twice round 3');
	is(textOf(m), 'round 3: name=Bob, model=Hi Bob!', 'ask_twice round 3: both answers used; mcp_call_round is 3',
	    show(m));
	// An answer missing: asked again (the spec's SHOULD), no error.
	m = await s.ask(retry(req, one.state, {}));
	const again = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'no answer sent');
	is(again.ids, ['input-1'], 'no answer sent: input-1 asked again');
	// The bound of rounds: 32, those without a new answer included.
	let st = one.state;
	let k = 1;
	for (; k < 40; k++) {
		m = await s.ask(retry(req, st, {}));
		if (!m?.result?.requestState)
			break;
		st = m.result.requestState;
	}
	ok(k === 32 && isErr(m, -32602) && /too many rounds \(32\)/.test(m.error.message),
	    'round 33 (no answer given, ever): -32602 too many rounds', `${k} ${show(m)}`);
	// Answers it did not ask for are ignored.
	m = await s.ask(retry(req, one.state, { 'input-1': ELICIT('Cy'), stray: { x: 1 } }));
	inputRequired(m, ['sampling/createMessage'], 'mrtr-server', 'a stray answer besides');
	// Two requests in one round, and what the callback set meanwhile
	// ("partial") never reaches the client.
	const breq = tool('both');
	m = await s.ask(breq);
	const b = inputRequired(m, ['elicitation/create', 'roots/list'], 'mrtr-server', 'both');
	is(b.ids, ['input-1', 'input-2'], 'both: input-1 and input-2');
	m = await s.ask(retry(breq, b.state, { 'input-2': ROOTS }));
	inputRequired(m, ['elicitation/create', 'roots/list'], 'mrtr-server', 'both, the first answer missing');
	m = await s.ask(retry(breq, b.state, answers(b)));
	is(textOf(m), 'elicit=accept roots=1', 'both: answered in one retry', show(m));
	ok(!s.msgs.some((x) => JSON.stringify(x).includes('partial')), 'both: "partial" never sent');
	// The bound: 16 requests a call.
	const nreq = tool('many', { n: 17 });
	m = await s.ask(nreq);
	const n = inputRequired(m, Array(16).fill('elicitation/create'), 'mrtr-server', 'many 17');
	m = await s.ask(retry(nreq, n.state, answers(n)));
	is(textOf(m), 'answered 16 of 17: first failure not allowed in this state',
	    'many 17: the 17th request is refused (MCP_ESTATE), the call completes', show(m));
	// A loop tool may ask too: nothing waits.
	m = await roundTrip(ask, tool('loop_sample'), [['sampling/createMessage']], 'mrtr-server', 'loop_sample');
	is(textOf(m), 'loop model=Paris', 'loop_sample: a loop tool round trip', show(m));
	// A deferred call, asked and finished from another thread.
	m = await roundTrip(ask, tool('defer_ask'), [['elicitation/create']], 'mrtr-server', 'defer_ask');
	is(textOf(m), 'deferred round 2: name=Ann', 'defer_ask: a deferred call\'s round trip', show(m));
	// prompts/get and resources/read.
	m = await roundTrip(ask, prompt('ask_prompt'), [['elicitation/create']], 'mrtr-server', 'prompts/get');
	complete(m, 'prompts/get retried');
	is(m?.result?.messages?.[0]?.content?.text, 'Tell me about Ann.', 'prompts/get: the answer used', show(m));
	m = await s.ask(read('mrtr://roots'));
	ok(m?.result?.ttlMs === undefined && m?.result?.cacheScope === undefined,
	    'resources/read input_required: no caching hints', show(m));
	m = await roundTrip(ask, read('mrtr://roots'), [['roots/list']], 'mrtr-server', 'resources/read');
	complete(m, 'resources/read retried');
	is(m?.result?.contents?.[0]?.text, '[{"uri":"file:///work","name":"work"}]', 'resources/read: the answer used',
	    show(m));
	ok(m?.result?.ttlMs === 0 && m?.result?.cacheScope === 'private', 'resources/read complete: its caching hints',
	    show(m));
	// No capability: -32021, as before.
	m = await s.ask(tool('ask_twice', { greeting: 'x' }, {}, {}));
	ok(isErr(m, -32021) && m.error.data?.requiredCapabilities?.elicitation !== undefined,
	    'no elicitation declared: -32021', show(m));
	is(s.serverRequests(), [], 'no request from the server, ever');
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

// A tampered STATE on REQ: -32602 whose message matches RE.
async function refused(ask, req, state, responses, re, what) {
	const m = await ask(retry(req, state, responses));
	ok(isErr(m, -32602) && re.test(m.error.message), `${what}: -32602 (${re.source})`, show(m));
}

async function tamper() {
	tap.label = 'stdio tampering: ';
	const s = new Stdio(MRTR);
	const ask = (m) => s.ask(m);
	const req = tool('ask_twice', { greeting: 'Hello' });
	const m = await s.ask(req);
	const { state } = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'round 1');
	const good = { 'input-1': ELICIT() };
	const raw = Buffer.from(state, 'base64');
	for (const at of [0, 31, 32, Math.floor(raw.length / 2), raw.length - 1]) {
		const b = Buffer.from(raw);
		b[at] ^= 1;
		await refused(ask, req, b.toString('base64'), good, /integrity/, `byte ${at} of ${raw.length} flipped`);
	}
	const c = state[40] === 'A' ? 'B' : 'A';
	await refused(ask, req, state.slice(0, 40) + c + state.slice(41), good, /requestState/,
	    'one character of the string changed');
	await refused(ask, req, state.slice(0, state.length - 8), good, /integrity/, 'truncated by 8 characters');
	await refused(ask, req, state.slice(0, state.length - 3), good, /not base64/, 'truncated by 3 characters');
	await refused(ask, req, '!!not*base64??', good, /not base64/, 'base64 garbage');
	await refused(ask, req, Buffer.from('short').toString('base64'), good, /too short/, 'too short');
	await refused(ask, req, '', good, /not base64|too short/, 'empty');
	await refused(ask, req, 42, good, /must be a string/, 'a number');
	await refused(ask, req, state, [], /inputResponses must be an object/, 'inputResponses an array');
	// Answers with no state, given before anything was asked (SEP-2322
	// lets a client; the 2026-07-28 suite's SHOULD): each taken by the
	// first round's request whose key it names if it is an object (the
	// elicitation here), the rest ignored and asked (the sampling); the
	// new state carries the early answer.
	const early = await ask(retry(req, undefined, { ...good, 'input-7': ELICIT('Zed') }));
	const e = inputRequired(early, ['sampling/createMessage'], 'mrtr-server',
	    'inputResponses without requestState: the elicitation taken, the sampling asked');
	is(e.reqs['input-2']?.params?.messages?.[0]?.content?.text, 'Hello Ann',
	    '... the sampling uses the early answer (not the stray key\'s)', show(e.reqs));
	const late = await ask(retry(req, e.state, { 'input-2': SAMPLE('Hi Ann!') }));
	is(textOf(late), 'round 2: name=Ann, model=Hi Ann!', '... the retry with its state: both answers used',
	    show(late));
	const again = await ask(retry(req, undefined, { 'input-1': 'yes', 'input-9': ELICIT() }));
	inputRequired(again, ['elicitation/create'], 'mrtr-server',
	    'inputResponses without requestState, no object or no key asked: asked again');
	await refused(ask, req, state, { 'input-1': 'yes' }, /must be an object/, 'an answer that is no object');
	// Made for another request.
	await refused(ask, tool('ask_twice', { greeting: 'Hi' }), state, good, /other arguments/, 'other arguments');
	await refused(ask, tool('both'), state, good, /another tool/, 'another tool');
	await refused(ask, prompt('ask_prompt'), state, good, /another method/, 'another method (prompts/get)');
	const pm = await s.ask(prompt('ask_prompt'));
	const ps = pm?.result?.requestState;
	await refused(ask, read('mrtr://roots'), ps, {}, /another method/, 'a prompt\'s state on resources/read');
	// The same arguments in another order and spacing are the same.
	const m2 = await s.ask(retry(tool('ask_twice', { greeting: 'Hello' }), state, good));
	ok(m2?.result?.resultType === 'input_required', 'the same arguments: accepted', show(m2));
	// Another process: another key.
	const o = new Stdio(MRTR);
	const om = await o.ask(req);
	ok(isErr(om && await o.ask(retry(req, state, good)), -32602), 'another process (its own random key): -32602');
	await o.close();
	ok(!/Sanitizer|runtime error/.test(s.stderr), 'no sanitizer report', s.stderr.slice(-500));
	is(await s.close(), 0, 'alive to the end: exits 0 when stdin closes');
}

// Sizes: --max-message 65536, so a state may have 32768 bytes.
async function sizes() {
	tap.label = 'stdio sizes: ';
	const s = new Stdio(MRTR, ['--max-message', '65536']);
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await s.ask(req);
	const { state } = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'round 1');
	await refused((x) => s.ask(x), req, 'A'.repeat(40000), {}, /too large \(40000 bytes; the most is 32768\)/,
	    'a 40000-byte state');
	m = await s.ask(retry(req, state, { 'input-1': ELICIT('x'.repeat(30000)) }));
	ok(isErr(m, -32603) && /requestState would be \d+ bytes/.test(m.error.message),
	    'answers too big to carry: -32603, said at once', show(m));
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

async function expiry() {
	tap.label = 'stdio expiry: ';
	const s = new Stdio(MRTR, [], { MCP_STATE_TTL: '1' });
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await s.ask(req);
	const { state } = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'MCP_STATE_TTL=1');
	m = await s.ask(retry(req, state, { 'input-1': ELICIT() }));
	ok(m?.result?.resultType === 'input_required', 'at once: accepted', show(m));
	await sleep(1300);
	await refused((x) => s.ask(x), req, state, { 'input-1': ELICIT() }, /expired/, 'after 1.3 s');
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

// Several processes sharing a key file take each other's retries.
async function sharedKey() {
	tap.label = 'shared key: ';
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mrtr-'));
	const key = path.join(dir, 'key');
	const other = path.join(dir, 'other');
	const weak = path.join(dir, 'weak');
	fs.writeFileSync(key, 'c0ffee'.repeat(10) + '\n');
	fs.writeFileSync(other, 'decade'.repeat(10) + '\n');
	fs.writeFileSync(weak, 'short\n');
	const a = new Stdio(MRTR, ['--state-key-file', key]);
	const b = new Stdio(MRTR, [], { MCP_STATE_KEY_FILE: key });
	const c = new Stdio(MRTR, ['--state-key-file', other]);
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await a.ask(req);
	const one = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'A, round 1');
	m = await b.ask(retry(req, one.state, { 'input-1': ELICIT('Dee') }));
	const two = inputRequired(m, ['sampling/createMessage'], 'mrtr-server', 'B (MCP_STATE_KEY_FILE), round 2');
	m = await a.ask(retry(req, two.state, { 'input-2': SAMPLE('Hey Dee') }));
	is(textOf(m), 'round 3: name=Dee, model=Hey Dee', 'A, round 3: complete', show(m));
	m = await c.ask(retry(req, two.state, { 'input-2': SAMPLE() }));
	ok(isErr(m, -32602) && /integrity/.test(m.error.message), 'another key file: -32602', show(m));
	for (const x of [a, b, c])
		await x.close();
	const w = new Stdio(MRTR, ['--state-key-file', weak]);
	const code = await w.exited;
	ok(code !== 0 && /16 bytes/.test(w.stderr), 'a key of 5 bytes: refused at start', `${code} ${w.stderr}`);
	const n = new Stdio(MRTR, ['--state-key-file', path.join(dir, 'none')]);
	ok(await n.exited !== 0, 'a missing key file: refused at start', n.stderr);
	fs.rmSync(dir, { recursive: true, force: true });
}

// A task (the tasks extension) asks through its task: input_required,
// its request in tasks/get, answered by tasks/update; then the callback
// runs again from the start, given the answer, and the task completes.
async function tasks() {
	tap.label = 'stdio task: ';
	const s = new Stdio(MRTR);
	const caps = { ...CAPS, extensions: { 'io.modelcontextprotocol/tasks': {} } };
	const get = async (taskId, want) => {
		let m;
		const end = Date.now() + 5000;
		do {
			m = await s.ask({ jsonrpc: '2.0', id: `g${nextId++}`, method: 'tasks/get',
				params: { taskId, _meta: META(caps) } });
			if (want.includes(m?.result?.status))
				break;
			await sleep(50);
		} while (Date.now() < end);
		return m;
	};
	let m = await s.ask(tool('task_ask', {}, {}, caps));
	ok(m?.result?.resultType === 'task' && typeof m.result.taskId === 'string', 'task_ask: runs as a task', show(m));
	const taskId = m?.result?.taskId;
	m = await get(taskId, ['input_required', 'completed', 'failed', 'cancelled']);
	const asked = m?.result?.inputRequests ?? {};
	ok(m?.result?.status === 'input_required' && asked['input-1']?.method === 'elicitation/create' &&
	    m.result.requestState === undefined && m.result.result === undefined,
	    'the task is input_required, its elicitation in inputRequests (no requestState shown)', show(m));
	// An answer that is no result is refused, and the task still asks.
	m = await s.ask({ jsonrpc: '2.0', id: `u${nextId++}`, method: 'tasks/update', params: { taskId,
		inputResponses: { 'input-1': 'yes' }, _meta: META(caps) } });
	ok(isErr(m, -32602) && /must be an object/.test(m.error.message), 'tasks/update, an answer not an object: -32602', show(m));
	m = await get(taskId, ['input_required', 'completed', 'failed', 'cancelled']);
	ok(m?.result?.status === 'input_required', 'the task still asks', show(m));
	m = await s.ask({ jsonrpc: '2.0', id: `u${nextId++}`, method: 'tasks/update', params: { taskId,
		inputResponses: { 'input-1': { action: 'accept', content: { name: 'Bea' } } }, _meta: META(caps) } });
	ok(m?.result?.resultType === 'complete', 'tasks/update with the answer: acknowledged', show(m));
	m = await get(taskId, ['completed', 'failed', 'cancelled']);
	const r = m?.result?.result;
	ok(m?.result?.status === 'completed' && r?.content?.[0]?.text === 'task name=Bea' &&
	    r?.resultType !== 'input_required',
	    'the callback ran again with the answer: completed (task name=Bea)', show(m));
	// A loop tool's task runs again on the loop thread, as it first ran.
	m = await s.ask(tool('loop_sample', {}, {}, caps));
	const loopId = m?.result?.taskId;
	m = await get(loopId, ['input_required', 'completed', 'failed', 'cancelled']);
	ok(m?.result?.status === 'input_required', 'loop_sample as a task: input_required', show(m));
	await s.ask({ jsonrpc: '2.0', id: `u${nextId++}`, method: 'tasks/update', params: { taskId: loopId,
		inputResponses: { 'input-1': SAMPLE() }, _meta: META(caps) } });
	m = await get(loopId, ['completed', 'failed', 'cancelled']);
	is(m?.result?.result?.content?.[0]?.text, 'loop model=Paris',
	    'loop_sample as a task, answered: run again on the loop thread', show(m));
	// Without the extension the same tool runs plainly, and asks.
	m = await roundTrip((x) => s.ask(x), tool('task_ask'), [['elicitation/create']], 'mrtr-server',
	    'task_ask, not a task');
	is(textOf(m), 'task name=Ann', 'task_ask, not a task: a round trip', show(m));
	is(s.serverRequests(), [], 'no request from the server');
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

// A legacy session: real requests to the client, as before.
async function legacy() {
	tap.label = 'stdio legacy: ';
	const s = new Stdio(MRTR);
	let m = await s.ask({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18',
		capabilities: CAPS, clientInfo: { name: 'legacy', version: '1' } } });
	ok(m?.result?.protocolVersion === '2025-06-18', 'initialize 2025-06-18', show(m));
	s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
	const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_twice',
		arguments: { greeting: 'Yo' }, requestState: 'ignored', inputResponses: { x: 1 } } };
	s.send(call);
	const e = await s.wait((x) => x.method === 'elicitation/create' && x.id !== undefined);
	ok(e !== undefined, 'elicitation/create sent to the client as a request', show(s.msgs));
	s.send({ jsonrpc: '2.0', id: e?.id, result: ELICIT('Eve') });
	const q = await s.wait((x) => x.method === 'sampling/createMessage' && x.id !== undefined);
	is(q?.params?.messages?.[0]?.content?.text, 'Yo Eve', 'then sampling/createMessage, using the answer', show(q));
	s.send({ jsonrpc: '2.0', id: q?.id, result: SAMPLE('Hi Eve') });
	m = await s.wait((x) => x.id === 1);
	is(textOf(m), 'round 1: name=Eve, model=Hi Eve', 'the answer: one run, round 1 (requestState in params ignored)',
	    show(m));
	ok(m?.result?.resultType === undefined, 'no resultType in a legacy result', show(m));
	is(await s.close(), 0, 'exits 0 when stdin closes');
}

// ---- Streamable HTTP ----------------------------------------------------------

async function mpost(port, body, headers = {}) {
	const h = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
		'mcp-protocol-version': V, 'mcp-method': body.method, ...headers };
	const name = body.params?.name ?? body.params?.uri;
	if (name !== undefined)
		h['mcp-name'] = name;
	const r = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: h, body: JSON.stringify(body) });
	const text = await r.text();
	const ctype = r.headers.get('content-type') || '';
	let msgs = [];
	if (ctype.startsWith('text/event-stream'))
		msgs = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6)
		    .map((l) => JSON.parse(l.slice(6)));
	else if (text.length > 0)
		try { msgs = [JSON.parse(text)]; } catch { msgs = [{ unparsable: text }]; }
	const msg = msgs.find((x) => x.id === body.id);
	if (msg)
		msg.status = r.status;
	return msg ?? { status: r.status, text };
}

async function httpMrtr() {
	tap.label = 'http mrtr-server: ';
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mrtr-'));
	const key = path.join(dir, 'key');
	fs.writeFileSync(key, 'feedface'.repeat(8) + '\n');
	const a = await startServer(['--state-key-file', key], MRTR);
	const b = await startServer(['--state-key-file', key, '--json-response'], MRTR);
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await mpost(a.port, req);
	is(m.status, 200, 'input_required: HTTP 200');
	const one = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'A, round 1');
	m = await mpost(b.port, retry(req, one.state, { 'input-1': ELICIT('Flo') }));
	const two = inputRequired(m, ['sampling/createMessage'], 'mrtr-server', 'B, round 2');
	m = await mpost(a.port, retry(req, two.state, { 'input-2': SAMPLE('Hi Flo') }));
	complete(m, 'A, round 3');
	is(textOf(m), 'round 3: name=Flo, model=Hi Flo', 'A, round 3: the answers of both rounds used', show(m));
	const raw = Buffer.from(one.state, 'base64');
	raw[raw.length - 2] ^= 4;
	m = await mpost(b.port, retry(req, raw.toString('base64'), { 'input-1': ELICIT() }));
	ok(isErr(m, -32602) && /integrity/.test(m.error.message), 'a flipped byte: -32602', show(m));
	m = await mpost(a.port, retry(tool('both'), one.state, { 'input-1': ELICIT() }));
	ok(isErr(m, -32602) && /another tool/.test(m.error.message), 'another tool\'s state: -32602', show(m));
	// prompts/get and resources/read over HTTP.
	const ask = (x) => mpost(a.port, x);
	m = await roundTrip(ask, prompt('ask_prompt'), [['elicitation/create']], 'mrtr-server', 'prompts/get');
	is(m?.result?.messages?.[0]?.content?.text, 'Tell me about Ann.', 'prompts/get: complete', show(m));
	m = await roundTrip(ask, read('mrtr://roots'), [['roots/list']], 'mrtr-server', 'resources/read');
	is(m?.result?.contents?.[0]?.text, '[{"uri":"file:///work","name":"work"}]', 'resources/read: complete', show(m));
	// --state-ttl as a flag.
	const t = await startServer(['--state-ttl', '1'], MRTR);
	m = await mpost(t.port, req);
	const st = inputRequired(m, ['elicitation/create'], 'mrtr-server', '--state-ttl 1');
	await sleep(1300);
	m = await mpost(t.port, retry(req, st.state, { 'input-1': ELICIT() }));
	ok(isErr(m, -32602) && /expired/.test(m.error.message), '--state-ttl 1, after 1.3 s: -32602 expired', show(m));
	// A task's requestState is held by the task, not the client: a
	// tasks/update after --state-ttl still runs its callback again.
	const tcaps = { ...CAPS, extensions: { 'io.modelcontextprotocol/tasks': {} } };
	const tpost = (method, params) => mpost(t.port, { jsonrpc: '2.0', id: `k${nextId++}`, method,
		params: { ...params, _meta: META(tcaps) } }, { 'mcp-name': params.taskId });
	m = await mpost(t.port, tool('task_ask', {}, {}, tcaps));
	const tid = m?.result?.taskId;
	await sleep(1300);
	m = await tpost('tasks/get', { taskId: tid });
	ok(m?.result?.status === 'input_required', '--state-ttl 1: the task is input_required', show(m));
	m = await tpost('tasks/update', { taskId: tid,
		inputResponses: { 'input-1': { action: 'accept', content: { name: 'Cy' } } } });
	for (let i = 0; i < 100; i++) {
		m = await tpost('tasks/get', { taskId: tid });
		if (m?.result?.status !== 'working')
			break;
		await sleep(50);
	}
	ok(m?.result?.status === 'completed' && m.result.result?.content?.[0]?.text === 'task name=Cy',
	    '--state-ttl 1, a task answered after 1.3 s: completed (its state is the task\'s)', show(m));
	for (const x of [a, b, t])
		ok(x.proc.exitCode === null, `${x.args.join(' ')}: still running`);
	fs.rmSync(dir, { recursive: true, force: true });
}

// The state is bound to the principal: another subject's retry is refused.
async function httpPrincipal() {
	tap.label = 'http principal: ';
	process.env.MRTR_AUTH = '1';
	const srv = await startServer([], MRTR);
	delete process.env.MRTR_AUTH;
	const as = (who) => ({ authorization: `Bearer user-${who}` });
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await mpost(srv.port, req, as('alice'));
	const one = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'alice, round 1');
	m = await mpost(srv.port, retry(req, one.state, { 'input-1': ELICIT('Al') }), as('bob'));
	ok(isErr(m, -32602) && /another principal/.test(m.error.message), 'bob retries alice\'s state: -32602',
	    show(m));
	m = await mpost(srv.port, retry(req, one.state, { 'input-1': ELICIT('Al') }), as('alice'));
	inputRequired(m, ['sampling/createMessage'], 'mrtr-server', 'alice retries her own: round 2');
	ok(srv.proc.exitCode === null, 'still running');
}

// /metrics counts an input_required answer as ok, and a state too big to
// carry as the -32603 the client got.
async function httpMetrics() {
	tap.label = 'http metrics: ';
	const srv = await startServer(['--metrics', '--max-message', '65536'], MRTR);
	const req = tool('ask_twice', { greeting: 'Hello' });
	let m = await mpost(srv.port, req);
	const { state } = inputRequired(m, ['elicitation/create'], 'mrtr-server', 'round 1');
	m = await mpost(srv.port, retry(req, state, { 'input-1': ELICIT('x'.repeat(30000)) }));
	ok(isErr(m, -32603), 'answers too big to carry: -32603', show(m));
	const text = await (await fetch(`http://127.0.0.1:${srv.port}/metrics`)).text();
	const count = (re) => Number(text.match(re)?.[1] ?? 0);
	is(count(/^mcp_requests_total\{method="tools\/call",outcome="ok"\} (\d+)$/m), 1,
	    'the input_required answer: one ok', text);
	is(count(/^mcp_requests_total\{method="tools\/call",outcome="error",code="-32603"\} (\d+)$/m), 1,
	    'the state too big: one error -32603, as sent', text);
	is(count(/^mcp_requests_total\{method="tools\/call",outcome="is_error"\} (\d+)$/m), 0,
	    'no isError counted (what the callback set was not sent)', text);
	ok(srv.proc.exitCode === null, 'still running');
}

async function httpConformance() {
	tap.label = 'http conformance-server: ';
	const srv = await startServer([], CONF);
	const ask = (x) => mpost(srv.port, x);
	let m = await roundTrip(ask, tool('test_sampling', { prompt: 'Capital?' }), [['sampling/createMessage']],
	    'mcp-conformance-test-server', 'test_sampling');
	is(textOf(m), 'LLM response: Paris', 'test_sampling: complete with the answer', show(m));
	m = await roundTrip(ask, tool('test_elicitation', { message: 'Who?' }), [['elicitation/create']],
	    'mcp-conformance-test-server', 'test_elicitation');
	is(textOf(m), 'User response: action=accept, content={"name":"Ann"}', 'test_elicitation: complete with the answer',
	    show(m));
	ok(srv.proc.exitCode === null, 'still running');
}

const groups = { stdioFeat, stdioMrtr, tamper, sizes, expiry, sharedKey, tasks, legacy, httpMrtr, httpPrincipal, httpMetrics, httpConformance };
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
