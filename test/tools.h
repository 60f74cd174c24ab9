/*
 * tools.h: a server with a tool for every kind of result, for the tests
 * and fuzzers that drive a server in-process (test/t_faults.c,
 * test/fuzz/): echo ("s%", any text), kinds (a block of every kind, one
 * annotated), notes (progress and a log line), structured (an output
 * schema), sleep (cancellable), sample (asks the client, 1 ms to
 * answer); a resource, a template, a prompt with an argument, and
 * completion. The callbacks run on the workers and share nothing.
 */
#ifndef MCP_TOOLS_H
#define MCP_TOOLS_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mcp.h"


static void
echo(mcp_call *call)
{
	const char	*s;
	size_t		 n;

	if (mcp_args_unpack(call, "{s:s%}", "text", &s, &n) == MCP_OK)
		mcp_result_textn(call, s, n);
}

/* A block of every kind. */
static void
kinds(mcp_call *call)
{
	static const unsigned char png[] = { 0x89, 'P', 'N', 'G' };

	mcp_result_text(call, "text");
	mcp_result_annotate(call, 1, 0.5, "2025-01-12T15:00:58Z");
	mcp_result_textf(call, "%s %d", "formatted", 42);
	mcp_result_image(call, png, sizeof(png), "image/png");
	mcp_result_audio(call, png, sizeof(png), "audio/wav");
	mcp_result_resource_text(call, "t://r", "text/plain", "embedded");
	mcp_result_resource_blob(call, "t://b", "application/octet-stream",
	    png, sizeof(png));
	mcp_result_resource_link(call, "t://l", "link", "a link", "text/plain");
}

static void
notes(mcp_call *call)
{
	int	 i;

	for (i = 1; i <= 3; i++)
		mcp_call_progress(call, i, 3, "step");
	mcp_call_log(call, MCP_LOG_NOTICE, "faults", "a log line %d", 1);
	mcp_result_text(call, "noted");
}

static void
structured(mcp_call *call)
{
	mcp_result_json_new(call, json_pack("{s:i, s:[s, s]}", "n", 7,
	    "list", "a", "b"));
}

static void
sample(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_sample(call, json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}",
	    "messages", "role", "user", "content", "type", "text", "text", "hi",
	    "maxTokens", 10), 1, &res);
	mcp_result_textf(call, "sampled: %s", mcp_strerror(rc));
	json_decref(res);
}

static void
read_cb(mcp_call *call)
{
	const char	*v = mcp_call_var(call, "v");

	mcp_result_textf(call, "read %s", v != NULL ? v : "static");
}

static void
prompt_cb(mcp_call *call)
{
	mcp_result_description(call, "a prompt");
	mcp_result_textf(call, "about %s", mcp_call_var(call, "a"));
	mcp_result_role(call, "assistant");
	mcp_result_text(call, "answer");
}

static void
complete_cb(mcp_call *call)
{
	mcp_result_completion(call, "alpha");
	mcp_result_completion(call, "beta");
}

static void
sleep_cb(mcp_call *call)
{
	double		 ms;
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	int		 i;

	if (mcp_args_unpack(call, "{s:F}", "ms", &ms) != MCP_OK)
		return;
	for (i = 0; i < ms / 10 && !mcp_call_cancelled(call); i++)
		nanosleep(&ts, NULL);
	mcp_result_text(call, "slept");
}

static mcp_server *
tools_server(void)
{
	mcp_server	*srv = mcp_server_new("faults", "1");
	int		 rc;

	rc = mcp_tool_register(srv, "echo", "echo", "{\"type\":\"object\","
	    "\"properties\":{\"text\":{\"type\":\"string\"}}}", echo, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "kinds", "every block", NULL,
		    kinds, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "notes", "progress and a log",
		    NULL, notes, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "structured", "json", NULL,
		    structured, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_set_output_schema(srv, "structured",
		    "{\"type\":\"object\",\"required\":[\"n\"],\"properties\":"
		    "{\"n\":{\"type\":\"integer\"},\"list\":{\"type\":\"array\","
		    "\"items\":{\"type\":\"string\"}}}}");
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "sleep", "sleeps", NULL,
		    sleep_cb, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "sample", "asks the client", NULL,
		    sample, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "t://r", "r", "static", "text/plain",
		    read_cb, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_template_register(srv, "t://x/{v}", "x",
		    "template", "text/plain", read_cb, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "p", "a prompt", prompt_cb, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "p", "a", "an argument", 1);
	if (rc == MCP_OK)
		rc = mcp_completion_set(srv, complete_cb, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_set_workers(srv, 2);
	if (rc == MCP_OK)
		rc = mcp_server_set_max_message(srv, 2048);
	if (rc != MCP_OK) {
		fprintf(stderr, "tools_server: setup: %s\n", mcp_strerror(rc));
		exit(2);
	}
	return srv;
}

#endif /* MCP_TOOLS_H */
