/*
 * transport_streamable.c: the Streamable HTTP transport (protocol
 * 2025-03-26 on) at {base}/mcp. Each POST carries one message (or a
 * 2025-03-26 batch); what a request causes -- its progress and log
 * notes, its requests to the client, its answer -- goes back on that
 * POST's own route, and the session's other messages on the standalone
 * GET stream.
 *
 * A route is a logical SSE stream: an event log with session-unique ids
 * ("<route>-<seq>"; route 0 is the standalone stream), bounded by
 * --event-log, which outlives its HTTP connection so that a GET with
 * Last-Event-ID can pick it up where the client lost it. A POST whose
 * answer is not ready is suspended without a response; when the answer
 * comes first, the whole body goes out at once with a Content-Length
 * (the connection stays alive); when a note comes first, or nothing
 * came for --keepalive seconds, the POST turns into a live stream read
 * from the log. Loop thread only, like all of HTTP.
 *
 * With --redis (redis.c), a session's record is in Redis too: written
 * when it opens (its initialize is answered once Redis has it), renewed
 * by activity once half the time since the last write is gone, or when
 * its log level or subscriptions change, and deleted when it ends for
 * all (DELETE; idle, if nobody renewed it since). A request naming an
 * id this instance does not know is suspended while Redis is asked;
 * found, the session is adopted here and the request served.
 *
 * With --redis, event ids are "<instance>-<route>-<seq>", and a route's
 * events go to the session's Redis Stream once it has streamed (an id
 * went out), one EVAL a loop iteration, also published on the
 * session's channel; a GET with a Last-Event-ID of a route not held
 * here replays it from there and follows it live until its end entry.
 * A message outside calls with no standalone stream connected here is
 * published for the instance that holds one (kind g). See "event logs
 * in Redis Streams" below and docs/DEPLOY.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "rpc/rpc.h"
#include "transport/http.h"

#define MAX_DONE	16	/* finished routes kept for a replay */
#define DONE_KEEP	60	/* s */

struct sconn;

struct sev {
	uint64_t	 seq;
	uint64_t	 at;		/* absolute offset of its first byte */
};

struct route {
	struct route	*next;		/* the session's, oldest first */
	struct route	*prev;
	struct ssess	*ss;
	unsigned	 no;		/* 0: the standalone stream */
	int		 holds;		/* calls and batches owing answers */
	int		 storing;	/* an initialize waiting for Redis to
					   hold its session: never streamed */
	int		 inputting;	/* its POST is being handled */
	int		 nfinal;	/* answers logged */
	int		 nnote;		/* other messages logged */
	int		 closing;	/* end the connection, keep the route */
	int		 stream;	/* waited long enough: stream it */
	int		 json;		/* the log is one JSON body */
	int		 bad;		/* only an error without an id */
	int		 failed;	/* the last answer is an error */
	uint64_t	 seq;		/* of the last event */
	struct buf	 log;
	uint64_t	 base;		/* absolute offset of log.data[log.off] */
	struct sev	*ev;		/* events ev[evoff..nev) */
	size_t		 evoff;
	size_t		 nev;
	size_t		 evcap;
	struct req	*waiting;	/* its POST, not answered yet */
	struct MHD_Connection *wconn;
	struct peer_watch pw;		/* ... and whether its client left */
	int		 resumed;	/* ... told to go on already */
	int		 requests;	/* its POST carried requests */
	ev_timer	 wait;		/* waited long enough: start a stream */
	struct sconn	*sc;		/* the connection reading it */
	double		 done_at;	/* when the last hold went */
	int		 written;	/* all written once; kept a while */
	/* Its ids are "<rid>-<seq>": rid "<no>", or with --redis
	 * "<instance>-<no>" (8 hex digits of the instance's id). */
	char		 rid[24];
	/* --redis: its events go to the session's Redis Stream too, once
	 * it streams (an id went out): mseq the last one sent */
	int		 mirror;
	int		 mstarted;	/* its "s" entry went */
	int		 mdone;		/* its "e" entry went */
	uint64_t	 mseq;
	ev_timer	 mtimer;	/* sends them, this loop iteration */
	int		 remote;	/* another instance's, read from Redis */
	int		 rdone;		/* ... and its "e" came */
};

/* One HTTP response streaming a route. */
struct sconn {
	struct sconn	*next;		/* h->sconns */
	struct sconn	*prev;
	struct route	*r;		/* NULL once the route is gone */
	struct http	*h;
	struct MHD_Connection *conn;
	uint64_t	 pos;		/* absolute offset read up to */
	struct buf	 extra;		/* priming, comments: before the log */
	ev_timer	 ka;
	struct peer_watch pw;		/* suspended: did the client go? */
	double		 drained_at;
	int		 suspended;
	int		 ending;
	int		 cut;
	int		 json;		/* a JSON body, kept alive with blanks */
	int		 gave_id;	/* an event id went out: resumable */
	int		 left;		/* the client closed it */
};

struct ssess {
	struct ssess	*hnext;
	struct ssess	*next;		/* h->ssessions */
	struct ssess	*prev;
	struct http	*h;
	struct session	*sess;
	char		 id[33];
	uint32_t	 hash;
	int		 stateless;
	int		 linked;
	unsigned	 nroutes;
	struct route	*head;		/* routes, oldest first */
	struct route	*tail;
	struct route	*get;		/* the standalone stream */
	double		 seen;		/* last request */
	double		 ending_at;	/* mcp_peer_close: its id is gone */
	/* --redis: its record as last written (DEL on idle only if still
	 * so), and what of it may change */
	char		*rec;
	double		 stored_at;	/* written (ev_now); 0: never */
	int		 rec_level;
	int		 rec_ready;
	json_t		*rec_subs;	/* a copy, or NULL */
	int		 store_failed;	/* its first write failed */
	int		 elsewhere;	/* ended by another instance */
	int		 adopted;	/* opened from Redis, here */
	int		 sub;		/* <prefix>ev:<sid>: 1 asked, 2 heard */
	int		 gone;		/* ssess_end: no more to Redis */
	struct replay	*replays;	/* GETs waiting for Redis's log */
};

/* --redis: a GET whose Last-Event-ID names a route not held here, while
 * Redis is asked for its entries (mcp__store_range). */
struct replay {
	struct replay	*next;		/* ss->replays */
	struct ssess	*ss;
	struct MHD_Connection *conn;
	unsigned long	 no;		/* names it to its answer */
	char		 rid[24];
	int		 sent;		/* asked; 0: waiting to subscribe */
	int		 done;
	int		 status;	/* ST_* */
	struct buf	 got;		/* entries: "<len>\n<entry>" each */
	ev_timer	 timer;		/* Redis is given STORE_WAIT s */
};
#define STORE_WAIT	3.0

/* The answer to a replay's EVAL, named by session and number. */
struct rask {
	struct http	*h;
	char		 sid[33];
	unsigned long	 no;
};

/* --redis: a request naming an id not known here, waiting on Redis. */
struct lookup {
	struct lookup	*next;		/* h->lookups */
	struct http	*h;
	struct MHD_Connection *conn;
	char		 sid[33];
	int		 done;
	int		 dead;		/* its request is gone: just free it */
	int		 status;	/* ST_* */
	char		*val;
	size_t		 len;
	double		 done_at;
	int		 ready;		/* its initialized relayed meanwhile */
};

static void	 ssess_link(struct ssess *);
static void	 store_forget(struct ssess *);
static void	 ssess_end(struct ssess *);
static int	 st_send(struct session *, void *, const char *, size_t, int);
static void	 st_hold(struct session *, void *, int);
static void	 st_close(struct session *, void *);
static void	 st_end(struct session *);
static void	 st_relay(struct session *, int, const char *, const char *,
		    size_t);
static int	 ending_done(struct ssess *, double);
static void	 mirror_flush(struct route *);
static void	 mirror_cb(struct ev_loop *, ev_timer *, int);
static void	 replay_free(struct replay *, int);
static void	 sub_want(struct ssess *);
static void	 replay_ask(struct replay *);
static int	 relay_out(struct ssess *, const char *, size_t);
static const char *memfind(const char *, size_t, const char *, size_t);
static unsigned	 era_status(const struct route *, const char *, size_t);

static const struct session_ops st_ops = {
	st_send,
	st_hold,
	st_close,
	st_end,
	MT_STREAMABLE,
	st_relay,
};

static uint64_t
log_end(const struct route *r)
{
	return r->base + (r->log.len - r->log.off);
}

/* A POST's route that is done and that no connection is reading. */
static int
unclaimed(const struct route *r)
{
	return r->no != 0 && r->holds == 0 && r->sc == NULL &&
	    r->waiting == NULL && !r->inputting;
}

static int
delivered(const struct route *r)
{
	return r->no != 0 && r->holds == 0 && !r->inputting &&
	    !(r->remote && !r->rdone) &&
	    r->sc != NULL && r->sc->pos == log_end(r) &&
	    r->sc->extra.len == r->sc->extra.off;
}

/* ---- sessions and routes --------------------------------------------- */

static struct ssess *
find(struct http *h, const char *id)
{
	struct ssess	*ss;
	uint32_t	 hash = mcp__hash(id);

	for (ss = h->sbuckets[hash % SSE_BUCKETS]; ss != NULL; ss = ss->hnext)
		if (ss->hash == hash && strcmp(ss->id, id) == 0)
			return ss;
	return NULL;
}

static struct ssess *
ssess_new(struct http *h, int stateless)
{
	struct ssess	*ss;

	ss = calloc(1, sizeof(*ss));
	if (ss == NULL)
		return NULL;
	if (!stateless && mcp__http_new_id(ss->id) != 0) {
		free(ss);
		return NULL;
	}
	ss->sess = mcp__session_new(h->srv, &st_ops, ss);
	if (ss->sess == NULL) {
		free(ss);
		return NULL;
	}
	ss->sess->max_inflight = h->conf->max_inflight;
	mcp__session_identify(ss->sess, h->ident);	/* bound to it */
	memcpy(ss->sess->id, ss->id, sizeof(ss->id));	/* for the log */
	ss->h = h;
	ss->stateless = stateless;
	ss->hash = mcp__hash(ss->id);
	ss->seen = ev_now(h->srv->loop);
	/* A stateless POST's session is listed too, though no request can
	 * name it: the drain, the abort and the end must see its calls. */
	if (stateless)
		ssess_link(ss);
	return ss;
}

/* Lists SS; a stateful one, initialized, goes in the table too. */
static void
ssess_link(struct ssess *ss)
{
	struct http	*h = ss->h;

	if (!ss->stateless) {
		ss->hnext = h->sbuckets[ss->hash % SSE_BUCKETS];
		h->sbuckets[ss->hash % SSE_BUCKETS] = ss;
		h->nssessions++;
		mcp__metrics_session_open(ss->sess, MT_STREAMABLE);
	}
	ss->next = h->ssessions;
	if (h->ssessions != NULL)
		h->ssessions->prev = ss;
	h->ssessions = ss;
	ss->linked = 1;
}

static void
sc_resume(struct sconn *sc)
{
	if (!sc->suspended)
		return;
	sc->suspended = 0;
	mcp__http_unwatch(&sc->pw);
	MHD_resume_connection(sc->conn);
	mcp__http_wake(sc->h);
}

/* A POST waiting for its answer goes on: to answer, or to stream. Once:
 * MHD must not be asked to resume a connection that is no longer
 * suspended (its handler may not have run yet). */
static void
wait_resume(struct route *r)
{
	ev_timer_stop(r->ss->h->srv->loop, &r->wait);
	mcp__http_unwatch(&r->pw);
	if (r->resumed)
		return;
	r->resumed = 1;
	MHD_resume_connection(r->wconn);
	mcp__http_wake(r->ss->h);
}

static void
route_unlink(struct route *r)
{
	struct ssess	*ss = r->ss;

	if (r->prev != NULL)
		r->prev->next = r->next;
	else if (ss->head == r)
		ss->head = r->next;
	if (r->next != NULL)
		r->next->prev = r->prev;
	else if (ss->tail == r)
		ss->tail = r->prev;
	r->next = r->prev = NULL;
	if (ss->get == r)
		ss->get = NULL;
}

static void
route_free(struct route *r)
{
	struct http	*h = r->ss->h;

	if (r->mirror && ev_is_active(&r->mtimer) && !r->ss->gone)
		mirror_flush(r);
	ev_timer_stop(h->srv->loop, &r->mtimer);
	route_unlink(r);
	ev_timer_stop(h->srv->loop, &r->wait);
	if (r->sc != NULL) {
		r->sc->r = NULL;
		r->sc->ending = 1;
		sc_resume(r->sc);
	}
	if (r->waiting != NULL) {
		/* Its handler runs again and finds the route gone. */
		r->waiting->route = NULL;
		wait_resume(r);
	}
	mcp__http_unwatch(&r->pw);
	mcp__buf_free(&r->log);
	free(r->ev);
	free(r);
}

static void	 wait_cb(struct ev_loop *, ev_timer *, int);
static void	 waiting_gone(struct peer_watch *);

static struct route *
route_new(struct ssess *ss, unsigned no)
{
	struct route	*r;

	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->ss = ss;
	r->no = no;
	r->json = no != 0 && ss->h->conf->json_response;
	/* SSE: stream soon, so that the priming event reaches the client
	 * quickly; JSON, and 2026-07-28 (no event ids to prime, and an
	 * error's own status, 400 for -32021, still to be said): only for
	 * the keepalives a proxy needs. */
	ev_timer_init(&r->wait, wait_cb, r->json || ss->sess->era_only ?
	    ss->h->conf->keepalive : ss->h->conf->stream_after_ms / 1000.0,
	    0.0);
	r->wait.data = r;
	ev_timer_init(&r->mtimer, mirror_cb, 0.0, 0.0);
	r->mtimer.data = r;
	if (ss->h->conf->store != NULL && !ss->stateless) {
		memcpy(r->rid, mcp__store_instance(ss->h->conf->store), 8);
		r->rid[8] = '-';
		r->rid[9 + mcp__fmt_int(r->rid + 9, (long long)no)] = '\0';
	} else
		r->rid[mcp__fmt_int(r->rid, (long long)no)] = '\0';
	r->pw.gone = waiting_gone;
	r->pw.owner = r;
	r->prev = ss->tail;
	if (ss->tail != NULL)
		ss->tail->next = r;
	else
		ss->head = r;
	ss->tail = r;
	return r;
}

/*
 * The session is over (DELETE, idle, shutdown, or a stateless POST
 * done): calls in flight are cancelled, waiting POSTs get 404, streams
 * end.
 */
static void
ssess_end(struct ssess *ss)
{
	struct http	*h = ss->h;
	struct ssess	**pp;

	if (ss->linked && !ss->stateless) {
		for (pp = &h->sbuckets[ss->hash % SSE_BUCKETS]; *pp != NULL;
		    pp = &(*pp)->hnext)
			if (*pp == ss) {
				*pp = ss->hnext;
				break;
			}
		h->nssessions--;
	}
	if (ss->linked) {
		if (ss->prev != NULL)
			ss->prev->next = ss->next;
		else
			h->ssessions = ss->next;
		if (ss->next != NULL)
			ss->next->prev = ss->prev;
	}
	ss->gone = 1;
	while (ss->replays != NULL)
		replay_free(ss->replays, 1);
	if (ss->sub != 0 && h->conf->store != NULL)
		(void)mcp__store_sub(h->conf->store, ss->id, 0);
	if (ss->stored_at != 0 && !ss->elsewhere && h->conf->store != NULL)
		store_forget(ss);
	free(ss->rec);
	json_decref(ss->rec_subs);
	/* Dropping the calls lets go of their routes (st_hold); calls
	 * still running keep the session, not SS. */
	ss->sess->tdata = NULL;
	mcp__session_close(ss->sess);
	while (ss->head != NULL)
		route_free(ss->head);
	free(ss);
	mcp__server_check_drained(h->srv);
}

/* ---- --redis: the session's record in the store ------------------------ */

/*
 * The key lives half a --session-timeout longer than the session may
 * idle, and is renewed once half a timeout has gone since its last
 * write: so it outlives the last request anywhere by at least the
 * timeout, without a write for every request.
 */
static int
store_ttl(const struct http *h)
{
	return h->conf->session_timeout + (h->conf->session_timeout + 1) / 2;
}

/* A write on its way, named by its session's id: the session may end
 * before Redis answers. */
struct swrite {
	struct http	*h;
	char		 sid[33];
	unsigned	 route;		/* the initialize's, held; 0: none */
	int		 first;
};

static void
stored_cb(void *arg, int status, const char *val, size_t len)
{
	struct swrite	*w = arg;
	struct ssess	*ss = find(w->h, w->sid);
	struct route	*r;

	(void)val;
	(void)len;
	if (ss != NULL && w->first && status != ST_OK) {
		mcp_log(MCP_LOG_WARN, "mcp: session %.8s: Redis did not take "
		    "its record; it is refused", ss->id);
		ss->store_failed = 1;
		/* A write that timed out may land yet: undone, if so. */
		if (ss->rec != NULL)
			(void)mcp__store_del(w->h->conf->store, ss->id,
			    ss->rec);
	}
	if (ss != NULL && w->first)
		for (r = ss->head; r != NULL; r = r->next)
			if (r->no == w->route) {
				r->storing = 0;
				st_hold(ss->sess, r, -1);
				break;
			}
	if (ss != NULL && !w->first && status == ST_NONE) {
		/* Renewed with XX and no key: it ended elsewhere (DELETE,
		 * or idle there and expired). */
		MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s is no longer in "
		    "Redis: ended elsewhere, ending it here", ss->id);
		ss->elsewhere = 1;
		ss->sess->why = MR_DELETED;
		ssess_end(ss);
	}
	free(w);
}

/* Writes SS's record: FIRST, a new key (held on route ROUTE until
 * Redis answers); else a renewal of a key that must exist. */
static int
store_write(struct ssess *ss, int first, unsigned route)
{
	struct http	*h = ss->h;
	struct store	*st = h->conf->store;
	struct swrite	*w;
	char		*rec;

	rec = mcp__session_export(ss->sess, ev_time(),
	    mcp__store_instance(st));
	if (rec != NULL && strlen(rec) > STORE_MAX_VALUE) {
		/* More than another instance would read back. */
		mcp_log(MCP_LOG_NOTICE, "mcp: session %.8s: its record "
		    "(%zu bytes: client capabilities and info) is over the "
		    "%u bytes kept in Redis", ss->id, strlen(rec),
		    STORE_MAX_VALUE);
		free(rec);
		return -2;
	}
	w = malloc(sizeof(*w));
	if (rec == NULL || w == NULL) {
		free(rec);
		free(w);
		return -1;
	}
	w->h = h;
	memcpy(w->sid, ss->id, sizeof(w->sid));
	w->route = route;
	w->first = first;
	if (mcp__store_set(st, ss->id, rec, strlen(rec), store_ttl(h), first,
	    stored_cb, w) != 0) {
		free(rec);
		free(w);
		return -1;
	}
	free(ss->rec);
	ss->rec = rec;
	ss->stored_at = ev_now(h->srv->loop);
	ss->rec_level = ss->sess->log_level;
	ss->rec_ready = ss->sess->ready;
	json_decref(ss->rec_subs);
	ss->rec_subs = ss->sess->subs != NULL ?
	    json_deep_copy(ss->sess->subs) : NULL;
	return 0;
}

static int
same_subs(const json_t *a, const json_t *b)
{
	if (a == NULL || json_object_size(a) == 0)
		return b == NULL || json_object_size(b) == 0;
	return b != NULL && json_equal((json_t *)a, (json_t *)b);
}

/* Activity on SS: its record is renewed when half its time is gone or
 * something another instance needs has changed. A failure is retried
 * at the next activity. */
static void
store_touch(struct ssess *ss)
{
	struct session	*s = ss->sess;

	if (ss->h->conf->store == NULL || ss->stateless ||
	    ss->stored_at == 0 || ss->elsewhere)
		return;
	if (ev_now(ss->h->srv->loop) - ss->stored_at <
	    ss->h->conf->session_timeout / 2.0 &&
	    s->log_level == ss->rec_level && s->ready == ss->rec_ready &&
	    same_subs(s->subs, ss->rec_subs))
		return;
	(void)store_write(ss, 0, 0);
}

/* SS ends here: for all (DELETE: DEL), or idle here (DEL only if no
 * instance wrote it since), or only here (shutdown: it stays). */
static void
store_forget(struct ssess *ss)
{
	struct store	*st = ss->h->conf->store;

	if (ss->sess->why == MR_DELETED)
		(void)mcp__store_del(st, ss->id, NULL);
	else if (ss->sess->why == MR_EXPIRED && ss->rec != NULL)
		(void)mcp__store_del(st, ss->id, ss->rec);
}

void
mcp__streamable_ended(void *arg, const char *sid)
{
	struct http	*h = arg;
	struct ssess	*ss = find(h, sid);

	if (ss == NULL || ss->stateless)
		return;
	MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s ended by another instance",
	    ss->id);
	ss->elsewhere = 1;
	ss->sess->why = MR_DELETED;
	ssess_end(ss);
}

static void
lookup_free(struct lookup *lk)
{
	free(lk->val);
	free(lk);
}

static void
lookup_unlink(struct lookup *lk)
{
	struct lookup	**pp;

	for (pp = &lk->h->lookups; *pp != NULL; pp = &(*pp)->next)
		if (*pp == lk) {
			*pp = lk->next;
			break;
		}
}

static void
lookup_cb(void *arg, int status, const char *val, size_t len)
{
	struct lookup	*lk = arg;

	if (lk->dead) {
		lookup_free(lk);
		return;
	}
	lk->status = status;
	if (status == ST_OK && val != NULL) {
		lk->val = malloc(len + 1);
		if (lk->val == NULL)
			lk->status = ST_ERR;
		else {
			memcpy(lk->val, val, len);
			lk->val[len] = '\0';
			lk->len = len;
		}
	}
	lk->done = 1;
	lk->done_at = ev_now(lk->h->srv->loop);
	MHD_resume_connection(lk->conn);
	mcp__http_wake(lk->h);
}

/* CONN's request names SID, unknown here: Redis is asked, CONN waits
 * suspended (*RC: MHD_YES), or the answer is queued in *RC. */
static void
lookup_start(struct http *h, struct MHD_Connection *conn, const char *sid,
    const char *origin, enum MHD_Result *rc)
{
	struct lookup	*lk;
	const char	*why;

	if (!mcp__http_is_id(sid)) {
		*rc = mcp__http_reply_rpc(conn, 404, -32001,
		    "Session not found", origin);
		return;
	}
	if (h->srv->draining) {
		mcp__http_refused(h, ML_DRAINING);
		*rc = mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "server shutting down", origin);
		return;
	}
	why = mcp__store_down(h->conf->store);
	lk = why == NULL ? calloc(1, sizeof(*lk)) : NULL;
	if (lk != NULL) {
		lk->h = h;
		lk->conn = conn;
		memcpy(lk->sid, sid, sizeof(lk->sid));
		if (mcp__store_get(h->conf->store, sid, lookup_cb, lk) != 0) {
			free(lk);
			lk = NULL;
		}
	}
	if (lk == NULL) {
		*rc = mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    why != NULL ? why : "session store unavailable", origin);
		return;
	}
	lk->next = h->lookups;
	h->lookups = lk;
	MHD_suspend_connection(conn);
	*rc = MHD_YES;
}

/* The answered lookup of CONN's request for SID, unlinked; or NULL. */
static struct lookup *
lookup_take(struct http *h, struct MHD_Connection *conn, const char *sid)
{
	struct lookup	*lk;

	for (lk = h->lookups; lk != NULL; lk = lk->next)
		if (lk->conn == conn && lk->done &&
		    strcmp(lk->sid, sid) == 0) {
			lookup_unlink(lk);
			return lk;
		}
	return NULL;
}

/* A session of another instance's, from its record (untrusted), made
 * here: initialized, linked, not open yet (session_of opens it once
 * the request's identity is checked). NULL: not a valid record. */
static struct ssess *
ssess_adopt(struct http *h, const char *sid, const char *val, size_t len)
{
	struct ssess	*ss;
	int		 rc;

	ss = calloc(1, sizeof(*ss));
	if (ss == NULL)
		return NULL;
	memcpy(ss->id, sid, sizeof(ss->id));
	ss->sess = mcp__session_new(h->srv, &st_ops, ss);
	if (ss->sess == NULL) {
		free(ss);
		return NULL;
	}
	ss->sess->max_inflight = h->conf->max_inflight;
	memcpy(ss->sess->id, ss->id, sizeof(ss->id));
	rc = mcp__session_import(ss->sess, ss->id, val, len);
	if (rc != MCP_OK) {
		mcp_log(MCP_LOG_WARN, "mcp: session %.8s: %s in Redis, "
		    "ignored", sid, rc == MCP_ENOMEM ? "out of memory for "
		    "its record" : "not a valid record");
		ss->sess->tdata = NULL;
		mcp__session_close(ss->sess);
		free(ss);
		return NULL;
	}
	ss->h = h;
	ss->hash = mcp__hash(ss->id);
	ss->seen = ev_now(h->srv->loop);
	ss->adopted = 1;
	ss->sess->shared = 1;
	snprintf(ss->sess->inst, sizeof(ss->sess->inst), "%s",
	    mcp__store_tag(h->conf->store));
	/* Renewed at once, by this instance: its own record. */
	ss->stored_at = 1;
	ss->rec_level = -1;
	ssess_link(ss);
	MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s adopted from Redis (%d "
	    "open)", ss->id, h->nssessions);
	return ss;
}

/* LK (taken) answered: the session it found, made here; or NULL with
 * the answer queued in *RC (404: none; 503: Redis failed). */
static struct ssess *
lookup_adopt(struct http *h, struct lookup *lk, struct MHD_Connection *conn,
    const char *origin, enum MHD_Result *rc)
{
	struct ssess	*ss;
	const char	*why;
	int		 status = lk->status;

	ss = find(h, lk->sid);	/* another request adopted it meanwhile */
	if (ss == NULL && status == ST_OK && lk->val != NULL &&
	    h->nstreams + h->nssessions >= h->conf->max_sessions) {
		lookup_free(lk);
		mcp_log(MCP_LOG_WARN, "mcp: %d sessions open (--max-sessions), "
		    "adopting no other", h->nstreams + h->nssessions);
		mcp__http_refused(h, ML_MAX_SESSIONS);
		*rc = mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "too many sessions", origin);
		return NULL;
	}
	if (ss == NULL && status == ST_OK && lk->val != NULL &&
	    (ss = ssess_adopt(h, lk->sid, lk->val, lk->len)) != NULL &&
	    lk->ready)
		ss->sess->ready = 1;	/* its record was read before */
	lookup_free(lk);
	if (ss != NULL)
		return ss;
	if (status == ST_ERR && (why = mcp__store_down(h->conf->store)) !=
	    NULL)
		*rc = mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY, why,
		    origin);
	else if (status == ST_ERR)
		*rc = mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "session store unavailable: Redis failed to answer",
		    origin);
	else
		*rc = mcp__http_reply_rpc(conn, 404, -32001,
		    "Session not found", origin);
	return NULL;
}

/* Is a lookup of CONN's answered, waiting for its request to go on? */
static int
lookup_answered(struct http *h, struct MHD_Connection *conn)
{
	struct lookup	*lk;

	for (lk = h->lookups; lk != NULL; lk = lk->next)
		if (lk->conn == conn && lk->done)
			return 1;
	return 0;
}

/* The daemon stops (or a sweep): answered lookups nobody took are
 * freed (ALL: the others too, their answers freed when they come). */
static void
lookups_clear(struct http *h, double now, int all)
{
	struct lookup	*lk, *next, **pp = &h->lookups;

	for (lk = h->lookups; lk != NULL; lk = next) {
		next = lk->next;
		if (lk->done && (all || now - lk->done_at > 10)) {
			*pp = next;
			lookup_free(lk);
		} else if (all) {
			*pp = next;
			lk->dead = 1;
			MHD_resume_connection(lk->conn);
		} else
			pp = &lk->next;
	}
}

/*
 * Finished routes nobody is reading are kept for a replay: at most
 * MAX_DONE a session (those already written once go first), and for
 * DONE_KEEP seconds at most (st_sweep).
 */
static void
evict_done(struct ssess *ss)
{
	struct route	*r, *next, *oldest = NULL, *written = NULL;
	int		 n = 0;

	for (r = ss->head; r != NULL; r = next) {
		next = r->next;
		if (!unclaimed(r))
			continue;
		if (oldest == NULL)
			oldest = r;
		if (written == NULL && r->written)
			written = r;
		n++;
	}
	if (n <= MAX_DONE)
		return;
	if (written == NULL)
		MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s: dropping an "
		    "unclaimed stream", ss->id);
	route_free(written != NULL ? written : oldest);
}

/* ---- the event log ----------------------------------------------------- */

/* Drops the oldest events while the log is over --event-log, keeping
 * what the connection has not read and the newest event. With no
 * session (2026-07-28) nothing can resume: what was read goes at once,
 * or a long subscriptions/listen would hold --event-log bytes for
 * nothing. */
static void
trim(struct route *r)
{
	size_t		 bound = r->ss->stateless ? 0 :
			    r->ss->h->conf->event_log, k;
	uint64_t	 end = log_end(r), keep;

	if (r->log.len - r->log.off <= bound || r->nev - r->evoff < 2)
		return;
	keep = r->sc != NULL ? r->sc->pos : end;
	for (k = r->evoff; k + 1 < r->nev; k++)
		if (end - r->ev[k].at <= bound || r->ev[k + 1].at > keep)
			break;
	if (k == r->evoff)
		return;
	mcp__buf_consume(&r->log, (size_t)(r->ev[k].at - r->base));
	r->base = r->ev[k].at;
	r->evoff = k;
	if (r->evoff > 64 && r->evoff * 2 > r->nev) {
		memmove(r->ev, r->ev + r->evoff,
		    (r->nev - r->evoff) * sizeof(*r->ev));
		r->nev -= r->evoff;
		r->evoff = 0;
	}
}

/* Closes SC's connection; WHY is logged at LEVEL. */
static void
cut(struct sconn *sc, int level, const char *why)
{
	if (sc->cut)
		return;
	sc->cut = 1;
	sc->ending = 1;
	MCP_LOG(level, "mcp: a stream of session %.8s: %s, closing it",
	    sc->r != NULL ? sc->r->ss->id : "-", why);
	mcp__http_shutdown(sc->conn);
	sc_resume(sc);
}

/*
 * The client closed a stream: the connection goes now, not at the next
 * keepalive; a standalone stream may be opened again at once. The
 * route stays for a resumption (the spec: a disconnect is not a
 * cancellation) if an event id went out on it; if none did, nobody can
 * ever resume it, and sc_free cancels its calls.
 */
static void
sconn_gone(struct peer_watch *w)
{
	struct sconn	*sc = w->owner;

	sc->left = 1;
	cut(sc, MCP_LOG_INFO, "the client closed it");
}

static int
log_event(struct route *r, const char *json, size_t len)
{
	char		 head[80];
	struct sev	*ev;
	size_t		 n;
	int		 rc;

	if (r->json)
		return mcp__buf_add(&r->log, json, len);
	if (r->nev == r->evcap) {
		n = r->evcap != 0 ? r->evcap * 2 : 4;
		ev = realloc(r->ev, n * sizeof(*ev));
		if (ev == NULL)
			return MCP_ENOMEM;
		r->ev = ev;
		r->evcap = n;
	}
	r->seq++;
	/* "event: message\nid: <no>-<seq>\ndata: ", without printf. With
	 * no session nothing can resume, and ids would repeat across the
	 * client's streams: a stateless event has none. */
	if (r->ss->stateless) {
		memcpy(head, "event: message\ndata: ", 21);
		n = 21;
	} else {
		memcpy(head, "event: message\nid: ", 19);
		n = strlen(r->rid);
		memcpy(head + 19, r->rid, n);
		n += 19;
		head[n++] = '-';
		n += mcp__fmt_int(head + n, (long long)r->seq);
		memcpy(head + n, "\ndata: ", 7);
		n += 7;
	}
	r->ev[r->nev].seq = r->seq;
	r->ev[r->nev].at = log_end(r);
	rc = mcp__buf_reserve(&r->log, n + len + 2);
	if (rc != MCP_OK) {
		r->seq--;
		return rc;
	}
	mcp__buf_add(&r->log, head, n);
	mcp__buf_add(&r->log, json, len);
	mcp__buf_add(&r->log, "\n\n", 2);
	r->nev++;
	/* What waited unread before this event: one event larger than the
	 * bound (a big answer) is not a reader that stopped reading. */
	if (r->sc != NULL && r->ev[r->nev - 1].at > r->sc->pos &&
	    r->ev[r->nev - 1].at - r->sc->pos > r->ss->h->conf->max_queued)
		cut(r->sc, MCP_LOG_NOTICE,
		    "its reader stopped reading (--max-queued)");
	trim(r);
	if (r->mirror && !ev_is_active(&r->mtimer))
		ev_timer_start(r->ss->h->srv->loop, &r->mtimer);
	return MCP_OK;
}

/* Something changed on R: wake whoever is waiting on it. */
static void
kick(struct route *r)
{
	if (r->waiting != NULL) {
		if ((r->holds == 0 && !r->inputting) || r->nnote > 0 ||
		    r->closing)
			wait_resume(r);
	} else if (r->sc != NULL)
		sc_resume(r->sc);
}

/* ---- session_ops ------------------------------------------------------- */

/* Is JSON, as our serialiser writes responses, an error response? */
static int
is_error(const char *json, size_t len)
{
	static const char	 pre[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	size_t			 i = sizeof(pre) - 1;

	if (len < i || memcmp(json, pre, i) != 0)
		return 0;
	if (i < len && json[i] == '"') {
		for (i++; i < len && json[i] != '"'; i++)
			if (json[i] == '\\')
				i++;
		i++;
	} else
		while (i < len && json[i] != ',')
			i++;
	return i < len && len - i > 9 &&
	    memcmp(json + i, ",\"error\":", 9) == 0;
}

static int
st_send(struct session *s, void *route, const char *json, size_t len,
    int final)
{
	struct ssess	*ss = s->tdata;
	struct route	*r = route;

	if (ss == NULL)
		return MCP_ESTATE;
	/* With JSON bodies a request's notes have no stream of their own. */
	if (r == NULL || (r->json && !final))
		r = ss->get;
	/* --redis: a message outside calls, and no standalone stream
	 * connected here: for the instance holding one (kept here too, for
	 * a resumption of the one this instance held). */
	if (!final && (r == NULL || (r->no == 0 && r->sc == NULL)) &&
	    ss->h->conf->store != NULL && !ss->stateless &&
	    !ss->sess->era_only) {
		int	 rc = relay_out(ss, json, len);

		if (r == NULL)
			return rc;
	}
	if (r == NULL || (r->no == 0 && final)) {
		MCP_LOG(MCP_LOG_DEBUG, "mcp: session %.8s: no stream for a "
		    "message, dropped", ss->id);
		return MCP_ESTATE;
	}
	if (final && r->nfinal == 0 && r->nnote == 0 && len > 29 &&
	    memcmp(json, "{\"jsonrpc\":\"2.0\",\"error\":", 25) == 0)
		r->bad = 1;	/* an error with no id: a bad message */
	else
		r->bad = 0;
	if (log_event(r, json, len) != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "mcp: out of memory, a message lost");
		return MCP_ENOMEM;
	}
	if (final) {
		r->nfinal++;
		r->failed = is_error(json, len);
	} else
		r->nnote++;
	kick(r);
	return MCP_OK;
}

static void
st_hold(struct session *s, void *route, int delta)
{
	struct route	*r = route;

	(void)s;
	r->holds += delta;
	if (r->holds == 0) {
		r->done_at = ev_now(r->ss->h->srv->loop);
		if (r->mirror && !ev_is_active(&r->mtimer))
			ev_timer_start(r->ss->h->srv->loop, &r->mtimer);
		kick(r);
		if (r->sc == NULL && r->waiting == NULL && !r->inputting)
			evict_done(r->ss);
	}
}

/* mcp_call_close_stream: end the connection, keep the route. */
static void
st_close(struct session *s, void *route)
{
	struct route	*r = route;

	if (r->json || s->version < MCP_V20251125 || r->ss->stateless)
		return;		/* nothing to resume it with */
	if (r->sc == NULL && r->waiting == NULL)
		return;		/* no connection to close */
	r->closing = 1;
	kick(r);
}

/* ---- responses ---------------------------------------------------------- */

static ssize_t
reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sconn	*sc = cls;
	struct route	*r = sc->r;
	size_t		 n;
	uint64_t	 end;

	(void)pos;
	n = sc->extra.len - sc->extra.off;
	if (n > 0) {
		if (n > max)
			n = max;
		memcpy(buf, sc->extra.data + sc->extra.off, n);
		mcp__buf_consume(&sc->extra, n);
		sc->drained_at = ev_now(sc->h->srv->loop);
		return (ssize_t)n;
	}
	if (r != NULL && (end = log_end(r)) > sc->pos) {
		if (!r->json && !r->ss->stateless)
			sc->gave_id = 1;
		if (sc->pos < r->base)
			sc->pos = r->base;	/* trimmed: a gap */
		n = (size_t)(end - sc->pos);
		if (n > max)
			n = max;
		memcpy(buf, r->log.data + r->log.off + (sc->pos - r->base),
		    n);
		sc->pos += n;
		sc->drained_at = ev_now(sc->h->srv->loop);
		mcp__server_progress(sc->h->srv);
		if (sc->h->srv->draining)
			sc->h->recheck = 1;
		return (ssize_t)n;
	}
	if (r == NULL || sc->ending)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (r->closing) {
		r->closing = 0;
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	if (r->no != 0 && r->holds == 0 && !r->inputting &&
	    !(r->remote && !r->rdone))
		return MHD_CONTENT_READER_END_OF_STREAM;
	sc->suspended = 1;
	MHD_suspend_connection(sc->conn);
	mcp__http_watch(sc->h, &sc->pw, sc->conn);
	return 0;
}

static void
sc_free(void *cls)
{
	struct sconn	*sc = cls;
	struct http	*h = sc->h;
	struct route	*r = sc->r;

	if (sc->prev != NULL)
		sc->prev->next = sc->next;
	else
		h->sconns = sc->next;
	if (sc->next != NULL)
		sc->next->prev = sc->prev;
	h->nsconns--;
	ev_timer_stop(h->srv->loop, &sc->ka);
	mcp__http_unwatch(&sc->pw);
	/* Its client left and had no event id to come back with: nobody
	 * can ever read the answers, so the calls stop. */
	if (r != NULL && sc->left && !sc->gave_id && r->no != 0 &&
	    !r->ss->stateless && r->holds > 0) {
		MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s: a stream with no "
		    "event id was closed: its calls are cancelled", r->ss->id);
		mcp__protocol_drop_route(r->ss->sess, r);
	}
	if (r != NULL) {
		if (delivered(r) && r->ss->stateless) {
			struct ssess	*ss = r->ss;

			r->sc = NULL;
			route_free(r);
			ssess_end(ss);
		} else if (delivered(r)) {
			/*
			 * Written is not received: a client that lost the
			 * connection at the end may still come back for it.
			 */
			r->sc = NULL;
			r->written = 1;
			evict_done(r->ss);
		} else {
			r->sc = NULL;
			if (r->ss->stateless)
				ssess_end(r->ss);	/* nobody can resume */
			else if (r->holds == 0)
				evict_done(r->ss);
		}
	}
	mcp__buf_free(&sc->extra);
	free(sc);
	mcp__server_check_drained(h->srv);
}

static void
ka_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sconn		*sc = w->data;
	static const char	 ka[] = ": keepalive\n\n";
	int			 behind;
	const char		*text = sc->json ? "\n" : ka;

	(void)revents;
	behind = sc->extra.len > sc->extra.off ||
	    (sc->r != NULL && log_end(sc->r) > sc->pos);
	if (behind && ev_now(loop) - sc->drained_at >
	    sc->h->conf->idle_timeout) {
		cut(sc, MCP_LOG_NOTICE, "its writes stalled (--idle-timeout)");
		return;
	}
	/*
	 * Bytes still going out keep a proxy awake by themselves; a
	 * keepalive now could land in the middle of an event (the reader
	 * sends extra before the rest of the log), and break it.
	 */
	if (behind || sc->ending)
		return;
	sc->drained_at = ev_now(loop);
	mcp__buf_adds(&sc->extra, text);
	sc_resume(sc);
}

static void
headers(struct MHD_Response *resp, const struct ssess *ss, int new_session,
    const char *origin)
{
	if (new_session)
		MHD_add_response_header(resp, "Mcp-Session-Id", ss->id);
	mcp__http_cors(resp, origin);
}

/* Do R's SSE streams start with a priming event? 2025-11-25 sessions. */
static int
primes(const struct route *r)
{
	return !r->json && !r->ss->stateless &&
	    r->ss->sess->version >= MCP_V20251125;
}

/* The seq of the last event before absolute offset FROM. */
static unsigned long long
seq_before(const struct route *r, uint64_t from)
{
	size_t	 k;

	for (k = r->nev; k > r->evoff; k--)
		if (r->ev[k - 1].at < from)
			return r->ev[k - 1].seq;
	return r->nev > r->evoff ? r->ev[r->evoff].seq - 1 : r->seq;
}

/*
 * Starts streaming R on CONN from absolute offset FROM; PRIME: begin
 * with a priming event (2025-11-25 sessions), whose id resumes at FROM.
 */
static enum MHD_Result
start_stream(struct route *r, struct MHD_Connection *conn, uint64_t from,
    int prime, int new_session, const char *origin)
{
	struct http		*h = r->ss->h;
	struct MHD_Response	*resp;
	struct sconn		*sc;
	char			 line[96];
	int			 n;
	enum MHD_Result		 rc;

	sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		goto fail;
	sc->h = h;
	sc->r = r;
	sc->conn = conn;
	sc->pos = from;
	sc->json = r->json;
	sc->drained_at = ev_now(h->srv->loop);
	sc->pw.gone = sconn_gone;
	sc->pw.owner = sc;
	/* 2025-11-25 sessions: an id to come back with, and when. */
	if (prime && primes(r)) {
		n = snprintf(line, sizeof(line), "id: %s-%llu\nretry: %d\n"
		    "data: \n\n", r->rid, seq_before(r, from),
		    h->conf->sse_retry);
		mcp__buf_add(&sc->extra, line, (size_t)n);
		sc->gave_id = 1;
	}
	if (r->json) {
		/* A JSON body held open: blanks (which JSON allows before
		 * a value) keep a proxy from timing it out. */
		resp = mcp__http_stream(conn, reader, sc, sc_free);
		if (resp != NULL)
			MHD_add_response_header(resp, "Content-Type",
			    "application/json");
	} else
		resp = mcp__http_event_stream(conn, reader, sc, sc_free);
	if (resp == NULL) {
		mcp__buf_free(&sc->extra);
		free(sc);
		goto fail;
	}
	headers(resp, r->ss, new_session, origin);
	/*
	 * Linked first: from here on sc_free owns SC, whether MHD takes the
	 * response or destroying it frees SC at once.
	 */
	r->sc = sc;
	/* --redis: from here its ids are out; another instance may be
	 * asked for them. The standalone stream hears the others. */
	if (h->conf->store != NULL && !r->json && !r->ss->stateless &&
	    !r->remote) {
		if (!r->mirror) {
			r->mirror = 1;
			ev_timer_start(h->srv->loop, &r->mtimer);
		}
		if (r->no == 0)
			sub_want(r->ss);
	}
	sc->next = h->sconns;
	if (h->sconns != NULL)
		h->sconns->prev = sc;
	h->sconns = sc;
	h->nsconns++;
	ev_timer_init(&sc->ka, ka_cb, h->conf->keepalive, h->conf->keepalive);
	sc->ka.data = sc;
	ev_timer_start(h->srv->loop, &sc->ka);
	rc = mcp__http_queue(conn, MHD_HTTP_OK, resp, 0);
	MHD_destroy_response(resp);	/* sc_free runs when MHD is done */
	if (rc != MHD_YES)
		return rc;		/* sc_free has cleaned up */
	mcp__http_serving(conn);
	return MHD_YES;

fail:
	/* Out of memory, no stream: nobody can read a stateless route. */
	if (r->ss->stateless)
		ssess_end(r->ss);
	return MHD_NO;
}

/*
 * A body sent whole ending in an error answer goes without event ids:
 * it cannot be resumed, and the TypeScript SDK (1.32) takes a stream
 * that ended on an error as cut short and tries to resume it.
 */
static void
drop_ids(struct route *r)
{
	char	*p = r->log.data + r->log.off, *end = r->log.data + r->log.len;
	char	*out = p, *nl;
	size_t	 n;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (n < 4 || memcmp(p, "id: ", 4) != 0) {
			memmove(out, p, n);
			out += n;
		}
		p += n;
	}
	r->log.len = (size_t)(out - r->log.data);
}

/* The first NEEDLE (N bytes) in HAY (LEN bytes), or NULL. */
static const char *
memfind(const char *hay, size_t len, const char *needle, size_t n)
{
	const char	*p = hay, *end = hay + len;

	while ((size_t)(end - p) >= n &&
	    (p = memchr(p, needle[0], (size_t)(end - p - n + 1))) != NULL) {
		if (memcmp(p, needle, n) == 0)
			return p;
		p++;
	}
	return NULL;
}

/* Every answer of R is in its log: send it as one body, free R. */
static enum MHD_Result
answer_whole(struct route *r, struct MHD_Connection *conn, int new_session,
    const char *origin)
{
	struct MHD_Response	*resp;
	struct ssess		*ss = r->ss;
	struct buf		 body = { 0 };
	enum MHD_Result		 rc;
	unsigned		 status = MHD_HTTP_OK;
	unsigned		 era;
	const char		*ctype, *d, *p;
	size_t			 n = r->log.len - r->log.off;
	char			 head[96];
	int			 k;

	/*
	 * Nothing to say: 202 for notifications and responses; a request
	 * (one cancelled before it ended) must get a body of a JSON-RPC
	 * type, so an empty event stream, with no id to resume it by.
	 */
	d = n > 0 ? r->log.data + r->log.off : NULL;
	era = n > 0 ? era_status(r, d, n) : 0;
	ctype = r->json ? "application/json" : "text/event-stream";
	if (n == 0 && r->requests) {
		ctype = "text/event-stream";	/* in every mode */
	} else if (n == 0) {
		status = MHD_HTTP_ACCEPTED;
		ctype = NULL;
	} else if (r->bad || era != 0) {
		/* The error as plain JSON: the SSE framing stripped. The log
		 * is not a C string: every search is bounded. */
		status = r->bad ? MHD_HTTP_BAD_REQUEST : era;
		ctype = "application/json";
		if (!r->json && (p = memfind(d, n, "data: ", 6)) != NULL) {
			n -= (size_t)(p + 6 - d);
			d = p + 6;
			if ((p = memchr(d, '\n', n)) != NULL)
				n = (size_t)(p - d);
		}
	} else if (r->failed && !r->json) {
		drop_ids(r);
		n = r->log.len - r->log.off;
	} else if (primes(r)) {
		/*
		 * Every SSE stream of such a session starts primed: "id:
		 * <no>-0\nretry: <ms>\ndata: \n\n", without printf, put in
		 * front of the log, which then becomes the body (no copy).
		 */
		memcpy(head, "id: ", 4);
		k = (int)strlen(r->rid);
		memcpy(head + 4, r->rid, (size_t)k);
		k += 4;
		memcpy(head + k, "-0\nretry: ", 10);
		k += 10;
		k += (int)mcp__fmt_int(head + k, (long long)ss->h->conf->sse_retry);
		memcpy(head + k, "\ndata: \n\n", 9);
		k += 9;
		if (r->log.off == 0 && n == r->log.len &&
		    mcp__buf_reserve(&r->log, (size_t)k) == MCP_OK) {
			memmove(r->log.data + k, r->log.data, n);
			memcpy(r->log.data, head, (size_t)k);
			r->log.len += (size_t)k;
			n += (size_t)k;
			d = r->log.data;
		} else if (mcp__buf_add(&body, head, (size_t)k) != MCP_OK)
			goto fail;
	}
	if (n == 0) {
		;		/* no body */
	} else if (body.len == 0 && r->log.off == 0 && d == r->log.data &&
	    n == r->log.len) {
		body = r->log;		/* the log becomes the body */
		memset(&r->log, 0, sizeof(r->log));
	} else if (mcp__buf_add(&body, d, n) != MCP_OK)
		goto fail;
	resp = mcp__http_body(ss->h, conn, &body);
	if (resp == NULL)
		goto fail;
	if (ctype != NULL)
		MHD_add_response_header(resp, "Content-Type", ctype);
	headers(resp, ss, new_session, origin);
	rc = mcp__http_queue(conn, status, resp, 0);
	MHD_destroy_response(resp);
	route_free(r);
	if (ss->stateless)
		ssess_end(ss);
	return rc;

fail:
	/* Out of memory: the connection closes, and what it held goes. */
	mcp__buf_free(&body);
	route_free(r);
	if (ss->stateless)
		ssess_end(ss);
	return MHD_NO;
}

static void
wait_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct route	*r = w->data;

	(void)loop;
	(void)revents;
	/* Not answered yet: a stream, primed with an event id to come back
	 * with, and with keepalives to keep proxies from cutting it; not
	 * an initialize whose session Redis has yet to take (its answer
	 * waits for that, at most the store's own time limit). */
	if (r->waiting != NULL && !r->storing) {
		r->stream = 1;
		wait_resume(r);
	}
}

/*
 * The client of a POST still waiting for its answer closed the
 * connection: it had no event id yet, so nobody can ever read what its
 * requests answer, and their calls are cancelled. The handler runs once
 * more and closes the connection.
 */
static void
waiting_gone(struct peer_watch *w)
{
	struct route	*r = w->owner;
	struct ssess	*ss = r->ss;

	if (r->waiting == NULL)
		return;
	MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s: a POST's client left "
	    "before its answer: its calls are cancelled",
	    ss->stateless ? "-" : ss->id);
	r->waiting->gone = 1;
	wait_resume(r);
	if (ss->stateless)
		ssess_end(ss);		/* frees R */
	else
		mcp__protocol_drop_route(ss->sess, r);
}

/* ---- requests ----------------------------------------------------------- */

static int
reply_rpc(struct MHD_Connection *conn, int status, const char *msg,
    const char *origin)
{
	return mcp__http_reply_rpc(conn, status, MCP_RPC_SERVER_BUSY, msg,
	    origin);
}

/* Stateless: only POST. */
static enum MHD_Result
not_allowed(struct MHD_Connection *conn, const char *origin)
{
	struct MHD_Response	*resp;
	struct buf		 b = { 0 };
	enum MHD_Result		 rc;
	size_t			 len;

	if (mcp__rpc_error(&b, NULL, MCP_RPC_SERVER_BUSY, "Method Not "
	    "Allowed: a stateless server has no streams or sessions", NULL) !=
	    MCP_OK)
		return MHD_NO;
	len = b.len;
	resp = MHD_create_response_from_buffer(b.len, b.data,
	    MHD_RESPMEM_MUST_COPY);
	mcp__buf_free(&b);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "application/json");
	MHD_add_response_header(resp, "Allow", "POST");
	mcp__http_cors(resp, origin);
	rc = mcp__http_queue(conn, 405, resp, len);
	MHD_destroy_response(resp);
	return rc;
}

/* Does ACCEPT take TYPE ("text/event-stream")? Wildcards count. */
static int
accepts(const char *accept, const char *type)
{
	const char	*p = accept, *slash = strchr(type, '/');
	size_t		 n, tlen = strlen(type), major;

	if (accept == NULL)
		return 0;
	major = (size_t)(slash - type);
	while (*p != '\0') {
		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		n = strcspn(p, ",;");
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if ((n == tlen && strncasecmp(p, type, n) == 0) ||
		    (n == 3 && strncmp(p, "*/*", 3) == 0) ||
		    (n == major + 2 && strncasecmp(p, type, major + 1) == 0 &&
		    p[major + 1] == '*'))
			return 1;
		p += strcspn(p, ",");
	}
	return 0;
}

/* The MCP-Protocol-Version header: NULL when fine, else the reason. */
static const char *
check_version(const char *hv, int *version)
{
	int		 v = MCP_V20250326;	/* the spec's default */

	if (hv != NULL && (v = mcp__version_of(hv)) == 0)
		return "Bad Request: unsupported MCP-Protocol-Version (supported: "
	    "2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)";
	if (version != NULL)
		*version = v;
	return NULL;
}

/* The session named by the request, or NULL with the reply queued;
 * VERSION: its MCP-Protocol-Version header. */
static struct ssess *
session_of(struct http *h, struct MHD_Connection *conn, const char *sid,
    const char *version, const char *origin, enum MHD_Result *rc)
{
	struct ssess	*ss;
	struct lookup	*lk;
	const char	*why;

	if (sid == NULL || sid[0] == '\0') {
		*rc = reply_rpc(conn, 400, "Bad Request: Mcp-Session-Id "
		    "header is required", origin);
		return NULL;
	}
	ss = find(h, sid);
	if (ss == NULL && h->conf->store != NULL) {
		/* Maybe another instance's: Redis is asked, once. */
		lk = lookup_take(h, conn, sid);
		if (lk == NULL) {
			lookup_start(h, conn, sid, origin, rc);
			return NULL;
		}
		ss = lookup_adopt(h, lk, conn, origin, rc);
		if (ss == NULL)
			return NULL;
	}
	if (ss == NULL) {
		*rc = mcp__http_reply_rpc(conn, 404, -32001,
		    "Session not found", origin);
		return NULL;
	}
	if ((why = check_version(version, NULL)) != NULL) {
		*rc = reply_rpc(conn, 400, why, origin);
		return NULL;
	}
	if (!mcp__http_identify(h, conn, ss->sess, origin, rc))
		return NULL;
	if (ss->adopted && !ss->sess->info->opened) {
		/* With the request's identity: its claims too. */
		mcp__session_open(ss->sess);
		mcp__notify_listen(ss->sess);
	}
	ss->seen = ev_now(h->srv->loop);
	store_touch(ss);
	return ss;
}

#define PEEK_OTHER	0
#define PEEK_INITIALIZE	1
#define PEEK_RESPONSE	2

/* What is BODY: an initialize request, a response, or something else?
 * Parses it once more; only for POSTs off the hot path. */
static int
peek(const char *body, size_t len)
{
	struct rpc_fields f;
	struct json_perr e;
	json_t		*whole = NULL;
	int		 rc, kind = PEEK_OTHER;

	rc = mcp__json_parse_message(body, len, &f, &whole, &e);
	json_decref(whole);
	if (rc != 1)
		return PEEK_OTHER;
	if (f.method == 1 && strcmp(f.mname, "initialize") == 0)
		kind = PEEK_INITIALIZE;
	else if (f.method == 0 && f.has_id && f.has_result)
		kind = PEEK_RESPONSE;
	mcp__rpc_fields_clear(&f);
	return kind;
}


/* ---- protocol 2026-07-28 (era.c): stateless POSTs ---------------------- */

#define ERA_KEY	"io.modelcontextprotocol/protocolVersion"

/* Does plain header value HV, without its OWS, say the string WANT? */
static int
header_is(const char *hv, const char *want)
{
	size_t	 hl, n = strlen(want);

	while (*hv == ' ' || *hv == '\t')
		hv++;
	hl = strlen(hv);
	while (hl > 0 && (hv[hl - 1] == ' ' || hv[hl - 1] == '\t'))
		hl--;
	return hl == n && memcmp(hv, want, n) == 0;
}

/*
 * Is a POST without a session a 2026-07-28 one? It is when its
 * MCP-Protocol-Version says 2026-07-28, or when its params._meta names a
 * protocolVersion (then its headers are checked, and a missing one is
 * its client's error). Any other version in the header alone is a
 * legacy client's mistake, answered as before. An initialize opens a
 * legacy session, whatever its headers say, unless it is a modern
 * request: a modern _meta and no protocolVersion of initialize's own.
 * Then it is one (versioning.mdx: a request carrying modern per-request
 * _meta is served by this revision, which has no initialize), answered
 * 404 and -32601 like any method the era lacks
 * (streamable-http.mdx, "If the server does not implement the requested
 * RPC method"), and the client's fallback initialize still works.
 */
static int
era_post(const char *hv, const char *body, size_t len)
{
	json_t		*whole, *params;
	struct json_perr e;
	int		 modern, init;

	if ((hv == NULL || !header_is(hv, "2026-07-28")) &&
	    memfind(body, len, ERA_KEY, sizeof(ERA_KEY) - 1) == NULL)
		return 0;
	init = peek(body, len) == PEEK_INITIALIZE;
	if (!init && hv != NULL && header_is(hv, "2026-07-28"))
		return 1;
	whole = mcp__json_parse(body, len, &e);
	params = json_object_get(whole, "params");
	modern = mcp__era_is_modern(json_object_get(params, "_meta"));
	if (init && json_object_get(params, "protocolVersion") != NULL)
		modern = 0;
	json_decref(whole);
	return modern;
}

/* A header value as the spec allows it: visible ASCII, space and tab. */
static int
header_ok(const char *v)
{
	for (; *v != '\0'; v++)
		if ((*v < 0x20 || *v > 0x7e) && *v != '\t')
			return 0;
	return 1;
}

/*
 * Does header value HV (plain, or "=?base64?...?=") say exactly the N
 * bytes of WANT? The spaces and tabs around it are not part of the
 * value (RFC 9110 section 5.5: a field value excludes its leading and
 * trailing OWS, which a parser removes before evaluating it), so they
 * are skipped, whatever the HTTP library left there.
 */
static int
header_says(const char *hv, const char *want, size_t n)
{
	size_t	 hl, dl;
	char	*d;
	int	 same;

	while (*hv == ' ' || *hv == '\t')
		hv++;
	hl = strlen(hv);
	while (hl > 0 && (hv[hl - 1] == ' ' || hv[hl - 1] == '\t'))
		hl--;

	if (hl >= 11 && strncmp(hv, "=?base64?", 9) == 0 &&
	    strncmp(hv + hl - 2, "?=", 2) == 0) {
		d = mcp__base64_decode(hv + 9, hl - 11, &dl);
		same = d != NULL && dl == n && memcmp(d, want, n) == 0;
		free(d);
		return same;
	}
	return hl == n && memcmp(hv, want, n) == 0;
}

/* Counts the headers named in ARG (a struct hcount). */
struct hcount {
	const char	*name;
	int		 n;
};

static enum MHD_Result
count_header(void *arg, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct hcount	*hc = arg;

	(void)kind;
	(void)value;
	if (strcasecmp(key, hc->name) == 0)
		hc->n++;
	return MHD_YES;
}

/* The value of header NAME; NULL when absent, and *TWICE set when it
 * came more than once (an intermediary may have read another). */
static const char *
era_header(struct MHD_Connection *conn, const char *name, int *twice)
{
	struct hcount	 hc = { name, 0 };

	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &hc);
	if (hc.n > 1)
		*twice = 1;
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/*
 * The Mcp-Param-NAME headers of a tools/call of TOOL (ARGS, its
 * arguments) against the x-mcp-header annotations of its inputSchema
 * (xheader.c): each must say the value at its property, and come only
 * when the arguments have one there. 0, or -32020 with WHY. A tool not
 * registered, or a value of another type, is the protocol's to refuse.
 */
static int
era_params(struct MHD_Connection *conn, struct mcp_server *srv,
    const char *tool, const json_t *args, char *why, size_t whylen)
{
	struct tool	*t;
	const char	*hv, *val = NULL;
	char		 hname[16 + MCP_XHEADER_NAME_MAX], num[32];
	size_t		 vlen = 0;
	int		 i, has, twice = 0, code = 0;

	if (tool == NULL || (t = mcp__registry_get(&srv->reg, tool)) == NULL)
		return 0;
	for (i = 0; i < t->nxh && code == 0; i++) {
		snprintf(hname, sizeof(hname), "Mcp-Param-%s",
		    mcp__xheader_name(t->xh, i));
		hv = era_header(conn, hname, &twice);
		has = mcp__xheader_value(t->xh, i, args, num, sizeof(num),
		    &val, &vlen);
		if (has < 0)
			continue;
		code = MCP_RPC_HEADER_MISMATCH;
		if (twice)
			snprintf(why, whylen, "Header mismatch: %s may come "
			    "once", hname);
		else if (has && hv == NULL)
			snprintf(why, whylen, "Header mismatch: %s header is "
			    "required (the tool's x-mcp-header)", hname);
		else if (!has && hv != NULL)
			snprintf(why, whylen, "Header mismatch: %s header "
			    "given, but the arguments have no value there",
			    hname);
		else if (has && !header_ok(hv))
			snprintf(why, whylen, "Header mismatch: %s header has "
			    "characters a header may not carry", hname);
		else if (has && !header_says(hv, val, vlen))
			snprintf(why, whylen, "Header mismatch: %s header "
			    "value does not match the body's arguments",
			    hname);
		else
			code = 0;
	}
	mcp__tool_unref(t);
	return code;
}

/*
 * The checks a 2026-07-28 POST passes before the protocol sees it, in
 * the spec's order of what can be said: its _meta (-32602), its
 * MCP-Protocol-Version against the _meta's (-32020), the version
 * (-32022), then Mcp-Method and Mcp-Name against the body (-32020).
 * Each failure is a 400 with the JSON-RPC error, answered here; returns
 * 1 then, 0 when the POST goes on. The body is read by the protocol's
 * own message reader, so that what is checked here is what is served
 * (the same id, method and name; a repeated header is a mismatch); what
 * it does not take for a request (bad JSON, a batch, a notification)
 * goes on, and the protocol layer answers it as always.
 */
static int
era_refused(struct MHD_Connection *conn, struct mcp_server *srv,
    struct req *rq, const char *body, size_t len, enum MHD_Result *rc,
    int *listen)
{
	struct era_req	 er;
	struct rpc_fields f;
	struct json_perr e;
	struct buf	 b = { 0 };
	json_t		*whole = NULL, *params, *data = NULL, *v = NULL;
	const char	*hm, *hn, *member, *name = NULL;
	size_t		 namelen = 0;
	char		 why[200];
	int		 code, twice = 0;

	if (mcp__json_parse_message(body, len, &f, &whole, &e) != 1 ||
	    f.method != 1 || !f.has_id) {
		json_decref(whole);
		mcp__rpc_fields_clear(&f);
		return 0;
	}
	/* The object the protocol builds from the params text; a params
	 * that is no object is the protocol's to refuse. */
	params = f.praw != NULL ? mcp__json_parse(f.praw, f.prawlen, &e) :
	    json_incref(f.params);
	/* A listen's answer is a stream, even with --json-response. */
	*listen = strcmp(f.mname, "subscriptions/listen") == 0;
	hm = era_header(conn, "Mcp-Method", &twice);
	hn = era_header(conn, "Mcp-Name", &twice);
	(void)era_header(conn, "MCP-Protocol-Version", &twice);
	member = mcp__era_name_of(f.mname);
	if (member != NULL && strcmp(f.mname, "tools/call") == 0 &&
	    f.praw != NULL) {
		/* The name the protocol looks the tool up by. */
		if (f.tname_kind == 1) {
			name = f.tname;
			namelen = strlen(f.tname);
		}
	} else if (member != NULL) {
		v = json_object_get(params, member);
		name = json_string_value(v);
		namelen = json_string_length(v);
	}
	code = mcp__era_meta(json_object_get(params, "_meta"), &er, why,
	    sizeof(why));
	if (code == 0 && (rq->version == NULL ||
	    !header_is(rq->version, er.vname))) {
		code = MCP_RPC_HEADER_MISMATCH;
		snprintf(why, sizeof(why), "Header mismatch: %s", rq->version ==
		    NULL ? "MCP-Protocol-Version header is required" :
		    "MCP-Protocol-Version header does not match _meta's "
		    "protocolVersion");
	}
	if (code == 0)
		code = mcp__era_version(er.vname, &data, why, sizeof(why));
	if (code == 0 && twice) {
		code = MCP_RPC_HEADER_MISMATCH;
		snprintf(why, sizeof(why), "Header mismatch: MCP-Protocol-"
		    "Version, Mcp-Method and Mcp-Name may each come once");
	}
	if (code == 0 && (hm == NULL || !header_ok(hm) ||
	    !header_is(hm, f.mname))) {
		code = MCP_RPC_HEADER_MISMATCH;
		snprintf(why, sizeof(why), "Header mismatch: %s", hm == NULL ?
		    "Mcp-Method header is required" : "Mcp-Method header "
		    "value does not match the body's method");
	}
	if (code == 0 && member != NULL && (hn == NULL || !header_ok(hn) ||
	    name == NULL || !header_says(hn, name, namelen))) {
		code = MCP_RPC_HEADER_MISMATCH;
		snprintf(why, sizeof(why), "Header mismatch: %s", hn == NULL ?
		    "Mcp-Name header is required" : "Mcp-Name header value "
		    "does not match the body's params");
	}
	if (code == 0 && name != NULL && strcmp(f.mname, "tools/call") == 0)
		code = era_params(conn, srv, f.tname, json_object_get(params,
		    "arguments"), why, sizeof(why));
	if (code != 0) {
		if (mcp__rpc_error(&b, f.id, code, why, data) == MCP_OK)
			*rc = mcp__http_reply(conn, 400, "application/json",
			    b.data, b.len, rq->origin);
		else
			*rc = MHD_NO;
	}
	mcp__buf_free(&b);
	json_decref(data);
	json_decref(params);
	mcp__rpc_fields_clear(&f);
	return code != 0;
}

/* A GET or DELETE of a 2026-07-28 client (no session): 405, as the
 * spec asks of a server with no streams and sessions in that era. */
static int
era_get(struct MHD_Connection *conn, const char *sid)
{
	const char	*hv;

	hv = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "MCP-Protocol-Version");
	return (sid == NULL || sid[0] == '\0') && hv != NULL &&
	    header_is(hv, "2026-07-28");
}

/*
 * The HTTP status of a 2026-07-28 answer sent whole (the N bytes at D,
 * one error): 404 for an unknown method, 400 for a capability the
 * client did not declare; 0 for the usual 200.
 */
static unsigned
era_status(const struct route *r, const char *d, size_t n)
{
	static const char	 key[] = "\"error\":{\"code\":";
	const char		*p;
	char			 num[8];
	size_t			 k;

	if (!r->ss->sess->era_only || !r->failed || r->nnote > 0 ||
	    r->nfinal != 1)
		return 0;
	p = memfind(d, n, key, sizeof(key) - 1);
	if (p == NULL)
		return 0;
	p += sizeof(key) - 1;
	k = (size_t)(d + n - p) < sizeof(num) - 1 ? (size_t)(d + n - p) :
	    sizeof(num) - 1;
	memcpy(num, p, k);
	num[k] = '\0';
	if (strncmp(num, "-32601", 6) == 0)
		return MHD_HTTP_NOT_FOUND;
	if (strncmp(num, "-32021", 6) == 0)
		return MHD_HTTP_BAD_REQUEST;
	return 0;
}

static enum MHD_Result
st_post(struct http *h, struct MHD_Connection *conn, struct req *rq)
{
	struct ssess	*ss;
	struct route	*r;
	struct buf	 err = { 0 };
	const char	*why, *body = rq->body.data != NULL ? rq->body.data : "";
	const char	*accept;
	size_t		 len = rq->body.len;
	enum MHD_Result	 rc = MHD_NO;
	int		 fresh = 0, version, in, wrc, listen = 0;
	unsigned	 nreq;

	accept = rq->accept;
	if (!accepts(accept, "application/json") ||
	    !accepts(accept, "text/event-stream"))
		return reply_rpc(conn, 406, "Not Acceptable: Client must "
		    "accept both application/json and text/event-stream",
		    rq->origin);
	/* Draining, calls may still wait on answers from the client. */
	if (h->srv->draining && (h->conf->stateless ||
	    peek(body, len) != PEEK_RESPONSE)) {
		mcp__http_refused(h, ML_DRAINING);
		return reply_rpc(conn, 503, "server shutting down",
		    rq->origin);
	}
	if (h->srv->relay != NULL && (h->conf->stateless || (rq->sid[0] == '\0' &&
	    peek(body, len) == PEEK_INITIALIZE)) &&
	    (why = mcp__relay_admit(h->srv)) != NULL) {
		mcp__http_refused(h, ML_MAX_SESSIONS);
		return reply_rpc(conn, 503, why, rq->origin);
	}
	if (rq->sid[0] == '\0' && h->srv->relay == NULL &&
	    era_post(rq->version, body, len)) {
		/* 2026-07-28: no session, no event ids, nothing kept. */
		if (era_refused(conn, h->srv, rq, body, len, &rc, &listen))
			return rc;
		ss = ssess_new(h, 1);
		if (ss == NULL)
			return reply_rpc(conn, 500, "out of memory",
			    rq->origin);
		ss->sess->implicit = 1;
		ss->sess->era_only = 1;
		ss->sess->version = MCP_V20260728;
	} else if (h->conf->stateless) {
		if ((why = check_version(rq->version, &version)) != NULL)
			return reply_rpc(conn, 400, why, rq->origin);
		ss = ssess_new(h, 1);
		if (ss == NULL)
			return reply_rpc(conn, 500, "out of memory",
			    rq->origin);
		ss->sess->implicit = 1;
		ss->sess->version = version;
	} else if (rq->sid[0] == '\0' && peek(body, len) == PEEK_INITIALIZE) {
		if (h->nstreams + h->nssessions >= h->conf->max_sessions) {
			mcp_log(MCP_LOG_WARN, "mcp: %d sessions open "
			    "(--max-sessions), refusing another",
			    h->nstreams + h->nssessions);
			mcp__http_refused(h, ML_MAX_SESSIONS);
			return reply_rpc(conn, 503, "too many sessions",
			    rq->origin);
		}
		if (h->conf->store != NULL &&
		    (why = mcp__store_down(h->conf->store)) != NULL) {
			mcp__http_refused(h, ML_MAX_SESSIONS);
			return reply_rpc(conn, 503, why, rq->origin);
		}
		ss = ssess_new(h, 0);
		if (ss == NULL)
			return reply_rpc(conn, 500, "cannot create a session",
			    rq->origin);
		/* Other instances may serve it: its tasks are in Redis
		 * too (taskshare.c). */
		ss->sess->shared = h->conf->store != NULL;
		if (h->conf->store != NULL)
			snprintf(ss->sess->inst, sizeof(ss->sess->inst),
			    "%s", mcp__store_tag(h->conf->store));
		fresh = 1;
	} else {
		ss = session_of(h, conn, rq->sid, rq->version, rq->origin,
		    &rc);
		if (ss == NULL)
			return rc;
	}
	r = route_new(ss, ++ss->nroutes);
	if (r == NULL) {
		if (ss->stateless || fresh)
			ssess_end(ss);
		return MHD_NO;
	}
	if (listen)
		r->json = 0;
	r->inputting = 1;
	ss->sess->route = r;
	nreq = ss->sess->nrequests;
	in = mcp__protocol_input(ss->sess, body, len, &err);
	r->requests = ss->sess->nrequests != nreq;
	ss->sess->route = NULL;
	r->inputting = 0;
	if (in != 0) {
		route_free(r);
		if (ss->stateless || fresh)
			ssess_end(ss);
		rc = mcp__http_reply(conn, 400, "application/json", err.data,
		    err.len, rq->origin);
		mcp__buf_free(&err);
		return rc;
	}
	if (fresh) {
		if (!ss->sess->initialized) {
			/* A failed initialize: its error, and no session. */
			r->bad = r->bad || r->nfinal > 0;
			rc = answer_whole(r, conn, 0, rq->origin);
			ssess_end(ss);
			return rc;
		}
		ssess_link(ss);
		MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s opened (%d open)",
		    ss->id, h->nssessions);
		/* Answered once Redis has it: the client's next request may
		 * reach another instance at once. */
		if (h->conf->store != NULL) {
			wrc = store_write(ss, 1, r->no);
			if (wrc != 0) {
				route_free(r);
				ssess_end(ss);
				return wrc == -2 ? reply_rpc(conn, 400,
				    "initialize too large to share: its "
				    "capabilities and clientInfo must fit in "
				    "256 KiB", rq->origin) : reply_rpc(conn,
				    503, "session store unavailable: cannot "
				    "write to Redis", rq->origin);
			}
			/* Not streamed before Redis answers (wait_cb):
			 * a failed write still refuses it. */
			r->storing = 1;
			st_hold(ss->sess, r, 1);
		}
	} else
		store_touch(ss);	/* its level, its subscriptions */
	if (r->holds == 0 && r->nnote == 0)
		return answer_whole(r, conn, fresh, rq->origin);
	/* Answers to come: wait for the first message or the answer. */
	rq->route = r;
	rq->fresh = fresh;
	r->waiting = rq;
	r->wconn = conn;
	if (r->nnote > 0) {
		/* Something to stream already (not reached today). */
		r->waiting = NULL;
		rq->route = NULL;
		return start_stream(r, conn, r->base, 1, fresh, rq->origin);
	}
	ev_timer_start(h->srv->loop, &r->wait);
	MHD_suspend_connection(conn);
	mcp__http_watch(h, &r->pw, conn);
	return MHD_YES;
}

/* A waiting POST was resumed: its answer came, or a stream must start. */
static enum MHD_Result
st_resumed(struct http *h, struct MHD_Connection *conn,
    struct req *rq)
{
	struct route	*r = rq->route;

	if (rq->gone) {
		/* The client left (waiting_gone): close the connection. */
		if (r != NULL) {
			rq->route = NULL;
			r->waiting = NULL;
			if (r->holds == 0)
				route_free(r);
		}
		return MHD_NO;
	}
	if (r == NULL && h->conf->store != NULL &&
	    lookup_answered(h, conn)) {
		/* Redis answered for its session: the POST goes on. */
		enum MHD_Result	 rc;

		h->ident = rq->ident;
		rc = st_post(h, conn, rq);
		h->ident = NULL;
		return rc;
	}
	if (r == NULL)
		return mcp__http_reply_rpc(conn, 404, -32001,
		    "Session not found", rq->origin);
	rq->route = NULL;
	r->waiting = NULL;
	ev_timer_stop(h->srv->loop, &r->wait);
	mcp__http_unwatch(&r->pw);
	if (rq->fresh && r->ss->store_failed) {
		struct ssess	*ss = r->ss;

		route_free(r);
		ss->sess->why = MR_DELETED;
		ssess_end(ss);
		return reply_rpc(conn, 503, "session store unavailable: Redis "
		    "did not take the session", rq->origin);
	}
	if (r->holds == 0 && r->nnote == 0 && !r->closing && !r->stream)
		return answer_whole(r, conn, rq->fresh, rq->origin);
	return start_stream(r, conn, r->base, 1, rq->fresh, rq->origin);
}

/* MHD is done with a request that still waited on a route. */
static void
st_req_done(struct req *rq)
{
	struct route	*r = rq->route;

	if (r == NULL)
		return;
	rq->route = NULL;
	r->waiting = NULL;
	ev_timer_stop(r->ss->h->srv->loop, &r->wait);
	mcp__http_unwatch(&r->pw);
	if (r->ss->stateless)
		ssess_end(r->ss);
}

/* ---- --redis: event logs in Redis Streams ------------------------------ */

/*
 * An entry is "K RID SEQ[ JSON]": K is m (an event of route RID, which
 * the stream replays), s (the route streams from here: it exists), e
 * (its last answer went: it is over), or g (a message for whoever holds
 * the session's standalone stream, from an instance that holds none:
 * published, never kept). JSON is one line, as our serialiser writes.
 */

/* The stream's bound in entries: --event-log over a small event. */
static long
mirror_max(const struct http *h)
{
	long	 n = (long)(h->conf->event_log / 64);

	if (n < 16)
		n = 16;
	return n > (long)STORE_MAX_ITEMS ? (long)STORE_MAX_ITEMS : n;
}

/* Adds "K RID SEQ[ JSON]" to B, with its offset in OFFS[*N]. */
static int
entry_add(struct buf *b, size_t *offs, int *n, char k, const char *rid,
    uint64_t seq, const char *json, size_t len)
{
	char	 num[24];

	offs[(*n)++] = b->len;
	if (mcp__buf_addc(b, k) != MCP_OK || mcp__buf_addc(b, ' ') !=
	    MCP_OK || mcp__buf_adds(b, rid) != MCP_OK ||
	    mcp__buf_addc(b, ' ') != MCP_OK ||
	    mcp__buf_add(b, num, mcp__fmt_int(num, (long long)seq)) != MCP_OK)
		return -1;
	if (json != NULL && (mcp__buf_addc(b, ' ') != MCP_OK ||
	    mcp__buf_add(b, json, len) != MCP_OK))
		return -1;
	return 0;
}

/* Sends N entries of B (at OFFS) for SS in one EVAL. */
static void
entries_push(struct ssess *ss, struct buf *b, size_t *offs, int n)
{
	const char	**vals;
	size_t		 *lens;
	int		  i;

	vals = malloc((size_t)n * sizeof(*vals));
	lens = malloc((size_t)n * sizeof(*lens));
	if (vals != NULL && lens != NULL) {
		for (i = 0; i < n; i++) {
			vals[i] = b->data + offs[i];
			lens[i] = (i + 1 < n ? offs[i + 1] : b->len) - offs[i];
		}
		if (mcp__store_push(ss->h->conf->store, ss->id, n, vals, lens,
		    mirror_max(ss->h), store_ttl(ss->h)) != 0)
			MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s: %d events not "
			    "in Redis (unavailable)", ss->id, n);
	}
	free(vals);
	free(lens);
}

/*
 * R's events not sent yet go to Redis, with its "s" first and its "e"
 * once its calls are done: one EVAL for all that came in a loop
 * iteration (its answer and its end, or a burst of notes).
 */
static void
mirror_flush(struct route *r)
{
	struct ssess	*ss = r->ss;
	struct buf	 b = { 0 };
	size_t		*offs, k, at, end, max;
	const char	*p, *d;
	int		 n = 0, done;

	ev_timer_stop(ss->h->srv->loop, &r->mtimer);
	if (r->mdone)
		return;
	done = r->no != 0 && r->holds == 0 && !r->inputting && !r->storing;
	offs = malloc((r->nev - r->evoff + 2) * sizeof(*offs));
	if (offs == NULL)
		return;
	if (!r->mstarted) {
		if (entry_add(&b, offs, &n, 's', r->rid, r->seq, NULL, 0) != 0)
			goto out;
		r->mstarted = 1;
	}
	for (k = r->evoff; k < r->nev; k++) {
		if (r->ev[k].seq <= r->mseq)
			continue;
		at = (size_t)(r->ev[k].at - r->base);
		end = (size_t)((k + 1 < r->nev ? r->ev[k + 1].at : log_end(r)) -
		    r->base);
		d = r->log.data + r->log.off;
		/* "event: message\nid: ...\ndata: JSON\n\n" */
		max = end - at;
		p = memfind(d + at, max, "\ndata: ", 7);
		if (p == NULL || end - (size_t)(p - d) < 9)
			continue;
		p += 7;
		if (entry_add(&b, offs, &n, 'm', r->rid, r->ev[k].seq, p,
		    (size_t)(d + end - 2 - p)) != 0)
			goto out;
		r->mseq = r->ev[k].seq;
	}
	if (done) {
		if (entry_add(&b, offs, &n, 'e', r->rid, r->seq, NULL, 0) != 0)
			goto out;
		r->mdone = 1;
	}
	if (n > 0)
		entries_push(ss, &b, offs, n);
out:
	free(offs);
	mcp__buf_free(&b);
}

static void
mirror_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	mirror_flush(w->data);
}

/* A message outside calls, no standalone stream here: for the instance
 * that holds one (kind g). */
static int
relay_out(struct ssess *ss, const char *json, size_t len)
{
	struct buf	 b = { 0 };
	size_t		 off;
	int		 n = 0, rc = MCP_ESTATE;
	char		 rid[24];

	snprintf(rid, sizeof(rid), "%.8s-0",
	    mcp__store_instance(ss->h->conf->store));
	if (entry_add(&b, &off, &n, 'g', rid, 0, json, len) == 0) {
		entries_push(ss, &b, &off, n);
		rc = MCP_OK;
	}
	mcp__buf_free(&b);
	return rc;
}

/*
 * The heartbeat's record: [[sid, route, [ids]], ...], the calls in
 * flight on routes whose ids went out (those a client may resume), for
 * the instance that will answer them if this one is lost. Once a
 * second, not once a call.
 */
int
mcp__streamable_calls(void *arg, struct buf *out)
{
	struct http	*h = arg;
	struct ssess	*ss;
	struct route	*r;
	char		*ids;
	int		 first = 1;

	if (mcp__buf_addc(out, '[') != MCP_OK)
		return -1;
	for (ss = h->ssessions; ss != NULL; ss = ss->next) {
		if (ss->stateless || ss->gone)
			continue;
		for (r = ss->head; r != NULL; r = r->next) {
			if (!r->mirror || r->mdone || r->no == 0 ||
			    r->holds == 0 || r->remote)
				continue;
			ids = mcp__protocol_route_ids(ss->sess, r);
			if (ids == NULL)
				continue;
			if ((!first && mcp__buf_addc(out, ',') != MCP_OK) ||
			    mcp__buf_adds(out, "[\"") != MCP_OK ||
			    mcp__buf_adds(out, ss->id) != MCP_OK ||
			    mcp__buf_adds(out, "\",\"") != MCP_OK ||
			    mcp__buf_adds(out, r->rid) != MCP_OK ||
			    mcp__buf_adds(out, "\",") != MCP_OK ||
			    mcp__buf_adds(out, ids) != MCP_OK ||
			    mcp__buf_addc(out, ']') != MCP_OK) {
				free(ids);
				return -1;
			}
			free(ids);
			first = 0;
		}
	}
	return mcp__buf_addc(out, ']') == MCP_OK ? 0 : -1;
}

long
mcp__streamable_maxlen(const void *arg)
{
	return mirror_max(arg);
}

int
mcp__streamable_ttl(const void *arg)
{
	return store_ttl(arg);
}

static const char *
relay_what(int kind)
{
	return kind == RELAY_ANSWER ? "response" : kind == RELAY_CANCEL ?
	    "cancel" : "notifications/initialized";
}

/* session_ops relay: a message for instance TAG (NULL: all). */
static void
st_relay(struct session *s, int kind, const char *tag, const char *json,
    size_t len)
{
	struct ssess	*ss = s->tdata;

	if (ss == NULL || ss->stateless || ss->h->conf->store == NULL)
		return;
	/* Its record says ready before anyone hears it: an instance
	 * that reads it later needs no message, and one that read it
	 * before is still looking it up, or has it (ready, above). */
	if (kind == RELAY_READY)
		store_touch(ss);
	if (mcp__store_relay(ss->h->conf->store, tag, kind, ss->id, json,
	    len) != 0)
		mcp_log(MCP_LOG_WARN, "mcp: session %.8s: a %s for another "
		    "instance lost: Redis unavailable", ss->id,
		    relay_what(kind));
	else
		MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s: a %s relayed to %s",
		    ss->id, relay_what(kind),
		    tag != NULL ? tag : "every instance");
}

/* SS's channel is listened to from now on, until it ends here. */
static void
sub_want(struct ssess *ss)
{
	if (ss->sub != 0)
		return;
	if (mcp__store_sub(ss->h->conf->store, ss->id, 1) == 0)
		ss->sub = 1;
}

/*
 * An entry from Redis (an answer to XRANGE, or a message), untrusted:
 * "K RID SEQ[ JSON]", RID as we make them ("<8 hex>-<digits>"), SEQ
 * digits, JSON one line holding a JSON object. 0 with its parts, or -1.
 */
static int
entry_parse(const char *v, size_t len, char *k, char *rid,
    unsigned long long *seq, const char **json, size_t *jlen)
{
	size_t		 i = 2, j;
	json_t		*o;
	unsigned long long n = 0;

	if (len < 14 || strchr("msge", v[0]) == NULL || v[0] == '\0' ||
	    v[1] != ' ')
		return -1;
	for (j = 0; j < 8; j++, i++)
		if (!((v[i] >= '0' && v[i] <= '9') ||
		    (v[i] >= 'a' && v[i] <= 'f')))
			return -1;
	if (v[i++] != '-')
		return -1;
	for (j = i; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		;
	if (i == j || i - j > 10 || i >= len || v[i] != ' ')
		return -1;
	memcpy(rid, v + 2, i - 2);
	rid[i - 2] = '\0';
	for (i++, j = i; i < len && v[i] >= '0' && v[i] <= '9'; i++)
		n = n * 10 + (unsigned long long)(v[i] - '0');
	if (i == j || i - j > 18)
		return -1;
	*k = v[0];
	*seq = n;
	*json = NULL;
	*jlen = 0;
	if (i == len)
		return v[0] == 'm' || v[0] == 'g' ? -1 : 0;
	if (v[i] != ' ' || (v[0] != 'm' && v[0] != 'g'))
		return -1;
	*json = v + i + 1;
	*jlen = len - i - 1;
	/* One SSE data line, a JSON object: anything else could break the
	 * stream it goes on. */
	if (memchr(*json, '\n', *jlen) != NULL ||
	    memchr(*json, '\r', *jlen) != NULL)
		return -1;
	o = json_loadb(*json, *jlen, 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		return -1;
	}
	json_decref(o);
	return 0;
}

/* An event of another instance's route, onto R here (once, in order). */
static void
remote_apply(struct route *r, char k, unsigned long long seq,
    const char *json, size_t len)
{
	r->done_at = ev_now(r->ss->h->srv->loop);
	if (k == 'e') {
		if (!r->rdone) {
			r->rdone = 1;
			kick(r);
		}
		return;
	}
	if (k != 'm' || seq <= r->seq || r->rdone)
		return;
	r->seq = seq - 1;	/* log_event counts it */
	if (log_event(r, json, len) != MCP_OK)
		return;
	r->nnote++;
	kick(r);
}

/* A message for SS's standalone stream from another instance: logged on
 * it as its own, if it is held here. */
static void
relay_in(struct ssess *ss, const char *json, size_t len)
{
	struct route	*r = ss->get;

	if (r == NULL || r->sc == NULL || log_event(r, json, len) != MCP_OK)
		return;
	r->nnote++;
	kick(r);
}

/* The store's callback: a message on a session's channel, a channel
 * listened to, or the subscriber back (every channel asked again). */
void
mcp__streamable_event(void *arg, int what, const char *sid,
    const char *val, size_t len)
{
	struct http	*h = arg;
	struct ssess	*ss;
	struct replay	*rp;
	struct lookup	*lk;
	struct route	*r;
	char		 k, rid[24];
	unsigned long long seq;
	const char	*json;
	size_t		 jlen, n;
	char		 num[24];

	if (what == SEV_RESUB) {
		mcp__sse_resub(h);
		for (ss = h->ssessions; ss != NULL; ss = ss->next) {
			if (ss->sub == 0)
				continue;
			ss->sub = 0;
			sub_want(ss);
			/* What was published meanwhile is lost: a stream
			 * following another instance's call is ended, so
			 * that its client resumes it from Redis's log. */
			for (r = ss->head; r != NULL; r = r->next)
				if (r->remote && !r->rdone && r->sc != NULL)
					cut(r->sc, MCP_LOG_INFO, "its events "
					    "from Redis may have a gap");
		}
		return;
	}
	if (what == SEV_RELAY && len > 35 && val[0] == RELAY_POST) {
		mcp__sse_relayed(h, sid, val + 35, len - 35);
		return;
	}
	if (what == SEV_RELAY && len > 35 && val[0] == RELAY_TASK) {
		/* A tasks/cancel for a task running here, of any session
		 * (a 2026-07-28 task has none). */
		mcp__taskshare_cancelled(h->srv, val + 35, len - 35);
		return;
	}
	if ((ss = find(h, sid)) == NULL && what == SEV_RELAY && len > 35 &&
	    val[0] == RELAY_READY) {
		/*
		 * Its record, with ready set, was written before this was
		 * published (st_relay): a lookup that read it before may
		 * have missed it. Such a lookup hears it here.
		 */
		for (lk = h->lookups; lk != NULL; lk = lk->next)
			if (strcmp(lk->sid, sid) == 0)
				lk->ready = 1;
		return;
	}
	if (ss == NULL || ss->stateless)
		return;
	if (what == SEV_RELAY) {
		/* "K SID JSON": a response to one of our requests, or a
		 * cancel, that the client gave another instance. */
		if (ss->sess->inst[0] == '\0' || len < 37 ||
		    mcp__protocol_relayed(ss->sess, val[0], val + 35,
		    len - 35) != MCP_OK)
			mcp_log(MCP_LOG_WARN, "mcp: session %.8s: a relayed "
			    "message not of ours (%zu bytes): dropped",
			    ss->id, len);
		return;
	}
	if (what == SEV_SUBSCRIBED) {
		ss->sub = 2;
		for (rp = ss->replays; rp != NULL; rp = rp->next)
			if (!rp->sent)
				replay_ask(rp);
		return;
	}
	if (len > 11 && val[10] == '-' && memcmp(val + 2,
	    mcp__store_tag(h->conf->store), 8) == 0)
		return;			/* our own, heard back */
	if (entry_parse(val, len, &k, rid, &seq, &json, &jlen) != 0) {
		mcp_log(MCP_LOG_WARN, "mcp: session %.8s: a message on its "
		    "Redis channel not of ours (%zu bytes): dropped", ss->id,
		    len);
		return;
	}
	for (rp = ss->replays; rp != NULL; rp = rp->next)
		if (rp->sent && strcmp(rp->rid, rid) == 0) {
			/* Came after the XRANGE was sent, maybe before its
			 * answer, or before its GET takes it: kept. */
			n = (size_t)snprintf(num, sizeof(num), "%zu\n", len);
			(void)mcp__buf_add(&rp->got, num, n);
			(void)mcp__buf_add(&rp->got, val, len);
		}
	/* Only g is relayed: what a standalone stream logged (relayed
	 * too) is for its resumption, not heard live again. */
	if (k == 'g') {
		relay_in(ss, json, jlen);
		return;
	}
	for (r = ss->head; r != NULL; r = r->next)
		if (r->remote && strcmp(r->rid, rid) == 0) {
			remote_apply(r, k, seq, json, jlen);
			break;
		}
}

static void
replay_free(struct replay *rp, int resume)
{
	struct replay	**pp;

	for (pp = &rp->ss->replays; *pp != NULL; pp = &(*pp)->next)
		if (*pp == rp) {
			*pp = rp->next;
			break;
		}
	ev_timer_stop(rp->ss->h->srv->loop, &rp->timer);
	if (resume && !rp->done) {
		MHD_resume_connection(rp->conn);
		mcp__http_wake(rp->ss->h);
	}
	mcp__buf_free(&rp->got);
	free(rp);
}

/* Redis answered RP (or did not in time): its GET goes on. */
static void
replay_done(struct replay *rp, int status)
{
	if (rp->done)
		return;
	rp->done = 1;
	rp->status = status;
	ev_timer_stop(rp->ss->h->srv->loop, &rp->timer);
	MHD_resume_connection(rp->conn);
	mcp__http_wake(rp->ss->h);
}

static void
replay_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct replay	*rp = w->data;

	(void)loop;
	(void)revents;
	mcp_log(MCP_LOG_WARN, "mcp: session %.8s: no event log from Redis "
	    "in %.0f s", rp->ss->id, STORE_WAIT);
	replay_done(rp, ST_ERR);
}

static void
replay_cb(void *arg, int status, size_t n, const char *const *vals,
    const size_t *lens)
{
	struct rask	*a = arg;
	struct ssess	*ss = find(a->h, a->sid);
	struct replay	*rp = NULL;
	struct buf	 b = { 0 };
	char		 num[24];
	size_t		 i, k;

	if (ss != NULL)
		for (rp = ss->replays; rp != NULL; rp = rp->next)
			if (rp->no == a->no)
				break;
	free(a);
	if (rp == NULL || rp->done)
		return;
	/* The log first, then what came live meanwhile. */
	for (i = 0; status == ST_OK && i < n; i++) {
		k = (size_t)snprintf(num, sizeof(num), "%zu\n", lens[i]);
		if (mcp__buf_add(&b, num, k) != MCP_OK ||
		    mcp__buf_add(&b, vals[i], lens[i]) != MCP_OK)
			status = ST_ERR;
	}
	if (status == ST_OK && n == 0)
		status = ST_NONE;
	if (status == ST_OK && mcp__buf_add(&b, rp->got.data + rp->got.off,
	    rp->got.len - rp->got.off) != MCP_OK)
		status = ST_ERR;
	mcp__buf_free(&rp->got);
	rp->got = b;
	replay_done(rp, status);
}

static void
replay_ask(struct replay *rp)
{
	struct rask	*a;
	char		 pre[32];

	rp->sent = 1;
	a = malloc(sizeof(*a));
	if (a == NULL) {
		replay_done(rp, ST_ERR);
		return;
	}
	a->h = rp->ss->h;
	memcpy(a->sid, rp->ss->id, sizeof(a->sid));
	a->no = rp->no;
	snprintf(pre, sizeof(pre), "%s ", rp->rid);
	if (mcp__store_range(rp->ss->h->conf->store, rp->ss->id, pre,
	    replay_cb, a) != 0) {
		free(a);
		replay_done(rp, ST_ERR);
	}
}

/* CONN's GET names RID, not held here: Redis is asked for its log, CONN
 * waits suspended (MHD_YES), or the answer is queued. */
static enum MHD_Result
replay_start(struct ssess *ss, struct MHD_Connection *conn, const char *rid,
    const char *origin)
{
	static unsigned long	 nreplay;
	struct replay		*rp;
	const char		*why;

	if ((why = mcp__store_sub_down(ss->h->conf->store)) != NULL)
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    why, origin);
	rp = calloc(1, sizeof(*rp));
	if (rp == NULL)
		return MHD_NO;
	rp->ss = ss;
	rp->conn = conn;
	rp->no = ++nreplay;
	snprintf(rp->rid, sizeof(rp->rid), "%s", rid);
	ev_timer_init(&rp->timer, replay_timeout, STORE_WAIT, 0.0);
	rp->timer.data = rp;
	ev_timer_start(ss->h->srv->loop, &rp->timer);
	rp->next = ss->replays;
	ss->replays = rp;
	/* Listened to first, so that nothing falls between the log read
	 * and the first message heard. */
	sub_want(ss);
	if (ss->sub == 0) {
		replay_free(rp, 0);
		return mcp__http_reply_rpc(conn, 503, MCP_RPC_SERVER_BUSY,
		    "event log unavailable: cannot listen to Redis", origin);
	}
	MHD_suspend_connection(conn);
	if (ss->sub == 2)
		replay_ask(rp);
	return MHD_YES;
}

/* The answered replay of CONN's GET, unlinked; or NULL. */
static struct replay *
replay_take(struct ssess *ss, struct MHD_Connection *conn)
{
	struct replay	*rp, **pp;

	for (pp = &ss->replays; (rp = *pp) != NULL; pp = &rp->next)
		if (rp->conn == conn && rp->done) {
			*pp = rp->next;
			rp->next = NULL;
			return rp;
		}
	return NULL;
}

/*
 * RP's entries (after SEQ, the client's last) onto a route here: for a
 * standalone stream, this instance's own (the missed events become its
 * own); for a POST's, a route that follows the other instance's live
 * until its "e". Streams it on CONN.
 */
static enum MHD_Result
replay_serve(struct ssess *ss, struct replay *rp, unsigned long long seq,
    struct MHD_Connection *conn, const char *origin)
{
	struct route	*r = NULL;
	const char	*p = rp->got.data + rp->got.off, *end, *json;
	const char	*rid;
	char		 k, erid[24], *e;
	unsigned long long eseq;
	size_t		 jlen, n;
	uint64_t	 from;
	int		 zero, known = 0, bad;
	unsigned long long applied = seq;

	end = p + (rp->got.len - rp->got.off);
	rid = rp->rid;
	n = strlen(rid);
	zero = n > 2 && strcmp(rid + n - 2, "-0") == 0;
	if (zero) {
		if (ss->get != NULL && ss->get->sc != NULL)
			return reply_rpc(conn, 409, "Conflict: only one "
			    "standalone stream per session", origin);
		if (ss->get == NULL && (ss->get = route_new(ss, 0)) == NULL)
			return MHD_NO;
		r = ss->get;
		from = log_end(r);
	} else {
		for (r = ss->head; r != NULL; r = r->next)
			if (r->remote && strcmp(r->rid, rid) == 0)
				break;
		if (r != NULL && r->sc != NULL) {
			cut(r->sc, MCP_LOG_INFO, "resumed by another GET");
			r->sc->r = NULL;
			r->sc = NULL;
		}
		if (r == NULL) {
			if ((r = route_new(ss, ++ss->nroutes)) == NULL)
				return MHD_NO;
			r->remote = 1;
			snprintf(r->rid, sizeof(r->rid), "%s", rid);
			r->done_at = ev_now(ss->h->srv->loop);
		}
		from = (uint64_t)-1;
	}
	while (p < end) {
		n = (size_t)strtoul(p, &e, 10);
		if (e == p || *e != '\n' || (size_t)(end - e - 1) < n)
			break;
		p = e + 1;
		bad = entry_parse(p, n, &k, erid, &eseq, &json, &jlen);
		p += n;
		if (bad)
			mcp_log(MCP_LOG_WARN, "mcp: session %.8s: an event log "
			    "entry not of ours in Redis: dropped", ss->id);
		if (bad || strcmp(erid, rid) != 0)
			continue;
		known = 1;
		if (zero) {
			if (k == 'm' && eseq > applied &&
			    log_event(r, json, jlen) == MCP_OK) {
				r->nnote++;
				applied = eseq;
			}
			continue;
		}
		remote_apply(r, k, eseq, json, jlen);
	}
	if (!known) {
		if (zero && r->sc == NULL && r->nev == 0 && r->log.len == 0) {
			route_free(r);
		} else if (!zero && r->sc == NULL && r->nev == 0)
			route_free(r);
		return reply_rpc(conn, 400, "Bad Request: unknown "
		    "Last-Event-ID", origin);
	}
	if (!zero) {
		size_t	 i;

		/* From the first after the client's own last. */
		from = log_end(r);
		for (i = r->evoff; i < r->nev; i++)
			if (r->ev[i].seq > seq) {
				from = r->ev[i].at;
				break;
			}
	}
	MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s: stream %s resumed from "
	    "Redis's log", ss->id, rid);
	return start_stream(r, conn, from, 0, 0, origin);
}

/* Parses "<rid>-<seq>": RID "<route>", or with --redis (TAGGED)
 * "<8 hex digits>-<route>", into RID (24 bytes). */
static int
parse_event_id(const char *s, int tagged, char *rid, unsigned *no,
    unsigned long long *seq)
{
	const char	*p = s;
	char		*end;
	unsigned long	 n;
	int		 i;

	if (tagged) {
		for (i = 0; i < 8; i++)
			if (!((s[i] >= '0' && s[i] <= '9') ||
			    (s[i] >= 'a' && s[i] <= 'f')))
				return -1;
		if (s[8] != '-')
			return -1;
		p = s + 9;
	}
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	n = strtoul(p, &end, 10);
	if (errno != 0 || end == p || *end != '-' || n > 0xffffffffUL)
		return -1;
	/* The route's number as route_new writes it: a copy of the digits
	 * given would overflow RID (leading zeros) and miss the route. */
	i = tagged ? 9 : 0;
	memcpy(rid, s, (size_t)i);
	rid[i + mcp__fmt_int(rid + i, (long long)n)] = '\0';
	p = end + 1;
	if (*p < '0' || *p > '9')
		return -1;
	*seq = strtoull(p, &end, 10);
	if (errno != 0 || end == p || *end != '\0')
		return -1;
	*no = (unsigned)n;
	return 0;
}

static enum MHD_Result
st_get(struct http *h, struct MHD_Connection *conn, const char *sid,
    const char *origin)
{
	struct ssess	*ss;
	struct route	*r;
	const char	*last;
	unsigned	 no;
	unsigned long long seq;
	uint64_t	 from;
	size_t		 k;
	enum MHD_Result	 rc = MHD_NO;
	char		 rid[24];
	struct replay	*rp;

	if (h->conf->stateless || era_get(conn, sid))
		return not_allowed(conn, origin);
	if (!accepts(MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "Accept"), "text/event-stream"))
		return reply_rpc(conn, 406, "Not Acceptable: Client must "
		    "accept text/event-stream", origin);
	if (h->srv->draining) {
		mcp__http_refused(h, ML_DRAINING);
		return reply_rpc(conn, 503, "server shutting down", origin);
	}
	ss = session_of(h, conn, sid, MHD_lookup_connection_value(conn,
	    MHD_HEADER_KIND, "MCP-Protocol-Version"), origin, &rc);
	if (ss == NULL)
		return rc;
	last = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "Last-Event-ID");
	if (last == NULL) {
		if (ss->get != NULL && ss->get->sc != NULL)
			return reply_rpc(conn, 409, "Conflict: only one "
			    "standalone stream per session", origin);
		if (ss->get == NULL && (ss->get = route_new(ss, 0)) == NULL)
			return MHD_NO;
		return start_stream(ss->get, conn, log_end(ss->get), 1, 0,
		    origin);
	}
	if (strlen(last) > 40 || parse_event_id(last, h->conf->store != NULL,
	    rid, &no, &seq) != 0)
		return reply_rpc(conn, 400, "Bad Request: malformed "
		    "Last-Event-ID", origin);
	if (h->conf->store != NULL && (rp = replay_take(ss, conn)) != NULL) {
		/* Redis answered: its log, then live. */
		int	 status = rp->status;

		if (status == ST_ERR) {
			replay_free(rp, 0);
			return mcp__http_reply_rpc(conn, 503,
			    MCP_RPC_SERVER_BUSY, "event log unavailable: "
			    "Redis failed to answer", origin);
		}
		rc = replay_serve(ss, rp, seq, conn, origin);
		replay_free(rp, 0);
		return rc;
	}
	for (r = ss->head; r != NULL; r = r->next)
		if (strcmp(r->rid, rid) == 0 && !r->remote)
			break;
	if (r == NULL && h->conf->store != NULL)
		return replay_start(ss, conn, rid, origin);
	if (r == NULL || seq > r->seq)
		return reply_rpc(conn, 400, "Bad Request: unknown "
		    "Last-Event-ID", origin);
	if (r->waiting != NULL)
		return reply_rpc(conn, 409, "Conflict: that stream is "
		    "connected", origin);
	/*
	 * A client only resumes a stream it lost, though the server may
	 * not have seen the connection go yet: the new one takes over.
	 */
	if (r->sc != NULL) {
		cut(r->sc, MCP_LOG_INFO, "resumed by another GET");
		r->sc->r = NULL;
		r->sc = NULL;
	}
	from = log_end(r);
	for (k = r->evoff; k < r->nev; k++)
		if (r->ev[k].seq > seq) {
			from = r->ev[k].at;
			break;
		}
	if (k == r->evoff && k < r->nev && r->ev[k].seq > seq + 1)
		mcp_log(MCP_LOG_NOTICE, "mcp: session %.8s: events %s-%llu to "
		    "%s-%llu are no longer kept (--event-log)", ss->id, rid,
		    seq + 1, rid, (unsigned long long)r->ev[k].seq - 1);
	return start_stream(r, conn, from, 0, 0, origin);
}

static enum MHD_Result
st_delete(struct http *h, struct MHD_Connection *conn,
    const char *sid, const char *origin)
{
	struct ssess	*ss;
	enum MHD_Result	 rc = MHD_NO;

	if (h->conf->stateless || era_get(conn, sid))
		return not_allowed(conn, origin);
	ss = session_of(h, conn, sid, MHD_lookup_connection_value(conn,
	    MHD_HEADER_KIND, "MCP-Protocol-Version"), origin, &rc);
	if (ss == NULL)
		return rc;
	MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s deleted by the client",
	    ss->id);
	ss->sess->why = MR_DELETED;
	ssess_end(ss);
	return mcp__http_reply(conn, 200, NULL, "", 0, origin);
}

/* ---- the server's life ------------------------------------------------- */

/* Once a second: sessions idle past --session-timeout end. */
static void
st_sweep(struct http *h, double now)
{
	struct ssess	*ss, *next;
	struct route	*r, *rnext;

	if (h->lookups != NULL)
		lookups_clear(h, now, 0);
	for (ss = h->ssessions; ss != NULL; ss = next) {
		next = ss->next;
		if (ss->stateless)
			continue;	/* lives as long as its POST */
		if (h->conf->store != NULL && now - ss->stored_at >=
		    h->conf->session_timeout / 2.0) {
			/* Streams or calls open and no request: still
			 * alive, for the other instances too. */
			for (r = ss->head; r != NULL; r = r->next)
				if (r->holds > 0 || r->sc != NULL ||
				    r->waiting != NULL)
					break;
			if (r != NULL)
				store_touch(ss);
		}
		if (ss->ending_at > 0) {
			if (!ending_done(ss, now))
				continue;
			MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s ended by "
			    "the server", ss->id);
			ss->sess->why = MR_DELETED;
			ssess_end(ss);
			continue;
		}
		for (r = ss->head; r != NULL; r = rnext) {
			rnext = r->next;
			if (unclaimed(r) && now - r->done_at > DONE_KEEP)
				route_free(r);
		}
		if (now - ss->seen <= h->conf->session_timeout)
			continue;
		for (r = ss->head; r != NULL; r = r->next)
			if (r->holds > 0 || r->sc != NULL ||
			    r->waiting != NULL)
				break;
		/* A task running here is read through the other instances
		 * (its record): ended here, it would stay working there. */
		if (r != NULL || (ss->sess->shared &&
		    mcp__tasks_running_in(ss->sess))) {
			ss->seen = now;
			continue;
		}
		MCP_LOG(MCP_LOG_INFO, "mcp: session %.8s idle for %d s "
		    "(--session-timeout), ending it", ss->id,
		    h->conf->session_timeout);
		ss->sess->why = MR_EXPIRED;
		ssess_end(ss);
	}
}

/*
 * mcp_peer_close: the session's id is forgotten at once (404), and the
 * session ends at a sweep once its answers have been read, or after
 * ENDING_KEEP seconds whatever its readers do.
 */
#define ENDING_KEEP	5.0

static void
st_end(struct session *s)
{
	struct ssess	*ss = s->tdata;
	struct ssess	**pp;

	if (ss == NULL || ss->stateless || ss->ending_at > 0 || !ss->linked)
		return;
	for (pp = &ss->h->sbuckets[ss->hash % SSE_BUCKETS]; *pp != NULL;
	    pp = &(*pp)->hnext)
		if (*pp == ss) {
			*pp = ss->hnext;
			break;
		}
	ss->hnext = NULL;
	ss->ending_at = ev_now(ss->h->srv->loop);
}

static int
ending_done(struct ssess *ss, double now)
{
	struct route	*r;

	if (now - ss->ending_at > ENDING_KEEP)
		return 1;
	for (r = ss->head; r != NULL; r = r->next)
		if (r->holds > 0 || r->waiting != NULL || (r->sc != NULL &&
		    !r->sc->cut && log_end(r) > r->sc->pos))
			return 0;
	return 1;
}

/* Is any answer still owed, or any byte still queued? */
static int
st_busy(struct http *h)
{
	struct ssess	*ss;
	struct sconn	*sc;
	struct route	*r;

	for (ss = h->ssessions; ss != NULL; ss = ss->next)
		for (r = ss->head; r != NULL; r = r->next)
			if (r->holds > 0 || r->waiting != NULL)
				return 1;
	for (sc = h->sconns; sc != NULL; sc = sc->next)
		if (!sc->cut && (sc->extra.len > sc->extra.off ||
		    (sc->r != NULL && log_end(sc->r) > sc->pos)))
			return 1;
	return 0;
}

static void
st_end_all(struct http *h)
{
	struct sconn	*sc;

	for (sc = h->sconns; sc != NULL; sc = sc->next) {
		sc->ending = 1;
		sc_resume(sc);
	}
}

static void
st_abort_all(struct http *h)
{
	struct ssess	*ss;

	for (ss = h->ssessions; ss != NULL; ss = ss->next)
		mcp__protocol_abort(ss->sess);
}

/* The server stops: every session ends. */
static void
st_free_all(struct http *h)
{
	lookups_clear(h, 0, 1);
	while (h->ssessions != NULL) {
		h->ssessions->sess->why = MR_SHUTDOWN;
		ssess_end(h->ssessions);
	}
}

static int
st_streams(struct http *h)
{
	return h->nsconns;
}

/* What http.c routes to, for /mcp. */
const struct http_transport mcp__streamable_transport = {
	.get = st_get,
	.del = st_delete,
	.post = st_post,
	.resumed = st_resumed,
	.req_done = st_req_done,
	.sweep = st_sweep,
	.busy = st_busy,
	.end_all = st_end_all,
	.streams = st_streams,
	.abort_all = st_abort_all,
	.free_all = st_free_all,
};
