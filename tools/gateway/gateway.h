/*
 * gateway.h: tools/mcp-gateway, which moves an MCP server from one side
 * of the wire to the other, in two modes that share only this header and
 * the command line (main.c):
 *
 *   serve.c    a stdio server (a child process) on the network: the
 *              library's HTTP transports as a relay, a child per session
 *              or one for all (--shared)
 *   remote.c   a remote HTTP server on stdio, through the client library
 */
#ifndef GATEWAY_H
#define GATEWAY_H

#define GW_EX_USAGE	2	/* a bad command line */

/* Prints "mcp-gateway: " MSG (with ARG) and a hint; exits GW_EX_USAGE. */
void	 gw_usage_error(const char *msg, const char *arg)
	    __attribute__((noreturn));
/* mcp-gateway --url URL ...: the whole process. */
int	 gw_remote_main(int argc, char **argv);
/* mcp-gateway [SERVER OPTIONS] -- CMD ...: ARGV[DASHDASH] is the "--". */
int	 gw_serve_main(int argc, char **argv, int dashdash);

#endif /* GATEWAY_H */
