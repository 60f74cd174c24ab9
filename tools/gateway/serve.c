/*
 * serve.c: a stdio MCP server on the network (mcp-proxy's job):
 *
 *   mcp-gateway [SERVER OPTIONS] [--shared] [--max-children N] -- CMD ...
 *
 * The library serves the network (its transports, sessions and limits:
 * every standard server option) as a relay (mcp_server_set_relay): what
 * a session asks comes here, and goes to a child process running CMD,
 * through a client of the library's own on the same loop. By default
 * each session has a child of its own, started by its initialize (which
 * goes through as the client sent it) and ended with the session; a
 * stateless request has one for itself. With --shared one child serves
 * every session, initialized once by the gateway.
 *
 * Ids: a forwarded request goes to the child under the client library's
 * id and comes back under the session's (struct fwd), its progress token
 * too; the child's own requests reach a session as "g<n>" (struct back)
 * and its answer goes back under the child's id. Notifications: progress
 * with its request, a log with the newest request of the session it
 * belongs to, list_changed to every session of the child, and
 * resources/updated to the sessions that subscribed.
 *
 * One thread: the server's loop runs the children too.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <ev.h>
#include <mcp.h>

#include "gateway.h"

#define DEF_MAX_CHILDREN	100
#define DEF_INIT_TIMEOUT	10.0	/* s for a child's initialize */
#define BACKOFF_MIN		0.1	/* s before a shared child restarts */
#define BACKOFF_MAX		10.0

struct link;

/* A child process and the client that speaks to it. */
struct child {
	struct child	*next;		/* every child */
	mcp_client	*cl;
	int		 ready;		/* initialized */
	int		 dead;		/* freed at the next reap */
	char		*why;		/* ... and why it ended */
	json_t		*init;		/* its initialize result */
	struct link	*links;		/* the sessions it serves */
	struct fwd	*fwds;		/* forwarded, not answered: newest first */
	struct back	*backs;		/* its requests, at a session */
	ev_timer	 init_timer;
	char		 tag[48];	/* "session 3f2a..." or "shared" */
};

/* A session, as the gateway sees it (mcp_peer_data). */
struct link {
	struct link	*next;		/* ch->links */
	mcp_peer	*peer;
	struct child	*ch;		/* NULL once its child has ended */
	json_t		*init_id;	/* its initialize, waiting */
	char		*want;		/* ... for this version (shared) */
	json_t		*caps;		/* its client's capabilities */
	json_t		*subs;		/* shared: uri -> true */
	int		 level;		/* shared: logging/setLevel, or -1 */
	double		 since;		/* when it began waiting */
};

struct fwd {
	struct fwd	*next;
	struct link	*lk;
	long long	 cid;		/* the client library's id */
	json_t		*peer_id;
	json_t		*token;		/* the session's progressToken */
};

struct back {
	struct back		*next;
	struct link		*lk;
	long long		 n;
	mcp_client_reply	*reply;
};

static struct {
	mcp_server	*srv;
	struct ev_loop	*loop;
	char		**cmd;
	int		 shared;
	int		 max_children;
	int		 nchildren;
	double		 init_timeout;
	char		*timeout;
	struct child	*children;
	struct child	*one;		/* --shared: the child, or NULL */
	struct link	*waiting;	/* --shared: sessions without a child */
	double		 backoff;
	ev_timer	 restart;
	ev_timer	 reap;
	ev_timer	 wait_check;
	long long	 next_back;
} gw = { .max_children = DEF_MAX_CHILDREN, .init_timeout = DEF_INIT_TIMEOUT,
    .next_back = 1 };

static const char *const levels[] = { "debug", "info", "notice", "warning",
    "error", "critical", "alert", "emergency" };

static int
level_of(const char *name)
{
	size_t	 i;

	for (i = 0; name != NULL && i < sizeof(levels) / sizeof(*levels); i++)
		if (strcmp(name, levels[i]) == 0)
			return (int)i;
	return -1;
}

/* ---- to a session ---------------------------------------------------- */

static void
send_error(struct link *lk, json_t *id, int code, const char *message)
{
	(void)mcp_peer_send_new(lk->peer, json_pack("{s:s, s:O, s:{s:i, s:s}}",
	    "jsonrpc", "2.0", "id", id, "error", "code", code, "message",
	    message), NULL);
}

/* The newest request of LK's still owed, for what goes with it. */
static struct fwd *
newest(struct link *lk)
{
	struct fwd	*f;

	for (f = lk->ch != NULL ? lk->ch->fwds : NULL; f != NULL; f = f->next)
		if (f->lk == lk)
			return f;
	return NULL;
}

/* A notification to LK, with its newest request if it has one. */
static void
notify_link(struct link *lk, const char *method, json_t *params)
{
	struct fwd	*f = newest(lk);
	json_t		*msg;

	msg = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);
	if (msg != NULL && params != NULL)
		json_object_set(msg, "params", params);
	(void)mcp_peer_send_new(lk->peer, msg, f != NULL ? f->peer_id : NULL);
}

/* ---- the children ---------------------------------------------------- */

static struct fwd *
fwd_take(struct child *ch, struct fwd *f)
{
	struct fwd	**pp;

	for (pp = &ch->fwds; *pp != NULL; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			return f;
		}
	return NULL;
}

static void
fwd_free(struct fwd *f)
{
	json_decref(f->peer_id);
	json_decref(f->token);
	free(f);
}

static struct child *
child_of(mcp_client *cl)
{
	struct child	*ch;

	for (ch = gw.children; ch != NULL && ch->cl != cl; ch = ch->next)
		;
	return ch;
}

/* The initialize result LK is answered with: the child's own (one child
 * a session), or, shared, the child's with the version LK negotiates. */
static json_t *
init_result(struct child *ch, struct link *lk)
{
	json_t	*res = json_deep_copy(ch->init);

	if (gw.shared && res != NULL)
		json_object_set_new(res, "protocolVersion",
		    json_string(mcp_protocol_negotiate(lk->want)));
	return res;
}

static void
answer_init(struct link *lk)
{
	json_t	*id = lk->init_id;

	lk->init_id = NULL;
	(void)mcp_peer_send_new(lk->peer, json_pack("{s:s, s:o, s:o}",
	    "jsonrpc", "2.0", "id", id, "result", init_result(lk->ch, lk)),
	    NULL);
}

static void
link_attach(struct link *lk, struct child *ch)
{
	lk->ch = ch;
	lk->next = ch->links;
	ch->links = lk;
}

static void
link_detach(struct link *lk)
{
	struct link	**pp;

	if (lk->ch == NULL)
		return;
	for (pp = &lk->ch->links; *pp != NULL; pp = &(*pp)->next)
		if (*pp == lk) {
			*pp = lk->next;
			break;
		}
	lk->ch = NULL;
	lk->next = NULL;
}

static void
reap_soon(void)
{
	if (!ev_is_active(&gw.reap))
		ev_timer_start(gw.loop, &gw.reap);
}

/*
 * CH has ended, or never started (WHY): what it owed is answered with
 * an error now, its requests at sessions are withdrawn, and its sessions
 * end (one child a session: the state was the child's) or, shared, wait
 * for the next one. The client is freed by the reap, outside its own
 * callbacks.
 */
static void
child_end(struct child *ch, const char *why)
{
	struct fwd	*f;
	struct back	*b;
	struct link	*lk;
	char		 msg[400];

	if (ch->dead)
		return;
	ch->dead = 1;
	ch->ready = 0;
	ch->why = strdup(why);
	ev_timer_stop(gw.loop, &ch->init_timer);
	mcp_log(MCP_LOG_WARN, "mcp-gateway: %s: %s", ch->tag, why);
	snprintf(msg, sizeof(msg), "the server behind the gateway is gone: "
	    "%s", why);
	while ((f = ch->fwds) != NULL) {
		ch->fwds = f->next;
		send_error(f->lk, f->peer_id, MCP_RPC_INTERNAL_ERROR, msg);
		fwd_free(f);
	}
	while ((b = ch->backs) != NULL) {
		ch->backs = b->next;
		free(b);	/* its reply ends with the client */
	}
	while ((lk = ch->links) != NULL) {
		link_detach(lk);
		if (lk->init_id != NULL && !gw.shared) {
			send_error(lk, lk->init_id, MCP_RPC_INTERNAL_ERROR,
			    msg);
			json_decref(lk->init_id);
			lk->init_id = NULL;
		}
		if (gw.shared) {
			lk->next = gw.waiting;
			gw.waiting = lk;
		} else if (strcmp(mcp_peer_id(lk->peer), "stdio") == 0)
			mcp_server_stop(gw.srv);	/* its one session */
		else
			mcp_peer_close(lk->peer);
	}
	if (gw.one == ch) {
		gw.one = NULL;
		if (!ev_is_active(&gw.restart)) {
			gw.backoff = gw.backoff == 0 ? BACKOFF_MIN :
			    gw.backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX :
			    gw.backoff * 2;
			mcp_log(MCP_LOG_NOTICE, "mcp-gateway: restarting the "
			    "shared server in %.1f s", gw.backoff);
			ev_timer_set(&gw.restart, gw.backoff, 0.0);
			ev_timer_start(gw.loop, &gw.restart);
		}
	}
	reap_soon();
}

static void
reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct child	**pp, *ch;
	int		 n = 0;

	(void)loop;
	(void)w;
	(void)revents;
	for (pp = &gw.children; (ch = *pp) != NULL; ) {
		if (!ch->dead) {
			pp = &ch->next;
			continue;
		}
		*pp = ch->next;
		ev_timer_stop(gw.loop, &ch->init_timer);
		mcp_client_free(ch->cl);	/* the reaper ends the process */
		json_decref(ch->init);
		free(ch->why);
		free(ch);
		gw.nchildren--;
		n++;
	}
#ifdef __GLIBC__
	/* A burst of sessions gone: what malloc kept for them goes back
	 * (200 sessions leave 5 MiB of free heap behind otherwise). */
	if (n > 0)
		(void)malloc_trim(0);
#endif
}

/* A forwarded request's end: its answer to the session, under its id. */
static void
answered(mcp_client *cl, int rc, json_t *result, void *udata)
{
	struct child	*ch = child_of(cl);
	struct fwd	*f = ch != NULL ? fwd_take(ch, udata) : NULL;
	const char	*msg;

	if (f == NULL)
		return;
	if (rc == MCP_OK || rc == MCP_ESERVER)
		(void)mcp_peer_send_new(f->lk->peer, json_pack("{s:s, s:O, "
		    "s:O}", "jsonrpc", "2.0", "id", f->peer_id, rc == MCP_OK ?
		    "result" : "error", result), NULL);
	else if (rc != MCP_ECANCELED) {
		msg = json_string_value(json_object_get(result, "message"));
		send_error(f->lk, f->peer_id, MCP_RPC_INTERNAL_ERROR,
		    msg != NULL ? msg : mcp_strerror(rc));
	}
	fwd_free(f);
}

static void
progress(mcp_client *cl, long long id, double done, double total,
    const char *message, void *udata)
{
	struct child	*ch = child_of(cl);
	struct fwd	*f;
	json_t		*p;

	(void)udata;
	for (f = ch != NULL ? ch->fwds : NULL; f != NULL && f->cid != id;
	    f = f->next)
		;
	if (f == NULL || f->token == NULL)
		return;		/* the client asked for none */
	p = json_pack("{s:O, s:f}", "progressToken", f->token, "progress",
	    done);
	if (p != NULL && total >= 0)
		json_object_set_new(p, "total", json_real(total));
	if (p != NULL && message != NULL)
		json_object_set_new(p, "message", json_string(message));
	(void)mcp_peer_send_new(f->lk->peer, json_pack("{s:s, s:s, s:o}",
	    "jsonrpc", "2.0", "method", "notifications/progress", "params", p),
	    f->peer_id);
}

/* A log line of the child's: with the newest request if one is owed
 * (its session's, then), else to every session that takes its level. */
static void
child_log(struct child *ch, json_t *params)
{
	struct link	*lk;
	int		 level = level_of(json_string_value(json_object_get(
	    params, "level")));

	if (ch->fwds != NULL) {
		lk = ch->fwds->lk;
		if (!gw.shared || level >= lk->level)
			notify_link(lk, "notifications/message", params);
		return;
	}
	for (lk = ch->links; lk != NULL; lk = lk->next)
		if (!gw.shared || level >= lk->level)
			notify_link(lk, "notifications/message", params);
}

static void
notified(mcp_client *cl, const char *method, json_t *params, void *udata)
{
	struct child	*ch = child_of(cl);
	struct link	*lk;
	struct back	*b, **pp;
	const char	*uri;
	json_t		*p;
	char		 g[32];

	(void)udata;
	if (ch == NULL)
		return;
	if (strcmp(method, "notifications/cancelled") == 0) {
		/* The child gave up a request of its own: its session is
		 * told, under the id it knows. */
		for (b = ch->backs; b != NULL; b = b->next)
			if (json_equal(mcp_client_reply_id(b->reply),
			    json_object_get(params, "requestId")))
				break;
		if (b == NULL || (p = json_deep_copy(params)) == NULL)
			return;
		snprintf(g, sizeof(g), "g%lld", b->n);
		json_object_set_new(p, "requestId", json_string(g));
		notify_link(b->lk, method, p);
		json_decref(p);
		/* It waits for no answer now: one that comes is dropped. */
		for (pp = &ch->backs; *pp != b; pp = &(*pp)->next)
			;
		*pp = b->next;
		(void)mcp_client_reply_error(b->reply, MCP_RPC_INTERNAL_ERROR,
		    "cancelled by the server");
		free(b);
		return;
	}
	if (strcmp(method, "notifications/message") == 0) {
		child_log(ch, params);
		return;
	}
	uri = json_string_value(json_object_get(params, "uri"));
	for (lk = ch->links; lk != NULL; lk = lk->next)
		if (!gw.shared || strcmp(method,
		    "notifications/resources/updated") != 0 ||
		    (uri != NULL && json_object_get(lk->subs, uri) != NULL))
			notify_link(lk, method, params);
}

/* Does LK's client take METHOD, a request from the server? */
static int
client_takes(struct link *lk, const char *method)
{
	const char	*cap = strcmp(method, "sampling/createMessage") == 0 ?
	    "sampling" : strcmp(method, "elicitation/create") == 0 ?
	    "elicitation" : strcmp(method, "roots/list") == 0 ? "roots" : NULL;

	return cap == NULL || json_object_get(lk->caps, cap) != NULL;
}

/* A request of the child's: to the session of its newest request (the
 * one it most likely serves), as "g<n>". */
static void
asked(mcp_client *cl, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	struct child	*ch = child_of(cl);
	struct link	*lk;
	struct back	*b;
	struct fwd	*f;
	json_t		*msg;
	char		 g[32], why[160];

	(void)udata;
	lk = ch == NULL ? NULL : ch->fwds != NULL ? ch->fwds->lk : ch->links;
	if (lk == NULL) {
		(void)mcp_client_reply_error(reply, MCP_RPC_INTERNAL_ERROR,
		    "no client is connected to the gateway");
		return;
	}
	if (!client_takes(lk, method)) {
		snprintf(why, sizeof(why), "the client does not support %.80s",
		    method);
		(void)mcp_client_reply_error(reply, MCP_RPC_METHOD_NOT_FOUND,
		    why);
		return;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		(void)mcp_client_reply_error(reply, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	b->n = gw.next_back++;
	b->reply = reply;
	b->lk = lk;
	b->next = ch->backs;
	ch->backs = b;
	snprintf(g, sizeof(g), "g%lld", b->n);
	msg = json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", g,
	    "method", method);
	if (msg != NULL && params != NULL)
		json_object_set(msg, "params", params);
	f = newest(lk);
	if (mcp_peer_send_new(lk->peer, msg, f != NULL ? f->peer_id : NULL) ==
	    MCP_OK)
		return;
	/* No way to the client now (no stream open for it): the child is
	 * told at once rather than left waiting. */
	ch->backs = b->next;
	(void)mcp_client_reply_error(reply, MCP_RPC_INTERNAL_ERROR,
	    "the client has no stream open for requests from the server");
	free(b);
}

static void
child_stderr(mcp_client *cl, const char *line, size_t len, void *udata)
{
	struct child	*ch = udata;

	(void)cl;
	mcp_log(MCP_LOG_NOTICE, "mcp-gateway: %s: stderr: %.*s", ch->tag,
	    (int)len, line);
}

static void
lost(mcp_client *cl, int rc, json_t *err, void *udata)
{
	const char	*why = json_string_value(json_object_get(err,
	    "message"));

	(void)cl;
	child_end(udata, why != NULL ? why : mcp_strerror(rc));
}

static void
shared_ready(struct child *ch)
{
	struct link	*lk;
	const char	*uri;
	json_t		*done, *v;

	/* Every session waits for this one: it sends everything, each
	 * session's own level is applied here (child_log). */
	if (json_object_get(mcp_client_server_capabilities(ch->cl),
	    "logging") != NULL)
		(void)mcp_client_request_async_new(ch->cl, "logging/setLevel",
		    json_pack("{s:s}", "level", "debug"), NULL, NULL, NULL);
	while ((lk = gw.waiting) != NULL) {
		gw.waiting = lk->next;
		link_attach(lk, ch);
		if (lk->init_id != NULL)
			answer_init(lk);
	}
	/* Sessions that outlived a child: its successor hears of what they
	 * subscribed to (once a uri). */
	done = json_object();
	for (lk = ch->links; lk != NULL && done != NULL; lk = lk->next)
		json_object_foreach(lk->subs, uri, v) {
			if (json_object_get(done, uri) != NULL)
				continue;
			json_object_set(done, uri, json_true());
			(void)mcp_client_request_async_new(ch->cl,
			    "resources/subscribe", json_pack("{s:s}", "uri",
			    uri), NULL, NULL, NULL);
		}
	json_decref(done);
	gw.backoff = 0;
}

static void
ready(mcp_client *cl, int rc, json_t *result, void *udata)
{
	struct child	*ch = udata;
	struct link	*lk;
	const char	*why;

	(void)cl;
	if (ch->dead)
		return;		/* timed out, or its session ended, already */
	ev_timer_stop(gw.loop, &ch->init_timer);
	if (rc != MCP_OK) {
		why = json_string_value(json_object_get(result, "message"));
		if (rc == MCP_ESERVER && !gw.shared && ch->links != NULL &&
		    ch->links->init_id != NULL) {
			/* It refused this client's initialize: its own
			 * answer, and the session ends. */
			lk = ch->links;
			(void)mcp_peer_send_new(lk->peer, json_pack("{s:s, s:o,"
			    " s:O}", "jsonrpc", "2.0", "id", lk->init_id,
			    "error", result), NULL);
			lk->init_id = NULL;
		}
		child_end(ch, why != NULL ? why : mcp_strerror(rc));
		return;
	}
	ch->ready = 1;
	ch->init = json_incref(result);
	mcp_log(MCP_LOG_INFO, "mcp-gateway: %s: the server is up, speaking %s",
	    ch->tag, mcp_client_protocol(cl));
	if (gw.shared) {
		shared_ready(ch);
		return;
	}
	for (lk = ch->links; lk != NULL; lk = lk->next)
		if (lk->init_id != NULL)
			answer_init(lk);
}

static void
init_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct child	*ch = w->data;
	char		 why[160];

	(void)loop;
	(void)revents;
	snprintf(why, sizeof(why), "%s did not answer initialize within "
	    "%g s", gw.cmd[0], gw.init_timeout);
	child_end(ch, why);
}

/*
 * A child for LK (NULL: the shared one), initialized with PARAMS, the
 * client's own initialize, when there is one: its version, capabilities
 * and clientInfo. NULL when it could not start (LK has been answered).
 */
static struct child *
child_start(struct link *lk, json_t *params)
{
	struct child	*ch;
	json_t		*info = json_object_get(params, "clientInfo");
	json_t		*caps = json_object_get(params, "capabilities");
	const char	*v = json_string_value(json_object_get(params,
	    "protocolVersion"));

	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return NULL;
	ch->cl = mcp_client_new(info != NULL ? json_string_value(
	    json_object_get(info, "name")) : "mcp-gateway", info != NULL ?
	    json_string_value(json_object_get(info, "version")) : MCP_VERSION);
	if (ch->cl == NULL) {
		free(ch);
		return NULL;
	}
	if (lk == NULL)
		snprintf(ch->tag, sizeof(ch->tag), "shared server");
	else if (mcp_peer_id(lk->peer)[0] != '\0')
		snprintf(ch->tag, sizeof(ch->tag), "session %.8s",
		    mcp_peer_id(lk->peer));
	else
		snprintf(ch->tag, sizeof(ch->tag), "stateless request");
	ch->next = gw.children;
	gw.children = ch;
	gw.nchildren++;
	/* The agents' sessions are legacy ones (initialize): the child's
	 * too, whatever the client's auto would pick. */
	(void)mcp_client_set_option(ch->cl, "protocol", "legacy");
	if (v != NULL && mcp_client_set_option(ch->cl, "protocol", v) !=
	    MCP_OK)
		(void)mcp_client_set_option(ch->cl, "protocol",
		    mcp_protocol_negotiate(v));
	(void)mcp_client_set_option(ch->cl, "timeout", gw.timeout);
	(void)mcp_client_set_capabilities_new(ch->cl, json_is_object(caps) ?
	    json_deep_copy(caps) : lk == NULL ? json_pack("{s:{}, s:{}, "
	    "s:{s:b}}", "sampling", "elicitation", "roots", "listChanged", 1) :
	    json_object());
	(void)mcp_client_on_request(ch->cl, "*", asked, ch);
	(void)mcp_client_on_notification(ch->cl, notified, ch);
	(void)mcp_client_on_progress(ch->cl, progress, ch);
	(void)mcp_client_on_ready(ch->cl, ready, ch);
	(void)mcp_client_on_lost(ch->cl, lost, ch);
	(void)mcp_client_on_stderr(ch->cl, child_stderr, ch);
	(void)mcp_client_set_loop(ch->cl, gw.loop);
	if (lk != NULL)
		link_attach(lk, ch);
	else
		gw.one = ch;
	ev_timer_init(&ch->init_timer, init_timeout_cb, gw.init_timeout, 0.0);
	ch->init_timer.data = ch;
	ev_timer_start(gw.loop, &ch->init_timer);
	mcp_log(MCP_LOG_INFO, "mcp-gateway: %s: starting %s", ch->tag,
	    gw.cmd[0]);
	if (mcp_client_connect_stdio(ch->cl, gw.cmd, NULL, NULL) != MCP_OK &&
	    !ch->dead)
		child_end(ch, mcp_client_error(ch->cl) != NULL ?
		    mcp_client_error(ch->cl) : "it could not be started");
	return ch;
}

static void
restart_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	if (gw.one == NULL)
		(void)child_start(NULL, NULL);
}

/* --shared: sessions waiting past the initialize timeout are told. */
static void
wait_check_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct link	*lk, **pp;
	char		 msg[200];

	(void)w;
	(void)revents;
	for (pp = &gw.waiting; (lk = *pp) != NULL; ) {
		if (lk->init_id == NULL ||
		    ev_now(loop) - lk->since < gw.init_timeout) {
			pp = &lk->next;
			continue;
		}
		*pp = lk->next;
		lk->next = NULL;
		snprintf(msg, sizeof(msg), "the server behind the gateway is "
		    "not up after %g s (it is being restarted)",
		    gw.init_timeout);
		send_error(lk, lk->init_id, MCP_RPC_INTERNAL_ERROR, msg);
		json_decref(lk->init_id);
		lk->init_id = NULL;
		mcp_peer_close(lk->peer);	/* the session never began */
	}
}

/* ---- from a session ------------------------------------------------ */

static struct link *
link_of(mcp_peer *peer)
{
	struct link	*lk = mcp_peer_data(peer);

	if (lk == NULL && (lk = calloc(1, sizeof(*lk))) != NULL) {
		lk->peer = peer;
		lk->level = 1;	/* shared: info, until logging/setLevel */
		lk->caps = json_object();
		mcp_peer_set_data(peer, lk);
	}
	return lk;
}

/* LK has a child to talk to, or is answered (ID) with why not. */
static int
has_child(struct link *lk, json_t *id, json_t *init)
{
	if (lk->ch == NULL && gw.shared) {
		if (gw.one == NULL && !ev_is_active(&gw.restart))
			(void)child_start(NULL, NULL);
		if (gw.one != NULL && gw.one->ready)
			link_attach(lk, gw.one);
	} else if (lk->ch == NULL && mcp_peer_stateless(lk->peer))
		(void)child_start(lk, init);
	if (lk->ch != NULL && !lk->ch->dead)
		return 1;
	send_error(lk, id, MCP_RPC_INTERNAL_ERROR, gw.shared ? "the server "
	    "behind the gateway is being restarted: try again" : "the server "
	    "behind the gateway has ended");
	return 0;
}

static void
forward(struct link *lk, json_t *id, const char *method, json_t *params)
{
	struct child	*ch = lk->ch;
	struct fwd	*f;
	long long	 cid;

	if ((f = calloc(1, sizeof(*f))) == NULL) {
		send_error(lk, id, MCP_RPC_INTERNAL_ERROR, "out of memory");
		return;
	}
	f->lk = lk;
	f->peer_id = json_incref(id);
	f->token = json_incref(json_object_get(json_object_get(params,
	    "_meta"), "progressToken"));
	f->cid = -1;
	f->next = ch->fwds;
	ch->fwds = f;
	if (mcp_client_request_async_new(ch->cl, method, params != NULL ?
	    json_deep_copy(params) : json_object(), answered, f, &cid) !=
	    MCP_OK) {
		if (fwd_take(ch, f) != NULL) {
			send_error(lk, id, MCP_RPC_INTERNAL_ERROR,
			    "could not send to the server");
			fwd_free(f);
		}
		return;
	}
	for (struct fwd *g = ch->fwds; g != NULL; g = g->next)
		if (g == f)
			f->cid = cid;	/* unless it ended already */
}

/* --shared: a session's subscriptions are its own: every subscribe goes
 * to the child (which may refuse it), an unsubscribe only from the last
 * session that has the uri. Returns 1 when the request was answered
 * here. */
static int
shared_local(struct link *lk, json_t *id, const char *method,
    json_t *params)
{
	struct link	*o;
	const char	*uri = json_string_value(json_object_get(params, "uri"));
	int		 sub, level;

	if (strcmp(method, "logging/setLevel") == 0) {
		level = level_of(json_string_value(json_object_get(params,
		    "level")));
		if (level < 0) {
			send_error(lk, id, MCP_RPC_INVALID_PARAMS,
			    "logging/setLevel: unknown level");
			return 1;
		}
		lk->level = level;
		(void)mcp_peer_send_new(lk->peer, json_pack("{s:s, s:O, s:{}}",
		    "jsonrpc", "2.0", "id", id, "result"), NULL);
		return 1;
	}
	sub = strcmp(method, "resources/subscribe") == 0;
	if ((!sub && strcmp(method, "resources/unsubscribe") != 0) ||
	    uri == NULL)
		return 0;
	if (lk->subs == NULL)
		lk->subs = json_object();
	if (sub) {
		json_object_set_new(lk->subs, uri, json_true());
		return 0;	/* the child hears it: it may refuse it */
	}
	json_object_del(lk->subs, uri);
	for (o = lk->ch->links; o != NULL; o = o->next)
		if (o != lk && json_object_get(o->subs, uri) != NULL)
			break;
	if (o == NULL)
		return 0;	/* the last one: the child hears it */
	(void)mcp_peer_send_new(lk->peer, json_pack("{s:s, s:O, s:{}}",
	    "jsonrpc", "2.0", "id", id, "result"), NULL);
	return 1;
}

static void
initialize(struct link *lk, json_t *id, json_t *params)
{
	json_t	*caps = json_object_get(params, "capabilities");

	if (json_is_object(caps)) {
		json_decref(lk->caps);
		lk->caps = json_incref(caps);
	}
	lk->init_id = json_incref(id);
	free(lk->want);
	lk->want = strdup(json_string_value(json_object_get(params,
	    "protocolVersion")));
	lk->since = ev_now(gw.loop);
	if (!gw.shared) {
		if (child_start(lk, params) == NULL) {
			send_error(lk, id, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
			json_decref(lk->init_id);
			lk->init_id = NULL;
		}
		return;
	}
	if (gw.one == NULL && !ev_is_active(&gw.restart))
		(void)child_start(NULL, NULL);
	if (gw.one != NULL && gw.one->ready) {
		link_attach(lk, gw.one);
		answer_init(lk);
		return;
	}
	lk->next = gw.waiting;
	gw.waiting = lk;
}

static void
from_peer(mcp_peer *peer, json_t *msg, void *udata)
{
	struct link	*lk = link_of(peer);
	json_t		*id = json_object_get(msg, "id");
	json_t		*params = json_object_get(msg, "params");
	const char	*method = json_string_value(json_object_get(msg,
	    "method"));
	struct back	**pp, *b;
	struct fwd	*f;
	const char	*s;
	long long	 n;

	(void)udata;
	if (lk == NULL) {
		if (method != NULL && id != NULL)
			(void)mcp_peer_send_new(peer, json_pack("{s:s, s:O, "
			    "s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id,
			    "error", "code", MCP_RPC_INTERNAL_ERROR, "message",
			    "out of memory"), NULL);
		return;
	}
	if (method == NULL) {
		/* The client's answer to a request of the child's. */
		s = json_string_value(id);
		n = s != NULL && s[0] == 'g' ? strtoll(s + 1, NULL, 10) : -1;
		for (pp = lk->ch != NULL ? &lk->ch->backs : NULL; pp != NULL &&
		    *pp != NULL && ((*pp)->n != n || (*pp)->lk != lk);
		    pp = &(*pp)->next)
			;
		if (pp == NULL || (b = *pp) == NULL)
			return;
		*pp = b->next;
		if (json_object_get(msg, "error") == NULL)
			(void)mcp_client_reply_result(b->reply, json_incref(
			    json_object_get(msg, "result")));
		else
			(void)mcp_client_reply_error(b->reply,
			    (int)json_integer_value(json_object_get(
			    json_object_get(msg, "error"), "code")),
			    json_string_value(json_object_get(json_object_get(
			    msg, "error"), "message")));
		free(b);
		return;
	}
	if (id == NULL) {
		if (lk->ch == NULL || lk->ch->dead ||
		    strcmp(method, "notifications/initialized") == 0)
			return;		/* the client library sends its own */
		/* A cancel may end a request held until the child is up. */
		if (strcmp(method, "notifications/cancelled") == 0) {
			for (f = lk->ch->fwds; f != NULL; f = f->next)
				if (f->lk == lk && json_equal(f->peer_id,
				    json_object_get(params, "requestId")))
					break;
			if (f != NULL)
				(void)mcp_client_cancel(lk->ch->cl, f->cid,
				    json_string_value(json_object_get(params,
				    "reason")));
			return;
		}
		if (lk->ch->ready)
			(void)mcp_client_notify_new(lk->ch->cl, method, params
			    != NULL ? json_deep_copy(params) : json_object());
		return;
	}
	if (strcmp(method, "initialize") == 0) {
		initialize(lk, id, params);
		return;
	}
	if (!has_child(lk, id, NULL))
		return;
	if (gw.shared && shared_local(lk, id, method, params))
		return;
	forward(lk, id, method, params);
}

static void
link_free(struct link *lk)
{
	json_decref(lk->init_id);
	json_decref(lk->caps);
	json_decref(lk->subs);
	free(lk->want);
	free(lk);
}

/* A session ended: its child with it, or, shared, what it had asked. */
static void
peer_closed(mcp_peer *peer, void *udata)
{
	struct link	*lk = mcp_peer_data(peer), **pp, *o;
	struct child	*ch;
	const char	*uri;
	json_t		*v;
	struct fwd	**fp, *f;
	struct back	**bp, *b;

	(void)udata;
	if (lk == NULL)
		return;
	for (pp = &gw.waiting; *pp != NULL; pp = &(*pp)->next)
		if (*pp == lk) {
			*pp = lk->next;
			break;
		}
	if ((ch = lk->ch) != NULL) {
		link_detach(lk);
		/* --shared: what only it subscribed to, the child forgets. */
		json_object_foreach(gw.shared && ch->ready ? lk->subs : NULL,
		    uri, v) {
			for (o = ch->links; o != NULL; o = o->next)
				if (json_object_get(o->subs, uri) != NULL)
					break;
			if (o == NULL)
				(void)mcp_client_request_async_new(ch->cl,
				    "resources/unsubscribe", json_pack("{s:s}",
				    "uri", uri), NULL, NULL, NULL);
		}
		for (fp = &ch->fwds; (f = *fp) != NULL; ) {
			if (f->lk != lk) {
				fp = &f->next;
				continue;
			}
			*fp = f->next;
			if (gw.shared && ch->ready)
				(void)mcp_client_cancel(ch->cl, f->cid,
				    "the client's session ended");
			fwd_free(f);
		}
		for (bp = &ch->backs; (b = *bp) != NULL; ) {
			if (b->lk != lk) {
				bp = &b->next;
				continue;
			}
			*bp = b->next;
			(void)mcp_client_reply_error(b->reply,
			    MCP_RPC_INTERNAL_ERROR, "the client left");
			free(b);
		}
		if (!gw.shared && !ch->dead) {
			/* One child a session: it ends with it. */
			ch->dead = 1;
			ev_timer_stop(gw.loop, &ch->init_timer);
			reap_soon();
		}
	}
	mcp_peer_set_data(peer, NULL);
	link_free(lk);
}

static const char *
admit(void *udata)
{
	static char	 why[160];

	(void)udata;
	if (gw.shared || gw.nchildren < gw.max_children)
		return NULL;
	snprintf(why, sizeof(why), "the gateway runs its maximum of %d "
	    "servers (--max-children)", gw.max_children);
	return why;
}

static const struct mcp_relay relay = { admit, from_peer, peer_closed };

/* ---- the command line ------------------------------------------------ */

int
gw_serve_main(int argc, char **argv, int dashdash)
{
	char	**sargv, *end;
	int	  sargc = 0, i, rc;
	double	  d;

	gw.cmd = argv + dashdash + 1;
	if (gw.cmd[0] == NULL)
		gw_usage_error("%s", "nothing to run after --");
	sargv = calloc((size_t)argc + 1, sizeof(*sargv));
	if (sargv == NULL)
		return 1;
	sargv[sargc++] = argv[0];
	/* The gateway's own options; the rest are the server's. */
	for (i = 1; i < dashdash; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < dashdash ? argv[i + 1] : NULL;

		if (strcmp(a, "--shared") == 0) {
			gw.shared = 1;
		} else if (strcmp(a, "--max-children") == 0 ||
		    strcmp(a, "--init-timeout") == 0 ||
		    strcmp(a, "--timeout") == 0) {
			if (v == NULL)
				gw_usage_error("%s needs a value", a);
			d = strtod(v, &end);
			if (end == v || *end != '\0' || d <= 0 || d > 1e7 ||
			    (a[2] == 'm' && d != (int)d))
				gw_usage_error("bad value for %s", a);
			if (a[2] == 'm')
				gw.max_children = (int)d;
			else if (a[2] == 'i')
				gw.init_timeout = d;
			else
				gw.timeout = (char *)v;
			i++;
		} else
			sargv[sargc++] = argv[i];
	}
	if (gw.timeout == NULL)
		gw.timeout = "86400";	/* a call may take as long as it takes */
	gw.srv = mcp_server_new("mcp-gateway", MCP_VERSION);
	if (mcp_server_set_relay(gw.srv, &relay, NULL) != MCP_OK) {
		mcp_server_free(gw.srv);
		free(sargv);
		return 1;
	}
	gw.loop = mcp_server_loop(gw.srv);
	ev_timer_init(&gw.restart, restart_cb, 0.0, 0.0);
	ev_timer_init(&gw.reap, reap_cb, 0.0, 0.0);
	ev_timer_init(&gw.wait_check, wait_check_cb, 1.0, 1.0);
	if (gw.shared)
		ev_timer_start(gw.loop, &gw.wait_check);
	rc = mcp_server_main(gw.srv, sargc, sargv);
	/* The sessions have ended, and their children with them. */
	ev_timer_stop(gw.loop, &gw.wait_check);
	ev_timer_stop(gw.loop, &gw.restart);
	if (gw.one != NULL)
		gw.one->dead = 1;
	reap_cb(gw.loop, &gw.reap, 0);
	ev_timer_stop(gw.loop, &gw.reap);
	mcp_server_free(gw.srv);
	free(sargv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? GW_EX_USAGE : 1;
}
