// hostile.mjs: build/mcp-demo against a hostile or careless client over
// stdio: malformed input, oversized and deeply nested lines, duplicate
// ids, cancellations, floods, a full job queue and a client that stops
// reading. Prints TAP; exits 1 when an assertion fails. Node 20, no npm
// packages. Run from the repository root (test/hostile.sh does).
//
// It also exports the stdio server under test (Server, call, ping, ...)
// that test/shutdown.mjs uses; the tests run only when this file is the
// program. TAP and the waiting helpers come from test/node/harness.mjs.
import { pathToFileURL } from 'node:url';
import {
	Child, children, ok, runGroups, showJson as show, sleep, within,
} from './node/harness.mjs';

export const SERVER = process.env.MCP_DEMO || 'build/mcp-demo';
// The memory bounds below are for the plain build; AddressSanitizer's
// shadow memory, redzones and quarantine make every figure several
// times larger (make check SANITIZE=1), so they are scaled, not dropped.
const rssMiB = (n) => n * 1024 * (process.env.MCP_SANITIZE ? 8 : 1);

// ---- the server under test ---------------------------------------------

export const INIT = (version = '2025-11-25', id = 0) => ({
	jsonrpc: '2.0', id, method: 'initialize',
	params: { protocolVersion: version, capabilities: {},
	    clientInfo: { name: 'hostile', version: '1' } },
});
export const call = (id, name, args) => ({
	jsonrpc: '2.0', id, method: 'tools/call',
	params: { name, arguments: args },
});
export const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });
export const cancel = (requestId) => ({
	jsonrpc: '2.0', method: 'notifications/cancelled',
	params: { requestId, reason: 'test' },
});

/*
 * One mcp-demo child. Every line it writes is parsed and kept in msgs;
 * responses are also indexed by JSON.stringify(id) (id-less ones under
 * "none"). Lines that are not JSON go to bad.
 */
export class Server extends Child {
	constructor(args = []) {
		super(SERVER, args, ['pipe', 'pipe', 'pipe']);
		this.msgs = [];
		this.bad = [];
		this.byId = new Map();
		this.partial = '';
		this.stdoutEnded = false;
		this.proc.stdout.setEncoding('utf8');
		this.proc.stdout.on('data', (d) => this._data(d));
		this.proc.stdout.on('end', () => { this.stdoutEnded = true; this._wake(); });
		this.proc.stdin.on('error', (e) => { this.stdinError = e; });
	}

	_data(d) {
		const s = this.partial + d;
		let start = 0, i;
		while ((i = s.indexOf('\n', start)) >= 0) {
			this._line(s.slice(start, i));
			start = i + 1;
		}
		this.partial = s.slice(start);
		this._wake();
	}

	_line(line) {
		let m;
		try {
			m = JSON.parse(line);
		} catch {
			this.bad.push(line);
			return;
		}
		this.msgs.push(m);
		const key = m !== null && typeof m === 'object' && !Array.isArray(m) &&
		    'id' in m ? JSON.stringify(m.id) : 'none';
		if (!this.byId.has(key))
			this.byId.set(key, []);
		this.byId.get(key).push(m);
	}

	answers(id) {
		return this.byId.get(JSON.stringify(id)) || [];
	}

	noId() {
		return this.byId.get('none') || [];
	}

	// Waits for the first answer to ID; returns it, or undefined (at
	// once if the server is gone).
	async answer(id, ms = 10000) {
		await this.until(() => this.answers(id).length > 0 ||
		    this.exit !== null || this.spawnError !== undefined, ms);
		return this.answers(id)[0];
	}

	// Writes a string, Buffer or message (objects become one line).
	write(data) {
		if (typeof data === 'object' && !Buffer.isBuffer(data))
			data = JSON.stringify(data) + '\n';
		return new Promise((resolve) => {
			if (this.proc.stdin.destroyed || !this.proc.stdin.writable)
				return resolve(false);
			this.proc.stdin.write(data, (e) => resolve(!e));
		});
	}

	// Writes with back-pressure: waits for 'drain' when the pipe is full.
	async writeFlow(data) {
		if (typeof data === 'object' && !Buffer.isBuffer(data))
			data = JSON.stringify(data) + '\n';
		if (!this.proc.stdin.write(data))
			await new Promise((r) => {
				const f = () => { this.proc.stdin.off('close', f); this.proc.stdin.off('drain', f); r(); };
				this.proc.stdin.once('drain', f);
				this.proc.stdin.once('close', f);
			});
	}

	lines(...msgs) {
		return this.write(msgs.map((m) => typeof m === 'string' ? m : JSON.stringify(m)).join('\n') + '\n');
	}

	async init(version = '2025-11-25') {
		await this.lines(INIT(version, 'init'),
		    { jsonrpc: '2.0', method: 'notifications/initialized' });
		const r = await this.answer('init');
		if (!r || !r.result)
			throw new Error(`initialize failed: ${show(r)} ${this.spawnError || ''} ${this.stderr}`);
		return r;
	}

	// Ends stdin and waits up to ms for the exit; SIGKILL after that.
	async finish(ms = 10000) {
		this.proc.stdin.end();
		return this.waitExit(ms);
	}

	async waitExit(ms = 10000) {
		const t = await within(this.exited, ms);
		if (t === null) {
			this.proc.kill('SIGKILL');
			await this.exited;
		}
		return t;
	}
}

const isParseError = (m) => m && m.error && m.error.code === -32700 &&
    !('id' in m) && !('result' in m);
const isErr = (m, code) => m && m.error && m.error.code === code &&
    typeof m.error.message === 'string' && !('result' in m);

// Sends LINE (a string or Buffer, no newline), then a ping; checks that
// exactly CHECK-satisfying one id-less response arrived before the pong.
async function oneErrorThenPing(s, line, pingId, check, desc) {
	const before = s.noId().length;
	const nMsgs = s.msgs.length;
	await s.write(Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
	await s.write(ping(pingId));
	const pong = await s.answer(pingId);
	const errs = s.noId().slice(before);
	const between = s.msgs.slice(nMsgs);
	ok(pong && pong.result && errs.length === 1 && check(errs[0]) &&
	    between.length === 2, desc,
	    `got: ${show(between)}`, `stderr: ${s.stderr.slice(-400)}`);
}

// ---- the tests ---------------------------------------------------------

async function invalidJson() {
	const s = new Server();
	await s.init();
	const variants = [
		'{', '}', '[', ']', '{"a":}', '[1,]', '{"a" 1}', '{"a":1,}', '{,}',
		'[1 2]', 'tru', 'nul', 'falsey', '"unterminated', "{'a':1}",
		'{"jsonrpc":"2.0","id":1,"method":"ping"} x',
		'{"jsonrpc":"2.0","id":1,"method":"ping"}}',
		'{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}',
		'01', '1.', '-', '.5', '+1', '1e', '0x10', 'NaN', 'Infinity', '-Infinity',
		'{"a":"\\u12"}', '{"a":"\\uZZZZ"}', '{"a":"\\q"}', '{"a":"tab\there"}',
		'{"a":"new\u0001line"}', '\u001f', '/* c */ {}', '{"a":1} // c',
		'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":[1,2,}}',
		'{"jsonrpc":"2.0","id":8,"method":"ping",',
		'\u00a0{"jsonrpc":"2.0","id":9,"method":"ping"}',
		'{"jsonrpc":"2.0","id":10,"method":"ping"\u000b}',
	];
	let i = 0;
	for (const v of variants)
		await oneErrorThenPing(s, v, `p${i++}`, isParseError,
		    `invalid JSON ${JSON.stringify(v).slice(0, 60)}: one -32700 without an id`);
	// The ids in the broken lines must not have been answered.
	ok([1, 2, 7, 8, 9, 10].every((id) => s.answers(id).length === 0),
	    'no response carries an id read from a broken line',
	    show(s.msgs.filter((m) => [1, 2, 7, 8, 9, 10].includes(m.id))));
	await s.write(ping('end'));
	const r = await s.answer('end');
	ok(r && r.result, 'the server still answers after the invalid JSON');
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.bad.length === 0,
	    'exits 0 at EOF, every output line was JSON', show(ex), show(s.bad));
}

async function invalidUtf8() {
	const s = new Server();
	await s.init();
	const bad = {
		'0xff': [0xff], '0xfe': [0xfe], 'lone continuation 0x80': [0x80],
		'overlong NUL c0 80': [0xc0, 0x80], 'overlong c1 bf': [0xc1, 0xbf],
		'overlong e0 80 af': [0xe0, 0x80, 0xaf],
		'overlong f0 80 80 af': [0xf0, 0x80, 0x80, 0xaf],
		'surrogate ed a0 80': [0xed, 0xa0, 0x80],
		'surrogate ed bf bf': [0xed, 0xbf, 0xbf],
		'above U+10FFFF f4 90 80 80': [0xf4, 0x90, 0x80, 0x80],
		'f5 80 80 80': [0xf5, 0x80, 0x80, 0x80],
		'truncated c3': [0xc3], 'truncated e2 82': [0xe2, 0x82],
		'truncated f0 9f 98': [0xf0, 0x9f, 0x98],
	};
	let i = 0;
	for (const [name, bytes] of Object.entries(bad)) {
		const line = Buffer.concat([
			Buffer.from(`{"jsonrpc":"2.0","id":${100 + i},"method":"tools/call","params":{"name":"echo","arguments":{"text":"a`),
			Buffer.from(bytes), Buffer.from('b"}}}')]);
		await oneErrorThenPing(s, line, `u${i}`, isParseError,
		    `invalid UTF-8 (${name}) in a string: one -32700 without an id`);
		i++;
	}
	// Outside a string, and at the very end of the line.
	await oneErrorThenPing(s, Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":200,"method":"ping"'),
	    Buffer.from([0xff]), Buffer.from('}')]), 'u-out', isParseError,
	    'invalid UTF-8 between tokens: one -32700 without an id');
	await oneErrorThenPing(s, Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":201,"method":"ping"}'),
	    Buffer.from([0xe2])]), 'u-end', isParseError,
	    'a truncated UTF-8 sequence after the object: one -32700 without an id');
	ok(s.answers(100).length === 0 && s.answers(200).length === 0 &&
	    s.answers(201).length === 0, 'requests with invalid UTF-8 are not answered with their id');
	// Valid multi-byte UTF-8 (2, 3 and 4 bytes) goes through untouched.
	const text = 'é€😀 \u0800\uffff';
	await s.write(call('utf8', 'echo', { text }));
	const r = await s.answer('utf8');
	ok(r && r.result && r.result.content[0].text === text,
	    'valid UTF-8 (2-, 3- and 4-byte sequences) is echoed exactly', show(r));
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.bad.length === 0, 'the server lives on and exits 0', show(ex));
}

async function nulBytes() {
	const s = new Server();
	await s.init();
	const nul = Buffer.from([0]);
	const cases = {
		'a NUL between tokens': Buffer.concat([Buffer.from('{"jsonrpc":"2.0",'), nul,
		    Buffer.from('"id":300,"method":"ping"}')]),
		'a NUL inside a string': Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":301,"method":"pi'),
		    nul, Buffer.from('ng"}')]),
		'a line of one NUL': nul,
		'a NUL after the object': Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":302,"method":"ping"}'), nul]),
		'a NUL before the object': Buffer.concat([nul, Buffer.from('{"jsonrpc":"2.0","id":303,"method":"ping"}')]),
		'a line of NULs': Buffer.alloc(5000),
	};
	let i = 0;
	for (const [name, line] of Object.entries(cases))
		await oneErrorThenPing(s, line, `n${i++}`, isParseError,
		    `raw NUL byte (${name}): one -32700 without an id`);
	ok([300, 301, 302, 303].every((id) => s.answers(id).length === 0),
	    'no id from a line with a raw NUL is answered');
	// \u0000 is valid JSON: taken. echo reads it with "s%" and its length,
	// and sends it back whole.
	const n0 = s.msgs.length;
	await s.write('{"jsonrpc":"2.0","id":304,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\u0000b"}}}\n');
	await s.write(ping('n-esc'));
	await s.answer('n-esc');
	let r = await s.answer(304);
	ok(s.msgs.length - n0 === 2 && r && r.result && !r.result.isError &&
	    r.result.content[0].text === 'a\u0000b',
	    'an escaped \\u0000 is valid JSON: echo (s%) sends "a\\u0000b" back whole', show(s.msgs.slice(n0)));
	// "s" would hand the callback a string cut short: refused, clearly.
	await s.write('{"jsonrpc":"2.0","id":305,"method":"tools/call","params":{"name":"fail","arguments":{"message":"x\\u0000y"}}}\n');
	r = await s.answer(305);
	ok(r && r.result && r.result.isError === true &&
	    /message: .*\\u0000.*"s%"/.test(r.result.content[0].text),
	    'a \\u0000 read by "s" (fail\'s message): an isError result naming the argument and "s%"', show(r));
	// In an id it is just a string id, echoed as sent.
	await s.write('{"jsonrpc":"2.0","id":"i\\u0000d","method":"ping"}\n');
	r = await s.answer('i\u0000d');
	ok(r && r.result, 'a string id holding \\u0000 is answered with that id', show(r));
	// In an object key jansson would cut it: refused, with the id.
	await s.write('{"jsonrpc":"2.0","id":306,"method":"tools/call","params":{"name":"echo","arguments":{"te\\u0000xt":"a"}}}\n');
	r = await s.answer(306);
	ok(r && isErr(r, -32600) && /key/.test(r.error.message),
	    'a \\u0000 in an object key: -32600 with the request\'s id', show(r));
	// A uri, a prompt argument: C strings to the callback, so refused.
	await s.write('{"jsonrpc":"2.0","id":307,"method":"resources/read","params":{"uri":"demo://readme\\u0000x"}}\n');
	r = await s.answer(307);
	ok(r && isErr(r, -32602), 'resources/read of a uri holding \\u0000: -32602', show(r));
	await s.write('{"jsonrpc":"2.0","id":308,"method":"prompts/get","params":{"name":"review","arguments":{"language":"c\\u0000"}}}\n');
	r = await s.answer(308);
	ok(r && isErr(r, -32602), 'prompts/get with an argument holding \\u0000: -32602', show(r));
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.bad.length === 0, 'exits 0 at EOF after the NUL bytes', show(ex));
}

async function hugeLine() {
	const s = new Server();
	await s.init();
	const MiB = 1 << 20;
	const chunk = Buffer.alloc(MiB, 'a');
	const t0 = Date.now();
	// In the TypeScript SDK's order: the id comes last, after the params.
	await s.writeFlow(Buffer.from('{"method":"tools/call","params":{"name":"echo","arguments":{"text":"'));
	for (let i = 0; i < 100; i++)
		await s.writeFlow(chunk);
	await s.writeFlow(Buffer.from('"}},"jsonrpc":"2.0","id":"huge"}\n'));
	await s.write(call('after', 'echo', { text: 'next line' }));
	const r = await s.answer('after', 60000);
	const st = s.status();
	ok(r && r.result && r.result.content[0].text === 'next line',
	    'a 100 MiB line: the request on the next line is answered', show(r), s.stderr.slice(-400));
	const errs = s.answers('huge');
	ok(errs.length === 1 && isErr(errs[0], -32600) && /limit|max/i.test(errs[0].error.message),
	    'a 100 MiB line whose id comes last: exactly one -32600 error, with that id, naming the limit',
	    show(errs));
	ok(s.noId().length === 0, 'a 100 MiB line: no error without an id', show(s.noId()));
	ok(st && st.VmHWM !== null && st.VmHWM < rssMiB(48),
	    `a 100 MiB line: peak RSS (VmHWM) stays under ${rssMiB(48) >> 10} MiB`, `VmHWM ${st && st.VmHWM} kB`);
	const ex = await s.finish();
	ok(ex && ex.code === 0, 'a 100 MiB line: exits 0 at EOF', show(ex), `(${Date.now() - t0} ms)`);
}

// An echo request padded to exactly LEN bytes (no newline); its text is
// padText(id, len).
const padText = (id, len) =>
    'x'.repeat(len - JSON.stringify(call(id, 'echo', { text: '' })).length);
function sized(id, len) {
	const line = JSON.stringify(call(id, 'echo', { text: padText(id, len) }));
	if (Buffer.byteLength(line) !== len)
		throw new Error('sizing');
	return line;
}

async function maxMessage() {
	const s = new Server(['--max-message', '1024']);
	await s.init();
	// Exactly at the limit: accepted.
	await s.write(sized('at', 1024) + '\n');
	let r = await s.answer('at');
	ok(r && r.result && r.result.content[0].text === padText('at', 1024),
	    'a 1024-byte message with --max-message 1024 is answered', show(r));
	// One byte over: refused with its id, and the next line works.
	let before = s.noId().length;
	await s.write(sized('over', 1025) + '\n' + JSON.stringify(ping('over-next')) + '\n');
	r = await s.answer('over-next');
	let errs = s.answers('over');
	ok(r && r.result && errs.length === 1 && isErr(errs[0], -32600) &&
	    s.noId().length === before,
	    'a 1025-byte message gets one -32600 with its id; the next line in the same write is answered',
	    show(errs), show(r));
	// At the limit, the newline in a later write: still accepted.
	await s.write(sized('at2', 1024));
	await sleep(100);
	await s.write('\n');
	r = await s.answer('at2');
	ok(r && r.result && s.noId().length === before,
	    'a 1024-byte message whose newline comes in a later write is answered', show(r), show(s.noId()));
	// Over the limit, trickled in small writes: one error, then back in sync.
	const line = sized('trickle', 3000);
	for (let i = 0; i < line.length; i += 500) {
		await s.write(line.slice(i, i + 500));
		await sleep(20);
	}
	await s.write('\n' + JSON.stringify(ping('trickle-next')) + '\n');
	r = await s.answer('trickle-next');
	errs = s.answers('trickle');
	ok(r && r.result && errs.length === 1 && isErr(errs[0], -32600) && s.noId().length === before,
	    'a 3000-byte message written in 500-byte pieces gets one -32600 with its id; the next line is answered',
	    show(errs));
	// An oversized notification is not answered (it has no id to answer).
	await s.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress',
	    params: { progressToken: 1, progress: 1, pad: 'y'.repeat(2000) } }) + '\n');
	await s.write(ping('notif-next'));
	r = await s.answer('notif-next');
	ok(r && r.result && s.noId().length === before,
	    'an oversized notification is skipped without an answer', show(s.noId()));
	// An id that cannot be read before the limit nor after it: none.
	await s.write('{"jsonrpc":"2.0","method":"ping","params":{"p":"' + 'z'.repeat(2000) + '"}\n');
	await s.write(ping('noid-next'));
	r = await s.answer('noid-next');
	ok(r && r.result && s.noId().length === before + 1 && isErr(s.noId()[before], -32600),
	    'an oversized message with no id: one -32600 without an id', show(s.noId()));
	before = s.noId().length;
	// A line may end in CR LF: the CR is framing, not part of the message.
	before = s.noId().length;
	await s.write(sized('crlf', 1023) + '\r\n');
	r = await s.answer('crlf');
	ok(r && r.result && s.noId().length === before,
	    'a 1023-byte message ending in CR LF is answered', show(r));
	await s.write(sized('crlf2', 1024) + '\r\n' + JSON.stringify(ping('crlf2-next')) + '\n');
	await s.answer('crlf2-next');
	// The echo runs on a worker: it may come after the ping's answer.
	r = await s.answer('crlf2', 3000);
	ok(r && r.result && s.noId().length === before,
	    'a 1024-byte message ending in CR LF is answered (the CR does not count)',
	    show(r), show(s.noId().slice(before)));
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.bad.length === 0, 'exits 0 after the oversized lines', show(ex));
	// The last line, at EOF without its newline: the same limit.
	for (const [len, want] of [[1024, true], [1025, false]]) {
		const e = new Server(['--max-message', '1024']);
		await e.init();
		await e.write(sized(`eof${len}`, len));
		const ee = await e.finish();
		const a = e.answers(`eof${len}`)[0];
		ok(ee && ee.code === 0 && (want ? a && a.result : a && isErr(a, -32600)),
		    `a last line of ${len} bytes at EOF, no newline: ${want ? 'answered' : 'refused (-32600, with its id)'}`,
		    show(a), show(ee));
	}
}

async function deepNesting() {
	const s = new Server();
	await s.init();
	const N = 100000;
	const cases = {
		'[[[...]]] 100000 deep': '['.repeat(N) + ']'.repeat(N),
		'{"a":{"a":...}} 100000 deep': '{"a":'.repeat(N) + '1' + '}'.repeat(N),
		'100000 unclosed [': '['.repeat(N),
		'a request whose params nest 100000 deep':
		    '{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"a":' +
		    '['.repeat(N) + ']'.repeat(N) + '}}',
	};
	let i = 0;
	const deep = cases['a request whose params nest 100000 deep'];
	delete cases['a request whose params nest 100000 deep'];
	for (const [name, line] of Object.entries(cases))
		await oneErrorThenPing(s, line, `d${i++}`,
		    (m) => m && m.error && (m.error.code === -32700 || m.error.code === -32600) && !('id' in m),
		    `${name}: one error without an id, no crash`);
	// Refused, though readable as far as its id: answered by that id.
	await s.write(deep + '\n');
	const a = await s.answer('deep');
	ok(a && isErr(a, -32600) && /deep/.test(a.error.message) && s.answers('deep').length === 1,
	    'a request whose params nest 100000 deep: one -32600 with its id, no crash', show(a));
	// Moderate nesting is fine.
	await s.write('{"jsonrpc":"2.0","id":"deep100","method":"ping","params":{"a":' +
	    '['.repeat(100) + ']'.repeat(100) + '}}\n');
	const r = await s.answer('deep100');
	ok(r && r.result && Object.keys(r.result).length === 0, 'params nested 100 deep are fine', show(r));
	const ex = await s.finish();
	ok(ex && ex.code === 0 && ex.signal === null, 'exits 0 after the nesting attacks', show(ex));
}

async function duplicateId() {
	const s = new Server();
	await s.init();
	await s.write(call(9, 'sleep', { ms: 1000 }));
	await sleep(50);
	await s.write(call(9, 'echo', { text: 'second' }));
	await s.write(call('9', 'echo', { text: 'string nine' }));
	const dup = await s.answer(9);
	ok(dup && isErr(dup, -32600) && /already in flight/.test(dup.error.message) && dup.id === 9,
	    'a duplicate id while the first is in flight: -32600 "already in flight" with that id', show(dup));
	const str = await s.answer('9');
	ok(str && str.result && str.result.content[0].text === 'string nine',
	    'id "9" (a string) is not a duplicate of 9 (a number)', show(str));
	await s.until(() => s.answers(9).length >= 2, 10000);
	await sleep(400);
	const all = s.answers(9);
	ok(all.length === 2 && all[1].result && all[1].result.content[0].text === 'slept 1000 ms',
	    'the first call still answers normally afterwards (after the refusal), exactly once', show(all));
	// The id is free again once answered.
	await s.write(call(9, 'echo', { text: 'reused' }));
	await s.until(() => s.answers(9).length >= 3);
	const re = s.answers(9)[2];
	ok(re && re.result && re.result.content[0].text === 'reused', 'an answered id may be used again', show(re));
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.answers(9).length === 3, 'exits 0, nothing more for id 9', show(ex));
}

// A log line names the request it was written for, by its id as sent:
// escaped as JSON, so a client's id cannot break the line.
async function logIds() {
	for (const [id, tag] of [['1e2', '[id 1e2]'], ['"a\\nb\\""', '[id "a\\nb\\""]']]) {
		const s = new Server(['--log-level', 'info']);
		await s.write(`{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":` +
		    '"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}\n');
		await s.until(() => /session initialized/.test(s.stderr), 5000);
		const line = s.stderr.split('\n').find((l) => /session initialized/.test(l)) || '';
		ok(line.includes(`${tag} session initialized`),
		    `a log line for the request with id ${id} is tagged ${tag}, on one line`, show(line));
		const ex = await s.finish();
		ok(ex && ex.code === 0, `id ${id}: exits 0`, show(ex));
	}
}

async function cancellation() {
	const s = new Server();
	await s.init();
	await s.write(call(20, 'sleep', { ms: 20000 }));
	await s.write(call('s20', 'sleep', { ms: 300 }));
	await sleep(100);
	await s.write(cancel(20));
	await s.write(call(21, 'echo', { text: 'still here' }));
	const r = await s.answer(21);
	ok(r && r.result && r.result.content[0].text === 'still here',
	    'after a cancellation, other calls are answered', show(r));
	const r2 = await s.answer('s20');
	ok(r2 && r2.result && r2.result.content[0].text === 'slept 300 ms',
	    'a cancellation of 20 leaves "s20" alone', show(r2));
	// A cancelled id may be used again at once: it is no longer in flight.
	await s.write(ping(20));
	await s.until(() => s.answers(20).length > 0, 1000);
	ok(s.answers(20).length === 1 && s.answers(20)[0].result,
	    'the cancelled id is free again (ping 20 is answered, by itself)', show(s.answers(20)));
	const t0 = Date.now();
	const ex = await s.finish(30000);
	const ms = Date.now() - t0;
	ok(ex && ex.code === 0 && ms < 8000,
	    'EOF after the cancellation: exits 0 without waiting out the 20 s sleep',
	    show(ex), `${ms} ms`);
	ok(s.answers(20).length === 1 && !s.answers(20).some((m) => m.result && m.result.content),
	    'no response ever comes for the cancelled call', show(s.answers(20)));
}

async function badCancellations() {
	const s = new Server();
	await s.init();
	await s.write(call(30, 'sleep', { ms: 1000 }));
	await sleep(50);
	const n0 = s.msgs.length;
	const junk = [
		cancel(12345), cancel('30'), cancel(30.5), cancel(null), cancel(true),
		cancel({ id: 30 }), cancel([30]), cancel('no such id'),
		{ jsonrpc: '2.0', method: 'notifications/cancelled' },
		{ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} },
		{ jsonrpc: '2.0', method: 'notifications/cancelled', params: 30 },
		{ jsonrpc: '2.0', method: 'notifications/cancelled', params: [30] },
		{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { id: 30 } },
		{ jsonrpc: '1.0', method: 'notifications/cancelled', params: { requestId: 30 } },
		{ method: 'notifications/cancelled', params: { requestId: 30 } },
	];
	for (const j of junk)
		await s.write(j);
	await s.write(ping('after-junk'));
	await s.answer('after-junk');
	ok(s.msgs.length - n0 === 1, 'cancellations of unknown ids and malformed ones get no output',
	    show(s.msgs.slice(n0)));
	const r = await s.answer(30);
	ok(r && r.result && r.result.content[0].text === 'slept 1000 ms',
	    'the call in flight was not cancelled by any of them (not "30", not a malformed one)', show(r));
	// Cancelling a call that already finished is ignored too.
	await s.write(cancel(30));
	await s.write(ping('late'));
	await s.answer('late');
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.answers(30).length === 1 && s.noId().length === 0,
	    'a late cancellation is ignored; exits 0', show(ex), show(s.noId()));
}

async function pipelined() {
	const s = new Server();
	await s.init();
	const N = 10000;
	let buf = '';
	for (let i = 1; i <= N; i++)
		buf += JSON.stringify(call(i, 'echo', { text: `text ${i}` })) + '\n';
	const t0 = Date.now();
	await s.write(buf);
	await s.until(() => s.msgs.length >= N + 1, 60000);
	await sleep(200);
	let missing = 0, dup = 0, wrong = 0, firstBad = null;
	for (let i = 1; i <= N; i++) {
		const a = s.answers(i);
		if (a.length === 0)
			missing++;
		else if (a.length > 1)
			dup++;
		else if (!(a[0].result && a[0].result.content[0].text === `text ${i}`)) {
			wrong++;
			firstBad ??= a[0];
		}
	}
	ok(missing === 0 && dup === 0 && wrong === 0 && s.msgs.length === N + 1,
	    `${N} pipelined tools/call echo requests: each answered exactly once with its text`,
	    `missing ${missing}, duplicated ${dup}, wrong ${wrong}, total ${s.msgs.length - 1}`,
	    `first wrong: ${show(firstBad)}`, `${Date.now() - t0} ms`);
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.bad.length === 0, 'exits 0 after the flood', show(ex));
}

async function fullQueue() {
	const s = new Server(['--queue-size', '2', '--workers', '1']);
	await s.init();
	const N = 50;
	let buf = '';
	for (let i = 1; i <= N; i++)
		buf += JSON.stringify(call(i, 'sleep', { ms: 50 })) + '\n';
	await s.write(buf);
	await s.until(() => s.msgs.length >= N + 1, 30000);
	await sleep(300);
	let results = 0, busy = 0, other = [];
	for (let i = 1; i <= N; i++) {
		const a = s.answers(i);
		if (a.length !== 1)
			other.push({ id: i, answers: a });
		else if (a[0].result && a[0].result.content[0].text === 'slept 50 ms')
			results++;
		else if (isErr(a[0], -32000) && /busy/.test(a[0].error.message))
			busy++;
		else
			other.push(a[0]);
	}
	ok(other.length === 0 && results + busy === N,
	    `a full queue (--queue-size 2 --workers 1, ${N} sleeps): every request gets exactly one answer, a result or -32000 "busy"`,
	    `results ${results}, busy ${busy}, other ${show(other)}`);
	// The first two always fit in the queue, so at least they run.
	ok(results >= 2, 'the calls that fit in the queue ran to completion',
	    `results ${results}, busy ${busy}`);
	ok(s.noId().length === 0, 'no id-less errors', show(s.noId()));
	// Once the queue drains the server takes calls again.
	await s.write(call('again', 'echo', { text: 'room again' }));
	const r = await s.answer('again');
	ok(r && r.result && r.result.content[0].text === 'room again', 'after the burst, calls are accepted again', show(r));
	const ex = await s.finish();
	ok(ex && ex.code === 0, 'exits 0', show(ex));
}

async function slowReader() {
	const s = new Server();
	await s.init();
	const N = 20000;
	const text = 'x'.repeat(10000);
	s.proc.stdout.pause();
	const t0 = Date.now();
	let written = 0;
	const writer = (async () => {
		for (let i = 1; i <= N; i++) {
			await s.writeFlow(JSON.stringify(call(i, 'echo', { text })) + '\n');
			written = i;
		}
	})();
	let maxRss = 0;
	while (Date.now() - t0 < 3000) {
		await sleep(100);
		const st = s.status();
		if (st && st.VmRSS > maxRss)
			maxRss = st.VmRSS;
	}
	const pausedAt = written;
	const st = s.status();
	ok(st && maxRss > 0 && maxRss < rssMiB(64),
	    `a reader that stops for 3 s: the server's RSS stays under ${rssMiB(64) >> 10} MiB`,
	    `max VmRSS ${maxRss} kB, VmHWM ${st && st.VmHWM} kB`);
	ok(pausedAt < N && s.alive(),
	    'while nobody reads, the server stops taking input (the writer is held up) and stays up',
	    `${pausedAt} of ${N} requests written after 3 s`);
	s.proc.stdout.resume();
	await writer;
	await s.until(() => s.msgs.length >= N + 1, 120000);
	await sleep(200);
	let missing = 0, dup = 0, wrong = 0;
	for (let i = 1; i <= N; i++) {
		const a = s.answers(i);
		if (a.length === 0)
			missing++;
		else if (a.length > 1)
			dup++;
		else if (!(a[0].result && a[0].result.content[0].text === text))
			wrong++;
	}
	ok(missing === 0 && dup === 0 && wrong === 0,
	    `after reading resumes, all ${N} answers arrive, each exactly once and intact`,
	    `missing ${missing}, duplicated ${dup}, wrong ${wrong}`, `${Date.now() - t0} ms`);
	const end = s.status();
	ok(end && end.VmHWM < rssMiB(64), `peak RSS over the whole run stays under ${rssMiB(64) >> 10} MiB`, `VmHWM ${end && end.VmHWM} kB`);
	const ex = await s.finish();
	ok(ex && ex.code === 0 && s.bad.length === 0, 'exits 0 after the slow reader', show(ex));
}

async function longNames() {
	const s = new Server();
	await s.init();
	const long = 'm'.repeat(1 << 20);
	await s.write({ jsonrpc: '2.0', id: 'lm', method: long });
	await s.write(call('lt', long, {}));
	const a = await s.answer('lm');
	const b = await s.answer('lt');
	ok(a && isErr(a, -32601) && a.error.message.length < 1000,
	    'a 1 MiB method name: -32601, with a short message', show(a));
	ok(b && isErr(b, -32602) && b.error.message.length < 1000,
	    'a 1 MiB tool name: -32602, with a short message', show(b));
	// A name cut short in the message must not be cut inside a UTF-8
	// sequence (the message would no longer be valid UTF-8).
	const tool = 'a'.repeat(99) + 'é';
	const method = 'a'.repeat(79) + 'é'.repeat(30);
	await s.write(call('ut', tool, {}));
	await s.write({ jsonrpc: '2.0', id: 'um', method });
	const c = await s.answer('ut');
	const d = await s.answer('um');
	ok(c && isErr(c, -32602) && c.error.message.startsWith('unknown tool: aaaa'),
	    'an unknown tool name of 99 ASCII bytes and an "é": the message still names it', show(c));
	ok(d && isErr(d, -32601) && d.error.message.startsWith('method not found: aaaa'),
	    'an unknown method of 79 ASCII bytes and 30 "é": the message still names it', show(d));
	const ex = await s.finish();
	ok(ex && ex.code === 0, 'exits 0', show(ex));
}

// JSON.stringify writes integral numbers below 1e21 without an exponent,
// so a JavaScript client can send integers far beyond 64 bits. They are
// valid JSON; the request must still be answered with its id.
async function bigNumbers() {
	const s = new Server();
	await s.init();
	const a = 12345678901234567000;
	const line = JSON.stringify(call('big', 'add', { a, b: 1 }));
	ok(line.includes('"a":12345678901234567000'), 'JSON.stringify writes 12345678901234567000 as an integer');
	await s.write(line + '\n');
	await s.write(ping('big-after'));
	await s.answer('big-after');
	// add runs on a worker: its answer may follow the ping's.
	const r = await s.answer('big', 3000);
	ok(r && ((r.result && r.result.structuredContent && r.result.structuredContent.sum === a + 1) ||
	    (r.error && r.error.code === -32602)) && s.noId().length === 0,
	    'an argument of 12345678901234567000 (beyond 64 bits): the request is answered, with its id',
	    `answer: ${show(r)}`, `id-less: ${show(s.noId())}`);
	const ex = await s.finish();
	ok(ex && ex.code === 0, 'exits 0', show(ex));
}

async function inflightCap() {
	const s = new Server(['--queue-size', '100000', '--workers', '1']);
	await s.init();
	const N = 4100, CAP = 4096;
	let buf = '';
	for (let i = 1; i <= N; i++)
		buf += JSON.stringify(call(i, 'sleep', { ms: 60000 })) + '\n';
	await s.write(buf);
	await s.write(ping('cap-ping'));
	await s.answer('cap-ping', 30000);
	await sleep(200);
	const refused = [];
	let other = 0;
	for (let i = 1; i <= N; i++)
		for (const a of s.answers(i)) {
			if (isErr(a, -32000) && /busy/.test(a.error.message))
				refused.push(i);
			else
				other++;
		}
	ok(refused.length === N - CAP && refused[0] === CAP + 1 && other === 0,
	    `${N} calls in flight at once: the ${N - CAP} past the per-session cap of ${CAP} get -32000 "busy", at once`,
	    `refused ${refused.length} (first ${refused[0]}), other answers ${other}`);
	// Cancel every call that was taken: none of them may answer.
	buf = '';
	for (let i = 1; i <= CAP; i++)
		buf += JSON.stringify(cancel(i)) + '\n';
	await s.write(buf);
	await s.write(ping('cap-ping2'));
	await s.answer('cap-ping2', 30000);
	const t0 = Date.now();
	const ex = await s.finish(30000);
	const ms = Date.now() - t0;
	let answered = 0;
	for (let i = 1; i <= CAP; i++)
		answered += s.answers(i).length;
	ok(answered === 0 && ex && ex.code === 0 && ms < 10000,
	    `after ${CAP} cancellations no call answers, and EOF ends the server quickly`,
	    `answered ${answered}`, show(ex), `${ms} ms`);
}

// A batch of many cheap requests must not make an answer (and a process)
// of any size: one 4 MiB line of 2025-03-26 tools/list requests.
async function batchAmplification() {
	const s = new Server();
	await s.init('2025-03-26');
	const one = (i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`;
	const parts = [];
	let len = 2, i = 0;
	while (len + one(i).length + 1 < 4 * 1024 * 1024 - 64) {
		parts.push(one(i));
		len += one(i++).length + 1;
	}
	await s.writeFlow('[' + parts.join(',') + ']\n');
	await s.write(ping('after-batch'));
	const r = await s.answer('after-batch', 30000);
	const st = s.status();
	const errs = s.noId();
	ok(r && r.result && errs.length === 1 && isErr(errs[0], -32600) && /--max-batch/.test(errs[0].error.message) &&
	    s.msgs.filter((m) => Array.isArray(m)).length === 0,
	    `a 4 MiB batch of ${parts.length} tools/list: one -32600 naming --max-batch, no answer array`, show(errs));
	ok(st && st.VmHWM !== null && st.VmHWM < rssMiB(40),
	    `a 4 MiB batch: peak RSS (VmHWM) stays under ${rssMiB(40) >> 10} MiB (it is counted before it is built)`,
	    `VmHWM ${st && st.VmHWM} kB`);
	// Within --max-batch (128): answered, each member.
	await s.write('[' + Array.from({ length: 128 }, (_, k) => one(JSON.stringify(`m${k}`))).join(',') + ']\n');
	await s.until(() => s.msgs.some((m) => Array.isArray(m)), 10000);
	const arr = s.msgs.find((m) => Array.isArray(m));
	ok(arr && arr.length === 128 && arr.every((m) => m.result && m.result.tools.length === 4),
	    'a batch of 128 tools/list (--max-batch): 128 answers', show(arr && arr.length));
	const ex = await s.finish();
	ok(ex && ex.code === 0, 'exits 0 after the batches', show(ex));
}

async function main() {
	await runGroups([
		['invalid JSON', invalidJson], ['invalid UTF-8', invalidUtf8],
		['NUL bytes', nulBytes], ['100 MiB line', hugeLine, 120000],
		['--max-message', maxMessage], ['deep nesting', deepNesting],
		['duplicate id', duplicateId], ['log ids', logIds], ['cancellation', cancellation],
		['bad cancellations', badCancellations], ['10000 pipelined', pipelined],
		['full queue', fullQueue], ['slow reader', slowReader, 150000],
		['long names', longNames], ['in-flight cap', inflightCap],
		['big numbers', bigNumbers], ['batch amplification', batchAmplification, 60000],
	], { times: 'HOSTILE_TIMES' });
	for (const s of children)
		s.kill();
}

if (import.meta.url === pathToFileURL(process.argv[1]).href)
	main();
