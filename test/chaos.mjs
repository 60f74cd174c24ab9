// chaos.mjs PORT SECONDS SEED: random Streamable HTTP traffic against
// build/san/conformance-server (test/chaos.sh; test/tsan.sh: build/tsan/): 30 clients for SECONDS
// seconds open sessions, call every kind of tool (progress, logging,
// sampling and elicitation answered or not, test_reconnection), open and
// drop standalone streams, resume with Last-Event-ID (real and made-up
// ids), cancel, send roots/list_changed, garbage and batches, DELETE, and
// abort requests at random moments. The choices come from a seeded
// generator (SEED); the timing is the machine's. Prints one JSON line of
// counts: requests, transport errors, and the HTTP statuses seen.
import http from 'node:http';

const [port, secs, seed] = [+process.argv[2], +process.argv[3], +(process.argv[4] || 1)];
const end = Date.now() + secs * 1000;
const A = 'application/json, text/event-stream';
let state = seed >>> 0 || 1;
const rnd = (n) => {	// xorshift32
	state ^= state << 13; state >>>= 0;
	state ^= state >>> 17;
	state ^= state << 5; state >>>= 0;
	return state % n;
};
const stats = { req: 0, err: 0, codes: {} };

// One request; resolves with what came, also when aborted at ABORTMS.
function req(method, headers, body, abortMs) {
	return new Promise((res) => {
		let d = '', done = false;
		const finish = (s, h) => { if (!done) { done = true; res({ s, h: h || {}, d }); } };
		const h = { ...headers };
		if (body !== undefined) {
			h['Content-Type'] = 'application/json';
			h['Content-Length'] = Buffer.byteLength(body);
		}
		const r = http.request({ host: '127.0.0.1', port, method, path: '/mcp', headers: h, agent: false },
		    (resp) => {
			stats.codes[resp.statusCode] = (stats.codes[resp.statusCode] || 0) + 1;
			resp.setEncoding('utf8');
			resp.on('data', (c) => { d += c; });
			resp.on('end', () => finish(resp.statusCode, resp.headers));
			resp.on('error', () => finish(-1, resp.headers));
		});
		r.on('error', () => { if (!done) stats.err++; finish(0); });
		if (abortMs !== undefined)
			setTimeout(() => { r.destroy(); finish(-2); }, abortMs);
		stats.req++;
		r.end(body);
	});
}

const sessions = [];
async function open() {
	const v = ['2025-11-25', '2025-06-18', '2025-03-26'][rnd(3)];
	const r = await req('POST', { Accept: A }, JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize',
	    params: { protocolVersion: v, capabilities: { sampling: {}, elicitation: {}, roots: {} },
	    clientInfo: { name: 'chaos', version: '1' } } }));
	const sid = r.h['mcp-session-id'];
	if (sid) {
		await req('POST', { Accept: A, 'Mcp-Session-Id': sid },
		    '{"jsonrpc":"2.0","method":"notifications/initialized"}');
		sessions.push(sid);
	}
}

const tools = ['test_simple_text', 'test_tool_with_progress', 'test_reconnection', 'test_sampling',
    'test_elicitation', 'test_tool_with_logging', 'test_image_content', 'no_such_tool', 'test_error_handling'];
const garbage = ['{x', '[]', '{"jsonrpc":"2.0"}', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
    '{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"test://static-text"}}',
    '{"jsonrpc":"2.0","id":"s1","result":{}}', '"\\u0000"'];
let id = 1;

async function one() {
	if (sessions.length < 5 || rnd(10) === 0)
		return open();
	const sid = sessions[rnd(sessions.length)];
	const H = { Accept: A, 'Mcp-Session-Id': sid };
	const S = { Accept: 'text/event-stream', 'Mcp-Session-Id': sid };
	switch (rnd(10)) {
	case 0: case 1: case 2: case 3: {
		const t = tools[rnd(tools.length)];
		const asks = t === 'test_sampling' || t === 'test_elicitation';
		const body = JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: t,
		    arguments: t === 'test_sampling' ? { prompt: 'p' } : t === 'test_elicitation' ? { message: 'm' } : {},
		    _meta: { progressToken: id } } });
		const r = await req('POST', H, body, asks || rnd(3) === 0 ? 100 + rnd(900) : undefined);
		const m = /"id":"(s\d+)","method":"(sampling|elicitation)/.exec(r.d);
		if (m && rnd(3))
			await req('POST', H, JSON.stringify({ jsonrpc: '2.0', id: m[1], result: m[2] === 'sampling' ?
			    { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' } :
			    { action: 'decline' } }));
		const ids = [...r.d.matchAll(/^id: (\d+-\d+)$/gm)].map((x) => x[1]);
		if (ids.length && rnd(2))
			await req('GET', { ...S, 'Last-Event-ID': ids[ids.length - 1] }, undefined, 200 + rnd(1500));
		break;
	}
	case 4:
		await req('GET', S, undefined, rnd(1000));
		break;
	case 5:
		await req('GET', { ...S, 'Last-Event-ID': `${rnd(40)}-${rnd(6)}` }, undefined, rnd(500));
		break;
	case 6:
		if (rnd(4) === 0) {
			await req('DELETE', { 'Mcp-Session-Id': sid });
			const i = sessions.indexOf(sid);
			if (i >= 0)
				sessions.splice(i, 1);
		}
		break;
	case 7:
		await req('POST', H, garbage[rnd(garbage.length)]);
		break;
	case 8:
		await req('POST', H, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled',
		    params: { requestId: id - 1 - rnd(3) } }));
		break;
	case 9:
		await req('POST', H, '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
		break;
	}
}

await Promise.all(Array.from({ length: 30 }, async () => {
	while (Date.now() < end)
		await one();
}));
console.log(JSON.stringify(stats));
