/*
 * json.c: the JSON layer (src/json.c, src/jsonrpc.c) on arbitrary bytes.
 * Checked: what parses serialises and parses back equal; the message
 * parser and the batch counter agree with the value parser; the id scan
 * finds the id the parser finds (for text without escapes); any bytes
 * given as a string come out as a JSON string.
 */
#include "fuzz.h"

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
