/*
 * progress-server: the libmcp side of bench/run-progress.sh, built with
 * the public API only, like tools/mcp-demo.c.  Two tools taking {"text"}
 * and returning it: "echo", and "progress10", which first reports
 * progress 1..10 of 10 with mcp_call_progress (sent only when the
 * request carries params._meta.progressToken).  The difference in server
 * CPU per call between the two, over 10, is the cost of one progress
 * notification.  Its peer is test/node/bench-progress-stdio.mjs.
 */
#include <mcp.h>

static const char text_schema[] =
    "{\"type\":\"object\",\"required\":[\"text\"],"
    "\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"additionalProperties\":false}";

static void
echo(mcp_call *call)
{
	const char	*text;

	if (mcp_args_unpack(call, "{s:s}", "text", &text) != MCP_OK)
		return;
	mcp_result_text(call, text);
}

static void
progress10(mcp_call *call)
{
	const char	*text;
	int		 i;

	if (mcp_args_unpack(call, "{s:s}", "text", &text) != MCP_OK)
		return;
	for (i = 1; i <= 10; i++)
		if (mcp_call_progress(call, i, 10, NULL) != MCP_OK) {
			mcp_result_error(call, "progress failed");
			return;
		}
	mcp_result_text(call, text);
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv;
	int		 rc;

	srv = mcp_server_new("progress-server", MCP_VERSION);
	rc = mcp_tool_register(srv, "echo", "Returns the text it is given.",
	    text_schema, echo, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "progress10", "Reports progress "
		    "1 to 10 of 10, then returns the text it is given.",
		    text_schema, progress10, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	else
		mcp_log(MCP_LOG_ERR, "setup: %s", mcp_strerror(rc));
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
