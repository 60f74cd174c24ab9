/*
 * remote.c: a remote MCP server on stdio, for agents that launch a
 * local command (mcp-remote's job), in one small process:
 *
 *   mcp-gateway --url URL [--header 'K: V' ...] [--transport http|sse]
 *
 * It reads JSON-RPC lines from the agent on stdin and writes them back on
 * stdout, and speaks to URL through the client library (Streamable HTTP
 * with the fallback to legacy SSE, resumption, a new session on 404).
 * The agent's initialize opens the connection with the agent's own
 * version, capabilities and clientInfo, and is answered with the
 * server's; requests go on with ids of the gateway's own, mapped back,
 * and so do progress tokens; the server's requests (sampling,
 * elicitation, roots) reach the agent as "g<n>", and its answers go
 * back; cancellations and notifications pass both ways. Logs go to
 * stderr only. EOF on stdin or SIGTERM ends the session (DELETE) and the
 * process, with status 0.
 *
 * One thread: the client runs on this process's libev loop.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>
#include <mcp.h>

#include "../expand.h"
#include "gateway.h"

#define MAX_LINE	(16u * 1024 * 1024)	/* an agent's message */

/* A request of the agent's, forwarded: our id -> the agent's. */
struct fwd {
	struct fwd	*next;
	long long	 cid;		/* the client library's id */
	json_t		*agent_id;
	json_t		*token;		/* the agent's progressToken, or NULL */
};

/* A request of the server's, at the agent as "g<n>". */
struct back {
	struct back		*next;
	long long		 n;
	mcp_client_reply	*reply;
};

static struct ev_loop	*loop;
static mcp_client	*cl;
static struct fwd	*fwds;
static struct back	*backs;
static long long	 next_back = 1;
static json_t		*init_id;	/* the agent's initialize, waiting */
static int		 ready;		/* connected and initialized */
static char		*broken;	/* why the connection failed */
static char		*url, **headers, *transport, *cacert, *timeout_s;
static int		 nheaders, insecure;
static ev_io		 rio, wio;
static char		*in, *out;
static size_t		 inlen, incap, outlen, outoff, outcap;
static int		 skipping;

/* ---- stdout ---------------------------------------------------------- */

static void
flush_out(void)
{
	ssize_t	 n;

	while (outoff < outlen) {
		n = write(1, out + outoff, outlen - outoff);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			ev_io_start(loop, &wio);
			return;
		}
		if (n < 0) {
			/* The agent is gone: nobody to serve. */
			ev_break(loop, EVBREAK_ALL);
			return;
		}
		outoff += (size_t)n;
	}
	outoff = outlen = 0;
	ev_io_stop(loop, &wio);
}

static void
write_cb(struct ev_loop *l, ev_io *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	flush_out();
}

/* One message to the agent (stolen), as one line. */
static void
emit(json_t *msg)
{
	char	*s;
	size_t	 n;

	if (msg == NULL)
		return;
	s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (s == NULL)
		return;
	n = strlen(s);
	if (outlen + n + 1 > outcap) {
		char *p = realloc(out, outlen + n + 1 + 65536);

		if (p == NULL) {
			free(s);
			return;
		}
		out = p;
		outcap = outlen + n + 1 + 65536;
	}
	memcpy(out + outlen, s, n);
	out[outlen + n] = '\n';
	outlen += n + 1;
	free(s);
	if (!ev_is_active(&wio))
		flush_out();
}

static void
emit_error(json_t *id, int code, const char *message)
{
	emit(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", "code", code, "message",
	    message));
}

/* ---- From the server ------------------------------------------------- */

/* Takes F off the list; NULL if it is not on it. */
static struct fwd *
fwd_take(struct fwd *f)
{
	struct fwd	**pp;

	for (pp = &fwds; *pp != NULL; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			return f;
		}
	return NULL;
}

static void
fwd_free(struct fwd *f)
{
	json_decref(f->agent_id);
	json_decref(f->token);
	free(f);
}

/* A forwarded request's end: its answer to the agent, under its own id. */
static void
answered(mcp_client *c, int rc, json_t *result, void *udata)
{
	struct fwd	*f = fwd_take(udata);
	const char	*msg;

	(void)c;
	if (f == NULL)
		return;
	if (rc == MCP_OK)
		emit(json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id",
		    f->agent_id, "result", result));
	else if (rc == MCP_ESERVER)
		emit(json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0", "id",
		    f->agent_id, "error", result));
	else if (rc != MCP_ECANCELED) {
		/* The gateway's own failure: an internal error, saying why. */
		msg = json_string_value(json_object_get(result, "message"));
		emit_error(f->agent_id, MCP_RPC_INTERNAL_ERROR, msg != NULL ?
		    msg : mcp_strerror(rc));
	}
	fwd_free(f);
}

static void
progress(mcp_client *c, long long id, double done, double total,
    const char *message, void *udata)
{
	struct fwd	*f;
	json_t		*p;

	(void)c;
	(void)udata;
	for (f = fwds; f != NULL && f->cid != id; f = f->next)
		;
	if (f == NULL || f->token == NULL)
		return;		/* the agent asked for none */
	p = json_pack("{s:O, s:f}", "progressToken", f->token, "progress",
	    done);
	if (total >= 0)
		json_object_set_new(p, "total", json_real(total));
	if (message != NULL)
		json_object_set_new(p, "message", json_string(message));
	emit(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
	    "notifications/progress", "params", p));
}

static void
notified(mcp_client *c, const char *method, json_t *params, void *udata)
{
	struct back	*b;
	json_t		*msg, *rid;
	char		 g[32];

	(void)c;
	(void)udata;
	if (strcmp(method, "notifications/cancelled") == 0) {
		/* The server gave up a request of its own: tell the agent,
		 * under the id the agent knows it by. */
		rid = json_object_get(params, "requestId");
		for (b = backs; b != NULL; b = b->next)
			if (json_equal(mcp_client_reply_id(b->reply), rid))
				break;
		if (b == NULL)
			return;
		snprintf(g, sizeof(g), "g%lld", b->n);
		params = json_deep_copy(params);
		json_object_set_new(params, "requestId", json_string(g));
		emit(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method",
		    method, "params", params));
		return;
	}
	msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (params != NULL)
		json_object_set(msg, "params", params);
	emit(msg);
}

/* A request from the server: to the agent, as "g<n>". */
static void
asked(mcp_client *c, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	struct back	*b = calloc(1, sizeof(*b));
	json_t		*msg;
	char		 g[32];

	(void)c;
	(void)udata;
	if (b == NULL) {
		(void)mcp_client_reply_error(reply, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	b->n = next_back++;
	b->reply = reply;
	b->next = backs;
	backs = b;
	snprintf(g, sizeof(g), "g%lld", b->n);
	msg = json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", g,
	    "method", method);
	if (params != NULL)
		json_object_set(msg, "params", params);
	emit(msg);
}

/* The connection is up, or failed: the agent's initialize is answered. */
static void
connected(mcp_client *c, int rc, json_t *result, void *udata)
{
	const char	*why;

	(void)udata;
	if (rc == MCP_OK) {
		ready = 1;
		emit(json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "id",
		    init_id, "result", result));
		init_id = NULL;
		return;
	}
	why = mcp_client_error(c) != NULL ? mcp_client_error(c) :
	    mcp_strerror(rc);
	broken = strdup(why);
	fprintf(stderr, "mcp-gateway: %s: %s\n", url, why);
	if (rc == MCP_ESERVER) {
		/* The server refused the agent's initialize: its own error. */
		emit(json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "id",
		    init_id, "error", result));
	} else {
		emit_error(init_id, MCP_RPC_INTERNAL_ERROR, why);
		json_decref(init_id);
	}
	init_id = NULL;
}

/* ---- From the agent -------------------------------------------------- */

static int
start(json_t *id, json_t *params)
{
	json_t		*info = json_object_get(params, "clientInfo");
	json_t		*caps = json_object_get(params, "capabilities");
	const char	*v = json_string_value(json_object_get(params,
	    "protocolVersion"));
	int		 i;

	cl = mcp_client_new(json_string_value(json_object_get(info, "name")),
	    json_string_value(json_object_get(info, "version")));
	if (cl == NULL)
		return MCP_ENOMEM;
	for (i = 0; i < nheaders; i++)
		(void)mcp_client_set_option(cl, "header", headers[i]);
	if (transport != NULL)
		(void)mcp_client_set_option(cl, "transport", transport);
	if (cacert != NULL)
		(void)mcp_client_set_option(cl, "cacert", cacert);
	if (insecure)
		(void)mcp_client_set_option(cl, "insecure", "1");
	(void)mcp_client_set_option(cl, "timeout", timeout_s != NULL ?
	    timeout_s : "300");
	/* An unknown version: the client asks for its latest, and the
	 * agent is answered with what the server chose. The agent opened
	 * a legacy session: so does the gateway (not the client's auto). */
	(void)mcp_client_set_option(cl, "protocol", "legacy");
	if (v != NULL)
		(void)mcp_client_set_option(cl, "protocol", v);
	(void)mcp_client_set_capabilities_new(cl, json_is_object(caps) ?
	    json_deep_copy(caps) : json_object());
	(void)mcp_client_on_request(cl, "*", asked, NULL);
	(void)mcp_client_on_notification(cl, notified, NULL);
	(void)mcp_client_on_progress(cl, progress, NULL);
	(void)mcp_client_on_ready(cl, connected, NULL);
	(void)mcp_client_set_loop(cl, loop);
	init_id = json_incref(id);
	/* A failure here has answered the agent already (connected). */
	if (mcp_client_connect_url(cl, url) != MCP_OK && init_id != NULL)
		return MCP_EIO;
	return MCP_OK;
}

static void
forward_request(json_t *id, const char *method, json_t *params)
{
	struct fwd	*f;
	json_t		*meta, *token;
	long long	 cid;

	if (broken != NULL) {
		emit_error(id, MCP_RPC_INTERNAL_ERROR, broken);
		return;
	}
	/* Before the connection is up, the client holds it until it is. */
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		emit_error(id, MCP_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	meta = json_object_get(params, "_meta");
	token = json_object_get(meta, "progressToken");
	f->agent_id = json_incref(id);
	f->token = json_incref(token);
	params = params != NULL ? json_deep_copy(params) : json_object();
	f->next = fwds;
	fwds = f;
	f->cid = -1;
	if (mcp_client_request_async_new(cl, method, params, answered, f,
	    &cid) != MCP_OK) {
		if (fwd_take(f) != NULL) {
			emit_error(id, MCP_RPC_INTERNAL_ERROR, "could not send");
			fwd_free(f);
		}
		return;
	}
	/* Unless it ended already (then answered freed it). */
	for (struct fwd *g = fwds; g != NULL; g = g->next)
		if (g == f)
			f->cid = cid;
}

static void
from_agent(json_t *m)
{
	json_t		*id = json_object_get(m, "id");
	json_t		*params = json_object_get(m, "params");
	const char	*method = json_string_value(json_object_get(m,
	    "method"));
	struct back	**pp, *b;
	struct fwd	*f;
	const char	*s;
	long long	 n;

	if (method == NULL && id != NULL) {
		/* The agent's answer to a request of the server's. */
		s = json_string_value(id);
		n = s != NULL && s[0] == 'g' ? strtoll(s + 1, NULL, 10) : -1;
		for (pp = &backs; *pp != NULL && (*pp)->n != n;
		    pp = &(*pp)->next)
			;
		if ((b = *pp) == NULL)
			return;
		*pp = b->next;
		if (json_object_get(m, "result") != NULL)
			(void)mcp_client_reply_result(b->reply,
			    json_incref(json_object_get(m, "result")));
		else
			(void)mcp_client_reply_error(b->reply,
			    (int)json_integer_value(json_object_get(
			    json_object_get(m, "error"), "code")),
			    json_string_value(json_object_get(json_object_get(
			    m, "error"), "message")));
		free(b);
		return;
	}
	if (method == NULL)
		return;
	if (id == NULL) {
		/* A notification. */
		if (strcmp(method, "notifications/initialized") == 0 || cl ==
		    NULL || broken != NULL)
			return;		/* the client sends its own */
		if (strcmp(method, "notifications/cancelled") == 0) {
			for (f = fwds; f != NULL; f = f->next)
				if (json_equal(f->agent_id, json_object_get(
				    params, "requestId")))
					break;
			if (f != NULL)
				(void)mcp_client_cancel(cl, f->cid,
				    json_string_value(json_object_get(params,
				    "reason")));
			return;
		}
		(void)mcp_client_notify_new(cl, method, params != NULL ?
		    json_deep_copy(params) : json_object());
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		if (cl != NULL) {
			emit_error(id, MCP_RPC_INVALID_REQUEST,
			    "already initialized");
			return;
		}
		if (start(id, params) != MCP_OK) {
			emit_error(id, MCP_RPC_INTERNAL_ERROR, "cannot connect");
			json_decref(init_id);
			init_id = NULL;
		}
		return;
	}
	if (cl == NULL) {
		if (strcmp(method, "ping") == 0)
			emit(json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0",
			    "id", id, "result"));
		else
			emit_error(id, MCP_RPC_INVALID_REQUEST,
			    "initialize first");
		return;
	}
	forward_request(id, method, params);
}

static void
line(const char *p, size_t n)
{
	json_error_t	 e;
	json_t		*m;

	while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
		n--;
	if (n == 0)
		return;
	m = json_loadb(p, n, 0, &e);
	if (m == NULL || !json_is_object(m)) {
		json_decref(m);
		emit_error(NULL, MCP_RPC_PARSE_ERROR, "parse error");
		return;
	}
	from_agent(m);
	json_decref(m);
}

static void
finish(void)
{
	ev_break(loop, EVBREAK_ALL);
}

static void
read_cb(struct ev_loop *l, ev_io *w, int revents)
{
	ssize_t	 n;
	char	*nl, *p;

	(void)l;
	(void)revents;
	if (incap - inlen < 65536) {
		p = realloc(in, incap + 65536);
		if (p == NULL)
			return;
		in = p;
		incap += 65536;
	}
	n = read(w->fd, in + inlen, incap - inlen);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (inlen > 0 && !skipping)
			line(in, inlen);
		finish();
		return;
	}
	inlen += (size_t)n;
	p = in;
	while ((nl = memchr(p, '\n', inlen - (size_t)(p - in))) != NULL) {
		if (!skipping)
			line(p, (size_t)(nl - p));
		skipping = 0;
		p = nl + 1;
	}
	inlen -= (size_t)(p - in);
	memmove(in, p, inlen);
	if (inlen > MAX_LINE) {
		fprintf(stderr, "mcp-gateway: a message over %u bytes from "
		    "the agent; skipped\n", MAX_LINE);
		skipping = 1;
		inlen = 0;
	}
}

static void
signal_cb(struct ev_loop *l, ev_signal *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	finish();
}

int
gw_remote_main(int argc, char **argv)
{
	ev_signal	 sterm, sint;
	struct back	*b;
	struct fwd	*f;
	int		 i;

	signal(SIGPIPE, SIG_IGN);
	headers = calloc((size_t)argc, sizeof(char *));
	if (headers == NULL)
		return 1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "-v") == 0) {
			mcp_log_set_level(MCP_LOG_INFO);
			continue;
		} else if (strcmp(a, "--insecure") == 0) {
			insecure = 1;
			continue;
		} else if (v == NULL) {
			gw_usage_error("%s: an option that needs a value, or no "
			    "option", a);
		} else if (strcmp(a, "--url") == 0) {
			if (strncmp(v, "http://", 7) != 0 &&
			    strncmp(v, "https://", 8) != 0)
				gw_usage_error("--url '%s' is not http:// or "
				    "https://", v);
			url = (char *)v;
		} else if (strcmp(a, "--header") == 0) {
			headers[nheaders] = expand(v);
			if (headers[nheaders] == NULL ||
			    strchr(headers[nheaders], ':') == NULL)
				gw_usage_error("bad header '%s' (K: V)", v);
			nheaders++;
		} else if (strcmp(a, "--transport") == 0) {
			if (strcmp(v, "http") != 0 && strcmp(v, "sse") != 0)
				gw_usage_error("unknown transport '%s'", v);
			transport = (char *)v;
		} else if (strcmp(a, "--timeout") == 0) {
			char *end;

			if (strtod(v, &end) <= 0 || *end != '\0')
				gw_usage_error("bad timeout '%s'", v);
			timeout_s = (char *)v;
		} else if (strcmp(a, "--cacert") == 0) {
			cacert = (char *)v;
		} else {
			gw_usage_error("unknown option '%s'", a);
		}
		i++;
	}
	if (url == NULL)
		gw_usage_error("%s", "--url URL is needed");
	loop = ev_default_loop(EVFLAG_AUTO);
	fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
	ev_io_init(&rio, read_cb, 0, EV_READ);
	ev_io_init(&wio, write_cb, 1, EV_WRITE);
	ev_io_start(loop, &rio);
	ev_signal_init(&sterm, signal_cb, SIGTERM);
	ev_signal_init(&sint, signal_cb, SIGINT);
	ev_signal_start(loop, &sterm);
	ev_signal_start(loop, &sint);
	ev_run(loop, 0);
	/* The agent left, or we were told to stop: requests of the server
	 * that the agent never answered go back as errors, then the session
	 * ends (DELETE) and what was written leaves. */
	while ((b = backs) != NULL) {
		backs = b->next;
		(void)mcp_client_reply_error(b->reply, MCP_RPC_INTERNAL_ERROR,
		    "the agent left");
		free(b);
	}
	if (cl != NULL)
		ev_run(loop, EVRUN_NOWAIT);
	mcp_client_free(cl);
	while ((f = fwds) != NULL) {
		fwds = f->next;
		fwd_free(f);
	}
	fcntl(1, F_SETFL, fcntl(1, F_GETFL) & ~O_NONBLOCK);
	if (outoff < outlen && write(1, out + outoff, outlen - outoff) < 0)
		(void)0;
	json_decref(init_id);
	free(broken);
	free(in);
	free(out);
	for (i = 0; i < nheaders; i++)
		free(headers[i]);
	free(headers);
	return 0;
}
