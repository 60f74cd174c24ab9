/*
 * feat-server.c: the test server of test/features2.mjs. It serves the
 * conformance fixtures for resources, templates, prompts and completion
 * (CONFORMANCE.md 4.3 and 4.4), and tools that change the server while
 * it runs, from a worker thread: touch (resources/updated for a URI),
 * add_resource, remove_resource, add_prompt, add_tool and remove_tool.
 * For test/features3.mjs, tools that make requests to the client from
 * inside the callback: sample (sampling/createMessage), elicit
 * (elicitation/create, form or url mode) and roots (roots/list); and a
 * roots/list_changed callback that lists the new roots and reports them
 * (a log message, and the tool last_roots). For test/features4.mjs,
 * annotations and icons: the tool annotated (annotated content blocks,
 * and icons of its own) and decorate, which adds an annotated resource,
 * template and prompt at run time (so that features2's lists stay as
 * they are). For test/deferred.mjs, notifications outside a call:
 * session_id (mcp_call_session_id) and notify_to, which sends a log
 * message, list_changed or resources/updated to the session it names,
 * or to every session, and answers with the return code; and deferred
 * calls that the example (examples/deferred-server.c) would not make:
 * late, finished by a thread of its own that may ignore cancellation,
 * finish_inside, deferred and finished before its callback returns, and
 * finish_undeferred, mcp_call_finish on a call that was not deferred.
 * For test/era.mjs, routed, whose arguments carry x-mcp-header
 * annotations (Mcp-Param-* headers in 2026-07-28). Built by the
 * Makefile as build/feat-server; uses the public API only.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcp.h>

static mcp_server	*srv;

/* A 1x1 PNG (CONFORMANCE.md 4.1, PNG_B64 decoded). */
static const unsigned char png[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00,
	0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};

static const char uri_schema[] =
    "{\"type\":\"object\",\"required\":[\"uri\"],"
    "\"properties\":{\"uri\":{\"type\":\"string\"}}}";
static const char name_schema[] =
    "{\"type\":\"object\",\"required\":[\"name\"],"
    "\"properties\":{\"name\":{\"type\":\"string\"}}}";
static const char sample_schema[] =
    "{\"type\":\"object\",\"required\":[\"prompt\"],"
    "\"properties\":{\"prompt\":{\"type\":\"string\"},"
    "\"timeout_ms\":{\"type\":\"integer\"}}}";
static const char elicit_schema[] =
    "{\"type\":\"object\",\"required\":[\"message\"],"
    "\"properties\":{\"message\":{\"type\":\"string\"},"
    "\"mode\":{\"type\":\"string\",\"enum\":[\"form\",\"url\"]},"
    "\"timeout_ms\":{\"type\":\"integer\"}}}";
static const char roots_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"timeout_ms\":{\"type\":\"integer\"}}}";

/* The icons of the tool annotated and of what decorate adds. */
static const char icons[] =
    "[{\"src\":\"https://example.com/icon.png\",\"mimeType\":\"image/png\","
    "\"sizes\":[\"48x48\"],\"theme\":\"light\"},"
    "{\"src\":\"data:image/svg+xml;base64,PHN2Zy8+\",\"sizes\":[\"any\"]}]";
#define MODIFIED	"2025-01-12T15:00:58Z"

/* What the roots/list_changed callback saw last; it runs on workers. */
static pthread_mutex_t	 roots_lock = PTHREAD_MUTEX_INITIALIZER;
static char		*last_roots;
static int		 roots_runs;

static void
static_text(mcp_call *call)
{
	mcp_result_text(call, "This is the content of the static text "
	    "resource.");
}

static void
static_binary(mcp_call *call)
{
	mcp_result_blob(call, png, sizeof(png));
}

static void
watched(mcp_call *call)
{
	mcp_result_text(call, "Watched resource content");
}

/* udata: the text this resource reads as, freed with the resource. */
static void
added(mcp_call *call)
{
	mcp_result_text(call, mcp_call_udata(call));
}

static void
template_read(mcp_call *call)
{
	const char	*id = mcp_call_var(call, "id");

	if (strcmp(id, "missing") == 0) {
		mcp_result_rpc_error(call, MCP_RPC_RESOURCE_NOT_FOUND,
		    "no such id");
		return;
	}
	mcp_result_textf(call, "{\"id\":\"%s\",\"templateTest\":true,"
	    "\"data\":\"Data for ID: %s\"}", id, id);
	/* A second item: a sub-resource with its own URI and type. */
	mcp_result_resource_text(call, "test://template/sub", "text/plain",
	    "sub");
}

static void
simple_prompt(mcp_call *call)
{
	mcp_result_text(call, "This is a simple prompt for testing.");
}

static void
args_prompt(mcp_call *call)
{
	mcp_result_textf(call, "Prompt with arguments: arg1='%s', arg2='%s'",
	    mcp_call_var(call, "arg1"), mcp_call_var(call, "arg2"));
}

static void
resource_prompt(mcp_call *call)
{
	mcp_result_resource_text(call, mcp_call_var(call, "resourceUri"),
	    "text/plain", "Embedded resource content for testing.");
	mcp_result_text(call, "Please process the embedded resource above.");
}

static void
image_prompt(mcp_call *call)
{
	mcp_result_image(call, png, sizeof(png), "image/png");
	mcp_result_role(call, "assistant");
	mcp_result_text(call, "Please analyze the image above.");
}

/* arg1 offers 150 values (only 100 go out); arg2 one built from arg1
 * in the context; id three. */
static void
complete(mcp_call *call)
{
	const char	*arg, *typed;
	char		 v[32];
	int		 i;

	if (mcp_call_complete_arg(call, &arg, &typed) != MCP_OK)
		return;
	if (strcmp(arg, "arg1") == 0)
		for (i = 0; i < 150; i++) {
			snprintf(v, sizeof(v), "%s%d", typed, i);
			mcp_result_completion(call, v);
		}
	else if (strcmp(arg, "arg2") == 0 && mcp_call_var(call, "arg1")) {
		/* From the context: the value already given for arg1. */
		snprintf(v, sizeof(v), "%s-%s", mcp_call_var(call, "arg1"),
		    typed);
		mcp_result_completion(call, v);
	} else if (strcmp(arg, "id") == 0) {
		mcp_result_completion(call, "123");
		mcp_result_completion(call, "124");
		mcp_result_completion(call, "125");
		mcp_result_completion_total(call, 3, 0);
	}
}

static void
touch(mcp_call *call)
{
	const char	*uri;

	if (mcp_args_unpack(call, "{s:s}", "uri", &uri) != MCP_OK)
		return;
	mcp_result_textf(call, "rc %d",
	    mcp_resource_notify_updated(srv, uri));
}

static void
add_resource(mcp_call *call)
{
	const char	*uri;
	char		*text;

	if (mcp_args_unpack(call, "{s:s}", "uri", &uri) != MCP_OK)
		return;
	text = strdup("added at run time");
	mcp_result_textf(call, "rc %d", mcp_resource_register(srv, uri,
	    "added", "Added while running", "text/plain", added, text,
	    free));
}

static void
remove_resource(mcp_call *call)
{
	const char	*uri;

	if (mcp_args_unpack(call, "{s:s}", "uri", &uri) != MCP_OK)
		return;
	mcp_result_textf(call, "rc %d", mcp_resource_unregister(srv, uri));
}

static void
add_prompt(mcp_call *call)
{
	const char	*name;

	if (mcp_args_unpack(call, "{s:s}", "name", &name) != MCP_OK)
		return;
	mcp_result_textf(call, "rc %d", mcp_prompt_register(srv, name,
	    "Added while running", simple_prompt, NULL, NULL));
}

static void
add_tool(mcp_call *call)
{
	const char	*name;

	if (mcp_args_unpack(call, "{s:s}", "name", &name) != MCP_OK)
		return;
	mcp_result_textf(call, "rc %d", mcp_tool_register(srv, name,
	    "Added while running", NULL, simple_prompt, NULL, NULL));
}

static void
remove_tool(mcp_call *call)
{
	const char	*name;

	if (mcp_args_unpack(call, "{s:s}", "name", &name) != MCP_OK)
		return;
	mcp_result_textf(call, "rc %d", mcp_tool_unregister(srv, name));
}

/*
 * late {ms, text?, poll?}: a thread per call finishes it after MS ms:
 * a progress notification and a log message first, from that thread,
 * then TEXT. With POLL (the default) it stops early once the call is
 * cancelled; without, it sets its result and finishes at the end all
 * the same, which the library must drop. The threads are joined at
 * the end of main.
 */
struct late {
	mcp_call	*call;
	long long	 ms;
	int		 poll;
	char		*text;
};

static pthread_mutex_t	 late_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t	*late_threads;
static size_t		 nlate, late_cap;

static void *
late_main(void *arg)
{
	struct late	*l = arg;
	struct timespec	 ts = { 0, 5000000 };
	long long	 waited;

	mcp_call_progress(l->call, 0, (double)l->ms, "started");
	mcp_call_log(l->call, MCP_LOG_INFO, "late", "finishing in %lld ms",
	    l->ms);
	for (waited = 0; waited < l->ms; waited += 5) {
		if (l->poll && mcp_call_cancelled(l->call))
			break;
		nanosleep(&ts, NULL);
	}
	mcp_result_textf(l->call, "%s", l->text != NULL ? l->text : "late");
	mcp_call_finish(l->call);
	free(l->text);
	free(l);
	return NULL;
}

static void
late(mcp_call *call)
{
	struct late	*l;
	json_int_t	 ms;
	const char	*text = NULL;
	int		 poll = 1, rc;
	pthread_t	*nt;

	if (mcp_args_unpack(call, "{s:I, s?s, s?b}", "ms", &ms, "text", &text,
	    "poll", &poll) != MCP_OK)
		return;
	l = calloc(1, sizeof(*l));
	if (l == NULL || (text != NULL && (l->text = strdup(text)) == NULL)) {
		free(l);
		mcp_result_error(call, "out of memory");
		return;
	}
	l->call = call;
	l->ms = ms;
	l->poll = poll;
	pthread_mutex_lock(&late_lock);
	if (nlate == late_cap) {
		nt = realloc(late_threads, (late_cap * 2 + 8) * sizeof(*nt));
		if (nt == NULL) {
			pthread_mutex_unlock(&late_lock);
			free(l->text);
			free(l);
			mcp_result_error(call, "out of memory");
			return;
		}
		late_threads = nt;
		late_cap = late_cap * 2 + 8;
	}
	mcp_call_defer(call);
	rc = pthread_create(&late_threads[nlate], NULL, late_main, l);
	if (rc == 0)
		nlate++;
	pthread_mutex_unlock(&late_lock);
	if (rc != 0) {
		mcp_result_errorf(call, "pthread_create: %s", strerror(rc));
		mcp_call_finish(call);
		free(l->text);
		free(l);
	}
}

/* Deferred, then finished before the callback returns. */
static void
finish_inside(mcp_call *call)
{
	int	 rc[2];

	rc[0] = mcp_call_defer(call);
	rc[1] = mcp_call_defer(call);
	mcp_result_textf(call, "defer %d %d", rc[0], rc[1]);
	mcp_call_finish(call);
}

/* mcp_call_finish on a call that was not deferred: refused. */
static void
finish_undeferred(mcp_call *call)
{
	mcp_result_textf(call, "finish %d", mcp_call_finish(call));
}

/*
 * routed {region, opts?: {n?, flag?}}: arguments an intermediary may
 * route on, each mirrored into a header (x-mcp-header: Mcp-Param-Region,
 * Mcp-Param-N, Mcp-Param-Flag) by a 2026-07-28 client over HTTP.
 */
static const char routed_schema[] = "{\"type\":\"object\","
    "\"properties\":{\"region\":{\"type\":\"string\","
    "\"x-mcp-header\":\"Region\"},\"opts\":{\"type\":\"object\","
    "\"properties\":{\"n\":{\"type\":\"integer\",\"x-mcp-header\":"
    "\"N\"},\"flag\":{\"type\":\"boolean\",\"x-mcp-header\":"
    "\"Flag\"}}}},\"required\":[\"region\"]}";

static void
routed(mcp_call *call)
{
	const char	*region = "";

	(void)mcp_args_unpack(call, "{s:s}", "region", &region);
	mcp_result_textf(call, "routed to %s", region);
}

static void
session_id(mcp_call *call)
{
	mcp_result_text(call, mcp_call_session_id(call));
}

/*
 * notify_to {session?, what, level?, text?, uri?}: WHAT is log, tools,
 * resources, prompts or updated; without SESSION, to every session
 * (updated: mcp_resource_notify_updated). Answers "rc CODE".
 */
static void
notify_to(mcp_call *call)
{
	const char	*sid = NULL, *what, *level = "notice", *text = "",
			*uri = "test://watched-resource";
	int		 lists = 0, rc;

	if (mcp_args_unpack(call, "{s?s, s:s, s?s, s?s, s?s}", "session",
	    &sid, "what", &what, "level", &level, "text", &text, "uri",
	    &uri) != MCP_OK)
		return;
	if (strcmp(what, "tools") == 0)
		lists = MCP_LIST_TOOLS;
	else if (strcmp(what, "resources") == 0)
		lists = MCP_LIST_RESOURCES;
	else if (strcmp(what, "prompts") == 0)
		lists = MCP_LIST_PROMPTS;
	if (strcmp(what, "log") == 0)
		rc = sid != NULL ? mcp_server_log_to(srv, sid,
		    mcp_log_level_parse(level), "notify", "%s", text) :
		    mcp_server_log(srv, mcp_log_level_parse(level), "notify",
		    "%s", text);
	else if (strcmp(what, "updated") == 0)
		rc = sid != NULL ? mcp_resource_notify_updated_to(srv, sid,
		    uri) : mcp_resource_notify_updated(srv, uri);
	else if (sid != NULL)
		rc = mcp_server_notify_list_changed_to(srv, sid, lists);
	else
		rc = mcp_server_notify_list_changed(srv, lists);
	mcp_result_textf(call, "rc %d", rc);
}

/*
 * The requests to the client. On failure: an isError result "WHAT
 * failed: <mcp_strerror(rc)>", followed for MCP_ECLIENT by ": <the
 * client's error message> (<its code>)".
 */
static void
request_failed(mcp_call *call, const char *what, int rc, json_t *res)
{
	json_t		*msg, *code;

	if (rc == MCP_ECLIENT && json_is_object(res)) {
		msg = json_object_get(res, "message");
		code = json_object_get(res, "code");
		mcp_result_errorf(call, "%s failed: %s: %s (%lld)", what,
		    mcp_strerror(rc), json_is_string(msg) ?
		    json_string_value(msg) : "(no message)",
		    json_is_integer(code) ? (long long)json_integer_value(code) :
		    0LL);
	} else
		mcp_result_errorf(call, "%s failed: %s", what,
		    mcp_strerror(rc));
}

/* V as compact JSON ("null" for NULL), into a new string. */
static char *
compact(const json_t *v)
{
	if (v == NULL)
		return strdup("null");
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* timeout_ms from the arguments, 0 (the library's default) if absent. */
static int
timeout_arg(mcp_call *call)
{
	json_t	*t = json_object_get(mcp_call_args(call), "timeout_ms");

	return json_is_integer(t) ? (int)json_integer_value(t) : 0;
}

static void
sample(mcp_call *call)
{
	const char	*prompt, *text;
	json_t		*params, *res = NULL;
	int		 rc;

	if (mcp_args_unpack(call, "{s:s}", "prompt", &prompt) != MCP_OK)
		return;
	params = json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages",
	    "role", "user", "content", "type", "text", "text", prompt,
	    "maxTokens", 100);
	rc = mcp_call_sample(call, params, timeout_arg(call), &res);
	if (rc != MCP_OK)
		request_failed(call, "sampling", rc, res);
	else {
		text = json_string_value(json_object_get(json_object_get(res,
		    "content"), "text"));
		mcp_result_textf(call, "sampled: %s", text != NULL ? text :
		    "(no text)");
	}
	json_decref(res);
}

static void
elicit(mcp_call *call)
{
	const char	*message, *mode = "form", *action;
	json_t		*params, *res = NULL;
	char		*content;
	int		 rc;

	if (mcp_args_unpack(call, "{s:s, s?s}", "message", &message, "mode",
	    &mode) != MCP_OK)
		return;
	if (strcmp(mode, "url") == 0)
		params = json_pack("{s:s, s:s, s:s, s:s}", "mode", "url",
		    "message", message, "url", "https://example.com/x",
		    "elicitationId", "e1");
	else
		params = json_pack("{s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}",
		    "message", message, "requestedSchema", "type", "object",
		    "properties", "name", "type", "string", "required",
		    "name");
	rc = mcp_call_elicit(call, params, timeout_arg(call), &res);
	if (rc != MCP_OK)
		request_failed(call, "elicitation", rc, res);
	else {
		action = json_string_value(json_object_get(res, "action"));
		content = compact(json_object_get(res, "content"));
		mcp_result_textf(call, "elicited: action=%s content=%s",
		    action != NULL ? action : "(none)",
		    content != NULL ? content : "?");
		free(content);
	}
	json_decref(res);
}

static void
roots(mcp_call *call)
{
	json_t	*res = NULL;
	char	*list;
	int	 rc;

	rc = mcp_call_roots(call, timeout_arg(call), &res);
	if (rc != MCP_OK)
		request_failed(call, "roots", rc, res);
	else {
		list = compact(json_object_get(res, "roots"));
		mcp_result_textf(call, "roots: %s", list != NULL ? list : "?");
		free(list);
	}
	json_decref(res);
}

/*
 * notifications/roots/list_changed: lists the roots again and reports
 * them as a log message "roots changed #N (UDATA): LIST", with what the
 * call context gives a notification's callback; the tool last_roots
 * reads them back.
 */
static void
roots_changed(mcp_call *call)
{
	json_t	*res = NULL;
	char	*list = NULL;
	int	 rc, n, text_rc;

	rc = mcp_call_roots(call, 0, &res);
	if (rc == MCP_OK)
		list = compact(json_object_get(res, "roots"));
	pthread_mutex_lock(&roots_lock);
	n = ++roots_runs;
	if (list != NULL) {
		free(last_roots);
		last_roots = strdup(list);
	}
	pthread_mutex_unlock(&roots_lock);
	/* A notification has no answer: no result can be set. */
	text_rc = mcp_result_text(call, "nobody reads this");
	if (rc == MCP_OK)
		mcp_call_log(call, MCP_LOG_INFO, "roots", "roots changed #%d "
		    "(%s, tool %s, token %s, text rc %d): %s", n,
		    (const char *)mcp_call_udata(call),
		    mcp_call_tool(call) ? mcp_call_tool(call) : "none",
		    mcp_call_progress_token(call) ? "set" : "none", text_rc,
		    list != NULL ? list : "?");
	else
		mcp_call_log(call, MCP_LOG_WARN, "roots", "roots changed "
		    "#%d: roots/list failed: %s", n, mcp_strerror(rc));
	free(list);
	json_decref(res);
}

static void
last_roots_tool(mcp_call *call)
{
	pthread_mutex_lock(&roots_lock);
	mcp_result_textf(call, "runs %d: %s", roots_runs,
	    last_roots != NULL ? last_roots : "none");
	pthread_mutex_unlock(&roots_lock);
}

/*
 * One block of each type, annotated: the client sees what the session's
 * version knows. The last block reports the return codes of the calls
 * that must fail.
 */
static void
annotated(mcp_call *call)
{
	int	 none, twice, bad_p, bad_a, bad_d, bad_nan, ok[6];

	none = mcp_result_annotate(call, MCP_AUDIENCE_USER, 0.5, NULL);
	mcp_result_text(call, "for the user");
	ok[0] = mcp_result_annotate(call, MCP_AUDIENCE_USER, 0.5, NULL);
	mcp_result_image(call, png, sizeof(png), "image/png");
	bad_p = mcp_result_annotate(call, 0, 1.5, NULL);
	bad_a = mcp_result_annotate(call, 4, -1, NULL);
	bad_d = mcp_result_annotate(call, 0, -1, "2025-06-18");
	bad_nan = mcp_result_annotate(call, 0, NAN, NULL);
	ok[1] = mcp_result_annotate(call, MCP_AUDIENCE_ASSISTANT, 1,
	    MODIFIED);
	mcp_result_audio(call, png, sizeof(png), "audio/wav");
	ok[2] = mcp_result_annotate(call, MCP_AUDIENCE_USER |
	    MCP_AUDIENCE_ASSISTANT, -1, MODIFIED);
	mcp_result_resource_text(call, "test://annotated/embedded",
	    "text/plain", "embedded");
	ok[3] = mcp_result_annotate(call, 0, 0, NULL);
	mcp_result_resource_link(call, "test://static-text", "static-text",
	    NULL, "text/plain");
	ok[4] = mcp_result_annotate(call, MCP_AUDIENCE_USER, 0.25,
	    "2025-06-18T09:30:00.5+02:00");
	twice = mcp_result_annotate(call, MCP_AUDIENCE_USER, 0.25, NULL);
	mcp_result_textf(call, "codes: none %d twice %d priority %d "
	    "audience %d date %d nan %d ok %d %d %d %d %d", none, twice,
	    bad_p, bad_a, bad_d, bad_nan, ok[0], ok[1], ok[2], ok[3], ok[4]);
	/* Nothing to send: no annotations, and none counted as set. */
	ok[5] = mcp_result_annotate(call, 0, -1, NULL);
	mcp_result_textf(call, "empty %d, then %d", ok[5],
	    mcp_result_annotate(call, MCP_AUDIENCE_USER, -1, NULL));
}

static void
annotated_read(mcp_call *call)
{
	mcp_result_text(call, "annotated");
	/* Resource contents have no annotations. */
	mcp_result_textf(call, "annotate rc %d",
	    mcp_result_annotate(call, MCP_AUDIENCE_USER, -1, NULL));
}

static void
annotated_prompt(mcp_call *call)
{
	mcp_result_text(call, "An annotated prompt message.");
	mcp_result_annotate(call, MCP_AUDIENCE_USER, 0.3, MODIFIED);
	mcp_result_role(call, "assistant");
	mcp_result_text(call, "Not annotated.");
}

/* Adds an annotated resource, template and prompt, each with icons. */
static void
decorate(mcp_call *call)
{
	int	 rc[8];

	rc[0] = mcp_resource_register(srv, "test://annotated", "annotated",
	    "An annotated resource", "text/plain", annotated_read, NULL,
	    NULL);
	rc[1] = mcp_resource_set_annotations(srv, "test://annotated",
	    MCP_AUDIENCE_USER | MCP_AUDIENCE_ASSISTANT, 0.8, MODIFIED);
	rc[2] = mcp_resource_set_icons(srv, "test://annotated", icons);
	rc[3] = mcp_resource_template_register(srv,
	    "test://annotated/{x}", "annotated-template", NULL, NULL,
	    annotated_read, NULL, NULL);
	rc[4] = mcp_resource_template_set_annotations(srv,
	    "test://annotated/{x}", MCP_AUDIENCE_ASSISTANT, -1, NULL);
	rc[5] = mcp_resource_template_set_icons(srv, "test://annotated/{x}",
	    icons);
	rc[6] = mcp_prompt_register(srv, "annotated_prompt", "An annotated "
	    "prompt", annotated_prompt, NULL, NULL);
	rc[7] = mcp_prompt_set_icons(srv, "annotated_prompt", icons);
	mcp_result_textf(call, "rc %d %d %d %d %d %d %d %d", rc[0], rc[1],
	    rc[2], rc[3], rc[4], rc[5], rc[6], rc[7]);
}

int
main(int argc, char *argv[])
{
	int	 rc;

	srv = mcp_server_new("feat-server", "1.0.0");
	rc = mcp_resource_register(srv, "test://static-text", "static-text",
	    "A static text resource for testing", "text/plain", static_text,
	    NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_set_title(srv, "test://static-text",
		    "Static Text Resource");
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "test://static-binary",
		    "static-binary", "A static binary resource (image) for "
		    "testing", "image/png", static_binary, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_set_size(srv, "test://static-binary",
		    (long long)sizeof(png));
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "test://watched-resource",
		    "watched-resource", "A resource that is updated on demand",
		    "text/plain", watched, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_template_register(srv,
		    "test://template/{id}/data", "template", "A resource "
		    "template with parameter substitution", "application/json",
		    template_read, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_template_set_title(srv,
		    "test://template/{id}/data", "Resource Template");
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_simple_prompt",
		    "A simple prompt without arguments", simple_prompt, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_set_title(srv, "test_simple_prompt",
		    "Simple Test Prompt");
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_prompt_with_arguments",
		    "A prompt with required arguments", args_prompt, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "test_prompt_with_arguments",
		    "arg1", "First test argument", 1);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "test_prompt_with_arguments",
		    "arg2", "Second test argument", 1);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv,
		    "test_prompt_with_embedded_resource", "A prompt that "
		    "includes an embedded resource", resource_prompt, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv,
		    "test_prompt_with_embedded_resource", "resourceUri",
		    "URI of the resource to embed", 1);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_prompt_with_image",
		    "A prompt that includes image content", image_prompt,
		    NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_completion_set(srv, complete, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "touch", "Sends resources/updated",
		    uri_schema, touch, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "add_resource", "Adds a resource",
		    uri_schema, add_resource, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "remove_resource", "Removes a "
		    "resource", uri_schema, remove_resource, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "add_prompt", "Adds a prompt",
		    name_schema, add_prompt, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "add_tool", "Adds a tool",
		    name_schema, add_tool, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "remove_tool", "Removes a tool",
		    name_schema, remove_tool, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "sample", "Asks the client to "
		    "sample (sampling/createMessage)", sample_schema, sample,
		    NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "elicit", "Asks the client for "
		    "input (elicitation/create)", elicit_schema, elicit, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "roots", "Asks the client for its "
		    "roots (roots/list)", roots_schema, roots, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "last_roots", "What the "
		    "roots/list_changed callback listed last", NULL,
		    last_roots_tool, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_on_roots_changed(srv, roots_changed,
		    strdup("roots-udata"), free);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "annotated", "Annotated content "
		    "blocks of every type", NULL, annotated, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_set_icons(srv, "annotated", icons);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "decorate", "Adds an annotated "
		    "resource, template and prompt", NULL, decorate, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "session_id", "The id of this "
		    "call's session", NULL, session_id, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "notify_to", "A notification to "
		    "one session or to all", NULL, notify_to, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "late", "Finished after MS ms by a "
		    "thread of its own", NULL, late, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "finish_inside", "Deferred and "
		    "finished in its callback", NULL, finish_inside, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "finish_undeferred", "Finishes a "
		    "call it did not defer", NULL, finish_undeferred, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "routed", "Arguments mirrored "
		    "into headers", routed_schema, routed, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	else
		mcp_log(MCP_LOG_ERR, "setup: %s", mcp_strerror(rc));
	/* mcp_server_main has waited for every deferred call's finish; the
	 * threads that made them are ending. */
	while (nlate > 0)
		pthread_join(late_threads[--nlate], NULL);
	free(late_threads);
	mcp_server_free(srv);
	free(last_roots);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
