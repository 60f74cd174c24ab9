/*
 * jsonrpc.c: the JSON-RPC 2.0 envelope: classifying an incoming message
 * and building outgoing ones as compact JSON. Pure: no I/O, no globals,
 * so any thread may call it (workers build their responses here).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mcp-int.h"

/*
 * Sorts MSG into a request, notification, response or invalid message,
 * following MCP-SPEC §2: an id must be a string or an integer; a message
 * without an id but with a method is a notification (never answered, even
 * when malformed); result or error without a method is a response.
 * Pointers in M borrow from MSG.
 */
void
mcp__rpc_classify(json_t *msg, struct rpc_msg *m)
{
	json_t	*v, *id, *method;

	memset(m, 0, sizeof(*m));
	m->kind = RPC_INVALID;
	if (!json_is_object(msg)) {
		m->why = "message is not a JSON object";
		return;
	}
	id = json_object_get(msg, "id");
	method = json_object_get(msg, "method");
	if (id == NULL && method != NULL) {
		/* A notification: classified, but never answered. */
		v = json_object_get(msg, "jsonrpc");
		if (!json_is_string(v) || strcmp(json_string_value(v), "2.0"))
			return;
		if (!json_is_string(method))
			return;
		m->kind = RPC_NOTIFICATION;
		m->method = json_string_value(method);
		m->params = json_object_get(msg, "params");
		return;
	}
	if (id != NULL && (json_is_string(id) || json_is_integer(id)))
		m->id = id;
	v = json_object_get(msg, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
		m->why = "jsonrpc must be \"2.0\"";
		return;
	}
	if (method == NULL) {
		if (json_object_get(msg, "result") != NULL ||
		    json_object_get(msg, "error") != NULL) {
			m->kind = RPC_RESPONSE;
			return;
		}
		m->why = "missing method";
		return;
	}
	if (m->id == NULL) {
		m->why = json_is_null(id) ? "id must not be null" :
		    json_is_real(id) ? "id must be an integer or a string" :
		    "id must be a string or an integer";
		return;
	}
	if (!json_is_string(method)) {
		m->why = "method must be a string";
		return;
	}
	m->params = json_object_get(msg, "params");
	if (m->params != NULL && !json_is_object(m->params) &&
	    !json_is_array(m->params)) {
		m->why = "params must be an object";
		return;
	}
	m->kind = RPC_REQUEST;
	m->method = json_string_value(method);
}

/* Appends {"jsonrpc":"2.0","id":ID,"result":RESULT}. */
int
mcp__rpc_result(struct buf *b, const json_t *id, const json_t *result)
{
	if (mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") != MCP_OK ||
	    mcp__buf_addjson(b, id) != MCP_OK ||
	    mcp__buf_adds(b, ",\"result\":") != MCP_OK ||
	    mcp__buf_addjson(b, result) != MCP_OK ||
	    mcp__buf_addc(b, '}') != MCP_OK)
		return MCP_ENOMEM;
	return MCP_OK;
}

/*
 * Appends an error response. A NULL ID omits the member: the TypeScript
 * SDK rejects "id":null in-band, and 2025-11-25 makes it optional for
 * errors whose id could not be read. DATA (borrowed) may be NULL.
 */
int
mcp__rpc_error(struct buf *b, const json_t *id, int code, const char *msg,
    const json_t *data)
{
	json_t	*s;
	char	 num[24];
	int	 rc;

	if (mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",") != MCP_OK)
		return MCP_ENOMEM;
	if (id != NULL && (mcp__buf_adds(b, "\"id\":") != MCP_OK ||
	    mcp__buf_addjson(b, id) != MCP_OK || mcp__buf_addc(b, ',')))
		return MCP_ENOMEM;
	snprintf(num, sizeof(num), "%d", code);
	s = json_string(msg);
	if (s == NULL)
		s = json_string("error");
	rc = mcp__buf_adds(b, "\"error\":{\"code\":");
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, num);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, ",\"message\":");
	if (rc == MCP_OK)
		rc = s == NULL ? MCP_ENOMEM : mcp__buf_addjson(b, s);
	if (rc == MCP_OK && data != NULL) {
		rc = mcp__buf_adds(b, ",\"data\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addjson(b, data);
	}
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, "}}");
	json_decref(s);
	return rc;
}

/* Appends {"jsonrpc":"2.0","method":METHOD[,"params":PARAMS]}. */
int
mcp__rpc_notification(struct buf *b, const char *method, const json_t *params)
{
	if (mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"method\":\"") != MCP_OK ||
	    mcp__buf_adds(b, method) != MCP_OK ||
	    mcp__buf_addc(b, '"') != MCP_OK)
		return MCP_ENOMEM;
	if (params != NULL && (mcp__buf_adds(b, ",\"params\":") != MCP_OK ||
	    mcp__buf_addjson(b, params) != MCP_OK))
		return MCP_ENOMEM;
	return mcp__buf_addc(b, '}');
}

/*
 * Writes a key for ID that differs for 1 and "1". Short string ids are
 * kept whole; a long one is folded to its length and two hashes, which
 * is unique enough to tell in-flight ids apart. Returns MCP_EINVAL for an
 * id that is neither a string nor an integer.
 */
int
mcp__rpc_id_key(const json_t *id, char *key, size_t keylen)
{
	const char	*s;
	size_t		 n, i;
	uint32_t	 h1 = 2166136261u, h2 = 5381;

	if (json_is_integer(id)) {
		snprintf(key, keylen, "i%lld",
		    (long long)json_integer_value(id));
		return MCP_OK;
	}
	if (!json_is_string(id))
		return MCP_EINVAL;
	s = json_string_value(id);
	n = json_string_length(id);
	if (n + 2 <= keylen && memchr(s, '\0', n) == NULL) {
		key[0] = 's';
		memcpy(key + 1, s, n);
		key[n + 1] = '\0';
		return MCP_OK;
	}
	for (i = 0; i < n; i++) {
		h1 = (h1 ^ (unsigned char)s[i]) * 16777619u;
		h2 = h2 * 33 + (unsigned char)s[i];
	}
	snprintf(key, keylen, "S%zu:%08x%08x", n, h1, h2);
	return MCP_OK;
}
