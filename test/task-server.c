/*
 * task-server: the server of test/tasks.sh, whose tools may, must or
 * must not be called as tasks (mcp_tool_set_flags(3),
 * MCP_TOOL_TASK_OPTIONAL and MCP_TOOL_TASK_REQUIRED):
 *
 *   slow     {ms}, optional: sleeps MS in steps of 10 ms, stopping early
 *            when the call is cancelled; answers "slept MS"
 *   stopped  forbidden: how many slow calls saw their cancellation
 *   must     required: answers "must ok"
 *   plain    forbidden: answers "plain ok"
 *   big      {n}, optional: a text of N bytes of "x"
 *   fails    optional: a tool error (isError)
 *   rpcfail  optional: the JSON-RPC error -32050 "rpcfail says no"
 *   quick    optional, a loop tool (MCP_TOOL_LOOP): answers "quick"
 *   asks     optional: elicits a name; answers "elicit rc N" (N: what
 *            mcp_call_elicit returned) or "hello NAME"
 *
 * With TASK_AUTH set in the environment, over HTTP a bearer token
 * "user-NAME" is let in as the subject NAME (mcp_server_set_auth(3)), any
 * other is refused: the tasks of 2026-07-28 are bound to their subject.
 *
 * Built by the Makefile, never installed; the public header only.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcp.h>

static atomic_int	 stopped_calls;

static void
slow(mcp_call *call)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	json_int_t	 ms = 0, t;

	if (mcp_args_unpack(call, "{s?I}", "ms", &ms) != MCP_OK)
		return;
	for (t = 0; t < ms; t += 10) {
		if (mcp_call_cancelled(call)) {
			atomic_fetch_add(&stopped_calls, 1);
			mcp_result_text(call, "stopped");
			return;
		}
		/* Every 100 ms, progress (when the call asked for it). */
		if (t % 100 == 0)
			mcp_call_progress(call, (double)t, (double)ms, NULL);
		nanosleep(&ts, NULL);
	}
	mcp_result_textf(call, "slept %lld", (long long)ms);
}

static void
stopped(mcp_call *call)
{
	mcp_result_textf(call, "%d", atomic_load(&stopped_calls));
}

static void
must(mcp_call *call)
{
	mcp_result_text(call, "must ok");
}

static void
plain(mcp_call *call)
{
	mcp_result_text(call, "plain ok");
}

static void
big(mcp_call *call)
{
	json_int_t	 n = 0;
	char		*s;

	if (mcp_args_unpack(call, "{s:I}", "n", &n) != MCP_OK)
		return;
	if (n < 0 || n > 64 * 1024 * 1024 || (s = malloc(n + 1)) == NULL) {
		mcp_result_error(call, "bad n");
		return;
	}
	memset(s, 'x', n);
	s[n] = '\0';
	mcp_result_text(call, s);
	free(s);
}

static void
fails(mcp_call *call)
{
	mcp_result_error(call, "it failed");
}

static void
rpcfail(mcp_call *call)
{
	mcp_result_rpc_error(call, -32050, "rpcfail says no");
}

static void
quick(mcp_call *call)
{
	mcp_result_text(call, "quick");
}

static void
asks(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, json_pack("{s:s, s:{s:s, s:{s:{s:s}}}}",
	    "message", "Your name?", "requestedSchema", "type", "object",
	    "properties", "name", "type", "string"), 0, &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "hello %s", json_string_value(
		    json_object_get(json_object_get(res, "content"), "name")));
	else
		mcp_result_textf(call, "elicit rc %d", rc);
	json_decref(res);
}

static const struct {
	const char	*name;
	void		(*fn)(mcp_call *);
	unsigned	 flags;
} tools[] = {
	{ "slow", slow, MCP_TOOL_TASK_OPTIONAL },
	{ "stopped", stopped, 0 },
	{ "must", must, MCP_TOOL_TASK_REQUIRED },
	{ "plain", plain, 0 },
	{ "big", big, MCP_TOOL_TASK_OPTIONAL },
	{ "fails", fails, MCP_TOOL_TASK_OPTIONAL },
	{ "rpcfail", rpcfail, MCP_TOOL_TASK_OPTIONAL },
	{ "quick", quick, MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_LOOP },
	{ "asks", asks, MCP_TOOL_TASK_OPTIONAL },
};

/* TASK_AUTH: "user-NAME" is NAME. Loop thread. */
static int
auth(mcp_auth *a, const char *token, void *udata)
{
	(void)udata;
	if (strncmp(token, "user-", 5) != 0 || token[5] == '\0')
		return MCP_AUTH_INVALID;
	return mcp_auth_set_subject(a, token + 5) == MCP_OK ? MCP_AUTH_OK :
	    MCP_AUTH_INVALID;
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv = mcp_server_new("task-test", "1.0.0");
	size_t		 i;
	int		 rc = MCP_OK;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]) && rc == MCP_OK;
	    i++) {
		rc = mcp_tool_register(srv, tools[i].name, tools[i].name,
		    NULL, tools[i].fn, NULL, NULL);
		if (rc == MCP_OK)
			rc = mcp_tool_set_flags(srv, tools[i].name,
			    tools[i].flags);
	}
	/* Both task flags at once are refused. */
	if (rc == MCP_OK && mcp_tool_set_flags(srv, "plain",
	    MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED) != MCP_EINVAL)
		rc = MCP_ESTATE;
	if (rc == MCP_OK && mcp_server_clear_error(srv) != MCP_EINVAL)
		rc = MCP_ESTATE;
	if (rc == MCP_OK && getenv("TASK_AUTH") != NULL)
		rc = mcp_server_set_auth(srv, auth, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : 1;
}
