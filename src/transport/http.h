/*
 * http.h: what http.c (the daemon), transport_sse.c (the legacy SSE
 * sessions) and transport_streamable.c (/mcp) share, inside the
 * transport layer. http.c is the lower of them: it reaches the other two
 * only through their struct http_transport tables. Loop thread only,
 * like everything HTTP.
 */
#ifndef MCP_HTTP_H
#define MCP_HTTP_H

#include <microhttpd.h>

#include "transport/transport.h"

#define SSE_BUCKETS	4096
#define PEER_BUCKETS	1024

struct conn_info;
struct peer;
struct lingering;
struct ssess;
struct sconn;
struct route;
struct lookup;
struct sse_relay;

/* Per request, in *req_cls. */
struct req {
	int		 kind;		/* ROUTE_* in http.c */
	const struct http_transport *tr;	/* the transport it goes to */
	int		 too_large;	/* over --max-message: thrown away */
	struct idscan	 scan;		/* ... scanned for its id */
	int		 fresh;		/* /mcp: it opened its session */
	int		 posted;	/* /mcp: handled, maybe waiting */
	int		 gone;		/* /mcp: its client left while it waited */
	char		 sid[64];
	char		*origin;
	/* Its Accept and MCP-Protocol-Version headers, or NULL: read with
	 * the others in one pass over them; MHD keeps them until the
	 * request is done. */
	const char	*accept;
	const char	*version;
	struct buf	 body;
	struct route	*route;		/* /mcp: a POST waiting on it */
	struct sse_relay *relay;	/* /messages: waiting on Redis */
	struct identity	*ident;		/* who sent it (a reference), or NULL */
};

/*
 * A watch on a suspended connection's socket: GONE runs (once) when the
 * client has closed it. Start it when suspending, stop it on resume.
 * The socket is watched only once the connection has stayed suspended
 * for HTTP_WATCH_DELAY: most are resumed sooner (a quick call's
 * answer), and watching each of those would cost the loop's epoll set
 * a change or two per request (epoll_ctl).
 */
#define HTTP_WATCH_DELAY	0.01	/* s */

struct peer_watch {
	ev_io		 io;
	ev_timer	 delay;		/* until the socket is watched */
	struct ev_loop	*loop;
	void		(*gone)(struct peer_watch *);
	void		*owner;
};

/*
 * An MCP transport over HTTP as the daemon sees it, like an nginx
 * module's table: http.c routes requests to it and drives its streams
 * through it, and never names transport_sse.c or transport_streamable.c.
 * Their tables (mcp__sse_transport, mcp__streamable_transport) come from
 * main/server.c, through mcp__http_start. Lifecycle members may be NULL
 * (no such work); a route's members are there when the transport has
 * the route. Loop thread.
 */
struct http_transport {
	/* GET on its stream path (/sse, /mcp); SID: Mcp-Session-Id. */
	enum MHD_Result	(*get)(struct http *h, struct MHD_Connection *conn,
			    const char *sid, const char *origin);
	/* DELETE on it (/mcp). */
	enum MHD_Result	(*del)(struct http *h, struct MHD_Connection *conn,
			    const char *sid, const char *origin);
	/* A POST to it (/messages, /mcp), its body read whole into RQ. */
	enum MHD_Result	(*post)(struct http *h, struct MHD_Connection *conn,
			    struct req *rq);
	/* A POST that post suspended is resumed (/mcp). */
	enum MHD_Result	(*resumed)(struct http *h,
			    struct MHD_Connection *conn, struct req *rq);
	/* MHD is done with RQ: answered, or its client left. */
	void		(*req_done)(struct req *rq);
	/* Once a second, beside the request deadlines. */
	void		(*sweep)(struct http *h, double now);
	/* Draining: is an answer still owed, or a byte still queued? */
	int		(*busy)(struct http *h);
	/* Nothing is owed any more: end every stream. */
	void		(*end_all)(struct http *h);
	/* Streams still open: the drain ends when none is. */
	int		(*streams)(struct http *h);
	/* The grace period is over: every call left gets its error. */
	void		(*abort_all)(struct http *h);
	/* The daemon stops: end whatever is left. */
	void		(*free_all)(struct http *h);
};

struct http {
	struct mcp_server	*srv;
	struct http_conf	*conf;
	/* Who sent the request being handed to a transport now (the
	 * authentication hook's), or NULL: borrowed for that call. */
	struct identity		*ident;
	const struct http_transport *tr[HT_N];	/* none: --metrics-listen's */
	struct MHD_Daemon	*d;
	ev_io			 io;		/* MHD's epoll fd */
	ev_timer		 timer;		/* MHD_get_timeout */
	ev_timer		 sweep;		/* request deadlines */
	unsigned int		 port;
	char			 shown[80];	/* "http://addr:port" */
	int			 loopback;	/* Host checks apply */
	int			 quiesced;
	int			 need_run;	/* a stream was resumed */
	int			 recheck;	/* draining: check if done */
	int			 ended;		/* every stream told to end */
	int			 nreqs;		/* POSTs read or being answered */
	int			 metrics_only;	/* --metrics-listen's daemon */
	int			 nconns;
	int			 max_conns;
	struct peer		*peers[PEER_BUCKETS];	/* --max-per-ip */
	struct conn_info	*conns;
	struct lingering		*lingers;	/* closing, reading what's left */
	int			 nlingers;
	/* transport_sse.c */
	struct sse_stream	*buckets[SSE_BUCKETS];
	struct sse_stream	*streams;	/* every live stream */
	int			 nstreams;
	struct sse_relay	*relays;	/* --redis: POSTs relayed */
	/* transport_streamable.c */
	struct ssess		*sbuckets[SSE_BUCKETS];
	struct ssess		*ssessions;
	int			 nssessions;
	struct sconn		*sconns;	/* every live /mcp stream */
	int			 nsconns;
	struct lookup		*lookups;	/* --redis: ids asked for */
};

/* http.c helpers for the transports */
int	 mcp__http_reply(struct MHD_Connection *conn, int status,
	    const char *ctype, const char *body, size_t len,
	    const char *origin) MCP_HIDDEN;
int	 mcp__http_reply_rpc(struct MHD_Connection *conn, int status,
	    int code, const char *msg, const char *origin) MCP_HIDDEN;
void	 mcp__http_cors(void *resp, const char *origin) MCP_HIDDEN;
void	 mcp__http_wake(struct http *h) MCP_HIDDEN;
void	 mcp__http_serving(struct MHD_Connection *conn) MCP_HIDDEN;
void	 mcp__http_watch(struct http *h, struct peer_watch *w,
	    struct MHD_Connection *conn) MCP_HIDDEN;
void	 mcp__http_unwatch(struct peer_watch *w) MCP_HIDDEN;
struct MHD_Response *mcp__http_stream(struct MHD_Connection *conn,
	    MHD_ContentReaderCallback reader, void *cls,
	    MHD_ContentReaderFreeCallback free_fn) MCP_HIDDEN;
struct MHD_Response *mcp__http_event_stream(struct MHD_Connection *conn,
	    MHD_ContentReaderCallback reader, void *cls,
	    MHD_ContentReaderFreeCallback free_fn) MCP_HIDDEN;
/* Queues RESP (LEN body bytes not counted yet): every response's way
 * out, with its request id, counted. */
enum MHD_Result mcp__http_queue(struct MHD_Connection *conn,
	    unsigned int status, struct MHD_Response *resp, size_t len)
	    MCP_HIDDEN;
void	 mcp__http_set_session(struct MHD_Connection *conn, const char *id)
	    MCP_HIDDEN;
/* A request refused by LIMIT (ML_*). */
void	 mcp__http_refused(struct http *h, int limit) MCP_HIDDEN;
void	 mcp__http_shutdown(struct MHD_Connection *conn) MCP_HIDDEN;
/* A response whose body is B's bytes (taken; B is emptied). */
struct MHD_Response *mcp__http_body(struct http *h,
	    struct MHD_Connection *conn, struct buf *b) MCP_HIDDEN;
int	 mcp__http_new_id(char *out) MCP_HIDDEN;
/* Is SID an id as mcp__http_new_id makes them: 32 lower-case hex
 * digits, and nothing after them? */
int	 mcp__http_is_id(const char *sid) MCP_HIDDEN;
/* The request being handled names session S: may it? A session is
 * bound to the subject that opened it; a request of another subject's
 * gets 403 (queued in *RC, 0 returned). Else S takes the request's
 * identity (a refreshed token's claims) for its calls, and 1 returns. */
int	 mcp__http_identify(struct http *h, struct MHD_Connection *conn,
	    struct session *s, const char *origin, enum MHD_Result *rc)
	    MCP_HIDDEN;

#endif /* MCP_HTTP_H */
