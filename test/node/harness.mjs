// harness.mjs: what the Node test scripts of libmcp share (test/hostile.mjs,
// test/shutdown.mjs, test/http.mjs, test/features.mjs,
// test/node/stdio-interop.mjs, test/node/sse-interop.mjs): TAP output,
// waiting helpers, the "listening on" line of a server started with
// --http, an SSE parser, and the formatting of SDK results and errors.
// Node 20, no npm packages.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { inspect, isDeepStrictEqual } from 'node:util';

// ---- TAP ---------------------------------------------------------------

// The counters, and what a script may set: label, put before every
// description; show, how ok() and is() print a value that is not a string.
export const tap = {
	n: 0,
	failed: 0,
	label: '',
	show: (v) => show(v),
};

// A value as util.inspect shows it, on one line.
export function show(v) {
	return inspect(v, { depth: 8, breakLength: Infinity });
}

export function out(s) {
	process.stdout.write(s + '\n');
}

// Each line of each argument as a TAP comment (long lines cut at 1000).
export function diag(...lines) {
	for (const l of lines)
		for (const s of String(l).split('\n'))
			out(`# ${s.length > 1000 ? s.slice(0, 1000) + '...' : s}`);
}

// One assertion; on a failure, each defined WHY follows as comments
// (strings as they are, other values through tap.show).
export function ok(cond, desc, ...why) {
	tap.n++;
	out(`${cond ? '' : 'not '}ok ${tap.n} - ${tap.label}${desc}`);
	if (!cond) {
		tap.failed++;
		for (const w of why)
			if (w !== undefined)
				diag(typeof w === 'string' ? w : tap.show(w));
	}
	return !!cond;
}

// ok() on a deep strict equality, showing both sides on a failure.
export function is(got, want, desc, extra) {
	const good = isDeepStrictEqual(got, want);
	return ok(good, desc, good ? undefined :
	    `${extra === undefined ? '' : (typeof extra === 'string' ? extra : tap.show(extra)) + '\n'}` +
	    `expected: ${tap.show(want)}\n     got: ${tap.show(got)}`);
}

export function skip(reason) {
	tap.n++;
	out(`ok ${tap.n} # SKIP ${reason}`);
}

// The plan, and the exit status (1 when an assertion failed).
export function done() {
	out(`1..${tap.n}`);
	if (tap.failed > 0)
		diag(`failed ${tap.failed} of ${tap.n}`);
	process.exitCode = tap.failed ? 1 : 0;
}

// done(), after the last 40 lines of STDERRLOG (the servers' stderr) when
// something failed; then exits.
export function finish(stderrLog = []) {
	if (tap.failed > 0 && stderrLog.length > 0) {
		diag('---- server stderr (last 40 lines) ----');
		diag(stderrLog.slice(-40).join('\n'));
	}
	done();
	process.exit(process.exitCode);
}

// Fails the test when it has not finished after MS (with LABEL as
// tap.label, when given), then calls onTimeout, which ends it; clear the
// timer returned when done.
export function globalTimeout(ms, onTimeout, label) {
	return setTimeout(() => {
		if (label !== undefined)
			tap.label = label;
		ok(false, `global timeout: the test did not finish within ${ms / 1000} s`);
		onTimeout();
	}, ms);
}

// Runs one group of assertions; an exception or a timeout is a failure.
export async function group(name, fn, ms = 60000) {
	let timer;
	try {
		await Promise.race([fn(), new Promise((_, rej) => {
			timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms`)), ms);
		})]);
	} catch (e) {
		ok(false, `${name}: completes`, e.stack || String(e));
	} finally {
		clearTimeout(timer);
	}
}

// Runs the groups TESTS ([name, fn, ms]) through RUN (group, or one like
// it), only those whose names contain an argument of the script when it
// has any; then done(). With TIMES set in the environment, the time of
// each group and the total follow as comments.
export async function runGroups(tests, { run = group, times } = {}) {
	const t0 = Date.now();
	const only = process.argv.slice(2);
	const timed = times !== undefined && process.env[times];
	for (const [name, fn, ms] of tests) {
		if (only.length && !only.some((o) => name.includes(o)))
			continue;
		const t = Date.now();
		await run(name, fn, ms);
		if (timed)
			diag(`${name}: ${Date.now() - t} ms`);
	}
	done();
	if (timed)
		diag(`total ${Date.now() - t0} ms`);
}

// ---- values --------------------------------------------------------------

// A value as (at most 400 characters of) JSON.
export const showJson = (v) => JSON.stringify(v)?.slice(0, 400);

// The text parts of a tools/call result, joined by newlines.
export function textOf(result) {
	return result?.content?.filter((c) => c.type === 'text').map((c) => c.text).join('\n') ?? '';
}

// An error, one line: "McpError CODE: MESSAGE" for the SDK's McpError
// (and its subclasses), else "NAME: MESSAGE".
export function errText(e) {
	for (let p = e instanceof Error ? Object.getPrototypeOf(e) : null; p; p = Object.getPrototypeOf(p))
		if (p.constructor?.name === 'McpError')
			return `McpError ${e.code}: ${e.message}`;
	return e instanceof Error ? `${e.name}: ${e.message}` : tap.show(e);
}

// ---- waiting -------------------------------------------------------------

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Resolves to what P resolves to, or to null after ms (the timer does not
// keep the process alive once P has settled).
export function within(p, ms) {
	let timer;
	return Promise.race([p, new Promise((r) => { timer = setTimeout(() => r(null), ms); })])
	    .finally(() => clearTimeout(timer));
}

// Settles P, and at most after LIMIT ms, into {value} or {error}, with
// ms, the time it took; never throws.
export async function settle(p, limit = 15000) {
	const t0 = Date.now();
	let timer;
	const timeout = new Promise((r) => {
		timer = setTimeout(() => r({ error: new Error(`no answer within ${limit} ms`), timedOut: true }), limit);
	});
	const r = await Promise.race([
		p.then((value) => ({ value }), (error) => ({ error })),
		timeout,
	]);
	clearTimeout(timer);
	r.ms = Date.now() - t0;
	return r;
}

/*
 * Something that changes as data comes in, and that tests wait on: the
 * owner calls _wake() after each change; until(cond, ms) resolves true
 * once cond() holds, or to cond() after ms.
 */
export class Waitable {
	constructor() {
		this.waiters = new Set();
	}

	_wake() {
		for (const w of this.waiters)
			if (w.cond()) {
				this.waiters.delete(w);
				clearTimeout(w.timer);
				w.resolve(true);
			}
	}

	until(cond, ms = 10000) {
		if (cond())
			return Promise.resolve(true);
		return new Promise((resolve) => {
			const w = { cond, resolve };
			w.timer = setTimeout(() => {
				this.waiters.delete(w);
				resolve(cond());
			}, ms);
			this.waiters.add(w);
		});
	}
}

// Calls fn(line) for each complete line (without its "\n") of STREAM.
export function eachLine(stream, fn) {
	let buf = '';
	stream.on('data', (chunk) => {
		buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
		let k;
		while ((k = buf.indexOf('\n')) >= 0) {
			const line = buf.slice(0, k);
			buf = buf.slice(k + 1);
			fn(line);
		}
	});
}

// ---- the server under test -----------------------------------------------

// Every Child still running; each gets SIGKILL when the script exits.
export const children = new Set();
process.on('exit', () => {
	for (const c of children)
		c.kill('SIGKILL');
});

/*
 * One spawned process (the server under test): exit ({code, signal, at}
 * once it has ended, else null) and exited (resolves to it), spawnError,
 * and stderr (its first stderrMax characters). It wakes its waiters when
 * it ends and on stderr.
 */
export class Child extends Waitable {
	constructor(cmd, args, stdio, { stderrMax = 20000 } = {}) {
		super();
		this.args = args;
		this.proc = spawn(cmd, args, { stdio });
		this.pid = this.proc.pid;
		children.add(this);
		this.stderr = '';
		this.exit = null;
		this.exited = new Promise((res) => this.proc.on('exit', (code, signal) => {
			this.exit = { code, signal, at: Date.now() };
			children.delete(this);
			this._wake();
			res(this.exit);
		}));
		this.proc.on('error', (e) => {
			this.spawnError = e;
			this._wake();
		});
		this.proc.stderr.setEncoding('utf8');
		this.proc.stderr.on('data', (d) => {
			if (this.stderr.length < stderrMax)
				this.stderr += d;
			this._wake();
		});
	}

	alive() {
		return this.exit === null;
	}

	kill(sig = 'SIGKILL') {
		try { this.proc.kill(sig); } catch { /* gone */ }
	}

	// FIELDS of /proc/PID/status in kB ({VmRSS: N, ...}, null for a field
	// not there), or null when the process is gone.
	status(fields = ['VmRSS', 'VmHWM']) {
		try {
			const st = readFileSync(`/proc/${this.pid}/status`, 'utf8');
			const out = {};
			for (const f of fields) {
				const m = st.match(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm'));
				out[f] = m ? Number(m[1]) : null;
			}
			return out;
		} catch {
			return null;
		}
	}
}

// ---- servers over HTTP ---------------------------------------------------

// docs/HTTP.md: a server started with --http logs "listening on
// http://ADDR:PORT" (a trailing /sse, the stream's URL, may follow).
// listening(text) is {url, addr, port, base} for the first such line in
// TEXT, base being the URL without a trailing / or /sse; else null.
export function listening(text) {
	const m = /listening on (http:\/\/(\[[^\]]*\]|[^\s:/]+):(\d+)\S*)/.exec(text);
	if (!m)
		return null;
	return { url: m[1], addr: m[2], port: Number(m[3]),
	    base: m[1].replace(/\/+$/, '').replace(/\/sse$/, '') };
}

// ---- SSE -------------------------------------------------------------------

/*
 * An SSE stream parsed as the SSE specification says. feed(text, t)
 * takes the stream as it comes (lines end in CRLF, LF or CR); line(line,
 * t) takes one line without its end. onItem gets, in order, comments
 * { type: 'comment', text (after the ":"), line, t } and events
 * { type: 'event', event ("message" unless named), data (the data lines
 * joined by "\n"), dataLines, fields (the raw field lines), other (the
 * values of the other fields, by name), tFirst, t } (t: of its first and
 * last lines).
 */
export class SseParser {
	constructor(onItem) {
		this.onItem = onItem;
		this.parts = [];	// the current line so far, in pieces
		this.cur = null;
	}

	feed(text, t) {
		// Pieces without a line end are only kept: a line of many MiB
		// is joined once, not copied again with every piece.
		if (!/[\r\n]/.test(text) && !(this.parts.length &&
		    this.parts[this.parts.length - 1].endsWith('\r'))) {
			this.parts.push(text);
			return;
		}
		let buf = this.parts.join('') + text;
		this.parts = [];
		const re = /\r\n|\n|\r(?=[^\n])/g;
		let m, from = 0;
		while ((m = re.exec(buf)) !== null) {
			this.line(buf.slice(from, m.index), t);
			from = m.index + m[0].length;
		}
		buf = buf.slice(from);
		if (buf !== '')
			this.parts.push(buf);
	}

	line(line, t) {
		if (line === '') {
			if (this.cur) {
				const ev = this.cur;
				this.cur = null;
				ev.event ??= 'message';
				ev.data = ev.dataLines.join('\n');
				this.onItem(ev);
			}
			return;
		}
		if (line[0] === ':') {
			this.onItem({ type: 'comment', text: line.slice(1), line, t });
			return;
		}
		this.cur ??= { type: 'event', fields: [], dataLines: [], other: {}, tFirst: t, t };
		this.cur.fields.push(line);
		const c = line.indexOf(':');
		const name = c < 0 ? line : line.slice(0, c);
		let value = c < 0 ? '' : line.slice(c + 1);
		if (value[0] === ' ')
			value = value.slice(1);
		if (name === 'event')
			this.cur.event = value;
		else if (name === 'data')
			this.cur.dataLines.push(value);
		else
			this.cur.other[name] = value;
		this.cur.t = t;
	}
}
