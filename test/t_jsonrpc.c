/*
 * t_jsonrpc.c: unit tests for the pure helpers under the protocol layer:
 * the JSON-RPC 2.0 envelope in src/jsonrpc.c (classifying every kind of
 * message, valid and invalid, as the envelope parser and a batch element
 * both deliver it; the tools/call fields the parser notes; the exact
 * bytes of results, errors and notifications; the in-flight id keys),
 * the byte buffer in src/buf.c and base64 in src/base64.c (RFC 4648
 * vectors). Single-threaded.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rpc/rpc.h"
#include "tap.h"

/* Parses the JSON text JS (any value); aborts the test on bad JSON. */
static json_t *
load(const char *js)
{
	json_error_t	 e;
	json_t		*v;

	v = json_loads(js, JSON_DECODE_ANY, &e);
	if (v == NULL) {
		diag("bad test JSON %s: %s", js, e.text);
		exit(2);
	}
	return v;
}

/* Empties B into a new NUL-terminated string, for is_str. */
static char *
take(struct buf *b)
{
	size_t	 n;

	return mcp__buf_steal(b, &n);
}

/* ---- mcp__rpc_classify ------------------------------------------------ */

/*
 * A message object reaches mcp__rpc_classify along two roads: the
 * envelope parser (mcp__json_parse_message, for a single message) and,
 * for the elements of a batch, the same parser's array and then
 * mcp__rpc_fields_from_json. Both fill a struct rpc_fields from the
 * JSON text JS; WHICH picks the road (1: JS sent as a batch of one).
 * Returns 0, or -1 when JS is not an object on that road.
 */
static int
fields(const char *js, int which, struct rpc_fields *f)
{
	struct json_perr	 e;
	json_t			*whole;
	char			*text = NULL;
	size_t			 n = strlen(js);
	int			 rc;

	if (which == 1) {
		/* (F's raw params, if any, point into the text parsed.) */
		text = malloc(n + 3);
		if (text == NULL)
			exit(2);
		snprintf(text, n + 3, "[%s]", js);
		rc = mcp__json_parse_message(text, n + 2, f, &whole, &e);
		free(text);
	} else
		rc = mcp__json_parse_message(js, n, f, &whole, &e);
	if (rc < 0) {
		diag("bad test JSON %s: %s", js, e.text);
		exit(2);
	}
	if (which == 1) {
		rc = json_array_size(whole) == 1 && mcp__rpc_fields_from_json(
		    json_array_get(whole, 0), f) == MCP_OK ? 1 : 0;
	}
	json_decref(whole);
	return rc == 1 ? 0 : -1;
}

/* Does F carry params, as a value or (parser road) as raw text? */
static int
has_params(const struct rpc_fields *f)
{
	return f->params != NULL || f->praw != NULL;
}

/* Are F's params equal to the JSON text JS, whichever form they take? */
static int
params_is(const struct rpc_fields *f, const char *js)
{
	json_t	*want, *got;
	int	 eq;

	want = load(js);
	if (f->praw != NULL)
		got = json_loadb(f->praw, f->prawlen, 0, NULL);
	else
		got = json_incref(f->params);
	eq = got != NULL && json_equal(got, want);
	json_decref(got);
	json_decref(want);
	return eq;
}

/*
 * Classifies the JSON text JS and checks the kind, the reason (WHY, or
 * NULL for none) and whether an id was kept, through the envelope
 * parser; then checks the batch road agrees.
 */
static void
classify(const char *js, enum rpc_kind kind, const char *why, int has_id)
{
	struct rpc_fields	 f, g;
	struct rpc_msg		 m, n;

	if (!ok(fields(js, 0, &f) == 0, "%s: an object", js))
		return;
	mcp__rpc_classify(&f, &m);
	is_int(m.kind, kind, "%s: kind", js);
	is_str(m.why, why, "%s: reason", js);
	ok((m.id != NULL) == has_id, "%s: id %s", js,
	    has_id ? "kept for the error" : "unusable");
	if (fields(js, 1, &g) == 0) {
		mcp__rpc_classify(&g, &n);
		ok(n.kind == m.kind && (n.why == NULL) == (m.why == NULL) &&
		    (n.why == NULL || strcmp(n.why, m.why) == 0) &&
		    (n.id == NULL) == (m.id == NULL) &&
		    (n.method == NULL) == (m.method == NULL) &&
		    (n.method == NULL || strcmp(n.method, m.method) == 0) &&
		    has_params(&g) == has_params(&f),
		    "%s: the batch road agrees", js);
		mcp__rpc_fields_clear(&g);
	} else
		ok(0, "%s: the batch road agrees", js);
	mcp__rpc_fields_clear(&f);
}

/* JS is not an object: neither road gives fields. */
static void
not_object(const char *js)
{
	struct rpc_fields	 f;

	ok(fields(js, 0, &f) == -1, "%s: not an object (parser)", js);
	ok(fields(js, 1, &f) == -1, "%s: not an object (batch)", js);
}

static void
t_classify_valid(void)
{
	struct rpc_fields	 f;
	struct rpc_msg		 m;
	struct json_perr	 e;
	json_t			*v, *whole;
	char			 js[400];
	int			 road;

	for (road = 0; road < 2; road++) {
		fields("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
		    "\"tools/list\",\"params\":{\"cursor\":\"c1\"}}", road,
		    &f);
		mcp__rpc_classify(&f, &m);
		is_int(m.kind, RPC_REQUEST, "road %d: request: kind", road);
		is_str(m.method, "tools/list", "road %d: request: method",
		    road);
		ok(m.id == f.id, "road %d: request: id from the fields",
		    road);
		is_int(json_integer_value(m.id), 7, "road %d: request: id "
		    "value", road);
		ok(params_is(&f, "{\"cursor\":\"c1\"}"),
		    "road %d: request: params", road);
		ok(m.why == NULL, "road %d: request: no reason", road);
		mcp__rpc_fields_clear(&f);

		fields("{\"method\":\"ping\",\"id\":\"abc\",\"jsonrpc\":"
		    "\"2.0\"}", road, &f);
		mcp__rpc_classify(&f, &m);
		is_int(m.kind, RPC_REQUEST, "road %d: members in any order",
		    road);
		is_str(json_string_value(m.id), "abc", "road %d: string id",
		    road);
		ok(!has_params(&f), "road %d: absent params: none", road);
		mcp__rpc_fields_clear(&f);

		/* A method longer than any we know: cut, but terminated. */
		snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":1,"
		    "\"method\":\"%0300d\"}", 0);
		fields(js, road, &f);
		mcp__rpc_classify(&f, &m);
		ok(m.kind == RPC_REQUEST && m.method != NULL &&
		    strlen(m.method) < sizeof(f.mname),
		    "road %d: a 300-byte method is cut safely", road);
		mcp__rpc_fields_clear(&f);
	}

	/*
	 * A NUL inside the method must not match "ping". The parser refuses
	 * \u0000 outright; a json_t built by hand can still carry one.
	 */
	snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"ping\\u0000x\"}");
	ok(mcp__json_parse_message(js, strlen(js), &f, &whole, &e) == 1 &&
	    whole == NULL, "parser: \\u0000 in a method");
	mcp__rpc_classify(&f, &m);
	ok(m.method == NULL || strcmp(m.method, "ping") != 0,
	    "parser: \"ping\\u0000x\" is not ping");
	mcp__rpc_fields_clear(&f);
	snprintf(js, sizeof(js), "{\"a\\u0000b\":1}");
	ok(mcp__json_parse(js, strlen(js), &e) == NULL && e.code == 3,
	    "parser: \\u0000 in an object key is refused (not a syntax error)");
	snprintf(js, sizeof(js), "[\"a\\u0000b\"]");
	v = mcp__json_parse(js, strlen(js), &e);
	ok(v != NULL && e.has_nul == 1 &&
	    json_string_length(json_array_get(v, 0)) == 3 &&
	    memcmp(json_string_value(json_array_get(v, 0)), "a\0b", 3) == 0,
	    "parser: \\u0000 in a string value: kept, with its length");
	json_decref(v);
	v = json_pack("{s:s, s:i, s:s%}", "jsonrpc", "2.0", "id", 1,
	    "method", "ping\0x", (size_t)6);
	mcp__rpc_fields_from_json(v, &f);
	json_decref(v);
	mcp__rpc_classify(&f, &m);
	ok(m.method == NULL || strcmp(m.method, "ping") != 0,
	    "batch: \"ping\\0x\" is not ping");
	mcp__rpc_fields_clear(&f);

	classify("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}",
	    RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":-3,\"method\":\"ping\"}",
	    RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}",
	    RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
	    "\"params\":[1,2]}", RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
	    "\"params\":{}}", RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2\\u002e0\",\"id\":1,\"method\":\"x\"}",
	    RPC_REQUEST, NULL, 1);
	classify(" {\"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"method\" : "
	    "\"x\" , \"extra\" : [ { } ] } ", RPC_REQUEST, NULL, 1);

	for (road = 0; road < 2; road++) {
		fields("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
		    "initialized\",\"params\":{\"a\":1}}", road, &f);
		mcp__rpc_classify(&f, &m);
		is_int(m.kind, RPC_NOTIFICATION, "road %d: notification: "
		    "kind", road);
		is_str(m.method, "notifications/initialized",
		    "road %d: notification: method", road);
		ok(m.id == NULL, "road %d: notification: no id", road);
		ok(params_is(&f, "{\"a\":1}"), "road %d: notification: "
		    "params", road);
		ok(m.why == NULL, "road %d: notification: no reason", road);
		mcp__rpc_fields_clear(&f);

		fields("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}", road,
		    &f);
		mcp__rpc_classify(&f, &m);
		is_int(m.kind, RPC_RESPONSE, "road %d: result response: "
		    "kind", road);
		is_int(json_integer_value(m.id), 5, "road %d: result "
		    "response: id", road);
		ok(m.method == NULL, "road %d: result response: no method",
		    road);
		mcp__rpc_fields_clear(&f);
	}
	classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"
	    "cancelled\"}", RPC_NOTIFICATION, NULL, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"error\":{\"code\":1,"
	    "\"message\":\"m\"}}", RPC_RESPONSE, NULL, 1);
	/* An error answer to a message whose id could not be read. */
	classify("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":1,"
	    "\"message\":\"m\"}}", RPC_RESPONSE, NULL, 0);
	classify("{\"jsonrpc\":\"2.0\",\"result\":null}", RPC_RESPONSE,
	    NULL, 0);
}

static void
t_classify_invalid(void)
{
	const char	*jsonrpc = "jsonrpc must be \"2.0\"";
	const char	*idtype = "id must be a string or an integer";

	/* Not an object at all: protocol.c answers these itself. */
	not_object("[]");
	not_object("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
	not_object("\"ping\"");
	not_object("42");
	not_object("null");
	not_object("true");

	/* jsonrpc wrong or missing: the id is still kept for the answer. */
	classify("{\"id\":1,\"method\":\"ping\"}", RPC_INVALID, jsonrpc, 1);
	classify("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
	    RPC_INVALID, jsonrpc, 1);
	classify("{\"jsonrpc\":2.0,\"id\":\"a\",\"method\":\"ping\"}",
	    RPC_INVALID, jsonrpc, 1);
	classify("{\"jsonrpc\":\"2.0 \",\"id\":1,\"method\":\"ping\"}",
	    RPC_INVALID, jsonrpc, 1);
	classify("{\"jsonrpc\":null,\"id\":1,\"method\":\"ping\"}",
	    RPC_INVALID, jsonrpc, 1);
	classify("{\"jsonrpc\":\"1.0\",\"id\":1,\"result\":{}}",
	    RPC_INVALID, jsonrpc, 1);

	/* method. */
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", RPC_INVALID,
	    "method must be a string", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
	    RPC_INVALID, "method must be a string", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"ping\"]}",
	    RPC_INVALID, "method must be a string", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1}", RPC_INVALID,
	    "missing method", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"params\":{}}", RPC_INVALID,
	    "missing method", 1);

	/* id of the wrong type: unusable, so the answer carries no id. */
	classify("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
	    RPC_INVALID, "id must not be null", 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
	    RPC_INVALID, idtype, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"ping\"}",
	    RPC_INVALID, idtype, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
	    RPC_INVALID, idtype, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}",
	    RPC_INVALID, idtype, 0);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
	    RPC_INVALID, "id must be an integer or a string", 0);
	/* Integers to JSON Schema: taken (t_id_key checks the echo). */
	classify("{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}",
	    RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}",
	    RPC_REQUEST, NULL, 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1e-3,\"method\":\"ping\"}",
	    RPC_INVALID, "id must be an integer or a string", 0);

	/* params present but not structured. */
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
	    "\"params\":5}", RPC_INVALID, "params must be an object", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
	    "\"params\":\"s\"}", RPC_INVALID, "params must be an object", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
	    "\"params\":true}", RPC_INVALID, "params must be an object", 1);
	classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\","
	    "\"params\":null}", RPC_INVALID, "params must be an object", 1);

	/* Neither method nor id: nothing to answer, but still invalid. */
	classify("{}", RPC_INVALID, jsonrpc, 0);
	classify("{\"jsonrpc\":\"2.0\"}", RPC_INVALID, "missing method", 0);

	/*
	 * Malformed notifications: invalid, and with no reason, because a
	 * notification is never answered, not even with an error.
	 */
	classify("{\"method\":\"notifications/initialized\"}", RPC_INVALID,
	    NULL, 0);
	classify("{\"jsonrpc\":\"1.0\",\"method\":\"x\"}", RPC_INVALID,
	    NULL, 0);
	classify("{\"jsonrpc\":2,\"method\":\"x\"}", RPC_INVALID, NULL, 0);
	classify("{\"jsonrpc\":\"2.0\",\"method\":7}", RPC_INVALID, NULL, 0);
	classify("{\"jsonrpc\":\"2.0\",\"method\":null}", RPC_INVALID,
	    NULL, 0);
	classify("{\"jsonrpc\":\"2.0\",\"method\":{}}", RPC_INVALID, NULL, 0);
}

/*
 * The parser road leaves a params object as text, noting what the loop
 * needs for tools/call: the tool's name and whether arguments is an
 * object. KIND and ARGS are the expected tname_kind and args_kind.
 */
static void
scan(const char *params, int kind, const char *tname, int args)
{
	struct rpc_fields	 f;
	char			 js[1024];

	snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":1,"
	    "\"method\":\"tools/call\",\"params\":%s}", params);
	if (!ok(fields(js, 0, &f) == 0, "%.60s: parsed", params))
		return;
	ok(f.praw != NULL && f.params == NULL && params_is(&f, params),
	    "%.60s: kept as text", params);
	is_int(f.tname_kind, kind, "%.60s: name kind", params);
	if (tname != NULL)
		is_str(f.tname, tname, "%.60s: name", params);
	is_int(f.args_kind, args, "%.60s: arguments kind", params);
	mcp__rpc_fields_clear(&f);
}

static void
t_params_scan(void)
{
	char	 big[300];

	scan("{\"name\":\"echo\",\"arguments\":{\"text\":\"x\"}}", 1,
	    "echo", 1);
	scan("{ \"arguments\" : { } , \"name\" : \"ec\\u0068o\" }", 1,
	    "echo", 1);
	scan("{\"name\":\"echo\"}", 1, "echo", 0);
	scan("{\"name\":\"echo\",\"arguments\":[1]}", 1, "echo", 2);
	scan("{\"name\":\"echo\",\"arguments\":null}", 1, "echo", 2);
	scan("{\"name\":7,\"arguments\":{}}", 2, NULL, 1);
	scan("{\"name\":{\"x\":\"y\"}}", 2, NULL, 0);
	scan("{}", 0, NULL, 0);
	scan("{\"other\":{\"name\":\"inner\",\"arguments\":{}}}", 0, NULL,
	    0);
	snprintf(big, sizeof(big), "{\"name\":\"%0129d\"}", 0);
	scan(big, 3, NULL, 0);
	snprintf(big, sizeof(big), "{\"name\":\"%0128d\"}", 0);
	scan(big, 1, NULL, 0);
	/* Names found in place (written plainly) and read (any other way)
	 * come to the same; a longer name that starts alike is not one. */
	scan("{\"n\\u0061me\":\"echo\",\"argument\\u0073\":{}}", 1,
	    "echo", 1);
	scan("{\"names\":\"echo\",\"arguments_\":{}}", 0, NULL, 0);
	scan("{\"nam\":\"echo\",\"argument\":{}}", 0, NULL, 0);
	scan("{\"t\\u0061sk\":{},\"name\":\"echo\"}", 1, "echo", 0);
}

/*
 * One envelope written many ways: top_name's in-place names and the
 * "2.0" compare, against the same read by member_name.
 */
static void
t_envelope_names(void)
{
	static const char *const same[] = {
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}",
		"{\"method\":\"ping\",\"id\":7,\"jsonrpc\":\"2.0\"}",
		"{ \"jsonrpc\" : \"2.0\" , \"id\" :7,\"method\": \"ping\" }",
		"{\"j\\u0073onrpc\":\"2.\\u0030\",\"\\u0069d\":7,"
		    "\"metho\\u0064\":\"ping\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"ids\":1,"
		    "\"jsonrpcx\":0,\"methods\":\"x\",\"results\":1,\"errors\":2}",
	};
	struct rpc_fields	 f;
	struct rpc_msg		 m;
	struct json_perr	 e;
	json_t			*whole;
	size_t			 i;
	const char		*js;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		if (!ok(fields(same[i], 0, &f) == 0, "%s: parsed", same[i]))
			continue;
		mcp__rpc_classify(&f, &m);
		ok(f.jsonrpc == 1 && m.kind == RPC_REQUEST &&
		    json_integer_value(m.id) == 7 && m.method != NULL &&
		    strcmp(m.method, "ping") == 0, "%s: ping, id 7", same[i]);
		mcp__rpc_fields_clear(&f);
	}
	js = "{\"jsonrpc\":\"2.0x\",\"id\":7,\"method\":\"ping\"}";
	if (ok(fields(js, 0, &f) == 0, "%s: parsed", js)) {
		is_int(f.jsonrpc, 2, "\"2.0x\" is not \"2.0\"");
		mcp__rpc_fields_clear(&f);
	}
	js = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{},\"error\":null}";
	if (ok(fields(js, 0, &f) == 0, "%s: parsed", js)) {
		ok(f.has_result && f.result != NULL && json_is_null(f.error),
		    "result and error found in place");
		mcp__rpc_fields_clear(&f);
	}
	/* Cut after a name found in place: an error, never a read past. */
	js = "{\"jsonrpc\":\"2.0\",\"id\":";
	ok(mcp__json_parse_message(js, strlen(js), &f, &whole, &e) == -1,
	    "cut after \"id\": refused");
	js = "{\"jsonrpc\":\"2.0\"";
	ok(mcp__json_parse_message(js, strlen(js), &f, &whole, &e) == -1,
	    "cut after \"2.0\": refused");
	js = "{\"jsonrpc\":";
	ok(mcp__json_parse_message(js, strlen(js), &f, &whole, &e) == -1,
	    "cut after \"jsonrpc\": refused");
}

/* ---- building messages ------------------------------------------------ */

static void
t_build(void)
{
	struct buf	 b = { 0 };
	json_t		*id, *res, *data;
	char		*s;

	id = json_integer(1);
	res = load("{\"content\":[],\"isError\":true}");
	is_int(mcp__rpc_result(&b, id, res), MCP_OK, "result: ok");
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],"
	    "\"isError\":true}}", "result: exact bytes");
	free(s);
	json_decref(id);
	json_decref(res);

	id = json_string("a\"b\n");
	res = json_object();
	mcp__rpc_result(&b, id, res);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\n\",\"result\":{}}",
	    "result: string id escaped, one line");
	free(s);
	json_decref(id);
	json_decref(res);

	/* Appends: two messages in a row. */
	id = json_integer(-2);
	res = json_string("\xc3\xa9");
	mcp__rpc_result(&b, id, res);
	mcp__rpc_result(&b, id, res);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"id\":-2,\"result\":\"\xc3\xa9\"}"
	    "{\"jsonrpc\":\"2.0\",\"id\":-2,\"result\":\"\xc3\xa9\"}",
	    "result: appends, UTF-8 kept as is");
	free(s);
	json_decref(res);

	is_int(mcp__rpc_error(&b, NULL, MCP_RPC_PARSE_ERROR, "parse error",
	    NULL), MCP_OK, "error: ok");
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,"
	    "\"message\":\"parse error\"}}", "error: NULL id is omitted");
	free(s);

	mcp__rpc_error(&b, id, MCP_RPC_METHOD_NOT_FOUND, "no \"such\" method",
	    NULL);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"id\":-2,\"error\":{\"code\":-32601,"
	    "\"message\":\"no \\\"such\\\" method\"}}",
	    "error: id kept, message escaped");
	free(s);
	json_decref(id);

	id = json_string("x");
	data = load("{\"field\":\"name\",\"n\":[1,2]}");
	mcp__rpc_error(&b, id, MCP_RPC_INVALID_PARAMS, "bad", data);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":"
	    "-32602,\"message\":\"bad\",\"data\":{\"field\":\"name\","
	    "\"n\":[1,2]}}}", "error: data member");
	free(s);
	json_decref(data);

	data = json_string("just text");
	mcp__rpc_error(&b, NULL, MCP_RPC_SERVER_BUSY, "busy", data);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,"
	    "\"message\":\"busy\",\"data\":\"just text\"}}",
	    "error: scalar data, no id");
	free(s);
	json_decref(data);

	mcp__rpc_error(&b, id, 1, NULL, NULL);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":1,"
	    "\"message\":\"error\"}}", "error: NULL message becomes error");
	free(s);
	/*
	 * A message cut inside a UTF-8 sequence (as "%.100s" can do) must
	 * still give valid JSON; keeping the readable part is better still.
	 */
	mcp__rpc_error(&b, id, 1, "unknown tool: caf\xc3", NULL);
	s = take(&b);
	data = s != NULL ? json_loads(s, 0, NULL) : NULL;
	ok(data != NULL && json_is_string(json_object_get(json_object_get(data,
	    "error"), "message")), "error: invalid UTF-8 message, valid JSON");
	if (!ok(data != NULL && strncmp(json_string_value(json_object_get(
	    json_object_get(data, "error"), "message")), "unknown tool: caf",
	    17) == 0, "error: invalid UTF-8 message, valid part kept"))
		diag("  got %s", s != NULL ? s : "(null)");
	json_decref(data);
	free(s);
	json_decref(id);

	is_int(mcp__rpc_notification(&b, "notifications/tools/list_changed",
	    NULL), MCP_OK, "notification: ok");
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/tools/list_changed\"}",
	    "notification: no params member");
	free(s);

	data = load("{\"level\":\"info\",\"data\":\"hi\"}");
	mcp__rpc_notification(&b, "notifications/message", data);
	s = take(&b);
	is_str(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
	    "\"params\":{\"level\":\"info\",\"data\":\"hi\"}}",
	    "notification: params");
	free(s);
	json_decref(data);

	/* Whatever the method, the output must stay one JSON text. */
	mcp__rpc_notification(&b, "odd\"name\\", NULL);
	s = take(&b);
	data = s != NULL ? json_loads(s, 0, NULL) : NULL;
	if (!ok(data != NULL && json_is_string(json_object_get(data,
	    "method")) && strcmp(json_string_value(json_object_get(data,
	    "method")), "odd\"name\\") == 0,
	    "notification: method is JSON-escaped"))
		diag("  got %s", s != NULL ? s : "(null)");
	json_decref(data);
	free(s);
	mcp__buf_free(&b);
}

/* ---- mcp__rpc_id_key --------------------------------------------------- */

/* The key of ID into KEY (40 bytes, as in struct mcp_call); frees ID. */
static int
key_of(json_t *id, char *key)
{
	int	 rc;

	memset(key, 'X', 40);
	rc = mcp__rpc_id_key(id, key, 40);
	json_decref(id);
	return rc;
}

static void
t_id_key(void)
{
	char	 k1[40], k2[40], k3[40], longs[300];
	json_t	*v;
	int	 rc;

	is_int(key_of(json_integer(1), k1), MCP_OK, "key 1: ok");
	is_int(key_of(json_string("1"), k2), MCP_OK, "key \"1\": ok");
	ok(strcmp(k1, k2) != 0, "1 and \"1\" differ (%s, %s)", k1, k2);
	key_of(json_integer(1), k3);
	is_str(k1, k3, "the same id gives the same key");

	key_of(json_integer(0), k1);
	key_of(json_string("0"), k2);
	ok(strcmp(k1, k2) != 0 && k1[0] != '\0', "0 and \"0\" differ");
	key_of(json_integer(-1), k1);
	key_of(json_integer(1), k2);
	ok(strcmp(k1, k2) != 0, "-1 and 1 differ");
	key_of(json_string("-1"), k2);
	ok(strcmp(k1, k2) != 0, "-1 and \"-1\" differ");

	key_of(json_integer(INT64_MAX), k1);
	key_of(json_integer(INT64_MAX - 1), k2);
	ok(strcmp(k1, k2) != 0, "INT64_MAX and INT64_MAX-1 differ");
	ok(strstr(k1, "9223372036854775807") != NULL,
	    "INT64_MAX kept whole (%s)", k1);
	key_of(json_integer(INT64_MIN), k1);
	ok(strstr(k1, "-9223372036854775808") != NULL,
	    "INT64_MIN kept whole (%s)", k1);
	key_of(json_integer((json_int_t)1 << 53), k1);
	key_of(json_integer(((json_int_t)1 << 53) + 1), k2);
	ok(strcmp(k1, k2) != 0, "2^53 and 2^53+1 differ");

	is_int(key_of(json_string(""), k1), MCP_OK, "empty string: ok");
	key_of(json_string("s"), k2);
	ok(k1[0] != '\0' && strcmp(k1, k2) != 0, "\"\" has a key of its own");
	key_of(json_string("i1"), k1);
	key_of(json_integer(1), k2);
	ok(strcmp(k1, k2) != 0, "\"i1\" and 1 differ");

	/* 38 bytes is the longest kept whole in 40; 39 is hashed. */
	memset(longs, 'a', sizeof(longs));
	longs[38] = '\0';
	key_of(json_string(longs), k1);
	ok(strlen(k1) == 39 && strcmp(k1 + 1, longs) == 0,
	    "a 38-byte id is kept whole");
	longs[38] = 'a';
	longs[39] = '\0';
	key_of(json_string(longs), k2);
	ok(strlen(k2) < 40 && strcmp(k1, k2) != 0,
	    "a 39-byte id is folded (%s)", k2);

	/* Long ids: hashed, deterministic, and still told apart. */
	memset(longs, 'x', sizeof(longs));
	longs[sizeof(longs) - 1] = '\0';
	is_int(key_of(json_string(longs), k1), MCP_OK, "long id: ok");
	ok(memchr(k1, '\0', 40) != NULL, "long id: key terminated");
	key_of(json_string(longs), k2);
	is_str(k1, k2, "long id: the same key twice");
	longs[sizeof(longs) - 2] = 'y';
	key_of(json_string(longs), k2);
	ok(strcmp(k1, k2) != 0, "long ids differing in the last byte differ");
	longs[sizeof(longs) - 2] = 'x';
	longs[0] = 'y';
	key_of(json_string(longs), k2);
	ok(strcmp(k1, k2) != 0, "long ids differing in the first byte differ");
	longs[0] = 'x';
	longs[100] = '\0';
	key_of(json_string(longs), k2);
	ok(strcmp(k1, k2) != 0, "long ids of different lengths differ");

	/* NUL inside a string: never cut at the NUL. */
	is_int(key_of(json_stringn("a\0b", 3), k1), MCP_OK,
	    "id with NUL: ok");
	key_of(json_string("a"), k2);
	ok(strcmp(k1, k2) != 0, "\"a\\0b\" and \"a\" differ");
	key_of(json_stringn("a\0c", 3), k3);
	ok(strcmp(k1, k3) != 0, "\"a\\0b\" and \"a\\0c\" differ");
	key_of(json_string("ab"), k2);
	ok(strcmp(k1, k2) != 0, "\"a\\0b\" and \"ab\" differ");

	/* Not a valid id. */
	is_int(key_of(json_null(), k1), MCP_EINVAL, "null: EINVAL");
	is_int(key_of(json_true(), k1), MCP_EINVAL, "true: EINVAL");
	is_int(key_of(json_real(1.5), k1), MCP_EINVAL, "1.5: EINVAL");
	is_int(key_of(json_object(), k1), MCP_EINVAL, "{}: EINVAL");
	is_int(key_of(json_array(), k1), MCP_EINVAL, "[]: EINVAL");

	/*
	 * KEYLEN is respected: a key that does not fit is either refused
	 * or cut and terminated, and nothing is written past it.
	 */
	v = json_string("abcdefghij");
	memset(k1, 'X', sizeof(k1));
	rc = mcp__rpc_id_key(v, k1, 8);
	ok((rc != MCP_OK || memchr(k1, '\0', 8) != NULL) && k1[8] == 'X',
	    "string id, 8-byte key buffer: kept within it");
	json_decref(v);
	v = json_integer(INT64_MIN);
	memset(k1, 'X', sizeof(k1));
	rc = mcp__rpc_id_key(v, k1, 8);
	ok((rc != MCP_OK || memchr(k1, '\0', 8) != NULL) && k1[8] == 'X',
	    "integer id, 8-byte key buffer: kept within it");
	json_decref(v);
}

/* ---- buf.c -------------------------------------------------------------- */

static void
t_buf(void)
{
	struct buf	 b = { 0 };
	char		 chunk[200], *s;
	size_t		 n, i;
	json_t		*v;
	int		 good;

	is_int(mcp__buf_add(&b, "", 0), MCP_OK, "add nothing: ok");
	ok(b.data == NULL && b.cap == 0, "add nothing: no allocation");
	is_int(mcp__buf_adds(&b, "hello"), MCP_OK, "adds: ok");
	ok(b.len == 5 && b.off == 0 && b.cap >= 5, "adds: len 5");
	ok(memcmp(b.data, "hello", 5) == 0, "adds: bytes");
	is_int(mcp__buf_addc(&b, '!'), MCP_OK, "addc: ok");
	ok(b.len == 6 && b.data[5] == '!', "addc: appended");
	mcp__buf_consume(&b, 2);
	ok(b.off == 2 && b.len == 6, "consume: moves the offset only");
	ok(memcmp(b.data + b.off, "llo!", 4) == 0, "consume: rest intact");
	mcp__buf_consume(&b, 4);
	ok(b.off == 0 && b.len == 0, "consume all: offsets reset");
	ok(b.data != NULL, "consume all: storage kept");
	mcp__buf_adds(&b, "abc");
	mcp__buf_consume(&b, 10);
	ok(b.off == 0 && b.len == 0, "consume too much: empty");
	mcp__buf_free(&b);
	ok(b.data == NULL && b.cap == 0 && b.len == 0 && b.off == 0,
	    "free: zeroed");
	mcp__buf_free(&b);
	ok(1, "free twice is harmless");

	/* Compaction: consumed bytes are reclaimed before growing. */
	for (i = 0; i < sizeof(chunk); i++)
		chunk[i] = (char)('A' + i % 26);
	mcp__buf_add(&b, chunk, sizeof(chunk));
	n = b.cap;
	mcp__buf_consume(&b, 150);
	is_int(mcp__buf_reserve(&b, n - 60), MCP_OK, "reserve: ok");
	ok(b.cap == n, "reserve: compacted instead of growing (cap %zu)",
	    b.cap);
	ok(b.off == 0 && b.len == 50, "reserve: offset folded away");
	ok(memcmp(b.data, chunk + 150, 50) == 0, "reserve: bytes moved");
	mcp__buf_add(&b, chunk, n - 60);
	ok(b.len == n - 10 && b.cap == n, "filled the reclaimed room");
	mcp__buf_reset(&b);
	ok(b.len == 0 && b.off == 0 && b.cap == n, "reset keeps storage");

	/* Little consumed: growing beats moving. */
	mcp__buf_add(&b, chunk, sizeof(chunk));
	mcp__buf_consume(&b, 10);
	mcp__buf_reserve(&b, n);
	ok(b.cap >= 200 + n && b.off == 10, "reserve: grows, keeps offset");
	ok(memcmp(b.data + b.off, chunk + 10, 190) == 0, "grow: bytes kept");
	mcp__buf_reset(&b);

	/* Growth by many small appends stays correct. */
	for (i = 0; i < 100000; i++)
		if (mcp__buf_addc(&b, (char)('0' + i % 10)) != MCP_OK)
			break;
	good = b.len == 100000;
	for (i = 0; good && i < 100000; i++)
		good = b.data[i] == (char)('0' + i % 10);
	ok(good, "100000 addc: every byte in place");

	/* Reservations that cannot be met leave the buffer as it was. */
	n = b.cap;
	is_int(mcp__buf_reserve(&b, SIZE_MAX), MCP_ENOMEM,
	    "reserve SIZE_MAX: ENOMEM");
	is_int(mcp__buf_reserve(&b, SIZE_MAX - b.len + 1), MCP_ENOMEM,
	    "reserve wrapping around: ENOMEM");
	ok(b.cap == n && b.len == 100000, "failed reserve: unchanged");
	mcp__buf_free(&b);
	is_int(mcp__buf_reserve(&b, SIZE_MAX), MCP_ENOMEM,
	    "empty buffer, reserve SIZE_MAX: ENOMEM");
	ok(b.data == NULL, "empty buffer: still empty");

	/* steal: the unread bytes, NUL-terminated; the buffer is empty. */
	mcp__buf_adds(&b, "xxabc");
	mcp__buf_consume(&b, 2);
	s = mcp__buf_steal(&b, &n);
	is_str(s, "abc", "steal: unread bytes only");
	is_int(n, 3, "steal: length without the NUL");
	ok(b.data == NULL && b.cap == 0 && b.len == 0 && b.off == 0,
	    "steal: buffer emptied");
	free(s);
	s = mcp__buf_steal(&b, &n);
	ok(s != NULL && s[0] == '\0' && n == 0, "steal empty: \"\"");
	free(s);
	mcp__buf_add(&b, "a\0b", 3);
	s = mcp__buf_steal(&b, &n);
	ok(n == 3 && memcmp(s, "a\0b", 4) == 0, "steal: embedded NUL kept");
	free(s);

	/* addjson: compact, one line. */
	v = load("{\"a\": [1, 2.5, \"x\\ny\"], \"b\": null}");
	is_int(mcp__buf_addjson(&b, v), MCP_OK, "addjson: ok");
	s = take(&b);
	is_str(s, "{\"a\":[1,2.5,\"x\\ny\"],\"b\":null}",
	    "addjson: compact, newline escaped");
	free(s);
	json_decref(v);
	v = json_integer(5);
	mcp__buf_addjson(&b, v);
	json_decref(v);
	s = take(&b);
	is_str(s, "5", "addjson: a scalar");
	free(s);
	mcp__buf_free(&b);
}

/* ---- base64.c ----------------------------------------------------------- */

static void
b64(const char *in, size_t len, const char *want)
{
	char	*s;

	s = mcp__base64(in, len);
	is_str(s, want, "base64(\"%.*s\", %zu)", (int)len, in, len);
	free(s);
}

static void
t_base64(void)
{
	unsigned char	 all[256];
	const char	*tbl;
	char		*s;
	size_t		 i, j;
	int		 good, bits;
	unsigned int	 acc;

	/* RFC 4648, section 10. */
	b64("", 0, "");
	b64("f", 1, "Zg==");
	b64("fo", 2, "Zm8=");
	b64("foo", 3, "Zm9v");
	b64("foob", 4, "Zm9vYg==");
	b64("fooba", 5, "Zm9vYmE=");
	b64("foobar", 6, "Zm9vYmFy");
	/* The last two alphabet characters, and bytes with the high bit. */
	b64("\xfb\xff", 2, "+/8=");
	b64("\xff\xff\xff", 3, "////");
	b64("\0\0\0", 3, "AAAA");
	b64("\0", 1, "AA==");
	s = mcp__base64(NULL, 0);
	is_str(s, "", "base64(NULL, 0) is \"\"");
	free(s);

	/* Every byte value decodes back to itself. */
	tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/";
	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	s = mcp__base64(all, sizeof(all));
	good = s != NULL && strlen(s) == (256 + 2) / 3 * 4;
	acc = 0;
	bits = 0;
	for (i = 0, j = 0; good && s[i] != '\0' && s[i] != '='; i++) {
		acc = (acc << 6 | (unsigned int)(strchr(tbl, s[i]) - tbl)) &
		    0xffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			good = j < 256 &&
			    all[j] == (unsigned char)(acc >> bits);
			j++;
		}
	}
	ok(good && j == 256, "256 byte values round-trip (%zu decoded)", j);
	free(s);
}

/* Ids written as reals: taken, echoed as sent, keyed as the integer. */
static void
t_raw_ids(void)
{
	static const char *const texts[] = { "2.0", "1e2", "-0.0", "1E+3",
	    "12345678901234567890" };
	struct rpc_fields f;
	struct json_perr e;
	struct buf	 b = { 0 };
	json_t		*whole, *id;
	char		 js[200], k1[40], k2[40];
	size_t		 i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"method\":\"ping\"}", texts[i]);
		if (!ok(mcp__json_parse_message(js, strlen(js), &f, &whole,
		    &e) == 1, "%s: parsed", texts[i]))
			continue;
		mcp__buf_reset(&b);
		id = json_object();
		mcp__rpc_result(&b, f.id, id);
		json_decref(id);
		snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"result\":{}}", texts[i]);
		ok(b.len == strlen(js) && memcmp(b.data, js, b.len) == 0,
		    "%s: echoed as sent", texts[i]);
		mcp__rpc_fields_clear(&f);
	}
	/* The key of 2.0 is the key of 2, whichever form it takes. */
	id = mcp__json_id_raw("2.0", 3);
	key_of(json_integer(2), k1);
	key_of(id, k2);		/* frees it */
	is_str(k2, k1, "raw 2.0 has the key of 2");
	key_of(json_real(2.0), k2);
	is_str(k2, k1, "the real 2.0 (a cancel's requestId) too");
	key_of(json_string("2"), k2);
	ok(strcmp(k1, k2) != 0, "but not the key of \"2\"");
	/* No parsed string is taken for a raw id: 0xff is never UTF-8. */
	snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":\"\xff" "2.0\","
	    "\"method\":\"ping\"}");
	ok(mcp__json_parse_message(js, strlen(js), &f, &whole, &e) == -1,
	    "a string id starting with byte 0xff is refused (not UTF-8)");
	snprintf(js, sizeof(js), "{\"jsonrpc\":\"2.0\",\"id\":[\"2.0\"],"
	    "\"method\":\"ping\"}");
	if (ok(mcp__json_parse_message(js, strlen(js), &f, &whole, &e) == 1,
	    "[\"2.0\"]: parsed")) {
		struct rpc_msg	 m;

		mcp__rpc_classify(&f, &m);
		ok(m.kind == RPC_INVALID && m.id == NULL,
		    "an array id is refused, never echoed");
		mcp__rpc_fields_clear(&f);
	}
	mcp__buf_free(&b);
}

/* The streaming scan for the id of a message too large to parse. */
static void
t_idscan(void)
{
	static const struct {
		const char	*js;
		const char	*id;	/* its JSON, NULL for none */
		int		 method;
	} cases[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\"}", "7", 1 },
		{ "{\"method\":\"x\",\"params\":{\"id\":1,\"a\":[\"}\",{\"id\":2}]},"
		    "\"id\":\"last\"}", "\"last\"", 1 },
		{ "{\"params\":{\"s\":\"\\\"id\\\":9\"},\"id\":\"a\\\"b\"}",
		    "\"a\\\"b\"", 0 },
		{ " { \"id\" : 2.0 , \"method\" : \"x\" } ", "2.0", 1 },
		{ "{\"id\":null}", NULL, 0 },
		{ "{\"id\":{\"a\":1}}", NULL, 0 },
		{ "{\"id\":1.5}", NULL, 0 },
		{ "{\"method\":\"n\"}", NULL, 1 },
		{ "[{\"id\":1}]", NULL, 0 },
		{ "{\"idx\":1,\"xid\":2}", NULL, 0 },
		{ "{\"id\":1,\"id\":2}", "2", 0 },
	};
	struct idscan	 sc;
	struct buf	 b = { 0 };
	const char	*p;
	json_t		*id;
	size_t		 i, k, n;
	int		 good;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = strlen(cases[i].js);
		/* Whole, and one byte at a time: the same answer. */
		for (k = 0; k < 2; k++) {
			size_t	 j;

			mcp__idscan_init(&sc);
			if (k == 0)
				mcp__idscan_feed(&sc, cases[i].js, n);
			else
				for (j = 0; j < n; j++)
					mcp__idscan_feed(&sc, cases[i].js + j, 1);
			id = mcp__idscan_id(&sc);
			mcp__buf_reset(&b);
			if (id != NULL)
				mcp__buf_addid(&b, id);
			good = cases[i].id == NULL ? id == NULL : id != NULL &&
			    b.len == strlen(cases[i].id) &&
			    memcmp(b.data, cases[i].id, b.len) == 0;
			ok(good && sc.has_method == cases[i].method,
			    "idscan %s (%s): id %s, method %d", cases[i].js,
			    k == 0 ? "whole" : "bytewise",
			    cases[i].id != NULL ? cases[i].id : "none",
			    cases[i].method);
			json_decref(id);
		}
	}
	/* A long id value is no id; a cut message keeps what it saw. */
	mcp__idscan_init(&sc);
	mcp__idscan_feed(&sc, "{\"id\":\"", strlen("{\"id\":\""));
	for (i = 0; i < 100; i++)
		mcp__idscan_feed(&sc, "x", 1);
	mcp__idscan_feed(&sc, "\"}", 2);
	id = mcp__idscan_id(&sc);
	ok(id == NULL && sc.complete, "a 100-byte id is too long to keep");
	mcp__idscan_init(&sc);
	p = "{\"id\":5,\"params\":{\"x\":\"";
	mcp__idscan_feed(&sc, p, strlen(p));
	id = mcp__idscan_id(&sc);
	ok(json_integer_value(id) == 5 && !sc.complete,
	    "an id read before the cut is kept");
	json_decref(id);
	mcp__buf_free(&b);
}

/* ---- the string scan ---------------------------------------------------- */

/*
 * json.c reads a string eight bytes a step: every byte it must stop at
 * (a control, '"', '\\', a UTF-8 lead), put at every offset of the first
 * 24 bytes, past a run of plain bytes, must be found there. The parser's
 * answer is checked against jansson's own decoder, text for text.
 */
static void
t_string_scan(void)
{
	static const char *const special[] = { "\\\"", "\\\\", "\\n",
	    "\\u00e9", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\x7f",
	    " ", "!", "#", "[", "]", "\xc3", "\x01", "\x1f", "\x80", "\xff" };
	struct json_perr	 e;
	json_t			*mine, *theirs;
	char			 js[128];
	size_t			 i, k, len;
	int			 bad = 0, pos;

	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		for (pos = 0; pos < 24; pos++) {
			len = (size_t)snprintf(js, sizeof(js),
			    "\"%.*s%s%s\"", pos, "abcdefghijklmnopqrstuvwx",
			    special[i], "yz0123456789");
			mine = mcp__json_parse(js, len, &e);
			theirs = json_loadb(js, len, JSON_DECODE_ANY, NULL);
			k = mine != NULL && theirs != NULL &&
			    json_equal(mine, theirs);
			if (!(k || (mine == NULL && theirs == NULL))) {
				diag("%s: ours %s, jansson's %s", js,
				    mine ? "parsed" : e.text,
				    theirs ? "parsed" : "refused");
				bad++;
			}
			json_decref(mine);
			json_decref(theirs);
		}
	}
	ok(bad == 0, "the string scan agrees with jansson at every offset "
	    "(%d disagreements)", bad);
	/* Unterminated at every length, across the eight-byte steps. */
	bad = 0;
	for (pos = 0; pos < 24; pos++) {
		len = (size_t)snprintf(js, sizeof(js), "\"%.*s", pos,
		    "abcdefghijklmnopqrstuvwx");
		mine = mcp__json_parse(js, len, &e);
		if (mine != NULL || strstr(e.text, "unterminated") == NULL)
			bad++;
		json_decref(mine);
	}
	ok(bad == 0, "an unterminated string is refused at every length");

	/* The serialiser's scans: what it writes reads back the same. */
	bad = 0;
	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		for (pos = 0; pos < 24; pos++) {
			struct buf	 b = { 0 };
			char		 raw[64], *out;
			const char	*want;

			len = (size_t)snprintf(raw, sizeof(raw), "%.*s%s%s",
			    pos, "abcdefghijklmnopqrstuvwx", special[i],
			    "yz0123456789");
			if (mcp__buf_addstr(&b, raw, len) != MCP_OK)
				exit(2);
			out = take(&b);
			mine = json_loads(out, JSON_DECODE_ANY, NULL);
			/* Invalid UTF-8 comes back as U+FFFD: only valid
			 * text must read back byte for byte. */
			want = json_string_value(mine);
			if (mine == NULL || (mcp__utf8_valid(raw, len) &&
			    (json_string_length(mine) != len ||
			    memcmp(want, raw, len) != 0)) ||
			    (!mcp__utf8_valid(raw, len) &&
			    strstr(want, "\xef\xbf\xbd") == NULL)) {
				diag("%s: wrote %s", raw, out);
				bad++;
			}
			json_decref(mine);
			free(out);
		}
	}
	ok(bad == 0, "a string written with every special at every offset "
	    "reads back (%d disagreements)", bad);
}

/* mcp__fmt_int against snprintf, at every length and both ends. */
static void
t_fmt_int(void)
{
	static const long long fixed[] = { 0, 1, 9, 10, 99, 100, 101, 999,
	    1000, -1, -9, -10, -99, -100, LLONG_MAX, LLONG_MIN,
	    LLONG_MIN + 1, 4294967296LL, -4294967296LL };
	char		 mine[24], want[24];
	unsigned long long u;
	long long	 v;
	size_t		 i, n;
	int		 bad = 0;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]) + 4000; i++) {
		u = (unsigned long long)(i * 7919u) << (i % 40);
		v = i < sizeof(fixed) / sizeof(fixed[0]) ? fixed[i] :
		    (long long)((i & 1) ? 0 - u : u);
		n = mcp__fmt_int(mine, v);
		snprintf(want, sizeof(want), "%lld", v);
		if (n != strlen(want) || strcmp(mine, want) != 0) {
			diag("%s: got %s (%zu)", want, mine, n);
			bad++;
		}
	}
	ok(bad == 0, "mcp__fmt_int writes what %%lld does (%d differ)", bad);
}

/*
 * mcp__json_get against json_object_get: objects of 0 to 9 members (it
 * walks those of 4 or fewer, and hashes the rest), every key present and
 * some absent, keys that share a prefix, and values that are not objects.
 */
static void
t_json_get(void)
{
	static const char *const keys[] = { "a", "ab", "abc", "text", "b",
	    "", "tex", "texts", "z" };
	const char	*probe[] = { "a", "ab", "abc", "text", "b", "", "tex",
	    "texts", "z", "q", "A", "abcd" };
	json_t		*o, *other[3];
	size_t		 size, i;
	int		 bad = 0, checked = 0;

	for (size = 0; size <= 9; size++) {
		o = json_object();
		for (i = 0; i < size; i++)
			json_object_set_new(o, keys[i], json_integer((json_int_t)i));
		for (i = 0; i < sizeof(probe) / sizeof(probe[0]); i++) {
			checked++;
			if (mcp__json_get(o, probe[i]) !=
			    json_object_get(o, probe[i]))
				bad++;
		}
		json_decref(o);
	}
#if JANSSON_VERSION_HEX >= 0x020e00
	/* A key with a NUL inside is not its prefix, nor the reverse. */
	o = json_object();
	json_object_setn_new(o, "sum\0x", 5, json_integer(1));
	json_object_set_new(o, "sum", json_integer(2));
	checked++;
	if (mcp__json_get(o, "sum") != json_object_get(o, "sum") ||
	    json_integer_value(mcp__json_get(o, "sum")) != 2)
		bad++;
	json_object_del(o, "sum");
	checked++;
	if (mcp__json_get(o, "sum") != NULL)
		bad++;
	json_decref(o);
#else
	checked += 2;
#endif
	other[0] = json_array();
	other[1] = json_string("a");
	other[2] = NULL;
	for (i = 0; i < 3; i++) {
		checked++;
		if (mcp__json_get(other[i], "a") != NULL)
			bad++;
		json_decref(other[i]);
	}
	ok(bad == 0 && checked == 125, "mcp__json_get finds what "
	    "json_object_get does (%d of %d differ)", bad, checked);
}

int
main(void)
{
	t_classify_valid();
	t_classify_invalid();
	t_params_scan();
	t_build();
	t_id_key();
	t_raw_ids();
	t_envelope_names();
	t_idscan();
	t_buf();
	t_base64();
	t_string_scan();
	t_fmt_int();
	t_json_get();
	return tap_done();
}
