// peer-server.mjs: an MCP server built with the official TypeScript SDK
// (McpServer), the peer that libmcp's CLIENT is tested against. One process,
// the transport chosen by argv:
//
//   node peer-server.mjs stdio
//   node peer-server.mjs http [--json] [--stateless]   # Streamable HTTP, /mcp
//   node peer-server.mjs sse                            # GET /sse + POST /messages
//   ... [--page N]   tools/list in pages of N tools (the SDK itself never
//                    paginates: this wraps its handler to exercise cursors)
//
// The HTTP modes listen on 127.0.0.1, port 0, and print one line
// `PORT <n>` on stdout once listening; every log goes to stderr.
//   http: stateful (Mcp-Session-Id, sessions kept in a map), POST/GET
//     (standalone SSE)/DELETE, with an event store so that a GET with
//     Last-Event-ID resumes a stream. --json: enableJsonResponse (POSTs
//     answer application/json; then notifications and server requests made
//     while a tool runs go on the standalone GET stream, since the SDK would
//     drop them). --stateless: no session id, a fresh server and transport
//     for each POST; GET and DELETE answer 405; sample, roots and elicit
//     answer isError at once (the client's answer would come in another
//     POST, to another server); logging/setLevel and subscriptions last
//     one request.
//   sse: the legacy SSEServerTransport; GET /sse gives the endpoint
//     /messages?sessionId=ID, POST it there.
//
// Tools: echo {text}; add {a,b} (text and structuredContent {sum}, with an
// outputSchema); slow {ms,steps} (steps progress notifications over ms when
// the call has a progressToken, then "done"); fail (isError, "it failed");
// log {text} (notifications/message, level info, then "logged"); sample
// {prompt} (sampling/createMessage, returns the sampled text); roots (roots/
// list, returns JSON of the roots); elicit (elicitation/create for {name},
// returns JSON of the content); touch {uri} (notifications/resources/updated
// if this session subscribed to uri); t01..t25. Resource peer://hello
// ("hello"), template peer://item/{id} ("item <id>"), prompt greet {name}
// with completion of name from alice, albert, bob. Capabilities: logging
// (logging/setLevel filters the log tool), resources.subscribe.
import { randomUUID } from 'node:crypto';
import http from 'node:http';

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
	CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema,
	SubscribeRequestSchema, UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

console.log = console.error;	// stdout is JSON-RPC (stdio) or the PORT line
const log = (...a) => console.error('peer-server:', ...a);

const argv = process.argv.slice(2);
const mode = argv[0];
const opt = { json: false, stateless: false, page: 0 };
for (let i = 1; i < argv.length; i++) {
	if (argv[i] === '--json') opt.json = true;
	else if (argv[i] === '--stateless') opt.stateless = true;
	else if (argv[i] === '--page') opt.page = Number(argv[++i]);
	else { log(`unknown option ${argv[i]}`); process.exit(2); }
}
if (!['stdio', 'http', 'sse'].includes(mode)) {
	log('usage: peer-server.mjs stdio | http [--json] [--stateless] | sse [--page N]');
	process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// ---- the server ------------------------------------------------------------

function newServer() {
	const mcp = new McpServer({ name: 'peer-server', version: '1.0.0' }, {
		capabilities: { logging: {}, resources: { subscribe: true } },
	});
	const server = mcp.server;
	const subscribed = new Set();

	// A notification or a request "related" to the tool call goes on the
	// call's own stream; with --json there is none, so send it unrelated
	// (on the standalone GET stream).
	const notify = (extra, n) => opt.json ? server.notification(n) : extra.sendNotification(n);
	// A stateless server cannot get the answer (it comes in another POST, to
	// another server): fail at once rather than time out.
	const ask = (extra, r, schema) => {
		if (opt.stateless)
			throw new Error(`${r.method} needs a session: this server is stateless`);
		return opt.json ? server.request(r, schema) : extra.sendRequest(r, schema);
	};

	mcp.registerTool('echo', {
		description: 'Returns the text it is given.',
		inputSchema: { text: z.string() },
	}, async ({ text: t }) => text(t));

	mcp.registerTool('add', {
		description: 'Adds two numbers.',
		inputSchema: { a: z.number(), b: z.number() },
		outputSchema: { sum: z.number() },
	}, async ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { sum: a + b } }));

	mcp.registerTool('slow', {
		description: 'Sends STEPS progress notifications over MS milliseconds, then "done".',
		inputSchema: { ms: z.number().default(1000), steps: z.number().int().default(5) },
	}, async ({ ms, steps }, extra) => {
		const token = extra._meta?.progressToken;
		for (let i = 1; i <= steps; i++) {
			await sleep(ms / Math.max(steps, 1));
			if (extra.signal.aborted)
				return text('cancelled');
			if (token !== undefined)
				await notify(extra, { method: 'notifications/progress',
				    params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } });
		}
		if (steps <= 0)
			await sleep(ms);
		return text('done');
	});

	mcp.registerTool('fail', { description: 'Always fails.' },
	    async () => ({ ...text('it failed'), isError: true }));

	mcp.registerTool('log', {
		description: 'Sends a logging notification (info) with TEXT.',
		inputSchema: { text: z.string() },
	}, async ({ text: t }, extra) => {
		if (!server.isMessageIgnored('info', extra.sessionId))
			await notify(extra, { method: 'notifications/message',
			    params: { level: 'info', logger: 'peer', data: t } });
		return text('logged');
	});

	mcp.registerTool('sample', {
		description: "Asks the client's model (sampling/createMessage).",
		inputSchema: { prompt: z.string() },
	}, async ({ prompt }, extra) => {
		const r = await ask(extra, { method: 'sampling/createMessage', params: {
			messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
			maxTokens: 100,
		} }, CreateMessageResultSchema);
		const c = Array.isArray(r.content) ? r.content[0] : r.content;
		return text(c?.text ?? '');
	});

	mcp.registerTool('roots', { description: "Returns the client's roots (roots/list) as JSON." },
	    async (extra) => {
		const r = await ask(extra, { method: 'roots/list' }, ListRootsResultSchema);
		return text(JSON.stringify(r.roots));
	});

	mcp.registerTool('elicit', { description: 'Asks the user for a name (elicitation/create).' },
	    async (extra) => {
		const r = await ask(extra, { method: 'elicitation/create', params: {
			message: 'What is your name?',
			requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
		} }, ElicitResultSchema);
		return text(JSON.stringify(r.content ?? null));
	});

	mcp.registerTool('touch', {
		description: 'Sends notifications/resources/updated for URI if it is subscribed.',
		inputSchema: { uri: z.string() },
	}, async ({ uri }, extra) => {
		if (!subscribed.has(uri))
			return text('not subscribed');
		await notify(extra, { method: 'notifications/resources/updated', params: { uri } });
		return text('touched');
	});

	for (let i = 1; i <= 25; i++) {
		const name = `t${String(i).padStart(2, '0')}`;
		mcp.registerTool(name, { description: `Filler tool ${i} (for pagination).` },
		    async () => text(name));
	}

	mcp.registerResource('hello', 'peer://hello', { mimeType: 'text/plain' },
	    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'hello' }] }));
	mcp.registerResource('item', new ResourceTemplate('peer://item/{id}', { list: undefined }),
	    { mimeType: 'text/plain' },
	    async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `item ${id}` }] }));

	mcp.registerPrompt('greet', {
		description: 'Greets NAME.',
		argsSchema: { name: completable(z.string(),
		    (v) => ['alice', 'albert', 'bob'].filter((n) => n.startsWith(v ?? ''))) },
	}, ({ name }) => ({
		messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${name}` } }],
	}));

	server.setRequestHandler(SubscribeRequestSchema, async (req) => {
		subscribed.add(req.params.uri);
		return {};
	});
	server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
		subscribed.delete(req.params.uri);
		return {};
	});

	// --page N: cut the SDK's one-page tools/list into pages; the cursor is
	// the index of the page's first tool.
	if (opt.page > 0) {
		const whole = server._requestHandlers.get('tools/list');
		server._requestHandlers.set('tools/list', async (req, extra) => {
			const all = (await whole(req, extra)).tools;
			const from = req.params?.cursor === undefined ? 0 : Number(req.params.cursor);
			if (!Number.isInteger(from) || from < 0 || from > all.length)
				throw Object.assign(new Error('invalid cursor'), { code: -32602 });
			const to = from + opt.page;
			return { tools: all.slice(from, to), ...(to < all.length ? { nextCursor: String(to) } : {}) };
		});
	}
	return mcp;
}

// ---- an event store, for Last-Event-ID --------------------------------------

// Event ids are "<n>" counting up in this store (one per session); replay
// sends the events of the same stream after the given one.
class EventStore {
	constructor() { this.n = 0; this.events = new Map(); }
	async storeEvent(streamId, message) {
		const id = String(++this.n);
		this.events.set(id, { streamId, message });
		return id;
	}
	async replayEventsAfter(lastEventId, { send }) {
		const last = this.events.get(lastEventId);
		if (!last)
			return '';
		for (const [id, e] of this.events)
			if (Number(id) > Number(lastEventId) && e.streamId === last.streamId)
				await send(id, e.message);
		return last.streamId;
	}
}

// ---- the transports -----------------------------------------------------------

function jsonError(res, status, code, message) {
	res.writeHead(status, { 'Content-Type': 'application/json' });
	res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

function listen(handler) {
	const srv = http.createServer((req, res) => {
		handler(req, res).catch((e) => {
			log(`${req.method} ${req.url}: ${e.stack ?? e}`);
			if (!res.headersSent)
				jsonError(res, 500, -32603, 'internal error');
			else
				res.destroy();
		});
	});
	srv.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${srv.address().port}\n`));
	return srv;
}

// Streamable HTTP, stateful: sessions by Mcp-Session-Id.
function serveStateful() {
	const sessions = new Map();	// session id -> transport
	return listen(async (req, res) => {
		const url = new URL(req.url, 'http://x');
		if (url.pathname !== '/mcp')
			return jsonError(res, 404, -32000, 'not found');
		const sid = req.headers['mcp-session-id'];
		if (sid !== undefined) {
			const t = sessions.get(sid);
			if (!t)
				return jsonError(res, 404, -32001, 'Session not found');
			return t.handleRequest(req, res);
		}
		if (req.method !== 'POST')
			return jsonError(res, 400, -32000, 'Bad Request: no session id');
		// No session id: a new session if this is an initialize (the
		// transport answers 400 to anything else).
		const t = new StreamableHTTPServerTransport({
			sessionIdGenerator: () => randomUUID().replaceAll('-', ''),
			enableJsonResponse: opt.json,
			eventStore: new EventStore(),
			onsessioninitialized: (id) => { sessions.set(id, t); log(`session ${id}`); },
			onsessionclosed: (id) => { sessions.delete(id); log(`session ${id} deleted`); },
		});
		t.onclose = () => { if (t.sessionId) sessions.delete(t.sessionId); };
		const mcp = newServer();
		await mcp.connect(t);
		await t.handleRequest(req, res);
		if (t.sessionId === undefined)
			await mcp.close();
	});
}

// Streamable HTTP, stateless: a new server and transport for each POST.
function serveStateless() {
	return listen(async (req, res) => {
		const url = new URL(req.url, 'http://x');
		if (url.pathname !== '/mcp')
			return jsonError(res, 404, -32000, 'not found');
		if (req.method !== 'POST') {
			res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' });
			return res.end(JSON.stringify({ jsonrpc: '2.0', id: null,
			    error: { code: -32000, message: 'Method not allowed' } }));
		}
		const mcp = newServer();
		const t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: opt.json });
		res.on('close', () => { t.close(); mcp.close(); });
		await mcp.connect(t);
		await t.handleRequest(req, res);
	});
}

// The legacy HTTP+SSE transport (protocol 2024-11-05).
function serveSse() {
	const sessions = new Map();	// session id -> SSEServerTransport
	return listen(async (req, res) => {
		const url = new URL(req.url, 'http://x');
		if (req.method === 'GET' && url.pathname === '/sse') {
			const t = new SSEServerTransport('/messages', res);
			sessions.set(t.sessionId, t);
			t.onclose = () => sessions.delete(t.sessionId);
			log(`sse session ${t.sessionId}`);
			return newServer().connect(t);
		}
		if (req.method === 'POST' && url.pathname === '/messages') {
			const t = sessions.get(url.searchParams.get('sessionId') ?? '');
			if (!t)
				return jsonError(res, 404, -32001, 'Session not found');
			return t.handlePostMessage(req, res);
		}
		jsonError(res, 404, -32000, 'not found');
	});
}

// ---- main ---------------------------------------------------------------------

if (mode === 'stdio') {
	await newServer().connect(new StdioServerTransport());
	process.stdin.on('end', () => process.exit(0));
} else {
	const srv = mode === 'sse' ? serveSse() : opt.stateless ? serveStateless() : serveStateful();
	const stop = () => { srv.closeAllConnections?.(); srv.close(() => process.exit(0)); setTimeout(() => process.exit(0), 500).unref(); };
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
}
