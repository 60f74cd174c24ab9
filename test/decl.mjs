// decl.mjs: declared arguments and results (mcp_args(7)), through the
// official TypeScript SDK client on stdio, against build/decl-server
// (test/decl-server.c, whose tools answer with what their callback read
// through mcp_arg_*):
//   - tools/list carries the JSON Schema each declaration stands for;
//   - defaults are filled in, at depth, and what was sent is kept;
//   - every kind of mistake in the arguments is refused before the
//     callback runs, with where and why: required, ranges, lengths,
//     enums, unknown members, unique items, patterns, formats, U+0000;
//   - a declared output schema is enforced;
//   - an accessor of the wrong type is logged and answers "" or 0;
//   - a mistake in a declaration, among registrations none of which is
//     checked, stops mcp_server_main from starting, naming the line,
//     column and reason.
// Prints TAP. DECL_SERVER names another binary (the sanitizer build).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errText, globalTimeout, is, ok, settle, sleep, tap } from './node/harness.mjs';
import { closeSdk, end, openSdk, show, stderrLog } from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.resolve(process.env.DECL_SERVER ??
    path.join(HERE, '..', process.env.MCP_BUILD ?? 'build', 'decl-server'));
tap.show = show;
const timer = globalTimeout(60000, end, '');

const conn = await openSdk({ kind: 'stdio', server: SERVER, tag: 'decl',
    clientInfo: { name: 'libmcp-decl', version: '1' } });
if (!ok(!conn.connectError, 'connect to decl-server', conn.connectError && errText(conn.connectError))) {
	end();
	process.exit(1);
}

// ---- tools/list: the schemas -------------------------------------------------------

const { tools } = await conn.client.listTools();
const byName = Object.fromEntries(tools.map(t => [t.name, t]));
const s = byName.note?.inputSchema ?? {};
is(s.required, ['title'], 'note: only title is required (defaults and ? make the rest optional)');
is(s.additionalProperties, false, 'note: members it does not declare are refused');
is(Object.keys(s.properties ?? {}), ['title', 'pri', 'weight', 'urgent', 'color', 'tags', 'due', 'code',
    'mail', 'at', 'rows'], 'note: the properties, in the order declared');
is(s.properties?.title, { type: 'string', minLength: 1, maxLength: 20, description: "The note's title" },
    'title string(1..20) \'The note\'\'s title\'');
is(s.properties?.pri, { type: 'integer', minimum: 1, maximum: 5, default: 3, description: 'how urgent, 1 to 5' },
    'pri integer(1..5) = 3 # how urgent, 1 to 5');
is(s.properties?.weight, { type: 'number', exclusiveMinimum: 0, default: 1.5 }, 'weight number(>0) = 1.5');
is(s.properties?.color, { enum: ['red', 'green', 'light blue'], type: 'string', default: 'green' },
    'color enum(red, green, \'light blue\') = green');
is(s.properties?.tags, { type: 'array', items: { type: 'string', minLength: 1, maxLength: 8 }, maxItems: 4,
    uniqueItems: true }, 'tags? [string(1..8)](..4, unique)');
is(s.properties?.due, { type: 'string', format: 'date' }, 'due? date');
is(s.properties?.code, { type: 'string', pattern: '^[A-Z]{3}$' }, 'code? string(/^[A-Z]{3}$/)');
is(s.properties?.at, { type: 'object', properties: { city: { type: 'string', default: 'Paris' },
    zip: { type: 'string', minLength: 5, maxLength: 5 } }, additionalProperties: false },
    'at? { city string = Paris, zip? string(5) }');
is(s.properties?.rows, { type: 'array', items: { type: 'object', properties: {
    k: { type: 'integer', default: 7 } } } }, 'rows? [{ k integer = 7, ... }]: an open object');
is(byName.none?.inputSchema, { type: 'object', properties: {}, additionalProperties: false },
    'none: "" is a tool without arguments');
is(byName.count?.outputSchema, { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 10,
    description: 'The n' } }, required: ['n'], additionalProperties: false }, 'count: its declared output schema');

// ---- calls ---------------------------------------------------------------------------

const call = async (name, args) => {
	const r = await settle(conn.client.callTool({ name, arguments: args }), 10000);
	if (r.error)
		return { error: errText(r.error) };
	return { isError: r.value.isError ?? false, text: r.value.content?.map(c => c.text).join('\n') ?? '',
	    sc: r.value.structuredContent };
};

let r = await call('note', { title: 't' });
is(r.sc?.args, { title: 't', pri: 3, weight: 1.5, urgent: false, color: 'green' },
    'the defaults are filled in, and the optional fields without one stay out', show(r));
is([r.sc?.pri, r.sc?.weight, r.sc?.urgent, r.sc?.color, r.sc?.ntags, r.sc?.city ?? null, r.sc?.has_due],
    [3, 1.5, false, 'green', 0, null, false], 'mcp_arg_int/num/bool/str/len/has read them', show(r));

r = await call('note', { title: 'x', pri: 5, weight: 2, urgent: true, color: 'light blue', tags: ['a', 'b'],
    due: '2024-02-29', at: { zip: '75001' }, rows: [{}, { k: 2, extra: 1 }] });
is(r.sc?.args?.at, { zip: '75001', city: 'Paris' }, 'a default inside an object that was sent', show(r));
is(r.sc?.args?.rows, [{ k: 7 }, { k: 2, extra: 1 }], 'defaults in the objects of an array; an open object keeps extras');
is([r.sc?.pri, r.sc?.urgent, r.sc?.color, r.sc?.tags, r.sc?.city, r.sc?.zip_len, r.sc?.first_row_k, r.sc?.due],
    [5, true, 'light blue', ['a', 'b'], 'Paris', 5, 7, '2024-02-29'],
    'paths: tags[i], at.city, at.zip, rows[0].k', show(r));

const refused = [
	[{}, /arguments: .*title/, 'a missing required argument'],
	[{ title: '' }, /arguments\.title/, 'a string shorter than its range'],
	[{ title: 'x'.repeat(21) }, /arguments\.title/, 'a string longer than its range'],
	[{ title: 't', pri: 6 }, /arguments\.pri/, 'an integer above its range'],
	[{ title: 't', pri: 2.5 }, /arguments\.pri/, 'a real for an integer'],
	[{ title: 't', weight: 0 }, /arguments\.weight/, 'an exclusive bound'],
	[{ title: 't', color: 'blue' }, /arguments\.color/, 'a value not in the enum'],
	[{ title: 't', titel: 'x' }, /titel/, 'a member the declaration does not have'],
	[{ title: 't', tags: ['a', 'a'] }, /arguments\.tags/, 'items that must be unique'],
	[{ title: 't', tags: ['a', 'b', 'c', 'd', 'e'] }, /arguments\.tags/, 'more items than the range'],
	[{ title: 't', tags: ['123456789'] }, /arguments\.tags\[0\]/, 'an item longer than its range'],
	[{ title: 't', at: { zip: '123' } }, /arguments\.at\.zip/, 'a nested field out of range'],
	[{ title: 't', at: { town: 'x' } }, /town/, 'a nested object is closed too'],
	[{ title: 't', code: 'abc' }, /arguments\.code/, 'a string that does not match the pattern'],
	[{ title: 't', due: '2023-02-29' }, /arguments\.due/, 'a date that is no date (format)'],
	[{ title: 't', mail: 'no-at-sign' }, /arguments\.mail/, 'an email that is none (format)'],
	[{ title: 'a\u0000b' }, /arguments\.title: a string holds U\+0000/, 'a string holding U+0000'],
	[{ title: 't', rows: [{ k: 'x' }] }, /arguments\.rows\[0\]\.k/, 'a field in an array of objects'],
];
for (const [args, re, what] of refused) {
	r = await call('note', args);
	ok(r.isError && re.test(r.text) && r.sc === undefined, `refused before the callback: ${what}`, show(r));
}
r = await call('note', { title: 't', code: 'ABC', mail: 'a.b@example.org', due: '2026-12-01' });
ok(!r.isError && r.sc?.args?.code === 'ABC', 'a matching pattern, an email and a date pass', show(r));

r = await call('count', { n: 5 });
is(r.sc, { n: 5 }, 'count 5: within its declared output');
r = await call('count', { n: 11 });
ok(r.isError && /structured/i.test(r.text), 'count 11: out of the declared output schema: isError', show(r));
r = await call('none', { x: 1 });
ok(r.isError && /x/.test(r.text), 'none: an argument to a tool that takes none is refused', show(r));

// Flat arguments, read in place: what the accessors give before the
// callback asks for mcp_call_args and after (from the object then); and
// the same when 1e20 sends them the general way (a real where an integer
// goes is not read in place).
for (const [args, how] of [
	[{ b: true, r: 2.5, s: 'h\u00e9\n"', i: -7 }, 'read in place'],
	[{ s: 'x', i: 1e20 }, 'parsed (1e20)'],
]) {
	r = await call('reread', args);
	const want = {
		s: args.s, s_len: Buffer.byteLength(args.s), i: args.i === 1e20 ? 9223372036854775807 : args.i,
		r: args.r ?? 0, b: args.b ?? false, has_i: true, dot_s: true,
		r_as_int: 0,
	};
	is(r.sc?.before, want, `reread, ${how}: every accessor`, show(r));
	is(r.sc?.after, want, `reread, ${how}: the same once mcp_call_args built the object`, show(r));
	is(Object.keys(r.sc?.args ?? {}), Object.keys(args), `reread, ${how}: the object keeps the client's order`);
	is(r.sc?.args, args, `reread, ${how}: and its values`);
}
const rAsInt = () => stderrLog.some(l => /tool reread: mcp_arg_int\("r"\): the argument is a number/.test(l));
for (let i = 0; i < 100 && !rAsInt(); i++)
	await sleep(20);
ok(rAsInt(), 'reread: mcp_arg_int of 2.5 is logged as the program\'s mistake, from the slot as from jansson');

r = await call('misread', { s: 'x', n: 5 });
is(r.sc, { as_int: 0, as_str: '', missing_null: true },
    'the wrong accessor answers 0 and "", an absent string NULL', show(r));
const logged = () => stderrLog.some(l => /tool misread: mcp_arg_int\("s"\): the argument is a string/.test(l)) &&
    stderrLog.some(l => /mcp_arg_str\("n"\): the argument is an integer/.test(l));
for (let i = 0; i < 100 && !logged(); i++)
	await sleep(20);	// stderr may come after the answer
ok(logged(),
    'and the program\'s mistake is logged, naming the tool, the accessor and the argument');
await closeSdk(conn);

// ---- a mistake in a declaration: the server does not start ----------------------------

const mistakes = [
	[1, /bad input schema declaration: line 1, column 7: unknown type "strng"/],
	[2, /line 1, column 10: the range is empty/],
	[3, /line 1, column 13: default: expected integer, got string/],
	[4, /tool bad: bad input schema.*pattern/],
];
for (const [n, re] of mistakes) {
	const p = spawnSync(SERVER, ['--broken', String(n)], { input: '', encoding: 'utf8', timeout: 10000 });
	ok(p.status === 1 && p.stdout === '' && re.test(p.stderr) &&
	    /mcp_server_main: not starting: 2 setup calls failed, the first mcp_tool_register/.test(p.stderr),
	    `--broken ${n}: exit 1, nothing on stdout, the reason and the count logged`,
	    `status ${p.status}`, `stdout ${show(p.stdout)}`, p.stderr);
}
{
	const p = spawnSync(SERVER, ['--broken', '1', '--help'], { input: '', encoding: 'utf8', timeout: 10000 });
	ok(p.status === 0 && /usage: decl-server/.test(p.stdout), '--help works all the same, with a bad declaration',
	    `status ${p.status}`, p.stderr);
	const q = spawnSync(SERVER, ['--broken', '5'], { encoding: 'utf8', timeout: 10000,
	    input: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",' +
	    '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n' +
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n' +
	    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"count2","arguments":{"n":4}}}\n' });
	ok(q.status === 0 && /"id":2,"result":\{.*"structuredContent":\{"n":4\}/.test(q.stdout),
	    '--broken 5: a failure handled with mcp_server_clear_error, and an unregister of nothing: it runs',
	    `status ${q.status}`, q.stdout, q.stderr);
}
clearTimeout(timer);
end();
