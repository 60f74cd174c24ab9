// tasks-redis.mjs: what a shared task costs (bench/run-tasks-redis.sh).
// For each setup named on the command line (NAME=PORT_MAKE,PORT_ASK):
// a 2025-11-25 session opened on PORT_MAKE, N tasks of sleep 0 made
// there, and each one's tasks/get then tasks/result asked on PORT_ASK,
// one request at a time over one keep-alive connection. Prints, per
// setup, the median microseconds of tools/call (the task made),
// tasks/get and tasks/result, as one JSON line.
import http from 'node:http';

const N = Number(process.env.N || 300);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const H = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

function post(port, body, headers = {}) {
	return new Promise((resolve, reject) => {
		const t0 = process.hrtime.bigint();
		const rq = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', agent,
			headers: { ...H, ...headers } }, (res) => {
			let data = '';
			res.setEncoding('utf8');
			res.on('data', (d) => { data += d; });
			res.on('end', () => {
				const us = Number(process.hrtime.bigint() - t0) / 1000;
				const line = data.split('\n').find((l) => l.startsWith('data: {')) ?? data;
				let msg = null;
				try { msg = JSON.parse(line.replace(/^data: /, '')); } catch { /* none */ }
				resolve({ us, msg, headers: res.headers });
			});
		});
		rq.on('error', reject);
		rq.end(JSON.stringify(body));
	});
}

const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };

for (const arg of process.argv.slice(2)) {
	const [name, ports] = arg.split('=');
	const [make, askp] = ports.split(',').map(Number);
	let r = await post(make, { jsonrpc: '2.0', id: 0, method: 'initialize', params: {
		protocolVersion: '2025-11-25', capabilities: { tasks: {} }, clientInfo: { name: 'bench', version: '1' } } });
	const sid = r.headers['mcp-session-id'];
	const S = { 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' };
	await post(make, { jsonrpc: '2.0', method: 'notifications/initialized' }, S);
	const made = [], got = [], res = [];
	let bad = 0;
	for (let i = 1; i <= N; i++) {
		r = await post(make, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'sleep',
			arguments: { ms: 0 }, task: { ttl: 60000 } } }, S);
		made.push(r.us);
		const id = r.msg?.result?.task?.taskId;
		r = await post(askp, { jsonrpc: '2.0', id: `r${i}`, method: 'tasks/result', params: { taskId: id } }, S);
		res.push(r.us);
		bad += r.msg?.result?.content === undefined;
		r = await post(askp, { jsonrpc: '2.0', id: `g${i}`, method: 'tasks/get', params: { taskId: id } }, S);
		got.push(r.us);
		bad += r.msg?.result?.status !== 'completed';
	}
	await new Promise((resolve) => {
		const rq = http.request({ host: '127.0.0.1', port: make, path: '/mcp', method: 'DELETE', agent,
			headers: S }, (x) => { x.resume(); x.on('end', resolve); });
		rq.end();
	});
	console.log(JSON.stringify({ name, n: N, bad, create_us: median(made), get_us: median(got),
		result_us: median(res) }));
}
agent.destroy();
