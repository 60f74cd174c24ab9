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
 * Sorts a message into a request, notification, response or invalid
 * message, following MCP-SPEC §2: an id must be a string or an integer;
 * a message without an id but with a method is a notification (never
 * answered, even when malformed); result or error without a method is a
 * response. M points into F, which keeps the references.
 */
void
mcp__rpc_classify(struct rpc_fields *f, struct rpc_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->kind = RPC_INVALID;
	if (!f->has_id && f->method != 0) {
		/* A notification: classified, but never answered. */
		if (f->jsonrpc != 1 || f->method != 1)
			return;
		m->kind = RPC_NOTIFICATION;
		m->method = f->mname;
		return;
	}
	if (json_is_string(f->id) || json_is_integer(f->id))
		m->id = f->id;
	if (f->jsonrpc != 1) {
		m->why = "jsonrpc must be \"2.0\"";
		return;
	}
	if (f->method == 0) {
		if (f->has_result) {
			m->kind = RPC_RESPONSE;
			return;
		}
		m->why = "missing method";
		return;
	}
	if (m->id == NULL) {
		m->why = json_is_null(f->id) ? "id must not be null" :
		    json_is_real(f->id) ? "id must be an integer or a string" :
		    "id must be a string or an integer";
		return;
	}
	if (f->method != 1) {
		m->why = "method must be a string";
		return;
	}
	if (f->params != NULL && !json_is_object(f->params) &&
	    !json_is_array(f->params)) {
		m->why = "params must be an object";
		return;
	}
	m->kind = RPC_REQUEST;
	m->method = f->mname;
}

int
mcp__rpc_fields_from_json(json_t *msg, struct rpc_fields *f)
{
	json_t	*v;
	size_t	 n;

	memset(f, 0, sizeof(*f));
	if (!json_is_object(msg))
		return MCP_EINVAL;
	v = json_object_get(msg, "jsonrpc");
	if (v != NULL)
		f->jsonrpc = json_is_string(v) &&
		    strcmp(json_string_value(v), "2.0") == 0 &&
		    json_string_length(v) == 3 ? 1 : 2;
	v = json_object_get(msg, "method");
	if (v != NULL && json_is_string(v)) {
		n = json_string_length(v);
		if (n < sizeof(f->mname) && strlen(json_string_value(v)) == n)
			memcpy(f->mname, json_string_value(v), n + 1);
		else
			snprintf(f->mname, sizeof(f->mname), "%.80s...",
			    json_string_value(v));
		f->method = 1;
	} else if (v != NULL)
		f->method = 2;
	v = json_object_get(msg, "id");
	f->has_id = v != NULL;
	f->id = json_incref(v);
	f->params = json_incref(json_object_get(msg, "params"));
	f->result = json_incref(json_object_get(msg, "result"));
	f->error = json_incref(json_object_get(msg, "error"));
	f->has_result = f->result != NULL || f->error != NULL;
	return MCP_OK;
}

void
mcp__rpc_fields_clear(struct rpc_fields *f)
{
	json_decref(f->id);
	json_decref(f->params);
	json_decref(f->result);
	json_decref(f->error);
	f->id = f->params = f->result = f->error = NULL;
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
	char	 num[24];
	int	 rc;

	if (msg == NULL)
		msg = "error";
	if (mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",") != MCP_OK)
		return MCP_ENOMEM;
	if (id != NULL && (mcp__buf_adds(b, "\"id\":") != MCP_OK ||
	    mcp__buf_addjson(b, id) != MCP_OK ||
	    mcp__buf_addc(b, ',') != MCP_OK))
		return MCP_ENOMEM;
	snprintf(num, sizeof(num), "%d", code);
	rc = mcp__buf_adds(b, "\"error\":{\"code\":");
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, num);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, ",\"message\":");
	/* A message cut inside a UTF-8 sequence keeps its readable part. */
	if (rc == MCP_OK)
		rc = mcp__buf_addstr(b, msg, strlen(msg));
	if (rc == MCP_OK && data != NULL) {
		rc = mcp__buf_adds(b, ",\"data\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addjson(b, data);
	}
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, "}}");
	return rc;
}

/* Appends {"jsonrpc":"2.0","method":METHOD[,"params":PARAMS]}. */
int
mcp__rpc_notification(struct buf *b, const char *method, const json_t *params)
{
	if (mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"method\":") != MCP_OK ||
	    mcp__buf_addstr(b, method, strlen(method)) != MCP_OK)
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
	char		 num[24];
	size_t		 n, i;
	uint32_t	 h1 = 2166136261u, h2 = 5381;

	if (json_is_integer(id)) {
		n = mcp__fmt_int(num, (long long)json_integer_value(id));
		if (n + 2 > keylen)
			return MCP_EINVAL;
		key[0] = 'i';
		memcpy(key + 1, num, n + 1);
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
