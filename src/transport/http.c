/*
 * http.c: the libmicrohttpd daemon shared by the HTTP transports, run
 * inside the libev loop: no MHD thread. MHD works in external epoll mode
 * with suspend/resume; one ev_io watches its epoll fd and one ev_timer
 * follows MHD_get_timeout. This file routes requests, applies what every
 * endpoint shares (Host and Origin checks, bearer auth, CORS, body limits,
 * the request deadline against slow clients), and hands /sse and
 * /messages to the legacy SSE transport, /mcp to Streamable HTTP,
 * through the tables (struct http_transport) it is started with: it
 * never calls them by name. Loop thread only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "transport/http.h"

/*
 * Where a connection is, and the deadline it is held to (sweep_cb).
 */
enum conn_state {
	CONN_NEW,	/* its first request not read yet: --request-timeout */
	CONN_READING,	/* a later request being read: --request-timeout */
	CONN_SERVING,	/* its request read and being served (a call, a
			 * stream): no deadline until it ends */
	CONN_SENDING,	/* a whole body going out: --idle-timeout stalled */
	CONN_IDLE	/* kept alive between requests: --idle-timeout */
};

/* Connections from one client address, for --max-per-ip. */
struct peer {
	struct peer	*next;
	uint32_t	 bucket;
	socklen_t	 len;
	unsigned char	 addr[16];
	int		 n;
};

/* Per connection, from MHD's connection notifications. */
struct conn_info {
	struct conn_info	*next;
	struct conn_info	*prev;
	struct http		*h;
	struct peer		*peer;
	int			 fd;
	enum conn_state		 state;
	int			 linger;	/* answered before its body was
						 * read: close it lingering */
	double			 since;		/* the state's clock start;
						 * SENDING: the last progress */
	/* Its request now, for the access log and the metrics. */
	int			 begun;
	int			 route;		/* HTTP_R_* */
	int			 status;	/* answered with; 0: not yet */
	char			 method[8];
	double			 t0;
	long long		 in;		/* body bytes */
	long long		 out;
	char			 rid[MCP_RID_MAX];
	char			 sid[40];	/* a session it opened */
};

/*
 * A connection answered before its request body was read (a body far
 * over --max-message) is closed the way nginx's lingering_close does:
 * a plain close with unread bytes would make the kernel send a reset,
 * and the client would read that instead of the 413. The socket is kept
 * open on a dup of its fd after MHD closes its own: the write side is
 * shut down (the client sees the end of the answer), what the client
 * still sends is read and thrown away, and the socket is closed once it
 * stops, or after LINGER_S at most.
 */
struct lingering {
	struct lingering	*next;
	struct lingering	*prev;
	struct http	*h;
	ev_io		 io;
	ev_timer	 timer;
};

#define LINGER_S	5	/* s a lingering close reads for */
#define MAX_LINGER	256	/* sockets lingering at once */
#define DISCARD_MAX	(64u * 1024 * 1024)	/* body bytes read past the
						 * limit to answer 413 */
#define TOO_LARGE	"message exceeds --max-message"

enum {
	ROUTE_MESSAGES = 1,
	ROUTE_MCP
};

static int	 reply_rpc_id(struct MHD_Connection *, int, const json_t *,
		    int, const char *, const char *);
static struct conn_info *conn_info(struct MHD_Connection *);

#ifndef MEM_LIMIT
#define MEM_LIMIT	(8 * 1024)	/* per connection, headers included */
#endif

static void
update_timer(struct http *h)
{
	MHD_UNSIGNED_LONG_LONG	 ms;

	if (MHD_get_timeout(h->d, &ms) != MHD_YES) {
		ev_timer_stop(h->srv->loop, &h->timer);
	} else if (ms == 0) {
		/* At once: before the loop polls again (mcp__http_flush). */
		ev_timer_stop(h->srv->loop, &h->timer);
		h->need_run = 1;
	} else {
		ev_timer_stop(h->srv->loop, &h->timer);
		ev_timer_set(&h->timer, ms / 1000.0, 0.0);
		ev_timer_start(h->srv->loop, &h->timer);
	}
}

static void
run(struct http *h)
{
	h->need_run = 0;
	/* The calls of every request this run reads go over in one go. */
	mcp__pool_plug(&h->srv->pool);
	MHD_run(h->d);
	mcp__pool_unplug(&h->srv->pool);
	update_timer(h);
}

static void
io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	run(w->data);
}

static void
timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	run(w->data);
}

/* A stream was resumed: have MHD run before the loop blocks. */
void
mcp__http_wake(struct http *h)
{
	h->need_run = 1;
}

void
mcp__http_flush(struct http *h)
{
	int	 i;

	if (h == NULL)
		return;
	/* Running MHD may drain a stream, and ending streams needs a run;
	 * MHD may want to run again at once, a few times at most here. */
	for (i = 0; i < 8 && (h->need_run || h->recheck); i++) {
		if (h->need_run)
			run(h);
		if (h->recheck) {
			h->recheck = 0;
			mcp__server_check_drained(h->srv);
		}
	}
	/* Still more: let the loop come back without blocking. */
	if (h->need_run) {
		ev_timer_stop(h->srv->loop, &h->timer);
		ev_timer_set(&h->timer, 0.0, 0.0);
		ev_timer_start(h->srv->loop, &h->timer);
	}
}

/*
 * Once a second: a new connection that has not sent a whole request
 * within --request-timeout (slowloris), or a kept-alive one quiet for
 * --idle-timeout since its last request, is shut down; MHD then closes
 * it on its next look. A connection whose request is being served -- a
 * POST waiting for a call of minutes, a stream, a large answer on its
 * way to a slow reader -- is not slow: it is exempt until that request
 * completes. Streams have their own bounds (keepalives, --idle-timeout
 * on stalled writes); a whole body whose writes stall for
 * --idle-timeout is cut here.
 */
static void
sweep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct http		*h = w->data;
	struct conn_info	*ci;
	double			 now = ev_now(loop), limit;
	int			 i, n = 0;

	(void)revents;
	for (ci = h->conns; ci != NULL; ci = ci->next) {
		if (ci->state == CONN_SERVING || ci->since == 0)
			continue;	/* exempt, or shut down already */
		limit = ci->state == CONN_NEW || ci->state == CONN_READING ?
		    h->conf->request_timeout : h->conf->idle_timeout;
		if (now - ci->since > limit) {
			shutdown(ci->fd, SHUT_RDWR);
			ci->since = 0;
			n++;
		}
	}
	if (n > 0) {
		h->srv->metrics.slow += (uint64_t)n;
		MCP_LOG(MCP_LOG_INFO, "http: closed %d slow connection%s", n,
		    n == 1 ? "" : "s");
		h->need_run = 1;
	}
	for (i = 0; i < HT_N; i++)
		if (h->tr[i] != NULL && h->tr[i]->sweep != NULL)
			h->tr[i]->sweep(h, now);
}

static void
linger_end(struct lingering *l)
{
	struct http	*h = l->h;

	ev_io_stop(h->srv->loop, &l->io);
	ev_timer_stop(h->srv->loop, &l->timer);
	close(l->io.fd);
	if (l->prev != NULL)
		l->prev->next = l->next;
	else
		h->lingers = l->next;
	if (l->next != NULL)
		l->next->prev = l->prev;
	h->nlingers--;
	free(l);
}

static void
linger_read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct lingering	*l = w->data;
	char		 buf[16384];
	ssize_t		 n;

	(void)loop;
	(void)revents;
	n = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return;
	linger_end(l);		/* the client is done, or gone */
}

static void
linger_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	linger_end(w->data);
}

/* MHD is about to close FD, answered with its body unread: linger. */
static void
linger_start(struct http *h, int fd)
{
	struct lingering	*l;
	int		 dfd;

	if (fd < 0 || h->nlingers >= MAX_LINGER)
		return;
	l = calloc(1, sizeof(*l));
	dfd = l != NULL ? dup(fd) : -1;
	if (dfd < 0) {
		free(l);
		return;
	}
	shutdown(dfd, SHUT_WR);
	l->h = h;
	ev_io_init(&l->io, linger_read_cb, dfd, EV_READ);
	ev_timer_init(&l->timer, linger_timer_cb, LINGER_S, 0.0);
	l->io.data = l->timer.data = l;
	ev_io_start(h->srv->loop, &l->io);
	ev_timer_start(h->srv->loop, &l->timer);
	l->next = h->lingers;
	if (h->lingers != NULL)
		h->lingers->prev = l;
	h->lingers = l;
	h->nlingers++;
}

/* ---- connection limits -------------------------------------------------- */

/* The address part of SA (no port): its bytes and length. */
static socklen_t
addr_key(const struct sockaddr *sa, const unsigned char **key)
{
	if (sa->sa_family == AF_INET) {
		*key = (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
		return 4;
	}
	if (sa->sa_family == AF_INET6) {
		*key = (const void *)
		    &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return 16;
	}
	return 0;
}

static struct peer *
peer_get(struct http *h, const struct sockaddr *sa, int make)
{
	const unsigned char	*key;
	struct peer		*p;
	socklen_t		 len = addr_key(sa, &key);
	uint32_t		 hash = 2166136261u;
	socklen_t		 i;

	if (len == 0)
		return NULL;
	for (i = 0; i < len; i++)
		hash = (hash ^ key[i]) * 16777619u;
	for (p = h->peers[hash % PEER_BUCKETS]; p != NULL; p = p->next)
		if (p->len == len && memcmp(p->addr, key, len) == 0)
			return p;
	if (!make || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->len = len;
	p->bucket = hash % PEER_BUCKETS;
	memcpy(p->addr, key, len);
	p->next = h->peers[hash % PEER_BUCKETS];
	h->peers[hash % PEER_BUCKETS] = p;
	return p;
}

static void
peer_drop(struct http *h, struct peer *p)
{
	struct peer	**pp;

	for (pp = &h->peers[p->bucket]; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			free(p);
			return;
		}
}

/*
 * MHD's accept policy: the connection limits are applied here rather
 * than by MHD, which refuses over both limits with one message, so the
 * metrics can say which limit refused a connection.
 */
static enum MHD_Result
accept_cb(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct http	*h = cls;
	struct peer	*p;

	(void)addrlen;
	if (h->nconns >= h->max_conns) {
		h->srv->metrics.refused[ML_TOTAL]++;
		MCP_LOG(MCP_LOG_INFO, "http: %d connections open, refusing "
		    "another", h->nconns);
		return MHD_NO;
	}
	/* The metrics listener has its own small total instead. */
	p = h->metrics_only ? NULL : peer_get(h, addr, 0);
	if (p != NULL && p->n >= h->conf->max_per_ip) {
		h->srv->metrics.refused[ML_PER_IP]++;
		MCP_LOG(MCP_LOG_INFO, "http: %d connections from one address "
		    "(--max-per-ip), refusing another", p->n);
		return MHD_NO;
	}
	return MHD_YES;
}

static void
set_sid(struct conn_info *ci, const char *id)
{
	size_t	 n;

	if (ci == NULL || id == NULL)
		return;
	n = strnlen(id, sizeof(ci->sid) - 1);
	memcpy(ci->sid, id, n);
	ci->sid[n] = '\0';
}

/* The request on CONN opened session ID: its access line names it. */
void
mcp__http_set_session(struct MHD_Connection *conn, const char *id)
{
	set_sid(conn_info(conn), id);
}

/* A request refused by LIMIT (ML_*), for the metrics. */
void
mcp__http_refused(struct http *h, int limit)
{
	h->srv->metrics.refused[limit]++;
}

static void
notify_conn(void *cls, struct MHD_Connection *conn, void **socket_ctx,
    enum MHD_ConnectionNotificationCode toe)
{
	struct http		*h = cls;
	struct conn_info	*ci;
	const union MHD_ConnectionInfo *info;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = calloc(1, sizeof(*ci));
		if (ci == NULL)
			return;
		info = MHD_get_connection_info(conn,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		ci->fd = info != NULL ? info->connect_fd : -1;
		ci->h = h;
		ci->since = ev_now(h->srv->loop);
		info = MHD_get_connection_info(conn,
		    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (info != NULL && info->client_addr != NULL)
			ci->peer = peer_get(h, info->client_addr, 1);
		if (ci->peer != NULL)
			ci->peer->n++;
		h->nconns++;
		ci->next = h->conns;
		if (h->conns != NULL)
			h->conns->prev = ci;
		h->conns = ci;
		*socket_ctx = ci;
		return;
	}
	ci = *socket_ctx;
	if (ci == NULL)
		return;
	h->nconns--;
	if (ci->peer != NULL && --ci->peer->n == 0)
		peer_drop(h, ci->peer);
	if (ci->linger)
		linger_start(h, ci->fd);
	if (ci->prev != NULL)
		ci->prev->next = ci->next;
	else
		h->conns = ci->next;
	if (ci->next != NULL)
		ci->next->prev = ci->prev;
	free(ci);
	*socket_ctx = NULL;
}

static struct conn_info *
conn_info(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info;

	info = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return info != NULL ? info->socket_context : NULL;
}

/*
 * CONN's request has been read and is being served: a POST waiting for
 * its answer, or a stream. Long-lived by design: no request deadline
 * until the request completes.
 */
void
mcp__http_serving(struct MHD_Connection *conn)
{
	struct conn_info	*ci = conn_info(conn);

	if (ci != NULL)
		ci->state = CONN_SERVING;
}

/*
 * --access-log: a line per HTTP request when it ends (a stream: when it
 * closes), with its request id. A request that got no answer (its
 * client left first) is logged as 499, as nginx does.
 */
static void
access_line(struct conn_info *ci, struct req *r)
{
	struct log_fields	 lf = { 0 };
	struct log_ctx		 saved = mcp__lctx;

	mcp__lctx.rid = ci->rid;
	mcp__lctx.sid = ci->sid[0] != '\0' ? ci->sid : r != NULL &&
	    r->sid[0] != '\0' ? r->sid : NULL;
	lf.method = ci->method;
	lf.route = mcp__metrics_route_name(ci->route);
	lf.status = ci->status != 0 ? ci->status : 499;
	lf.duration_ms = (ev_time() - ci->t0) * 1000;
	lf.bytes_in = ci->in;
	lf.bytes_out = ci->out;
	mcp__log_fields(MCP_LOG_NOTICE | MCP_LOG_FORCE, &lf, "%s %s %d",
	    ci->method, lf.route, lf.status);
	mcp__lctx = saved;
}

static void
completed(void *cls, struct MHD_Connection *conn, void **req_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http		*h = cls;
	struct req		*r = *req_cls;
	struct conn_info	*ci = conn_info(conn);

	(void)toe;
	if (ci != NULL && ci->begun) {
		ci->begun = 0;
		/* Its client left before any answer: nginx's 499. */
		if (ci->status == 0 && h->srv->metrics.on)
			mcp__metrics_http(&h->srv->metrics, ci->route, 499);
		if (h->conf->access_log)
			access_line(ci, r);
	}
	/* The next request on this connection starts its own clock, and
	 * is held to the deadlines again. */
	if (ci != NULL) {
		ci->since = ev_now(h->srv->loop);
		ci->state = CONN_IDLE;
	}
	/* Draining: this may have been the last answer owed. */
	if (h->srv->draining)
		h->recheck = 1;
	if (r == NULL)
		return;
	h->nreqs--;
	if (r->tr->req_done != NULL)
		r->tr->req_done(r);
	mcp__identity_unref(r->ident);
	free(r->origin);
	mcp__buf_free(&r->body);
	free(r);
	*req_cls = NULL;
}

/* ---- a suspended connection's client leaving --------------------------- */

/*
 * MHD does not look at a suspended connection, so a client that closed
 * it would be noticed only at the next failed write (a keepalive, up to
 * two intervals later), while its session takes calls and its slot
 * counts against --max-per-ip. So while suspended, its socket is
 * watched: readable with recv(MSG_PEEK) giving 0 (or an error) is the
 * client gone, at once. Bytes to read (a pipelined request) are MHD's
 * to read; the watch then stops.
 */
static void
peer_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct peer_watch	*w = io->data;
	char			 c;
	ssize_t			 n;

	(void)revents;
	n = recv(io->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	ev_io_stop(loop, io);
	if (n > 0)
		return;
	w->gone(w);
}

/* Suspended for HTTP_WATCH_DELAY: the socket is watched from now on. */
static void
watch_delay_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct peer_watch	*w = t->data;

	(void)revents;
	ev_io_start(loop, &w->io);
}

void
mcp__http_watch(struct http *h, struct peer_watch *w,
    struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info;

	if (w->loop != NULL && (ev_is_active(&w->io) ||
	    ev_is_active(&w->delay)))
		return;
	info = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	if (info == NULL)
		return;
	w->loop = h->srv->loop;
	ev_io_init(&w->io, peer_cb, info->connect_fd, EV_READ);
	w->io.data = w;
	ev_timer_init(&w->delay, watch_delay_cb, HTTP_WATCH_DELAY, 0.0);
	w->delay.data = w;
	ev_timer_start(w->loop, &w->delay);
}

void
mcp__http_unwatch(struct peer_watch *w)
{
	if (w->loop != NULL) {
		ev_timer_stop(w->loop, &w->delay);
		ev_io_stop(w->loop, &w->io);
	}
}

/* ---- responses ---------------------------------------------------------- */

/*
 * An event stream read by READER (CLS, freed by FREE_FN): a callback
 * response of unknown size, in 4 KiB blocks (MHD keeps one per stream,
 * idle or not), with the SSE headers. NULL on failure.
 */
struct counted {
	MHD_ContentReaderCallback	 reader;
	MHD_ContentReaderFreeCallback	 free_fn;
	void				*cls;
	struct conn_info		*ci;	/* outlives the response */
};

/* A stream's bytes, counted for the access log and the metrics. */
static ssize_t
counted_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct counted	*c = cls;
	ssize_t		 n;

	n = c->reader(c->cls, pos, buf, max);
	if (n > 0 && c->ci != NULL) {
		c->ci->out += n;
		c->ci->h->srv->metrics.body_out += (uint64_t)n;
	}
	return n;
}

static void
counted_free(void *cls)
{
	struct counted	*c = cls;

	c->free_fn(c->cls);
	free(c);
}

/* A body of unknown size read by READER, its bytes counted. */
struct MHD_Response *
mcp__http_stream(struct MHD_Connection *conn,
    MHD_ContentReaderCallback reader, void *cls,
    MHD_ContentReaderFreeCallback free_fn)
{
	struct MHD_Response	*resp;
	struct counted		*c;

	if ((c = malloc(sizeof(*c))) == NULL)
		return NULL;
	c->reader = reader;
	c->free_fn = free_fn;
	c->cls = cls;
	c->ci = conn_info(conn);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
	    counted_read, c, counted_free);
	if (resp == NULL)
		free(c);
	return resp;
}

struct MHD_Response *
mcp__http_event_stream(struct MHD_Connection *conn,
    MHD_ContentReaderCallback reader, void *cls,
    MHD_ContentReaderFreeCallback free_fn)
{
	struct MHD_Response	*resp;

	resp = mcp__http_stream(conn, reader, cls, free_fn);
	if (resp == NULL)
		return NULL;
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control",
	    "no-cache, no-transform");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	return resp;
}

/*
 * A whole body of known size. A large one is sent through a reader, so
 * that each block handed to MHD counts as the server's output moving
 * (mcp__server_progress: a drain waits for a client that reads); a
 * small one goes from the buffer. B's bytes are taken (B is emptied).
 */
struct body {
	struct http		*h;
	struct conn_info	*ci;	/* outlives the response (MHD) */
	struct buf		 b;
};

#define BODY_BLOCK	(64 * 1024)

static ssize_t
body_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct body	*bd = cls;
	size_t		 n, len = bd->b.len - bd->b.off;

	if (pos >= len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = len - (size_t)pos < max ? len - (size_t)pos : max;
	memcpy(buf, bd->b.data + bd->b.off + pos, n);
	mcp__server_progress(bd->h->srv);
	if (bd->ci != NULL)
		bd->ci->since = ev_now(bd->h->srv->loop);
	return (ssize_t)n;
}

static void
body_free(void *cls)
{
	struct body	*bd = cls;

	mcp__buf_free(&bd->b);
	free(bd);
}

struct MHD_Response *
mcp__http_body(struct http *h, struct MHD_Connection *conn, struct buf *b)
{
	struct MHD_Response	*resp;
	struct conn_info	*ci = conn_info(conn);
	struct body		*bd;
	size_t			 len = b->len - b->off;

	/* Its writes are watched for a stall (sweep_cb). */
	if (ci != NULL) {
		ci->state = CONN_SENDING;
		ci->since = ev_now(h->srv->loop);
		ci->out += (long long)len;
	}
	h->srv->metrics.body_out += len;
	if (len <= BODY_BLOCK && b->off == 0 && len > 0) {
		/* MHD frees the buffer it is given. */
		resp = MHD_create_response_from_buffer(len, b->data,
		    MHD_RESPMEM_MUST_FREE);
		if (resp != NULL)
			memset(b, 0, sizeof(*b));
		mcp__buf_free(b);
		return resp;
	}
	if (len <= BODY_BLOCK) {
		resp = MHD_create_response_from_buffer(len, len > 0 ?
		    b->data + b->off : NULL, MHD_RESPMEM_MUST_COPY);
		mcp__buf_free(b);
		return resp;
	}
	bd = calloc(1, sizeof(*bd));
	if (bd == NULL) {
		mcp__buf_free(b);
		return NULL;
	}
	bd->h = h;
	bd->ci = ci;
	bd->b = *b;
	memset(b, 0, sizeof(*b));
	resp = MHD_create_response_from_callback(len, BODY_BLOCK, body_read,
	    bd, body_free);
	if (resp == NULL)
		body_free(bd);
	return resp;
}

/* Shuts CONN's socket down: MHD then closes it on its next look. */
void
mcp__http_shutdown(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info;

	info = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	if (info != NULL)
		shutdown(info->connect_fd, SHUT_RDWR);
}

/* A session id: 128 bits from the CSPRNG as 32 hex digits, in OUT[33]
 * (random.c's, as task ids are). */
int
mcp__http_new_id(char *out)
{
	return mcp__random_id(out);
}

int
mcp__http_is_id(const char *sid)
{
	size_t	 i;

	for (i = 0; i < 32; i++)
		if (!((sid[i] >= '0' && sid[i] <= '9') ||
		    (sid[i] >= 'a' && sid[i] <= 'f')))
			return 0;
	return sid[32] == '\0';
}

/*
 * The security advice binds a session to its user: the session's id is
 * no credential, the token is, so a request whose token names another
 * subject than the one that opened the session is refused, valid token
 * or not. A new token of the same subject (refreshed, or with more
 * scopes after a 403) replaces the old one for the calls to come.
 */
int
mcp__http_identify(struct http *h, struct MHD_Connection *conn,
    struct session *s, const char *origin, enum MHD_Result *rc)
{
	if (!mcp__identity_same(h->ident, s->ident)) {
		MCP_LOG(MCP_LOG_INFO, "http: 403: session %.8s belongs to "
		    "another identity", s->id);
		*rc = mcp__http_reply_rpc(conn, 403, MCP_RPC_INVALID_REQUEST,
		    "Forbidden: the session belongs to another identity",
		    origin);
		return 0;
	}
	if (h->ident != s->ident)
		mcp__session_identify(s, h->ident);
	return 1;
}

/* CORS for an allowed ORIGIN: a browser client may read the answer and
 * the headers it needs (the session, the version, a 401's challenge). */
void
mcp__http_cors(void *resp, const char *origin)
{
	if (origin == NULL)
		return;
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
	MHD_add_response_header(resp, "Access-Control-Expose-Headers",
	    "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate");
	MHD_add_response_header(resp, "Vary", "Origin");
}

/*
 * Every response goes out through here: it carries the request's id
 * (X-Request-Id), and its status is kept for the access log and
 * counted. LEN is its body's size when not counted already.
 */
enum MHD_Result
mcp__http_queue(struct MHD_Connection *conn, unsigned int status,
    struct MHD_Response *resp, size_t len)
{
	struct conn_info	*ci = conn_info(conn);
	struct metrics		*m;
	enum MHD_Result		 rc;

	if (ci == NULL)
		return MHD_queue_response(conn, status, resp);
	if (ci->rid[0] != '\0')
		MHD_add_response_header(resp, "X-Request-Id", ci->rid);
	if (ci->route == HTTP_R_MCP && ci->sid[0] == '\0')
		set_sid(ci, MHD_get_response_header(resp, "Mcp-Session-Id"));
	rc = MHD_queue_response(conn, status, resp);
	if (rc != MHD_YES)
		return rc;
	ci->status = (int)status;
	ci->out += (long long)len;
	m = &ci->h->srv->metrics;
	if (m->on) {
		m->body_out += len;
		mcp__metrics_http(m, ci->route, (int)status);
		if (status == 413)
			m->refused[ML_TOO_LARGE]++;
	}
	return rc;
}

int
mcp__http_reply(struct MHD_Connection *conn, int status, const char *ctype,
    const char *body, size_t len, const char *origin)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 rc;

	resp = MHD_create_response_from_buffer(len, (void *)body,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return MHD_NO;
	if (ctype != NULL)
		MHD_add_response_header(resp, "Content-Type", ctype);
	mcp__http_cors(resp, origin);
	rc = mcp__http_queue(conn, (unsigned)status, resp, len);
	MHD_destroy_response(resp);
	return rc;
}

/* A JSON-RPC error (id omitted) as the body of an HTTP error. */
int
mcp__http_reply_rpc(struct MHD_Connection *conn, int status, int code,
    const char *msg, const char *origin)
{
	return reply_rpc_id(conn, status, NULL, code, msg, origin);
}

/* The same, to the request ID when it is known. */
static int
reply_rpc_id(struct MHD_Connection *conn, int status, const json_t *id,
    int code, const char *msg, const char *origin)
{
	struct buf	 b = { 0 };
	int		 rc;

	mcp__rpc_error(&b, id, code, msg, NULL);
	rc = mcp__http_reply(conn, status, "application/json", b.data,
	    b.len, origin);
	mcp__buf_free(&b);
	return rc;
}

static int
reply_text_cors(struct MHD_Connection *conn, int status, const char *text,
    const char *header, const char *value, const char *origin)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 rc;

	resp = MHD_create_response_from_buffer(strlen(text), (void *)text,
	    MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", "text/plain");
	if (header != NULL)
		MHD_add_response_header(resp, header, value);
	mcp__http_cors(resp, origin);
	rc = mcp__http_queue(conn, (unsigned)status, resp, strlen(text));
	MHD_destroy_response(resp);
	return rc;
}

static int
reply_text(struct MHD_Connection *conn, int status, const char *text,
    const char *header, const char *value)
{
	return reply_text_cors(conn, status, text, header, value, NULL);
}

/* ---- checks -------------------------------------------------------------- */

/*
 * The request headers the checks and the routes read, found in one pass
 * over them (each MHD_lookup_connection_value walks them all again):
 * the first of each name, as a lookup finds it; NULL when absent.
 */
struct hdrs {
	const char	*host;
	const char	*origin;
	const char	*rid;		/* X-Request-Id */
	const char	*sid;		/* Mcp-Session-Id */
	const char	*ctype;
	const char	*clen;
	const char	*accept;
	const char	*version;	/* MCP-Protocol-Version */
};

static enum MHD_Result
hdr_cb(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct hdrs	*hv = cls;
	const char	**slot = NULL;

	(void)kind;
	switch (strlen(key)) {
	case 4:
		if (strcasecmp(key, "Host") == 0)
			slot = &hv->host;
		break;
	case 6:
		if (strcasecmp(key, "Origin") == 0)
			slot = &hv->origin;
		else if (strcasecmp(key, "Accept") == 0)
			slot = &hv->accept;
		break;
	case 12:
		if (strcasecmp(key, "X-Request-Id") == 0)
			slot = &hv->rid;
		else if (strcasecmp(key, "Content-Type") == 0)
			slot = &hv->ctype;
		break;
	case 14:
		if (strcasecmp(key, "Mcp-Session-Id") == 0)
			slot = &hv->sid;
		else if (strcasecmp(key, "Content-Length") == 0)
			slot = &hv->clen;
		break;
	case 20:
		if (strcasecmp(key, "MCP-Protocol-Version") == 0)
			slot = &hv->version;
		break;
	}
	if (slot != NULL && *slot == NULL)
		*slot = value;
	return MHD_YES;
}

static void
read_headers(struct MHD_Connection *conn, struct hdrs *hv)
{
	memset(hv, 0, sizeof(*hv));
	MHD_get_connection_values(conn, MHD_HEADER_KIND, hdr_cb, hv);
}

static int
loopback_name(const char *host, size_t n)
{
	return (n == 9 && strncasecmp(host, "localhost", 9) == 0) ||
	    (n == 9 && strncmp(host, "127.0.0.1", 9) == 0) ||
	    (n == 5 && strncmp(host, "[::1]", 5) == 0) ||
	    (n == 3 && strncmp(host, "::1", 3) == 0);
}

/* The host part of "host[:port]" or "[v6]:port": its length. */
static size_t
host_len(const char *hp)
{
	const char	*c;

	if (hp[0] == '[') {
		c = strchr(hp, ']');
		return c != NULL ? (size_t)(c - hp) + 1 : strlen(hp);
	}
	c = strchr(hp, ':');
	return c != NULL ? (size_t)(c - hp) : strlen(hp);
}

static int
listed(char **list, int n, const char *s, size_t len)
{
	int	 i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], "*") == 0 ||
		    (strlen(list[i]) == len &&
		    strncasecmp(list[i], s, len) == 0))
			return 1;
	return 0;
}

/*
 * DNS rebinding: a loopback server answers only to loopback Host names
 * (and those allowed); an Origin, when sent, must be a loopback origin or
 * an allowed one. Returns NULL when fine, or the reason.
 */
static const char *
check_host_origin(struct http *h, const struct hdrs *hv,
    const char **originp)
{
	const char	*host = hv->host, *origin, *p;

	*originp = NULL;
	if (h->loopback) {
		if (host == NULL)
			return "missing Host header";
		if (!loopback_name(host, host_len(host)) &&
		    !listed(h->conf->allow_hosts, h->conf->nallow_hosts, host,
		    strlen(host)) &&
		    !listed(h->conf->allow_hosts, h->conf->nallow_hosts, host,
		    host_len(host)))
			return "Host not allowed";
	}
	origin = hv->origin;
	if (origin == NULL)
		return NULL;
	if (listed(h->conf->allow_origins, h->conf->nallow_origins, origin,
	    strlen(origin))) {
		*originp = origin;
		return NULL;
	}
	p = strstr(origin, "://");
	if (p != NULL && (strncmp(origin, "http://", 7) == 0 ||
	    strncmp(origin, "https://", 8) == 0) &&
	    loopback_name(p + 3, host_len(p + 3))) {
		*originp = origin;
		return NULL;
	}
	return "Origin not allowed";
}

/*
 * One request's bearer token being checked by the user's hook
 * (mcp_server_set_auth(3)): what the hook sets, on the loop's stack.
 */
struct mcp_auth {
	struct MHD_Connection	*conn;
	char			*subject;
	json_t			*claims;
	char			*error;		/* error_description */
	char			*scope;		/* what a 403 names */
	int			 nomem;
};

/* What authenticate found. */
enum {
	AUTH_PASS,		/* go on (*IDP may be NULL) */
	AUTH_MISSING,		/* no bearer token: 401, a plain challenge */
	AUTH_INVALID,		/* 401 invalid_token */
	AUTH_FORBIDDEN,		/* 403 insufficient_scope */
	AUTH_NOMEM		/* 500 */
};

/* The token of "Authorization: Bearer <token>", or NULL. */
static const char *
bearer(struct MHD_Connection *conn)
{
	const char	*a;

	a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    "Authorization");
	if (a == NULL || strncasecmp(a, "Bearer ", 7) != 0)
		return NULL;
	a += 7;
	while (*a == ' ')
		a++;
	return a;
}

/* Constant-time comparison of the bearer token with --auth-token. */
static int
static_token(const char *want, const char *a)
{
	size_t		 n, m, i;
	unsigned char	 diff;

	n = strlen(a);
	m = strlen(want);
	diff = n != m;
	for (i = 0; i < m; i++)
		diff |= (unsigned char)(want[i] ^ (i < n ? a[i] : 0));
	return diff == 0;
}

/*
 * Who sent the request. Without authentication every request passes;
 * with --auth-token the token must match; with a hook, the hook decides,
 * and what it says becomes the identity (*IDP, a new reference, or NULL
 * for none). A is the hook's context, kept for the challenge.
 */
static int
authenticate(struct http *h, struct MHD_Connection *conn, struct mcp_auth *a,
    struct identity **idp)
{
	const char	*tok;
	int		 rc;

	*idp = NULL;
	memset(a, 0, sizeof(*a));
	a->conn = conn;
	if (h->conf->auth_fn == NULL && h->conf->auth_token == NULL)
		return AUTH_PASS;
	tok = bearer(conn);
	if (tok == NULL)
		return AUTH_MISSING;
	if (h->conf->auth_fn == NULL)
		return static_token(h->conf->auth_token, tok) ? AUTH_PASS :
		    AUTH_INVALID;
	if (*tok == '\0')
		return AUTH_INVALID;
	rc = h->conf->auth_fn(a, tok, h->conf->auth_udata);
	if (rc == MCP_AUTH_OK && a->nomem)
		return AUTH_NOMEM;
	if (rc == MCP_AUTH_OK) {
		if (a->subject == NULL && a->claims == NULL)
			return AUTH_PASS;	/* valid, and anonymous */
		*idp = mcp__identity_new(a->subject, a->claims);
		a->subject = NULL;
		a->claims = NULL;
		return *idp != NULL ? AUTH_PASS : AUTH_NOMEM;
	}
	if (rc == MCP_AUTH_FORBIDDEN)
		return AUTH_FORBIDDEN;
	if (rc != MCP_AUTH_INVALID)
		mcp_log(MCP_LOG_ERR, "http: the authentication hook answered "
		    "%d, taken as MCP_AUTH_INVALID", rc);
	return AUTH_INVALID;
}

static void
auth_clear(struct mcp_auth *a)
{
	free(a->subject);
	json_decref(a->claims);
	free(a->error);
	free(a->scope);
	memset(a, 0, sizeof(*a));
}

/* S copied into a challenge's quoted string: RFC 6750 allows %x20-21,
 * %x23-5B and %x5D-7E there; anything else becomes '?'. */
static int
quoted(const char *s, char **out)
{
	char	*p;
	size_t	 i, n;

	n = strlen(s);
	if (n > 512)
		n = 512;
	p = malloc(n + 1);
	if (p == NULL)
		return MCP_ENOMEM;
	for (i = 0; i < n; i++)
		p[i] = s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' ||
		    s[i] == '\\' ? '?' : s[i];
	p[n] = '\0';
	free(*out);
	*out = p;
	return MCP_OK;
}

int
mcp_auth_set_subject(mcp_auth *auth, const char *subject)
{
	char	*p;

	if (auth == NULL || subject == NULL)
		return MCP_EINVAL;
	p = strdup(subject);
	if (p == NULL) {
		auth->nomem = 1;
		return MCP_ENOMEM;
	}
	free(auth->subject);
	auth->subject = p;
	return MCP_OK;
}

int
mcp_auth_set_claims_new(mcp_auth *auth, json_t *claims)
{
	if (auth == NULL) {
		json_decref(claims);
		return MCP_EINVAL;
	}
	if (claims == NULL) {
		auth->nomem = 1;
		return MCP_ENOMEM;
	}
	json_decref(auth->claims);
	auth->claims = claims;
	return MCP_OK;
}

int
mcp_auth_set_error(mcp_auth *auth, const char *description)
{
	if (auth == NULL || description == NULL)
		return MCP_EINVAL;
	return quoted(description, &auth->error);
}

int
mcp_auth_set_scope(mcp_auth *auth, const char *scope)
{
	if (auth == NULL || scope == NULL)
		return MCP_EINVAL;
	return quoted(scope, &auth->scope);
}

const char *
mcp_auth_header(mcp_auth *auth, const char *name)
{
	if (auth == NULL || name == NULL)
		return NULL;
	return MHD_lookup_connection_value(auth->conn, MHD_HEADER_KIND,
	    name);
}

/* Is the client waiting for 100 Continue? It sends nothing more until
 * it has an answer, so an answer can go at once. */
static int
expects_continue(struct MHD_Connection *conn)
{
	const char	*v;

	v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Expect");
	return v != NULL && strcasecmp(v, "100-continue") == 0;
}

/* "application/json", parameters allowed. */
static int
is_json_type(const char *ct)
{
	size_t	 n = strlen("application/json");

	return ct != NULL && strncasecmp(ct, "application/json", n) == 0 &&
	    (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* The path after the base path, or NULL when outside it. */
static const char *
route(struct http *h, const char *url)
{
	size_t	 n = strlen(h->conf->base_path);

	if (strncmp(url, h->conf->base_path, n) != 0)
		return NULL;
	return url + n;
}

static int
preflight(struct MHD_Connection *conn, const char *origin)
{
	struct MHD_Response	*resp;
	enum MHD_Result		 rc;

	resp = MHD_create_response_from_buffer(0, NULL,
	    MHD_RESPMEM_PERSISTENT);
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
	MHD_add_response_header(resp, "Access-Control-Allow-Methods",
	    "GET, POST, DELETE, OPTIONS");
	MHD_add_response_header(resp, "Access-Control-Allow-Headers",
	    "Content-Type, Authorization, Mcp-Session-Id, "
	    "MCP-Protocol-Version, Last-Event-ID");
	MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
	MHD_add_response_header(resp, "Vary", "Origin");
	rc = mcp__http_queue(conn, MHD_HTTP_NO_CONTENT, resp, 0);
	MHD_destroy_response(resp);
	return rc;
}

/* ---- OAuth protected-resource metadata (RFC 9728) ---------------------- */

#define WELL_KNOWN	"/.well-known/oauth-protected-resource"

/* The root form, or the path-inserted form for {base}/mcp. */
static int
is_metadata(struct http *h, const char *url)
{
	size_t	 n = strlen(WELL_KNOWN);

	if (strncmp(url, WELL_KNOWN, n) != 0)
		return 0;
	url += n;
	if (*url == '\0')
		return 1;
	n = strlen(h->conf->base_path);
	return strncmp(url, h->conf->base_path, n) == 0 &&
	    strcmp(url + n, "/mcp") == 0;
}

/* This server's /mcp URL: --resource-url, else from the Host header. */
static void
resource_url(struct http *h, struct MHD_Connection *conn, char *out,
    size_t len)
{
	const char	*host;

	if (h->conf->resource_url != NULL) {
		snprintf(out, len, "%s", h->conf->resource_url);
		return;
	}
	host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	/* Reflected into a header: only what a host name can hold. */
	if (host != NULL && (host[0] == '\0' || strspn(host, "abcdefghijklmn"
	    "opqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") !=
	    strlen(host)))
		host = NULL;
	snprintf(out, len, "http://%s%s/mcp", host != NULL ? host :
	    "localhost", h->conf->base_path);
}

/* The metadata's URL: the path-inserted form of the resource URL. */
static void
metadata_url(struct http *h, struct MHD_Connection *conn, char *out,
    size_t len)
{
	char		 res[512];
	const char	*p, *path;

	resource_url(h, conn, res, sizeof(res));
	p = strstr(res, "://");
	path = p != NULL ? strchr(p + 3, '/') : NULL;
	if (path == NULL)
		snprintf(out, len, "%s%s", res, WELL_KNOWN);
	else
		snprintf(out, len, "%.*s%s%s", (int)(path - res), res,
		    WELL_KNOWN, path);
}

/* SCOPES ("a b") as a JSON array, or NULL for none. */
static json_t *
scope_list(const char *scopes)
{
	json_t		*a;
	const char	*p = scopes, *e;

	if (scopes == NULL)
		return NULL;
	a = json_array();
	while (a != NULL && *p != '\0') {
		e = strchr(p, ' ');
		if (e == NULL)
			e = p + strlen(p);
		json_array_append_new(a, json_stringn(p, (size_t)(e - p)));
		p = *e == ' ' ? e + 1 : e;
	}
	return a;
}

/*
 * RFC 9728: the metadata names the resource whose identifier its URL was
 * built from: for the path-inserted form that is {base}/mcp, for the
 * root form the origin alone (§3.3).
 */
static enum MHD_Result
metadata(struct http *h, struct MHD_Connection *conn, const char *url,
    const char *method, const char *origin)
{
	json_t		*doc, *scopes;
	struct buf	 b = { 0 };
	char		 res[512], *p;
	enum MHD_Result	 rc;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_text(conn, 405, "method not allowed\n", "Allow",
		    "GET, HEAD");
	resource_url(h, conn, res, sizeof(res));
	if (strcmp(url, WELL_KNOWN) == 0 && (p = strstr(res, "://")) != NULL &&
	    (p = strchr(p + 3, '/')) != NULL)
		*p = '\0';	/* the root form: the origin */
	doc = json_pack("{s:s, s:[s], s:[s]}", "resource", res,
	    "authorization_servers", h->conf->auth_server,
	    "bearer_methods_supported", "header");
	scopes = scope_list(h->conf->auth_scopes);
	if (doc != NULL && scopes != NULL)
		json_object_set_new(doc, "scopes_supported", scopes);
	else
		json_decref(scopes);
	if (doc == NULL || mcp__buf_addjson(&b, doc) != MCP_OK) {
		json_decref(doc);
		return MHD_NO;
	}
	json_decref(doc);
	rc = mcp__http_reply(conn, 200, "application/json", b.data, b.len,
	    origin);
	mcp__buf_free(&b);
	return rc;
}

/*
 * 401 or 403, with a challenge (RFC 6750 §3): the error (invalid_token
 * for a wrong token, insufficient_scope for a token that may not do
 * this, none when there was no token), the hook's description, the
 * scope the request needs (the hook's, else --auth-scopes), and the
 * metadata when an authorization server is set (RFC 9728 §5.1); with
 * CORS headers, so that a browser client can read the challenge.
 */
static enum MHD_Result
unauthorized(struct http *h, struct MHD_Connection *conn, int why,
    const struct mcp_auth *a, const char *origin)
{
	const char	*scope = a->scope != NULL ? a->scope :
			    h->conf->auth_scopes;
	char		 meta[600], value[2400];
	size_t		 n;

	if (why == AUTH_NOMEM)
		return reply_text_cors(conn, 500, "out of memory\n", NULL,
		    NULL, origin);
	n = (size_t)snprintf(value, sizeof(value), "Bearer");
	if (why != AUTH_MISSING && n < sizeof(value))
		n += (size_t)snprintf(value + n, sizeof(value) - n,
		    " error=\"%s\",", why == AUTH_FORBIDDEN ?
		    "insufficient_scope" : "invalid_token");
	if (a->error != NULL && why != AUTH_MISSING && n < sizeof(value))
		n += (size_t)snprintf(value + n, sizeof(value) - n,
		    " error_description=\"%s\",", a->error);
	if (scope != NULL && n < sizeof(value))
		n += (size_t)snprintf(value + n, sizeof(value) - n,
		    " scope=\"%.600s\",", scope);
	if (h->conf->auth_server != NULL && n < sizeof(value)) {
		metadata_url(h, conn, meta, sizeof(meta));
		n += (size_t)snprintf(value + n, sizeof(value) - n,
		    " resource_metadata=\"%s\",", meta);
	}
	if (n < sizeof(value) && value[n - 1] == ',')
		value[n - 1] = '\0';
	if (why == AUTH_FORBIDDEN)
		return reply_text_cors(conn, 403, "insufficient scope\n",
		    "WWW-Authenticate", value, origin);
	return reply_text_cors(conn, 401, "unauthorized\n",
	    "WWW-Authenticate", value, origin);
}

/* V's low N hex digits into OUT. */
static void
hex(char *out, uint64_t v, int n)
{
	static const char	 digits[] = "0123456789abcdef";

	while (n-- > 0) {
		out[n] = digits[v & 15];
		v >>= 4;
	}
}

/*
 * The request's id: X-Request-Id when a proxy sent a usable one (nginx's
 * $request_id, a UUID), else made here: this process's random prefix and
 * a count, unique without a system call per request.
 */
static void
request_id(const struct hdrs *hv, char *out)
{
	static char	 prefix[9];
	static uint64_t	 seq;
	const char	*v = hv->rid;
	unsigned char	 raw[4];
	size_t		 n;

	if (v != NULL && (n = strlen(v)) > 0 && n < MCP_RID_MAX &&
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_.:") == n) {
		memcpy(out, v, n + 1);
		return;
	}
	if (prefix[0] == '\0') {
		if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
			memcpy(raw, &(uint32_t){ (uint32_t)getpid() }, 4);
		snprintf(prefix, sizeof(prefix), "%02x%02x%02x%02x", raw[0],
		    raw[1], raw[2], raw[3]);
	}
	/* 8 + 12 hex digits, by hand: this runs for every request. */
	memcpy(out, prefix, 8);
	hex(out + 8, ++seq, 12);
	out[20] = '\0';
}

/* A request begins on CI: its id, clock and counts. */
static void
request_begin(struct conn_info *ci, const struct hdrs *hv, const char *method)
{
	size_t	 i;

	ci->begun = 1;
	ci->sid[0] = '\0';
	ci->route = HTTP_R_OTHER;
	ci->status = 0;
	ci->in = ci->out = 0;
	ci->t0 = ev_time();
	/* A method is a token; anything else is shown as '?'. */
	for (i = 0; method[i] != '\0' && i < sizeof(ci->method) - 1; i++)
		ci->method[i] = (method[i] >= 'A' && method[i] <= 'Z') ?
		    method[i] : '?';
	ci->method[i] = '\0';
	request_id(hv, ci->rid);
	mcp__lctx.rid = ci->rid;
}

/* GET /metrics: the Prometheus text format. */
static enum MHD_Result
metrics(struct http *h, struct MHD_Connection *conn, const char *method)
{
	struct MHD_Response	*resp;
	struct buf		 b = { 0 };
	enum MHD_Result		 rc;
	size_t			 len;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_text(conn, 405, "method not allowed\n", "Allow",
		    "GET, HEAD");
	if (mcp__metrics_render(h->srv, &b) != MCP_OK) {
		mcp__buf_free(&b);
		return MHD_NO;
	}
	len = b.len;
	resp = MHD_create_response_from_buffer(b.len, b.data,
	    MHD_RESPMEM_MUST_FREE);
	if (resp == NULL) {
		mcp__buf_free(&b);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type",
	    "text/plain; version=0.0.4; charset=utf-8");
	rc = mcp__http_queue(conn, 200, resp, len);
	MHD_destroy_response(resp);
	return rc;
}

/*
 * The route a request is counted and logged under, known from its URL
 * before any check, so that a 401 or 403 is counted where it was asked.
 */
static int
route_of(struct http *h, const char *url, const char *path)
{
	if (strcmp(url, "/healthz") == 0 || (path != NULL &&
	    strcmp(path, "/healthz") == 0))
		return HTTP_R_HEALTHZ;
	if ((path != NULL && strcmp(path, "/metrics") == 0) ||
	    (h->metrics_only && strcmp(url, "/metrics") == 0))
		return HTTP_R_METRICS;
	if (strncmp(url, WELL_KNOWN, strlen(WELL_KNOWN)) == 0)
		return HTTP_R_METADATA;
	if (path == NULL || h->metrics_only)
		return HTTP_R_OTHER;
	if (strcmp(path, "/mcp") == 0)
		return HTTP_R_MCP;
	if (strcmp(path, "/sse") == 0)
		return HTTP_R_SSE;
	if (strcmp(path, "/messages") == 0)
		return HTTP_R_MESSAGES;
	return HTTP_R_OTHER;
}

/*
 * After the checks, the routes that are answered at once: GET /sse, GET
 * and DELETE /mcp, and every refusal by method, path or Content-Type.
 * -1 when the request is a POST whose body is to be read (*KIND its
 * route, *SID its Mcp-Session-Id); else MHD's answer.
 */
static int
route_request(struct http *h, struct MHD_Connection *conn,
    struct conn_info *ci, const struct hdrs *hv, const char *method,
    const char *path, const char *origin, const char **sid, int *kind)
{
	if (path != NULL && strcmp(path, "/sse") == 0) {
		if (strcmp(method, "GET") != 0)
			return reply_text(conn, 405, "method not allowed\n",
			    "Allow", "GET");
		return h->tr[HT_SSE]->get(h, conn, NULL, origin);
	}
	*kind = ROUTE_MESSAGES;
	if (path != NULL && strcmp(path, "/mcp") == 0) {
		*kind = ROUTE_MCP;
		*sid = hv->sid;
		set_sid(ci, *sid);
		if (strcmp(method, "GET") == 0)
			return h->tr[HT_MCP]->get(h, conn, *sid, origin);
		if (strcmp(method, "DELETE") == 0)
			return h->tr[HT_MCP]->del(h, conn, *sid, origin);
		if (strcmp(method, "POST") != 0)
			return reply_text(conn, 405, "method not allowed\n",
			    "Allow", "GET, POST, DELETE");
	} else if (path == NULL || strcmp(path, "/messages") != 0)
		return reply_text(conn, 404, "not found\n", NULL, NULL);
	else if (strcmp(method, "POST") != 0)
		return reply_text(conn, 405, "method not allowed\n", "Allow",
		    "POST");
	if (!is_json_type(hv->ctype))
		return mcp__http_reply_rpc(conn, 415, MCP_RPC_INVALID_REQUEST,
		    "Content-Type must be application/json", origin);
	return -1;
}

/* The first call for a request: headers are in. */
static enum MHD_Result
begin(struct http *h, struct MHD_Connection *conn, const char *url,
    const char *method, void **req_cls)
{
	const char	*path, *origin, *why, *v, *sid = NULL;
	struct conn_info *ci;
	struct req	*r;
	struct hdrs	 hv;
	struct mcp_auth	 auth;
	struct identity	*id;
	char		*end;
	unsigned long long len;
	size_t		 n;
	int		 kind, too_large, rc;

	/* A request has begun: it gets --request-timeout to arrive whole. */
	ci = conn_info(conn);
	if (ci != NULL && ci->state == CONN_IDLE) {
		ci->state = CONN_READING;
		ci->since = ev_now(h->srv->loop);
	}
	path = route(h, url);
	read_headers(conn, &hv);
	if (ci != NULL) {
		request_begin(ci, &hv, method);
		ci->route = route_of(h, url, path);
	}
	if (strcmp(url, "/healthz") == 0 || (path != NULL &&
	    strcmp(path, "/healthz") == 0)) {
		if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
			return reply_text(conn, 405, "method not allowed\n",
			    "Allow", "GET, HEAD");
		return reply_text(conn, 200, "ok\n", NULL, NULL);
	}
	if (h->metrics_only || (h->conf->metrics && path != NULL &&
	    strcmp(path, "/metrics") == 0)) {
		why = check_host_origin(h, &hv, &origin);
		if (why != NULL)
			return reply_text(conn, 403, "forbidden\n", NULL, NULL);
		if (!h->metrics_only) {
			rc = authenticate(h, conn, &auth, &id);
			mcp__identity_unref(id);
			if (rc != AUTH_PASS) {
				rc = unauthorized(h, conn, rc, &auth, NULL);
				auth_clear(&auth);
				return rc;
			}
			auth_clear(&auth);
		}
		if (strcmp(url, "/metrics") != 0 && (path == NULL ||
		    strcmp(path, "/metrics") != 0))
			return reply_text(conn, 404, "not found\n", NULL,
			    NULL);
		return metrics(h, conn, method);
	}
	why = check_host_origin(h, &hv, &origin);
	if (why != NULL) {
		MCP_LOG(MCP_LOG_INFO, "http: 403 %s %s: %s", method, url, why);
		return mcp__http_reply_rpc(conn, 403, MCP_RPC_SERVER_BUSY, why,
		    NULL);
	}
	if (strcmp(method, "OPTIONS") == 0) {
		if (origin == NULL)
			return reply_text(conn, 403, "origin not allowed\n",
			    NULL, NULL);
		return preflight(conn, origin);
	}
	if (h->conf->auth_server != NULL && is_metadata(h, url))
		return metadata(h, conn, url, method, origin);
	rc = authenticate(h, conn, &auth, &id);
	if (rc != AUTH_PASS) {
		MCP_LOG(MCP_LOG_INFO, "http: %d %s %s: %s%s%s", rc ==
		    AUTH_FORBIDDEN ? 403 : rc == AUTH_NOMEM ? 500 : 401, method,
		    url, rc == AUTH_MISSING ? "no bearer token" : rc ==
		    AUTH_FORBIDDEN ? "token not allowed" : rc == AUTH_NOMEM ?
		    "out of memory" : "invalid token", auth.error != NULL ?
		    ": " : "", auth.error != NULL ? auth.error : "");
		rc = unauthorized(h, conn, rc, &auth, origin);
		auth_clear(&auth);
		return rc;
	}
	auth_clear(&auth);
	kind = ROUTE_MESSAGES;
	/* A GET or DELETE is served now: the transport finds ID there. */
	h->ident = id;
	rc = route_request(h, conn, ci, &hv, method, path, origin, &sid,
	    &kind);
	h->ident = NULL;
	if (rc != -1) {
		mcp__identity_unref(id);
		return rc;
	}
	/*
	 * A body over --max-message is read and thrown away, and answered
	 * 413 when it ends: a client still sending would read a reset, not
	 * an early answer. One far over it, or one a client holds back
	 * until 100 Continue, is answered at once, and the connection
	 * closed lingering (linger_start).
	 */
	too_large = 0;
	v = hv.clen;
	if (v != NULL) {
		errno = 0;
		len = strtoull(v, &end, 10);
		too_large = errno == 0 && *end == '\0' &&
		    len > h->srv->max_message;
	}
	if (too_large && (len - h->srv->max_message > DISCARD_MAX ||
	    expects_continue(conn))) {
		/* Lingering: it may send the body all the same. */
		if (ci != NULL)
			ci->linger = 1;
		mcp__identity_unref(id);
		return mcp__http_reply_rpc(conn, 413, MCP_RPC_INVALID_REQUEST,
		    TOO_LARGE, origin);
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		mcp__identity_unref(id);
		return MHD_NO;
	}
	h->nreqs++;
	r->ident = id;		/* the POST's, until it is done */
	r->kind = kind;
	r->accept = hv.accept;
	r->version = hv.version;
	r->tr = h->tr[kind == ROUTE_MCP ? HT_MCP : HT_SSE];
	if (too_large) {
		r->too_large = 1;
		mcp__idscan_init(&r->scan);
	}
	v = sid;
	if (kind == ROUTE_MESSAGES) {
		v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
		    "sessionId");
		if (v == NULL)
			v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
			    "Mcp-Session-Id");
	}
	if (v != NULL) {
		/* Cut to fit, as snprintf would; without printf: every POST. */
		n = strnlen(v, sizeof(r->sid) - 1);
		memcpy(r->sid, v, n);
		r->sid[n] = '\0';
	}
	if (ci != NULL && ci->sid[0] == '\0')
		set_sid(ci, v);
	r->origin = origin != NULL ? strdup(origin) : NULL;
	*req_cls = r;
	return MHD_YES;
}

/* 413 for a body over --max-message, to its request's id if it had one. */
static enum MHD_Result
too_large(struct MHD_Connection *conn, struct req *r)
{
	json_t	*id;
	int	 rc;

	id = mcp__idscan_id(&r->scan);
	rc = reply_rpc_id(conn, 413, id, MCP_RPC_INVALID_REQUEST, TOO_LARGE,
	    r->origin);
	json_decref(id);
	return rc;
}

static enum MHD_Result
handle(struct http *h, struct MHD_Connection *conn, const char *url,
    const char *method, const char *upload_data, size_t *upload_data_size,
    void **req_cls)
{
	struct req	*r = *req_cls;
	struct conn_info *ci;
	enum MHD_Result	 rc;

	if (r == NULL)
		return begin(h, conn, url, method, req_cls);
	if (*upload_data_size > 0) {
		if ((ci = conn_info(conn)) != NULL)
			ci->in += (long long)*upload_data_size;
		h->srv->metrics.body_in += *upload_data_size;
		/*
		 * Past the limit, the rest is read and thrown away (an
		 * endless body meets --request-timeout), scanned for the
		 * request's id, and answered 413 when it ends.
		 */
		if (!r->too_large && r->body.len + *upload_data_size >
		    h->srv->max_message) {
			r->too_large = 1;
			mcp__idscan_init(&r->scan);
			mcp__idscan_feed(&r->scan, r->body.data, r->body.len);
			mcp__buf_free(&r->body);
		}
		if (r->too_large)
			mcp__idscan_feed(&r->scan, upload_data,
			    *upload_data_size);
		else if (mcp__buf_add(&r->body, upload_data,
		    *upload_data_size) != MCP_OK)
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* The request is read: from here on it is being served, not slow
	 * (sweep_cb), however long its answer takes to make or to send. */
	mcp__http_serving(conn);
	/* A suspended POST is back: its answer (or stream) is ready. */
	if (r->posted)
		return r->tr->resumed(h, conn, r);
	if (r->too_large)
		return too_large(conn, r);
	if (r->kind == ROUTE_MCP)
		r->posted = 1;
	else if (r->sid[0] == '\0')
		return mcp__http_reply_rpc(conn, 400, MCP_RPC_INVALID_REQUEST,
		    "missing sessionId", r->origin);
	/* The calls its body makes carry its identity. */
	h->ident = r->ident;
	rc = r->tr->post(h, conn, r);
	h->ident = NULL;
	return rc;
}

/* MHD's handler: the request's id is on every line logged meanwhile. */
static enum MHD_Result
access_cb(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *upload_data,
    size_t *upload_data_size, void **req_cls)
{
	struct conn_info *ci = conn_info(conn);
	enum MHD_Result	 rc;

	(void)version;
	mcp__lctx.rid = ci != NULL && *req_cls != NULL ? ci->rid : NULL;
	rc = handle(cls, conn, url, method, upload_data, upload_data_size,
	    req_cls);
	mcp__lctx.rid = NULL;
	return rc;
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char	 msg[512];
	size_t	 n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	MCP_LOG(MCP_LOG_INFO, "http: %s", msg);
}

/* Parses "a.b.c.d:port" or "[v6]:port" into SS. */
static int
parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in	*in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*in6 = (struct sockaddr_in6 *)ss;
	char			 host[64], *end;
	const char		*colon;
	unsigned long		 port;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		colon = strstr(s, "]:");
		if (colon == NULL || (size_t)(colon - s - 1) >= sizeof(host))
			return -1;
		memcpy(host, s + 1, (size_t)(colon - s - 1));
		host[colon - s - 1] = '\0';
		colon++;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
			return -1;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || colon[1] == '\0' || port > 65535)
		return -1;
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	return -1;
}

static int
is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in	*in4 = (const void *)ss;
	const struct sockaddr_in6	*in6 = (const void *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

/* More sessions need more descriptors than the usual soft limit. */
static void
raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* "http://a.b.c.d:port" or "http://[v6]:port" for the log. */
static void
show_addr(const struct sockaddr_storage *ss, unsigned int port, char *out,
    size_t len)
{
	char	 a[INET6_ADDRSTRLEN];

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
		    a, sizeof(a));
		snprintf(out, len, "http://[%s]:%u", a, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
		    a, sizeof(a));
		snprintf(out, len, "http://%s:%u", a, port);
	}
}

/*
 * A daemon on ADDR ("ADDR:PORT", or "systemd": the socket a systemd
 * socket unit passed, sd_listen_fds(3)'s way), routing to the transports
 * TR; TR NULL: the --metrics-listen daemon, which serves /metrics and
 * /healthz alone.
 */
static struct http *
http_new(struct mcp_server *srv, struct http_conf *conf, const char *addr,
    const struct http_transport *const tr[HT_N])
{
	struct http			*h;
	struct sockaddr_storage		 ss;
	const union MHD_DaemonInfo	*info;
	socklen_t			 sslen = sizeof(ss);
	unsigned int			 flags;
	int				 fd = -1, i, metrics_only = tr == NULL;

	if (strncmp(addr, "systemd", 7) == 0 && (addr[7] == '\0' ||
	    addr[7] == ':')) {
		fd = mcp__sd_listen_fd(addr[7] == ':' ? addr + 8 :
		    metrics_only ? "metrics" : NULL, metrics_only ?
		    "--metrics-listen" : "--http");
		if (fd < 0)
			return NULL;
		if (getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0 ||
		    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
			mcp_log(MCP_LOG_ERR, "http: the socket systemd passed "
			    "(fd %d) is not a TCP socket", fd);
			return NULL;
		}
	} else if (parse_addr(addr, &ss, &sslen) != 0) {
		mcp_log(MCP_LOG_ERR, "http: bad address \"%s\" (want "
		    "ADDR:PORT, [ADDR]:PORT or systemd)", addr);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->srv = srv;
	h->conf = conf;
	for (i = 0; tr != NULL && i < HT_N; i++)
		h->tr[i] = tr[i];
	h->metrics_only = metrics_only;
	h->loopback = is_loopback(&ss);
	h->max_conns = metrics_only ? 64 : conf->max_sessions + 1024;
	raise_nofile();
	flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG |
	    MHD_USE_TURBO;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The connection limits are accept_cb's; MHD's is a backstop. */
	h->d = MHD_start_daemon(flags, 0, accept_cb, h, access_cb, h,
	    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
	    fd >= 0 ? MHD_OPTION_LISTEN_SOCKET : MHD_OPTION_SOCK_ADDR,
	    fd >= 0 ? (void *)(intptr_t)fd : (void *)&ss,
	    MHD_OPTION_NOTIFY_COMPLETED, completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, notify_conn, h,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)0,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(h->max_conns + 16),
	    MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)1024,
	    /*
	     * Each connection's buffers come from this pool: 32 KiB by
	     * default, which an idle SSE stream would hold for nothing.
	     */
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEM_LIMIT,
	    MHD_OPTION_CONNECTION_MEMORY_INCREMENT, (size_t)1024,
	    MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1,
	    MHD_OPTION_END);
	if (h->d == NULL) {
		mcp_log(MCP_LOG_ERR, "http: cannot listen on %s: %s", addr,
		    strerror(errno));
		free(h);
		return NULL;
	}
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = info != NULL ? info->port : 0;
	info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	ev_io_init(&h->io, io_cb, info->epoll_fd, EV_READ);
	ev_timer_init(&h->timer, timer_cb, 0.0, 0.0);
	ev_timer_init(&h->sweep, sweep_cb, 1.0, 1.0);
	h->io.data = h->timer.data = h->sweep.data = h;
	ev_io_start(srv->loop, &h->io);
	ev_timer_start(srv->loop, &h->sweep);
	update_timer(h);
	show_addr(&ss, h->port, h->shown, sizeof(h->shown));
	return h;
}

int
mcp__http_start(struct mcp_server *srv, struct http_conf *conf,
    const struct http_transport *const tr[HT_N], struct http **http,
    struct http **mhttp)
{
	struct http	*h;
	const char	*bp = conf->base_path;

	if (conf->metrics_listen != NULL) {
		*mhttp = http_new(srv, conf, conf->metrics_listen, NULL);
		if (*mhttp == NULL)
			return MCP_ESYS;
		mcp_log(MCP_LOG_NOTICE, "metrics on %s/metrics",
		    (*mhttp)->shown);
	}
	if (conf->addr == NULL)
		return MCP_OK;
	if (conf->auth_fn != NULL && conf->auth_token != NULL)
		mcp_log(MCP_LOG_WARN, "http: an authentication hook is set: "
		    "it alone checks tokens, --auth-token is not used");
	if ((h = http_new(srv, conf, conf->addr, tr)) == NULL)
		return MCP_ESYS;
	*http = h;
	mcp_log(MCP_LOG_NOTICE, "listening on %s%s/sse and %s%s/mcp",
	    h->shown, bp, h->shown, bp);
	if (conf->metrics)
		mcp_log(MCP_LOG_NOTICE, "metrics on %s%s/metrics", h->shown,
		    bp);
	return MCP_OK;
}

/* Draining: no new connections; streams stay until they are done. */
void
mcp__http_quiesce(struct http *h)
{
	int	 fd;

	if (h == NULL || h->quiesced)
		return;
	h->quiesced = 1;
	fd = MHD_quiesce_daemon(h->d);
	if (fd >= 0)
		close(fd);
}

void
mcp__http_abort(struct http *h)
{
	int	 i;

	if (h == NULL)
		return;
	for (i = 0; i < HT_N; i++)
		if (h->tr[i] != NULL && h->tr[i]->abort_all != NULL)
			h->tr[i]->abort_all(h);
}

/*
 * Drained when no session is owed an answer and every queued byte went
 * out; then the streams are ended, and the loop may stop once MHD has
 * finished them all.
 */
int
mcp__http_drained(struct http *h)
{
	const struct http_transport *t;
	int		 i, open = 0;

	if (h == NULL)
		return 1;
	/* Once ended, streams take nothing new: no need to look again, and
	 * looking on every stream's exit would be quadratic. */
	if (!h->ended) {
		for (i = 0; i < HT_N; i++)
			if ((t = h->tr[i]) != NULL && t->busy != NULL &&
			    t->busy(h))
				return 0;
		for (i = 0; i < HT_N; i++)
			if ((t = h->tr[i]) != NULL && t->end_all != NULL)
				t->end_all(h);
		h->ended = 1;
	}
	for (i = 0; i < HT_N; i++)
		if ((t = h->tr[i]) != NULL && t->streams != NULL)
			open += t->streams(h);
	return open == 0 && h->nreqs == 0;
}

void
mcp__http_free(struct http *h)
{
	struct peer	*p;
	size_t		 i;

	if (h == NULL)
		return;
	for (i = 0; i < HT_N; i++)
		if (h->tr[i] != NULL && h->tr[i]->free_all != NULL)
			h->tr[i]->free_all(h);
	/* MHD wants every connection resumed before it stops. */
	MHD_run(h->d);
	ev_io_stop(h->srv->loop, &h->io);
	ev_timer_stop(h->srv->loop, &h->timer);
	ev_timer_stop(h->srv->loop, &h->sweep);
	MHD_stop_daemon(h->d);
	while (h->lingers != NULL)
		linger_end(h->lingers);
	for (i = 0; i < PEER_BUCKETS; i++)
		while ((p = h->peers[i]) != NULL) {
			h->peers[i] = p->next;
			free(p);
		}
	free(h);
}
