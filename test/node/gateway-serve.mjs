// gateway-serve.mjs: `mcp-gateway [SERVER OPTIONS] -- CMD`, the stdio
// server @modelcontextprotocol/server-everything on the network, driven by
// the official TypeScript SDK's clients: Streamable HTTP at /mcp and legacy
// SSE at /sse, each directly and through nginx (test/gateway-serve.sh
// starts the gateways and nginx). Tools, progress (streamed, not held back
// to the end), resources, templates and subscriptions, prompts and
// completion, sampling, elicitation and roots (requests of the server's,
// to the client and back), logs and their level. By default a child
// process per session, gone with the session (and the session with its
// child, killed mid-call); with --shared one child for two sessions at
// once, each answered under its own ids and progress tokens (the same in
// both), the server's requests to the session whose call they serve, a
// level and subscriptions per session, a new child when the child dies.
// Prints TAP.
//
//   node test/node/gateway-serve.mjs EVERYTHING_DOCS \
//       DIRECT_PORT DIRECT_PID SHARED_PORT SHARED_PID NGINX_PORT NGINX_SHARED_PORT [GROUP...]
//
// EVERYTHING_DOCS: server-everything's dist/docs folder, whose files it
// serves as resources; DIRECT_* is the gateway with a child per session,
// SHARED_* the --shared one (their children are counted in /proc),
// NGINX_* nginx in front of each.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
	CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
	LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { Waitable, errText, is, ok, runGroups, settle, sleep, textOf } from './harness.mjs';

const [DOCS, DPORT, DPID, SPORT, SPID, NPORT, NSPORT] = process.argv.slice(2, 9);
process.argv.splice(2, 7);	// the rest: groups to run

// The processes a gateway has started and that are still there (a zombie
// not yet reaped too).
function childrenOf(pid) {
	const kids = new Set();
	let tasks = [];
	try {
		tasks = readdirSync(`/proc/${pid}/task`);
	} catch {
		return null;	// the gateway is gone
	}
	for (const t of tasks) {
		try {
			for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').split(/\s+/))
				if (c !== '')
					kids.add(Number(c));
		} catch { /* the thread ended */ }
	}
	return [...kids].sort((a, b) => a - b);
}

// Waits (polling /proc, 30 s at most) until cond(children) holds; the
// last list seen.
async function waitChildren(pid, cond, ms = 30000) {
	const t0 = Date.now();
	let kids = childrenOf(pid);
	while (!cond(kids) && Date.now() - t0 < ms) {
		await sleep(100);
		kids = childrenOf(pid);
	}
	return kids;
}

/*
 * A client of the SDK's on URL (transport 'http' or 'sse') that answers
 * the server's requests as NAME: sampling with "sampled by NAME: <the
 * prompt's text>", elicitation with the name "Ada NAME", roots with
 * file:///gw/NAME/<i> for each i < roots.count; what it got is recorded
 * (the logs, and each request of the server's with its params).
 */
async function connect(url, transport, name) {
	const seen = new Waitable();
	const st = { c: null, logs: [], updated: [], asked: [], raw: [], roots: { count: 1 }, seen };
	const c = new Client({ name: `gw-serve-${name}`, version: '1' },
	    { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
	c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
		st.asked.push({ method: req.method, params: req.params });
		seen._wake();
		return {
			model: `model-${name}`, role: 'assistant', stopReason: 'endTurn',
			content: { type: 'text', text: `sampled by ${name}: ${req.params.messages[0].content.text}` },
		};
	});
	c.setRequestHandler(ElicitRequestSchema, async (req) => {
		st.asked.push({ method: req.method, params: req.params });
		seen._wake();
		return { action: 'accept', content: { name: `Ada ${name}`, check: true, integer: 7 } };
	});
	c.setRequestHandler(ListRootsRequestSchema, async (req) => {
		st.asked.push({ method: req.method, params: req.params, count: st.roots.count });
		seen._wake();
		return { roots: Array.from({ length: st.roots.count }, (_, i) =>
		    ({ uri: `file:///gw/${name}/${i}`, name: `root ${i} of ${name}` })) };
	});
	c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
		st.logs.push(n.params);
		seen._wake();
	});
	c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
		st.updated.push(n.params.uri);
		seen._wake();
	});
	const u = new URL(url);
	const t = transport === 'sse' ? new SSEClientTransport(u) : new StreamableHTTPClientTransport(u);
	await c.connect(t);
	// What the transport hands the client, in order, before the SDK
	// dispatches it (notifications a microtask later than answers).
	const dispatch = t.onmessage;
	t.onmessage = (m, extra) => {
		st.raw.push({ m, at: Date.now() });
		dispatch?.(m, extra);
	};
	st.c = c;
	// The end of the session: on /mcp a DELETE (close() alone leaves the
	// session to the server's idle timeout), on /sse the stream closed.
	st.close = async () => {
		if (t instanceof StreamableHTTPClientTransport && t.sessionId !== undefined)
			await t.terminateSession();
		await c.close();
	};
	return st;
}

const toolNames = async (c) => (await c.listTools()).tools.map((t) => t.name);

// Polls get-roots-list until its text has WANT (the server stores the
// roots before it logs them); the last text.
async function rootsText(c, want, ms = 20000) {
	const t0 = Date.now();
	let text = '';
	do {
		text = textOf(await c.callTool({ name: 'get-roots-list', arguments: {} }));
		if (text.includes(want))
			break;
		await sleep(100);
	} while (Date.now() - t0 < ms);
	return text;
}

/*
 * Everything, for one client on URL through the gateway; LABEL names the
 * assertions; gwPid, the gateway's PID when each session has a child of
 * its own (counted), shared when one child serves every session.
 */
async function features(label, url, transport, { gwPid, shared = false } = {}) {
	const before = gwPid ? childrenOf(gwPid) : null;
	const who = label.replace(/\W+/g, '-');
	const st = await connect(url, transport, who);
	const { c, logs, asked, seen } = st;
	try {
		is(c.getServerVersion()?.name, 'mcp-servers/everything',
		    `${label}: initialize: the child's serverInfo reaches the client`);
		ok(c.getServerCapabilities()?.logging !== undefined && c.getServerCapabilities()?.tools !== undefined,
		    `${label}: initialize: the child's capabilities (tools, logging)`, c.getServerCapabilities());
		ok(/Everything Server/.test(c.getInstructions() ?? ''), `${label}: initialize: the child's instructions`,
		    c.getInstructions()?.slice(0, 200));
		if (gwPid) {
			const kids = await waitChildren(gwPid, (k) => k !== null && k.length === before.length + 1);
			is(kids?.length, before.length + 1, `${label}: the session has a child process of its own`,
			    { before, kids });
		}

		// Tools. The conditional ones are there only if the child was
		// initialized with sampling, elicitation and roots: the client's
		// own capabilities (--shared: the gateway's).
		const names = await toolNames(c);
		for (const t of ['echo', 'get-sum', 'trigger-long-running-operation', 'toggle-simulated-logging',
		    'trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list'])
			ok(names.includes(t), `${label}: tools/list has ${t}`, names);
		is(textOf(await c.callTool({ name: 'echo', arguments: { message: `hi ${who}` } })), `Echo: hi ${who}`,
		    `${label}: tools/call echo`);
		const sum = await c.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
		ok(/\b42\b/.test(textOf(sum)), `${label}: tools/call get-sum`, sum);
		const bad = await c.callTool({ name: 'echo', arguments: {} }).then((r) => r, (e) => ({ thrown: errText(e) }));
		ok((bad.isError === true && /Input validation error/.test(textOf(bad))) || /-32602/.test(bad.thrown ?? ''),
		    `${label}: a call without its argument: the child's error`, bad);

		// Progress, as it happens: the child's three notifications a
		// second apart, each before the result, the first long before it
		// (not all at the end, held back by a buffer).
		const ticks = [];
		const r0 = st.raw.length;
		const long = await c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } },
		    undefined, { onprogress: (p) => ticks.push(p), timeout: 120000 });
		is(textOf(long), 'Long running operation completed. Duration: 3 seconds, Steps: 3.',
		    `${label}: a long-running tool's result`);
		const raw = st.raw.slice(r0);
		const end = raw.findIndex((r) => r.m.id !== undefined && /Long running operation completed/.test(textOf(r.m.result)));
		const token = raw[end]?.m.id;	// the SDK's progressToken is its request id
		const prog = raw.slice(0, end).filter((r) => r.m.method === 'notifications/progress' &&
		    r.m.params?.progressToken === token);
		is(prog.map((r) => [r.m.params.progress, r.m.params.total]), [[1, 3], [2, 3], [3, 3]],
		    `${label}: its progress notifications, in order, before the result`, raw.map((r) => r.m));
		const lead = prog.length > 0 && end >= 0 ? raw[end].at - prog[0].at : -1;
		ok(lead >= 1000, `${label}: progress is streamed (the first ${lead} ms before the result)`);
		// The SDK's callback: the SSE client hands the last notification
		// and the answer over in one go, and the SDK dispatches the
		// notification after the answer: too late for the callback (it
		// reports an unknown token). The first two are a second earlier.
		is(ticks.slice(0, 2), [{ progress: 1, total: 3 }, { progress: 2, total: 3 }],
		    `${label}: the progress callback fires for each${transport === 'sse' ? ' (but the last, on SSE)' : ''}`,
		    ticks);
		if (transport !== 'sse')
			is(ticks.length, 3, `${label}: ... the last too`, ticks);

		// Resources: the files of its docs folder, and a template.
		const docs = readdirSync(DOCS).sort();
		const res = (await c.listResources()).resources;
		const uris = res.map((r) => r.uri).sort();
		is(uris, docs.map((d) => `demo://resource/static/document/${encodeURIComponent(d)}`).sort(),
		    `${label}: resources/list: one per docs file (${docs.length})`);
		const read = await c.readResource({ uri: 'demo://resource/static/document/instructions.md' });
		is(read.contents[0]?.text, readFileSync(path.join(DOCS, 'instructions.md'), 'utf8'),
		    `${label}: resources/read: the file's text, whole (${read.contents[0]?.text?.length} chars)`);
		const tpl = (await c.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
		ok(tpl.includes('demo://resource/dynamic/text/{resourceId}'), `${label}: resources/templates/list`, tpl);
		const dyn = await c.readResource({ uri: 'demo://resource/dynamic/text/7' });
		ok(/^Resource 7: This is a plaintext resource/.test(dyn.contents[0]?.text ?? ''),
		    `${label}: resources/read through a template`, dyn);

		// A subscription: the child's simulated updates (one at once,
		// then every 5 s) for the uri subscribed to.
		const doc = 'demo://resource/static/document/features.md';
		await c.subscribeResource({ uri: doc });
		const uon = textOf(await c.callTool({ name: 'toggle-subscriber-updates', arguments: {} }));
		ok(uon.startsWith('Started simulated resource updated'), `${label}: resource updates on`, uon);
		ok(await seen.until(() => st.updated.includes(doc), 20000),
		    `${label}: resources/subscribe: notifications/resources/updated comes`, st.updated);
		const uoff = textOf(await c.callTool({ name: 'toggle-subscriber-updates', arguments: {} }));
		ok(uoff.startsWith('Stopped simulated resource updates'), `${label}: resource updates off`, uoff);
		await c.unsubscribeResource({ uri: doc });

		// Prompts, and completion of a prompt's argument.
		const prompts = (await c.listPrompts()).prompts.map((p) => p.name);
		ok(['simple-prompt', 'args-prompt', 'completable-prompt'].every((p) => prompts.includes(p)),
		    `${label}: prompts/list`, prompts);
		is((await c.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris', state: who } }))
		    .messages[0]?.content?.text, `What's weather in Paris, ${who}?`, `${label}: prompts/get with arguments`);
		is((await c.getPrompt({ name: 'simple-prompt' })).messages[0]?.content?.text,
		    'This is a simple prompt without arguments.', `${label}: prompts/get without`);
		is((await c.complete({ ref: { type: 'ref/prompt', name: 'completable-prompt' },
		    argument: { name: 'department', value: 'Sa' } })).completion.values, ['Sales'],
		    `${label}: completion/complete`);

		// Sampling: the child asks the client, during the call; the
		// answer goes back into the tool's result.
		const nSampling = asked.filter((a) => a.method === 'sampling/createMessage').length;
		const samp = textOf(await c.callTool({ name: 'trigger-sampling-request',
		    arguments: { prompt: `a haiku for ${who}`, maxTokens: 33 } }));
		const sreq = asked.filter((a) => a.method === 'sampling/createMessage').slice(nSampling);
		is(sreq.length, 1, `${label}: sampling: one sampling/createMessage reaches the client`, asked);
		is([sreq[0]?.params?.maxTokens, sreq[0]?.params?.systemPrompt], [33, 'You are a helpful test server.'],
		    `${label}: sampling: its params as the child sent them`);
		ok(samp.includes(`sampled by ${who}: Resource trigger-sampling-request context: a haiku for ${who}`) &&
		    samp.includes(`model-${who}`), `${label}: sampling: the client's answer is in the tool's result`, samp);

		// Elicitation, the same way.
		const eli = textOf(await c.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
		ok(eli.includes('User provided the requested information') && eli.includes(`- Name: Ada ${who}`) &&
		    eli.includes('- Favorite Integer: 7'), `${label}: elicitation: the client's answer is in the tool's result`, eli);
		ok(asked.some((a) => a.method === 'elicitation/create' &&
		    a.params?.requestedSchema?.required?.includes('name')), `${label}: elicitation: its requestedSchema`, asked);

		// Roots: asked of the client after initialized (by default: a
		// child of its own; a shared child asked the first session,
		// and asks again on list_changed).
		if (shared)
			await c.sendRootsListChanged();
		const roots = await rootsText(c, `file:///gw/${who}/0`);
		ok(roots.includes('Current MCP Roots (1 total)') && roots.includes(`URI: file:///gw/${who}/0`),
		    `${label}: roots/list: the client's roots reach the child`, roots);

		// Logs: the level set, the child's simulated logging on; its
		// first message comes at once, the others every 5 s.
		await c.setLoggingLevel('debug');
		const on = textOf(await c.callTool({ name: 'toggle-simulated-logging', arguments: {} }));
		ok(on.startsWith('Started simulated'), `${label}: logging: simulated logging on`, on);
		const simulated = (l) => /^(Debug|Info|Notice|Warning|Error|Critical|Alert|Emergency)[- ]level[- ]message/i
		    .test(String(l.data));
		ok(await seen.until(() => logs.some(simulated), 20000),
		    `${label}: logging: a notifications/message of the child's reaches the client`, logs);
		const off = textOf(await c.callTool({ name: 'toggle-simulated-logging', arguments: {} }));
		ok(off.startsWith('Stopped simulated'), `${label}: logging: simulated logging off`, off);

		// The level is applied: a roots change logs at info ("Roots
		// updated: N root(s)"); at error it is not sent, at info it is.
		await c.setLoggingLevel('error');
		st.roots.count = 2;
		await c.sendRootsListChanged();
		const r2 = await rootsText(c, 'Current MCP Roots (2 total)');
		ok(r2.includes('Current MCP Roots (2 total)'), `${label}: roots: list_changed, and the child asks again`, r2);
		await c.setLoggingLevel('info');
		st.roots.count = 3;
		await c.sendRootsListChanged();
		ok(await seen.until(() => logs.some((l) => /Roots updated: 3 root/.test(l.data)), 20000),
		    `${label}: logging: at info, the child's info message comes`, logs);
		ok(!logs.some((l) => /Roots updated: 2 root/.test(l.data)),
		    `${label}: logging: at error, it did not`, logs);

		// Calls at once, each answered to its caller.
		const many = await Promise.all(Array.from({ length: 12 }, (_, i) =>
		    c.callTool({ name: 'echo', arguments: { message: `${who} m${i}` } })));
		ok(many.every((r, i) => textOf(r) === `Echo: ${who} m${i}`), `${label}: 12 calls at once, each its own answer`,
		    many.map(textOf));
		await c.ping();
		ok(true, `${label}: ping`);
	} finally {
		await st.close();
	}
	if (gwPid) {
		// The session over (DELETE on /mcp, the stream closed on
		// /sse), its child ends with it.
		const kids = await waitChildren(gwPid, (k) => k !== null && k.length === before.length);
		is(kids, before, `${label}: the session's end ends its child`);
	}
}

/*
 * --shared: one child for every session. Two clients at once: the same
 * child process (one only), answers to each under its own ids (calls at
 * once, the same ids in both sessions), progress to its own token, a
 * sampling request of the child's to the session whose call it serves,
 * a level per session, and a session's end leaves the child up for the
 * other.
 */
async function shared(label, url) {
	const pid = Number(SPID);
	const a = await connect(url, 'http', 'A');
	const b = await connect(url, 'http', 'B');
	try {
		const kids = await waitChildren(pid, (k) => k !== null && k.length === 1);
		is(kids?.length, 1, `${label}: one child for two sessions`, kids);
		is([a.c.getServerVersion()?.name, b.c.getServerVersion()?.name],
		    ['mcp-servers/everything', 'mcp-servers/everything'], `${label}: both initialized with the child's serverInfo`);
		const names = await toolNames(b.c);
		ok(['echo', 'trigger-sampling-request', 'trigger-elicitation-request'].every((t) => names.includes(t)),
		    `${label}: tools/list (the conditional tools too)`, names);
		is(await toolNames(a.c), names, `${label}: the same tools in the other session`);

		// The SDK numbers requests from 0 in each session: the same ids
		// at once in both, each answer to its own.
		const [ra, rb] = await Promise.all([
		    Promise.all(Array.from({ length: 10 }, (_, i) => a.c.callTool({ name: 'echo', arguments: { message: `A${i}` } }))),
		    Promise.all(Array.from({ length: 10 }, (_, i) => b.c.callTool({ name: 'echo', arguments: { message: `B${i}` } }))),
		]);
		ok(ra.every((r, i) => textOf(r) === `Echo: A${i}`) && rb.every((r, i) => textOf(r) === `Echo: B${i}`),
		    `${label}: 10 calls at once in each session, each answer to its caller`, ra.map(textOf), rb.map(textOf));

		// Progress of two calls at once, each to its own session: both
		// under the same id, so the same progressToken from each client.
		const pa = [], pb = [];
		const ra0 = a.raw.length, rb0 = b.raw.length;
		const [la, lb] = await Promise.all([
		    a.c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 2 } },
		        undefined, { onprogress: (p) => pa.push(p.progress), timeout: 120000 }),
		    b.c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } },
		        undefined, { onprogress: (p) => pb.push(p.progress), timeout: 120000 }),
		]);
		is([textOf(la), textOf(lb)], ['Long running operation completed. Duration: 2 seconds, Steps: 2.',
		    'Long running operation completed. Duration: 3 seconds, Steps: 3.'], `${label}: two long calls at once`);
		is([pa, pb], [[1, 2], [1, 2, 3]], `${label}: each one's progress to its own session`);
		const tokens = [a.raw.slice(ra0), b.raw.slice(rb0)].map((raw) => [...new Set(raw
		    .filter((r) => r.m.method === 'notifications/progress').map((r) => r.m.params.progressToken))]);
		ok(tokens[0].length === 1 && tokens[0][0] === tokens[1][0] && tokens[1].length === 1,
		    `${label}: ... the same token in both sessions (${tokens[0]})`, tokens);

		// The child's requests go to the session of the call they serve
		// (one call at a time: over stdio nothing says which call a
		// request serves).
		for (const s of [a, b]) {
			const who = s === a ? 'A' : 'B';
			const other = s === a ? b : a;
			const n0 = other.asked.length;
			const t = textOf(await s.c.callTool({ name: 'trigger-sampling-request', arguments: { prompt: `for ${who}` } }));
			ok(t.includes(`sampled by ${who}: Resource trigger-sampling-request context: for ${who}`),
			    `${label}: sampling from ${who}'s call, answered by ${who}`, t);
			is(other.asked.slice(n0), [], `${label}: ... and not asked of the other session`);
			const e = textOf(await s.c.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
			ok(e.includes(`- Name: Ada ${who}`), `${label}: elicitation from ${who}'s call, answered by ${who}`, e);
		}

		// Resources and prompts through the one child.
		is((await b.c.readResource({ uri: 'demo://resource/static/document/instructions.md' })).contents[0]?.text,
		    readFileSync(path.join(DOCS, 'instructions.md'), 'utf8'), `${label}: resources/read`);
		is((await a.c.getPrompt({ name: 'args-prompt', arguments: { city: 'Oslo' } })).messages[0]?.content?.text,
		    "What's weather in Oslo?", `${label}: prompts/get`);

		// Levels are per session here (the gateway applies them): A at
		// info, B at error; the child's info message (a roots change)
		// goes to A only. Then B's ping: what was sent to B before it
		// has had time to come.
		await a.c.setLoggingLevel('info');
		await b.c.setLoggingLevel('error');
		const nb = b.logs.length;
		a.roots.count = 2;
		b.roots.count = 2;
		await a.c.sendRootsListChanged();
		ok(await a.seen.until(() => a.logs.some((l) => /Roots updated: 2 root/.test(l.data)), 20000),
		    `${label}: logging: the child's info message reaches A (at info)`, a.logs);
		await b.c.ping();
		await sleep(300);
		is(b.logs.slice(nb).filter((l) => /Roots updated/.test(l.data)), [],
		    `${label}: logging: ... and not B (at error)`);
		// The simulated logging, on for the child (every session): B at
		// debug now gets its messages too.
		await b.c.setLoggingLevel('debug');
		const simulated = (l) => /level[- ]message/i.test(String(l.data));
		const on = textOf(await a.c.callTool({ name: 'toggle-simulated-logging', arguments: {} }));
		ok(on.startsWith('Started simulated'), `${label}: logging: simulated logging on`, on);
		ok(await a.seen.until(() => a.logs.some(simulated), 20000), `${label}: logging: A gets the child's messages`, a.logs);
		ok(await b.seen.until(() => b.logs.some((l) => simulated(l)), 20000),
		    `${label}: logging: B (at debug) gets them too`, b.logs);
		const offText = textOf(await a.c.callTool({ name: 'toggle-simulated-logging', arguments: {} }));
		ok(offText.startsWith('Stopped simulated'), `${label}: logging: simulated logging off`, offText);

		// Subscriptions are per session here too: the child hears of a
		// uri once, its updates go to the sessions subscribed.
		const doc = 'demo://resource/static/document/architecture.md';
		await a.c.subscribeResource({ uri: doc });
		const nbu = b.updated.length;
		const uon = textOf(await a.c.callTool({ name: 'toggle-subscriber-updates', arguments: {} }));
		ok(uon.startsWith('Started simulated resource updated'), `${label}: resource updates on`, uon);
		ok(await a.seen.until(() => a.updated.includes(doc), 20000),
		    `${label}: subscribed, A gets notifications/resources/updated`, a.updated);
		await b.c.ping();
		await sleep(300);
		is(b.updated.slice(nbu), [], `${label}: ... and not B, not subscribed`);
		await b.c.subscribeResource({ uri: doc });
		ok(await b.seen.until(() => b.updated.length > nbu, 20000),
		    `${label}: B subscribed too: B gets them (the next, within 5 s)`, b.updated);
		// A's unsubscribe is the gateway's (B still wants the uri): the
		// child goes on, and B gets two more while A gets one at most
		// (one on its way as A unsubscribed).
		await a.c.unsubscribeResource({ uri: doc });
		const na = a.updated.length, nb2 = b.updated.length;
		ok(await b.seen.until(() => b.updated.length >= nb2 + 2, 30000),
		    `${label}: A unsubscribed: B still gets them`, b.updated);
		await a.c.ping();
		await sleep(300);
		ok(a.updated.length <= na + 1, `${label}: ... and A no more (${a.updated.length - na} since)`, a.updated);
		const uoff = textOf(await b.c.callTool({ name: 'toggle-subscriber-updates', arguments: {} }));
		ok(uoff.startsWith('Stopped simulated resource updates'), `${label}: resource updates off`, uoff);
		await b.c.unsubscribeResource({ uri: doc });

		// A leaves; the child stays, B goes on.
		await a.close();
		is(textOf(await b.c.callTool({ name: 'echo', arguments: { message: 'still' } })), 'Echo: still',
		    `${label}: one session's end leaves the child to the other`);
		is(childrenOf(pid)?.length, 1, `${label}: still one child`);
		// A third session after the first has gone: the same child.
		const before = childrenOf(pid);
		const c3 = await connect(url, 'http', 'C');
		is(textOf(await c3.c.callTool({ name: 'echo', arguments: { message: 'third' } })), 'Echo: third',
		    `${label}: a new session, served by the same child`);
		is(childrenOf(pid), before, `${label}: ... the same process`);
		await c3.close();
	} finally {
		await a.close().catch(() => {});
		await b.close().catch(() => {});
	}
}

// A call in flight, the child killed: the call fails at once, with why.
// By default the session ends with its child; --shared, the gateway
// starts a new child and the session goes on.
async function childEnds(label, url, pid, isShared) {
	const before = childrenOf(pid);
	const s = await connect(url, 'http', 'K');
	try {
		const kids = await waitChildren(pid, (k) => k !== null && (isShared ? k.length === 1 :
		    k.length === before.length + 1));
		const victim = isShared ? kids?.[0] : kids?.find((k) => !before.includes(k));
		ok(victim !== undefined, `${label}: the session's child (${victim})`, { before, kids });
		let ticks = 0;
		const call = settle(s.c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 60, steps: 60 } },
		    undefined, { onprogress: () => { ticks++; s.seen._wake(); }, timeout: 120000 }), 60000);
		ok(await s.seen.until(() => ticks > 0, 30000), `${label}: a long call under way (progress)`);
		process.kill(victim, 'SIGKILL');
		const r = await call;
		ok(r.error !== undefined && r.ms < 20000 && /-32603/.test(errText(r.error)) &&
		    /killed by signal 9|gone/.test(errText(r.error)),
		    `${label}: the child killed: the call fails at once, with why (${r.ms} ms)`,
		    r.error ? errText(r.error) : r.value);
		if (!isShared) {
			const next = await settle(s.c.callTool({ name: 'echo', arguments: { message: 'after' } }), 30000);
			ok(next.error !== undefined && /Session not found|404/.test(errText(next.error)),
			    `${label}: the session ended with its child`, next.error ? errText(next.error) : next.value);
			is(await waitChildren(pid, (k) => k !== null && k.length === before.length), before,
			    `${label}: no child left of it`);
			return;
		}
		// --shared: the child comes back (after a backoff); until then
		// a request is told to try again.
		const t0 = Date.now();
		let last;
		do {
			last = await settle(s.c.callTool({ name: 'echo', arguments: { message: 'back' } }), 30000);
			if (last.value !== undefined)
				break;
			await sleep(200);
		} while (Date.now() - t0 < 45000);
		is(textOf(last.value), 'Echo: back', `${label}: a new child serves the session (${Date.now() - t0} ms)`,
		    last.error ? errText(last.error) : undefined);
		const now = childrenOf(pid);
		ok(now?.length === 1 && now[0] !== victim, `${label}: one child, a new one`, { victim, now });
	} finally {
		await s.close().catch(() => {});
	}
}

const direct = `http://127.0.0.1:${DPORT}`;
const viaNginx = `http://127.0.0.1:${NPORT}`;
const sharedDirect = `http://127.0.0.1:${SPORT}`;
const sharedNginx = `http://127.0.0.1:${NSPORT}`;
const dpid = Number(DPID);

await runGroups([
	['direct-mcp', () => features('direct /mcp', `${direct}/mcp`, 'http', { gwPid: dpid }), 120000],
	['direct-sse', () => features('direct /sse', `${direct}/sse`, 'sse', { gwPid: dpid }), 120000],
	['nginx-mcp', () => features('nginx /mcp', `${viaNginx}/mcp`, 'http', { gwPid: dpid }), 120000],
	['nginx-sse', () => features('nginx /sse', `${viaNginx}/sse`, 'sse', { gwPid: dpid }), 120000],
	['sessions', async () => {
		// Two sessions at once by default: two children.
		const before = childrenOf(dpid);
		const x = await connect(`${direct}/mcp`, 'http', 'X');
		const y = await connect(`${direct}/sse`, 'sse', 'Y');
		const kids = await waitChildren(dpid, (k) => k !== null && k.length === before.length + 2);
		is(kids?.length, before.length + 2, 'sessions: two sessions at once, two children', { before, kids });
		is([textOf(await x.c.callTool({ name: 'echo', arguments: { message: 'x' } })),
		    textOf(await y.c.callTool({ name: 'echo', arguments: { message: 'y' } }))], ['Echo: x', 'Echo: y'],
		    'sessions: each answered by its own');
		await x.close();
		await y.close();
		is(await waitChildren(dpid, (k) => k !== null && k.length === before.length), before,
		    'sessions: both gone with their sessions');
	}, 90000],
	['shared-direct-mcp', () => shared('shared /mcp', `${sharedDirect}/mcp`), 120000],
	['shared-direct-sse', () => features('shared /sse', `${sharedDirect}/sse`, 'sse', { shared: true }), 120000],
	['shared-nginx-mcp', () => features('shared nginx /mcp', `${sharedNginx}/mcp`, 'http', { shared: true }), 120000],
	['child-ends', () => childEnds('child killed', `${direct}/mcp`, dpid, false), 90000],
	['shared-child-ends', () => childEnds('shared child killed', `${sharedDirect}/mcp`, Number(SPID), true), 90000],
]);
process.exit(process.exitCode);
