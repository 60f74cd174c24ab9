/*
 * version.c: the library's version and error strings. Pure; any thread.
 */
#include "core/core.h"

int
mcp_version_num(void)
{
	return MCP_VERSION_NUM;
}

const char *
mcp_version(void)
{
	return MCP_VERSION;
}

const char *
mcp_strerror(int code)
{
	switch (code) {
	case MCP_OK:
		return "success";
	case MCP_ENOMEM:
		return "out of memory";
	case MCP_EINVAL:
		return "invalid argument";
	case MCP_EEXIST:
		return "already exists";
	case MCP_ESTATE:
		return "not allowed in this state";
	case MCP_ESYS:
		return "system call failed";
	case MCP_ENOENT:
		return "no such tool, resource, prompt or session";
	case MCP_EUSAGE:
		return "bad command line";
	case MCP_ETIMEDOUT:
		return "timed out";
	case MCP_ECLIENT:
		return "the client answered with an error";
	case MCP_ECANCELED:
		return "cancelled";
	case MCP_ESERVER:
		return "the server answered with an error";
	case MCP_EPROTO:
		return "protocol error";
	case MCP_EIO:
		return "connection failed or lost";
	case MCP_EINPUT:
		return "input from the client is needed: the request is "
		    "answered input_required and retried";
	default:
		return "unknown error";
	}
}
