// bench-client-ts.mjs: the TypeScript SDK CLIENT side of a benchmark, to
// set against libmcp's client: connects the official SDK Client to a
// server, makes N tools/call of "echo" {text:"hi"} keeping C in flight,
// checks every answer's text is "hi", and prints one JSON line on stdout:
//
//   {"transport", "calls", "concurrency", "seconds" (wall time of the calls),
//    "calls_per_s", "cpu_ms" (user+system CPU of this node process during
//    the calls), "cpu_us_per_call"}
//
//   node bench-client-ts.mjs --transport stdio [--concurrency C] [--calls N] -- CMD ARGS...
//   node bench-client-ts.mjs --transport http|sse --url URL [--concurrency C] [--calls N]
//
// stdio spawns CMD with StdioClientTransport (its stderr passes through);
// http is StreamableHTTPClientTransport (URL e.g. http://127.0.0.1:P/mcp),
// sse the legacy SSEClientTransport (URL e.g. http://127.0.0.1:P/sse).
// Defaults: C 64, N 1000. Exits 1 if a call failed or answered wrong (the
// JSON line then has "errors" and the first "error"), 2 on bad usage.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

function usage(msg) {
	process.stderr.write(`bench-client-ts: ${msg}\nusage: bench-client-ts.mjs --transport stdio|http|sse ` +
	    '[--concurrency C] [--calls N] (--url URL | -- CMD ARGS...)\n');
	process.exit(2);
}

const opt = { transport: null, concurrency: 64, calls: 1000, url: null, cmd: [] };
{
	const a = process.argv.slice(2);
	for (let i = 0; i < a.length; i++) {
		const need = () => (i + 1 < a.length ? a[++i] : usage(`${a[i]} needs a value`));
		switch (a[i]) {
		case '--transport': opt.transport = need(); break;
		case '--concurrency': opt.concurrency = Number(need()); break;
		case '--calls': opt.calls = Number(need()); break;
		case '--url': opt.url = need(); break;
		case '--': opt.cmd = a.slice(i + 1); i = a.length; break;
		default: usage(`unknown option ${a[i]}`);
		}
	}
	if (!['stdio', 'http', 'sse'].includes(opt.transport))
		usage('--transport must be stdio, http or sse');
	if (!(Number.isInteger(opt.calls) && opt.calls > 0 && Number.isInteger(opt.concurrency) && opt.concurrency > 0))
		usage('--calls and --concurrency must be positive integers');
	if (opt.transport === 'stdio' ? opt.cmd.length === 0 : !opt.url)
		usage(opt.transport === 'stdio' ? 'stdio needs -- CMD ARGS...' : `${opt.transport} needs --url`);
}

const transport = opt.transport === 'stdio'
    ? new StdioClientTransport({ command: opt.cmd[0], args: opt.cmd.slice(1), stderr: 'inherit' })
    : opt.transport === 'http'
    ? new StreamableHTTPClientTransport(new URL(opt.url))
    : new SSEClientTransport(new URL(opt.url));
const client = new Client({ name: 'bench-client-ts', version: '1.0.0' });
await client.connect(transport);

let next = 0;
let errors = 0;
let firstError;
async function worker() {
	while (next < opt.calls) {
		next++;
		try {
			const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
			const t = r.content?.[0]?.text;
			if (r.isError || t !== 'hi')
				throw new Error(`wrong answer: ${JSON.stringify(r).slice(0, 200)}`);
		} catch (e) {
			errors++;
			firstError ??= e.message;
		}
	}
}

const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
await Promise.all(Array.from({ length: Math.min(opt.concurrency, opt.calls) }, worker));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;

const out = {
	transport: opt.transport,
	calls: opt.calls,
	concurrency: opt.concurrency,
	seconds: Number(seconds.toFixed(4)),
	calls_per_s: Math.round(opt.calls / seconds),
	cpu_ms: Math.round(cpuMs),
	cpu_us_per_call: Number((cpuMs * 1000 / opt.calls).toFixed(1)),
	...(errors ? { errors, error: firstError } : {}),
};
try { await client.close(); } catch { /* the server may be gone */ }
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(errors ? 1 : 0);
