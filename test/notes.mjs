// notes.mjs: examples/notes-server.c (build/notes-server) through the
// official TypeScript SDK client, on stdio, Streamable HTTP (/mcp) and the
// legacy HTTP+SSE transport (/sse), a server of its own for each:
//   - tools/list: the four tools, their declared input schemas (required,
//     ranges, defaults, descriptions) and output schemas;
//   - add/get/list/delete round trip, with structured content;
//   - bad arguments are isError results naming the argument, and the
//     callback never ran (the count is the same, the next id is the next);
//   - get_note and delete_note of a missing id: an isError result naming it;
//   - 40 concurrent add_note from one client (and, over HTTP, 4 clients at
//     once more): 40 distinct dense ids, all listed afterwards;
//   - resources: notes://all, notes://{id}, the template listed, a missing
//     note (-32002), completion of {id}, resources/updated to a subscriber;
//   - the prompt summarize_notes carries the notes and the style;
//   - no accessor misuse logged, and the server exits 0 when it is stopped;
//     against a ThreadSanitizer build (NOTES_SERVER=build/tsan/notes-server),
//     no report: the 40 concurrent calls are too short to lose a note
//     without the mutex, so that is what finds a missing lock.
// Prints TAP; exits 1 if an assertion failed. NOTES_SERVER names another
// binary (the sanitizer build); MCP_TIME_SCALE stretches the time bounds;
// SAN_LOG_DIR, when set, is where a sanitizer writes its reports, and any
// there fails the run.
//
//   node test/notes.mjs [stdio|http|sse] ...

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errText, globalTimeout, is, ok, settle, sleep, tap, textOf } from './node/harness.mjs';
import { closeSdk, end, openSdk, sdk, show, startHttp, stderrLog, stop } from './node/mcp-clients.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SERVER = path.resolve(process.env.NOTES_SERVER ??
    path.join(HERE, '..', process.env.MCP_BUILD ?? 'build', 'notes-server'));
const SCALE = Number(process.env.MCP_TIME_SCALE ?? 1) || 1;
const ALL_KINDS = ['stdio', 'http', 'sse'];
const want = process.argv.slice(2);
const KINDS = ALL_KINDS.filter(k => !want.some(a => ALL_KINDS.includes(a)) || want.includes(k));
const { ResourceUpdatedNotificationSchema } = sdk.types;
// More workers than cores, so that the concurrent add_note calls overlap.
const ARGS = ['--workers', '8'];

tap.show = show;
const timer = globalTimeout(120000 * SCALE, end, '');

// A tools/call: {isError, text, sc} or {error}.
async function call(conn, name, args) {
	const r = await settle(conn.client.callTool({ name, arguments: args }), 10000 * SCALE);
	if (r.error)
		return { error: errText(r.error) };
	return { isError: r.value.isError ?? false, text: textOf(r.value), sc: r.value.structuredContent };
}

// The number of notes, by list_notes.
const count = async conn => (await call(conn, 'list_notes', { limit: 100 })).sc?.total;

async function open(kind, srv, tag) {
	const conn = await openSdk({ kind, server: SERVER, args: ARGS, tag, clientInfo: { name: 'libmcp-notes', version: '1' },
	    httpServer: () => srv });
	if (conn.client) {
		conn.updated = [];
		conn.client.setNotificationHandler(ResourceUpdatedNotificationSchema,
		    n => conn.updated.push(n.params.uri));
	}
	return conn;
}

async function until(cond, ms = 3000 * SCALE) {
	for (const t0 = Date.now(); !cond() && Date.now() - t0 < ms;)
		await sleep(20);
	return cond();
}

async function run(kind) {
	tap.label = `${kind}: `;
	const srv = kind === 'stdio' ? null : await startHttp(SERVER, ARGS, `notes ${kind}`);
	if (srv !== null && !ok(srv.base !== null, 'the server listens on 127.0.0.1:0'))
		return;
	const conn = await open(kind, srv, kind);
	if (!ok(!conn.connectError, 'connect', conn.connectError && errText(conn.connectError)))
		return;

	// ---- tools/list -------------------------------------------------------
	const { tools } = await conn.client.listTools();
	const t = Object.fromEntries(tools.map(x => [x.name, x]));
	is(tools.map(x => x.name), ['add_note', 'get_note', 'list_notes', 'delete_note'], 'tools/list: the four tools');
	const add = t.add_note?.inputSchema ?? {};
	is(add.required, ['title', 'body'], 'add_note: title and body required, tags (with a default) not');
	is(add.properties?.title, { type: 'string', minLength: 1, maxLength: 200, description: 'The title' },
	    'add_note: title string(1..200) \'The title\'');
	is(add.properties?.tags, { type: 'array', items: { type: 'string', minLength: 1, maxLength: 32 },
	    maxItems: 10, uniqueItems: true, default: [], description: 'Words to find it by' },
	    'add_note: tags [string(1..32)](..10, unique) = []');
	is(add.additionalProperties, false, 'add_note: unknown members refused');
	is(t.list_notes?.inputSchema?.properties?.limit, { type: 'integer', minimum: 1, maximum: 100, default: 20,
	    description: 'At most this many' }, 'list_notes: limit integer(1..100) = 20');
	is(t.list_notes?.inputSchema?.required, undefined, 'list_notes: nothing required');
	is(t.get_note?.inputSchema?.properties?.id, { type: 'integer', minimum: 1, description: 'The note\'s id' },
	    'get_note: id integer(1..) with its description');
	is(t.delete_note?.inputSchema, t.get_note?.inputSchema, 'delete_note: the same id as get_note');
	const note = { type: 'object', properties: { id: { type: 'integer' }, title: { type: 'string' },
	    body: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
	    required: ['id', 'title', 'body', 'tags'], additionalProperties: false };
	is(t.add_note?.outputSchema, { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'],
	    additionalProperties: false }, 'add_note: output schema {id}');
	is([t.get_note?.outputSchema, t.delete_note?.outputSchema], [note, note],
	    'get_note, delete_note: output schema, a note');
	is(t.list_notes?.outputSchema?.properties?.notes, { type: 'array', items: note },
	    'list_notes: output schema, notes [{...}] and total');

	// ---- round trip ----------------------------------------------------------
	let r = await call(conn, 'add_note', { title: 'first', body: 'the first note', tags: ['a', 'b'] });
	is(r.sc, { id: 1 }, 'add_note: the first id is 1', show(r));
	r = await call(conn, 'add_note', { title: 'second', body: 'no tags' });
	is(r.sc, { id: 2 }, 'add_note: the next id is 2', show(r));
	r = await call(conn, 'get_note', { id: 1 });
	is(r.sc, { id: 1, title: 'first', body: 'the first note', tags: ['a', 'b'] }, 'get_note 1: the note', show(r));
	r = await call(conn, 'get_note', { id: 2 });
	is(r.sc?.tags, [], 'get_note 2: the default tags, []', show(r));
	r = await call(conn, 'list_notes', {});
	is([r.sc?.notes?.map(n => n.id), r.sc?.total], [[1, 2], 2], 'list_notes: both, oldest first', show(r));
	r = await call(conn, 'list_notes', { tag: 'b' });
	is([r.sc?.notes?.map(n => n.title), r.sc?.total], [['first'], 1], 'list_notes tag b: the first only', show(r));
	r = await call(conn, 'list_notes', { limit: 1 });
	is([r.sc?.notes?.map(n => n.id), r.sc?.total], [[1], 2], 'list_notes limit 1: one, of 2', show(r));
	r = await call(conn, 'delete_note', { id: 2 });
	is(r.sc?.title, 'second', 'delete_note 2: gives the note deleted', show(r));
	r = await call(conn, 'get_note', { id: 2 });
	ok(r.isError && /^id: no note 2$/.test(r.text) && r.sc === undefined,
	    'get_note of a deleted note: isError "id: no note 2"', show(r));
	r = await call(conn, 'get_note', { id: 9999 });
	ok(r.isError && /no note 9999/.test(r.text), 'get_note of a missing id: isError naming it', show(r));
	r = await call(conn, 'delete_note', { id: 9999 });
	ok(r.isError && /no note 9999/.test(r.text), 'delete_note of a missing id: isError naming it', show(r));
	is(await count(conn), 1, 'one note left');

	// ---- bad arguments: refused before the callback ---------------------------
	const bad = [
		['add_note', { body: 'x' }, /arguments: .*title/, 'a missing title'],
		['add_note', { title: 'x'.repeat(201), body: 'x' }, /arguments\.title/, 'a title of 201 characters'],
		['add_note', { title: '', body: 'x' }, /arguments\.title/, 'an empty title'],
		['add_note', { title: 't', body: 'x', colour: 'red' }, /colour/, 'an unknown member'],
		['add_note', { title: 't', body: 'x', tags: ['a', 'a'] }, /arguments\.tags/, 'tags twice'],
		['add_note', { title: 't', body: 5 }, /arguments\.body/, 'a body that is a number'],
		['list_notes', { limit: 0 }, /arguments\.limit/, 'a limit of 0'],
		['list_notes', { limit: 101 }, /arguments\.limit/, 'a limit of 101'],
		['get_note', { id: 0 }, /arguments\.id/, 'an id of 0'],
		['delete_note', { id: 'one' }, /arguments\.id/, 'an id that is a string'],
	];
	for (const [tool, args, re, what] of bad) {
		r = await call(conn, tool, args);
		ok(r.isError && re.test(r.text) && r.sc === undefined, `${tool}: ${what} is an isError naming it`, show(r));
	}
	is(await count(conn), 1, 'after the bad calls: still one note (no add_note callback ran)');
	r = await call(conn, 'add_note', { title: 'third', body: 'x' });
	is(r.sc, { id: 3 }, 'and the next id is 3: no id was taken by a refused call', show(r));

	// ---- 40 concurrent add_note -----------------------------------------------
	const before = await count(conn);
	const rs = await Promise.all([...Array(40).keys()].map(i =>
	    call(conn, 'add_note', { title: `c${i}`, body: `concurrent ${i}`, tags: ['conc'] })));
	const ids = rs.map(x => x.sc?.id);
	ok(rs.every(x => !x.error && !x.isError) && new Set(ids).size === 40,
	    '40 concurrent add_note: 40 results, 40 distinct ids', show(rs.filter(x => x.error || x.isError)));
	is([...ids].sort((a, b) => a - b), [...Array(40).keys()].map(i => i + 4), 'and dense: 4 to 43');
	r = await call(conn, 'list_notes', { tag: 'conc', limit: 100 });
	is([r.sc?.total, r.sc?.notes?.map(n => n.id).sort((a, b) => a - b)], [40, [...ids].sort((a, b) => a - b)],
	    'list_notes tag conc: all 40, none lost', show(r.sc?.total));
	ok(r.sc?.notes?.every(n => n.body === `concurrent ${n.title.slice(1)}` && ids[Number(n.title.slice(1))] === n.id),
	    'each note has its own title, body and the id its call was given');
	is(await count(conn), before + 40, `the count grew by 40, to ${before + 40}`);
	if (kind !== 'stdio') {
		const others = await Promise.all([1, 2, 3, 4].map(i => open(kind, srv, `${kind} ${i}`)));
		ok(others.every(c => !c.connectError), '4 more clients connect');
		const n0 = await count(conn);
		const more = await Promise.all(others.flatMap((c, k) => [...Array(10).keys()].map(i =>
		    call(c, 'add_note', { title: `m${k}.${i}`, body: 'from another client' }))));
		const mids = more.map(x => x.sc?.id);
		ok(more.every(x => !x.isError && !x.error), '4 clients x 10 concurrent add_note: 40 results',
		    show(more.filter(x => x.isError || x.error)));
		is(mids.slice().sort((a, b) => a - b), [...Array(40).keys()].map(i => i + 44),
		    'and 40 distinct new ids, dense: 44 to 83');
		is(await count(conn), n0 + 40, 'all of them listed: the count grew by 40');
		for (const c of others)
			await closeSdk(c);
	}

	// ---- resources ------------------------------------------------------------
	const total = await count(conn);
	const lr = await settle(conn.client.listResources());
	is(lr.value?.resources?.map(x => [x.uri, x.mimeType]), [['notes://all', 'application/json']],
	    'resources/list: notes://all, application/json', lr.error && errText(lr.error));
	const lt = await settle(conn.client.listResourceTemplates());
	is(lt.value?.resourceTemplates?.map(x => x.uriTemplate), ['notes://{id}'], 'resources/templates/list: notes://{id}',
	    lt.error && errText(lt.error));
	let rr = await settle(conn.client.readResource({ uri: 'notes://all' }));
	let all;
	try { all = JSON.parse(rr.value?.contents?.[0]?.text); } catch { /* checked below */ }
	ok(all && Object.keys(all).length === total && all['1']?.title === 'first' && all['3']?.title === 'third' &&
	    all['2'] === undefined, `resources/read notes://all: JSON of the ${total} notes, by id`,
	    rr.error ? errText(rr.error) : show(rr.value).slice(0, 400));
	rr = await settle(conn.client.readResource({ uri: 'notes://1' }));
	let one;
	try { one = JSON.parse(rr.value?.contents?.[0]?.text); } catch { /* checked below */ }
	is([rr.value?.contents?.[0]?.uri, one], ['notes://1', { id: 1, title: 'first', body: 'the first note',
	    tags: ['a', 'b'] }], 'resources/read notes://1: that note', rr.error && errText(rr.error));
	rr = await settle(conn.client.readResource({ uri: 'notes://2' }));
	ok(rr.error?.code === -32002 && /no such note/.test(rr.error.message),
	    'resources/read of a deleted note: -32002 (resource not found), "no such note"',
	    rr.error ? errText(rr.error) : show(rr.value));
	const cr = await settle(conn.client.complete({ ref: { type: 'ref/resource', uri: 'notes://{id}' },
	    argument: { name: 'id', value: '1' } }));
	const want1 = Object.keys(all ?? {}).filter(k => k.startsWith('1'));
	is(cr.value?.completion?.values?.slice().sort(), want1.sort(),
	    `completion of {id} from "1": the ${want1.length} ids that start with 1`, cr.error && errText(cr.error));
	const cr2 = await settle(conn.client.complete({ ref: { type: 'ref/resource', uri: 'notes://{id}' },
	    argument: { name: 'id', value: '2' } }));
	ok(cr2.value?.completion?.values?.length > 0 && cr2.value.completion.values.every(v => v.startsWith('2')) &&
	    !cr2.value.completion.values.includes('2'), 'completion from "2": ids that start with 2, not the deleted 2',
	    cr2.error ? errText(cr2.error) : show(cr2.value));

	// resources/updated to a subscriber of notes://all, and of the note.
	let s = await settle(conn.client.subscribeResource({ uri: 'notes://all' }));
	const s2 = await settle(conn.client.subscribeResource({ uri: 'notes://3' }));
	ok(!s.error && !s2.error, 'resources/subscribe notes://all and notes://3', s.error && errText(s.error));
	conn.updated.length = 0;
	await call(conn, 'add_note', { title: 'watched', body: 'x' });
	ok(await until(() => conn.updated.includes('notes://all')),
	    'add_note: resources/updated for notes://all', show(conn.updated));
	await call(conn, 'delete_note', { id: 3 });
	ok(await until(() => conn.updated.includes('notes://3')), 'delete_note 3: resources/updated for notes://3',
	    show(conn.updated));

	// ---- the prompt -----------------------------------------------------------
	const lp = await settle(conn.client.listPrompts());
	is(lp.value?.prompts?.map(p => [p.name, p.arguments?.map(a => [a.name, a.required ?? false])]),
	    [['summarize_notes', [['style', false]]]], 'prompts/list: summarize_notes, style optional',
	    lp.error && errText(lp.error));
	let pg = await settle(conn.client.getPrompt({ name: 'summarize_notes', arguments: { style: 'as haiku' } }));
	let text = pg.value?.messages?.map(m => m.content?.text).join('\n') ?? '';
	ok(pg.value?.messages?.length === 1 && pg.value.messages[0].role === 'user' && /as haiku/.test(text) &&
	    /"first"/.test(text) && /"c39"/.test(text) && /"watched"/.test(text) && !/"third"/.test(text),
	    'prompts/get summarize_notes style "as haiku": one user message with the style and the notes',
	    pg.error ? errText(pg.error) : text.slice(0, 300));
	pg = await settle(conn.client.getPrompt({ name: 'summarize_notes' }));
	text = pg.value?.messages?.map(m => m.content?.text).join('\n') ?? '';
	ok(/briefly/.test(text) && /"first"/.test(text), 'prompts/get without a style: "briefly", and the notes',
	    pg.error ? errText(pg.error) : text.slice(0, 300));

	// ---- the end --------------------------------------------------------------
	await closeSdk(conn);
	const p = conn.p ?? srv.p;
	if (srv !== null)
		await stop(srv.p, 'SIGTERM', 8000 * SCALE);
	else
		await until(() => p.exit !== null, 5000 * SCALE);
	is(p.exit, { code: 0, signal: null }, kind === 'stdio' ? 'the server exits 0 at the end of its input' :
	    'the server exits 0 on SIGTERM');
}

for (const kind of KINDS) {
	try {
		await run(kind);
	} catch (e) {
		ok(false, 'completes', e.stack || String(e));
	}
}
tap.label = '';
const dir = process.env.SAN_LOG_DIR;
if (dir && existsSync(dir)) {
	const files = readdirSync(dir).filter(f => readFileSync(path.join(dir, f), 'utf8').trim() !== '');
	ok(files.length === 0, `no sanitizer report (${dir})`, files.map(f =>
	    readFileSync(path.join(dir, f), 'utf8').split('\n').slice(0, 30).join('\n')).join('\n----\n'));
}
is(stderrLog.filter(l => /mcp_arg_|not starting|setup call|ThreadSanitizer/.test(l)), [],
    'no accessor of the wrong type, no failed setup call and no ThreadSanitizer report logged');
clearTimeout(timer);
end();
