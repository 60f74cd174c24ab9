/*
 * client-int.h: the client's internals. The client sits beside the
 * server, on the same lower layers: core (buffers, JSON, logging) and
 * rpc (the envelope, framing, the pending table). Its transports
 * (stdio.c, http.c) reach the core (client.c) through the functions
 * below, and the core reaches them through struct ctransport_ops.
 *
 * Threads: everything here runs on the client's loop thread, except the
 * submit queue (c->lock), which other threads fill.
 */
#ifndef MCP_CLIENT_INT_H
#define MCP_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <ev.h>

#include "core/core.h"
#include "rpc/rpc.h"
#include "rpc/frame.h"

#define MCP_CLIENT_TIMEOUT	30.0	/* s, a request's default */
#define MCP_CLIENT_CLOSE_S	2.0	/* s, each step of closing */
#define MCP_CLIENT_MAX_MESSAGE	(4u * 1024 * 1024)	/* as the server's */

struct mcp_client;

/* One request, from its submission to its end. */
struct creq {
	struct pending_entry	 pe;		/* pe.id: the JSON-RPC id */
	struct creq		*next;		/* submit queue, held list */
	struct mcp_client	*c;
	int			 op;		/* OP_* below */
	char			*method;
	json_t			*params;	/* stolen at submission */
	char			*body;		/* the message, kept to resend */
	size_t			 len;
	ev_timer		 timer;
	ev_tstamp		 started;
	mcp_client_cb		 cb;
	void			*udata;
	int			 internal;	/* initialize: not cancellable */
	int			 sent;
	int			 resent;	/* after a lost session */
	void			*tstate;	/* the transport's (a POST) */
	char			*reason;	/* OP_CANCEL */
	long long		 cancel_id;
	/* 2026-07-28: the name Mcp-Name carries (tools/call, prompts/get,
	 * resources/read), and the multi round-trip state (MRTR): the id
	 * the caller knows, the rounds so far, the answers to the server's
	 * inputRequests still awaited and those in. */
	char			*hname;
	long long		 first_id;
	int			 rounds;
	int			 nwait;
	json_t			*inputs;
	json_t			*state;		/* requestState, or NULL */
	struct creq		*mnext;		/* c->mrtr */
	int			 in_mrtr;
	/* OP_INPUT: an answer to one of the server's inputRequests. */
	char			*key;
	json_t			*value;		/* NULL: the handler refused */
	/* 2026-07-28 over HTTP, tools/call: the "Mcp-Param-NAME: V" lines
	 * (a JSON array of strings) its x-mcp-header annotations ask for,
	 * and whether it was sent again after -32020 and a new listing. */
	json_t			*pheaders;
	int			 xretried;
	/* subscriptions/listen: no timer; never cancelled by cancel_all. */
	int			 is_listen;
};

enum {
	OP_REQUEST,
	OP_NOTIFY,	/* body ready: a notification or a reply */
	OP_CANCEL,
	OP_CONNECT,
	OP_CLOSE,
	OP_INPUT,
	OP_LISTEN	/* 2026-07-28: subscribe (cancel_id 1) or unsubscribe
			   (0) the uri in key, through a new listen */
};

enum cstate {
	CS_NEW,
	CS_INIT,	/* initialize (or the server/discover probe) sent */
	CS_READY,
	CS_LOST,	/* the transport ended */
	CS_CLOSED
};

/*
 * What a transport does for the core. Each runs on the loop thread.
 *  start   opens the connection; MCP_OK or an error (c->err says why)
 *  send    sends one message (JSON of LEN bytes); R is the request it
 *          carries, or NULL (a notification or a reply); a failure
 *          is reported later through mcp__client_fail or _lost
 *  forget  R ended: let go of anything held for it; ANSWERED says the
 *          answer came (an HTTP stream may then end by itself), else
 *          it timed out or was cancelled (a stream is cut)
 *  ready   initialization is done (the GET listener may open)
 *  close   closes, blocking for at most a few seconds; frees its state
 */
struct ctransport_ops {
	const char	*name;
	int	 (*start)(struct mcp_client *c);
	void	 (*send)(struct mcp_client *c, const char *json, size_t len,
		    struct creq *r);
	void	 (*forget)(struct mcp_client *c, struct creq *r,
		    int answered);
	void	 (*ready)(struct mcp_client *c);
	void	 (*close)(struct mcp_client *c);
};

struct handler {
	struct handler		*next;
	char			*method;
	mcp_client_request_fn	 fn;
	void			*udata;
};

struct mcp_client_reply {
	struct mcp_client_reply	*next;		/* c->replies, under c->lock */
	struct mcp_client	*c;
	json_t			*id;
	int			 done;
	/* 2026-07-28: an answer to the inputRequests entry KEY of the
	 * request the caller knows as FIRST_ID, in round ROUND; the answer
	 * goes into the request's retry, not on the wire. */
	char			*key;
	long long		 first_id;
	int			 round;
};

/* The era a client speaks (option "protocol"). */
enum cwant {
	WANT_AUTO,	/* server/discover first, initialize when legacy */
	WANT_MODERN,	/* 2026-07-28 only */
	WANT_LEGACY	/* initialize only */
};

#define MCP_CLIENT_MODERN	"2026-07-28"
#define MCP_CLIENT_PROBE_S	10.0	/* s, at most, for the probe (auto) */
#define MCP_CLIENT_MRTR_ROUNDS	16	/* input_required answers in a row */
#define MCP_CLIENT_XTOOLS	1024	/* tools with x-mcp-header kept */
#define MCP_CLIENT_XVALUE	4096	/* bytes of one Mcp-Param-* line */
#define MCP_CLIENT_XPAGES	1000	/* pages of a listing after -32020 */
#define MCP_CLIENT_SUBS		1024	/* URIs a listen asks for */

/* A listed tool's x-mcp-header annotations (2026-07-28). */
struct xtool {
	char			*name;
	struct xheader		*xh;
	int			 n;
};

struct mcp_client {
	struct ev_loop		*loop;
	int			 own_loop;	/* ours, on c->thread */
	pthread_t		 thread;
	int			 thread_started;
	ev_async		 wake;
	pthread_mutex_t		 lock;
	struct creq		*queue;		/* submitted, under lock */
	struct creq		*queue_tail;
	struct mcp_client_reply	*replies;	/* under lock */
	atomic_llong		 next_id;

	enum cstate		 state;
	struct pending		 pend;		/* id -> struct creq */
	struct creq		*held;		/* waiting for the init */
	struct creq		*init;		/* the initialize in flight */
	struct creq		*probe;		/* the server/discover probe */
	struct creq		*mrtr;		/* requests past their first
						   input_required answer */
	/* 2026-07-28: the x-mcp-header map, from the tools/list results
	 * seen (replaced by each listing from its first page). Loop
	 * thread. */
	struct xtool		*xtools;
	int			 nxtools;
	/* 2026-07-28: subscriptions/listen. LISTEN_CUR is the open one,
	 * whose notifications reach the handler; LISTEN_NEW the one opened
	 * to replace it, until its acknowledgment; LOP the subscribe or
	 * unsubscribe waiting for it, LOPS those after it. SUBS: the URIs
	 * of LISTEN_CUR. Loop thread. */
	struct creq		*listen_cur;
	struct creq		*listen_new;
	struct creq		*lop;
	struct creq		*lops;
	json_t			*subs;
	int			 reinits;	/* sessions reopened in a row */

	/* Options. */
	char			*name;
	char			*version;
	double			 timeout;
	double			 max_timeout;
	int			 progress_resets;
	char			*protocol;	/* asked for in initialize */
	enum cwant		 want;
	int			 modern;	/* 2026-07-28: probing or chosen */
	int			 probe_legacy;	/* the transport saw a legacy
						   server's answer to the probe */
	double			 probe_timeout;
	json_t			*caps_now;	/* sent in each modern _meta */
	char			 log_level[16];	/* modern: in _meta; c->lock */
	int			 force;		/* 0 Streamable HTTP with the
						   fallback, 2 legacy SSE */
	char			**headers;	/* "Name: value" */
	int			 nheaders;
	int			 listen;
	int			 progress;	/* ask for progress */
	size_t			 max_message;
	char			*cacert;
	int			 insecure;
	double			 connect_timeout;

	/* Handlers. */
	mcp_client_stderr_fn	 on_stderr;
	void			*stderr_udata;
	struct handler		*handlers;
	mcp_client_notify_fn	 on_notify;
	void			*notify_udata;
	mcp_client_progress_fn	 on_progress;
	void			*progress_udata;
	mcp_client_trace_fn	 on_trace;
	void			*trace_udata;
	json_t			*roots;
	json_t			*caps;		/* declared as given, or NULL */
	mcp_client_cb		 on_ready;
	void			*ready_udata;
	mcp_client_cb		 on_lost;
	void			*lost_udata;
	int			 was_ready;	/* on_ready said MCP_OK */

	/* What initialize gave. */
	char			 negotiated[16];
	json_t			*supported;	/* discover's supportedVersions */
	json_t			*server_info;
	json_t			*server_caps;
	char			*instructions;
	char			 err[512];	/* why connecting failed */
	int			 connect_rc;
	struct waiter		*connect_wait;	/* a blocking connect's */
	struct creq		*close_op;	/* OP_CLOSE, made at connect */

	/* The transport. */
	const struct ctransport_ops *ops;
	const char		*tname;		/* NULL: ops->name */
	void			*t;
	char			*url;
	char			**argv;
	char			**envp;
	char			*cwd;
};

/* From the transports, on the loop thread. */
/* One message (or a batch) received. */
void	 mcp__client_input(struct mcp_client *c, const char *json,
	    size_t len) MCP_HIDDEN;
/* A message over max-message was dropped: its request, if the scan
 * found its id, fails. */
void	 mcp__client_oversized(struct mcp_client *c, const struct idscan *sc)
	    MCP_HIDDEN;
/* The request R cannot be sent or answered: it fails with RC, WHY. */
void	 mcp__client_fail(struct mcp_client *c, struct creq *r, int rc,
	    const char *why) MCP_HIDDEN;
/* The connection is gone for good: everything in flight fails. */
void	 mcp__client_lost(struct mcp_client *c, int rc, const char *why)
	    MCP_HIDDEN;
/* The server no longer knows the session (HTTP 404): a new one is
 * opened and R (NULL: none) is sent again in it. */
void	 mcp__client_session_gone(struct mcp_client *c, struct creq *r)
	    MCP_HIDDEN;
/* R went out in a session that has since been replaced: again, in the
 * new one, once it is open. */
void	 mcp__client_resend(struct mcp_client *c, struct creq *r) MCP_HIDDEN;
/* Each message is written here before it leaves: for tracing. */
void	 mcp__client_trace(struct mcp_client *c, int out, const char *json,
	    size_t len) MCP_HIDDEN;

extern const struct ctransport_ops mcp__client_stdio_ops MCP_HIDDEN;
extern const struct ctransport_ops mcp__client_http_ops MCP_HIDDEN;

#endif /* MCP_CLIENT_INT_H */
