/*
 * t_registry.c: unit tests for the tool table in src/registry.c, through
 * the public registration calls plus mcp__registry_list (tools/list and
 * its cursors) and mcp__registry_get (the reference a call holds). The
 * user-data destructor is counted everywhere: it must run exactly once,
 * whether registration succeeds, fails, or the tool outlives its
 * unregistration. Single-threaded; never runs the server.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/server.h"
#include "tap.h"

#define NDATA	64

/* freed[i] counts the destructor calls for &data[i]. */
static int	 data[NDATA];
static int	 freed[NDATA];

static void
count_free(void *p)
{
	freed[(int *)p - data]++;
}

static void
fn(mcp_call *call)
{
	(void)call;
}

static void
reset_counts(void)
{
	memset(freed, 0, sizeof(freed));
}

/* Registers NAME with the default schema and user data &data[I]. */
static int
reg(mcp_server *srv, const char *name, int i)
{
	return mcp_tool_register(srv, name, "a test tool", NULL, fn, &data[i],
	    count_free);
}

/* Appends ",S" (or "S" to an empty DST) within SIZE bytes. */
static void
append(char *dst, size_t size, const char *s)
{
	size_t	 n = strlen(dst), m = strlen(s);

	if (n > 0 && n + 1 < size)
		dst[n++] = ',';
	if (m > size - n - 1)
		m = size - n - 1;
	memcpy(dst + n, s, m);
	dst[n + m] = '\0';
}

/*
 * The names listed by one tools/list page, as "a,b,c", into OUT; the
 * next cursor (or "") into NEXT. Returns -1 on a NULL result.
 */
static int
page(mcp_server *srv, const char *cursor, int limit, char *out,
    size_t outlen, char *next, size_t nextlen)
{
	json_t		*res, *tools, *t, *nc;
	size_t		 i;
	int		 bad;

	out[0] = '\0';
	next[0] = '\0';
	res = mcp__registry_list(&srv->reg, cursor, limit, MCP_V_LATEST,
	    &bad);
	if (res == NULL)
		return -1;
	tools = json_object_get(res, "tools");
	json_array_foreach(tools, i, t)
		append(out, outlen, json_string_value(json_object_get(t,
		    "name")));
	nc = json_object_get(res, "nextCursor");
	if (nc != NULL)
		snprintf(next, nextlen, "%s", json_is_string(nc) ?
		    json_string_value(nc) : "(not a string)");
	json_decref(res);
	return 0;
}

/* Every name, in order, on one page. */
static const char *
names(mcp_server *srv)
{
	static char	 out[1024];
	char		 next[64];

	if (page(srv, NULL, 0, out, sizeof(out), next, sizeof(next)) != 0)
		return "(list failed)";
	if (next[0] != '\0')
		return "(unexpected nextCursor)";
	return out;
}

static void
t_register(void)
{
	mcp_server	*srv;
	char		 name[200];
	int		 i;

	reset_counts();
	srv = mcp_server_new("t", "1");
	ok(srv != NULL, "server");
	is_int(reg(srv, "zeta", 0), MCP_OK, "register zeta");
	is_int(reg(srv, "alpha", 1), MCP_OK, "register alpha");
	is_int(reg(srv, "mid.dle-name_1", 2), MCP_OK,
	    "register mid.dle-name_1");
	is_int(reg(srv, "Beta", 3), MCP_OK, "register Beta");
	is_str(names(srv), "zeta,alpha,mid.dle-name_1,Beta",
	    "list keeps registration order");
	is_int(srv->reg.count, 4, "count 4");
	ok(freed[0] + freed[1] + freed[2] + freed[3] == 0,
	    "no destructor ran on success");

	/* Duplicates. */
	is_int(reg(srv, "alpha", 10), MCP_EEXIST, "duplicate: EEXIST");
	is_int(freed[10], 1, "duplicate: its destructor ran once");
	is_int(freed[1], 0, "duplicate: the original keeps its data");
	is_str(names(srv), "zeta,alpha,mid.dle-name_1,Beta",
	    "duplicate: list unchanged");
	is_int(reg(srv, "beta", 11), MCP_OK, "names are case-sensitive");

	/* Flags: the task flags one at a time, INPUT_FIRST only with one. */
	is_int(mcp_tool_set_flags(srv, "alpha", MCP_TOOL_TASK_OPTIONAL |
	    MCP_TOOL_INPUT_FIRST), MCP_OK, "flags: TASK_OPTIONAL|INPUT_FIRST");
	is_int(mcp_tool_set_flags(srv, "alpha", MCP_TOOL_TASK_REQUIRED |
	    MCP_TOOL_INPUT_FIRST | MCP_TOOL_LOOP), MCP_OK,
	    "flags: TASK_REQUIRED|INPUT_FIRST|LOOP");
	is_int(mcp_tool_set_flags(srv, "alpha", MCP_TOOL_INPUT_FIRST),
	    MCP_EINVAL, "flags: INPUT_FIRST without a task flag: EINVAL");
	is_int(mcp_tool_set_flags(srv, "alpha", MCP_TOOL_TASK_OPTIONAL |
	    MCP_TOOL_TASK_REQUIRED), MCP_EINVAL, "flags: both task flags: EINVAL");
	is_int(mcp_tool_set_flags(srv, "alpha", 0x100), MCP_EINVAL,
	    "flags: an unknown bit: EINVAL");
	is_int(mcp_tool_set_flags(srv, "nosuch", MCP_TOOL_LOOP), MCP_ENOENT,
	    "flags: an unknown tool: ENOENT");
	is_int(mcp_tool_set_flags(srv, "alpha", 0), MCP_OK, "flags: cleared");

	/* Bad schemas. */
	is_int(mcp_tool_register(srv, "s1", NULL, "{not json", fn, &data[12],
	    count_free), MCP_EINVAL, "schema not JSON: EINVAL");
	is_int(freed[12], 1, "schema not JSON: destructor once");
	is_int(mcp_tool_register(srv, "s2", NULL, "[{\"type\":\"object\"}]",
	    fn, &data[13], count_free), MCP_EINVAL,
	    "schema an array: EINVAL");
	is_int(freed[13], 1, "schema an array: destructor once");
	is_int(mcp_tool_register(srv, "s3", NULL, "\"object\"", fn, &data[14],
	    count_free), MCP_EINVAL, "schema a string: EINVAL");
	is_int(freed[14], 1, "schema a string: destructor once");
	is_int(mcp_tool_register(srv, "s4", NULL, "{\"type\":\"string\"}", fn,
	    &data[15], count_free), MCP_EINVAL, "type string: EINVAL");
	is_int(freed[15], 1, "type string: destructor once");
	is_int(mcp_tool_register(srv, "s5", NULL, "{}", fn, &data[16],
	    count_free), MCP_EINVAL, "no type: EINVAL");
	is_int(freed[16], 1, "no type: destructor once");
	is_int(mcp_tool_register(srv, "s6", NULL, "{\"type\":\"object\","
	    "\"type\":\"object\"}", fn, &data[17], count_free), MCP_EINVAL,
	    "duplicate key: EINVAL");
	is_int(freed[17], 1, "duplicate key: destructor once");
	is_int(mcp_tool_register(srv, "s7", NULL, "{\"type\":\"object\","
	    "\"properties\":{\"a\":{\"type\":\"nope\"}}}", fn, &data[18],
	    count_free), MCP_EINVAL, "unusable schema: EINVAL");
	is_int(freed[18], 1, "unusable schema: destructor once");
	is_int(mcp_tool_register(srv, "s8", "d", "{\"type\":\"object\","
	    "\"properties\":{\"a\":{\"type\":\"string\"}}}", fn, &data[19],
	    count_free), MCP_OK, "a real schema: OK");

	/* Bad names and callbacks. */
	is_int(reg(srv, "", 20), MCP_EINVAL, "empty name: EINVAL");
	is_int(freed[20], 1, "empty name: destructor once");
	is_int(reg(srv, "has space", 21), MCP_EINVAL, "space: EINVAL");
	is_int(freed[21], 1, "space: destructor once");
	is_int(reg(srv, "tab\there", 22), MCP_EINVAL, "tab: EINVAL");
	is_int(reg(srv, "sl/ash", 23), MCP_EINVAL, "slash: EINVAL");
	is_int(reg(srv, "caf\xc3\xa9", 24), MCP_EINVAL, "non-ASCII: EINVAL");
	memset(name, 'n', 129);
	name[129] = '\0';
	is_int(reg(srv, name, 25), MCP_EINVAL, "129 characters: EINVAL");
	is_int(freed[25], 1, "129 characters: destructor once");
	name[128] = '\0';
	is_int(reg(srv, name, 26), MCP_OK, "128 characters: OK");
	is_int(mcp_tool_register(srv, NULL, NULL, NULL, fn, &data[27],
	    count_free), MCP_EINVAL, "NULL name: EINVAL");
	is_int(freed[27], 1, "NULL name: destructor once");
	is_int(mcp_tool_register(srv, "nofn", NULL, NULL, NULL, &data[28],
	    count_free), MCP_EINVAL, "NULL callback: EINVAL");
	is_int(freed[28], 1, "NULL callback: destructor once");
	is_int(mcp_tool_register(srv, "nofree", NULL, NULL, fn, &data[29],
	    NULL), MCP_OK, "NULL destructor: OK");
	is_int(mcp_tool_register(srv, "", NULL, NULL, fn, &data[29], NULL),
	    MCP_EINVAL, "failure with a NULL destructor: EINVAL");

	/* A NULL server is out of memory, and the data is still freed. */
	is_int(mcp_tool_register(NULL, "x", NULL, NULL, fn, &data[30],
	    count_free), MCP_ENOMEM, "NULL server: ENOMEM");
	is_int(freed[30], 1, "NULL server: destructor once");
	is_int(mcp_tool_unregister(NULL, "x"), MCP_ENOMEM,
	    "unregister, NULL server: ENOMEM");
	is_int(mcp_tool_set_title(NULL, "x", "t"), MCP_ENOMEM,
	    "set_title, NULL server: ENOMEM");

	/* Unregister. */
	is_int(mcp_tool_unregister(srv, "alpha"), MCP_OK, "unregister alpha");
	is_int(freed[1], 1, "unregister: destructor once");
	ok(strstr(names(srv), "alpha") == NULL, "unregister: list skips it");
	is_int(mcp_tool_unregister(srv, "alpha"), MCP_ENOENT,
	    "unregister again: ENOENT");
	is_int(mcp_tool_unregister(srv, NULL), MCP_EINVAL,
	    "unregister NULL: EINVAL");
	is_int(mcp_tool_unregister(srv, "zeta"), MCP_OK, "unregister head");
	is_int(mcp_tool_unregister(srv, "nofree"), MCP_OK, "unregister tail");
	is_str(names(srv), "mid.dle-name_1,Beta,beta,s8,"
	    "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"
	    "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
	    "head and tail removed");
	is_int(reg(srv, "alpha", 31), MCP_OK, "register alpha again");
	ok(strcmp(names(srv) + strlen(names(srv)) - 6, ",alpha") == 0,
	    "re-registered: now last");
	is_int(reg(srv, "zeta", 32), MCP_OK, "a removed head's name is free");

	mcp_server_free(srv);
	for (i = 0; i < NDATA; i++)
		if (freed[i] > 1)
			break;
	ok(i == NDATA, "no destructor ran twice");
	ok(freed[0] == 1 && freed[2] == 1 && freed[3] == 1 && freed[11] == 1 &&
	    freed[19] == 1 && freed[26] == 1 && freed[31] == 1 &&
	    freed[32] == 1, "server_free: destructors ran");
	mcp_server_free(NULL);
	ok(1, "mcp_server_free(NULL) is a no-op");
}

static void
t_optional_fields(void)
{
	mcp_server	*srv;
	json_t		*res, *t;
	int		 bad, v;
	static const int versions[] = { MCP_V20241105, MCP_V20250326,
	    MCP_V20250618, MCP_V20251125 };
	size_t		 i;

	srv = mcp_server_new("t", "1");
	is_int(mcp_tool_register(srv, "full", "the full tool", NULL, fn, NULL,
	    NULL), MCP_OK, "register full");
	is_int(mcp_tool_register(srv, "bare", NULL, NULL, fn, NULL, NULL),
	    MCP_OK, "register bare");
	is_int(mcp_tool_set_title(srv, "full", "Full Tool"), MCP_OK,
	    "set_title");
	is_int(mcp_tool_set_output_schema(srv, "full", "{\"type\":\"object\","
	    "\"properties\":{\"n\":{\"type\":\"integer\"}}}"), MCP_OK,
	    "set_output_schema");
	is_int(mcp_tool_set_output_schema(srv, "full",
	    "{\"type\":\"object\"}"), MCP_ESTATE,
	    "set_output_schema twice: ESTATE");
	is_int(mcp_tool_set_output_schema(srv, "bare", "{\"type\":1}"),
	    MCP_EINVAL, "bad output schema: EINVAL");
	is_int(mcp_tool_set_annotations(srv, "full", "{\"readOnlyHint\":"
	    "true}"), MCP_OK, "set_annotations");
	is_int(mcp_tool_set_annotations(srv, "bare", "[true]"), MCP_EINVAL,
	    "annotations not an object: EINVAL");
	is_int(mcp_tool_set_title(srv, "nosuch", "x"), MCP_ENOENT,
	    "set_title, no such tool: ENOENT");
	is_int(mcp_tool_set_title(srv, NULL, "x"), MCP_EINVAL,
	    "set_title, NULL name: EINVAL");

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		v = versions[i];
		res = mcp__registry_list(&srv->reg, NULL, 0, v, &bad);
		t = json_array_get(json_object_get(res, "tools"), 0);
		is_str(json_string_value(json_object_get(t, "name")), "full",
		    "%d: name", v);
		is_str(json_string_value(json_object_get(t, "description")),
		    "the full tool", "%d: description", v);
		is_str(json_string_value(json_object_get(json_object_get(t,
		    "inputSchema"), "type")), "object", "%d: inputSchema", v);
		ok((json_object_get(t, "title") != NULL) ==
		    (v >= MCP_V20250618), "%d: title %s", v,
		    v >= MCP_V20250618 ? "present" : "absent");
		ok((json_object_get(t, "outputSchema") != NULL) ==
		    (v >= MCP_V20250618), "%d: outputSchema %s", v,
		    v >= MCP_V20250618 ? "present" : "absent");
		ok((json_object_get(t, "annotations") != NULL) ==
		    (v >= MCP_V20250326), "%d: annotations %s", v,
		    v >= MCP_V20250326 ? "present" : "absent");
		t = json_array_get(json_object_get(res, "tools"), 1);
		is_int(json_object_size(t), 2, "%d: a bare tool has name and "
		    "inputSchema only", v);
		json_decref(res);
	}

	res = mcp__registry_list(&srv->reg, NULL, 0, MCP_V_LATEST, &bad);
	t = json_array_get(json_object_get(res, "tools"), 0);
	is_str(json_string_value(json_object_get(t, "title")), "Full Tool",
	    "title value");
	ok(json_is_true(json_object_get(json_object_get(t, "annotations"),
	    "readOnlyHint")), "annotations value");
	ok(json_object_get(json_object_get(json_object_get(t, "outputSchema"),
	    "properties"), "n") != NULL, "outputSchema value");
	json_decref(res);

	is_int(mcp_tool_set_title(srv, "full", NULL), MCP_OK, "clear title");
	is_int(mcp_tool_set_annotations(srv, "full", NULL), MCP_OK,
	    "clear annotations");
	res = mcp__registry_list(&srv->reg, NULL, 0, MCP_V_LATEST, &bad);
	t = json_array_get(json_object_get(res, "tools"), 0);
	ok(json_object_get(t, "title") == NULL &&
	    json_object_get(t, "annotations") == NULL, "cleared fields gone");
	json_decref(res);
	mcp_server_free(srv);
}

static void
t_pages(void)
{
	mcp_server	*srv;
	char		 out[1024], next[64], cur[64], all[1024];
	char		 longc[4096];
	json_t		*res;
	int		 bad, pages, rc;
	size_t		 i;
	static const char *const badc[] = { "garbage", "c", "czz", "",
	    "C1", "c1z", "x1", "c12345678901234567", "c 1", "c+1", "c-1",
	    "c0x1", " c1", "c1 " };

	reset_counts();
	srv = mcp_server_new("t", "1");
	reg(srv, "t1", 1);
	reg(srv, "t2", 2);
	reg(srv, "t3", 3);
	reg(srv, "t4", 4);
	reg(srv, "t5", 5);

	/* Pages of 2 over 5 tools: the chain visits each once, in order. */
	all[0] = '\0';
	cur[0] = '\0';
	for (pages = 0; pages < 10; pages++) {
		rc = page(srv, pages ? cur : NULL, 2, out, sizeof(out), next,
		    sizeof(next));
		if (rc != 0)
			break;
		append(all, sizeof(all), out);
		if (pages == 0)
			is_str(out, "t1,t2", "page 1: t1,t2");
		else if (pages == 1)
			is_str(out, "t3,t4", "page 2: t3,t4");
		else if (pages == 2)
			is_str(out, "t5", "page 3: t5");
		if (next[0] == '\0')
			break;
		memcpy(cur, next, sizeof(cur));
	}
	is_int(pages, 2, "three pages, the last without nextCursor");
	is_str(all, "t1,t2,t3,t4,t5", "the chain visits each tool once");

	/* A limit equal to the count: one page, no cursor. */
	page(srv, NULL, 5, out, sizeof(out), next, sizeof(next));
	ok(strcmp(out, "t1,t2,t3,t4,t5") == 0 && next[0] == '\0',
	    "limit 5 of 5: no nextCursor");
	page(srv, NULL, 4, out, sizeof(out), next, sizeof(next));
	ok(strcmp(out, "t1,t2,t3,t4") == 0 && next[0] != '\0',
	    "limit 4 of 5: a nextCursor");
	memcpy(cur, next, sizeof(cur));
	page(srv, cur, 4, out, sizeof(out), next, sizeof(next));
	ok(strcmp(out, "t5") == 0 && next[0] == '\0', "then the last one");

	/* The tool a cursor points at is removed between pages. */
	page(srv, NULL, 2, out, sizeof(out), cur, sizeof(cur));
	is_int(mcp_tool_unregister(srv, "t3"), MCP_OK, "remove t3");
	page(srv, cur, 2, out, sizeof(out), next, sizeof(next));
	is_str(out, "t4,t5", "removed cursor tool: the chain goes on");
	ok(next[0] == '\0', "removed cursor tool: then ends");

	/* A tool already seen is removed; a new one is added. */
	page(srv, NULL, 2, out, sizeof(out), cur, sizeof(cur));
	is_str(out, "t1,t2", "page 1 again");
	mcp_tool_unregister(srv, "t1");
	reg(srv, "t6", 6);
	page(srv, cur, 2, out, sizeof(out), next, sizeof(next));
	is_str(out, "t4,t5", "seen tool removed: nothing skipped");
	memcpy(cur, next, sizeof(cur));
	page(srv, cur, 2, out, sizeof(out), next, sizeof(next));
	ok(strcmp(out, "t6") == 0 && next[0] == '\0',
	    "the added tool comes last");

	/* Every tool after the cursor removed: an empty last page. */
	page(srv, NULL, 1, out, sizeof(out), cur, sizeof(cur));
	mcp_tool_unregister(srv, "t4");
	mcp_tool_unregister(srv, "t5");
	mcp_tool_unregister(srv, "t6");
	res = mcp__registry_list(&srv->reg, cur, 1, MCP_V_LATEST, &bad);
	ok(res != NULL && bad == 0 && json_array_size(json_object_get(res,
	    "tools")) == 0 && json_object_get(res, "nextCursor") == NULL,
	    "everything after the cursor removed: empty page");
	json_decref(res);

	/* Cursors that are not ours. */
	for (i = 0; i < sizeof(badc) / sizeof(badc[0]); i++) {
		bad = 0;
		res = mcp__registry_list(&srv->reg, badc[i], 2, MCP_V_LATEST,
		    &bad);
		ok(res == NULL && bad == 1, "cursor \"%s\": bad", badc[i]);
		json_decref(res);
	}
	memset(longc, '1', sizeof(longc) - 1);
	longc[0] = 'c';
	longc[sizeof(longc) - 1] = '\0';
	bad = 0;
	res = mcp__registry_list(&srv->reg, longc, 2, MCP_V_LATEST, &bad);
	ok(res == NULL && bad == 1, "cursor of 4095 characters: bad");
	json_decref(res);
	memset(longc, 'f', 17);
	longc[0] = 'c';
	longc[17] = '\0';
	bad = 0;
	res = mcp__registry_list(&srv->reg, longc, 2, MCP_V_LATEST, &bad);
	ok(res != NULL && bad == 0 && json_array_size(json_object_get(res,
	    "tools")) == 0, "cursor past every tool: empty, not bad");
	json_decref(res);
	res = mcp__registry_list(&srv->reg, NULL, 2, MCP_V_LATEST, &bad);
	ok(res != NULL && bad == 0, "no cursor: good");
	json_decref(res);

	mcp_server_free(srv);
	for (i = 1; i <= 6; i++)
		if (freed[i] != 1)
			break;
	ok(i == 7, "every destructor ran once");
}

static void
t_refs(void)
{
	mcp_server	*srv;
	struct tool	*t, *t2;
	int		 i;

	reset_counts();
	srv = mcp_server_new("t", "1");
	reg(srv, "held", 1);
	reg(srv, "other", 2);
	ok(mcp__registry_get(&srv->reg, "nosuch") == NULL,
	    "get unknown: NULL");
	t = mcp__registry_get(&srv->reg, "held");
	ok(t != NULL && strcmp(t->name, "held") == 0, "get held");
	ok(t != NULL && t->udata == &data[1], "get: udata");
	t2 = mcp__registry_get(&srv->reg, "held");
	ok(t2 == t, "get twice: the same tool");
	is_int(mcp_tool_unregister(srv, "held"), MCP_OK, "unregister held");
	is_int(freed[1], 0, "held: destructor waits for the references");
	ok(mcp__registry_get(&srv->reg, "held") == NULL,
	    "unregistered: no longer found");
	is_str(t->name, "held", "the referenced tool is still intact");
	mcp__tool_unref(t2);
	is_int(freed[1], 0, "one reference left: still alive");
	mcp__tool_unref(t);
	is_int(freed[1], 1, "last reference gone: destructor ran once");
	mcp__tool_unref(NULL);
	ok(1, "unref(NULL) is a no-op");

	/* A reference held across mcp_server_free. */
	t = mcp__registry_get(&srv->reg, "other");
	mcp_server_free(srv);
	is_int(freed[2], 0, "server freed, tool still referenced");
	is_str(t->name, "other", "and intact");
	mcp__tool_unref(t);
	is_int(freed[2], 1, "then freed once");

	/* mcp_server_free frees every user data exactly once. */
	reset_counts();
	srv = mcp_server_new("t", "1");
	for (i = 0; i < 40; i++) {
		char	 name[16];

		snprintf(name, sizeof(name), "tool%d", i);
		if (reg(srv, name, i) != MCP_OK)
			break;
	}
	is_int(i, 40, "registered 40 tools");
	mcp_tool_unregister(srv, "tool7");
	mcp_tool_unregister(srv, "tool39");
	mcp_server_free(srv);
	for (i = 0; i < 40; i++)
		if (freed[i] != 1)
			break;
	is_int(i, 40, "server_free: each of 40 destructors ran once");
}

/* The tools/list result at VERSION as the server writes it, in OUT. */
static void
list_text(mcp_server *srv, int version, char *out, size_t size)
{
	struct buf	 b = { 0 };
	json_t		*res;
	int		 bad;

	res = mcp__registry_list(&srv->reg, NULL, 0, version, &bad);
	out[0] = '\0';
	if (res != NULL && mcp__buf_addjson(&b, res) == MCP_OK &&
	    mcp__buf_addc(&b, '\0') == MCP_OK)
		snprintf(out, size, "%s", b.data);
	mcp__buf_free(&b);
	json_decref(res);
}

/*
 * Schemas come back with their keys in the order they were written, byte
 * for byte: jansson keeps insertion order, and neither the registry nor
 * the serialiser may sort or rebuild them.
 */
static void
t_schema_order(void)
{
	static const char in[] = "{\"type\":\"object\",\"required\":[\"z\","
	    "\"a\"],\"properties\":{\"z\":{\"type\":\"string\","
	    "\"description\":\"last letter\"},\"a\":{\"type\":\"integer\","
	    "\"minimum\":0}},\"additionalProperties\":false,"
	    "\"$defs\":{\"m\":{\"type\":\"null\"}}}";
	static const char out[] = "{\"type\":\"object\",\"properties\":{"
	    "\"zeta\":{\"type\":\"number\"},\"alpha\":{\"type\":\"string\"}},"
	    "\"required\":[\"zeta\"]}";
	mcp_server	*srv;
	char		 text[2048], want[2048];

	srv = mcp_server_new("t", "1");
	is_int(mcp_tool_register(srv, "ordered", NULL, in, fn, NULL, NULL),
	    MCP_OK, "order: register with keys out of alphabetical order");
	is_int(mcp_tool_set_output_schema(srv, "ordered", out), MCP_OK,
	    "order: output schema");
	list_text(srv, MCP_V_LATEST, text, sizeof(text));
	snprintf(want, sizeof(want), "{\"tools\":[{\"name\":\"ordered\","
	    "\"inputSchema\":%s,\"outputSchema\":%s}]}", in, out);
	is_str(text, want, "order: tools/list has both schemas byte for byte");
	mcp_server_free(srv);
}

/* Icons of a tool: checked when set, sent to 2025-11-25 sessions only. */
static void
t_icons(void)
{
	static const char *const bad[] = {
		"{\"src\":\"https://x/i.png\"}",		/* not an array */
		"[{\"mimeType\":\"image/png\"}]",		/* no src */
		"[{\"src\":\"\"}]",				/* empty src */
		"[{\"src\":\"https://x/i.png\",\"theme\":\"blue\"}]",
		"[{\"src\":\"https://x/i.png\",\"sizes\":\"48x48\"}]",
		"[{\"src\":\"https://x/i.png\",\"sizes\":[48]}]",
		"[{\"src\":\"https://x/i.png\",\"mimeType\":1}]",
		"[{\"src\":\"https://x/i.png\",\"alt\":\"an icon\"}]",
		"[\"https://x/i.png\"]",
		"[{\"src\":\"a\"},",				/* not JSON */
	};
	static const char good[] = "[{\"src\":\"https://x/i.png\","
	    "\"mimeType\":\"image/png\",\"sizes\":[\"48x48\",\"96x96\"],"
	    "\"theme\":\"dark\"},{\"src\":\"data:image/png;base64,AA==\"}]";
	static const int versions[] = { MCP_V20241105, MCP_V20250326,
	    MCP_V20250618, MCP_V20251125 };
	mcp_server	*srv;
	char		 text[2048], want[2048];
	size_t		 i;

	srv = mcp_server_new("t", "1");
	is_int(mcp_tool_register(srv, "pic", NULL, NULL, fn, NULL, NULL),
	    MCP_OK, "icons: register");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		is_int(mcp_tool_set_icons(srv, "pic", bad[i]), MCP_EINVAL,
		    "icons: %s: EINVAL", bad[i]);
	is_int(mcp_tool_set_icons(srv, "nosuch", good), MCP_ENOENT,
	    "icons: no such tool: ENOENT");
	is_int(mcp_tool_set_icons(NULL, "pic", good), MCP_ENOMEM,
	    "icons: NULL server: ENOMEM");
	list_text(srv, MCP_V_LATEST, text, sizeof(text));
	is_str(text, "{\"tools\":[{\"name\":\"pic\",\"inputSchema\":"
	    "{\"type\":\"object\"}}]}", "icons: none set after the failures");
	is_int(mcp_tool_set_icons(srv, "pic", good), MCP_OK, "icons: set");
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		list_text(srv, versions[i], text, sizeof(text));
		if (versions[i] >= MCP_V20251125)
			snprintf(want, sizeof(want), "{\"tools\":[{\"name\":"
			    "\"pic\",\"inputSchema\":{\"type\":\"object\"},"
			    "\"icons\":%s}]}", good);
		else
			snprintf(want, sizeof(want), "{\"tools\":[{\"name\":"
			    "\"pic\",\"inputSchema\":{\"type\":\"object\"}}]}");
		is_str(text, want, "icons: tools/list at %d", versions[i]);
	}
	is_int(mcp_tool_set_icons(srv, "pic", NULL), MCP_OK, "icons: NULL");
	list_text(srv, MCP_V_LATEST, text, sizeof(text));
	ok(strstr(text, "icons") == NULL, "icons: NULL removes them");
	mcp_server_free(srv);
}

/* Annotations: the checks, and what each version is sent. */
static void
t_annotations(void)
{
	static const struct {
		const char	*when;
		int		 valid;
	} dates[] = {
		{ "2025-01-12T15:00:58Z", 1 },
		{ "2025-01-12T15:00Z", 1 },
		{ "2025-01-12T15:00:58.123Z", 1 },
		{ "2025-01-12T15:00:58+02:00", 1 },
		{ "2025-01-12T15:00:58-05:30", 1 },
		{ "2024-02-29T00:00:00Z", 1 },
		{ "2000-02-29T00:00:00Z", 1 },
		{ "2025-01-12", 0 },
		{ "2025-01-12T15:00:58", 0 },
		{ "2025-01-12 15:00:58Z", 0 },
		{ "2025-01-12t15:00:58z", 0 },
		{ "2025-13-01T00:00:00Z", 0 },
		{ "2025-04-31T00:00:00Z", 0 },
		{ "2025-02-29T00:00:00Z", 0 },
		{ "1900-02-29T00:00:00Z", 0 },
		{ "2025-01-12T24:00:00Z", 0 },
		{ "2025-01-12T15:60:00Z", 0 },
		{ "2025-01-12T15:00:58.Z", 0 },
		{ "2025-01-12T15:00:58Zjunk", 0 },
		{ "2025-01-12T15:00:58+0200", 0 },
		{ "2025", 0 },
		{ "", 0 },
	};
	mcp_server	*srv;
	json_t		*a, *sent, *res, *r;
	char		 text[1024];
	size_t		 i;
	int		 bad, rc;

	for (i = 0; i < sizeof(dates) / sizeof(dates[0]); i++) {
		rc = mcp__annotations_make(0, -1, dates[i].when, &a);
		is_int(rc, dates[i].valid ? MCP_OK : MCP_EINVAL,
		    "lastModified \"%s\": %s", dates[i].when,
		    dates[i].valid ? "accepted" : "EINVAL");
		json_decref(a);
	}
	is_int(mcp__annotations_make(4, -1, NULL, &a), MCP_EINVAL,
	    "audience 4: EINVAL");
	is_int(mcp__annotations_make(0, 1.01, NULL, &a), MCP_EINVAL,
	    "priority 1.01: EINVAL");
	is_int(mcp__annotations_make(0, NAN, NULL, &a), MCP_EINVAL,
	    "priority NaN: EINVAL");
	rc = mcp__annotations_make(0, -1, NULL, &a);
	ok(rc == MCP_OK && a == NULL, "all left out: MCP_OK and no object");
	rc = mcp__annotations_make(MCP_AUDIENCE_ASSISTANT | MCP_AUDIENCE_USER,
	    0, "2025-01-12T15:00:58Z", &a);
	ok(rc == MCP_OK && a != NULL, "audience both, priority 0, a date");
	rc = mcp__annotations_for(a, MCP_V20250618, &sent);
	r = json_pack("{s:[s,s], s:f, s:s}", "audience", "user", "assistant",
	    "priority", 0.0, "lastModified", "2025-01-12T15:00:58Z");
	ok(rc == MCP_OK && json_equal(sent, r), "2025-06-18: all three");
	json_decref(sent);
	json_decref(r);
	rc = mcp__annotations_for(a, MCP_V20250326, &sent);
	r = json_pack("{s:[s,s], s:f}", "audience", "user", "assistant",
	    "priority", 0.0);
	ok(rc == MCP_OK && json_equal(sent, r) &&
	    json_object_get(a, "lastModified") != NULL,
	    "2025-03-26: no lastModified (and the original keeps it)");
	json_decref(sent);
	json_decref(r);
	json_decref(a);
	mcp__annotations_make(0, -1, "2025-01-12T15:00:58Z", &a);
	rc = mcp__annotations_for(a, MCP_V20241105, &sent);
	ok(rc == MCP_OK && sent == NULL, "2024-11-05, lastModified only: "
	    "nothing to send");
	json_decref(a);

	/* Resources and templates in their lists. */
	srv = mcp_server_new("t", "1");
	is_int(mcp_resource_register(srv, "x://r", "r", NULL, NULL, fn, NULL,
	    NULL), MCP_OK, "resource");
	is_int(mcp_resource_set_annotations(srv, "x://r", MCP_AUDIENCE_USER,
	    0.5, "2025-01-12T15:00:58Z"), MCP_OK, "resource annotations");
	is_int(mcp_resource_set_annotations(srv, "x://r", 0, 2, NULL),
	    MCP_EINVAL, "resource annotations, priority 2: EINVAL");
	is_int(mcp_resource_set_annotations(srv, "x://nope", 0, 1, NULL),
	    MCP_ENOENT, "resource annotations, no such resource: ENOENT");
	is_int(mcp_resource_set_icons(srv, "x://r", "[{}]"), MCP_EINVAL,
	    "resource icons [{}]: EINVAL");
	is_int(mcp_resource_template_set_annotations(srv, "x://{t}", 1, -1,
	    NULL), MCP_ENOENT, "template annotations, no such template");
	res = mcp__feat_list(srv, FEAT_RESOURCE, NULL, 0, MCP_V20250618, &bad);
	r = json_object_get(json_array_get(json_object_get(res, "resources"),
	    0), "annotations");
	text[0] = '\0';
	if (r != NULL)
		snprintf(text, sizeof(text), "%s",
		    json_string_value(json_object_get(r, "lastModified")));
	is_str(text, "2025-01-12T15:00:58Z", "resources/list 2025-06-18: "
	    "lastModified");
	json_decref(res);
	res = mcp__feat_list(srv, FEAT_RESOURCE, NULL, 0, MCP_V20241105, &bad);
	r = json_object_get(json_array_get(json_object_get(res, "resources"),
	    0), "annotations");
	ok(r != NULL && json_object_get(r, "lastModified") == NULL &&
	    json_real_value(json_object_get(r, "priority")) == 0.5,
	    "resources/list 2024-11-05: audience and priority only");
	json_decref(res);
	is_int(mcp_resource_set_annotations(srv, "x://r", 0, -1, NULL), MCP_OK,
	    "resource annotations, all left out");
	res = mcp__feat_list(srv, FEAT_RESOURCE, NULL, 0, MCP_V_LATEST, &bad);
	ok(json_object_get(json_array_get(json_object_get(res, "resources"),
	    0), "annotations") == NULL, "... removes them");
	json_decref(res);
	mcp_server_free(srv);
}

/* ---- x-mcp-header annotations (src/core/xheader.c)  ----------------- */

/* Registers a tool NAME with the JSON SCHEMA: its rc. */
static int
reg_schema(mcp_server *srv, const char *name, const char *schema)
{
	return mcp_tool_register(srv, name, "x", schema, fn, NULL, NULL);
}

static void
t_xheader(void)
{
	static const struct {
		const char	*schema;
		const char	*why;
	} bad[] = {
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"string\",\"x-mcp-header\":\"\"}}}", "an empty name" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"string\",\"x-mcp-header\":\"Re gion\"}}}",
		    "a name with a space (not a token)" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"string\",\"x-mcp-header\":\"R\\r\\nX: 1\"}}}",
		    "a name with CR LF" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"string\",\"x-mcp-header\":7}}}", "a name that is no "
		    "string" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"number\",\"x-mcp-header\":\"A\"}}}", "on a number" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"object\",\"x-mcp-header\":\"A\"}}}", "on an object" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{"
		    "\"x-mcp-header\":\"A\"}}}", "on a property with no type" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"string\",\"x-mcp-header\":\"Region\"},\"b\":{\"type\":"
		    "\"string\",\"x-mcp-header\":\"REGION\"}}}",
		    "two names equal but for case" },
		{ "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
		    "\"array\",\"items\":{\"type\":\"string\",\"x-mcp-header\":"
		    "\"A\"}}}}", "under items" },
		{ "{\"type\":\"object\",\"oneOf\":[{\"properties\":{\"a\":{"
		    "\"type\":\"string\",\"x-mcp-header\":\"A\"}}}]}",
		    "under oneOf" },
		{ "{\"type\":\"object\",\"x-mcp-header\":\"A\"}",
		    "on the root" },
		{ "{\"type\":\"object\",\"$defs\":{\"d\":{\"type\":\"string\","
		    "\"x-mcp-header\":\"A\"}}}", "under $defs" },
	};
	mcp_server	*srv = mcp_server_new("t", "1");
	struct tool	*t;
	size_t		 i;
	char		 name[16];

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "bad%zu", i);
		is_int(reg_schema(srv, name, bad[i].schema), MCP_EINVAL,
		    "x-mcp-header %s: MCP_EINVAL", bad[i].why);
		ok(mcp__registry_get(&srv->reg, name) == NULL,
		    "... and the tool is not registered");
	}
	is_int(reg_schema(srv, "decl_items", "a [string(header A)]"),
	    MCP_EINVAL, "a declaration's header under an array's items: "
	    "MCP_EINVAL");
	is_int(reg_schema(srv, "decl_ok", "at { region string(header Region) "
	    "}, n? int(header N)"), MCP_OK, "a declaration's headers, one in "
	    "a nested object: registered");
	t = mcp__registry_get(&srv->reg, "decl_ok");
	ok(t != NULL && t->nxh == 2, "... two annotations found");
	mcp__tool_unref(t);
	is_int(reg_schema(srv, "good", "{\"type\":\"object\",\"properties\":"
	    "{\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
	    "\"opt\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
	    "\"integer\",\"x-mcp-header\":\"N\"},\"b\":{\"type\":\"boolean\","
	    "\"x-mcp-header\":\"Flag-1\"}}},\"q\":{\"type\":\"string\","
	    "\"default\":{\"x-mcp-header\":\"data\"}}}}"), MCP_OK,
	    "x-mcp-header on a string, a nested integer and boolean (and in "
	    "a default, which is data): registered");
	t = mcp__registry_get(&srv->reg, "good");
	ok(t != NULL && t->nxh == 3, "... three annotations found");
	if (t != NULL && t->nxh == 3) {
		json_t		*args = json_pack("{s:s, s:{s:I, s:b}}",
		    "region", "us-west1", "opt", "n", (json_int_t)-42, "b", 0);
		const char	*v;
		size_t		 n;
		char		 buf[32];
		int		 i2, seen = 0;

		for (i2 = 0; i2 < 3; i2++) {
			const char *hn = mcp__xheader_name(t->xh, i2);

			if (mcp__xheader_value(t->xh, i2, args, buf,
			    sizeof(buf), &v, &n) != 1)
				continue;
			if (strcmp(hn, "Region") == 0 &&
			    strcmp(v, "us-west1") == 0)
				seen |= 1;
			if (strcmp(hn, "N") == 0 && strcmp(v, "-42") == 0)
				seen |= 2;
			if (strcmp(hn, "Flag-1") == 0 &&
			    strcmp(v, "false") == 0)
				seen |= 4;
		}
		is_int(seen, 7, "... the values: the string as it is, the "
		    "integer in decimal, the boolean in lower case");
		json_object_del(json_object_get(args, "opt"), "n");
		for (i2 = 0; i2 < 3; i2++)
			if (strcmp(mcp__xheader_name(t->xh, i2), "N") == 0)
				is_int(mcp__xheader_value(t->xh, i2, args,
				    buf, sizeof(buf), &v, &n), 0,
				    "... none when the argument is absent");
		json_decref(args);
	}
	mcp__tool_unref(t);
	mcp_server_free(srv);
}

/* ---- the table itself (src/table.c) ---------------------------------- */

static int	 dropped;

static void
drop_entry(struct entry *e)
{
	(void)e;
	dropped++;
}

static json_t *
entry_json(const struct entry *e, int version)
{
	(void)version;
	return json_string(e->key);
}

/* The keys of one page, as "a,b", and its next cursor (or ""). */
static void
table_page(struct table *t, const char *cursor, int limit, char *out,
    size_t outlen, char *next, size_t nextlen)
{
	json_t	*res, *v;
	size_t	 i;
	int	 bad;

	out[0] = next[0] = '\0';
	res = mcp__table_list(t, "items", cursor, limit, 0, entry_json, &bad);
	if (res == NULL)
		return;
	json_array_foreach(json_object_get(res, "items"), i, v)
		append(out, outlen, json_string_value(v));
	if (json_object_get(res, "nextCursor") != NULL)
		snprintf(next, nextlen, "%s", json_string_value(
		    json_object_get(res, "nextCursor")));
	json_decref(res);
}

static void
t_table(void)
{
	struct table	 t;
	struct entry	 e[4], dup;
	char		 out[64], next[24];
	int		 bad;

	memset(e, 0, sizeof(e));
	memset(&dup, 0, sizeof(dup));
	e[0].key = "a";
	e[1].key = "b";
	e[2].key = "c";
	e[3].key = "d";
	dup.key = "b";
	mcp__table_init(&t);
	is_int(mcp__table_add(&t, &e[0]), MCP_OK, "table: add a");
	is_int(mcp__table_add(&t, &e[1]), MCP_OK, "table: add b");
	is_int(mcp__table_add(&t, &e[2]), MCP_OK, "table: add c");
	is_int(mcp__table_add(&t, &dup), MCP_EEXIST, "table: b again");
	ok(dup.seq == 0 && dup.next == NULL, "... leaves it untouched");
	is_int(e[2].seq, 3, "table: seq counts from 1");
	ok(mcp__table_find(&t, "b") == &e[1], "table: find b");
	ok(mcp__table_find(&t, "x") == NULL, "table: find x: none");

	table_page(&t, NULL, 2, out, sizeof(out), next, sizeof(next));
	is_str(out, "a,b", "table: first page");
	is_str(next, "c3", "... cursor c3");
	ok(mcp__table_remove(&t, "b") == &e[1], "table: remove b");
	ok(mcp__table_remove(&t, "b") == NULL, "... once");
	table_page(&t, "c2", 2, out, sizeof(out), next, sizeof(next));
	is_str(out, "c", "table: a removed entry's cursor still works");
	is_str(next, "", "... and ends the list");
	ok(mcp__table_remove(&t, "c") == &e[2], "table: remove the tail");
	is_int(mcp__table_add(&t, &e[3]), MCP_OK, "table: add d");
	is_int(e[3].seq, 4, "... seq not reused");
	table_page(&t, NULL, 0, out, sizeof(out), next, sizeof(next));
	is_str(out, "a,d", "table: order after removing the tail");
	ok(mcp__table_list(&t, "items", "c-1", 0, 0, entry_json, &bad) ==
	    NULL && bad, "table: bad cursor");
	dropped = 0;
	mcp__table_clear(&t, drop_entry);
	is_int(dropped, 2, "table: clear drops every entry");
	ok(t.head == NULL && t.tail == NULL && t.next_seq == 1,
	    "... and empties it");
}

int
main(void)
{
	/* Registration failures are logged as errors; keep stderr short. */
	mcp_log_set_level(MCP_LOG_ERR);
	t_register();
	t_optional_fields();
	t_pages();
	t_refs();
	t_schema_order();
	t_icons();
	t_annotations();
	t_xheader();
	t_table();
	return tap_done();
}
