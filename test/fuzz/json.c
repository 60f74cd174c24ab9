/*
 * json.c: the JSON layer (src/json.c, src/jsonrpc.c) on arbitrary bytes.
 * Checked: what parses serialises and parses back equal; the message
 * parser and the batch counter agree with the value parser; the id scan
 * finds the id the parser finds (for text without escapes); any bytes
 * given as a string come out as a JSON string.
 */
#include "fuzz.h"

/*
 * The message parser's fields (F, from names found in place or read)
 * against the same read from the parsed object V (the batch road).
 */
static void
fields_agree(const struct rpc_fields *f, json_t *v)
{
	struct rpc_fields	 g;
	json_t			*p, *name;
	const char		*s;

	FUZZ_CHECK(mcp__rpc_fields_from_json(v, &g) == MCP_OK,
	    "an object is not fields");
	FUZZ_CHECK(f->jsonrpc == g.jsonrpc, "jsonrpc: %d, read %d",
	    f->jsonrpc, g.jsonrpc);
	FUZZ_CHECK(f->method == g.method && f->has_id == g.has_id &&
	    f->has_result == g.has_result, "method, id or result disagree");
	FUZZ_CHECK(f->mlen == strlen(f->mname), "mlen %zu for \"%s\"",
	    f->mlen, f->mname);
	s = json_string_value(json_object_get(v, "method"));
	if (f->method == 1 && s != NULL &&
	    strlen(s) == json_string_length(json_object_get(v, "method")) &&
	    strlen(s) < sizeof(f->mname))
		FUZZ_CHECK(strcmp(f->mname, s) == 0, "method \"%s\", read "
		    "\"%s\"", f->mname, s);
	if (json_is_integer(g.id) || (json_is_string(g.id) &&
	    (json_string_length(g.id) == 0 ||
	    (unsigned char)json_string_value(g.id)[0] != 0xff)))
		FUZZ_CHECK(json_equal(f->id, g.id), "the ids disagree");
	p = json_object_get(v, "params");
	name = json_object_get(p, "name");
	if (f->praw != NULL && json_is_string(name) &&
	    json_string_length(name) <= 128 &&
	    strlen(json_string_value(name)) == json_string_length(name))
		FUZZ_CHECK(f->tname_kind == 1 &&
		    strcmp(f->tname, json_string_value(name)) == 0,
		    "tools/call's name disagrees");
	FUZZ_CHECK(f->praw == NULL || json_is_object(json_object_get(p,
	    "arguments")) == (f->args_kind == 1), "arguments' kind");
	mcp__rpc_fields_clear(&g);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*d = (const char *)data;
	struct json_perr e, e2;
	struct rpc_fields f;
	struct rpc_msg	 m;
	struct idscan	 sc;
	struct buf	 b = { 0 };
	json_t		*v, *w, *whole, *id, *sid;
	long		 count;
	int		 rc;

	v = mcp__json_parse(d, size, &e);
	if (v != NULL) {
		FUZZ_CHECK(mcp__buf_addjson(&b, v) == MCP_OK,
		    "a parsed value does not serialise");
		w = mcp__json_parse(b.data, b.len, &e2);
		FUZZ_CHECK(w != NULL && json_equal(v, w),
		    "a value does not survive the round trip: %.*s",
		    (int)(b.len > 200 ? 200 : b.len), b.data);
		json_decref(w);
	}
	count = mcp__json_array_count(d, size);
	FUZZ_CHECK(json_is_array(v) ? count == (long)json_array_size(v) :
	    count == -1, "the batch count (%ld) disagrees with the parser",
	    count);

	rc = mcp__json_parse_message(d, size, &f, &whole, &e2);
	FUZZ_CHECK((rc < 0) == (v == NULL) && (rc == 1) == json_is_object(v),
	    "the message parser (%d) disagrees with the value parser", rc);
	if (rc == 1) {
		mcp__rpc_classify(&f, &m);
		fields_agree(&f, v);
		mcp__rpc_fields_clear(&f);
	}
	json_decref(whole);

	mcp__idscan_init(&sc);
	mcp__idscan_feed(&sc, d, size);
	sid = mcp__idscan_id(&sc);
	id = json_object_get(v, "id");
	if (json_is_object(v) && memchr(d, '\\', size) == NULL &&
	    (json_is_integer(id) || (json_is_string(id) &&
	    json_string_length(id) < 50)))
		FUZZ_CHECK(sid != NULL && json_equal(sid, id),
		    "the id scan misses the id the parser reads");
	json_decref(sid);
	json_decref(v);

	mcp__buf_reset(&b);
	FUZZ_CHECK(mcp__buf_addstr(&b, d, size) == MCP_OK, "addstr failed");
	w = mcp__json_parse(b.data, b.len, &e2);
	FUZZ_CHECK(json_is_string(w), "bytes given as a string are not a "
	    "JSON string: %.*s", (int)(b.len > 200 ? 200 : b.len), b.data);
	json_decref(w);
	mcp__buf_free(&b);
	return 0;
}
