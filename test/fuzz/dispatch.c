/*
 * dispatch.c: one session's JSON-RPC and MCP dispatch (src/protocol.c,
 * src/session.c, src/call.c, the pool, src/features.c, src/clientreq.c)
 * fed arbitrary lines, with tools that produce every kind of result
 * (test/tools.h). The session is a real one whose transport keeps what
 * it is sent; the server's loop runs here (test/driver.h) until every
 * call has come back; sleep and structured may, or must, run as tasks.
 * Checked: every message sent is JSON; every session is freed once it
 * ends (no call, no task, left behind).
 */
#include "fuzz.h"
#include "driver.h"
#include "tools.h"

static struct drv	 d;
static int		 sent;

static int
cap_send(struct session *s, void *route, const char *json, size_t len,
    int final)
{
	struct json_perr e;
	json_t		*v;

	(void)s;
	(void)route;
	(void)final;
	v = mcp__json_parse(json, len, &e);
	FUZZ_CHECK(json_is_object(v) || json_is_array(v), "the session sent "
	    "something that is not JSON-RPC: %.*s", (int)(len > 200 ? 200 :
	    len), json);
	json_decref(v);
	sent++;
	return MCP_OK;
}

static const struct session_ops cap_ops = { cap_send, NULL, NULL };

static int
idle(struct drv *dd, const void *arg)
{
	const struct session *s = arg;

	(void)dd;
	return s->pending == 0;
}

static int
gone(struct drv *dd, const void *arg)
{
	(void)arg;
	return dd->srv->sessions == NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data, *end = p + size, *nl;
	struct session	*s;

	if (d.srv == NULL) {
		mcp_log_set_level(MCP_LOG_ERR - 1);
		d.srv = tools_server();
		/* Calls of any length come in: cut them at 100 ms. */
		mcp_server_set_option(d.srv, "tool-timeout", "100");
		/* Tasks (2025-11-25 sessions): sleep may be one, structured
		 * must be. */
		mcp_tool_set_flags(d.srv, "sleep", MCP_TOOL_TASK_OPTIONAL);
		mcp_tool_set_flags(d.srv, "structured",
		    MCP_TOOL_TASK_REQUIRED);
		if (drv_start(&d, d.srv, 0) != MCP_OK)
			abort();
	}
	s = mcp__session_new(d.srv, &cap_ops, NULL);
	if (s == NULL)
		abort();
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		if (nl > p)
			mcp__protocol_input(s, p, (size_t)(nl - p), NULL);
		p = nl + 1;
	}
	drv_until(&d, idle, s, 5);
	mcp__session_close(s);
	FUZZ_CHECK(drv_until(&d, gone, NULL, 5), "a session outlived its "
	    "calls by 5 s");
	return 0;
}
