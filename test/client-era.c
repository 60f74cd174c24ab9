/*
 * client-era.c: the C client (mcp_client_*) in one protocol era against
 * one real server, for test/client-era.sh, which runs it once per
 * server, transport and era and renumbers its TAP:
 *
 *   client-era [-p PROTOCOL] [-e ERA] [-n NAME] [-k KIND] [-m] [-s TEXT]
 *              [-t PROBE-TIMEOUT] (-u URL | -- COMMAND [ARGS...])
 *
 * PROTOCOL is the client's option "protocol" (unset: its auto); ERA
 * the version mcp_client_protocol must say after connecting; NAME the
 * serverInfo name. KIND says what the server offers: demo (mcp-demo),
 * conformance (examples/conformance-server.c), sdk (the TypeScript
 * SDK's test/node/peer-server.mjs; sdk-stateless: its --stateless
 * mode, which sends no requests of its own), or fail: connecting must fail, with
 * TEXT in mcp_client_error; mrtr (the mrtr branch's test/mrtr-server.c:
 * requests of several rounds, two in a round, roots, a prompt and a
 * resource that ask); feat (build/feat-server; feat-http: over
 * HTTP): routed's Mcp-Param-* headers (the trace counts the tools/list
 * and tools/call sent), subscribe, touch, add_tool, unsubscribe; badxh
 * (quirk-server's badxh): tools with bad x-mcp-header left out.
 * -m: the server answers sampling and
 * elicitation in 2026-07-28 with input_required (MRTR); the same
 * handlers answer them as answer the legacy era's requests. -t: the
 * option probe-timeout, and connecting must take that long (a server
 * that does not answer the probe).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mcp.h>

#include "tap.h"

static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static int		 nprogress;
static int		 nlog;
static int		 nsampled;
static int		 nelicited;
static int		 nupdated;	/* resources/updated for WATCHED */
static int		 nchanged;	/* tools/list_changed */
static int		 ntagged;	/* of those, with a subscriptionId */
static int		 nlisted;	/* tools/list sent (the trace) */
static int		 ncalled;	/* tools/call sent */
static int		 nrawupd;	/* resources/updated received */
#define WATCHED	"test://static-text"
static const char	*era;
static const char	*name;
static int		 modern;

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
on_progress(mcp_client *c, long long id, double done, double total,
    const char *msg, void *udata)
{
	(void)c, (void)id, (void)done, (void)total, (void)msg, (void)udata;
	pthread_mutex_lock(&lock);
	nprogress++;
	pthread_mutex_unlock(&lock);
}

static void
on_notify(mcp_client *c, const char *method, json_t *params, void *udata)
{
	const char	*uri = json_string_value(json_object_get(params,
	    "uri"));
	int		 tagged = json_is_integer(json_object_get(
	    json_object_get(params, "_meta"),
	    "io.modelcontextprotocol/subscriptionId"));

	(void)c, (void)udata;
	pthread_mutex_lock(&lock);
	if (strcmp(method, "notifications/message") == 0)
		nlog++;
	if (strcmp(method, "notifications/resources/updated") == 0 &&
	    uri != NULL && strcmp(uri, WATCHED) == 0) {
		nupdated++;
		ntagged += tagged;
	}
	if (strcmp(method, "notifications/tools/list_changed") == 0) {
		nchanged++;
		ntagged += tagged;
	}
	pthread_mutex_unlock(&lock);
}

/* Counts the tools/list and tools/call messages the client sends. */
static void
on_trace(mcp_client *c, int out, const char *json, size_t len, void *udata)
{
	(void)c, (void)udata;
	pthread_mutex_lock(&lock);
	if (!out && memmem(json, len, "notifications/resources/updated",
	    31) != NULL)
		nrawupd++;
	pthread_mutex_unlock(&lock);
	if (!out)
		return;
	pthread_mutex_lock(&lock);
	if (memmem(json, len, "\"method\":\"tools/list\"", 20) != NULL)
		nlisted++;
	if (memmem(json, len, "\"method\":\"tools/call\"", 20) != NULL)
		ncalled++;
	pthread_mutex_unlock(&lock);
}

/* The user's handlers: one code for both eras (server requests in the
 * legacy one, inputRequests in 2026-07-28). */
static void
on_sampling(mcp_client *c, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	json_t		*m = json_array_get(json_object_get(params, "messages"),
	    0);
	const char	*text = json_string_value(json_object_get(
	    json_object_get(m, "content"), "text"));
	char		 out[200];

	(void)c, (void)method, (void)udata;
	pthread_mutex_lock(&lock);
	nsampled++;
	pthread_mutex_unlock(&lock);
	snprintf(out, sizeof(out), "sampled: %.150s", text != NULL ? text :
	    "");
	(void)mcp_client_reply_result(reply, json_pack("{s:s, s:{s:s, s:s}, "
	    "s:s, s:s}", "role", "assistant", "content", "type", "text",
	    "text", out, "model", "client-era", "stopReason", "endTurn"));
}

static void
on_elicit(mcp_client *c, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	json_t		*props, *p, *content = json_object();
	const char	*k, *t;

	(void)c, (void)method, (void)udata;
	pthread_mutex_lock(&lock);
	nelicited++;
	pthread_mutex_unlock(&lock);
	props = json_object_get(json_object_get(params, "requestedSchema"),
	    "properties");
	json_object_foreach(props, k, p) {
		t = json_string_value(json_object_get(p, "type"));
		if (t != NULL && strcmp(t, "boolean") == 0)
			json_object_set_new(content, k, json_true());
		else if (t != NULL && (strcmp(t, "number") == 0 ||
		    strcmp(t, "integer") == 0))
			json_object_set_new(content, k, json_integer(7));
		else
			json_object_set_new(content, k, json_string("era"));
	}
	(void)mcp_client_reply_result(reply, json_pack("{s:s, s:o}", "action",
	    "accept", "content", content));
}

static const char *
text_of(json_t *result)
{
	json_t	*c = json_array_get(json_object_get(result, "content"), 0);

	return json_string_value(json_object_get(c, "text"));
}

/*
 * What every result of the era shows: in 2026-07-28 resultType
 * "complete" and _meta's serverInfo with the server's name, in the
 * legacy ones no resultType at all.
 */
static void
era_shape(json_t *res, const char *what)
{
	json_t	*info = json_object_get(json_object_get(res, "_meta"),
	    "io.modelcontextprotocol/serverInfo");

	if (modern) {
		is_str(json_string_value(json_object_get(res, "resultType")),
		    "complete", "%s: resultType complete", what);
		is_str(json_string_value(json_object_get(info, "name")), name,
		    "%s: _meta serverInfo names the server", what);
	} else {
		ok(json_object_get(res, "resultType") == NULL && info == NULL,
		    "%s: a legacy result (no resultType, no serverInfo)",
		    what);
	}
}

static int
counter(int *p)
{
	int	 n;

	pthread_mutex_lock(&lock);
	n = *p;
	pthread_mutex_unlock(&lock);
	return n;
}

/* Waits up to a second for late notifications to come in. */
static int
settle(int *p, int want)
{
	double	 until = now() + 1;

	while (counter(p) < want && now() < until)
		usleep(10000);
	return counter(p);
}

struct async_one {
	pthread_mutex_t	 m;
	int		 done;
	int		 rc;
	double		 at;
};

static void
async_cb(mcp_client *c, int rc, json_t *result, void *udata)
{
	struct async_one	*a = udata;

	(void)c, (void)result;
	pthread_mutex_lock(&a->m);
	a->done = 1;
	a->rc = rc;
	a->at = now();
	pthread_mutex_unlock(&a->m);
}

static void
common(mcp_client *c)
{
	json_t	*res = NULL, *tools = NULL;
	int	 rc;

	is_str(mcp_client_protocol(c), era, "the protocol is %s", era);
	is_str(json_string_value(json_object_get(mcp_client_server_info(c),
	    "name")), name, "serverInfo names %s", name);
	ok(json_is_object(json_object_get(mcp_client_server_capabilities(c),
	    "tools")), "the server's capabilities offer tools");
	rc = mcp_client_request_new(c, "tools/list", json_object(), &res);
	is_int(rc, MCP_OK, "tools/list");
	ok(json_array_size(json_object_get(res, "tools")) > 0,
	    "tools/list: tools");
	era_shape(res, "tools/list");
	if (modern)
		ok(json_is_integer(json_object_get(res, "ttlMs")),
		    "tools/list: ttlMs");
	json_decref(res);
	rc = mcp_client_list_tools(c, &tools);
	ok(rc == MCP_OK && json_array_size(tools) > 0,
	    "mcp_client_list_tools");
	json_decref(tools);
	is_int(mcp_client_ping(c), MCP_OK, "ping (2026-07-28: server/discover)");
	/* An unknown method: -32601 (over HTTP in 2026-07-28, with 404). */
	rc = mcp_client_request_new(c, "nonesuch/method", json_object(),
	    &res);
	ok(rc == MCP_ESERVER && json_integer_value(json_object_get(res,
	    "code")) == -32601, "an unknown method: -32601 (%lld)",
	    (long long)json_integer_value(json_object_get(res, "code")));
	json_decref(res);
}

static void
cancel(mcp_client *c)
{
	struct async_one	 a = { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0 };
	json_t			*res = NULL;
	long long		 id;
	double			 t0;
	int			 rc, done;

	rc = mcp_client_request_async_new(c, "tools/call", json_pack(
	    "{s:s, s:{s:i}}", "name", "sleep", "arguments", "ms", 20000),
	    async_cb, &a, &id);
	is_int(rc, MCP_OK, "a long call started");
	usleep(300000);
	t0 = now();
	(void)mcp_client_cancel(c, id, "client-era");
	while (now() < t0 + 2) {
		pthread_mutex_lock(&a.m);
		done = a.done;
		pthread_mutex_unlock(&a.m);
		if (done)
			break;
		usleep(10000);
	}
	ok(a.done && a.rc == MCP_ECANCELED && a.at - t0 < 1,
	    "a cancel ends the call at once (rc %d)", a.rc);
	rc = mcp_client_call_tool_new(c, "echo", json_pack("{s:s}", "text",
	    "after"), &res);
	ok(rc == MCP_OK && text_of(res) != NULL &&
	    strcmp(text_of(res), "after") == 0, "a call after the cancel");
	json_decref(res);
}

static void
demo(mcp_client *c)
{
	json_t		*res = NULL, *code;
	const char	*t;
	int		 rc, n0;

	rc = mcp_client_call_tool_new(c, "echo", json_pack("{s:s}", "text",
	    "h\xc3\xa9llo w\xc3\xb6rld"), &res);
	is_int(rc, MCP_OK, "tools/call echo");
	is_str(text_of(res), "h\xc3\xa9llo w\xc3\xb6rld", "echo's text");
	era_shape(res, "tools/call");
	json_decref(res);
	/* Names that Mcp-Name must carry in base64: the server decodes
	 * them, so that the body's name is the one looked up. */
	rc = mcp_client_call_tool_new(c, "n\xc3\xb6ne such", json_object(),
	    &res);
	code = json_object_get(res, "code");
	ok(rc == MCP_ESERVER && json_integer_value(code) == -32602,
	    "a non-ASCII unknown tool: -32602, not a header mismatch (%lld)",
	    (long long)json_integer_value(code));
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "=?base64?eA==?=", json_object(),
	    &res);
	code = json_object_get(res, "code");
	ok(rc == MCP_ESERVER && json_integer_value(code) == -32602,
	    "a tool named like the base64 form: -32602 (%lld)",
	    (long long)json_integer_value(code));
	json_decref(res);
	rc = mcp_client_call_tool_new(c, " padded ", json_object(), &res);
	code = json_object_get(res, "code");
	ok(rc == MCP_ESERVER && json_integer_value(code) == -32602,
	    "a tool name with spaces at its ends: -32602 (%lld)",
	    (long long)json_integer_value(code));
	json_decref(res);
	rc = mcp_client_read_resource(c, "demo://readme", &res);
	is_int(rc, MCP_OK, "resources/read");
	t = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "contents"), 0), "text"));
	ok(t != NULL && strlen(t) > 0, "resources/read: text");
	era_shape(res, "resources/read");
	if (modern)
		is_str(json_string_value(json_object_get(res, "cacheScope")),
		    "private", "resources/read: cacheScope");
	json_decref(res);
	rc = mcp_client_read_resource(c, "demo://greeting/Zo\xc3\xab", &res);
	t = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "contents"), 0), "text"));
	ok(rc == MCP_OK && t != NULL && strstr(t, "Zo\xc3\xab") != NULL,
	    "resources/read of a non-ASCII URI (Mcp-Name in base64)");
	json_decref(res);
	rc = mcp_client_get_prompt_new(c, "review", json_pack("{s:s}",
	    "language", "c"), &res);
	is_int(rc, MCP_OK, "prompts/get");
	ok(json_array_size(json_object_get(res, "messages")) > 0,
	    "prompts/get: messages");
	era_shape(res, "prompts/get");
	json_decref(res);
	n0 = counter(&nprogress);
	rc = mcp_client_call_tool_new(c, "sleep", json_pack("{s:i}", "ms",
	    400), &res);
	ok(rc == MCP_OK && settle(&nprogress, n0 + 1) > n0,
	    "progress notifications reach the handler (%d)",
	    counter(&nprogress) - n0);
	json_decref(res);
	cancel(c);
}

/* test_tool_with_logging, with the log level LEVEL (NULL: none set);
 * the log messages that came. */
static int
logs(mcp_client *c, const char *level)
{
	json_t	*res = NULL;
	int	 n0, rc;

	if (level != NULL)
		is_int(mcp_client_set_log_level(c, level), MCP_OK,
		    "log level %s", level);
	n0 = counter(&nlog);
	rc = mcp_client_call_tool_new(c, "test_tool_with_logging",
	    json_object(), &res);
	ok(rc == MCP_OK && !json_is_true(json_object_get(res, "isError")),
	    "test_tool_with_logging%s%s", level != NULL ? " at " : "",
	    level != NULL ? level : "");
	json_decref(res);
	usleep(200000);
	return counter(&nlog) - n0;
}

static void
conformance(mcp_client *c, int mrtr)
{
	json_t		*res = NULL;
	const char	*t;
	int		 rc, n, n0;

	if (modern)
		is_int(logs(c, NULL), 0, "2026-07-28: no log level, no log "
		    "messages");
	n = logs(c, "info");
	ok(n >= 1, "log messages at info (%d)", n);
	is_int(logs(c, "error"), 0, "none at error");
	n0 = counter(&nprogress);
	rc = mcp_client_call_tool_new(c, "test_tool_with_progress",
	    json_object(), &res);
	is_int(rc, MCP_OK, "test_tool_with_progress");
	era_shape(res, "test_tool_with_progress");
	is_int(settle(&nprogress, n0 + 3) - n0, 3, "its 3 progress "
	    "notifications");
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "test_simple_text", json_object(),
	    &res);
	ok(rc == MCP_OK && text_of(res) != NULL, "test_simple_text");
	json_decref(res);
	rc = mcp_client_read_resource(c, "test://static-text", &res);
	ok(rc == MCP_OK, "resources/read test://static-text");
	era_shape(res, "resources/read");
	json_decref(res);
	rc = mcp_client_get_prompt_new(c, "test_simple_prompt", json_object(),
	    &res);
	ok(rc == MCP_OK, "prompts/get test_simple_prompt");
	era_shape(res, "prompts/get");
	json_decref(res);
	if (modern && !mrtr)
		return;
	/* The same handlers in both eras. */
	n0 = counter(&nsampled);
	rc = mcp_client_call_tool_new(c, "test_sampling", json_pack("{s:s}",
	    "prompt", "capital of France?"), &res);
	t = text_of(res);
	ok(rc == MCP_OK && t != NULL && strstr(t, "sampled: capital of "
	    "France?") != NULL && counter(&nsampled) == n0 + 1,
	    "test_sampling: the handler's answer is in the result (%s)",
	    t != NULL ? t : "none");
	if (modern)
		era_shape(res, "test_sampling");
	json_decref(res);
	n0 = counter(&nelicited);
	rc = mcp_client_call_tool_new(c, "test_elicitation", json_pack(
	    "{s:s}", "message", "who?"), &res);
	t = text_of(res);
	ok(rc == MCP_OK && t != NULL && strstr(t, "action=accept") != NULL &&
	    counter(&nelicited) == n0 + 1,
	    "test_elicitation: accepted (%s)", t != NULL ? t : "none");
	json_decref(res);
}

/* The mrtr branch's test/mrtr-server: each round of a callback's
 * requests comes back as input_required, answered here, round after
 * round, by the same handlers; roots from mcp_client_set_roots_new. */
static void
mrtr_server(mcp_client *c)
{
	json_t		*res = NULL;
	const char	*t;
	int		 rc, e0, s0;

	e0 = counter(&nelicited);
	s0 = counter(&nsampled);
	rc = mcp_client_call_tool_new(c, "ask_twice", json_pack("{s:s}",
	    "greeting", "hello"), &res);
	t = text_of(res);
	ok(rc == MCP_OK && t != NULL && strstr(t, "name=era, model=sampled: "
	    "hello era") != NULL, "ask_twice: an elicitation, then a "
	    "sampling that uses its answer (%s)", t != NULL ? t : "none");
	ok(counter(&nelicited) > e0 && counter(&nsampled) > s0,
	    "ask_twice: both handlers ran");
	era_shape(res, "ask_twice");
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "both", json_object(), &res);
	t = text_of(res);
	is_str(rc == MCP_OK ? t : NULL, "elicit=accept roots=2",
	    "both: an elicitation and the roots in one round");
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "many", json_pack("{s:i}", "n", 16),
	    &res);
	t = text_of(res);
	ok(rc == MCP_OK && t != NULL && strstr(t, "answered 16 of 16") !=
	    NULL, "many: 16 rounds, the most the client takes (%s)",
	    t != NULL ? t : "none");
	json_decref(res);
	rc = mcp_client_get_prompt_new(c, "ask_prompt", json_object(), &res);
	ok(rc == MCP_OK && json_array_size(json_object_get(res,
	    "messages")) > 0, "ask_prompt: prompts/get by rounds");
	era_shape(res, "ask_prompt");
	json_decref(res);
	rc = mcp_client_read_resource(c, "mrtr://roots", &res);
	t = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "contents"), 0), "text"));
	ok(rc == MCP_OK && t != NULL && strstr(t, "file:///era/two") != NULL,
	    "mrtr://roots: resources/read by rounds, the roots set (%s)",
	    t != NULL ? t : "none");
	json_decref(res);
}

/* STATELESS: the server cannot send requests of its own (no session). */
static void
sdk(mcp_client *c, int stateless)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_client_call_tool_new(c, "echo", json_pack("{s:s}", "text",
	    "hi"), &res);
	ok(rc == MCP_OK && text_of(res) != NULL && strstr(text_of(res),
	    "hi") != NULL, "tools/call echo (%s)", text_of(res) != NULL ?
	    text_of(res) : "none");
	era_shape(res, "tools/call");
	json_decref(res);
	if (stateless)
		return;
	rc = mcp_client_call_tool_new(c, "sample", json_pack("{s:s}",
	    "prompt", "yes?"), &res);
	ok(rc == MCP_OK && text_of(res) != NULL && strstr(text_of(res),
	    "sampled: yes?") != NULL, "the server's sampling request, "
	    "answered by the handler (%s)", text_of(res) != NULL ?
	    text_of(res) : "none");
	json_decref(res);
}

/* routed's answer to ARGS (taken), and how many tools/list and tools/call
 * went out for it. */
static void
call_routed(mcp_client *c, json_t *args, const char *want, int lists,
    const char *what)
{
	json_t	*res = NULL;
	int	 rc, l0 = counter(&nlisted), c0 = counter(&ncalled);
	char	 text[200];

	rc = mcp_client_call_tool_new(c, "routed", args, &res);
	snprintf(text, sizeof(text), "routed to %s", want);
	ok(rc == MCP_OK && text_of(res) != NULL && strcmp(text_of(res),
	    text) == 0, "routed, %s: \"%s\" (rc %d: %s)", what, text, rc,
	    rc == MCP_OK ? text_of(res) : json_string_value(json_object_get(
	    res, "message")));
	is_int(counter(&nlisted) - l0, lists, "routed, %s: %d tools/list "
	    "before it", what, lists);
	is_int(counter(&ncalled) - c0, lists + 1, "routed, %s: %d tools/call",
	    what, lists + 1);
	json_decref(res);
}

/* feat-server: x-mcp-header (Mcp-Param-*) and subscriptions. HTTP says
 * whether the transport is Streamable HTTP (the headers go there only;
 * the server checks them, -32020 when one is missing or wrong). */
static void
feat(mcp_client *c, int http)
{
	json_t	*tools = NULL, *t, *res = NULL;
	size_t	 i;
	int	 found = 0, rc, n, raw;

	is_str(mcp_client_protocol(c), era, "the protocol is %s", era);
	/* Not listed yet: over HTTP in 2026-07-28, -32020, a listing and
	 * one retry; elsewhere no headers are asked for. */
	call_routed(c, json_pack("{s:s, s:{s:i, s:b}}", "region", "eu-west",
	    "opts", "n", 3, "flag", 1), "eu-west", modern && http ? 1 : 0,
	    "before any listing");
	rc = mcp_client_list_tools(c, &tools);
	json_array_foreach(tools, i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")),
		    "routed") == 0)
			found = 1;
	ok(rc == MCP_OK && found, "mcp_client_list_tools lists routed");
	json_decref(tools);
	call_routed(c, json_pack("{s:s, s:{s:i, s:b}}", "region", "us-east-1",
	    "opts", "n", -42, "flag", 0), "us-east-1", 0,
	    "listed: region, opts.n, opts.flag");
	call_routed(c, json_pack("{s:s}", "region", "Zoë-north"), "Zoë-north",
	    0, "non-ASCII region (base64)");
	call_routed(c, json_pack("{s:s, s:{s:b}}", "region", " padded  ",
	    "opts", "flag", 1), " padded  ", 0, "spaces at the ends (base64)");
	call_routed(c, json_pack("{s:s}", "region", "=?base64?eA==?="),
	    "=?base64?eA==?=", 0, "a value like the sentinel (base64)");
	call_routed(c, json_pack("{s:s, s:{}}", "region", "a b", "opts"),
	    "a b", 0, "no n, no flag: no header for them");
	/* The raw tools/list teaches the client too. */
	rc = mcp_client_request_new(c, "tools/list", json_object(), &res);
	is_int(rc, MCP_OK, "tools/list (raw)");
	json_decref(res);
	call_routed(c, json_pack("{s:s, s:{s:i}}", "region", "ap", "opts",
	    "n", 7), "ap", 0, "after a raw tools/list");

	/* Subscriptions: resources/subscribe in the legacy era, a listen
	 * in 2026-07-28; both notifications reach the handler. */
	is_int(mcp_client_subscribe(c, WATCHED), MCP_OK, "subscribe %s",
	    WATCHED);
	res = NULL;
	rc = mcp_client_call_tool_new(c, "touch", json_pack("{s:s}", "uri",
	    WATCHED), &res);
	json_decref(res);
	is_int(rc, MCP_OK, "touch %s", WATCHED);
	n = settle(&nupdated, 1);
	ok(n == 1, "resources/updated arrived once (%d)", n);
	res = NULL;
	rc = mcp_client_call_tool_new(c, "add_tool", json_pack("{s:s}", "name",
	    http ? "added-http" : "added-stdio"), &res);
	json_decref(res);
	is_int(rc, MCP_OK, "add_tool");
	n = settle(&nchanged, 1);
	ok(n >= 1, "tools/list_changed arrived (%d)", n);
	if (modern)
		is_int(counter(&ntagged), counter(&nupdated) +
		    counter(&nchanged), "each kept its _meta subscriptionId");
	/* Subscribing again to the same: no change, nothing twice. */
	is_int(mcp_client_subscribe(c, WATCHED), MCP_OK, "subscribe again");
	res = NULL;
	(void)mcp_client_call_tool_new(c, "touch", json_pack("{s:s}", "uri",
	    WATCHED), &res);
	json_decref(res);
	n = settle(&nupdated, 2);
	ok(n == 2, "touched again: one more (%d)", n);
	usleep(300000);
	is_int(counter(&nupdated), 2, "not twice");
	/* A URI of no resource: refused, and the listen stays. */
	if (modern) {
		rc = mcp_client_subscribe(c, "test://no-such-resource");
		is_int(rc, MCP_ESERVER, "subscribe to no resource: refused");
		res = NULL;
		(void)mcp_client_call_tool_new(c, "touch", json_pack("{s:s}",
		    "uri", WATCHED), &res);
		json_decref(res);
		n = settle(&nupdated, 3);
		ok(n == 3, "the listen before it stays (%d)", n);
	}
	n = counter(&nupdated);
	is_int(mcp_client_unsubscribe(c, WATCHED), MCP_OK, "unsubscribe");
	raw = counter(&nrawupd);
	res = NULL;
	(void)mcp_client_call_tool_new(c, "touch", json_pack("{s:s}", "uri",
	    WATCHED), &res);
	json_decref(res);
	usleep(500000);
	is_int(counter(&nupdated), n, "touched after unsubscribe: nothing");
	is_int(counter(&nrawupd), raw, "nor on the wire: the server closed "
	    "the listen before");
	n = counter(&nchanged);
	res = NULL;
	(void)mcp_client_call_tool_new(c, "remove_tool", json_pack("{s:s}",
	    "name", http ? "added-http" : "added-stdio"), &res);
	json_decref(res);
	ok(settle(&nchanged, n + 1) >= n + 1, "tools/list_changed still "
	    "comes (the handler is set)");
}

/* quirk-server badxh: tools with bad x-mcp-header left out. */
static void
badxh(mcp_client *c)
{
	json_t	*tools = NULL, *res = NULL, *t;
	size_t	 i;
	int	 rc;
	char	 names[200] = "";

	is_str(mcp_client_protocol(c), era, "the protocol is %s", era);
	rc = mcp_client_list_tools(c, &tools);
	json_array_foreach(tools, i, t) {
		size_t	 o = strlen(names);

		snprintf(names + o, sizeof(names) - o, "%.40s ",
		    json_string_value(json_object_get(t, "name")));
	}
	ok(rc == MCP_OK && json_array_size(tools) == 1 &&
	    strcmp(names, "q ") == 0, "mcp_client_list_tools: q only (%s)",
	    names);
	json_decref(tools);
	rc = mcp_client_request_new(c, "tools/list", json_object(), &res);
	ok(rc == MCP_OK && json_array_size(json_object_get(res, "tools")) ==
	    1, "a raw tools/list: q only too");
	json_decref(res);
	res = NULL;
	rc = mcp_client_call_tool_new(c, "q", json_pack("{s:s}", "region",
	    "x"), &res);
	is_int(rc, MCP_OK, "q answers");
	json_decref(res);
	/* It declares no resources.subscribe: no listen. */
	is_int(mcp_client_subscribe(c, "test://x"), MCP_ESERVER,
	    "subscribe without the capability: MCP_ESERVER");
}

int
main(int argc, char *argv[])
{
	const char	*protocol = NULL, *url = NULL, *kind = "demo";
	const char	*want_err = NULL, *probe = NULL;
	char		**cmd = NULL;
	mcp_client	*c;
	double		 t0;
	int		 i, rc, mrtr = 0;

	era = "2026-07-28";
	name = "mcp-demo";
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			cmd = argv + i + 1;
			break;
		}
		if (strcmp(argv[i], "-m") == 0) {
			mrtr = 1;
			continue;
		}
		if (i + 1 >= argc)
			break;
		if (strcmp(argv[i], "-p") == 0)
			protocol = argv[++i];
		else if (strcmp(argv[i], "-e") == 0)
			era = argv[++i];
		else if (strcmp(argv[i], "-n") == 0)
			name = argv[++i];
		else if (strcmp(argv[i], "-k") == 0)
			kind = argv[++i];
		else if (strcmp(argv[i], "-u") == 0)
			url = argv[++i];
		else if (strcmp(argv[i], "-s") == 0)
			want_err = argv[++i];
		else if (strcmp(argv[i], "-t") == 0)
			probe = argv[++i];
	}
	if (url == NULL && (cmd == NULL || cmd[0] == NULL)) {
		fprintf(stderr, "usage: client-era [-p P] [-e ERA] [-n NAME] "
		    "[-k KIND] [-m] [-s TEXT] (-u URL | -- CMD...)\n");
		return 2;
	}
	modern = strcmp(era, "2026-07-28") == 0;
	mcp_log_set_level(strcmp(kind, "badxh") == 0 ? MCP_LOG_WARN :
	    MCP_LOG_ERR);
	c = mcp_client_new("client-era", "1");
	if (protocol != NULL)
		is_int(mcp_client_set_option(c, "protocol", protocol), MCP_OK,
		    "option protocol %s", protocol);
	(void)mcp_client_set_option(c, "timeout", "10");
	if (probe != NULL)
		is_int(mcp_client_set_option(c, "probe-timeout", probe), MCP_OK,
		    "option probe-timeout %s", probe);
	(void)mcp_client_on_progress(c, on_progress, NULL);
	(void)mcp_client_on_notification(c, on_notify, NULL);
	(void)mcp_client_on_trace(c, on_trace, NULL);
	(void)mcp_client_on_request(c, "sampling/createMessage", on_sampling,
	    NULL);
	(void)mcp_client_on_request(c, "elicitation/create", on_elicit, NULL);
	(void)mcp_client_set_roots_new(c, json_pack("[{s:s, s:s}, {s:s, s:s}]",
	    "uri", "file:///era/one", "name", "one", "uri", "file:///era/two",
	    "name", "two"));
	t0 = now();
	rc = url != NULL ? mcp_client_connect_url(c, url) :
	    mcp_client_connect_stdio(c, cmd, NULL, NULL);
	if (probe != NULL) {
		/* The probe waited its time, not the request timeout. */
		ok(now() - t0 >= strtod(probe, NULL) - 0.05 && now() - t0 <
		    strtod(probe, NULL) + 3, "connecting took the probe-timeout "
		    "(%.2f s)", now() - t0);
	}
	if (strcmp(kind, "fail") == 0) {
		ok(rc != MCP_OK, "connecting fails (rc %d)", rc);
		ok(mcp_client_error(c) != NULL && want_err != NULL &&
		    strstr(mcp_client_error(c), want_err) != NULL,
		    "the error says \"%s\"", want_err != NULL ? want_err : "");
		diag("mcp_client_error: %s", mcp_client_error(c) != NULL ?
		    mcp_client_error(c) : "(none)");
		ok(mcp_client_protocol(c) == NULL, "no protocol");
		mcp_client_free(c);
		return tap_done();
	}
	is_int(rc, MCP_OK, "connect");
	if (rc != MCP_OK) {
		diag("mcp_client_error: %s", mcp_client_error(c) != NULL ?
		    mcp_client_error(c) : "(none)");
		mcp_client_free(c);
		return tap_done();
	}
	if (strcmp(kind, "feat") == 0 || strcmp(kind, "feat-http") == 0) {
		feat(c, strcmp(kind, "feat-http") == 0);
		mcp_client_free(c);
		return tap_done();
	}
	if (strcmp(kind, "badxh") == 0) {
		badxh(c);
		mcp_client_free(c);
		return tap_done();
	}
	common(c);
	if (strcmp(kind, "demo") == 0)
		demo(c);
	else if (strcmp(kind, "conformance") == 0)
		conformance(c, mrtr);
	else if (strcmp(kind, "quirk") == 0)
		;	/* common() is all it offers */
	else if (strcmp(kind, "mrtr") == 0)
		mrtr_server(c);
	else if (strncmp(kind, "sdk", 3) == 0)
		sdk(c, strcmp(kind, "sdk-stateless") == 0);
	mcp_client_free(c);
	return tap_done();
}
