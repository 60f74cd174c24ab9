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
 * stall bound cuts a client that stopped reading. Loop thread only.
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
	.busy = sse_busy,
	.end_all = sse_end_all,
	.streams = sse_streams,
	.abort_all = sse_abort_all,
	.free_all = sse_end_all,	/* MHD ends the sessions with the streams */
};
