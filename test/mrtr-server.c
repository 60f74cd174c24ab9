/*
 * mrtr-server: the server of test/mrtr.sh, whose callbacks ask the
 * client in ways the plain sample, elicit and roots tools of
 * feat-server do not; each is written as for a legacy session (ask,
 * check the return code, return) and works in both:
 *
 *   ask_twice     {greeting}: elicits a name, then samples
 *                 "<greeting> <name>", and answers "round R: name=N,
 *                 model=TEXT"; a failure is an isError result
 *   both          elicits and lists the roots without looking at the
 *                 first return code in between, so that one round asks
 *                 both; "elicit=ACTION roots=N" once both are answered,
 *                 else "partial" (which a 2026-07-28 client never sees)
 *   many          {n}: asks for n elicitations at once (n up to 20),
 *                 then answers "answered K of n: first failure RC"
 *   loop_sample   a loop tool (MCP_TOOL_LOOP) that samples, and says
 *                 so when it runs off the loop thread; it may run as
 *                 a task
 *   task_ask      a tool that may run as a task (2026-07-28's tasks
 *                 extension) and elicits, as ask_prompt does; as a
 *                 task it asks through its task (tasks/update)
 *   defer_ask     defers its call (mcp_call_defer), and a thread of its
 *                 own elicits, answers "deferred round R: name=N" and
 *                 finishes it (mcp_call_finish)
 *   ask_prompt    a prompt: elicits a topic, one message about it
 *   mrtr://roots  a resource: the client's roots, as JSON text
 *
 * With MRTR_AUTH set in the environment, over HTTP a bearer token
 * "user-NAME" is let in as the subject NAME (mcp_server_set_auth(3)),
 * the principal a requestState is bound to.
 *
 * Built by the Makefile, never installed; the public header only.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp.h>

static pthread_t loop_thread;

static const char greeting_schema[] = "{\"type\":\"object\","
    "\"properties\":{\"greeting\":{\"type\":\"string\"}},"
    "\"required\":[\"greeting\"]}";
static const char n_schema[] = "{\"type\":\"object\","
    "\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0,"
    "\"maximum\":20}},\"required\":[\"n\"]}";

static json_t *
form(const char *message)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "mode",
	    "form", "message", message, "requestedSchema", "type", "object",
	    "properties", "name", "type", "string", "required", "name");
}

static json_t *
sampling(const char *text)
{
	return json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role",
	    "user", "content", "type", "text", "text", text, "maxTokens", 50);
}

static const char *
elicited(const json_t *res, const char *field)
{
	const char	*v;

	v = json_string_value(json_object_get(json_object_get(res, "content"),
	    field));
	return v != NULL ? v : "(none)";
}

static const char *
sampled(const json_t *res)
{
	const char	*v;

	v = json_string_value(json_object_get(json_object_get(res, "content"),
	    "text"));
	return v != NULL ? v : "(none)";
}

static void
ask_twice(mcp_call *call)
{
	const char	*greeting;
	json_t		*who = NULL, *said = NULL;
	char		 text[300];
	int		 rc;

	if (mcp_args_unpack(call, "{s:s}", "greeting", &greeting) != MCP_OK)
		return;
	rc = mcp_call_elicit(call, form("Your name?"), 0, &who);
	if (rc != MCP_OK) {
		mcp_result_errorf(call, "elicitation failed: %s",
		    mcp_strerror(rc));
		return;
	}
	snprintf(text, sizeof(text), "%s %s", greeting, elicited(who, "name"));
	rc = mcp_call_sample(call, sampling(text), 0, &said);
	if (rc != MCP_OK)
		mcp_result_errorf(call, "sampling failed: %s",
		    mcp_strerror(rc));
	else
		mcp_result_textf(call, "round %d: name=%s, model=%s",
		    mcp_call_round(call), elicited(who, "name"),
		    sampled(said));
	json_decref(who);
	json_decref(said);
}

static void
both(mcp_call *call)
{
	json_t	*e = NULL, *r = NULL;
	int	 erc, rrc;

	erc = mcp_call_elicit(call, form("Both: your name?"), 0, &e);
	rrc = mcp_call_roots(call, 0, &r);
	if (erc == MCP_OK && rrc == MCP_OK)
		mcp_result_textf(call, "elicit=%s roots=%zu",
		    json_string_value(json_object_get(e, "action")) != NULL ?
		    json_string_value(json_object_get(e, "action")) : "?",
		    json_array_size(json_object_get(r, "roots")));
	else
		mcp_result_text(call, "partial");
	json_decref(e);
	json_decref(r);
}

static void
many(mcp_call *call)
{
	json_t		*res;
	char		 msg[40];
	int		 n, i, rc, answered = 0, first = MCP_OK;

	if (mcp_args_unpack(call, "{s:i}", "n", &n) != MCP_OK)
		return;
	for (i = 0; i < n; i++) {
		snprintf(msg, sizeof(msg), "question %d", i + 1);
		res = NULL;
		rc = mcp_call_elicit(call, form(msg), 0, &res);
		json_decref(res);
		if (rc == MCP_OK)
			answered++;
		else if (first == MCP_OK)
			first = rc;
	}
	mcp_result_textf(call, "answered %d of %d: first failure %s",
	    answered, n, first == MCP_OK ? "none" : mcp_strerror(first));
}

static void
loop_sample(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_sample(call, sampling("from the loop"), 0, &res);
	if (rc != MCP_OK)
		mcp_result_errorf(call, "sampling failed: %s",
		    mcp_strerror(rc));
	else
		mcp_result_textf(call, "loop model=%s%s", sampled(res),
		    pthread_equal(pthread_self(), loop_thread) ? "" :
		    " (off the loop thread)");
	json_decref(res);
}

static void
ask_prompt(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, form("Which topic?"), 0, &res);
	if (rc != MCP_OK) {
		mcp_result_errorf(call, "elicitation failed: %s",
		    mcp_strerror(rc));
		return;
	}
	mcp_result_textf(call, "Tell me about %s.", elicited(res, "name"));
	json_decref(res);
}

static void
task_ask(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, form("Task: your name?"), 0, &res);
	if (rc != MCP_OK)
		mcp_result_errorf(call, "elicitation failed: %s",
		    mcp_strerror(rc));
	else
		mcp_result_textf(call, "task name=%s", elicited(res, "name"));
	json_decref(res);
}

/* The thread that holds a deferred call: asks, answers, finishes. */
static void *
defer_main(void *arg)
{
	mcp_call	*call = arg;
	json_t		*res = NULL;
	int		 rc;

	rc = mcp_call_elicit(call, form("Deferred: your name?"), 0, &res);
	if (rc != MCP_OK)
		mcp_result_errorf(call, "elicitation failed: %s",
		    mcp_strerror(rc));
	else
		mcp_result_textf(call, "deferred round %d: name=%s",
		    mcp_call_round(call), elicited(res, "name"));
	json_decref(res);
	mcp_call_finish(call);
	return NULL;
}

static void
defer_ask(mcp_call *call)
{
	pthread_t	 t;
	int		 rc;

	if (mcp_call_defer(call) != MCP_OK) {
		mcp_result_error(call, "mcp_call_defer failed");
		return;
	}
	rc = pthread_create(&t, NULL, defer_main, call);
	if (rc != 0) {
		mcp_result_errorf(call, "pthread_create: %s", strerror(rc));
		mcp_call_finish(call);
		return;
	}
	pthread_detach(t);
}

static void
roots_read(mcp_call *call)
{
	json_t	*res = NULL;
	char	*list;
	int	 rc;

	rc = mcp_call_roots(call, 0, &res);
	if (rc != MCP_OK) {
		mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR,
		    mcp_strerror(rc));
		return;
	}
	list = json_dumps(json_object_get(res, "roots"), JSON_COMPACT);
	mcp_result_text(call, list != NULL ? list : "?");
	free(list);
	json_decref(res);
}

/* MRTR_AUTH: "user-NAME" is NAME. Loop thread. */
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
	mcp_server	*srv;
	int		 rc;

	loop_thread = pthread_self();	/* mcp_server_main's loop */
	srv = mcp_server_new("mrtr-server", "1.0.0");
	rc = mcp_tool_register(srv, "ask_twice", "Elicits a name, then "
	    "samples a greeting", greeting_schema, ask_twice, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "both", "Elicits and lists the "
		    "roots in one round", NULL, both, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "many", "Asks n questions at once",
		    n_schema, many, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "loop_sample", "Samples from the "
		    "loop thread", NULL, loop_sample, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_set_flags(srv, "loop_sample", MCP_TOOL_LOOP |
		    MCP_TOOL_TASK_OPTIONAL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "defer_ask", "Elicits from a thread "
		    "of its own", NULL, defer_ask, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "task_ask", "Elicits, as a task",
		    NULL, task_ask, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_set_flags(srv, "task_ask",
		    MCP_TOOL_TASK_OPTIONAL);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "ask_prompt", "Elicits a topic",
		    ask_prompt, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "mrtr://roots", "roots",
		    "The client's roots", "application/json", roots_read, NULL,
		    NULL);
	if (rc == MCP_OK && getenv("MRTR_AUTH") != NULL)
		rc = mcp_server_set_auth(srv, auth, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : 1;
}
