// quirk-server.mjs: a deliberately bad MCP server, for the fault tests of
// libmcp's CLIENT. Raw JSON-RPC, no SDK, so that it can misbehave. Node 20,
// no npm packages.
//
//   node quirk-server.mjs stdio QUIRK
//   node quirk-server.mjs http QUIRK   # Streamable HTTP at /mcp on 127.0.0.1,
//                                      # port 0; prints `PORT <n>` on stdout
//
// It answers initialize (protocolVersion: the client's if it is one of
// VERSIONS, else 2025-11-25; capabilities {tools:{}}; serverInfo {name:
// "quirk", version:"1"}), ignores notifications, answers ping with {},
// tools/list with one tool "q", other requests with -32601; tools/call
// answers text "ok", except as QUIRK says.
//
// stdio quirks:
//   junk     before every answer, the lines "hello", "{not json", "[1,2", ""
//   split    every answer in 3 chunks, 50 ms apart, cut mid-JSON
//   huge     tools/call: one text content of 8 MiB of "x" (one line)
//   crlf     every line ends with \r\n
//   wrongid  tools/call: first responses with ids 999999 and "nope", then
//            the right one
//   silent   never answers tools/call (exits on EOF)
//   die      exit(3) on tools/call, no answer
//   request  tools/call: first sends the requests {"id":"srv1","method":
//            "x/unknown"} and {"id":"srv2","method":"ping"}, waits (5 s at
//            most) for the client's responses, then answers with text JSON
//            {"ping": <response to srv2>, "unknown": <response to srv1>}
//            (null for one that did not come)
//   bom      its output starts with a UTF-8 byte order mark
//   bigask   tools/call: first sends a sampling/createMessage request of
//            5 MiB (over the client's 4 MiB limit), waits for the client's
//            answer, and answers the call with text of its JSON
//   mute     never answers anything, initialize included (exits on EOF)
//   preinit  never answers a request before initialize (a legacy server
//            that ignores what comes first: a 2026-07-28 client's
//            server/discover probe must time out), then behaves
//   stubborn behaves, but ignores SIGTERM and the end of its stdin (only
//            SIGKILL ends it), and writes "stubborn: <method>" on stderr
//            for every request
//   badxh    a 2026-07-28 server: answers server/discover (supportedVersions
//            ["2026-07-28"], capabilities {tools:{}}) and every result has
//            resultType complete and _meta serverInfo; tools/list lists q
//            (x-mcp-header Region on a string: good) and bad-name (a header
//            name with a space), bad-type (on an object) and bad-dup
//            (Region twice, whatever the case), which a client must leave
//            out; other methods -32601
//   ok       behaves
//
// http quirks (initialize gets an Mcp-Session-Id, random hex; a POST of
// notifications or responses only gets 202; an unknown session id 404, none
// on a request other than initialize 400; DELETE /mcp ends a session; a GET
// /mcp without Last-Event-ID gets 405; GET /debug answers JSON
// {"lastEventIds": [every Last-Event-ID header received, in order]}):
//   ok         POSTs answer text/event-stream: one event per message, each
//              with an `id: <n>` line (n counts per session from 1), the
//              stream ends after the response
//   multidata  as ok, but the response's JSON is cut after a few commas or
//              colons (between tokens) into several `data:` lines, and every
//              line ends with CRLF
//   gone       as ok, but a session is forgotten after its first tools/call
//              has been answered: later requests with its id get 404 (a new
//              initialize without a session id gives a new one)
//   drop       tools/call: event `id: e<3k+1>` with empty data (priming), then
//              if the request has a progressToken one progress notification
//              event `id: e<3k+2>`, then the socket is destroyed, no response
//              (k counts the dropped calls of the session from 0: the first
//              gets e1, e2). A GET /mcp with the session id and Last-Event-ID
//              e<3k+1> or e<3k+2> gets text/event-stream with the response
//              as event `id: e<3k+3>`, then the stream ends
//   foreign    as legacy, but the endpoint event names another origin
//              (http://127.0.0.2:<port>/messages), where the client's
//              headers must not go
//   legacy     POST, GET and DELETE /mcp answer 405; the old HTTP+SSE
//              transport instead: GET /sse sends `event: endpoint` with data
//              /messages?sessionId=<id>; POST /messages?sessionId=<id>
//              answers 202 and the answers come as `event: message` on the
//              GET /sse stream
//   silent     tools/call: 200 text/event-stream headers, then nothing: the
//              POST stays open
//   wrongtype  once initialize has succeeded, every POST carrying a request
//              gets 200, Content-Type text/html, body <html>oops</html>
import { randomBytes } from 'node:crypto';
import http from 'node:http';

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const STDIO_QUIRKS = ['junk', 'split', 'huge', 'crlf', 'wrongid', 'silent', 'die', 'request', 'bom', 'bigask', 'mute', 'preinit', 'stubborn', 'badxh', 'ok'];
const HTTP_QUIRKS = ['ok', 'multidata', 'gone', 'drop', 'legacy', 'foreign', 'silent', 'wrongtype'];

const [mode, quirk] = process.argv.slice(2);
if (!((mode === 'stdio' && STDIO_QUIRKS.includes(quirk)) || (mode === 'http' && HTTP_QUIRKS.includes(quirk)))) {
	process.stderr.write(`usage: quirk-server.mjs stdio ${STDIO_QUIRKS.join('|')}\n` +
	    `       quirk-server.mjs http ${HTTP_QUIRKS.join('|')}\n`);
	process.exit(2);
}
const log = (s) => process.stderr.write(`quirk-server(${mode} ${quirk}): ${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the protocol, shared by both modes --------------------------------------

const result = (id, r) => ({ jsonrpc: '2.0', id, result: r });
const error = (id, code, message) => ({ jsonrpc: '2.0', id, error: { code, message } });
const textResult = (id, text) => result(id, { content: [{ type: 'text', text }] });
const isRequest = (m) => m && typeof m.method === 'string' && m.id !== undefined && m.id !== null;

// badxh: a 2026-07-28 server whose tools/list has bad x-mcp-header annotations.
const MODERN_META = { 'io.modelcontextprotocol/serverInfo': { name: 'quirk', version: '1' } };
const xhTool = (name, properties) => ({ name, description: 'x-mcp-header', inputSchema: { type: 'object', properties } });
function answerBadxh(m) {
	const done = (id, r) => result(id, { resultType: 'complete', _meta: MODERN_META, ...r });
	switch (m.method) {
	case 'server/discover':
		return done(m.id, { supportedVersions: ['2026-07-28'], capabilities: { tools: {} } });
	case 'tools/list':
		return done(m.id, { tools: [
			xhTool('q', { region: { type: 'string', 'x-mcp-header': 'Region' } }),
			xhTool('bad-name', { region: { type: 'string', 'x-mcp-header': 'Bad Name' } }),
			xhTool('bad-type', { o: { type: 'object', 'x-mcp-header': 'O' } }),
			xhTool('bad-dup', { a: { type: 'string', 'x-mcp-header': 'Region' }, b: { type: 'string', 'x-mcp-header': 'region' } }),
		] });
	case 'tools/call':
		return done(m.id, { content: [{ type: 'text', text: 'ok' }] });
	default: return error(m.id, -32601, `Method not found: ${m.method}`);
	}
}

// The answer to any request but tools/call.
function answer(m) {
	if (quirk === 'badxh')
		return answerBadxh(m);
	switch (m.method) {
	case 'initialize': {
		const v = m.params?.protocolVersion;
		return result(m.id, {
			protocolVersion: VERSIONS.includes(v) ? v : '2025-11-25',
			capabilities: { tools: {} },
			serverInfo: { name: 'quirk', version: '1' },
		});
	}
	case 'ping': return result(m.id, {});
	case 'tools/list':
		return result(m.id, { tools: [{ name: 'q', description: 'a quirk', inputSchema: { type: 'object' } }] });
	default: return error(m.id, -32601, `Method not found: ${m.method}`);
	}
}

// ---- stdio --------------------------------------------------------------------

function serveStdio() {
	const eol = quirk === 'crlf' ? '\r\n' : '\n';
	const waiting = new Map();	// id of a request of ours -> resolve(response)
	let queue = Promise.resolve();	// writes, one after the other
	const raw = (s) => new Promise((r) => process.stdout.write(s, r));
	if (quirk === 'bom')
		process.stdout.write('\ufeff');
	if (quirk === 'stubborn') {
		process.on('SIGTERM', () => {});
		setInterval(() => {}, 1 << 30);	// alive after stdin ends
	}
	const send = (msg) => {
		queue = queue.then(async () => {
			const line = JSON.stringify(msg) + eol;
			if (quirk === 'junk')
				await raw(['hello', '{not json', '[1,2', ''].join(eol) + eol);
			if (quirk === 'split') {
				const a = Math.floor(line.length / 3), b = Math.floor(2 * line.length / 3);
				await raw(line.slice(0, a));
				await sleep(50);
				await raw(line.slice(a, b));
				await sleep(50);
				await raw(line.slice(b));
			} else {
				await raw(line);
			}
		});
		return queue;
	};

	async function toolsCall(m) {
		switch (quirk) {
		case 'silent': return;
		case 'die': return queue.then(() => process.exit(3));	// after the earlier answers
		case 'huge': return send(textResult(m.id, 'x'.repeat(8 * 1024 * 1024)));
		case 'wrongid':
			send(textResult(999999, 'wrong id'));
			send(textResult('nope', 'wrong id'));
			return send(textResult(m.id, 'ok'));
		case 'request': {
			const ask = (id, method, params) => {
				const got = new Promise((r) => {
					waiting.set(id, r);
					setTimeout(() => r(null), 5000);
				});
				send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
				return got;
			};
			const [unknown, ping] = await Promise.all([ask('srv1', 'x/unknown', {}), ask('srv2', 'ping')]);
			return send(textResult(m.id, JSON.stringify({ ping, unknown })));
		}
		case 'bigask': {
			const got = new Promise((r) => {
				waiting.set('big1', r);
				setTimeout(() => r(null), 5000);
			});
			send({ jsonrpc: '2.0', id: 'big1', method: 'sampling/createMessage',
			    params: { messages: [{ role: 'user', content: { type: 'text', text: 'y'.repeat(5 * 1024 * 1024) } }], maxTokens: 1 } });
			return send(textResult(m.id, JSON.stringify(await got)));
		}
		default: return send(textResult(m.id, 'ok'));
		}
	}

	let buf = '';
	let initialized = false;
	process.stdin.setEncoding('utf8');
	process.stdin.on('data', (d) => {
		buf += d;
		let nl;
		while ((nl = buf.indexOf('\n')) >= 0) {
			const line = buf.slice(0, nl).replace(/\r$/, '');
			buf = buf.slice(nl + 1);
			let m;
			try { m = JSON.parse(line); } catch { if (line.trim()) log(`not JSON: ${line.slice(0, 80)}`); continue; }
			if (isRequest(m) && quirk === 'stubborn')
				process.stderr.write(`stubborn: ${m.method}\n`);
			if (isRequest(m) && quirk === 'mute')
				continue;
			if (isRequest(m) && quirk === 'preinit' && !initialized && m.method !== 'initialize')
				continue;
			if (isRequest(m) && m.method === 'initialize')
				initialized = true;
			if (isRequest(m))
				m.method === 'tools/call' && quirk !== 'badxh' ? toolsCall(m) : send(answer(m));
			else if (m && m.method === undefined && waiting.has(m.id)) {
				waiting.get(m.id)(m);
				waiting.delete(m.id);
			}
		}
	});
	process.stdin.on('end', () => quirk === 'stubborn' ||
	    queue.then(() => process.exit(0)));
}

// ---- Streamable HTTP ----------------------------------------------------------

// JSON text cut into lines between tokens: after a few of the commas and
// colons that are outside strings (the SSE data lines are joined with "\n",
// which JSON allows between tokens).
function splitJson(s, parts = 4) {
	const cuts = [];
	let inStr = false;
	for (let i = 0; i < s.length; i++) {
		const c = s[i];
		if (inStr) {
			if (c === '\\') i++;
			else if (c === '"') inStr = false;
		} else if (c === '"') inStr = true;
		else if (c === ',' || c === ':') cuts.push(i + 1);
	}
	const pick = [...new Set(Array.from({ length: parts - 1 },
	    (_, k) => cuts[Math.floor((k + 1) * cuts.length / parts)]).filter((x) => x !== undefined))];
	const lines = [];
	let from = 0;
	for (const p of pick) { lines.push(s.slice(from, p)); from = p; }
	lines.push(s.slice(from));
	return lines;
}

function serveHttp() {
	const sessions = new Map();	// id -> { n, drops, pending: Map(lastEventId -> response), sse }
	const lastEventIds = [];
	const eol = quirk === 'multidata' ? '\r\n' : '\n';

	const newSession = () => {
		const id = randomBytes(16).toString('hex');
		const s = { id, n: 0, drops: 0, pending: new Map(), initialized: false };
		sessions.set(id, s);
		return s;
	};
	const event = (msg, id, name = 'message') => {
		const json = JSON.stringify(msg);
		const data = quirk === 'multidata' && msg.id !== undefined && msg.method === undefined
		    ? splitJson(json) : [json];
		return [`event: ${name}`, ...(id !== undefined ? [`id: ${id}`] : []),
		    ...data.map((d) => `data: ${d}`), '', ''].join(eol);
	};
	const sseHead = (res, sid) => res.writeHead(200, { 'Content-Type': 'text/event-stream',
	    'Cache-Control': 'no-cache', ...(sid ? { 'Mcp-Session-Id': sid } : {}) });
	const jsonReply = (res, status, msg, extra = {}) => {
		res.writeHead(status, { 'Content-Type': 'application/json', ...extra });
		res.end(msg === undefined ? '' : JSON.stringify(msg));
	};
	const readBody = (req) => new Promise((resolve) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
	});

	// The old HTTP+SSE transport (quirk legacy).
	async function legacy(req, res, url) {
		if (req.method === 'GET' && url.pathname === '/sse') {
			const s = newSession();
			s.sse = res;
			res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
			const where = quirk === 'foreign' ? `http://127.0.0.2:${req.socket.localPort}/messages` : '/messages';
			res.write(`event: endpoint\ndata: ${where}?sessionId=${s.id}\n\n`);
			req.on('close', () => sessions.delete(s.id));
			return;
		}
		if (req.method === 'POST' && url.pathname === '/messages') {
			const s = sessions.get(url.searchParams.get('sessionId') ?? '');
			if (!s)
				return jsonReply(res, 404, error(null, -32001, 'Session not found'));
			let m;
			try { m = JSON.parse(await readBody(req)); } catch { return jsonReply(res, 400, error(null, -32700, 'Parse error')); }
			res.writeHead(202).end();
			if (isRequest(m))
				s.sse.write(event(m.method === 'tools/call' ? textResult(m.id, 'ok') : answer(m)));
			return;
		}
		jsonReply(res, url.pathname === '/mcp' ? 405 : 404, error(null, -32000, 'Method not allowed'),
		    url.pathname === '/mcp' ? { Allow: 'GET' } : {});
	}

	// GET /mcp: only the resumption of a dropped stream (quirk drop).
	function get(req, res, s) {
		const last = req.headers['last-event-id'];
		if (last === undefined)
			return jsonReply(res, 405, error(null, -32000, 'Method not allowed'), { Allow: 'POST, DELETE' });
		const p = s.pending.get(last);
		if (!p)
			return jsonReply(res, 400, error(null, -32000, `unknown Last-Event-ID ${last}`));
		sseHead(res, s.id);
		res.end(event(p.response, p.eventId));
	}

	async function post(req, res, sid) {
		let m;
		try { m = JSON.parse(await readBody(req)); } catch { return jsonReply(res, 400, error(null, -32700, 'Parse error')); }
		if (Array.isArray(m))
			return jsonReply(res, 400, error(null, -32600, 'batches are not supported'));
		let s;
		if (m?.method === 'initialize' && sid === undefined) {
			s = newSession();
		} else if (sid === undefined) {
			return jsonReply(res, 400, error(m?.id ?? null, -32000, 'Bad Request: no Mcp-Session-Id'));
		} else if (!(s = sessions.get(sid))) {
			return jsonReply(res, 404, error(m?.id ?? null, -32001, 'Session not found'));
		}
		if (!isRequest(m))
			return res.writeHead(202).end();
		if (quirk === 'wrongtype' && s.initialized) {
			res.writeHead(200, { 'Content-Type': 'text/html' });
			return res.end('<html>oops</html>');
		}
		if (m.method === 'initialize')
			s.initialized = true;
		if (m.method !== 'tools/call') {
			sseHead(res, s.id);
			return res.end(event(answer(m), ++s.n));
		}
		switch (quirk) {
		case 'silent':
			sseHead(res, s.id);
			res.flushHeaders();
			return;
		case 'drop': {
			const k = 3 * s.drops++;
			const p = { response: textResult(m.id, 'ok'), eventId: `e${k + 3}` };
			s.pending.set(`e${k + 1}`, p);
			s.pending.set(`e${k + 2}`, p);
			sseHead(res, s.id);
			res.write(`id: e${k + 1}\ndata: \n\n`);
			const token = m.params?._meta?.progressToken;
			if (token !== undefined)
				res.write(event({ jsonrpc: '2.0', method: 'notifications/progress',
				    params: { progressToken: token, progress: 1, total: 2 } }, `e${k + 2}`));
			await sleep(50);	// let the events leave before the cut
			return res.socket.destroy();
		}
		case 'gone':
			sseHead(res, s.id);
			res.end(event(textResult(m.id, 'ok'), ++s.n));
			sessions.delete(s.id);
			return;
		default:
			sseHead(res, s.id);
			return res.end(event(textResult(m.id, 'ok'), ++s.n));
		}
	}

	const srv = http.createServer(async (req, res) => {
		try {
			const url = new URL(req.url, 'http://x');
			if (req.headers['last-event-id'] !== undefined)
				lastEventIds.push(req.headers['last-event-id']);
			if (req.method === 'GET' && url.pathname === '/debug')
				return jsonReply(res, 200, { lastEventIds });
			if (quirk === 'legacy' || quirk === 'foreign')
				return legacy(req, res, url);
			if (url.pathname !== '/mcp')
				return jsonReply(res, 404, error(null, -32000, 'not found'));
			const sid = req.headers['mcp-session-id'];
			if (req.method === 'POST')
				return await post(req, res, sid);
			if (req.method !== 'GET' && req.method !== 'DELETE')
				return jsonReply(res, 405, error(null, -32000, 'Method not allowed'), { Allow: 'GET, POST, DELETE' });
			const s = sid === undefined ? undefined : sessions.get(sid);
			if (!s)
				return jsonReply(res, sid === undefined ? 400 : 404, error(null, -32001, 'Session not found'));
			if (req.method === 'DELETE') {
				sessions.delete(sid);
				return res.writeHead(200).end();
			}
			return get(req, res, s);
		} catch (e) {
			log(`${req.method} ${req.url}: ${e.stack ?? e}`);
			res.destroy();
		}
	});
	srv.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${srv.address().port}\n`));
	const stop = () => { srv.closeAllConnections(); srv.close(); process.exit(0); };
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
}

if (mode === 'stdio')
	serveStdio();
else
	serveHttp();
