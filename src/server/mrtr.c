/*
 * mrtr.c: multi round-trip requests (MRTR) of protocol 2026-07-28, in
 * which a server has no requests of its own to send: a tools/call,
 * prompts/get or resources/read that needs the client (sampling,
 * elicitation, roots) is answered with an input_required result, and
 * the client retries the same request with its inputResponses and the
 * requestState it was given. Nothing is kept between the two: the retry
 * runs the callback again from the start, and the callback's k-th
 * request to the client is answered there and then from what the retry
 * carries. The first one not answered yet returns MCP_EINPUT at once,
 * and is recorded (with any that follow it), and whatever the callback
 * then sets is dropped: the answer is input_required, with those
 * requests and a new state. Answers of earlier rounds ride inside the
 * state, so that any instance, given the same key, can take the retry.
 * Answers sent with no state, before anything was asked, are taken by
 * the first round's requests whose ids they name. A task of the tasks
 * extension runs the same rounds, its state held in the task (tasks.c).
 *
 * The state is attacker-controlled when it comes back, so it is signed:
 * base64 of HMAC-SHA256 (32 bytes, core/sha256.c) then the JSON it
 * covers, which binds the method, the tool or prompt name or the URI, a
 * hash of the arguments, the principal, an expiry and the requests of
 * the round (their ids, methods and a hash of their params). The key is
 * the server's (--state-key-file, or random per process). Runs on the
 * thread that runs the callback, or finishes a deferred call: whoever
 * holds the call; reads the server only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

/* At most this many requests to the client in one call, all rounds;
 * and this many rounds, those that brought no new answer included. */
#define MRTR_MAX_INPUTS	16
#define MRTR_MAX_ROUNDS	32
#define MAC_LEN		32

/*
 * ANSWERS: [{m, h, r}], the answers so far in the order asked (method,
 * params hash, result); ASKED: [{id, m, h}], the requests pending, in
 * order; REQUESTS: {id: {method, params}}, the same as the client sees
 * them; NEXT: the index of the callback's next request; ROUND: 1 on the
 * first run.
 */
struct mrtr {
	json_t		*loose;		/* inputResponses with no state */
	json_t		*answers;
	json_t		*asked;
	json_t		*requests;
	size_t		 next;
	int		 round;
	char		 key[64];	/* the next request's, or "" */
};

void
mcp__mrtr_free(struct mrtr *m)
{
	if (m == NULL)
		return;
	json_decref(m->loose);
	json_decref(m->answers);
	json_decref(m->asked);
	json_decref(m->requests);
	free(m);
}

static struct mrtr *
mrtr_new(void)
{
	struct mrtr	*m;

	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->answers = json_array();
	m->asked = json_array();
	m->requests = json_object();
	m->round = 1;
	if (m->answers == NULL || m->asked == NULL || m->requests == NULL) {
		mcp__mrtr_free(m);
		return NULL;
	}
	return m;
}

static void
tohex(const unsigned char *d, size_t n, char *out)
{
	static const char	 x[] = "0123456789abcdef";
	size_t			 i;

	for (i = 0; i < n; i++) {
		out[2 * i] = x[d[i] >> 4];
		out[2 * i + 1] = x[d[i] & 15];
	}
	out[2 * n] = '\0';
}

/*
 * SHA-256 of PREFIX and V in a canonical form (compact, sorted keys), in
 * hex into OUT[65]: the same arguments hash the same however the client
 * spaced or ordered them. -1 when out of memory.
 */
static int
hash_json(const char *prefix, const json_t *v, char *out)
{
	struct sha256	 s;
	unsigned char	 d[32];
	char		*text;

	text = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
	    JSON_ENCODE_ANY) : NULL;
	if (v != NULL && text == NULL)
		return -1;
	mcp__sha256_init(&s);
	mcp__sha256_update(&s, prefix, strlen(prefix) + 1);
	if (text != NULL)
		mcp__sha256_update(&s, text, strlen(text));
	mcp__sha256_final(&s, d);
	free(text);
	tohex(d, sizeof(d), out);
	return 0;
}

/* The hash of C's arguments, read in place or not; -1 out of memory. */
static int
args_hash(struct mcp_call *c, char *out)
{
	if (c->flat != NULL && mcp__call_args(c) == NULL)
		return -1;
	return hash_json("arguments", c->args, out);
}

static const char *
method_of(const struct mcp_call *c)
{
	return c->kind == CALL_TOOL ? "tools/call" : c->kind == CALL_PROMPT ?
	    "prompts/get" : "resources/read";
}

static const char *
name_of(const struct mcp_call *c)
{
	const char	*n;

	n = c->kind == CALL_TOOL ? c->tool->name : c->kind == CALL_PROMPT ?
	    c->pname : c->uri;
	return n != NULL ? n : "";
}

static const char *
principal(const struct mcp_call *c)
{
	return c->ident != NULL && c->ident->subject != NULL ?
	    c->ident->subject : "";
}

static long long
now_ms(void)
{
	struct timespec	 ts;

	/* Wall-clock: another instance checks the expiry. */
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The most bytes a requestState may have, either way. */
static size_t
state_max(const struct mcp_server *srv)
{
	return srv->max_message / 2;
}

int
mcp__mrtr_round(const struct mcp_call *c)
{
	return c->mrtr != NULL ? c->mrtr->round : 1;
}

static int
refuse(struct mcp_call *c, const char *why)
{
	char	 msg[200];

	snprintf(msg, sizeof(msg), "%s: %s", method_of(c), why);
	MCP_LOG(MCP_LOG_INFO, "%s", msg);
	mcp_result_rpc_error(c, MCP_RPC_INVALID_PARAMS, msg);
	return -1;
}

/*
 * Checks the state S (a string of LEN bytes): its MAC, its form, its
 * bindings and its expiry. Returns the JSON it carries (a new
 * reference), or NULL with C's error set.
 */
static json_t *
verify(struct mcp_call *c, const char *s, size_t len)
{
	struct mcp_server	*srv = c->srv;
	unsigned char		 mac[MAC_LEN];
	json_error_t		 je;
	json_t			*st, *x;
	char			*raw, why[160], h[65];
	const char		*v;
	size_t			 rawlen;

	if (len > state_max(srv)) {
		snprintf(why, sizeof(why), "requestState is too large (%zu "
		    "bytes; the most is %zu)", len, state_max(srv));
		refuse(c, why);
		return NULL;
	}
	raw = mcp__base64_decode(s, len, &rawlen);
	if (raw == NULL) {
		refuse(c, "requestState is malformed (not base64)");
		return NULL;
	}
	if (rawlen <= MAC_LEN) {
		free(raw);
		refuse(c, "requestState is malformed (too short)");
		return NULL;
	}
	mcp__hmac_sha256(srv->state_key, sizeof(srv->state_key),
	    raw + MAC_LEN, rawlen - MAC_LEN, mac);
	if (!mcp__ct_equal(mac, raw, MAC_LEN)) {
		free(raw);
		refuse(c, "requestState failed its integrity check (altered, "
		    "or issued by a server with another key: "
		    "--state-key-file)");
		return NULL;
	}
	st = json_loadb(raw + MAC_LEN, rawlen - MAC_LEN, JSON_REJECT_DUPLICATES,
	    &je);
	free(raw);
	if (!json_is_object(st) || !json_is_integer(json_object_get(st,
	    "v")) || json_integer_value(json_object_get(st, "v")) != 1 ||
	    !json_is_array(json_object_get(st, "d")) ||
	    !json_is_array(json_object_get(st, "q")) ||
	    !json_is_integer(json_object_get(st, "r"))) {
		json_decref(st);
		refuse(c, "requestState is malformed (not a state of this "
		    "server's version)");
		return NULL;
	}
	v = json_string_value(json_object_get(st, "m"));
	if (v == NULL || strcmp(v, method_of(c)) != 0) {
		json_decref(st);
		refuse(c, "requestState was issued for another method");
		return NULL;
	}
	v = json_string_value(json_object_get(st, "n"));
	if (v == NULL || strcmp(v, name_of(c)) != 0) {
		json_decref(st);
		refuse(c, c->kind == CALL_TOOL ? "requestState was issued for "
		    "another tool" : c->kind == CALL_PROMPT ? "requestState "
		    "was issued for another prompt" : "requestState was "
		    "issued for another resource");
		return NULL;
	}
	v = json_string_value(json_object_get(st, "a"));
	if (args_hash(c, h) != 0) {
		json_decref(st);
		mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return NULL;
	}
	if (v == NULL || strcmp(v, h) != 0) {
		json_decref(st);
		refuse(c, "requestState was issued for other arguments");
		return NULL;
	}
	v = json_string_value(json_object_get(st, "p"));
	if (v == NULL || strcmp(v, principal(c)) != 0) {
		json_decref(st);
		refuse(c, "requestState was issued to another principal");
		return NULL;
	}
	if (json_integer_value(json_object_get(st, "r")) >= MRTR_MAX_ROUNDS) {
		json_decref(st);
		snprintf(why, sizeof(why), "requestState has had too many "
		    "rounds (%d); send the request again without it",
		    MRTR_MAX_ROUNDS);
		refuse(c, why);
		return NULL;
	}
	/* A task's state waits in the task for as long as the task is
	 * kept (--task-ttl), however long the client takes to answer. */
	x = json_object_get(st, "x");
	if (!json_is_integer(x) || (!c->resumed &&
	    json_integer_value(x) < now_ms())) {
		json_decref(st);
		refuse(c, "requestState has expired; send the request again "
		    "without it");
		return NULL;
	}
	return st;
}

int
mcp__mrtr_begin(struct mcp_call *c, const json_t *state, const json_t *resp)
{
	struct mrtr	*m;
	json_t		*st, *q, *e, *r, *entry;
	const char	*id;
	size_t		 i;
	char		 why[200];

	if (state == NULL && resp == NULL)
		return 0;		/* the first round: nothing to do */
	if (state != NULL && !json_is_string(state))
		return refuse(c, "requestState must be a string");
	if (resp != NULL && !json_is_object(resp))
		return refuse(c, "inputResponses must be an object");
	if (state == NULL) {
		/* Answers given before anything was asked (SEP-2322 lets a
		 * client): each is taken by the first round's request whose
		 * key it names, if it is an object; the rest ignored. */
		if ((m = mrtr_new()) == NULL) {
			mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
			return -1;
		}
		m->loose = json_incref((json_t *)resp);
		c->mrtr = m;
		return 0;
	}
	st = verify(c, json_string_value(state), json_string_length(state));
	if (st == NULL)
		return -1;
	m = mrtr_new();
	if (m == NULL) {
		json_decref(st);
		mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return -1;
	}
	if (json_array_extend(m->answers, json_object_get(st, "d")) != 0) {
		json_decref(st);
		mcp__mrtr_free(m);
		mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return -1;
	}
	m->round = (int)json_integer_value(json_object_get(st, "r")) + 1;
	/*
	 * This round's answers, in the order asked, up to the first one
	 * missing: the callback asks that one again (and those after it),
	 * as the spec wants a missing answer asked for again.
	 */
	q = json_object_get(st, "q");
	json_array_foreach(q, i, e) {
		id = json_string_value(json_object_get(e, "id"));
		r = id != NULL ? json_object_get(resp, id) : NULL;
		if (r == NULL)
			break;
		if (!json_is_object(r)) {
			snprintf(why, sizeof(why), "inputResponses[\"%.60s\"] "
			    "must be an object (the client's result)", id);
			json_decref(st);
			mcp__mrtr_free(m);
			return refuse(c, why);
		}
		entry = json_pack("{s:O, s:O, s:O}", "m", json_object_get(e,
		    "m"), "h", json_object_get(e, "h"), "r", r);
		if (entry == NULL || json_array_append_new(m->answers,
		    entry) != 0) {
			json_decref(st);
			mcp__mrtr_free(m);
			mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
			return -1;
		}
	}
	json_decref(st);
	c->mrtr = m;
	return 0;
}

int
mcp__mrtr_ask(struct mcp_call *c, const char *method, json_t *params,
    json_t **result)
{
	struct mrtr	*m = c->mrtr;
	json_t		*a, *req;
	const char	*am, *ah;
	char		 h[65], id[64];
	size_t		 k, j;

	*result = NULL;
	if (m == NULL) {
		m = c->mrtr = mrtr_new();
		if (m == NULL) {
			json_decref(params);
			return MCP_ENOMEM;
		}
	}
	if (hash_json(method, params, h) != 0) {
		json_decref(params);
		return MCP_ENOMEM;
	}
	k = m->next++;
	a = json_array_get(m->answers, k);
	if (a != NULL && json_array_size(m->asked) == 0) {
		/* Answered, if it is the same question as then: a callback
		 * that asks otherwise this time is asked anew from here. */
		am = json_string_value(json_object_get(a, "m"));
		ah = json_string_value(json_object_get(a, "h"));
		if (am != NULL && ah != NULL && strcmp(am, method) == 0 &&
		    strcmp(ah, h) == 0) {
			json_decref(params);
			*result = json_deep_copy(json_object_get(a, "r"));
			return *result != NULL ? MCP_OK : MCP_ENOMEM;
		}
		MCP_LOG(MCP_LOG_INFO, "%s: request %zu to the client differs "
		    "from the one answered; asking again", method_of(c), k + 1);
	}
	/* Answers past the first unanswered request are not used. */
	while (json_array_size(m->answers) > k)
		json_array_remove(m->answers, json_array_size(m->answers) - 1);
	if (k >= MRTR_MAX_INPUTS) {
		json_decref(params);
		MCP_LOG(MCP_LOG_INFO, "%s: %s not asked: more than %d requests "
		    "to the client in one call", method_of(c), method,
		    MRTR_MAX_INPUTS);
		return MCP_ESTATE;
	}
	/* The callback's own key (mcp_call_input_key), if it is not in
	 * this round already; the library's "input-K" otherwise. */
	if (m->key[0] != '\0' && json_object_get(m->requests, m->key) ==
	    NULL)
		snprintf(id, sizeof(id), "%s", m->key);
	else {
		snprintf(id, sizeof(id), "input-%zu", k + 1);
		for (j = 2; json_object_get(m->requests, id) != NULL; j++)
			snprintf(id, sizeof(id), "input-%zu-%zu", k + 1, j);
	}
	m->key[0] = '\0';
	/* Answered before it was asked, under the key it gets (round 1,
	 * nothing outstanding yet): as if from a state. */
	a = m->loose != NULL && json_array_size(m->asked) == 0 ?
	    json_object_get(m->loose, id) : NULL;
	if (json_is_object(a)) {
		*result = json_deep_copy(a);
		if (*result == NULL || json_array_append_new(m->answers,
		    json_pack("{s:s, s:s, s:O}", "m", method, "h", h, "r",
		    a)) != 0) {
			json_decref(*result);
			*result = NULL;
			json_decref(params);
			return MCP_ENOMEM;
		}
		json_object_del(m->loose, id);
		json_decref(params);
		return MCP_OK;
	}
	req = params != NULL ? json_pack("{s:s, s:o}", "method", method,
	    "params", params) : json_pack("{s:s, s:{}}", "method", method,
	    "params");
	if (req == NULL || json_object_set_new(m->requests, id, req) != 0 ||
	    json_array_append_new(m->asked, json_pack("{s:s, s:s, s:s}",
	    "id", id, "m", method, "h", h)) != 0) {
		json_object_del(m->requests, id);
		return MCP_ENOMEM;
	}
	MCP_LOG(MCP_LOG_DEBUG, "%s: %s becomes %s of an input_required "
	    "result", method_of(c), method, id);
	return MCP_EINPUT;
}

int
mcp__mrtr_pending(const struct mcp_call *c)
{
	return c->mrtr != NULL && json_array_size(c->mrtr->asked) > 0;
}

/* The signed state for C's answer: a new string, or NULL. */
static char *
sign(struct mcp_call *c, size_t *len)
{
	struct mcp_server	*srv = c->srv;
	struct mrtr		*m = c->mrtr;
	struct buf		 b = { 0 };
	unsigned char		 mac[MAC_LEN];
	json_t			*st;
	char			 h[65], *text, *out;

	if (args_hash(c, h) != 0)
		return NULL;
	st = json_pack("{s:i, s:s, s:s, s:s, s:s, s:I, s:i, s:O, s:O}", "v", 1,
	    "m", method_of(c), "n", name_of(c), "a", h, "p", principal(c),
	    "x", (json_int_t)(now_ms() + (long long)srv->state_ttl * 1000),
	    "r", m->round, "d", m->answers, "q", m->asked);
	text = st != NULL ? json_dumps(st, JSON_COMPACT) : NULL;
	json_decref(st);
	if (text == NULL)
		return NULL;
	mcp__hmac_sha256(srv->state_key, sizeof(srv->state_key), text,
	    strlen(text), mac);
	out = NULL;
	if (mcp__buf_add(&b, (const char *)mac, sizeof(mac)) == MCP_OK &&
	    mcp__buf_add(&b, text, strlen(text)) == MCP_OK)
		out = mcp__base64(b.data, b.len);
	mcp__buf_free(&b);
	free(text);
	if (out != NULL)
		*len = strlen(out);
	return out;
}

int
mcp__mrtr_write(struct mcp_call *c, struct buf *b)
{
	json_t	*res;
	char	*state, msg[160];
	size_t	 len = 0;
	int	 rc;

	state = sign(c, &len);
	if (state == NULL)
		return MCP_ENOMEM;
	if (len > state_max(c->srv)) {
		/* The client could not send it back: say so, not later. */
		free(state);
		snprintf(msg, sizeof(msg), "%s: the requestState would be %zu "
		    "bytes, over the %zu that --max-message allows it",
		    method_of(c), len, state_max(c->srv));
		mcp_log(MCP_LOG_WARN, "%s", msg);
		/* Counted as the error it is, not as what was dropped. */
		c->is_error = 0;
		c->rpc_code = MCP_RPC_INTERNAL_ERROR;
		return mcp__rpc_error(b, c->id, MCP_RPC_INTERNAL_ERROR, msg,
		    NULL);
	}
	res = json_pack("{s:O, s:s}", "inputRequests", c->mrtr->requests,
	    "requestState", state);
	free(state);
	rc = mcp__era_result(c->srv, res, ERA_CACHE_NONE);
	if (rc == MCP_OK && json_object_set_new(res, "resultType",
	    json_string("input_required")) != 0)
		rc = MCP_ENOMEM;
	if (rc == MCP_OK)
		rc = mcp__rpc_result(b, c->id, res);
	json_decref(res);
	if (rc == MCP_OK) {
		/* What the callback set was dropped: no isError to count. */
		c->dressed = 1;
		c->is_error = 0;
		c->rpc_code = 0;
	}
	return rc;
}

int
mcp_call_input_key(mcp_call *call, const char *key)
{
	size_t	 i, n;

	if (call == NULL || key == NULL)
		return MCP_EINVAL;
	n = strlen(key);
	if (n == 0 || n >= sizeof(call->mrtr->key))
		return MCP_EINVAL;
	for (i = 0; i < n; i++)
		if ((unsigned char)key[i] < 0x21 ||
		    (unsigned char)key[i] > 0x7e)
			return MCP_EINVAL;
	if (call->version != MCP_V20260728)
		return MCP_OK;		/* a legacy session: no keys */
	if (call->mrtr == NULL && (call->mrtr = mrtr_new()) == NULL)
		return MCP_ENOMEM;
	memcpy(call->mrtr->key, key, n + 1);
	return MCP_OK;
}

int
mcp_call_round(mcp_call *call)
{
	if (call == NULL)
		return 0;
	return mcp__mrtr_round(call);
}
