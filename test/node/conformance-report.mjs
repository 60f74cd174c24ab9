/*
 * conformance-report.mjs: reads one run of the official MCP conformance
 * suite (@modelcontextprotocol/conformance, `server` mode) for
 * test/conformance.sh: LOG is what the runner printed (stdout and stderr),
 * DIR the directory given to its -o, which holds one
 * server-SCENARIO-TIMESTAMP/checks.json per scenario that finished.
 *
 *   node conformance-report.mjs LOG DIR
 *	one line per scenario, in the order they ran, then the totals:
 *	"scenario NAME PASSED FAILED WARNINGS" and "total PASSED FAILED",
 *	tab-separated.  PASSED and FAILED come from the runner's summary
 *	("✓ NAME: N passed, M failed", which also counts a scenario that
 *	threw as one failure); when the summary is missing (the runner was
 *	killed) they come from checks.json, and a scenario that started but
 *	left no checks.json is "- -".  WARNINGS always comes from checks.json
 *	("-" without one).  The totals are the summary's "Total:" line, or
 *	"- -" without one.  A run with --requirements VERSION also lists
 *	the scenarios it ran but does not score ("Not scored for VERSION"),
 *	each as "unscored NAME WHY" (WHY: "extension" or "pending"), before
 *	the totals.
 *
 *   node conformance-report.mjs --details LOG DIR NAME
 *	what a person needs to see why scenario NAME failed: each check that
 *	is not SUCCESS (FAILURE and WARNING in full, with their details; INFO
 *	and others in one line), and the runner's own error for a scenario
 *	that threw.
 *
 * Any Node version; no packages.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

function readChecks(dir, name) {
	if (!existsSync(dir))
		return null;
	// server-NAME-2026-11-30T06-53-52-904Z: NAME may itself hold dashes.
	const re = new RegExp('^server-' + name.replace(/[.*+?^${}()|[\]\\]/g,
	    '\\$&') + '-\\d{4}-\\d\\d-\\d\\dT[\\d-]+Z$');
	const hits = readdirSync(dir).filter((d) => re.test(d)).sort();
	if (hits.length === 0)
		return null;
	const f = join(dir, hits[hits.length - 1], 'checks.json');
	if (!existsSync(f))
		return null;
	try {
		const v = JSON.parse(readFileSync(f, 'utf8'));
		return Array.isArray(v) ? v : null;
	} catch {
		return null;
	}
}

function count(checks, status) {
	return checks.filter((c) => c.status === status).length;
}

function parseLog(text) {
	const started = [];
	const summary = new Map();
	let total = null;
	const unscored = new Map();
	let inSummary = false, inUnscored = false;
	for (const line of text.split(/\r?\n/)) {
		// --requirements VERSION: "Not scored for VERSION: ...", then
		// "  ✓ NAME (extension)" or "(pending)" lines.
		if (/^Not scored for \S+:/.test(line)) {
			inUnscored = true;
			continue;
		}
		if (inUnscored) {
			const u = /^\s+(?:✓|✗) (\S+) \(([^)]+)\)$/.exec(line);
			if (u) {
				unscored.set(u[1], u[2]);
				continue;
			}
			if (line.trim() !== '')
				inUnscored = false;
		}
		let m = /^=== Running scenario: (\S+) ===$/.exec(line);
		if (m) {
			started.push(m[1]);
			continue;
		}
		if (line === '=== SUMMARY ===') {
			inSummary = true;
			continue;
		}
		m = /^(?:✓|✗) (\S+): (\d+) passed, (\d+) failed$/.exec(line);
		if (m && inSummary) {
			summary.set(m[1], [Number(m[2]), Number(m[3])]);
			continue;
		}
		m = /^Total: (\d+) passed, (\d+) failed$/.exec(line);
		if (m && inSummary)
			total = [Number(m[1]), Number(m[2])];
	}
	return { started, summary, total, unscored };
}

function clip(s, n) {
	return s.length > n ? s.slice(0, n) + '...' : s;
}

const args = process.argv.slice(2);
const details = args[0] === '--details';
if (details)
	args.shift();
if (args.length !== (details ? 3 : 2)) {
	process.stderr.write('usage: conformance-report.mjs [--details] LOG DIR' +
	    ' [NAME]\n');
	process.exit(2);
}
const [logFile, dir, want] = args;
const text = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
const { started, summary, total, unscored } = parseLog(text);

if (!details) {
	const names = [...started];
	for (const k of summary.keys())
		if (!names.includes(k))
			names.push(k);
	const out = [];
	for (const name of names) {
		const checks = readChecks(dir, name);
		let p = '-', f = '-';
		if (summary.has(name))
			[p, f] = summary.get(name);
		else if (checks)
			[p, f] = [count(checks, 'SUCCESS'), count(checks, 'FAILURE')];
		const w = checks ? count(checks, 'WARNING') : '-';
		out.push(['scenario', name, p, f, w].join('\t'));
	}
	for (const [name, why] of unscored)
		out.push(['unscored', name, why].join('\t'));
	out.push(['total', ...(total ?? ['-', '-'])].join('\t'));
	process.stdout.write(out.join('\n') + '\n');
	process.exit(0);
}

const checks = readChecks(dir, want);
const lines = [];
if (checks === null)
	lines.push(`no checks.json for ${want} under ${dir}`);
else {
	for (const c of checks) {
		if (c.status === 'SUCCESS')
			continue;
		if (c.status !== 'FAILURE' && c.status !== 'WARNING') {
			lines.push(`${c.status} ${c.id}: ${c.description ?? ''}`);
			continue;
		}
		lines.push(`${c.status} ${c.id}: ${c.description ?? ''}`);
		if (c.errorMessage)
			lines.push(`  error: ${c.errorMessage}`);
		if (c.details !== undefined)
			lines.push('  details: ' +
			    clip(JSON.stringify(c.details), 2000));
	}
}
// A scenario that threw: the runner printed why, then its stack.
const tl = text.split(/\r?\n/);
const at = tl.findIndex((l) => l.startsWith(`Failed to run scenario ${want}:`));
if (at >= 0)
	lines.push(...tl.slice(at, at + 8));
if (summary.has(want))
	lines.push(`summary: ${summary.get(want)[0]} passed, ` +
	    `${summary.get(want)[1]} failed`);
else
	lines.push('not in the summary (the runner did not finish)');
process.stdout.write(lines.join('\n') + '\n');
