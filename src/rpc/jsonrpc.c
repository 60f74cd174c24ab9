/*
 * jsonrpc.c: the JSON-RPC 2.0 envelope, which the server and the client
 * share: classifying an incoming message and building outgoing ones
 * (requests, responses, notifications) as compact JSON, the keys that
 * tell ids apart, and the protocol versions both sides speak. Pure: no
 * I/O, no globals, so any thread may call it (workers build their
 * responses here).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"

/* Newest first: an unknown requested version is answered with [0]. */
static const struct {
	const char	*name;
	int		 v;
} versions[] = {
	{ "2025-11-25", MCP_V20251125 },
	{ "2025-06-18", MCP_V20250618 },
	{ "2025-03-26", MCP_V20250326 },
	{ "2024-11-05", MCP_V20241105 },
};

#define NVERSIONS	(sizeof(versions) / sizeof(versions[0]))

int
mcp__version_of(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && i < NVERSIONS; i++)
		if (strcmp(name, versions[i].name) == 0)
			return versions[i].v;
	return 0;
}

const char *
mcp__version_str(int version)
{
	size_t	 i;

	if (version == MCP_V20260728)
		return "2026-07-28";
	for (i = 0; i < NVERSIONS; i++)
		if (versions[i].v == version)
			return versions[i].name;
	return versions[0].name;
}

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
		m->method_len = f->mlen;
		return;
	}
	if (json_is_string(f->id) || json_is_integer(f->id))
		m->id = f->id;		/* integral reals too: mcp__json_id_raw */
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
	m->method_len = f->mlen;
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
		f->mlen = strlen(f->mname);
		f->method = 1;
	} else if (v != NULL)
		f->method = 2;
	v = json_object_get(msg, "id");
	f->has_id = v != NULL;
	f->id = json_incref(v);	/* 2.0 is raw already: json.c message_id */
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
	    mcp__buf_addid(b, id) != MCP_OK ||
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
	    mcp__buf_addid(b, id) != MCP_OK ||
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
 * Appends a request, {"jsonrpc":"2.0","id":ID,"method":METHOD
 * [,"params":PARAMS]}: ID as given, or, when it is NULL, the integer NID.
 * With PROGRESS, the params carry _meta.progressToken = NID, spliced
 * into the text (PARAMS, an object, has no _meta then: the caller sees
 * to that), which costs no object of its own.
 */
int
mcp__rpc_request(struct buf *b, const json_t *id, long long nid,
    const char *method, const json_t *params, int progress)
{
	char	 num[24];
	size_t	 n = mcp__fmt_int(num, nid);

	if (mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") != MCP_OK)
		return MCP_ENOMEM;
	if ((id != NULL ? mcp__buf_addid(b, id) : mcp__buf_add(b, num, n)) !=
	    MCP_OK)
		return MCP_ENOMEM;
	if (mcp__buf_adds(b, ",\"method\":") != MCP_OK ||
	    mcp__buf_addstr(b, method, strlen(method)) != MCP_OK)
		return MCP_ENOMEM;
	if (params == NULL && !progress)
		return mcp__buf_addc(b, '}');
	if (mcp__buf_adds(b, ",\"params\":") != MCP_OK ||
	    (params != NULL ? mcp__buf_addjson(b, params) :
	    mcp__buf_adds(b, "{}")) != MCP_OK)
		return MCP_ENOMEM;
	if (progress) {
		b->len--;		/* the object's '}' */
		if (params != NULL && json_object_size(params) > 0 &&
		    mcp__buf_addc(b, ',') != MCP_OK)
			return MCP_ENOMEM;
		if (mcp__buf_adds(b, "\"_meta\":{\"progressToken\":") !=
		    MCP_OK || mcp__buf_add(b, num, n) != MCP_OK ||
		    mcp__buf_addc(b, '}') != MCP_OK || mcp__buf_addc(b, '}') != MCP_OK)
			return MCP_ENOMEM;
	}
	return mcp__buf_addc(b, '}');
}

/* The key of an integral id written as a real: 2.0 is the id 2. */
static int
real_key(double d, char *key, size_t keylen)
{
	char	 num[40];
	size_t	 n;

	if (d >= -9.2e18 && d <= 9.2e18)
		n = mcp__fmt_int(num, (long long)d);
	else
		n = (size_t)snprintf(num, sizeof(num), "%.17g", d);
	if (n + 2 > keylen)
		return MCP_EINVAL;
	key[0] = 'i';
	memcpy(key + 1, num, n + 1);
	return MCP_OK;
}

/*
 * Writes a key for ID that differs for 1 and "1". Short string ids are
 * kept whole; a long one is folded to its length and two hashes, which
 * is unique enough to tell in-flight ids apart. An integral real (2.0,
 * or one kept as its text) has the key of the integer. Returns
 * MCP_EINVAL for an id that is neither a string nor an integer.
 */
int
mcp__rpc_id_key(const json_t *id, char *key, size_t keylen)
{
	const char	*s;
	char		 num[24];
	size_t		 n, i;
	uint32_t	 h1 = 2166136261u, h2 = 5381;
	double		 d;

	if (json_is_integer(id)) {
		if (keylen >= 22) {	/* 'i', 20 digits and a sign, NUL */
			key[0] = 'i';
			mcp__fmt_int(key + 1,
			    (long long)json_integer_value(id));
			return MCP_OK;
		}
		n = mcp__fmt_int(num, (long long)json_integer_value(id));
		if (n + 2 > keylen)
			return MCP_EINVAL;
		key[0] = 'i';
		memcpy(key + 1, num, n + 1);
		return MCP_OK;
	}
	if (json_is_real(id) && isfinite(json_real_value(id)) &&
	    json_real_value(id) == floor(json_real_value(id)))
		return real_key(json_real_value(id), key, keylen);
	if (!json_is_string(id))
		return MCP_EINVAL;
	s = json_string_value(id);
	n = json_string_length(id);
	if (n > 0 && (unsigned char)s[0] == 0xff) {
		/* An integral id kept as its text (mcp__json_id_raw). */
		if (!mcp__json_integral(s + 1, n - 1, &d))
			return MCP_EINVAL;
		return real_key(d, key, keylen);
	}
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

/* ---- the id of a message too large to parse ----------------------------- */

/*
 * A streaming scan of a message's top-level members, for a message that
 * is refused before it is parsed (over --max-message): what its "id"
 * member holds, so that the error can still be matched to the request,
 * and whether it has a "method" (a notification gets no answer). The
 * scanner sees every byte once and keeps a few of them: JSON's strings,
 * nesting and escapes are tracked, the value of a top-level "id" is
 * copied while it is short enough to be an id.
 */
enum {
	IDS_START,	/* before the opening brace */
	IDS_KEY,	/* in the top-level object, before a key */
	IDS_COLON,	/* after a key */
	IDS_VALUE,	/* after the colon */
	IDS_NEXT,	/* after a value: ',' or '}' */
	IDS_DONE	/* the object ended, or it was not one */
};

void
mcp__idscan_init(struct idscan *sc)
{
	memset(sc, 0, sizeof(*sc));
}

/* A key ended: which one was it? */
static void
idscan_key(struct idscan *sc)
{
	sc->which = 0;
	if (sc->klen == 2 && memcmp(sc->key, "id", 2) == 0)
		sc->which = 1;
	else if (sc->klen == 6 && memcmp(sc->key, "method", 6) == 0)
		sc->which = 2;
}

/* A top-level value ended. */
static void
idscan_value(struct idscan *sc)
{
	if (sc->which == 1) {
		sc->has_id = 1;
		sc->idlen = sc->vover ? 0 : sc->vlen;
		memcpy(sc->id, sc->val, sc->idlen);
	} else if (sc->which == 2)
		sc->has_method = 1;
	sc->vlen = 0;
	sc->vover = 0;
	sc->which = 0;
}

void
mcp__idscan_feed(struct idscan *sc, const char *data, size_t len)
{
	size_t	 i;
	char	 c;

	for (i = 0; i < len && sc->state != IDS_DONE; i++) {
		c = data[i];
		/* Bytes of the top-level id's value are kept. */
		if (sc->state == IDS_VALUE && sc->which == 1 &&
		    (sc->depth > 1 || sc->instr || (c != ',' && c != '}' &&
		    c != ' ' && c != '\t' && c != '\r' && c != '\n'))) {
			if (sc->vlen < sizeof(sc->val))
				sc->val[sc->vlen++] = c;
			else
				sc->vover = 1;
		}
		if (sc->instr) {
			if (sc->esc)
				sc->esc = 0;
			else if (c == '\\')
				sc->esc = 1;
			else if (c == '"')
				sc->instr = 0;
			else if (sc->state == IDS_KEY && sc->depth == 1 &&
			    sc->klen < sizeof(sc->key))
				sc->key[sc->klen++] = c;
			else if (sc->state == IDS_KEY && sc->depth == 1)
				sc->klen = sizeof(sc->key) + 1;	/* too long */
			if (!sc->instr && sc->depth == 1) {
				if (sc->state == IDS_KEY) {
					idscan_key(sc);
					sc->state = IDS_COLON;
				} else if (sc->state == IDS_VALUE)
					sc->state = IDS_NEXT;
			}
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		if (sc->state == IDS_START) {
			sc->state = c == '{' ? IDS_KEY : IDS_DONE;
			sc->depth = 1;
			continue;
		}
		if (c == '"') {
			sc->instr = 1;
			sc->klen = 0;
			continue;
		}
		if (c == '{' || c == '[') {
			sc->depth++;
			continue;
		}
		if (c == '}' || c == ']') {
			if (--sc->depth > 1)
				continue;
			if (sc->depth == 1) {
				sc->state = IDS_NEXT;	/* a nested value ended */
				continue;
			}
			if (sc->state == IDS_VALUE || sc->state == IDS_NEXT)
				idscan_value(sc);
			sc->state = IDS_DONE;
			sc->complete = 1;
			continue;
		}
		if (sc->depth > 1)
			continue;
		if (c == ':' && sc->state == IDS_COLON) {
			sc->state = IDS_VALUE;
			sc->vlen = 0;
			sc->vover = 0;
		} else if (c == ',') {
			if (sc->state == IDS_VALUE || sc->state == IDS_NEXT)
				idscan_value(sc);
			sc->state = IDS_KEY;
		}
		/* Anything else is a number or a word inside a value. */
	}
}

/*
 * The id the scan found: a new reference to a string, an integer or an
 * integral real kept as its text; NULL when there was none that could
 * be an id.
 */
json_t *
mcp__idscan_id(const struct idscan *sc)
{
	struct json_perr e;
	json_t		*v;

	if (!sc->has_id || sc->idlen == 0)
		return NULL;
	v = mcp__json_parse(sc->id, sc->idlen, &e);
	if (json_is_string(v) || json_is_integer(v))
		return v;
	if (json_is_real(v) && mcp__json_integral(sc->id, sc->idlen, NULL)) {
		json_decref(v);
		return mcp__json_id_raw(sc->id, sc->idlen);
	}
	json_decref(v);
	return NULL;
}
