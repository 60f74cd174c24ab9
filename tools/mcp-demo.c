/*
 * mcp-demo: the reference server, built with the public API only. It is
 * the example to copy: four tools, each a callback that reads its
 * arguments and sets a result, and one call for the command line; a
 * static resource, a resource template, a prompt with an argument, and
 * completion for both. Callbacks run on worker threads; none of them
 * shares state. With --loop-tools, echo, which never blocks, runs on
 * the loop thread instead (mcp_tool_set_flags(3)).
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include <mcp.h>

static const char echo_schema[] =
    "{\"type\":\"object\",\"required\":[\"text\"],"
    "\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"additionalProperties\":false}";

static const char add_schema[] =
    "{\"type\":\"object\",\"required\":[\"a\",\"b\"],"
    "\"properties\":{\"a\":{\"type\":\"number\"},"
    "\"b\":{\"type\":\"number\"}},\"additionalProperties\":false}";

static const char add_output[] =
    "{\"type\":\"object\",\"required\":[\"sum\"],"
    "\"properties\":{\"sum\":{\"type\":\"number\"}}}";

static const char sleep_schema[] =
    "{\"type\":\"object\",\"required\":[\"ms\"],"
    "\"properties\":{\"ms\":{\"type\":\"integer\",\"minimum\":0,"
    "\"maximum\":600000}},\"additionalProperties\":false}";

static const char fail_schema[] =
    "{\"type\":\"object\",\"required\":[\"message\"],"
    "\"properties\":{\"message\":{\"type\":\"string\"}},"
    "\"additionalProperties\":false}";

static void
echo(mcp_call *call)
{
	/*
	 * The schema made text a string; its length in bytes too, for it
	 * may hold \u0000 (a JSON schema's tool gets such strings whole).
	 */
	mcp_result_textn(call, mcp_arg_str(call, "text"),
	    mcp_arg_len(call, "text"));
}

static void
add(mcp_call *call)
{
	double	 a, b;

	if (mcp_args_unpack(call, "{s:F, s:F}", "a", &a, "b", &b) != MCP_OK)
		return;
	if (!isfinite(a + b)) {
		mcp_result_error(call, "the sum is too large for a double");
		return;
	}
	/* The text copy is the serialised JSON, made by the library. */
	mcp_result_json_new(call, json_pack("{s:f}", "sum", a + b));
}

/* Milliseconds of CLOCK_MONOTONIC. */
static long long
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Sleeps in 10 ms slices so a cancellation stops it within one slice,
 * until MS have gone by the clock: a slice a signal cut short (EINTR)
 * does not shorten the whole.
 */
static void
sleep_tool(mcp_call *call)
{
	struct timespec	 slice;
	json_int_t	 ms;
	long long	 start, left, gone, said = 0;
	double		 v;

	/* F, not I: the schema's "integer" also admits 2.0, as JSON
	 * Schema says, and F reads both. */
	if (mcp_args_unpack(call, "{s:F}", "ms", &v) != MCP_OK)
		return;
	ms = (json_int_t)v;
	/* Tagged with the request (id, session, HTTP request id, tool). */
	mcp_log(MCP_LOG_INFO, "sleeping %lld ms", (long long)ms);
	start = now_ms();
	while ((left = start + (long long)ms - now_ms()) > 0) {
		if (mcp_call_cancelled(call))
			return;		/* nobody is waiting for an answer */
		/* Sent only if the client asked, with a progressToken. */
		gone = (long long)ms - left;
		while (gone / 100 > said) {	/* each 100 ms mark, once */
			said++;
			mcp_call_progress(call, (double)(said * 100), (double)ms,
			    NULL);
		}
		slice.tv_sec = 0;
		slice.tv_nsec = (long)(left < 10 ? left : 10) * 1000 * 1000;
		nanosleep(&slice, NULL);
	}
	/* The marks a last, long slice stepped over, before the answer. */
	while ((said + 1) * 100 < (long long)ms) {
		said++;
		mcp_call_progress(call, (double)(said * 100), (double)ms, NULL);
	}
	mcp_result_textf(call, "slept %lld ms", (long long)ms);
}

static void
fail(mcp_call *call)
{
	const char	*msg;

	if (mcp_args_unpack(call, "{s:s}", "message", &msg) != MCP_OK)
		return;
	mcp_result_error(call, msg);
}

static void
readme(mcp_call *call)
{
	mcp_result_text(call, "mcp-demo: a libmcp server with four tools "
	    "(echo, add, sleep, fail), this resource, the template "
	    "demo://greeting/{name} and the prompt review.");
}

/* The template's variable arrives decoded: demo://greeting/J%C3%B6rg. */
static void
greeting(mcp_call *call)
{
	mcp_result_textf(call, "Hello, %s!", mcp_call_var(call, "name"));
}

static void
review(mcp_call *call)
{
	const char	*lang = mcp_call_var(call, "language");

	mcp_result_description(call, "Asks for a code review");
	mcp_result_textf(call, "Please review this %s code for bugs and "
	    "style.", lang);
	mcp_result_role(call, "assistant");
	mcp_result_textf(call, "Paste the %s code and I will review it.",
	    lang);
}

static const char *const languages[] = {
	"c", "c++", "go", "javascript", "python", "rust", "typescript", NULL
};
static const char *const names[] = { "alice", "bob", "carol", NULL };

/* Values that start with what the user typed so far. */
static void
complete(mcp_call *call)
{
	const char *const	*list;
	const char		*arg, *typed;

	if (mcp_call_complete_arg(call, &arg, &typed) != MCP_OK)
		return;
	if (mcp_call_prompt(call) != NULL && strcmp(arg, "language") == 0)
		list = languages;
	else if (mcp_call_uri(call) != NULL && strcmp(arg, "name") == 0)
		list = names;
	else
		return;		/* nothing to offer: an empty list */
	for (; *list != NULL; list++)
		if (strncmp(*list, typed, strlen(typed)) == 0)
			mcp_result_completion(call, *list);
}

/*
 * The application's flags are known once mcp_server_main has parsed
 * them, and the first session opens before its first call: the open
 * hook applies --loop-tools then (the loop thread; setting the same
 * flags again for a later session changes nothing).
 */
static void *
session_open(mcp_session *sess, void *udata)
{
	mcp_server	*srv = udata;

	(void)sess;
	if (mcp_server_flag_bool(srv, "loop-tools"))
		mcp_tool_set_flags(srv, "echo", MCP_TOOL_LOOP);
	return NULL;
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv;
	int		 rc;

	srv = mcp_server_new("mcp-demo", MCP_VERSION);
	mcp_server_set_title(srv, "libmcp demo server");
	mcp_server_set_instructions(srv, "Tools to try libmcp: echo, add, "
	    "sleep (cancellable; it can run as a task) and fail.");
	rc = mcp_tool_register(srv, "echo", "Returns the text it is given.",
	    echo_schema, echo, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "add", "Adds two numbers.",
		    add_schema, add, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_set_output_schema(srv, "add", add_output);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "sleep", "Sleeps for ms "
		    "milliseconds; stops early when cancelled.",
		    sleep_schema, sleep_tool, NULL, NULL);
	/* A client of 2025-11-25 may run it as a task (tasks/get, tasks/result). */
	if (rc == MCP_OK)
		rc = mcp_tool_set_flags(srv, "sleep", MCP_TOOL_TASK_OPTIONAL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "fail", "Returns a tool error "
		    "with the given message.", fail_schema, fail, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "demo://readme", "readme",
		    "What this server offers.", "text/plain", readme, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_template_register(srv,
		    "demo://greeting/{name}", "greeting", "A greeting for "
		    "anyone.", "text/plain", greeting, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "review", "Asks for a code "
		    "review in a language.", review, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "review", "language",
		    "The programming language", 1);
	if (rc == MCP_OK)
		rc = mcp_completion_set(srv, complete, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "loop-tools", MCP_FLAG_BOOL,
		    NULL, "run echo on the loop thread (MCP_TOOL_LOOP), not "
		    "on a worker");
	if (rc == MCP_OK)
		rc = mcp_server_on_session(srv, session_open, NULL, srv, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	else
		mcp_log(MCP_LOG_ERR, "setup: %s", mcp_strerror(rc));
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
