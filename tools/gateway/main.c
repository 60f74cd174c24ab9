/*
 * main.c: mcp-gateway's command line: which way the server moves.
 *
 *   mcp-gateway [SERVER OPTIONS] [GATEWAY OPTIONS] -- CMD [ARGS...]
 *   mcp-gateway --url URL [--header 'K: V' ...] [--transport http|sse]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp.h>

#include "gateway.h"

static const char usage_text[] =
"usage: mcp-gateway [SERVER OPTIONS] [GATEWAY OPTIONS] -- CMD [ARGS...]\n"
"       mcp-gateway --url URL [REMOTE OPTIONS]\n"
"\n"
"The first serves the stdio MCP server CMD on the network (or on stdio),\n"
"with every standard server option (--http ADDR:PORT, --stateless, the\n"
"limits, Host/Origin checks, --auth-token-file...: see below). The second\n"
"serves the remote MCP server at URL on stdin and stdout, for an agent.\n"
"\n"
"Gateway options:\n"
"  --shared           one CMD for every session (ids rewritten), not one\n"
"                     a session\n"
"  --max-children N   at most N CMDs at once; past it a new session gets\n"
"                     503 (default 100)\n"
"  --init-timeout S   seconds CMD has to answer initialize (default 10)\n"
"  --timeout S        seconds a request to CMD may wait without progress\n"
"                     (default: no limit)\n"
"\n"
"Remote options:\n"
"  --url URL          the remote server (http:// or https://)\n"
"  --header 'K: V'    an HTTP header (repeatable); $NAME in V is taken\n"
"                     from the environment\n"
"  --transport T      http (Streamable HTTP, falling back to SSE) or sse\n"
"  --timeout S        seconds a request may wait without progress\n"
"                     (default 300)\n"
"  --cacert FILE      CA certificates for https\n"
"  --insecure         do not verify the server's certificate\n"
"  -v                 log the connection's decisions on stderr\n"
"\n"
"Server options:\n";

void
gw_usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "mcp-gateway: ");
	fprintf(stderr, msg, arg);
	fprintf(stderr, "\ntry 'mcp-gateway --help'\n");
	exit(GW_EX_USAGE);
}

int
main(int argc, char **argv)
{
	mcp_server	*srv;
	char		*help[] = { argv[0], "--help", NULL };
	int		 i, dashdash = 0, url = 0;

	for (i = 1; i < argc && dashdash == 0; i++)
		if (strcmp(argv[i], "--") == 0)
			dashdash = i;
		else if (strcmp(argv[i], "--url") == 0)
			url = 1;
	for (i = 1; i < (dashdash ? dashdash : argc); i++)
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(usage_text, stdout);
			fflush(stdout);
			/* The standard options, as every libmcp server's. */
			srv = mcp_server_new("mcp-gateway", MCP_VERSION);
			i = mcp_server_main(srv, 2, help);
			mcp_server_free(srv);
			return i == MCP_OK ? 0 : 1;
		}
	if (url && dashdash)
		gw_usage_error("%s", "--url and -- CMD: one or the other");
	if (url)
		return gw_remote_main(argc, argv);
	if (dashdash == 0)
		gw_usage_error("%s", "-- CMD [ARGS...] or --url URL is needed");
	return gw_serve_main(argc, argv, dashdash);
}
