// prom.mjs: a strict parser of the Prometheus text exposition format
// (version 0.0.4), for test/service.mjs. It throws on anything the
// format does not allow, so that a scrape that parses is one Prometheus
// would take:
//   - every line is a comment (# HELP name text, # TYPE name type, or
//     another # comment), a sample, or empty;
//   - names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names
//     [a-zA-Z_][a-zA-Z0-9_]*, with no label name twice in one sample;
//   - label values are double-quoted, with only \\, \" and \n escapes;
//   - values are Go floats (NaN, +Inf, -Inf allowed); an optional
//     timestamp is an integer;
//   - a family's TYPE comes before its samples, once, with a known type,
//     and its samples are not split by another family's;
//   - a sample's name is the family's, or for a histogram its _bucket
//     (with an le label), _sum or _count; no sample (name and labels) is
//     given twice;
//   - a histogram's buckets are cumulative, end with le="+Inf", and that
//     bucket equals _count.
// parse(text) returns { families: Map(name -> {type, help, samples}),
// samples: [{name, labels, value}] }, and value(name, labels) finds one.
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function fail(n, line, why) {
	throw new Error(`line ${n}: ${why}: ${JSON.stringify(line.slice(0, 200))}`);
}

function parseValue(s, n, line) {
	if (s === 'NaN')
		return NaN;
	if (s === '+Inf' || s === 'Inf')
		return Infinity;
	if (s === '-Inf')
		return -Infinity;
	if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s))
		fail(n, line, `bad value ${s}`);
	return Number(s);
}

// name{a="b",...} value [timestamp]
function parseSample(line, n) {
	let i = 0;
	while (i < line.length && /[a-zA-Z0-9_:]/.test(line[i]))
		i++;
	const name = line.slice(0, i);
	if (!NAME.test(name))
		fail(n, line, 'bad metric name');
	const labels = {};
	if (line[i] === '{') {
		i++;
		for (;;) {
			if (line[i] === '}') {
				i++;
				break;
			}
			let j = i;
			while (j < line.length && /[a-zA-Z0-9_]/.test(line[j]))
				j++;
			const key = line.slice(i, j);
			if (!LABEL.test(key))
				fail(n, line, 'bad label name');
			if (key in labels)
				fail(n, line, `label ${key} twice`);
			if (line[j] !== '=' || line[j + 1] !== '"')
				fail(n, line, 'expected ="');
			j += 2;
			let v = '';
			for (;;) {
				if (j >= line.length)
					fail(n, line, 'unterminated label value');
				const c = line[j];
				if (c === '"')
					break;
				if (c === '\\') {
					const e = line[j + 1];
					if (e === '\\' || e === '"')
						v += e;
					else if (e === 'n')
						v += '\n';
					else
						fail(n, line, `bad escape \\${e}`);
					j += 2;
					continue;
				}
				v += c;
				j++;
			}
			labels[key] = v;
			i = j + 1;
			if (line[i] === ',') {
				i++;
				continue;
			}
			if (line[i] !== '}')
				fail(n, line, 'expected , or }');
		}
	}
	if (line[i] !== ' ')
		fail(n, line, 'expected a space before the value');
	const rest = line.slice(i + 1).split(' ');
	if (rest.length < 1 || rest.length > 2 || rest[0] === '')
		fail(n, line, 'expected value [timestamp]');
	const value = parseValue(rest[0], n, line);
	if (rest.length === 2 && !/^-?\d+$/.test(rest[1]))
		fail(n, line, 'bad timestamp');
	return { name, labels, value };
}

const key = (name, labels) => name + JSON.stringify(Object.keys(labels).sort()
    .map((k) => [k, labels[k]]));

export function parse(text) {
	if (text.length > 0 && !text.endsWith('\n'))
		throw new Error('the exposition does not end with a newline');
	const families = new Map();
	const samples = [];
	const seen = new Set();
	let current = null;
	const lines = text.split('\n');
	lines.pop();
	lines.forEach((line, idx) => {
		const n = idx + 1;
		if (line === '')
			return;
		if (line.startsWith('#')) {
			const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
			if (!m)
				return;		// another comment
			const [, what, name, rest] = m;
			if (!NAME.test(name))
				fail(n, line, 'bad family name');
			let f = families.get(name);
			if (!f) {
				f = { type: 'untyped', help: null, samples: [], typed: false };
				families.set(name, f);
			} else if (f.samples.length > 0 && current !== f)
				fail(n, line, `family ${name} split`);
			if (what === 'HELP') {
				if (f.help !== null)
					fail(n, line, 'HELP twice');
				f.help = rest;
			} else {
				if (f.typed)
					fail(n, line, 'TYPE twice');
				if (f.samples.length > 0)
					fail(n, line, 'TYPE after samples');
				if (!TYPES.has(rest))
					fail(n, line, `unknown type ${rest}`);
				f.type = rest;
				f.typed = true;
			}
			current = f;
			return;
		}
		const s = parseSample(line, n);
		let fname = s.name;
		let f = families.get(fname);
		if (!f || f.type === 'histogram' || f.type === 'summary') {
			const base = s.name.replace(/_(bucket|sum|count)$/, '');
			const bf = families.get(base);
			if (bf && (bf.type === 'histogram' || bf.type === 'summary')) {
				fname = base;
				f = bf;
				if (s.name.endsWith('_bucket') && !('le' in s.labels))
					fail(n, line, 'a bucket without le');
			} else if (f && f.type === 'histogram')
				fail(n, line, 'a histogram sample that is no _bucket, _sum or _count');
		}
		if (!f) {
			f = { type: 'untyped', help: null, samples: [], typed: false };
			families.set(fname, f);
		} else if (f !== current && f.samples.length > 0)
			fail(n, line, `family ${fname} split`);
		current = f;
		const k = key(s.name, s.labels);
		if (seen.has(k))
			fail(n, line, 'a sample given twice');
		seen.add(k);
		f.samples.push(s);
		samples.push(s);
	});
	for (const [name, f] of families)
		if (f.type === 'histogram')
			checkHistogram(name, f);
	return {
		families, samples,
		value(name, labels = {}) {
			const want = key(name, labels);
			const s = samples.find((x) => key(x.name, x.labels) === want);
			return s === undefined ? undefined : s.value;
		},
		// The sum of NAME's samples whose labels include LABELS.
		sum(name, labels = {}) {
			return samples.filter((x) => x.name === name &&
			    Object.entries(labels).every(([k, v]) => x.labels[k] === v))
			    .reduce((a, x) => a + x.value, 0);
		},
	};
}

function checkHistogram(name, f) {
	const series = new Map();
	for (const s of f.samples) {
		const { le, ...rest } = s.labels;
		const k = JSON.stringify(Object.keys(rest).sort().map((x) => [x, rest[x]]));
		if (!series.has(k))
			series.set(k, { buckets: [], sum: undefined, count: undefined });
		const e = series.get(k);
		if (s.name === `${name}_bucket`)
			e.buckets.push([le === '+Inf' ? Infinity : parseValue(le, 0, le), s.value]);
		else if (s.name === `${name}_sum`)
			e.sum = s.value;
		else if (s.name === `${name}_count`)
			e.count = s.value;
	}
	for (const [k, e] of series) {
		if (e.buckets.length === 0 || e.sum === undefined || e.count === undefined)
			throw new Error(`histogram ${name}${k}: buckets, _sum and _count all needed`);
		for (let i = 1; i < e.buckets.length; i++) {
			if (!(e.buckets[i][0] > e.buckets[i - 1][0]))
				throw new Error(`histogram ${name}${k}: le not increasing`);
			if (e.buckets[i][1] < e.buckets[i - 1][1])
				throw new Error(`histogram ${name}${k}: buckets not cumulative`);
		}
		const last = e.buckets[e.buckets.length - 1];
		if (last[0] !== Infinity)
			throw new Error(`histogram ${name}${k}: no le="+Inf" bucket`);
		if (last[1] !== e.count)
			throw new Error(`histogram ${name}${k}: +Inf bucket ${last[1]} != _count ${e.count}`);
	}
}
