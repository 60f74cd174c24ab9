/*
 * flags-server: the server of test/flags.sh, a flag of each type beside
 * the standard command line (mcp_server_add_flag(3)). Its one tool,
 * "flags", reads every flag on a worker thread and answers with their
 * values, one "name=value" a line, and MCP_HTTP's as it sees it then.
 * FLAGS_SERVER_PREFIX, when set, is
 * its variables' prefix instead of the default FLAGS_TEST_. Built by the
 * Makefile, never installed; the public header only.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mcp.h>

static void
flags(mcp_call *call)
{
	mcp_server	*srv = mcp_call_udata(call);
	const char	*db, *token, *http;

	db = mcp_server_flag_str(srv, "db");
	token = mcp_server_flag_str(srv, "token");
	http = getenv("MCP_HTTP");
	mcp_result_textf(call, "db=%s\nport=%lld\nport-text=%s\n"
	    "readonly=%d\ncache=%d\ntoken=%s\nquiet-sql=%d\nMCP_HTTP=%s\n",
	    db != NULL ? db : "(none)", mcp_server_flag_int(srv, "port"),
	    mcp_server_flag_str(srv, "port"),
	    mcp_server_flag_bool(srv, "readonly"),
	    mcp_server_flag_bool(srv, "cache"),
	    token != NULL ? token : "(none)",
	    mcp_server_flag_bool(srv, "quiet-sql"),
	    http != NULL ? http : "(unset)");
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv = mcp_server_new("flags-test", "1.0.0");
	const char	*prefix = getenv("FLAGS_SERVER_PREFIX");
	int		 rc;

	rc = mcp_server_add_flag(srv, "db", MCP_FLAG_STR | MCP_FLAG_REQUIRED,
	    NULL, "the database file");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "port", MCP_FLAG_INT, "5432",
		    "the database server's port");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "readonly", MCP_FLAG_BOOL, NULL,
		    "refuse every write");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "cache", MCP_FLAG_BOOL, "true",
		    "keep query results in memory, for as long as the "
		    "process runs or until a write to a table they were read "
		    "from");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "token", MCP_FLAG_STR, NULL,
		    "the API token");
	if (rc == MCP_OK)
		rc = mcp_server_set_flag_env(srv, "token", "FLAGS_API_TOKEN");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "quiet-sql", MCP_FLAG_BOOL, NULL,
		    "log no SQL");
	if (rc == MCP_OK)
		rc = mcp_server_set_flag_env(srv, "quiet-sql", NULL);
	if (rc == MCP_OK && prefix != NULL)
		rc = mcp_server_set_env_prefix(srv, prefix);
	if (rc == MCP_OK)
		rc = mcp_tool_register(srv, "flags", "The flags' values.", NULL,
		    flags, srv, NULL);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	else
		fprintf(stderr, "flags-server: setup: %s\n", mcp_strerror(rc));
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
