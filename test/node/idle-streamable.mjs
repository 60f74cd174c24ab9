// idle-streamable.mjs PORT N: opens N Streamable HTTP sessions on
// http://127.0.0.1:PORT/mcp (initialize, then notifications/initialized,
// over 16 keep-alive connections, closed afterwards) and prints how many
// were opened; bench/idle-streamable.sh reads the server's RSS around it.
import http from 'node:http';
const [port, n] = [+process.argv[2], +process.argv[3]];
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(body, sid) {
	return new Promise((res, rej) => {
		const h = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
		if (sid) { h['Mcp-Session-Id'] = sid; h['MCP-Protocol-Version'] = '2025-06-18'; }
		const r = http.request({ port, host: '127.0.0.1', path: '/mcp', method: 'POST', agent, headers: h }, resp => {
			resp.resume(); resp.on('end', () => res(resp));
		});
		r.on('error', rej); r.end(body);
	});
}
const init = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'idle', version: '1' } } });
let ok = 0;
for (let i = 0; i < n; i += 16) {
	await Promise.all(Array.from({ length: Math.min(16, n - i) }, async () => {
		const r = await post(init);
		const sid = r.headers['mcp-session-id'];
		if (sid && (await post('{"jsonrpc":"2.0","method":"notifications/initialized"}', sid)).statusCode === 202) ok++;
	}));
}
agent.destroy();
console.log(ok);
