/*
 * client.c: the client's core, mcp_client_*: the request table, the
 * initialization, timeouts and cancellation, the server's requests and
 * notifications, and the blocking wrappers. Transports (stdio.c,
 * http.c) turn bytes into messages for it.
 *
 * Threads: the core runs on one loop thread, the client's own (the
 * synchronous use) or the caller's (mcp_client_set_loop). Other threads
 * reach it through the submit queue: a request, a cancel or a reply is
 * queued under c->lock and the loop is woken with ev_async; a blocking
 * call then waits on a condition variable of its own stack frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client-int.h"

static void	 run_queue(struct mcp_client *);
static int	 request(struct mcp_client *, const char *, json_t *,
		    json_t **);
static int	 notify(struct mcp_client *, const char *, json_t *);
static void	 connect_signal(struct mcp_client *, int);
static void	 send_body(struct mcp_client *, const char *, size_t);
static void	 ready_signal(struct mcp_client *, int, json_t *);
static void	 start_request(struct mcp_client *, struct creq *);
static void	 send_initialize(struct mcp_client *);
static void	 send_discover(struct mcp_client *);
static int	 mrtr_answer(struct mcp_client *, struct creq *, json_t *);
static void	 mrtr_input(struct mcp_client *, struct creq *);
static void	 xh_learn(struct mcp_client *, struct creq *, json_t *);
static void	 xh_clear(struct mcp_client *);
static void	 listen_ready(struct mcp_client *);

/* ---- Small things ---------------------------------------------------- */

static char *
dupstr(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* Is this the thread that runs the client's loop? */
static int
on_loop(struct mcp_client *c)
{
	return c->thread_started && pthread_equal(pthread_self(), c->thread);
}

/* An error object {code, message}, as every failed request reports. */
static json_t *
err_object(int rc, const char *why)
{
	return json_pack("{s:i, s:s}", "code", rc, "message",
	    why != NULL ? why : mcp_strerror(rc));
}

static void
creq_free(struct creq *r)
{
	if (r == NULL)
		return;
	free(r->method);
	json_decref(r->params);
	free(r->body);
	free(r->reason);
	free(r->hname);
	json_decref(r->pheaders);
	json_decref(r->inputs);
	json_decref(r->state);
	free(r->key);
	json_decref(r->value);
	free(r);
}

/* Is the client on Streamable HTTP in 2026-07-28, where a request's
 * stream is its own and closing it is the cancellation? */
static int
modern_http(struct mcp_client *c)
{
	return c->modern && c->ops == &mcp__client_http_ops;
}

/* R leaves the list of requests in a multi round-trip. */
static void
mrtr_unlink(struct mcp_client *c, struct creq *r)
{
	struct creq	**pp;

	if (!r->in_mrtr)
		return;
	for (pp = &c->mrtr; *pp != NULL; pp = &(*pp)->mnext)
		if (*pp == r) {
			*pp = r->mnext;
			break;
		}
	r->in_mrtr = 0;
	r->mnext = NULL;
}

/* The request in a multi round-trip that its caller knows as ID. */
static struct creq *
mrtr_find(struct mcp_client *c, long long id)
{
	struct creq	*r;

	for (r = c->mrtr; r != NULL; r = r->mnext)
		if (r->first_id == id)
			return r;
	return NULL;
}

void
mcp__client_trace(struct mcp_client *c, int out, const char *json,
    size_t len)
{
	if (c->on_trace != NULL)
		c->on_trace(c, out, json, len, c->trace_udata);
}

/* ---- Ending a request ------------------------------------------------ */

/*
 * R is over: out of the table, its timer stopped, the transport told,
 * and its callback run with RC and RESULT (borrowed). R is freed.
 */
static void
finish(struct mcp_client *c, struct creq *r, int rc, json_t *result)
{
	if (r->sent)
		(void)mcp__pending_take(&c->pend, r->pe.id);
	ev_timer_stop(c->loop, &r->timer);
	if (r->tstate != NULL && c->ops != NULL)
		c->ops->forget(c, r, rc == MCP_OK || rc == MCP_ESERVER);
	if (r == c->init)
		c->init = NULL;
	if (r == c->probe)
		c->probe = NULL;
	mrtr_unlink(c, r);
	if (c->modern && rc == MCP_OK && r->method != NULL &&
	    strcmp(r->method, "tools/list") == 0)
		xh_learn(c, r, result);
	if (r->cb != NULL)
		r->cb(c, rc, result, r->udata);
	creq_free(r);
}

static void
finish_err(struct mcp_client *c, struct creq *r, int rc, const char *why)
{
	json_t	*e = err_object(rc, why);

	finish(c, r, rc, e);
	json_decref(e);
}

/* notifications/cancelled for the request of ID, as the spec asks when
 * a client stops waiting (never for initialize). */
static void
send_cancelled(struct mcp_client *c, long long id, const char *reason)
{
	json_t		*params;
	struct buf	 b = { 0 };

	if (c->state != CS_READY || modern_http(c))
		return;		/* on HTTP in 2026-07-28: the stream closed */
	params = json_pack("{s:I, s:s}", "requestId", (json_int_t)id,
	    "reason", reason != NULL ? reason : "cancelled");
	if (params != NULL && mcp__rpc_notification(&b,
	    "notifications/cancelled", params) == MCP_OK)
		send_body(c, b.data, b.len);
	json_decref(params);
	mcp__buf_free(&b);
}

/* The initialize's own callback (init_done) ends the connection. */
void
mcp__client_fail(struct mcp_client *c, struct creq *r, int rc,
    const char *why)
{
	finish_err(c, r, rc, why);
}

/* Fails every request in flight or held. */
static void
fail_all(struct mcp_client *c, int rc, const char *why)
{
	struct pending_entry	*e;
	struct creq		*r;

	while ((r = c->held) != NULL) {
		c->held = r->next;
		finish_err(c, r, rc, why);
	}
	while ((e = mcp__pending_pop(&c->pend)) != NULL) {
		r = (struct creq *)e;
		r->sent = 0;		/* already out of the table */
		finish_err(c, r, rc, why);
	}
	/* Those waiting for the client's own answers to inputRequests. */
	while ((r = c->mrtr) != NULL)
		finish_err(c, r, rc, why);
}

void
mcp__client_lost(struct mcp_client *c, int rc, const char *why)
{
	if (c->state == CS_LOST || c->state == CS_CLOSED)
		return;
	if (c->err[0] == '\0')
		snprintf(c->err, sizeof(c->err), "%s", why != NULL ? why :
		    mcp_strerror(rc));
	if (c->connect_rc == MCP_OK)
		c->connect_rc = rc;
	MCP_LOG(MCP_LOG_INFO, "client: %s", c->err);
	c->state = CS_LOST;
	/* A refused initialize is the connection's end, not an answer: what
	 * waited for it fails as not connected. */
	fail_all(c, rc == MCP_ESERVER ? MCP_EIO : rc, c->err);
	connect_signal(c, c->connect_rc);
	if (c->on_ready != NULL) {
		json_t *e = err_object(c->connect_rc, c->err);

		ready_signal(c, c->connect_rc, e);
		json_decref(e);
	} else if (c->was_ready && c->on_lost != NULL) {
		json_t		*e = err_object(rc, c->err);
		mcp_client_cb	 fn = c->on_lost;

		c->on_lost = NULL;
		fn(c, rc, e, c->lost_udata);
		json_decref(e);
	}
}

/* The first initialization ended: the on_ready callback, once. */
static void
ready_signal(struct mcp_client *c, int rc, json_t *result)
{
	mcp_client_cb	 fn = c->on_ready;

	if (rc == MCP_OK)
		c->was_ready = 1;
	if (fn == NULL)
		return;
	c->on_ready = NULL;
	fn(c, rc, result, c->ready_udata);
}

/* ---- Timeouts -------------------------------------------------------- */

/*
 * A request's timer: "timeout" seconds without an answer (or, with
 * progress-resets-timeout, without progress either), and never more
 * than "max-timeout" in all. The server is told with
 * notifications/cancelled, unlike clients that only give up locally.
 */
static void
timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct creq		*r = w->data;
	struct mcp_client	*c = r->c;
	char			 why[120];
	long long		 id = r->pe.id;
	int			 internal = r->internal;

	(void)loop;
	(void)revents;
	snprintf(why, sizeof(why), "%s: no answer in %.3g s", r->method,
	    ev_now(c->loop) - r->started);
	finish_err(c, r, MCP_ETIMEDOUT, why);
	if (!internal)
		send_cancelled(c, id, "timeout");
}

static void
arm(struct mcp_client *c, struct creq *r)
{
	double	 t = c->timeout;

	if (r->is_listen)
		return;		/* open until closed */
	if (r == c->probe && c->probe_timeout < t)
		t = c->probe_timeout;
	if (c->max_timeout > 0) {
		double left = r->started + c->max_timeout - ev_now(c->loop);

		if (left < t)
			t = left > 0 ? left : 0.001;
	}
	ev_timer_stop(c->loop, &r->timer);
	ev_timer_set(&r->timer, t, 0.);
	ev_timer_start(c->loop, &r->timer);
}

/* ---- Sending --------------------------------------------------------- */

/* Does METHOD carry a progress token? tools/call always does, so that
 * progress can extend its timeout; the rest when someone listens. */
static int
wants_progress(struct mcp_client *c, const char *method)
{
	if (!c->progress || strcmp(method, "initialize") == 0 ||
	    strcmp(method, "ping") == 0 ||
	    strcmp(method, "server/discover") == 0)
		return 0;
	return c->on_progress != NULL || strcmp(method, "tools/call") == 0;
}

#define K_VERSION	"io.modelcontextprotocol/protocolVersion"
#define K_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define K_INFO		"io.modelcontextprotocol/clientInfo"
#define K_LEVEL		"io.modelcontextprotocol/logLevel"
#define K_SERVER	"io.modelcontextprotocol/serverInfo"

/* The member of params that Mcp-Name mirrors, or NULL: also the methods
 * a server may answer with input_required. */
static const char *
name_member(const char *method)
{
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		return "name";
	if (strcmp(method, "resources/read") == 0)
		return "uri";
	return NULL;
}

/* ---- 2026-07-28: x-mcp-header, Mcp-Param-* ------------------------- */

static void
xh_clear(struct mcp_client *c)
{
	int	 i;

	for (i = 0; i < c->nxtools; i++) {
		free(c->xtools[i].name);
		mcp__xheader_free(c->xtools[i].xh, c->xtools[i].n);
	}
	free(c->xtools);
	c->xtools = NULL;
	c->nxtools = 0;
}

static struct xtool *
xh_find(struct mcp_client *c, const char *name)
{
	int	 i;

	for (i = 0; i < c->nxtools; i++)
		if (strcmp(c->xtools[i].name, name) == 0)
			return &c->xtools[i];
	return NULL;
}

/* NAME's annotations XH (N of them), taken; replacing any before. */
static void
xh_put(struct mcp_client *c, const char *name, struct xheader *xh, int n)
{
	struct xtool	*t = xh_find(c, name), *nt;

	if (t != NULL) {
		mcp__xheader_free(t->xh, t->n);
		t->xh = xh;
		t->n = n;
		return;
	}
	if (c->nxtools >= MCP_CLIENT_XTOOLS) {
		mcp_log(MCP_LOG_WARN, "client: tools/list: more than %d tools "
		    "with x-mcp-header annotations; %.100s's are not kept "
		    "(its calls go without Mcp-Param-* headers)",
		    MCP_CLIENT_XTOOLS, name);
		mcp__xheader_free(xh, n);
		return;
	}
	nt = realloc(c->xtools, (size_t)(c->nxtools + 1) * sizeof(*nt));
	if (nt == NULL || (nt[c->nxtools].name = strdup(name)) == NULL) {
		if (nt != NULL)
			c->xtools = nt;
		mcp__xheader_free(xh, n);
		return;
	}
	c->xtools = nt;
	nt[c->nxtools].xh = xh;
	nt[c->nxtools].n = n;
	c->nxtools++;
}

/*
 * A tools/list result R asked for: the annotations of each tool learnt
 * (the map starts again with a listing's first page), and each tool
 * whose annotations break the spec's rules taken out of the result,
 * with a warning (basic/transports/streamable-http: the client MUST
 * reject them). Every transport: a definition is bad wherever it is
 * read; only HTTP sends the headers.
 */
static void
xh_learn(struct mcp_client *c, struct creq *r, json_t *result)
{
	json_t		*tools = json_object_get(result, "tools"), *t;
	struct xheader	*xh;
	const char	*name;
	char		 why[300];
	size_t		 i = 0;
	int		 n, rc;

	if (!json_is_array(tools))
		return;
	if (json_object_get(r->params, "cursor") == NULL)
		xh_clear(c);
	while (i < json_array_size(tools)) {
		t = json_array_get(tools, i);
		name = json_string_value(json_object_get(t, "name"));
		why[0] = '\0';
		rc = mcp__xheader_scan(json_object_get(t, "inputSchema"), &xh,
		    &n, why, sizeof(why));
		if (rc == MCP_EINVAL) {
			mcp_log(MCP_LOG_WARN, "client: tools/list: tool %.100s "
			    "left out: its x-mcp-header breaks the rules: %s",
			    name != NULL ? name : "(no name)", why);
			(void)json_array_remove(tools, i);
			continue;
		}
		if (rc == MCP_OK && n > 0 && name != NULL)
			xh_put(c, name, xh, n);
		else if (rc == MCP_OK)
			mcp__xheader_free(xh, n);
		i++;
	}
}

/*
 * "Mcp-Param-NAME: V" as the spec wants the value: plain when it is
 * visible ASCII with inner spaces only, else (control bytes, non-ASCII,
 * a NUL, spaces at an end, empty, or what looks like the encoding
 * itself) "=?base64?...?=" of its bytes. NULL on ENOMEM.
 */
static char *
param_line(const char *name, const char *v, size_t n)
{
	size_t		 i, len;
	int		 plain = n > 0 && v[0] != ' ' && v[n - 1] != ' ';
	char		*b64, *out;

	for (i = 0; plain && i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			plain = 0;
	if (plain && n >= 11 && strncmp(v, "=?base64?", 9) == 0 &&
	    strncmp(v + n - 2, "?=", 2) == 0)
		plain = 0;
	if (plain) {
		len = strlen(name) + n + 16;
		if ((out = malloc(len)) != NULL)
			snprintf(out, len, "Mcp-Param-%s: %.*s", name, (int)n,
			    v);
		return out;
	}
	if ((b64 = mcp__base64(v, n)) == NULL)
		return NULL;
	len = strlen(name) + strlen(b64) + 28;
	if ((out = malloc(len)) != NULL)
		snprintf(out, len, "Mcp-Param-%s: =?base64?%s?=", name, b64);
	free(b64);
	return out;
}

/* R, a tools/call over HTTP: the Mcp-Param-* lines of the arguments
 * its tool's annotations name (none for a tool not listed yet). */
static int
xh_headers(struct mcp_client *c, struct creq *r)
{
	struct xtool	*t;
	json_t		*args, *list;
	const char	*val;
	char		 buf[32], *line;
	size_t		 len;
	int		 i;

	json_decref(r->pheaders);
	r->pheaders = NULL;
	if (r->hname == NULL || (t = xh_find(c, r->hname)) == NULL)
		return MCP_OK;
	args = json_object_get(r->params, "arguments");
	if ((list = json_array()) == NULL)
		return MCP_ENOMEM;
	for (i = 0; i < t->n; i++) {
		if (mcp__xheader_value(t->xh, i, args, buf, sizeof(buf), &val,
		    &len) != 1)
			continue;	/* absent: no header */
		if (len > MCP_CLIENT_XVALUE) {
			mcp_log(MCP_LOG_WARN, "client: tools/call %.100s: the "
			    "argument of Mcp-Param-%s is over %d bytes; not "
			    "sent as a header", r->hname,
			    mcp__xheader_name(t->xh, i), MCP_CLIENT_XVALUE);
			continue;
		}
		line = param_line(mcp__xheader_name(t->xh, i), val, len);
		if (line == NULL || json_array_append_new(list,
		    json_string(line)) != 0) {
			free(line);
			json_decref(list);
			return MCP_ENOMEM;
		}
		free(line);
	}
	r->pheaders = list;
	return MCP_OK;
}

/*
 * 2026-07-28: what every request carries in params._meta (the version,
 * the client's capabilities and identity, the log level asked for), and
 * the name its Mcp-Name header mirrors. A _meta that is not an object
 * is left for the server to refuse.
 */
static int
modern_meta(struct mcp_client *c, struct creq *r)
{
	json_t		*meta;
	const char	*member;

	if (r->params == NULL && (r->params = json_object()) == NULL)
		return MCP_ENOMEM;
	meta = json_object_get(r->params, "_meta");
	if (meta == NULL) {
		meta = json_object();
		if (json_object_set_new(r->params, "_meta", meta) != 0)
			return MCP_ENOMEM;
	}
	if (json_is_object(meta) &&
	    (json_object_set_new(meta, K_VERSION,
	    json_string(MCP_CLIENT_MODERN)) != 0 ||
	    json_object_set_new(meta, K_CAPS, c->caps_now != NULL ?
	    json_deep_copy(c->caps_now) : json_object()) != 0 ||
	    json_object_set_new(meta, K_INFO, json_pack("{s:s, s:s}", "name",
	    c->name, "version", c->version)) != 0))
		return MCP_ENOMEM;
	if (json_is_object(meta)) {
		pthread_mutex_lock(&c->lock);
		if (c->log_level[0] != '\0')
			json_object_set_new(meta, K_LEVEL,
			    json_string(c->log_level));
		pthread_mutex_unlock(&c->lock);
	}
	member = name_member(r->method);
	free(r->hname);
	r->hname = NULL;
	if (member != NULL && json_is_string(json_object_get(r->params,
	    member)) && (r->hname = strdup(json_string_value(
	    json_object_get(r->params, member)))) == NULL)
		return MCP_ENOMEM;
	if (modern_http(c) && strcmp(r->method, "tools/call") == 0)
		return xh_headers(c, r);
	return MCP_OK;
}

/*
 * Serialises R into r->body with the library's own serialiser (the hot
 * path: jansson's json_dumps costs several times more), and the
 * progress token (= the id) in params._meta when wanted and not set.
 * The params are let go of then: the body is what a resend needs; in
 * 2026-07-28 they stay, for the retry of a multi round-trip.
 */
static int
build(struct mcp_client *c, struct creq *r)
{
	struct buf	 b = { 0 };
	json_t		*meta = NULL;
	int		 want = wants_progress(c, r->method);

	if (c->modern && modern_meta(c, r) != MCP_OK)
		return MCP_ENOMEM;
	if (r->params != NULL)
		meta = json_object_get(r->params, "_meta");
	/* The token is always the id: progress is matched by it, and a
	 * caller's own token could name another request. */
	if (json_is_object(meta) && (want ||
	    json_object_get(meta, "progressToken") != NULL)) {
		json_object_set_new(meta, "progressToken",
		    json_integer(r->pe.id));
		want = 0;
	} else if (meta != NULL) {
		want = 0;	/* not an object: the server will say */
	}
	if (mcp__rpc_request(&b, NULL, r->pe.id, r->method, r->params,
	    want) != MCP_OK) {
		mcp__buf_free(&b);
		return MCP_ENOMEM;
	}
	free(r->body);
	r->body = mcp__buf_steal(&b, &r->len);
	if (!c->modern) {
		json_decref(r->params);
		r->params = NULL;
	}
	return r->body != NULL ? MCP_OK : MCP_ENOMEM;
}

/* Sends R now: into the table, timer armed, out through the transport. */
static void
transmit(struct mcp_client *c, struct creq *r)
{
	if (!r->sent) {
		if (mcp__pending_add(&c->pend, &r->pe) != MCP_OK) {
			finish_err(c, r, MCP_ENOMEM, NULL);
			return;
		}
		r->sent = 1;
		if (r->resent == 0 && r->rounds == 0)
			r->started = ev_now(c->loop);
		arm(c, r);
	}
	mcp__client_trace(c, 1, r->body, r->len);
	c->ops->send(c, r->body, r->len, r);
}

static void
start_request(struct mcp_client *c, struct creq *r)
{
	if (c->state == CS_LOST || c->state == CS_CLOSED) {
		finish_err(c, r, c->connect_rc != MCP_OK && c->connect_rc !=
		    MCP_ESERVER ? c->connect_rc : MCP_EIO, c->err[0] != '\0' ?
		    c->err : "not connected");
		return;
	}
	if (c->state != CS_READY && !r->internal) {
		/* Before the initialization: built and sent once it is
		 * done, in the era it chose. */
		r->next = c->held;
		c->held = r;
		return;
	}
	if (c->modern && strcmp(r->method, "logging/setLevel") == 0) {
		/* 2026-07-28 has none: the level goes into each request's
		 * _meta from now on (asked for before the era was known). */
		const char *lvl = json_string_value(json_object_get(r->params,
		    "level"));
		json_t *empty = json_object();

		if (lvl == NULL || mcp__level_parse(lvl) < 0) {
			finish_err(c, r, MCP_EINVAL, "logging/setLevel: not a "
			    "log level");
		} else {
			pthread_mutex_lock(&c->lock);
			snprintf(c->log_level, sizeof(c->log_level), "%s", lvl);
			pthread_mutex_unlock(&c->lock);
			finish(c, r, MCP_OK, empty);
		}
		json_decref(empty);
		return;
	}
	if (build(c, r) != MCP_OK) {
		finish_err(c, r, MCP_ENOMEM, NULL);
		return;
	}
	transmit(c, r);
}

/* A notification or a reply, ready-made, goes out as it is. */
static void
send_body(struct mcp_client *c, const char *body, size_t len)
{
	if (c->state != CS_READY && c->state != CS_INIT)
		return;
	mcp__client_trace(c, 1, body, len);
	c->ops->send(c, body, len, NULL);
}

/* ---- Initialization -------------------------------------------------- */

/* The versions the client speaks are the server's (rpc/jsonrpc.c). */
static int
known_version(const char *v)
{
	return mcp__version_of(v) != 0;
}

static struct handler *
handler_of(struct mcp_client *c, const char *method)
{
	struct handler	*h;

	for (h = c->handlers; h != NULL; h = h->next)
		if (strcmp(h->method, method) == 0)
			return h;
	return NULL;
}

static json_t *
capabilities(struct mcp_client *c)
{
	json_t	*caps;

	if (c->caps != NULL)
		return json_deep_copy(c->caps);	/* the caller's own */
	caps = json_object();
	if (c->roots != NULL || handler_of(c, "roots/list") != NULL)
		json_object_set_new(caps, "roots",
		    json_pack("{s:b}", "listChanged", 1));
	if (handler_of(c, "sampling/createMessage") != NULL)
		json_object_set_new(caps, "sampling", json_object());
	if (handler_of(c, "elicitation/create") != NULL)
		json_object_set_new(caps, "elicitation", json_object());
	return caps;
}

/* The held requests go out, oldest first. */
static void
release_held(struct mcp_client *c)
{
	struct creq	*r, *rev = NULL;

	while ((r = c->held) != NULL) {
		c->held = r->next;
		r->next = rev;
		rev = r;
	}
	while ((r = rev) != NULL) {
		rev = r->next;
		r->next = NULL;
		if (r->op == OP_NOTIFY) {
			send_body(c, r->body, r->len);
			creq_free(r);
		} else if (c->state == CS_READY && r->body != NULL) {
			transmit(c, r);		/* sent before, held again */
		} else {
			start_request(c, r);
		}
	}
}

static void
init_done(struct mcp_client *c, int rc, json_t *result, void *udata)
{
	const char	*v;
	struct buf	 b = { 0 };

	(void)udata;
	if (c->state != CS_INIT)
		return;
	if (rc != MCP_OK) {
		char why[200];

		const char *m = json_string_value(json_object_get(result,
		    "message"));

		if (m == NULL)
			m = mcp_strerror(rc);
		snprintf(why, sizeof(why), "%s%s", strncmp(m, "initialize",
		    10) == 0 ? "" : "initialize: ", m);
		/* Refused: on_ready gets the server's own error object. */
		if (rc == MCP_ESERVER && result != NULL) {
			if (c->connect_rc == MCP_OK)
				c->connect_rc = rc;
			snprintf(c->err, sizeof(c->err), "%s", why);
			ready_signal(c, rc, result);
		}
		mcp__client_lost(c, rc, why);
		return;
	}
	v = json_string_value(json_object_get(result, "protocolVersion"));
	if (v == NULL || !known_version(v)) {
		char why[120];

		snprintf(why, sizeof(why), "the server chose protocol "
		    "version %.40s, which this client does not speak",
		    v != NULL ? v : "(none)");
		mcp__client_lost(c, MCP_EPROTO, why);
		return;
	}
	snprintf(c->negotiated, sizeof(c->negotiated), "%s", v);
	/* The first session's answers stay: a reopened one is the same
	 * server, and callers may hold these borrowed pointers. */
	if (c->server_info == NULL) {
		c->server_info = json_incref(json_object_get(result,
		    "serverInfo"));
		c->server_caps = json_incref(json_object_get(result,
		    "capabilities"));
		v = json_string_value(json_object_get(result,
		    "instructions"));
		c->instructions = dupstr(v);
	}
	c->state = CS_READY;
	if (mcp__rpc_notification(&b, "notifications/initialized", NULL) ==
	    MCP_OK)
		send_body(c, b.data, b.len);
	mcp__buf_free(&b);
	c->ops->ready(c);
	release_held(c);
	connect_signal(c, MCP_OK);
	ready_signal(c, MCP_OK, result);
}

static void
send_initialize(struct mcp_client *c)
{
	struct creq	*r;

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		mcp__client_lost(c, MCP_ENOMEM, NULL);
		return;
	}
	r->c = c;
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	r->method = strdup("initialize");
	r->params = json_pack("{s:s, s:o, s:{s:s, s:s}}", "protocolVersion",
	    c->protocol != NULL ? c->protocol : mcp__version_str(MCP_V_LATEST),
	    "capabilities",
	    capabilities(c), "clientInfo", "name", c->name, "version",
	    c->version);
	r->internal = 1;
	r->cb = init_done;
	ev_timer_init(&r->timer, timeout_cb, c->timeout, 0.);
	r->timer.data = r;
	if (r->method == NULL || r->params == NULL) {
		creq_free(r);
		mcp__client_lost(c, MCP_ENOMEM, NULL);
		return;
	}
	c->state = CS_INIT;
	c->init = r;
	start_request(c, r);
}

/* ---- 2026-07-28: the probe ------------------------------------------ */

/*
 * The errors only a modern server sends (the schema's own range from
 * -32020): HeaderMismatch, MissingRequiredClientCapability,
 * UnsupportedProtocolVersion. Any other error to the probe, -32601 and
 * -32602 included, is a legacy server's (basic/versioning).
 */
static int
modern_error(const json_t *err)
{
	json_int_t	 code = json_integer_value(json_object_get(err,
	    "code"));

	return code == MCP_RPC_HEADER_MISMATCH ||
	    code == MCP_RPC_MISSING_CAPABILITY ||
	    code == MCP_RPC_UNSUPPORTED_VERSION;
}

/* Does the array LIST hold the string V? */
static int
lists(const json_t *list, const char *v)
{
	size_t	 i;

	for (i = 0; i < json_array_size(list); i++)
		if (json_is_string(json_array_get(list, i)) &&
		    strcmp(json_string_value(json_array_get(list, i)), v) == 0)
			return 1;
	return 0;
}

/* Does LIST name a version of initialize's that we speak? */
static int
lists_legacy(const json_t *list)
{
	size_t	 i;

	for (i = 0; i < json_array_size(list); i++)
		if (known_version(json_string_value(json_array_get(list, i))))
			return 1;
	return 0;
}

/*
 * The checks every 2026-07-28 result passes: resultType a string, and
 * _meta's serverInfo, when there, an object with a name. NULL when it
 * passes, else why not.
 */
static const char *
modern_result_bad(const json_t *result)
{
	const json_t	*rt = json_object_get(result, "resultType");
	const json_t	*meta = json_object_get(result, "_meta");
	const json_t	*info = json_object_get(meta, K_SERVER);

	if (rt == NULL)
		return "the server's 2026-07-28 result has no resultType";
	if (!json_is_string(rt))
		return "the server's resultType is not a string";
	if (meta != NULL && !json_is_object(meta))
		return "the server's result _meta is not an object";
	if (info != NULL && (!json_is_object(info) ||
	    !json_is_string(json_object_get(info, "name"))))
		return "the server's _meta serverInfo is not an object with "
		    "a name";
	return NULL;
}

/* The probe failed for good: the connection ends, saying WHY. */
static void
probe_failed(struct mcp_client *c, int rc, json_t *result, const char *why)
{
	if (rc == MCP_ESERVER && result != NULL) {
		if (c->connect_rc == MCP_OK)
			c->connect_rc = rc;
		snprintf(c->err, sizeof(c->err), "%s", why);
		ready_signal(c, rc, result);
	}
	mcp__client_lost(c, rc, why);
}

/* A legacy server: initialize, as a client of 2025-11-25 would. */
static void
fall_back(struct mcp_client *c, const char *why)
{
	MCP_LOG(MCP_LOG_INFO, "client: server/discover: %s; a legacy "
	    "server: falling back to initialize", why);
	c->modern = 0;
	send_initialize(c);
}

/* The DiscoverResult: the server is modern; the era is 2026-07-28. */
static void
modern_ready(struct mcp_client *c, json_t *result)
{
	const char	*bad = modern_result_bad(result);
	json_t		*sv = json_object_get(result, "supportedVersions");
	json_t		*meta = json_object_get(result, "_meta");
	char		 why[200];

	if (bad == NULL && strcmp(json_string_value(json_object_get(result,
	    "resultType")), "complete") != 0)
		bad = "server/discover answered a resultType other than "
		    "complete";
	if (bad == NULL && (!json_is_array(sv) ||
	    !json_is_object(json_object_get(result, "capabilities"))))
		bad = "server/discover answered without supportedVersions and "
		    "capabilities";
	if (bad != NULL) {
		mcp__client_lost(c, MCP_EPROTO, bad);
		return;
	}
	if (!lists(sv, MCP_CLIENT_MODERN)) {
		if (c->want == WANT_AUTO && lists_legacy(sv)) {
			fall_back(c, "2026-07-28 is not among its "
			    "supportedVersions");
			return;
		}
		snprintf(why, sizeof(why), "server/discover: the server does "
		    "not support %s, nor any version this client speaks",
		    MCP_CLIENT_MODERN);
		mcp__client_lost(c, MCP_EPROTO, why);
		return;
	}
	snprintf(c->negotiated, sizeof(c->negotiated), "%s",
	    MCP_CLIENT_MODERN);
	if (c->server_info == NULL) {
		c->server_info = json_incref(json_object_get(meta, K_SERVER));
		c->server_caps = json_incref(json_object_get(result,
		    "capabilities"));
		c->instructions = dupstr(json_string_value(json_object_get(
		    result, "instructions")));
		c->supported = json_incref(sv);
	}
	c->state = CS_READY;
	c->ops->ready(c);
	listen_ready(c);
	release_held(c);
	connect_signal(c, MCP_OK);
	ready_signal(c, MCP_OK, result);
}

/*
 * The answer to server/discover, as basic/versioning has a dual-era
 * client read it: a DiscoverResult, modern; a modern error, modern (and
 * the connection fails: there is no version to retry with); any other
 * error, a timeout, an answer that is no JSON-RPC response to it, or
 * (HTTP) a 4xx without a modern error, legacy.
 * Forced to 2026-07-28, a legacy server is an error.
 */
static void
discover_done(struct mcp_client *c, int rc, json_t *result, void *udata)
{
	const char	*m;
	char		 why[400], what[160];
	int		 legacy;

	(void)udata;
	if (c->state != CS_INIT)
		return;
	if (rc == MCP_OK) {
		modern_ready(c, result);
		return;
	}
	m = json_string_value(json_object_get(result, "message"));
	if (m == NULL)
		m = mcp_strerror(rc);
	if (rc != MCP_ESERVER && strncmp(m, "server/discover: ", 17) == 0)
		m += 17;	/* a timeout says which request */
	if (rc == MCP_ESERVER)
		snprintf(what, sizeof(what), "error %lld: %.120s",
		    (long long)json_integer_value(json_object_get(result,
		    "code")), m);
	else
		snprintf(what, sizeof(what), "%.150s", m);
	legacy = (rc == MCP_ESERVER && !modern_error(result)) ||
	    rc == MCP_ETIMEDOUT || rc == MCP_EPROTO ||
	    (rc == MCP_EIO && c->probe_legacy);
	if (legacy && c->want == WANT_AUTO) {
		fall_back(c, what);
		return;
	}
	if (legacy)
		snprintf(why, sizeof(why), "the server does not speak %s (a "
		    "legacy server? server/discover: %s); use protocol auto "
		    "or a version of initialize's", MCP_CLIENT_MODERN, what);
	else if (rc == MCP_ESERVER &&
	    json_integer_value(json_object_get(result, "code")) ==
	    MCP_RPC_UNSUPPORTED_VERSION)
		snprintf(why, sizeof(why), "the server does not support %s "
		    "(server/discover: %s)", MCP_CLIENT_MODERN, what);
	else
		snprintf(why, sizeof(why), "server/discover: %s", what);
	probe_failed(c, rc, result, why);
}

static void
send_discover(struct mcp_client *c)
{
	struct creq	*r;

	r = calloc(1, sizeof(*r));
	if (r == NULL || (r->method = strdup("server/discover")) == NULL) {
		free(r);
		mcp__client_lost(c, MCP_ENOMEM, NULL);
		return;
	}
	r->c = c;
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	r->internal = 1;
	r->cb = discover_done;
	ev_timer_init(&r->timer, timeout_cb, c->timeout, 0.);
	r->timer.data = r;
	c->modern = 1;
	c->probe_legacy = 0;
	c->state = CS_INIT;
	c->probe = r;
	start_request(c, r);
}

/* ---- 2026-07-28: multi round-trip requests --------------------------- */

/* R, past its first round, is known by its first id: for cancel. */
static void
mrtr_link(struct mcp_client *c, struct creq *r)
{
	if (r->in_mrtr)
		return;
	r->first_id = r->pe.id;
	r->in_mrtr = 1;
	r->mnext = c->mrtr;
	c->mrtr = r;
}

/* Every inputRequests entry answered: the same request again, with a
 * new id, the answers and the server's requestState. */
static void
mrtr_retry(struct mcp_client *c, struct creq *r)
{
	(void)json_object_del(r->params, "inputResponses");
	(void)json_object_del(r->params, "requestState");
	if (r->inputs != NULL && json_object_set_new(r->params,
	    "inputResponses", r->inputs) != 0) {
		r->inputs = NULL;
		finish_err(c, r, MCP_ENOMEM, NULL);
		return;
	}
	r->inputs = NULL;
	if (r->state != NULL && json_object_set(r->params, "requestState",
	    r->state) != 0) {
		finish_err(c, r, MCP_ENOMEM, NULL);
		return;
	}
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	if (build(c, r) != MCP_OK) {
		finish_err(c, r, MCP_ENOMEM, NULL);
		return;
	}
	transmit(c, r);
}

/* One entry, KEY, of the server's inputRequests, to the handler the
 * legacy era would give the same request; 0, or -1 when R ended. */
static int
mrtr_ask(struct mcp_client *c, struct creq *r, const char *key,
    json_t *req)
{
	struct handler		*h;
	struct mcp_client_reply	*rp;
	const char		*method;
	json_t			*res;
	long long		 first = r->first_id;
	char			 why[200];

	method = json_string_value(json_object_get(req, "method"));
	if (!json_is_object(req) || method == NULL) {
		snprintf(why, sizeof(why), "the server's inputRequests[%.60s] "
		    "is not a request with a method", key);
		finish_err(c, r, MCP_EPROTO, why);
		return -1;
	}
	if (strcmp(method, "roots/list") == 0 && c->roots != NULL) {
		pthread_mutex_lock(&c->lock);
		res = json_pack("{s:O}", "roots", c->roots);
		pthread_mutex_unlock(&c->lock);
		if (res == NULL || json_object_set_new(r->inputs, key,
		    res) != 0) {
			finish_err(c, r, MCP_ENOMEM, NULL);
			return -1;
		}
		r->nwait--;
		return 0;
	}
	h = handler_of(c, method);
	if (h == NULL)
		h = handler_of(c, "*");
	if (h == NULL) {
		snprintf(why, sizeof(why), "the server asked for %.60s "
		    "(inputRequests[%.60s]), which this client does not "
		    "handle", method, key);
		finish_err(c, r, MCP_EPROTO, why);
		return -1;
	}
	rp = calloc(1, sizeof(*rp));
	if (rp == NULL || (rp->key = strdup(key)) == NULL ||
	    (rp->id = json_string(key)) == NULL) {
		if (rp != NULL)
			free(rp->key);
		free(rp);
		finish_err(c, r, MCP_ENOMEM, NULL);
		return -1;
	}
	rp->c = c;
	rp->first_id = r->first_id;
	rp->round = r->rounds;
	pthread_mutex_lock(&c->lock);
	rp->next = c->replies;
	c->replies = rp;
	pthread_mutex_unlock(&c->lock);
	h->fn(c, rp, method, json_object_get(req, "params"), h->udata);
	/* The handler may have answered at once, and so ended R. */
	return mrtr_find(c, first) == r ? 0 : -1;
}

/*
 * An input_required answer to R (taken from the table): each of the
 * server's inputRequests goes to its handler; when all have answered,
 * R goes again. Only tools/call, prompts/get and resources/read may be
 * answered so, and at most MCP_CLIENT_MRTR_ROUNDS times in a row.
 * Returns non-zero when R ended here.
 */
static int
mrtr_answer(struct mcp_client *c, struct creq *r, json_t *result)
{
	json_t		*reqs = json_object_get(result, "inputRequests");
	json_t		*state = json_object_get(result, "requestState");
	json_t		*req;
	const char	*key;
	long long	 first;
	char		 why[240];

	if (name_member(r->method) == NULL || r->params == NULL) {
		snprintf(why, sizeof(why), "the server answered %.60s with "
		    "input_required, which only tools/call, prompts/get and "
		    "resources/read may have", r->method);
		finish_err(c, r, MCP_EPROTO, why);
		return 1;
	}
	if ((reqs != NULL && !json_is_object(reqs)) || (state != NULL &&
	    !json_is_string(state)) || (reqs == NULL && state == NULL)) {
		finish_err(c, r, MCP_EPROTO, "the server's input_required "
		    "result has neither an inputRequests object nor a "
		    "requestState string");
		return 1;
	}
	if (r->rounds >= MCP_CLIENT_MRTR_ROUNDS) {
		snprintf(why, sizeof(why), "%.60s: the server asked for input "
		    "%d times in a row", r->method, r->rounds);
		finish_err(c, r, MCP_EPROTO, why);
		return 1;
	}
	/* The answer came: its stream ends by itself. The client's own
	 * handlers take their time: the timer waits for the retry. */
	if (r->tstate != NULL && c->ops != NULL)
		c->ops->forget(c, r, 1);
	ev_timer_stop(c->loop, &r->timer);
	mrtr_link(c, r);
	r->rounds++;
	json_decref(r->state);
	r->state = json_incref(state);
	json_decref(r->inputs);
	r->inputs = reqs != NULL ? json_object() : NULL;
	if (reqs != NULL && r->inputs == NULL) {
		finish_err(c, r, MCP_ENOMEM, NULL);
		return 1;
	}
	first = r->first_id;
	/* One more than asked, so that answers given at once cannot
	 * retry R before every entry has been asked. */
	r->nwait = (int)json_object_size(reqs) + 1;
	json_object_foreach(reqs, key, req) {
		if (mrtr_ask(c, r, key, req) != 0)
			return 1;
	}
	if (mrtr_find(c, first) != r)
		return 1;
	if (--r->nwait == 0)
		mrtr_retry(c, r);
	return 0;
}

/* OP_INPUT: the client's answer to one entry of inputRequests, for the
 * request its caller knows as op->cancel_id, in round op->rounds. */
static void
mrtr_input(struct mcp_client *c, struct creq *op)
{
	struct creq	*r = mrtr_find(c, op->cancel_id);
	char		 why[320];

	if (r == NULL || r->rounds != op->rounds || r->inputs == NULL ||
	    r->sent)
		return;		/* ended, cancelled, or a round ago */
	if (op->value == NULL) {
		snprintf(why, sizeof(why), "the client's handler refused "
		    "inputRequests[%.60s]: %.150s", op->key, op->reason !=
		    NULL ? op->reason : "error");
		finish_err(c, r, MCP_ECLIENT, why);
		return;
	}
	if (json_object_get(r->inputs, op->key) != NULL)
		return;
	if (json_object_set(r->inputs, op->key, op->value) != 0) {
		finish_err(c, r, MCP_ENOMEM, NULL);
		return;
	}
	if (--r->nwait == 0)
		mrtr_retry(c, r);
}

/*
 * HTTP 404 for the session: the server forgot it (restarted, expired).
 * A new session is opened, and R, which the server never took, goes
 * out again in it. A server that forgets each new session at once would
 * loop: after three reopenings in a row without an answer, R fails.
 */
/*
 * R, sent, waits for a new session: out of the table and its timer
 * stopped (a request is in exactly one place: the table or the held
 * list), so that nothing can end it twice; transmit puts it back, with
 * its first start kept for max-timeout.
 */
static void
hold_again(struct mcp_client *c, struct creq *r)
{
	if (r->sent) {
		(void)mcp__pending_take(&c->pend, r->pe.id);
		r->sent = 0;
	}
	ev_timer_stop(c->loop, &r->timer);
	r->next = c->held;
	c->held = r;
}

void
mcp__client_session_gone(struct mcp_client *c, struct creq *r)
{
	if (r != NULL) {
		if (r == c->init || r->resent >= 3) {
			mcp__client_fail(c, r, MCP_EIO, "the server forgot "
			    "the session again after reopening it");
			return;
		}
		r->resent++;
		hold_again(c, r);
	}
	if (c->state != CS_READY)
		return;		/* already reopening */
	/* A server that forgets every session at once would keep us here:
	 * three reopenings without one answer between them end it. */
	if (++c->reinits > 3) {
		mcp__client_lost(c, MCP_EIO, "the server forgets every session "
		    "it opens (HTTP 404 each time)");
		return;
	}
	MCP_LOG(MCP_LOG_INFO, "client: the server ended the session; "
	    "opening a new one");
	send_initialize(c);
}

void
mcp__client_resend(struct mcp_client *c, struct creq *r)
{
	if (r->resent >= 3) {
		mcp__client_fail(c, r, MCP_EIO, "the server forgot the session "
		    "again after reopening it");
		return;
	}
	r->resent++;
	if (c->state == CS_READY) {
		transmit(c, r);
		return;
	}
	hold_again(c, r);
}

/* ---- 2026-07-28: subscriptions/listen -------------------------------- */

#define K_SUB		"io.modelcontextprotocol/subscriptionId"

/* The list_changed kinds a listen may ask for, by the capability. */
static const struct {
	const char	*cap;
	const char	*kind;
} lkinds[] = {
	{ "tools", "toolsListChanged" },
	{ "prompts", "promptsListChanged" },
	{ "resources", "resourcesListChanged" },
};

/* What a listen asks for: the URIs SUBS, and the list_changed kinds the
 * server declares when a notification handler is set. NULL: nothing. */
static json_t *
listen_filter(struct mcp_client *c, const json_t *subs)
{
	json_t	*f = json_object(), *cap;
	size_t	 i;
	int	 any = 0;

	if (f == NULL)
		return NULL;
	for (i = 0; c->on_notify != NULL &&
	    i < sizeof(lkinds) / sizeof(lkinds[0]); i++) {
		cap = json_object_get(c->server_caps, lkinds[i].cap);
		if (json_is_true(json_object_get(cap, "listChanged"))) {
			json_object_set_new(f, lkinds[i].kind, json_true());
			any = 1;
		}
	}
	if (json_array_size(subs) > 0) {
		json_object_set_new(f, "resourceSubscriptions",
		    json_deep_copy(subs));
		any = 1;
	}
	if (!any) {
		json_decref(f);
		return NULL;
	}
	return f;
}

static void	 lop_start(struct mcp_client *, struct creq *);

/* The subscribe or unsubscribe in c->lop ends with RC (RESULT: the
 * server's error); its URIs become the listen's on MCP_OK. The next
 * one starts. */
static void
lop_end(struct mcp_client *c, int rc, json_t *result)
{
	struct creq	*op = c->lop, *next;

	c->lop = NULL;
	if (op != NULL) {
		if (rc == MCP_OK) {
			json_decref(c->subs);
			c->subs = op->value;
			op->value = NULL;
		}
		if (op->cb != NULL)
			op->cb(c, rc, result, op->udata);
		creq_free(op);
	}
	if (c->lop == NULL && (next = c->lops) != NULL) {
		c->lops = next->next;
		next->next = NULL;
		lop_start(c, next);
	}
}

/* The listen R ended: refused, cancelled, lost, or the server's answer
 * (its drain). */
static void
listen_done(struct mcp_client *c, int rc, json_t *result, void *udata)
{
	struct creq	*r = udata;

	if (r == c->listen_new) {
		c->listen_new = NULL;
		if (rc == MCP_OK) {
			json_t *e = err_object(MCP_EIO, "the server ended "
			    "subscriptions/listen before acknowledging it");

			lop_end(c, MCP_EIO, e);
			json_decref(e);
		} else {
			lop_end(c, rc, result);
		}
	} else if (r == c->listen_cur) {
		c->listen_cur = NULL;
		MCP_LOG(MCP_LOG_INFO, "client: the server ended "
		    "subscriptions/listen (%s)", mcp_strerror(rc));
	}
}

/* Closes the listen R: its stream on HTTP, notifications/cancelled on
 * stdio. */
static void
listen_close(struct mcp_client *c, struct creq *r, const char *why)
{
	long long	 id = r->pe.id;
	int		 inflight = r->sent;

	if (r == c->listen_cur)
		c->listen_cur = NULL;
	if (r == c->listen_new)
		c->listen_new = NULL;
	finish_err(c, r, MCP_ECANCELED, why);
	if (inflight)
		send_cancelled(c, id, why);
}

/* Opens a listen asking for FILTER (taken), as c->listen_new. */
static void
listen_open(struct mcp_client *c, json_t *filter)
{
	struct creq	*r;

	r = calloc(1, sizeof(*r));
	if (r == NULL || (r->method = strdup("subscriptions/listen")) ==
	    NULL || (r->params = json_pack("{s:o}", "notifications",
	    filter)) == NULL) {
		if (r == NULL || r->method == NULL)
			json_decref(filter);
		creq_free(r);
		lop_end(c, MCP_ENOMEM, NULL);
		return;
	}
	r->c = c;
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	r->is_listen = 1;
	r->cb = listen_done;
	r->udata = r;
	ev_timer_init(&r->timer, timeout_cb, c->timeout, 0.);
	r->timer.data = r;
	c->listen_new = r;
	start_request(c, r);	/* a failure ends in listen_done */
}

/* notifications/subscriptions/acknowledged: the new listen replaces the
 * one before it, which closes (its notifications, from now, dropped). */
static void
listen_acked(struct mcp_client *c, json_t *params)
{
	json_t		*meta = json_object_get(params, "_meta");
	json_t		*id = json_object_get(meta, K_SUB);
	struct creq	*old = c->listen_cur;

	if (c->listen_new == NULL || !json_is_integer(id) ||
	    json_integer_value(id) != c->listen_new->pe.id)
		return;
	c->listen_cur = c->listen_new;
	c->listen_new = NULL;
	if (old != NULL)
		listen_close(c, old, "replaced by a new listen");
	lop_end(c, MCP_OK, NULL);
}

/* OP_LISTEN: the URIs with op->key added (op->cancel_id 1) or taken out,
 * and a listen opened with them, replacing the open one. */
static void
lop_start(struct mcp_client *c, struct creq *op)
{
	json_t	*subs, *v, *filter;
	size_t	 i;
	int	 at = -1;

	if (c->state != CS_READY) {
		c->lop = op;
		lop_end(c, MCP_EIO, NULL);
		return;
	}
	subs = c->subs != NULL ? json_deep_copy(c->subs) : json_array();
	if (subs == NULL) {
		c->lop = op;
		lop_end(c, MCP_ENOMEM, NULL);
		return;
	}
	json_array_foreach(subs, i, v)
		if (strcmp(json_string_value(v), op->key) == 0)
			at = (int)i;
	op->value = subs;
	c->lop = op;
	if ((op->cancel_id && at >= 0) || (!op->cancel_id && at < 0)) {
		lop_end(c, MCP_OK, NULL);	/* no change */
		return;
	}
	if (op->cancel_id && json_array_size(subs) >= MCP_CLIENT_SUBS) {
		json_t *e = err_object(MCP_EINVAL, "more resources "
		    "subscribed than the client keeps");

		lop_end(c, MCP_EINVAL, e);
		json_decref(e);
		return;
	}
	if (op->cancel_id)
		json_array_append_new(subs, json_string(op->key));
	else
		json_array_remove(subs, (size_t)at);
	filter = listen_filter(c, subs);
	if (filter == NULL) {
		/* Nothing left to listen for. */
		if (c->listen_cur != NULL)
			listen_close(c, c->listen_cur, "nothing to listen for");
		lop_end(c, MCP_OK, NULL);
		return;
	}
	listen_open(c, filter);
}

static void
listen_op(struct mcp_client *c, struct creq *op)
{
	struct creq	**pp;

	if (c->lop != NULL) {
		for (pp = &c->lops; *pp != NULL; pp = &(*pp)->next)
			;
		*pp = op;
		return;
	}
	lop_start(c, op);
}

/* At ready: the listen for the list_changed kinds, if any. */
static void
listen_ready(struct mcp_client *c)
{
	json_t	*filter = listen_filter(c, c->subs);

	if (filter != NULL && c->lop == NULL)
		listen_open(c, filter);
	else
		json_decref(filter);
}

/* ---- Input ----------------------------------------------------------- */

static void
on_progress(struct mcp_client *c, json_t *params)
{
	json_t		*tok, *p, *t;
	struct creq	*r;
	long long	 id;

	tok = json_object_get(params, "progressToken");
	p = json_object_get(params, "progress");
	if (!json_is_number(p))
		return;
	id = mcp__pending_id_of(tok);
	r = id >= 0 ? (struct creq *)mcp__pending_find(&c->pend, id) : NULL;
	if (r == NULL)
		return;		/* a late note for a request that ended */
	if (c->progress_resets)
		arm(c, r);
	t = json_object_get(params, "total");
	if (c->on_progress != NULL)
		c->on_progress(c, id, json_number_value(p),
		    json_is_number(t) ? json_number_value(t) : -1,
		    json_string_value(json_object_get(params, "message")),
		    c->progress_udata);
}

static void
on_notification(struct mcp_client *c, const char *method, json_t *params)
{
	struct mcp_client_reply	*rp;

	if (strcmp(method, "notifications/progress") == 0) {
		on_progress(c, params);
		return;
	}
	if (c->modern && strcmp(method,
	    "notifications/subscriptions/acknowledged") == 0) {
		listen_acked(c, params);
		return;
	}
	if (c->modern && json_is_integer(json_object_get(json_object_get(
	    params, "_meta"), K_SUB)) && (c->listen_cur == NULL ||
	    json_integer_value(json_object_get(json_object_get(params,
	    "_meta"), K_SUB)) != c->listen_cur->pe.id))
		return;		/* a listen replaced or closed */
	if (strcmp(method, "notifications/cancelled") == 0) {
		/* The server gave up a request of its own: an answer made
		 * for it later is not sent. */
		pthread_mutex_lock(&c->lock);
		for (rp = c->replies; rp != NULL; rp = rp->next)
			if (json_equal(rp->id, json_object_get(params,
			    "requestId")))
				rp->done = 1;
		pthread_mutex_unlock(&c->lock);
	}
	if (c->on_notify != NULL)
		c->on_notify(c, method, params, c->notify_udata);
}

static void
reply_body(struct mcp_client *c, const json_t *id, json_t *result,
    int code, const char *message)
{
	struct buf	 b = { 0 };

	if (result != NULL)
		(void)mcp__rpc_result(&b, id, result);
	else
		(void)mcp__rpc_error(&b, id, code, message, NULL);
	if (b.data != NULL)
		send_body(c, b.data, b.len);
	mcp__buf_free(&b);
}

/*
 * A request from the server: ping is answered here, roots/list from the
 * roots set, the rest by a handler, and a method nobody handles gets
 * -32601, so that the server is never left waiting.
 */
static void
on_request(struct mcp_client *c, json_t *id, const char *method,
    json_t *params)
{
	struct handler		*h;
	struct mcp_client_reply	*rp;
	json_t			*res;
	char			 msg[160];

	if (strcmp(method, "ping") == 0) {
		res = json_object();
		reply_body(c, id, res, 0, NULL);
		json_decref(res);
		return;
	}
	h = handler_of(c, method);
	if (h == NULL)
		h = handler_of(c, "*");		/* every other method */
	if (strcmp(method, "roots/list") == 0 && c->roots != NULL) {
		/* Roots set win over a handler: they were set later. */
		pthread_mutex_lock(&c->lock);
		res = json_pack("{s:O}", "roots", c->roots);
		pthread_mutex_unlock(&c->lock);
		reply_body(c, id, res, 0, NULL);
		json_decref(res);
		return;
	}
	if (h == NULL) {
		snprintf(msg, sizeof(msg), "this client does not handle %.100s",
		    method);
		reply_body(c, id, NULL, MCP_RPC_METHOD_NOT_FOUND, msg);
		return;
	}
	rp = calloc(1, sizeof(*rp));
	if (rp == NULL) {
		reply_body(c, id, NULL, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	rp->c = c;
	rp->id = json_incref(id);
	pthread_mutex_lock(&c->lock);
	rp->next = c->replies;
	c->replies = rp;
	pthread_mutex_unlock(&c->lock);
	h->fn(c, rp, method, params, h->udata);
}

/* ---- 2026-07-28: -32020, a new listing and one retry ----------------- */

struct relist {
	long long	 first;		/* the call, in c->mrtr */
	int		 pages;
};

static void	 relist_page(struct mcp_client *, struct relist *,
		    const char *);

static void
relist_done(struct mcp_client *c, int rc, json_t *result, void *udata)
{
	struct relist	*rl = udata;
	json_t		*next = json_object_get(result, "nextCursor");
	struct creq	*r;

	if (rc == MCP_OK && json_is_string(next) &&
	    json_string_length(next) > 0 && ++rl->pages < MCP_CLIENT_XPAGES &&
	    c->state == CS_READY) {
		relist_page(c, rl, json_string_value(next));
		return;
	}
	r = mrtr_find(c, rl->first);
	free(rl);
	if (r == NULL)
		return;		/* cancelled meanwhile */
	if (c->state != CS_READY) {
		finish_err(c, r, MCP_EIO, "the connection ended while the "
		    "tools were listed again");
		return;
	}
	/* Sent again, the headers from the new listing. */
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	if (build(c, r) != MCP_OK) {
		finish_err(c, r, MCP_ENOMEM, NULL);
		return;
	}
	transmit(c, r);
}

static void
relist_page(struct mcp_client *c, struct relist *rl, const char *cursor)
{
	struct creq	*r;

	r = calloc(1, sizeof(*r));
	if (r == NULL || (r->method = strdup("tools/list")) == NULL ||
	    (cursor != NULL && (r->params = json_pack("{s:s}", "cursor",
	    cursor)) == NULL)) {
		creq_free(r);
		relist_done(c, MCP_ENOMEM, NULL, rl);
		return;
	}
	r->c = c;
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	r->internal = 1;
	r->cb = relist_done;
	r->udata = rl;
	ev_timer_init(&r->timer, timeout_cb, c->timeout, 0.);
	r->timer.data = r;
	start_request(c, r);
}

/*
 * R, a tools/call over HTTP, got -32020 (a header the server wanted is
 * missing or wrong): its tool may have changed since the last listing,
 * or was never listed. As the spec has it, the tools are listed again
 * and R is sent once more; non-zero when R is taken. R waits in c->mrtr
 * meanwhile, where a cancel finds it by its first id.
 */
static int
xh_retry(struct mcp_client *c, struct creq *r, const json_t *err)
{
	struct relist	*rl;

	if (!modern_http(c) || r->xretried || r->params == NULL ||
	    strcmp(r->method, "tools/call") != 0 ||
	    json_integer_value(json_object_get(err, "code")) !=
	    MCP_RPC_HEADER_MISMATCH || (rl = calloc(1, sizeof(*rl))) == NULL)
		return 0;
	MCP_LOG(MCP_LOG_INFO, "client: tools/call %.100s: -32020; listing the "
	    "tools again and retrying once", r->hname != NULL ? r->hname :
	    "");
	r->xretried = 1;
	if (r->tstate != NULL && c->ops != NULL)
		c->ops->forget(c, r, 1);
	ev_timer_stop(c->loop, &r->timer);
	mrtr_link(c, r);
	rl->first = r->first_id;
	relist_page(c, rl, NULL);
	return 1;
}

/* A response: its request ends, with the result or the server's error. */
static void
on_response(struct mcp_client *c, struct rpc_fields *f)
{
	struct creq	*r;
	long long	 id;
	json_t		*code, *msg;
	char		*text;

	id = mcp__pending_id_of(f->id);
	r = id >= 0 ? (struct creq *)mcp__pending_take(&c->pend, id) : NULL;
	if (r == NULL) {
		if (json_is_null(f->id) && f->error != NULL) {
			msg = json_object_get(f->error, "message");
			mcp_log(MCP_LOG_WARN, "client: the server reported an "
			    "error without an id: %.200s",
			    json_is_string(msg) ? json_string_value(msg) :
			    "(no message)");
			return;
		}
		text = json_dumps(f->id, JSON_ENCODE_ANY | JSON_COMPACT);
		mcp_log(MCP_LOG_WARN, "client: dropped a response to id %.60s,"
		    " which is not waiting for one", text != NULL ? text :
		    "?");
		free(text);
		return;
	}
	r->sent = 0;			/* out of the table already */
	c->reinits = 0;			/* a session that answers */
	if (f->error != NULL) {
		code = json_object_get(f->error, "code");
		msg = json_object_get(f->error, "message");
		if (!json_is_integer(code) || !json_is_string(msg)) {
			finish_err(c, r, MCP_EPROTO, "the server answered an "
			    "error object without a code and a message");
			return;
		}
		if (xh_retry(c, r, f->error))
			return;
		finish(c, r, MCP_ESERVER, f->error);
		return;
	}
	if (!json_is_object(f->result)) {
		finish_err(c, r, MCP_EPROTO, "the server's result is not an "
		    "object");
		return;
	}
	if (c->modern && r != c->probe) {
		/* 2026-07-28: a result says what it is. */
		const char *bad = modern_result_bad(f->result), *rt;

		if (bad != NULL) {
			finish_err(c, r, MCP_EPROTO, bad);
			return;
		}
		rt = json_string_value(json_object_get(f->result,
		    "resultType"));
		if (strcmp(rt, "input_required") == 0) {
			(void)mrtr_answer(c, r, f->result);
			return;
		}
		if (strcmp(rt, "complete") != 0) {
			char why[120];

			snprintf(why, sizeof(why), "the server answered "
			    "resultType %.40s, which this client does not "
			    "know", rt);
			finish_err(c, r, MCP_EPROTO, why);
			return;
		}
	}
	finish(c, r, MCP_OK, f->result);
}

static void
one(struct mcp_client *c, json_t *msg)
{
	struct rpc_fields	 f;
	struct rpc_msg		 m;
	json_t			*params;

	if (mcp__rpc_fields_from_json(msg, &f) != MCP_OK) {
		mcp_log(MCP_LOG_WARN, "client: skipped a message that is not "
		    "a JSON object");
		return;
	}
	mcp__rpc_classify(&f, &m);
	params = f.params != NULL ? f.params : NULL;
	switch (m.kind) {
	case RPC_RESPONSE:
		on_response(c, &f);
		break;
	case RPC_NOTIFICATION:
		on_notification(c, m.method, params);
		break;
	case RPC_REQUEST:
		on_request(c, m.id, m.method, params);
		break;
	default:
		mcp_log(MCP_LOG_WARN, "client: skipped an invalid message: %s",
		    m.why != NULL ? m.why : "not JSON-RPC");
		break;
	}
	mcp__rpc_fields_clear(&f);
}

void
mcp__client_input(struct mcp_client *c, const char *json, size_t len)
{
	struct json_perr	 err;
	json_t			*v;
	size_t			 i;

	mcp__client_trace(c, 0, json, len);
	v = mcp__json_parse(json, len, &err);
	if (v == NULL) {
		mcp_log(MCP_LOG_WARN, "client: skipped a message that is not "
		    "JSON (%s at byte %zu)", err.text, err.position);
		return;
	}
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			one(c, json_array_get(v, i));
	} else {
		one(c, v);
	}
	json_decref(v);
}

void
mcp__client_oversized(struct mcp_client *c, const struct idscan *sc)
{
	json_t		*id = mcp__idscan_id(sc);
	long long	 n = mcp__pending_id_of(id);
	struct creq	*r;
	char		 why[120];

	snprintf(why, sizeof(why), "the answer exceeds the %zu-byte limit "
	    "(max-message)", c->max_message);
	mcp_log(MCP_LOG_WARN, "client: a message from the server exceeds "
	    "the %zu-byte limit (max-message); skipped", c->max_message);
	if (sc->has_method) {
		/* The server's own request (or notification): its id is in
		 * the server's space, not ours. A request is told why. */
		if (sc->has_id && id != NULL) {
			snprintf(why, sizeof(why), "the request exceeds the "
			    "client's %zu-byte limit", c->max_message);
			reply_body(c, id, NULL, MCP_RPC_INVALID_REQUEST, why);
		}
		json_decref(id);
		return;
	}
	json_decref(id);
	r = n >= 0 ? (struct creq *)mcp__pending_take(&c->pend, n) : NULL;
	if (r == NULL)
		return;
	r->sent = 0;
	mcp__client_fail(c, r, MCP_EPROTO, why);
}

/* ---- The submit queue ------------------------------------------------ */

static void
do_close(struct mcp_client *c)
{
	struct mcp_client_reply	*rp;

	if (c->state == CS_CLOSED)
		return;
	if (c->listen_cur != NULL)
		listen_close(c, c->listen_cur, "the client closed");
	if (c->state != CS_LOST)
		c->state = CS_LOST;
	fail_all(c, MCP_ECANCELED, "the client closed");
	/* Replies that never came: the server hears nothing more. */
	pthread_mutex_lock(&c->lock);
	for (rp = c->replies; rp != NULL; rp = rp->next)
		rp->done = 1;
	pthread_mutex_unlock(&c->lock);
	connect_signal(c, MCP_ECANCELED);
	if (c->ops != NULL)
		c->ops->close(c);
	c->state = CS_CLOSED;
	if (c->own_loop)
		ev_break(c->loop, EVBREAK_ALL);
}

static void
do_connect(struct mcp_client *c)
{
	int	 rc;

	rc = c->ops->start(c);
	if (rc != MCP_OK) {
		mcp__client_lost(c, rc, c->err[0] != '\0' ? c->err : NULL);
		return;
	}
	/* Set once: each modern request carries it; handlers and roots
	 * cannot change after connecting. */
	c->caps_now = capabilities(c);
	if (c->want == WANT_MODERN && c->force == 2) {
		mcp__client_lost(c, MCP_EINVAL, "2026-07-28 is not served on "
		    "the legacy SSE transport");
		return;
	}
	if (c->want == WANT_LEGACY || c->force == 2)
		send_initialize(c);
	else
		send_discover(c);	/* auto, or 2026-07-28 */
}

/* Every request but the initialize's, as if each were cancelled. */
static int
not_init(struct pending_entry *e, void *arg)
{
	(void)arg;
	return !((struct creq *)e)->internal &&
	    !((struct creq *)e)->is_listen;
}

static void
cancel_all(struct mcp_client *c, const char *reason)
{
	struct pending_entry	*e, *next;
	struct creq		*r;
	char			 why[200];

	snprintf(why, sizeof(why), "cancelled%s%.180s", reason != NULL ?
	    ": " : "", reason != NULL ? reason : "");
	while ((r = c->held) != NULL) {
		c->held = r->next;
		if (r->op == OP_NOTIFY)
			creq_free(r);
		else
			finish_err(c, r, MCP_ECANCELED, why);
	}
	for (e = mcp__pending_take_if(&c->pend, not_init, NULL); e != NULL;
	    e = next) {
		long long id = e->id;

		next = e->next;
		r = (struct creq *)e;
		r->sent = 0;
		finish_err(c, r, MCP_ECANCELED, why);
		send_cancelled(c, id, reason);
	}
	/* Between rounds: the server holds nothing of theirs. */
	while ((r = c->mrtr) != NULL)
		finish_err(c, r, MCP_ECANCELED, why);
}

static void
do_cancel(struct mcp_client *c, long long id, const char *reason)
{
	struct creq	*r, **pp;
	char		 why[200];
	int		 inflight;

	if (id < 0) {
		cancel_all(c, reason);
		return;
	}
	snprintf(why, sizeof(why), "cancelled%s%.180s", reason != NULL ?
	    ": " : "", reason != NULL ? reason : "");
	for (pp = &c->held; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->pe.id == id) {
			r = *pp;
			*pp = r->next;
			finish_err(c, r, MCP_ECANCELED, why);
			return;
		}
	}
	r = (struct creq *)mcp__pending_find(&c->pend, id);
	if (r == NULL)
		r = mrtr_find(c, id);	/* past a round: a new id */
	if (r == NULL || r->internal)
		return;
	id = r->pe.id;
	inflight = r->sent;
	finish_err(c, r, MCP_ECANCELED, why);
	if (inflight)
		send_cancelled(c, id, reason);
}

static void
run_op(struct mcp_client *c, struct creq *r)
{
	switch (r->op) {
	case OP_REQUEST:
		start_request(c, r);
		return;
	case OP_NOTIFY:
		if (!r->internal && (c->state == CS_NEW || c->state == CS_INIT)) {
			/* After notifications/initialized, in order. */
			r->next = c->held;
			c->held = r;
			return;
		}
		send_body(c, r->body, r->len);
		break;
	case OP_CANCEL:
		do_cancel(c, r->cancel_id, r->reason);
		break;
	case OP_CONNECT:
		do_connect(c);
		break;
	case OP_CLOSE:
		do_close(c);
		break;
	case OP_INPUT:
		mrtr_input(c, r);
		break;
	case OP_LISTEN:
		listen_op(c, r);
		return;
	}
	creq_free(r);
}

static void
run_queue(struct mcp_client *c)
{
	struct creq	*r, *next;

	pthread_mutex_lock(&c->lock);
	r = c->queue;
	c->queue = c->queue_tail = NULL;
	pthread_mutex_unlock(&c->lock);
	for (; r != NULL; r = next) {
		next = r->next;
		r->next = NULL;
		run_op(c, r);
	}
}

static void
wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)loop;
	(void)revents;
	run_queue(w->data);
}

/* Runs R on the loop: now when this is the loop thread, else queued. */
static void
submit(struct mcp_client *c, struct creq *r)
{
	if (on_loop(c)) {
		run_op(c, r);
		return;
	}
	pthread_mutex_lock(&c->lock);
	if (c->queue_tail != NULL)
		c->queue_tail->next = r;
	else
		c->queue = r;
	c->queue_tail = r;
	pthread_mutex_unlock(&c->lock);
	ev_async_send(c->loop, &c->wake);
}

static struct creq *
op_new(struct mcp_client *c, int op)
{
	struct creq	*r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->c = c;
	r->op = op;
	ev_timer_init(&r->timer, timeout_cb, 1., 0.);
	r->timer.data = r;
	return r;
}

static void *
loop_thread(void *arg)
{
	struct mcp_client	*c = arg;

	ev_run(c->loop, 0);
	return NULL;
}

/* ---- Public: setup --------------------------------------------------- */

mcp_client *
mcp_client_new(const char *name, const char *version)
{
	mcp_client	*c;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->name = strdup(name != NULL ? name : "libmcp-client");
	c->version = strdup(version != NULL ? version : MCP_VERSION);
	if (c->name == NULL || c->version == NULL) {
		free(c->name);
		free(c->version);
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	atomic_init(&c->next_id, 1);
	c->timeout = MCP_CLIENT_TIMEOUT;
	c->progress_resets = 1;
	c->listen = 1;
	c->progress = 1;
	c->max_message = MCP_CLIENT_MAX_MESSAGE;
	c->connect_timeout = 10.0;
	c->probe_timeout = MCP_CLIENT_PROBE_S;
	return c;
}

static int
parse_seconds(const char *v, double *out)
{
	char	*end;
	double	 d;

	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0' || d < 0 || d > 1e7)
		return MCP_EINVAL;
	*out = d;
	return MCP_OK;
}

static int
parse_bool(const char *v, int *out)
{
	if (strcmp(v, "1") == 0 || strcmp(v, "yes") == 0 ||
	    strcmp(v, "true") == 0 || strcmp(v, "on") == 0)
		*out = 1;
	else if (strcmp(v, "0") == 0 || strcmp(v, "no") == 0 ||
	    strcmp(v, "false") == 0 || strcmp(v, "off") == 0)
		*out = 0;
	else
		return MCP_EINVAL;
	return MCP_OK;
}

int
mcp_client_set_option(mcp_client *c, const char *name, const char *value)
{
	char		**h;
	double		  d;
	int		  rc;

	if (c == NULL)
		return MCP_ENOMEM;
	if (name == NULL || value == NULL)
		return MCP_EINVAL;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	if (strcmp(name, "timeout") == 0) {
		rc = parse_seconds(value, &d);
		if (rc == MCP_OK && d == 0)
			rc = MCP_EINVAL;
		if (rc == MCP_OK)
			c->timeout = d;
		return rc;
	}
	if (strcmp(name, "max-timeout") == 0)
		return parse_seconds(value, &c->max_timeout);
	if (strcmp(name, "connect-timeout") == 0)
		return parse_seconds(value, &c->connect_timeout);
	if (strcmp(name, "progress-resets-timeout") == 0)
		return parse_bool(value, &c->progress_resets);
	if (strcmp(name, "listen") == 0)
		return parse_bool(value, &c->listen);
	if (strcmp(name, "progress") == 0)
		return parse_bool(value, &c->progress);
	if (strcmp(name, "insecure") == 0)
		return parse_bool(value, &c->insecure);
	if (strcmp(name, "protocol") == 0) {
		/* auto: the era the server speaks; 2026-07-28 only; legacy:
		 * initialize, asking for the latest; or initialize asking
		 * for that version. */
		if (strcmp(value, "auto") == 0 || strcmp(value, "legacy") == 0 ||
		    strcmp(value, MCP_CLIENT_MODERN) == 0) {
			free(c->protocol);
			c->protocol = NULL;
			c->want = value[0] == 'a' ? WANT_AUTO : value[0] == 'l' ?
			    WANT_LEGACY : WANT_MODERN;
			return MCP_OK;
		}
		if (!known_version(value))
			return MCP_EINVAL;
		free(c->protocol);
		c->protocol = strdup(value);
		c->want = WANT_LEGACY;
		return c->protocol != NULL ? MCP_OK : MCP_ENOMEM;
	}
	if (strcmp(name, "probe-timeout") == 0) {
		rc = parse_seconds(value, &d);
		if (rc == MCP_OK && d == 0)
			rc = MCP_EINVAL;
		if (rc == MCP_OK)
			c->probe_timeout = d;
		return rc;
	}
	if (strcmp(name, "transport") == 0) {
		/* http is Streamable HTTP with the spec's fallback. */
		if (strcmp(value, "auto") == 0 || strcmp(value, "http") == 0)
			c->force = 0;
		else if (strcmp(value, "sse") == 0)
			c->force = 2;
		else
			return MCP_EINVAL;
		return MCP_OK;
	}
	if (strcmp(name, "header") == 0) {
		const char *colon = strchr(value, ':');

		if (colon == NULL || colon == value ||
		    strpbrk(value, "\r\n") != NULL)
			return MCP_EINVAL;
		h = realloc(c->headers, (size_t)(c->nheaders + 1) *
		    sizeof(*h));
		if (h == NULL)
			return MCP_ENOMEM;
		c->headers = h;
		h[c->nheaders] = strdup(value);
		if (h[c->nheaders] == NULL)
			return MCP_ENOMEM;
		c->nheaders++;
		return MCP_OK;
	}
	if (strcmp(name, "max-message") == 0) {
		char *end;
		unsigned long long n;

		errno = 0;
		n = strtoull(value, &end, 10);
		if (errno != 0 || end == value || n > (1ULL << 31))
			return MCP_EINVAL;
		if (*end == 'k' || *end == 'K')
			n <<= 10, end++;
		else if (*end == 'm' || *end == 'M')
			n <<= 20, end++;
		if (*end != '\0' || n < 1024 || n > (1ULL << 31))
			return MCP_EINVAL;
		c->max_message = (size_t)n;
		return MCP_OK;
	}
	if (strcmp(name, "cacert") == 0) {
		free(c->cacert);
		c->cacert = strdup(value);
		return c->cacert != NULL ? MCP_OK : MCP_ENOMEM;
	}
	return MCP_EINVAL;		/* no such option, as the server's */
}

int
mcp_client_set_loop(mcp_client *c, struct ev_loop *loop)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (loop == NULL)
		return MCP_EINVAL;
	if (c->state != CS_NEW || c->loop != NULL)
		return MCP_ESTATE;
	c->loop = loop;
	return MCP_OK;
}

int
mcp_client_on_request(mcp_client *c, const char *method,
    mcp_client_request_fn fn, void *udata)
{
	struct handler	*h;

	if (c == NULL)
		return MCP_ENOMEM;
	if (method == NULL || fn == NULL)
		return MCP_EINVAL;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	h = handler_of(c, method);
	if (h == NULL) {
		h = calloc(1, sizeof(*h));
		if (h == NULL || (h->method = strdup(method)) == NULL) {
			free(h);
			return MCP_ENOMEM;
		}
		h->next = c->handlers;
		c->handlers = h;
	}
	h->fn = fn;
	h->udata = udata;
	return MCP_OK;
}

int
mcp_client_on_lost(mcp_client *c, mcp_client_cb fn, void *udata)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	c->on_lost = fn;
	c->lost_udata = udata;
	return MCP_OK;
}

int
mcp_client_on_stderr(mcp_client *c, mcp_client_stderr_fn fn, void *udata)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	c->on_stderr = fn;
	c->stderr_udata = udata;
	return MCP_OK;
}

int
mcp_client_on_notification(mcp_client *c, mcp_client_notify_fn fn,
    void *udata)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	c->on_notify = fn;
	c->notify_udata = udata;
	return MCP_OK;
}

int
mcp_client_on_progress(mcp_client *c, mcp_client_progress_fn fn,
    void *udata)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	c->on_progress = fn;
	c->progress_udata = udata;
	return MCP_OK;
}

int
mcp_client_on_ready(mcp_client *c, mcp_client_cb fn, void *udata)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	c->on_ready = fn;
	c->ready_udata = udata;
	return MCP_OK;
}

int
mcp_client_set_capabilities_new(mcp_client *c, json_t *caps)
{
	if (c == NULL || caps == NULL) {
		json_decref(caps);
		return MCP_ENOMEM;
	}
	if (!json_is_object(caps)) {
		json_decref(caps);
		return MCP_EINVAL;
	}
	if (c->state != CS_NEW) {
		json_decref(caps);
		return MCP_ESTATE;
	}
	json_decref(c->caps);
	c->caps = caps;
	return MCP_OK;
}

int
mcp_client_on_trace(mcp_client *c, mcp_client_trace_fn fn, void *udata)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (c->state != CS_NEW)
		return MCP_ESTATE;
	c->on_trace = fn;
	c->trace_udata = udata;
	return MCP_OK;
}

int
mcp_client_set_roots_new(mcp_client *c, json_t *roots)
{
	json_t		*old;

	if (c == NULL) {
		json_decref(roots);
		return MCP_ENOMEM;
	}
	if (roots == NULL)
		return MCP_ENOMEM;
	if (!json_is_array(roots)) {
		json_decref(roots);
		return MCP_EINVAL;
	}
	if (c->state == CS_NEW) {
		json_decref(c->roots);
		c->roots = roots;
		return MCP_OK;
	}
	if (c->roots == NULL && handler_of(c, "roots/list") == NULL) {
		/* The capability was not declared: too late now. */
		json_decref(roots);
		return MCP_ESTATE;
	}
	/* Swapped under the lock: the loop reads c->roots when asked. */
	pthread_mutex_lock(&c->lock);
	old = c->roots;
	c->roots = roots;
	pthread_mutex_unlock(&c->lock);
	json_decref(old);
	/* 2026-07-28: a server asks for the roots in each request that
	 * needs them (inputRequests); there is no one to tell. */
	if (c->modern && c->state == CS_READY)
		return MCP_OK;
	return notify(c, "notifications/roots/list_changed", NULL);
}

/* ---- Public: connecting ---------------------------------------------- */

/* A blocking call's meeting point with the loop. */
struct waiter {
	pthread_mutex_t	 m;
	pthread_cond_t	 cv;
	int		 done;
	int		 rc;
	json_t		*result;
};

static void
waiter_init(struct waiter *w)
{
	pthread_mutex_init(&w->m, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->done = 0;
	w->rc = MCP_OK;
	w->result = NULL;
}

static void
waiter_wait(struct waiter *w)
{
	pthread_mutex_lock(&w->m);
	while (!w->done)
		pthread_cond_wait(&w->cv, &w->m);
	pthread_mutex_unlock(&w->m);
	pthread_mutex_destroy(&w->m);
	pthread_cond_destroy(&w->cv);
}

/* The initialization ended with RC: a blocking connect learns it. */
static void
connect_signal(struct mcp_client *c, int rc)
{
	struct waiter	*w = c->connect_wait;

	if (w == NULL)
		return;
	c->connect_wait = NULL;
	pthread_mutex_lock(&w->m);
	w->rc = rc;
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->m);
}

static void
waiter_cb(mcp_client *c, int rc, json_t *result, void *udata)
{
	struct waiter	*w = udata;

	(void)c;
	pthread_mutex_lock(&w->m);
	w->rc = rc;
	w->result = json_incref(result);
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->m);
}

/*
 * Both connects end here: the transport chosen, the loop set up (ours
 * on a new thread when the caller gave none), initialize sent. The
 * synchronous use waits for the initialization's end (connect_signal).
 */
static int
connect_start(struct mcp_client *c)
{
	struct creq	*r;
	struct waiter	 w;

	if (c->loop == NULL) {
		c->loop = ev_loop_new(EVFLAG_AUTO);
		if (c->loop == NULL)
			return MCP_ENOMEM;
		c->own_loop = 1;
	}
	ev_async_init(&c->wake, wake_cb);
	c->wake.data = c;
	ev_async_start(c->loop, &c->wake);
	r = op_new(c, OP_CONNECT);
	if (r == NULL)
		return MCP_ENOMEM;
	if (!c->own_loop) {
		/* The caller's loop runs on the caller's thread. */
		c->thread = pthread_self();
		c->thread_started = 1;
		run_op(c, r);
		return c->state == CS_LOST ? c->connect_rc : MCP_OK;
	}
	c->close_op = op_new(c, OP_CLOSE);
	if (c->close_op == NULL) {
		creq_free(r);
		return MCP_ENOMEM;
	}
	/* Set before the thread exists, so that no op runs on this one. */
	c->thread_started = 1;
	waiter_init(&w);
	c->connect_wait = &w;
	if (pthread_create(&c->thread, NULL, loop_thread, c) != 0) {
		c->thread_started = 0;
		c->connect_wait = NULL;
		pthread_mutex_destroy(&w.m);
		pthread_cond_destroy(&w.cv);
		creq_free(r);
		snprintf(c->err, sizeof(c->err), "pthread_create: %s",
		    strerror(errno));
		return MCP_ESYS;
	}
	submit(c, r);
	/* Until the initialization ends, one way or the other; its own
	 * timeout bounds the wait. */
	waiter_wait(&w);
	return w.rc;
}

int
mcp_client_connect_stdio(mcp_client *c, char *const argv[],
    char *const envp[], const char *cwd)
{
	size_t	 n, i;

	if (c == NULL)
		return MCP_ENOMEM;
	if (argv == NULL || argv[0] == NULL)
		return MCP_EINVAL;
	if (c->state != CS_NEW || c->ops != NULL)
		return MCP_ESTATE;
	for (n = 0; argv[n] != NULL; n++)
		;
	c->argv = calloc(n + 1, sizeof(char *));
	if (c->argv == NULL)
		return MCP_ENOMEM;
	for (i = 0; i < n; i++)
		if ((c->argv[i] = strdup(argv[i])) == NULL)
			return MCP_ENOMEM;
	if (envp != NULL) {
		for (n = 0; envp[n] != NULL; n++)
			;
		c->envp = calloc(n + 1, sizeof(char *));
		if (c->envp == NULL)
			return MCP_ENOMEM;
		for (i = 0; i < n; i++)
			if ((c->envp[i] = strdup(envp[i])) == NULL)
				return MCP_ENOMEM;
	}
	if (cwd != NULL && (c->cwd = strdup(cwd)) == NULL)
		return MCP_ENOMEM;
	c->ops = &mcp__client_stdio_ops;
	return connect_start(c);
}

int
mcp_client_connect_url(mcp_client *c, const char *url)
{
	if (c == NULL)
		return MCP_ENOMEM;
	if (url == NULL || (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0))
		return MCP_EINVAL;
	if (c->state != CS_NEW || c->ops != NULL)
		return MCP_ESTATE;
	c->url = strdup(url);
	if (c->url == NULL)
		return MCP_ENOMEM;
	c->ops = &mcp__client_http_ops;
	return connect_start(c);
}

const char *
mcp_client_error(mcp_client *c)
{
	if (c == NULL)
		return mcp_strerror(MCP_ENOMEM);
	return c->err[0] != '\0' ? c->err : NULL;
}

const char *
mcp_client_protocol(mcp_client *c)
{
	return c != NULL && c->negotiated[0] != '\0' ? c->negotiated : NULL;
}

json_t *
mcp_client_server_info(mcp_client *c)
{
	return c != NULL ? c->server_info : NULL;
}

json_t *
mcp_client_server_capabilities(mcp_client *c)
{
	return c != NULL ? c->server_caps : NULL;
}

const char *
mcp_client_instructions(mcp_client *c)
{
	return c != NULL ? c->instructions : NULL;
}

const char *
mcp_client_transport(mcp_client *c)
{
	if (c == NULL || c->ops == NULL)
		return NULL;
	return c->tname != NULL ? c->tname : c->ops->name;
}

/* ---- Public: requests ------------------------------------------------ */

/*
 * The requests behind every public one. PARAMS (stolen) may be NULL
 * here, for none: the library's own ping and first list page. The
 * public _new functions take NULL for a failed constructor, as the
 * house rule (mcp.h) has it, and so refuse it with MCP_ENOMEM.
 */
static int
request_async(struct mcp_client *c, const char *method, json_t *params,
    mcp_client_cb cb, void *udata, long long *idp)
{
	struct creq	*r;

	if (idp != NULL)
		*idp = -1;
	if (c == NULL) {
		json_decref(params);
		return MCP_ENOMEM;
	}
	if (method == NULL || (params != NULL && !json_is_object(params))) {
		json_decref(params);
		return MCP_EINVAL;
	}
	if (c->ops == NULL || c->state == CS_CLOSED) {
		json_decref(params);
		return MCP_ESTATE;
	}
	r = op_new(c, OP_REQUEST);
	if (r == NULL || (r->method = strdup(method)) == NULL) {
		free(r);
		json_decref(params);
		return MCP_ENOMEM;
	}
	r->params = params;
	r->cb = cb;
	r->udata = udata;
	r->pe.id = atomic_fetch_add(&c->next_id, 1);
	if (idp != NULL)
		*idp = r->pe.id;
	submit(c, r);
	return MCP_OK;
}

int
mcp_client_request_async_new(mcp_client *c, const char *method,
    json_t *params, mcp_client_cb cb, void *udata, long long *idp)
{
	if (params == NULL) {
		if (idp != NULL)
			*idp = -1;
		return MCP_ENOMEM;
	}
	return request_async(c, method, params, cb, udata, idp);
}

static int
request(struct mcp_client *c, const char *method, json_t *params,
    json_t **result)
{
	struct waiter	 w;
	int		 rc;

	if (result != NULL)
		*result = NULL;
	if (c != NULL && on_loop(c)) {
		json_decref(params);
		if (result != NULL)
			*result = err_object(MCP_ESTATE, "a blocking call on "
			    "the client's own loop thread would never end");
		return MCP_ESTATE;
	}
	waiter_init(&w);
	rc = request_async(c, method, params, waiter_cb, &w, NULL);
	if (rc != MCP_OK) {
		pthread_mutex_destroy(&w.m);
		pthread_cond_destroy(&w.cv);
		if (result != NULL)
			*result = err_object(rc, NULL);
		return rc;
	}
	waiter_wait(&w);
	if (result != NULL)
		*result = w.result;
	else
		json_decref(w.result);
	return w.rc;
}

/* A NULL constructor's result, as every _new function reports it. */
static int
refuse_null(json_t **result)
{
	if (result != NULL)
		*result = err_object(MCP_ENOMEM, "a NULL json_t: out of memory "
		    "(pass json_object() for none)");
	return MCP_ENOMEM;
}

int
mcp_client_request_new(mcp_client *c, const char *method, json_t *params,
    json_t **result)
{
	if (params == NULL)
		return refuse_null(result);
	return request(c, method, params, result);
}

int
mcp_client_cancel_all(mcp_client *c, const char *reason)
{
	return mcp_client_cancel(c, -1, reason);
}

int
mcp_client_cancel(mcp_client *c, long long id, const char *reason)
{
	struct creq	*r;

	if (c == NULL)
		return MCP_ENOMEM;
	if (c->ops == NULL)
		return MCP_ESTATE;
	r = op_new(c, OP_CANCEL);
	if (r == NULL)
		return MCP_ENOMEM;
	r->cancel_id = id;
	if (reason != NULL && (r->reason = strdup(reason)) == NULL) {
		free(r);
		return MCP_ENOMEM;
	}
	submit(c, r);
	return MCP_OK;
}

/* A ready-made message body to the loop: a notification, held until
 * the initialization is done, or a reply (REPLY), sent at once. */
static int
submit_body(struct mcp_client *c, char *body, int reply)
{
	struct creq	*r;

	if (body == NULL)
		return MCP_ENOMEM;
	r = op_new(c, OP_NOTIFY);
	if (r == NULL) {
		free(body);
		return MCP_ENOMEM;
	}
	r->body = body;
	r->len = strlen(body);
	r->internal = reply;
	submit(c, r);
	return MCP_OK;
}

int
mcp_client_notify_new(mcp_client *c, const char *method, json_t *params)
{
	if (c == NULL || params == NULL) {
		json_decref(params);
		return MCP_ENOMEM;
	}
	return notify(c, method, params);
}

/* A notification; PARAMS (stolen) NULL for none. */
static int
notify(struct mcp_client *c, const char *method, json_t *params)
{
	struct buf	 b = { 0 };
	int		 rc;

	if (method == NULL || (params != NULL && !json_is_object(params))) {
		json_decref(params);
		return MCP_EINVAL;
	}
	if (c->ops == NULL) {
		json_decref(params);
		return MCP_ESTATE;
	}
	if (c->state == CS_LOST || c->state == CS_CLOSED) {
		json_decref(params);
		return MCP_EIO;
	}
	rc = mcp__rpc_notification(&b, method, params);
	json_decref(params);
	if (rc != MCP_OK) {
		mcp__buf_free(&b);
		return MCP_ENOMEM;
	}
	return submit_body(c, mcp__buf_steal(&b, NULL), 0);
}

/*
 * 2026-07-28: the answer (RESULT, stolen; NULL: the error CODE,
 * MESSAGE) to an entry of a server's inputRequests goes to the loop,
 * into the retry of its request (mrtr_input).
 */
static int
submit_input(struct mcp_client_reply *rp, json_t *result, int code,
    const char *message)
{
	struct creq	*op = op_new(rp->c, OP_INPUT);
	char		 msg[200];

	if (op == NULL || (op->key = strdup(rp->key)) == NULL) {
		free(op);
		json_decref(result);
		return MCP_ENOMEM;
	}
	if (result == NULL) {
		snprintf(msg, sizeof(msg), "%d %.180s", code, message != NULL ?
		    message : "error");
		op->reason = strdup(msg);
	}
	op->value = result;
	op->cancel_id = rp->first_id;
	op->rounds = rp->round;
	submit(rp->c, op);
	return MCP_OK;
}

/* Takes RP off the client's list; 0 when it was answered already. */
static int
reply_take(struct mcp_client_reply *rp)
{
	struct mcp_client	*c = rp->c;
	struct mcp_client_reply	**pp;
	int			  live = 0;

	pthread_mutex_lock(&c->lock);
	for (pp = &c->replies; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == rp) {
			*pp = rp->next;
			live = !rp->done;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return live;
}

int
mcp_client_reply_result(mcp_client_reply *rp, json_t *result)
{
	struct buf	 b = { 0 };
	int		 live, rc;

	if (rp == NULL) {
		json_decref(result);
		return MCP_EINVAL;
	}
	if (result == NULL) {
		(void)mcp_client_reply_error(rp, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return MCP_ENOMEM;
	}
	live = reply_take(rp);
	if (rp->key != NULL) {
		rc = live ? submit_input(rp, result, 0, NULL) : MCP_ESTATE;
		if (!live)
			json_decref(result);
		json_decref(rp->id);
		free(rp->key);
		free(rp);
		return rc;
	}
	rc = live ? mcp__rpc_result(&b, rp->id, result) : MCP_ESTATE;
	json_decref(result);
	json_decref(rp->id);
	if (rc == MCP_OK)
		rc = submit_body(rp->c, mcp__buf_steal(&b, NULL), 1);
	mcp__buf_free(&b);
	free(rp);
	return rc;
}

json_t *
mcp_client_reply_id(mcp_client_reply *rp)
{
	return rp != NULL ? rp->id : NULL;
}

int
mcp_client_reply_error(mcp_client_reply *rp, int code, const char *message)
{
	struct buf	 b = { 0 };
	int		 live, rc;

	if (rp == NULL)
		return MCP_EINVAL;
	live = reply_take(rp);
	if (rp->key != NULL) {
		rc = live ? submit_input(rp, NULL, code, message) : MCP_ESTATE;
		json_decref(rp->id);
		free(rp->key);
		free(rp);
		return rc;
	}
	rc = live ? mcp__rpc_error(&b, rp->id, code, message != NULL ?
	    message : "error", NULL) : MCP_ESTATE;
	json_decref(rp->id);
	if (rc == MCP_OK)
		rc = submit_body(rp->c, mcp__buf_steal(&b, NULL), 1);
	mcp__buf_free(&b);
	free(rp);
	return rc;
}

/* ---- Public: the usual requests -------------------------------------- */

/*
 * A list method followed through every nextCursor. A server that hands
 * out the same cursor twice would never end: that is a protocol error.
 */
static int
list_all(struct mcp_client *c, const char *method, const char *key,
    json_t **out)
{
	json_t	*all, *res, *page, *next, *params;
	char	*cursor = NULL;
	int	 rc, pages = 0;
	json_t	*discard = NULL;

	if (out == NULL)
		out = &discard;
	*out = NULL;
	all = json_array();
	if (all == NULL)
		return MCP_ENOMEM;
	for (;;) {
		params = cursor != NULL ? json_pack("{s:s}", "cursor",
		    cursor) : NULL;
		rc = request(c, method, params, &res);
		if (rc != MCP_OK) {
			json_decref(all);
			free(cursor);
			*out = res;
			json_decref(discard);
			return rc;
		}
		page = json_object_get(res, key);
		if (!json_is_array(page)) {
			json_decref(res);
			json_decref(all);
			free(cursor);
			*out = err_object(MCP_EPROTO, "the server's list has no "
			    "array where one belongs");
			return MCP_EPROTO;
		}
		json_array_extend(all, page);
		next = json_object_get(res, "nextCursor");
		if (!json_is_string(next) || json_string_length(next) == 0) {
			json_decref(res);
			break;
		}
		if ((cursor != NULL && strcmp(cursor,
		    json_string_value(next)) == 0) || ++pages > 100000) {
			json_decref(res);
			json_decref(all);
			free(cursor);
			*out = err_object(MCP_EPROTO, "the server's cursors go "
			    "round in a circle");
			return MCP_EPROTO;
		}
		free(cursor);
		cursor = strdup(json_string_value(next));
		json_decref(res);
		if (cursor == NULL) {
			json_decref(all);
			*out = err_object(MCP_ENOMEM, NULL);
			return MCP_ENOMEM;
		}
	}
	free(cursor);
	*out = all;
	json_decref(discard);
	return MCP_OK;
}

int
mcp_client_list_tools(mcp_client *c, json_t **tools)
{
	return list_all(c, "tools/list", "tools", tools);
}

int
mcp_client_list_resources(mcp_client *c, json_t **resources)
{
	return list_all(c, "resources/list", "resources", resources);
}

int
mcp_client_list_templates(mcp_client *c, json_t **templates)
{
	return list_all(c, "resources/templates/list", "resourceTemplates",
	    templates);
}

int
mcp_client_list_prompts(mcp_client *c, json_t **prompts)
{
	return list_all(c, "prompts/list", "prompts", prompts);
}

/* {name, arguments}: the shape of tools/call and prompts/get. */
static int
named(struct mcp_client *c, const char *method, const char *name,
    json_t *args, json_t **result)
{
	json_t	*params;

	if (args == NULL)
		return refuse_null(result);
	if (name == NULL || !json_is_object(args)) {
		json_decref(args);
		if (result != NULL)
			*result = err_object(MCP_EINVAL, NULL);
		return MCP_EINVAL;
	}
	params = json_pack("{s:s, s:o}", "name", name, "arguments", args);
	return mcp_client_request_new(c, method, params, result);
}

int
mcp_client_call_tool_new(mcp_client *c, const char *name, json_t *args,
    json_t **result)
{
	return named(c, "tools/call", name, args, result);
}

int
mcp_client_get_prompt_new(mcp_client *c, const char *name, json_t *args,
    json_t **result)
{
	return named(c, "prompts/get", name, args, result);
}

int
mcp_client_read_resource(mcp_client *c, const char *uri, json_t **result)
{
	if (uri == NULL) {
		if (result != NULL)
			*result = err_object(MCP_EINVAL, NULL);
		return MCP_EINVAL;
	}
	return mcp_client_request_new(c, "resources/read",
	    json_pack("{s:s}", "uri", uri), result);
}

int
mcp_client_complete_new(mcp_client *c, json_t *ref, const char *arg,
    const char *value, json_t **result)
{
	json_t	*res = NULL, *params;
	int	 rc;

	if (result != NULL)
		*result = NULL;
	if (ref == NULL)
		return refuse_null(result);
	if (!json_is_object(ref) || arg == NULL || value == NULL) {
		json_decref(ref);
		if (result != NULL)
			*result = err_object(MCP_EINVAL, NULL);
		return MCP_EINVAL;
	}
	params = json_pack("{s:o, s:{s:s, s:s}}", "ref", ref, "argument",
	    "name", arg, "value", value);
	rc = request(c, "completion/complete", params, &res);
	if (rc == MCP_OK && !json_is_object(json_object_get(res,
	    "completion"))) {
		json_decref(res);
		res = err_object(MCP_EPROTO, "completion/complete answered "
		    "without a completion");
		rc = MCP_EPROTO;
	}
	if (rc == MCP_OK) {
		json_t *comp = json_incref(json_object_get(res, "completion"));

		json_decref(res);
		res = comp;
	}
	if (result != NULL)
		*result = res;
	else
		json_decref(res);
	return rc;
}

static int
simple(struct mcp_client *c, const char *method, json_t *params)
{
	json_t	*res = NULL;
	int	 rc;

	rc = request(c, method, params, &res);
	json_decref(res);
	return rc;
}

/* 2026-07-28 has no ping: server/discover, the lightest request, is
 * the question whether the server answers. */
int
mcp_client_ping(mcp_client *c)
{
	if (c != NULL && c->modern && c->state == CS_READY)
		return simple(c, "server/discover", NULL);
	return simple(c, "ping", NULL);
}

/* 2026-07-28 has no logging/setLevel: each request asks for its own
 * level in _meta, and the level set here goes into the next ones. */
int
mcp_client_set_log_level(mcp_client *c, const char *level)
{
	if (level == NULL || mcp__level_parse(level) < 0)
		return MCP_EINVAL;
	if (c != NULL && c->modern && c->state == CS_READY) {
		pthread_mutex_lock(&c->lock);
		snprintf(c->log_level, sizeof(c->log_level), "%s", level);
		pthread_mutex_unlock(&c->lock);
		return MCP_OK;
	}
	return simple(c, "logging/setLevel", json_pack("{s:s}", "level",
	    level));
}

/*
 * 2026-07-28 has no resources/subscribe: a subscriptions/listen with the
 * URIs, opened anew for each change; the call returns once the server
 * has acknowledged it (or refused it).
 */
static int
listen_change(struct mcp_client *c, const char *uri, int add)
{
	struct waiter	 w;
	struct creq	*op;
	json_t		*res = c->server_caps;

	if (!json_is_true(json_object_get(json_object_get(res, "resources"),
	    "subscribe"))) {
		mcp_log(MCP_LOG_WARN, "client: the server does not declare "
		    "resources.subscribe; no subscriptions/listen for %.200s",
		    uri);
		return MCP_ESERVER;
	}
	if (on_loop(c))
		return MCP_ESTATE;
	op = op_new(c, OP_LISTEN);
	if (op == NULL || (op->key = strdup(uri)) == NULL) {
		creq_free(op);
		return MCP_ENOMEM;
	}
	waiter_init(&w);
	op->cancel_id = add;
	op->cb = waiter_cb;
	op->udata = &w;
	submit(c, op);
	waiter_wait(&w);
	json_decref(w.result);
	return w.rc;
}

int
mcp_client_subscribe(mcp_client *c, const char *uri)
{
	if (uri == NULL)
		return MCP_EINVAL;
	if (c != NULL && c->modern && c->state == CS_READY)
		return listen_change(c, uri, 1);
	return simple(c, "resources/subscribe", json_pack("{s:s}", "uri",
	    uri));
}

int
mcp_client_unsubscribe(mcp_client *c, const char *uri)
{
	if (uri == NULL)
		return MCP_EINVAL;
	if (c != NULL && c->modern && c->state == CS_READY)
		return listen_change(c, uri, 0);
	return simple(c, "resources/unsubscribe", json_pack("{s:s}", "uri",
	    uri));
}

/* ---- Public: closing ------------------------------------------------- */

void
mcp_client_free(mcp_client *c)
{
	struct creq		*r;
	struct handler		*h;
	struct mcp_client_reply	*rp;
	int			 i;

	if (c == NULL)
		return;
	if (c->loop != NULL && c->state != CS_NEW) {
		if (c->own_loop && c->thread_started) {
			/* Made at connect, so that closing needs no memory. */
			r = c->close_op;
			c->close_op = NULL;
			submit(c, r);
			pthread_join(c->thread, NULL);
			c->thread_started = 0;
			run_queue(c);	/* whatever came too late */
		} else {
			run_queue(c);
			do_close(c);
		}
		ev_async_stop(c->loop, &c->wake);
	} else if (c->state != CS_NEW || c->ops != NULL) {
		do_close(c);
	}
	if (c->own_loop)
		ev_loop_destroy(c->loop);
	while ((rp = c->replies) != NULL) {
		c->replies = rp->next;
		json_decref(rp->id);
		free(rp->key);
		free(rp);
	}
	while ((h = c->handlers) != NULL) {
		c->handlers = h->next;
		free(h->method);
		free(h);
	}
	for (i = 0; i < c->nheaders; i++)
		free(c->headers[i]);
	free(c->headers);
	if (c->argv != NULL)
		for (i = 0; c->argv[i] != NULL; i++)
			free(c->argv[i]);
	free(c->argv);
	if (c->envp != NULL)
		for (i = 0; c->envp[i] != NULL; i++)
			free(c->envp[i]);
	free(c->envp);
	free(c->cwd);
	free(c->url);
	creq_free(c->close_op);
	free(c->cacert);
	free(c->protocol);
	free(c->name);
	free(c->version);
	free(c->instructions);
	json_decref(c->server_info);
	json_decref(c->server_caps);
	json_decref(c->roots);
	json_decref(c->caps);
	json_decref(c->caps_now);
	json_decref(c->supported);
	xh_clear(c);
	json_decref(c->subs);
	mcp__pending_free(&c->pend);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
