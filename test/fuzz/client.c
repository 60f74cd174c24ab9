/*
 * client.c: the client's input path (src/client/client.c, the framings
 * of src/rpc/frame.c) under whatever a hostile server sends. A client is
 * set up ready on a loop of this thread, with eight requests in flight
 * (ids 1 to 8) and a sampling handler that answers every other request
 * at once and keeps the rest, and a transport of this harness that keeps
 * what the client sends. The first input byte picks the framing (JSON
 * lines or an SSE stream, with max-message 4096 so that oversized
 * messages are common), the chunk size and the era (the top bit:
 * 2026-07-28, where input_required results run the sampling handler
 * and retry the request with a new id); the rest is the server's
 * bytes. Checked: each request's callback runs exactly once (answered,
 * failed, or cancelled when the client is freed); every message the
 * client sent is one line of JSON; nothing leaks (LeakSanitizer).
 */
#include "fuzz.h"
#include "client/client-int.h"

#define NREQ	8

static int	 calls[NREQ + 1];
static struct buf sent;
static int	 replies;

static int
t_start(struct mcp_client *c)
{
	(void)c;
	return MCP_OK;
}

static void
t_send(struct mcp_client *c, const char *json, size_t len, struct creq *r)
{
	(void)c;
	(void)r;
	FUZZ_CHECK(memchr(json, '\n', len) == NULL, "a message with a raw "
	    "newline");
	if (sent.len < 1 << 20) {
		(void)mcp__buf_add(&sent, json, len);
		(void)mcp__buf_addc(&sent, '\n');
	}
}

static void
t_forget(struct mcp_client *c, struct creq *r, int answered)
{
	(void)c;
	(void)r;
	(void)answered;
}

static void
t_ready(struct mcp_client *c)
{
	(void)c;
}

static void
t_close(struct mcp_client *c)
{
	(void)c;
}

static const struct ctransport_ops harness_ops = {
	"fuzz", t_start, t_send, t_forget, t_ready, t_close
};

static void
done_cb(mcp_client *c, int rc, json_t *result, void *udata)
{
	long	 k = (long)(intptr_t)udata;

	(void)c;
	FUZZ_CHECK(result != NULL, "a callback without a result or error");
	FUZZ_CHECK(rc == MCP_OK || json_is_object(result), "an error without "
	    "its object");
	calls[k]++;
}

static void
sampling(mcp_client *c, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	(void)c;
	(void)method;
	(void)params;
	(void)udata;
	if (replies++ % 2 == 0)
		(void)mcp_client_reply_result(reply, json_pack("{s:s}",
		    "model", "m"));
	/* else kept unanswered: mcp_client_free lets it go */
}

static int
line_cb(void *arg, const char *p, size_t n)
{
	mcp__client_input(arg, p, n);
	return 0;
}

static void
over_cb(void *arg, const struct idscan *sc)
{
	mcp__client_oversized(arg, sc);
}

static void
event_cb(void *arg, const char *event, const char *data, size_t len,
    const char *id)
{
	(void)id;
	if (strcmp(event, "message") == 0 && len > 0)
		mcp__client_input(arg, data, len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ev_loop	*loop;
	struct mcp_client	*c;
	struct jsonl		 jl;
	struct sse_parser	 sp;
	size_t			 off = 1, n, step;
	long			 k;
	int			 sse, modern;

	if (size == 0)
		return 0;
	if (loop == NULL) {
		mcp_log_set_level(MCP_LOG_ERR - 1);
		loop = ev_loop_new(EVFLAG_AUTO);
	}
	memset(calls, 0, sizeof(calls));
	c = mcp_client_new("fuzz", "1");
	(void)mcp_client_set_loop(c, loop);
	(void)mcp_client_set_option(c, "max-message", "4096");
	(void)mcp_client_on_request(c, "sampling/createMessage", sampling,
	    NULL);
	(void)mcp_client_set_roots_new(c, json_pack("[{s:s}]", "uri",
	    "file:///r"));
	/* Ready, as after an initialization, on this thread's loop. */
	c->ops = &harness_ops;
	/* The first byte's top bit: protocol 2026-07-28, whose results
	 * are checked and whose input_required results run the handlers
	 * and retry (multi round-trip). */
	modern = data[0] >> 7;
	c->modern = modern;
	c->caps_now = json_object();
	c->state = CS_READY;
	c->thread = pthread_self();
	c->thread_started = 1;
	ev_async_init(&c->wake, NULL);
	snprintf(c->negotiated, sizeof(c->negotiated), "%s", modern ?
	    "2026-07-28" : "2025-11-25");
	for (k = 1; k <= NREQ; k++)
		(void)mcp_client_request_async_new(c, k % 2 ? "tools/call" :
		    "resources/read", json_pack("{s:s}", "name", "t"), done_cb,
		    (void *)(intptr_t)k, NULL);

	sse = data[0] & 1;
	step = (size_t)((data[0] >> 1) & 0x3f) + 1;
	mcp__jsonl_init(&jl, c->max_message);
	mcp__sse_parser_init(&sp, c->max_message);
	while (off < size) {
		n = size - off < step ? size - off : step;
		if (sse) {
			FUZZ_CHECK(mcp__sse_feed(&sp, (const char *)data + off,
			    n, event_cb, over_cb, c) == MCP_OK, "sse_feed");
		} else {
			if (mcp__jsonl_reserve(&jl, n) != MCP_OK)
				abort();
			memcpy(jl.in.data + jl.in.len, data + off, n);
			(void)mcp__jsonl_split(&jl, n, line_cb, over_cb, c);
		}
		off += n;
	}
	if (!sse)
		mcp__jsonl_end(&jl, line_cb, over_cb, c);
	mcp__jsonl_free(&jl);
	mcp__sse_parser_free(&sp);
	mcp_client_free(c);
	for (k = 1; k <= NREQ; k++)
		FUZZ_CHECK(calls[k] == 1, "request %ld: its callback ran %d "
		    "times", k, calls[k]);
	fuzz_json_lines(sent.data, sent.len);
	mcp__buf_reset(&sent);
	return 0;
}
