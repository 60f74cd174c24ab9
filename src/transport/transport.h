/*
 * transport.h: the transport layer, src/transport/, as main/ sees it:
 * stdio (JSON lines on two fds), and the libmicrohttpd daemon (http.c)
 * with the two MCP transports over HTTP, legacy SSE and Streamable HTTP
 * (/mcp). A transport turns bytes into messages for a session
 * (server/'s mcp__protocol_input) and the session's messages back into
 * bytes (the session_ops it gives the session). It includes server/,
 * rpc/ and core/, and reaches main/ only through the callbacks main/
 * hands it. Loop thread only. What the HTTP files share among
 * themselves is in transport/http.h.
 */
#ifndef MCP_TRANSPORT_H
#define MCP_TRANSPORT_H

#include "server/server.h"

/* ---- transport_stdio.c ------------------------------------------------ */

struct stdio_transport;
/* A transport on IN_FD and OUT_FD, not started; NULL on ENOMEM. ENDED
 * runs (loop) when its input ends or its output breaks. */
struct stdio_transport *mcp__stdio_new(struct mcp_server *srv, int in_fd,
	    int out_fd, void (*ended)(struct mcp_server *)) MCP_HIDDEN;
void	 mcp__stdio_start(struct stdio_transport *t) MCP_HIDDEN;
void	 mcp__stdio_stop_input(struct stdio_transport *t) MCP_HIDDEN;
void	 mcp__stdio_resume(struct stdio_transport *t) MCP_HIDDEN;
int	 mcp__stdio_idle(struct stdio_transport *t) MCP_HIDDEN;
void	 mcp__stdio_flush(struct stdio_transport *t) MCP_HIDDEN;
void	 mcp__stdio_abort(struct stdio_transport *t) MCP_HIDDEN;
void	 mcp__stdio_free(struct stdio_transport *t) MCP_HIDDEN;

/* ---- http.c: the daemon, and the transports over HTTP ------------------ */

#define MCP_DEF_KEEPALIVE	15		/* s between SSE comments */
#define MCP_DEF_MAX_SESSIONS	10000
#define MCP_DEF_HTTP_INFLIGHT	256		/* per HTTP session */
#define MCP_DEF_MAX_QUEUED	(8u * 1024 * 1024)	/* per stream */
#define MCP_DEF_REQ_TIMEOUT	10		/* s for a whole request */
#define MCP_DEF_IDLE_TIMEOUT	30		/* s a stream may stall */
#define MCP_DEF_MAX_PER_IP	1000
#define MCP_DEF_EVENT_LOG	(256u * 1024)	/* per stream */
#define MCP_DEF_SESSION_TIMEOUT	1800		/* s */
#define MCP_DEF_SSE_RETRY	1000		/* ms */
#define MCP_DEF_STREAM_AFTER	200		/* ms */

struct http_conf {
	char		*addr;		/* "127.0.0.1:8080", "[::1]:0" */
	char		*base_path;	/* "" or "/prefix" */
	int		 keepalive;
	int		 max_sessions;
	int		 max_inflight;
	size_t		 max_queued;
	int		 request_timeout;
	int		 idle_timeout;
	int		 max_per_ip;
	char		**allow_hosts;
	int		 nallow_hosts;
	char		**allow_origins;
	int		 nallow_origins;
	char		*auth_token;
	/* Streamable HTTP (/mcp) */
	int		 stateless;	/* no sessions */
	int		 json_response;	/* JSON bodies, never SSE */
	size_t		 event_log;	/* bytes kept per stream to replay */
	int		 session_timeout; /* s idle before a session ends */
	int		 sse_retry;	/* ms, the priming event's retry */
	char		*auth_server;	/* for protected-resource metadata */
	char		*resource_url;
	char		*auth_scopes;	/* "a b": in 401s and the metadata */
	char		*auth_token_file; /* re-read on SIGHUP */
	int		 metrics;	/* GET /metrics on the main address */
	char		*metrics_listen; /* ... or on this one */
	int		 access_log;	/* a line per HTTP request */
	int		 stream_after_ms; /* a waiting POST turns into a stream */
	mcp_auth_fn	 auth_fn;	/* mcp_server_set_auth: over auth_token */
	void		*auth_udata;
	void		(*auth_free)(void *);
	/* Sessions shared through Redis (redis.c): NULL, off. */
	char		*redis;		/* redis://... or unix:///path */
	char		*redis_password; /* from --redis-password-file */
	char		*redis_prefix;	/* of every key; "mcp:" */
	struct store	*store;		/* main/'s, while the server runs */
};

struct http;
struct sse_stream;
struct MHD_Connection;

/* ---- redis.c: the session store (--redis) ------------------------------ */

/*
 * Streamable HTTP sessions kept in Redis, so that any instance behind a
 * balancer can serve any of them: the key <prefix>session:<id> holds a
 * session's record (mcp__session_export) with a TTL, and a DEL is
 * announced on the channel <prefix>ended. hiredis's asynchronous API on
 * the server's loop, reconnecting with a backoff: no call blocks. Loop
 * thread only.
 */
struct store;

#define STORE_MAX_VALUE	(256u * 1024)	/* a record read back, at most */

/* The answer to a command: ST_OK with the value (GET: NULL for none),
 * ST_NONE (GET: no such key; SET XX: the key is gone), ST_ERR (down,
 * an error reply, or too large). VAL is borrowed for the call. */
enum { ST_OK = TS_OK, ST_NONE = TS_NONE, ST_ERR = TS_ERR };	/* taskshare.c's */
typedef void	(*store_fn)(void *arg, int status, const char *val,
		    size_t len);

/* A store for CONF's --redis, connecting as the loop runs; NULL with
 * the reason logged (a bad URL, a host that does not resolve). Resolves
 * a host name here, once, before the loop: never while it runs. */
struct store *mcp__store_new(struct mcp_server *srv,
	    const struct http_conf *conf) MCP_HIDDEN;
/* Pending commands are answered ST_ERR first. NULL: nothing. */
void	 mcp__store_free(struct store *st) MCP_HIDDEN;
/* This instance's name in the records it writes (random, 32 hex). */
const char *mcp__store_instance(const struct store *st) MCP_HIDDEN;
/* NULL when Redis is reachable; else why not (for a 503). */
const char *mcp__store_down(const struct store *st) MCP_HIDDEN;
/* FN runs (loop) for each session id another instance ended. */
void	 mcp__store_on_ended(struct store *st,
	    void (*fn)(void *, const char *), void *arg) MCP_HIDDEN;
/* GET the record of session SID; FN always runs once, later, unless
 * this returns non-zero (down: then it never runs). */
int	 mcp__store_get(struct store *st, const char *sid, store_fn fn,
	    void *arg) MCP_HIDDEN;
/* SET it to VAL for TTL seconds: NEW, only if absent (NX); else only
 * if present (XX). FN may be NULL. */
int	 mcp__store_set(struct store *st, const char *sid, const char *val,
	    size_t len, int ttl, int new, store_fn fn, void *arg) MCP_HIDDEN;
/* DEL it and announce it on the channel; with VAL, only if it still
 * holds VAL (nobody renewed it since). With Redis away, sent when it is
 * back (at most 64 kept). */
int	 mcp__store_del(struct store *st, const char *sid, const char *val)
	    MCP_HIDDEN;

/*
 * Event logs (transport_streamable.c): the events of a session's SSE
 * streams in the Redis Stream <prefix>events:<sid> (one field, m), and
 * published on <prefix>ev:<sid> for the instance holding a stream.
 */
#define STORE_MAX_EVENT	(4u * 1024 * 1024)	/* an entry read back */
#define STORE_MAX_ITEMS	4096u			/* entries in a replay */
typedef void	(*store_list_fn)(void *arg, int status, size_t n,
		    const char *const *vals, const size_t *lens);
enum { SEV_MESSAGE, SEV_SUBSCRIBED, SEV_RESUB, SEV_RELAY };
/* MESSAGE: VAL (LEN bytes, untrusted) came on SID's channel; RELAY:
 * VAL, "K SID JSON", came on this instance's channel (its SID checked);
 * SUBSCRIBED: SID's channel is listened to; RESUB: the subscriber is
 * (back) up, with no channel but <prefix>ended: subscribe again. */
typedef void	(*store_ev_fn)(void *arg, int what, const char *sid,
		    const char *val, size_t len);
void	 mcp__store_on_event(struct store *st, store_ev_fn fn, void *arg)
	    MCP_HIDDEN;
/* This instance's tag: the first 8 digits of its id (in event ids and
 * the ids of its requests to clients). */
const char *mcp__store_tag(const struct store *st) MCP_HIDDEN;
/* PUBLISHes "KIND SID JSON" on <prefix>inst:<TAG> (TAG NULL: on
 * <prefix>inst:all), which that instance (every one) listens to. */
int	 mcp__store_relay(struct store *st, const char *tag, int kind,
	    const char *sid, const char *json, size_t len) MCP_HIDDEN;
/* Once a second (the heartbeat): FN fills OUT with the JSON array
 * [[sid, route, [ids]], ...] of the calls in flight on streamed routes
 * (0), and one EVAL beats, records them, and answers the calls of any
 * instance whose heartbeat is gone with an error in their event logs
 * (MAXLEN, TTL: theirs). */
typedef int	(*store_beat_fn)(void *arg, struct buf *out);
void	 mcp__store_on_beat(struct store *st, store_beat_fn fn, void *arg,
	    long maxlen, int ttl) MCP_HIDDEN;
/* NULL when both connections are up; else why not. */
const char *mcp__store_sub_down(const struct store *st) MCP_HIDDEN;
/* One EVAL: each of VALS XADDed (MAXLEN ~ MAXLEN; not those of kind
 * g) and published; the key's TTL set to TTL. */
int	 mcp__store_push(struct store *st, const char *sid, int n,
	    const char *const *vals, const size_t *lens, long maxlen,
	    int ttl) MCP_HIDDEN;
/* The entries of SID's log of route ROUTE, oldest first, to FN. */
int	 mcp__store_range(struct store *st, const char *sid,
	    const char *route, store_list_fn fn, void *arg) MCP_HIDDEN;
/* (UN)SUBSCRIBE SID's channel; ON: messages to the store_ev_fn. */
int	 mcp__store_sub(struct store *st, const char *sid, int on)
	    MCP_HIDDEN;

/* Tasks shared between instances (server/taskshare.c): the record of
 * each at <prefix>task:<id>, a session's index at <prefix>stasks:<sid>
 * (ended with the session: mcp__store_del), a cancel relayed as
 * RELAY_TASK to the instance running it. */
extern const struct task_store mcp__store_tasks MCP_HIDDEN;

/*
 * Legacy SSE streams (transport_sse.c): the instance holding a stream
 * records it in <prefix>sse:<sid> ("<tag> <who>", TTL renewed while it
 * lives, deleted when it ends); a POST /messages reaching another
 * instance is relayed there ("p SID JSON" on <prefix>inst:<tag>).
 */
typedef void	(*store_int_fn)(void *arg, int status, long long n);
/* SET <prefix>sse:SID to this instance, for SUBJECT (NULL: anonymous),
 * TTL s. */
int	 mcp__store_sse_hold(struct store *st, const char *sid,
	    const char *subject, int ttl) MCP_HIDDEN;
/* DEL it: the stream ended. */
int	 mcp__store_sse_drop(struct store *st, const char *sid) MCP_HIDDEN;
/* One EVAL: JSON relayed to the instance holding SID's stream if it
 * holds it for SUBJECT. FN (always once, unless this returns non-zero)
 * gets ST_OK and 0 (no such stream), -1 (another subject's), 1 (its
 * instance is not listening) or more (relayed); or ST_ERR. */
int	 mcp__store_sse_post(struct store *st, const char *sid,
	    const char *subject, const char *json, size_t len,
	    store_int_fn fn, void *arg) MCP_HIDDEN;

/* The MCP transports over HTTP, by the routes they take. */
enum {
	HT_SSE,		/* GET /sse, POST /messages */
	HT_MCP,		/* /mcp: Streamable HTTP */
	HT_N
};
struct http_transport;
/* The store's mcp__store_on_ended, with the daemon H: session SID ended
 * on another instance, so its copy here ends too (no DEL). */
void	 mcp__streamable_ended(void *h, const char *sid) MCP_HIDDEN;
/* The store's store_ev_fn, with the daemon H. */
void	 mcp__streamable_event(void *h, int what, const char *sid,
	    const char *val, size_t len) MCP_HIDDEN;
/* A POST relayed from another instance for legacy SSE session SID
 * (JSON, LEN bytes, untrusted), handled as if POSTed here. */
void	 mcp__sse_relayed(void *h, const char *sid, const char *json,
	    size_t len) MCP_HIDDEN;
/* The subscriber is back (Redis may have restarted empty): the keys of
 * the streams held here are written again. */
void	 mcp__sse_resub(void *h) MCP_HIDDEN;
/* The store's store_beat_fn, with the daemon H. */
int	 mcp__streamable_calls(void *h, struct buf *out) MCP_HIDDEN;
long	 mcp__streamable_maxlen(const void *h) MCP_HIDDEN;
int	 mcp__streamable_ttl(const void *h) MCP_HIDDEN;
extern const struct http_transport mcp__sse_transport MCP_HIDDEN;
extern const struct http_transport mcp__streamable_transport MCP_HIDDEN;

/* The daemons CONF asks for: *HTTP on conf->addr, routing to the
 * transports TR, and *MHTTP on conf->metrics_listen (each NULL when not
 * asked for). CONF is kept. */
int	 mcp__http_start(struct mcp_server *srv, struct http_conf *conf,
	    const struct http_transport *const tr[HT_N], struct http **http,
	    struct http **mhttp) MCP_HIDDEN;
/* Stop accepting connections (the drain starts). */
void	 mcp__http_quiesce(struct http *h) MCP_HIDDEN;
/* Nothing owed and every stream ended: the loop may stop. */
int	 mcp__http_drained(struct http *h) MCP_HIDDEN;
void	 mcp__http_abort(struct http *h) MCP_HIDDEN;
void	 mcp__http_flush(struct http *h) MCP_HIDDEN;
void	 mcp__http_free(struct http *h) MCP_HIDDEN;

#endif /* MCP_TRANSPORT_H */
