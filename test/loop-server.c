/*
 * loop-server: the server of test/loop.sh, whose tools are loop tools
 * (mcp_tool_set_flags(3), MCP_TOOL_LOOP) unless --pool-tools is given:
 *
 *   where    "loop" or "worker": the thread it ran on (the loop thread is
 *            main's, which runs mcp_server_main)
 *   echo     {text}: the text, as mcp-demo's echo (schema: text a string)
 *   shape    {ok}: structuredContent {"n": 1} if ok, else {"n": "x"},
 *            against an output schema that wants n a number
 *   ask      asks the client for sampling, elicitation and roots, and
 *            answers with the three return codes
 *   notes    sends progress 1 and 2 and a log message, then answers
 *   handoff  {text}: defers, and a thread of its own answers the text
 *            after 20 ms (mcp_call_finish)
 *   hold     defers; its thread waits until the call is cancelled (a
 *            client's cancel, the tool's 300 ms time limit, the end of
 *            the session or the grace period), then finishes it
 *   busy     {ms}: keeps the loop busy that long (what a loop tool must
 *            not do; it stands for many calls' worth of work), then
 *            answers "done"
 *
 * Built by the Makefile, never installed; the public header only.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcp.h>

static pthread_t	 loop_thread;

static void
where(mcp_call *call)
{
	mcp_result_text(call, pthread_equal(pthread_self(), loop_thread) ?
	    "loop" : "worker");
}

static void
echo(mcp_call *call)
{
	const char	*text;
	size_t		 len;

	if (mcp_args_unpack(call, "{s:s%}", "text", &text, &len) != MCP_OK)
		return;
	mcp_result_textn(call, text, len);
}

static void
shape(mcp_call *call)
{
	int	 good = 0;

	if (mcp_args_unpack(call, "{s?b}", "ok", &good) != MCP_OK)
		return;
	mcp_result_json_new(call, good ? json_pack("{s:i}", "n", 1) :
	    json_pack("{s:s}", "n", "x"));
}

static void
ask(mcp_call *call)
{
	json_t	*res = NULL;
	int	 s, e, r;

	s = mcp_call_sample(call, json_pack("{s:[], s:i}", "messages",
	    "maxTokens", 10), 1000, &res);
	json_decref(res);
	e = mcp_call_elicit(call, json_pack("{s:s, s:{s:s}}", "message",
	    "name?", "requestedSchema", "type", "object"), 1000, &res);
	json_decref(res);
	r = mcp_call_roots(call, 1000, &res);
	json_decref(res);
	mcp_result_textf(call, "sample=%s elicit=%s roots=%s",
	    mcp_strerror(s), mcp_strerror(e), mcp_strerror(r));
}

static void
notes(mcp_call *call)
{
	mcp_call_progress(call, 1, 2, "half");
	mcp_call_progress(call, 2, 2, NULL);
	mcp_call_log(call, MCP_LOG_WARN, "loop", "a note from %s",
	    pthread_equal(pthread_self(), loop_thread) ? "the loop" :
	    "a worker");
	mcp_result_text(call, "noted");
}

/* The thread that answers a deferred call. */
static void *
answer(void *arg)
{
	mcp_call		*call = arg;
	struct timespec		 ms20 = { 0, 20 * 1000 * 1000 };
	const char		*text;
	size_t			 len;

	nanosleep(&ms20, NULL);
	if (mcp_args_unpack(call, "{s:s%}", "text", &text, &len) == MCP_OK)
		mcp_result_textn(call, text, len);
	mcp_call_progress(call, 1, 1, "from the thread");
	if (mcp_call_finish(call) != MCP_OK)
		fprintf(stderr, "loop-server: mcp_call_finish failed\n");
	return NULL;
}

/* Waits for the cancellation, then finishes: the answer is dropped. */
static void *
holder(void *arg)
{
	mcp_call		*call = arg;
	struct timespec		 ms5 = { 0, 5 * 1000 * 1000 };

	while (!mcp_call_cancelled(call))
		nanosleep(&ms5, NULL);
	mcp_result_text(call, "too late");
	mcp_call_finish(call);
	return NULL;
}

static void
hand_to(mcp_call *call, void *(*fn)(void *))
{
	pthread_t	 t;

	if (mcp_call_defer(call) != MCP_OK) {
		mcp_result_error(call, "mcp_call_defer failed");
		return;
	}
	if (pthread_create(&t, NULL, fn, call) != 0) {
		mcp_result_error(call, "pthread_create failed");
		mcp_call_finish(call);
		return;
	}
	pthread_detach(t);
}

static void
handoff(mcp_call *call)
{
	hand_to(call, answer);
}

static void
hold(mcp_call *call)
{
	hand_to(call, holder);
}

static void
busy(mcp_call *call)
{
	long long	 ms = mcp_arg_int(call, "ms");
	struct timespec	 t = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	long long	 pad = mcp_arg_int(call, "pad");

	nanosleep(&t, NULL);
	/* With pad, the answer is that many bytes longer: big enough to be
	 * written at once (loop.sh's client that leaves mid-read). */
	mcp_result_textf(call, "done%*s", (int)pad, "");
}

static const char text_schema[] =
    "{\"type\":\"object\",\"required\":[\"text\"],"
    "\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"additionalProperties\":false}";

static const struct {
	const char	*name;
	const char	*schema;
	mcp_tool_fn	 fn;
} tools[] = {
	{ "where", NULL, where },
	{ "echo", text_schema, echo },
	{ "shape", "{\"type\":\"object\",\"properties\":{\"ok\":"
	    "{\"type\":\"boolean\"}}}", shape },
	{ "ask", NULL, ask },
	{ "notes", NULL, notes },
	{ "handoff", text_schema, handoff },
	{ "hold", NULL, hold },
	{ "hold-300", NULL, hold },
	{ "busy", "{\"type\":\"object\",\"required\":[\"ms\"],\"properties\":"
	    "{\"ms\":{\"type\":\"integer\",\"minimum\":0,"
	    "\"maximum\":5000},\"pad\":{\"type\":\"integer\","
	    "\"minimum\":0,\"maximum\":65536}}}", busy },
};

/* --pool-tools, known once the command line is parsed: cleared again
 * as the first session opens, before its first call. */
static void *
session_open(mcp_session *sess, void *udata)
{
	size_t	 i;

	(void)sess;
	if (mcp_server_flag_bool(udata, "pool-tools"))
		for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
			mcp_tool_set_flags(udata, tools[i].name, 0);
	return NULL;
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv = mcp_server_new("loop-test", "1.0.0");
	size_t		 i;
	int		 rc = MCP_OK;

	loop_thread = pthread_self();
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]) && rc == MCP_OK;
	    i++)
		rc = mcp_tool_register(srv, tools[i].name, tools[i].name,
		    tools[i].schema, tools[i].fn, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_set_output_schema(srv, "shape", "{\"type\":"
		    "\"object\",\"required\":[\"n\"],\"properties\":{\"n\":"
		    "{\"type\":\"number\"}}}");
	if (rc == MCP_OK)
		rc = mcp_tool_set_timeout(srv, "hold-300", 300);
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "pool-tools", MCP_FLAG_BOOL,
		    NULL, "leave the tools on the workers");
	/* Flags checked: an unknown bit, an unknown tool. */
	if (rc == MCP_OK && (mcp_tool_set_flags(srv, "echo", 0x80) !=
	    MCP_EINVAL || mcp_tool_set_flags(srv, "nope", MCP_TOOL_LOOP) !=
	    MCP_ENOENT || mcp_tool_set_flags(NULL, "echo", 0) != MCP_ENOMEM))
		rc = MCP_ESTATE;
	/* Both were meant: forgotten, or the server would not start. */
	if (rc == MCP_OK && mcp_server_clear_error(srv) != MCP_EINVAL)
		rc = MCP_ESTATE;
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]) && rc == MCP_OK;
	    i++)
		rc = mcp_tool_set_flags(srv, tools[i].name, MCP_TOOL_LOOP);
	if (rc == MCP_OK)
		rc = mcp_server_on_session(srv, session_open, NULL, srv, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	else
		fprintf(stderr, "loop-server: setup: %s\n", mcp_strerror(rc));
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
