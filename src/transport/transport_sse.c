/*
 * transport_sse.c: the legacy HTTP+SSE transport (protocol 2024-11-05):
 * GET /sse opens a session and its event stream, POST /messages feeds it
 * and answers 202 at once; every answer goes down the stream. A stream is
 * an MHD callback response reading the session's queue: when the queue
 * is empty the reader suspends the connection (it never returns 0
 * without suspending, which would spin), and queueing resumes it. MHD
 * does not look at a suspended connection, so its socket is watched
 * (mcp__http_watch): a client that leaves ends its session at once.
 * Keepalive comments keep proxies from cutting an idle stream, and a
 * stall bound cuts a client that stopped reading.
 *
 * With --redis, the instance holding a stream records it in Redis
 * (<prefix>sse:<sid>, renewed every HOLD_EVERY s, living HOLD_TTL s,
 * deleted when the stream ends), and a POST /messages for a session
 * another instance holds is relayed there in one EVAL (the key looked
 * up and the message PUBLISHed on that instance's channel), the POST
 * suspended meanwhile: 202 once relayed, 404 when no instance holds
 * it, 503 when Redis (or the instance holding it) does not answer.
 * The instance holding it handles the message as if POSTed there
 * (mcp__sse_relayed). Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "transport/http.h"

struct sse_stream {
	struct sse_stream	*hnext;		/* id hash chain */
	struct sse_stream	*next;		/* every stream */
	struct sse_stream	*prev;
	struct http		*h;
	struct session		*sess;
	struct MHD_Connection	*conn;
	char			 id[33];
	uint32_t		 hash;
	struct buf		 out;
	ev_timer		 ka;		/* keepalive and stall check */
	struct peer_watch	 pw;		/* suspended: did the client go? */
	double			 drained_at;	/* last time out was read */
	int			 suspended;
	int			 ending;	/* finish once out is empty */
	int			 cut;		/* connection shut down */
	double			 held_at;	/* --redis: its key last set */
};

#define HOLD_EVERY	5.0	/* s between renewals of a stream's key */
#define HOLD_TTL	15	/* s it lives: 3 renewals */

/* --redis: a POST /messages for a stream held elsewhere, relayed. */
struct sse_relay {
	struct sse_relay	*next;
	struct http		*h;
	struct MHD_Connection	*conn;
	int			 done;		/* Redis answered */
	int			 dead;		/* its request is gone */
	int			 status;	/* ST_* */
	long long		 n;		/* the script's answer */
};

static int	 sse_send(struct session *, void *, const char *, size_t,
		    int);
static void	 sse_end(struct session *);

static const struct session_ops sse_ops = {
	sse_send,
	NULL,
	NULL,
	sse_end,
	MT_SSE,
	NULL,
};

static struct sse_stream *
find(struct http *h, const char *id)
{
	struct sse_stream	*st;
	uint32_t		 hash = mcp__hash(id);

	for (st = h->buckets[hash % SSE_BUCKETS]; st != NULL; st = st->hnext)
		if (st->hash == hash && strcmp(st->id, id) == 0)
			return st;
	return NULL;
}

static void
resume(struct sse_stream *st)
{
	if (!st->suspended)
		return;
	st->suspended = 0;
	mcp__http_unwatch(&st->pw);
	MHD_resume_connection(st->conn);
	mcp__http_wake(st->h);
}

/*
 * Ends a stream that cannot go on (its client left, its reader stopped
 * reading, or a write stalled): the socket is shut down, MHD closes the
 * connection, and the free callback ends the session. From here on the
 * session takes no POST (404).
 */
static void
cut(struct sse_stream *st, int level, const char *why)
{
	if (st->cut)
		return;
	st->cut = 1;
	st->ending = 1;
	st->sess->why = MR_CUT;
	MCP_LOG(level, "sse: session %.8s: %s, closing it", st->id, why);
	mcp__http_shutdown(st->conn);
	mcp__buf_reset(&st->out);
	resume(st);
}

/* The client closed the stream: its session ends now, and its calls are
 * cancelled, not at the next keepalive. */
static void
gone(struct peer_watch *w)
{
	struct sse_stream	*st = w->owner;

	cut(st, MCP_LOG_INFO, "the client closed the stream");
	st->sess->why = MR_CLOSED;	/* its client's end, not a cut */
}

static int
queue(struct sse_stream *st, const char *a, size_t alen, const char *b,
    size_t blen, const char *c, size_t clen)
{
	if (st->ending)
		return MCP_ESTATE;
	/*
	 * The bound is on what waits unread before this message: one
	 * message larger than it (a big answer) is not a reader that
	 * stopped reading.
	 */
	if (st->out.len - st->out.off > st->h->conf->max_queued) {
		cut(st, MCP_LOG_NOTICE,
		    "its reader stopped reading (--max-queued)");
		return MCP_ESTATE;
	}
	if (mcp__buf_reserve(&st->out, alen + blen + clen) != MCP_OK)
		return MCP_ENOMEM;
	memcpy(st->out.data + st->out.len, a, alen);
	memcpy(st->out.data + st->out.len + alen, b, blen);
	memcpy(st->out.data + st->out.len + alen + blen, c, clen);
	st->out.len += alen + blen + clen;
	resume(st);
	return MCP_OK;
}

/* One JSON-RPC message as one event: a single data line. */
static int
sse_send(struct session *s, void *route, const char *json, size_t len,
    int final)
{
	static const char	 head[] = "event: message\ndata: ";

	(void)route;
	(void)final;
	return queue(s->tdata, head, sizeof(head) - 1, json, len, "\n\n", 2);
}

static ssize_t
reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_stream	*st = cls;
	size_t			 n;

	(void)pos;
	n = st->out.len - st->out.off;
	if (n > 0) {
		if (n > max)
			n = max;
		memcpy(buf, st->out.data + st->out.off, n);
		mcp__buf_consume(&st->out, n);
		st->drained_at = ev_now(st->h->srv->loop);
		mcp__server_progress(st->h->srv);
		/* Shutting down: this may have been the last byte owed. */
		if (st->h->srv->draining)
			st->h->recheck = 1;
		return (ssize_t)n;
	}
	if (st->ending)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* Nothing to send: sleep until queue() resumes us. */
	st->suspended = 1;
	MHD_suspend_connection(st->conn);
	mcp__http_watch(st->h, &st->pw, st->conn);
	return 0;
}

/* mcp_peer_close: the stream ends once what is queued has gone, and the
 * session with it; POSTs get 404 from now on. */
static void
sse_end(struct session *s)
{
	struct sse_stream	*st = s->tdata;

	if (st == NULL || st->ending)
		return;
	MCP_LOG(MCP_LOG_INFO, "sse: session %.8s: ended by the server",
	    st->id);
	st->ending = 1;
	resume(st);
}

/* --redis: ST is held here, for whoever opened it (its key set). */
static void
hold(struct sse_stream *st)
{
	struct identity	*id = st->sess->ident;

	if (mcp__store_sse_hold(st->h->conf->store, st->id, id != NULL ?
	    id->subject : NULL, HOLD_TTL) == 0)
		st->held_at = ev_now(st->h->srv->loop);
}

/* MHD is done with the response: the connection closed or finished. */
static void
stream_free(void *cls)
{
	struct sse_stream	*st = cls;
	struct http		*h = st->h;
	struct sse_stream	**pp;

	for (pp = &h->buckets[st->hash % SSE_BUCKETS]; *pp != NULL;
	    pp = &(*pp)->hnext)
		if (*pp == st) {
			*pp = st->hnext;
			break;
		}
	if (st->prev != NULL)
		st->prev->next = st->next;
	else
		h->streams = st->next;
	if (st->next != NULL)
		st->next->prev = st->prev;
	h->nstreams--;
	/* Its key goes now; with Redis away (or freed: shutting down), by
	 * its TTL. */
	if (h->conf->store != NULL)
		(void)mcp__store_sse_drop(h->conf->store, st->id);
	ev_timer_stop(h->srv->loop, &st->ka);
	mcp__http_unwatch(&st->pw);
	if (st->sess->pending > 0)
		MCP_LOG(MCP_LOG_INFO, "sse: session %.8s closed with %d calls "
		    "in flight: their results will be dropped", st->id,
		    st->sess->pending);
	else
		MCP_LOG(MCP_LOG_INFO, "sse: session %.8s closed", st->id);
	mcp__session_close(st->sess);
	mcp__buf_free(&st->out);
	free(st);
	mcp__server_check_drained(h->srv);
}

static void
keepalive_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sse_stream	*st = w->data;
	static const char	 ka[] = ": keepalive\n\n";

	(void)revents;
	if (st->out.len > st->out.off &&
	    ev_now(loop) - st->drained_at > st->h->conf->idle_timeout) {
		cut(st, MCP_LOG_NOTICE, "its writes stalled (--idle-timeout)");
		return;
	}
	if (st->out.len == st->out.off)
		st->drained_at = ev_now(loop);
	queue(st, ka, sizeof(ka) - 1, "", 0, "", 0);
}

static void	 link_stream(struct http *, struct sse_stream *);
static enum MHD_Result relay_post(struct http *, struct MHD_Connection *,
		    struct req *);

/* GET /sse: a new session, its stream, and the endpoint event. */
static enum MHD_Result
sse_open(struct http *h, struct MHD_Connection *conn, const char *sid,
    const char *origin)
{
	struct MHD_Response	*resp;
	struct sse_stream	*st;
	const char		*why;
	char			 ev[256];
	int			 n, rc;

	(void)sid;		/* a new session each time */
	if (h->quiesced) {
		mcp__http_refused(h, ML_DRAINING);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "server shutting down", origin);
	}
	if (h->nstreams + h->nssessions >= h->conf->max_sessions) {
		mcp_log(MCP_LOG_WARN, "sse: %d sessions open (--max-sessions),"
		    " refusing another", h->nstreams + h->nssessions);
		mcp__http_refused(h, ML_MAX_SESSIONS);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "too many sessions", origin);
	}
	if ((why = mcp__relay_admit(h->srv)) != NULL) {
		mcp__http_refused(h, ML_MAX_SESSIONS);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    why, origin);
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL || mcp__http_new_id(st->id) != 0) {
		free(st);
		return mcp__http_reply_rpc(conn, 500, MCP_RPC_INTERNAL_ERROR,
		    "cannot create a session", origin);
	}
	st->sess = mcp__session_new(h->srv, &sse_ops, st);
	if (st->sess == NULL) {
		free(st);
		return MHD_NO;
	}
	st->sess->max_inflight = h->conf->max_inflight;
	mcp__session_identify(st->sess, h->ident);	/* bound to it */
	st->h = h;
	st->conn = conn;
	st->hash = mcp__hash(st->id);
	st->drained_at = ev_now(h->srv->loop);
	st->pw.gone = gone;
	st->pw.owner = st;
	n = snprintf(ev, sizeof(ev), "event: endpoint\ndata: "
	    "%s/messages?sessionId=%s\n\n", h->conf->base_path, st->id);
	if (n < 0 || (size_t)n >= sizeof(ev) ||
	    mcp__buf_add(&st->out, ev, (size_t)n) != MCP_OK)
		goto fail;
	resp = mcp__http_event_stream(conn, reader, st, stream_free);
	if (resp == NULL)
		goto fail;
	mcp__http_cors(resp, origin);
	/*
	 * Linked first: from here on stream_free owns ST, whether MHD
	 * takes the response or destroying it frees ST at once.
	 */
	link_stream(h, st);
	rc = mcp__http_queue(conn, MHD_HTTP_OK, resp, 0);
	MHD_destroy_response(resp);	/* stream_free runs when MHD is done */
	if (rc != MHD_YES)
		return rc;
	mcp__http_serving(conn);
	memcpy(st->sess->id, st->id, sizeof(st->id));
	mcp__http_set_session(conn, st->id);
	if (h->conf->store != NULL)
		hold(st);
	mcp__metrics_session_open(st->sess, MT_SSE);
	MCP_LOG(MCP_LOG_INFO, "sse: session %.8s opened (%d open)", st->id,
	    h->nstreams);
	return MHD_YES;

fail:
	mcp__session_close(st->sess);
	mcp__buf_free(&st->out);
	free(st);
	return MHD_NO;
}

static void
link_stream(struct http *h, struct sse_stream *st)
{
	st->hnext = h->buckets[st->hash % SSE_BUCKETS];
	h->buckets[st->hash % SSE_BUCKETS] = st;
	st->next = h->streams;
	if (h->streams != NULL)
		h->streams->prev = st;
	h->streams = st;
	h->nstreams++;
	ev_timer_init(&st->ka, keepalive_cb, h->conf->keepalive,
	    h->conf->keepalive);
	st->ka.data = st;
	ev_timer_start(h->srv->loop, &st->ka);
}

/* POST /messages: 202 for any valid message; the answer takes the stream. */
static enum MHD_Result
sse_post(struct http *h, struct MHD_Connection *conn, struct req *rq)
{
	struct sse_stream	*st;
	struct buf		 err = { 0 };
	const char		*body = rq->body.data, *origin = rq->origin;
	size_t			 len = rq->body.len;
	enum MHD_Result		 refused;
	int			 rc;

	st = find(h, rq->sid);
	if (st == NULL && h->conf->store != NULL)
		return relay_post(h, conn, rq);
	if (st == NULL || st->ending)
		return mcp__http_reply_rpc(conn, 404, MCP_RPC_INVALID_REQUEST,
		    "session not found", origin);
	if (!mcp__http_identify(h, conn, st->sess, origin, &refused))
		return refused;
	if (h->srv->draining) {
		mcp__http_refused(h, ML_DRAINING);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "server shutting down", origin);
	}
	if (mcp__protocol_input(st->sess, body != NULL ? body : "", len,
	    &err) != 0) {
		rc = mcp__http_reply(conn, 400, "application/json", err.data,
		    err.len, origin);
		mcp__buf_free(&err);
		return rc;
	}
	return mcp__http_reply(conn, 202, NULL, "", 0, origin);
}

/* ---- --redis: POSTs for streams held elsewhere ------------------------ */

static void
relay_unlink(struct sse_relay *rl)
{
	struct sse_relay	**pp;

	for (pp = &rl->h->relays; *pp != NULL; pp = &(*pp)->next)
		if (*pp == rl) {
			*pp = rl->next;
			break;
		}
}

/* Redis answered the relay: its POST goes on (sse_resumed). */
static void
relay_cb(void *arg, int status, long long n)
{
	struct sse_relay	*rl = arg;

	if (rl->dead) {
		free(rl);
		return;
	}
	rl->done = 1;
	rl->status = status;
	rl->n = n;
	MHD_resume_connection(rl->conn);
	mcp__http_wake(rl->h);
}

/*
 * A POST for a session not held here: what would be refused here with
 * a 400 is refused now; the rest is relayed to the instance holding
 * its stream, the POST suspended until Redis answers.
 */
static enum MHD_Result
relay_post(struct http *h, struct MHD_Connection *conn, struct req *rq)
{
	struct sse_relay	*rl;
	struct buf		 err = { 0 };
	const char		*body = rq->body.data != NULL ?
				    rq->body.data : "", *why;
	size_t			 len = rq->body.len;
	int			 rc;

	if (!mcp__http_is_id(rq->sid))
		return mcp__http_reply_rpc(conn, 404, MCP_RPC_INVALID_REQUEST,
		    "session not found", rq->origin);
	if (h->srv->draining) {
		mcp__http_refused(h, ML_DRAINING);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "server shutting down", rq->origin);
	}
	if (mcp__protocol_precheck(h->srv, body, len, &err) != 0) {
		rc = mcp__http_reply(conn, 400, "application/json", err.data,
		    err.len, rq->origin);
		mcp__buf_free(&err);
		return rc;
	}
	if (len > STORE_MAX_EVENT - 64)
		return mcp__http_reply_rpc(conn, 413, MCP_RPC_INVALID_REQUEST,
		    "message too large to relay to the instance holding its "
		    "session", rq->origin);
	if ((why = mcp__store_down(h->conf->store)) != NULL)
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY, why,
		    rq->origin);
	rl = calloc(1, sizeof(*rl));
	if (rl == NULL)
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "out of memory", rq->origin);
	rl->h = h;
	rl->conn = conn;
	if (mcp__store_sse_post(h->conf->store, rq->sid, h->ident != NULL ?
	    h->ident->subject : NULL, body, len, relay_cb, rl) != 0) {
		free(rl);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "session store unavailable", rq->origin);
	}
	rl->next = h->relays;
	h->relays = rl;
	rq->relay = rl;
	rq->posted = 1;		/* resumed: sse_resumed */
	MHD_suspend_connection(conn);
	return MHD_YES;
}

/* A relayed POST is back: answered by what Redis said. */
static enum MHD_Result
sse_resumed(struct http *h, struct MHD_Connection *conn, struct req *rq)
{
	struct sse_relay	*rl = rq->relay;
	int			 status;
	long long		 n;
	const char		*why;

	if (rl == NULL)
		return mcp__http_reply_rpc(conn, 404, MCP_RPC_INVALID_REQUEST,
		    "session not found", rq->origin);
	rq->relay = NULL;
	relay_unlink(rl);
	if (!rl->done) {	/* the server stops before Redis answered */
		rl->dead = 1;	/* relay_cb frees it */
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "server shutting down", rq->origin);
	}
	status = rl->status;
	n = rl->n;
	free(rl);
	if (status != ST_OK) {
		why = h->conf->store != NULL ?
		    mcp__store_down(h->conf->store) : NULL;
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    why != NULL ? why : "session store unavailable: Redis "
		    "failed to answer", rq->origin);
	}
	if (n == 0)
		return mcp__http_reply_rpc(conn, 404, MCP_RPC_INVALID_REQUEST,
		    "session not found", rq->origin);
	if (n < 0) {
		MCP_LOG(MCP_LOG_INFO, "http: 403: session %.8s belongs to "
		    "another identity", rq->sid);
		return mcp__http_reply_rpc(conn, 403, MCP_RPC_INVALID_REQUEST,
		    "Forbidden: the session belongs to another identity",
		    rq->origin);
	}
	if (n == 1) {
		mcp_log(MCP_LOG_WARN, "sse: session %.8s: the instance "
		    "holding its stream is not listening on Redis", rq->sid);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "the instance holding this session does not answer",
		    rq->origin);
	}
	MCP_LOG(MCP_LOG_INFO, "sse: session %.8s: a message relayed to the "
	    "instance holding its stream", rq->sid);
	return mcp__http_reply(conn, 202, NULL, "", 0, rq->origin);
}

/* Its request is done: a relay still waiting on Redis is let go. */
static void
sse_req_done(struct req *rq)
{
	struct sse_relay	*rl = rq->relay;

	if (rl == NULL)
		return;
	rq->relay = NULL;
	relay_unlink(rl);
	if (rl->done)
		free(rl);
	else
		rl->dead = 1;
}

void
mcp__sse_relayed(void *arg, const char *sid, const char *json, size_t len)
{
	struct http		*h = arg;
	struct sse_stream	*st = find(h, sid);
	struct buf		 err = { 0 };

	if (st == NULL || st->ending) {
		mcp_log(MCP_LOG_WARN, "sse: session %.8s: a relayed message "
		    "for a stream not held here (%zu bytes): dropped", sid,
		    len);
		return;
	}
	if (h->srv->draining) {
		mcp_log(MCP_LOG_WARN, "sse: session %.8s: a relayed message "
		    "while shutting down: dropped", sid);
		return;
	}
	/* The instance that took the POST answered its 400s: one here is
	 * not of ours. */
	if (mcp__protocol_precheck(h->srv, json, len, &err) != 0 ||
	    memchr(json, '\0', len) != NULL) {
		mcp__buf_free(&err);
		mcp_log(MCP_LOG_WARN, "sse: session %.8s: a relayed message "
		    "not of ours (%zu bytes, not a message): dropped", sid,
		    len);
		return;
	}
	MCP_LOG(MCP_LOG_INFO, "sse: session %.8s: a message relayed from "
	    "another instance (%zu bytes)", sid, len);
	/* As if POSTed here: its answer goes down the stream. */
	(void)mcp__protocol_input(st->sess, json, len, NULL);
}

void
mcp__sse_resub(void *arg)
{
	struct http		*h = arg;
	struct sse_stream	*st;

	/* Redis may have restarted empty: every key at the next sweep. */
	for (st = h->streams; st != NULL; st = st->next)
		st->held_at = -HOLD_EVERY;
}

/* Once a second: the keys of the streams held here are renewed. */
static void
sse_sweep(struct http *h, double now)
{
	struct sse_stream	*st;

	if (h->conf->store == NULL)
		return;
	for (st = h->streams; st != NULL; st = st->next)
		if (!st->ending && now - st->held_at >= HOLD_EVERY)
			hold(st);
}

/* Is any session still owed an answer, or any byte still queued? */
static int
sse_busy(struct http *h)
{
	struct sse_stream	*st;

	for (st = h->streams; st != NULL; st = st->next)
		if (!st->cut && (st->sess->pending > 0 ||
		    st->out.len > st->out.off))
			return 1;
	return 0;
}

static void
sse_end_all(struct http *h)
{
	struct sse_stream	*st;

	for (st = h->streams; st != NULL; st = st->next) {
		st->ending = 1;
		if (!st->cut)
			st->sess->why = MR_SHUTDOWN;
		resume(st);
	}
}

static void
sse_abort_all(struct http *h)
{
	struct sse_stream	*st;

	for (st = h->streams; st != NULL; st = st->next)
		mcp__protocol_abort(st->sess);
}

static int
sse_streams(struct http *h)
{
	return h->nstreams;
}

/* What http.c routes to, for GET /sse and POST /messages. */
const struct http_transport mcp__sse_transport = {
	.get = sse_open,
	.post = sse_post,
	.resumed = sse_resumed,
	.req_done = sse_req_done,
	.sweep = sse_sweep,
	.busy = sse_busy,
	.end_all = sse_end_all,
	.streams = sse_streams,
	.abort_all = sse_abort_all,
	.free_all = sse_end_all,	/* MHD ends the sessions with the streams */
};
