/*
 * server.h: the MCP server layer, src/server/: the registry of tools,
 * resources and prompts, the pool of workers and the calls they run,
 * sessions, the MCP methods (protocol.c), requests to the client, and
 * the counters behind /metrics. It sits on rpc/ and core/ and includes
 * nothing above them: a transport hands it bytes through
 * mcp__protocol_input and gets messages back through the session_ops
 * it registers; main/ is reached only through struct server_hooks.
 *
 * Thread rule: everything touching a session, a transport or the loop runs
 * on the loop thread. Workers see only their own struct mcp_call, the tool
 * it holds a reference to, and the two queues in struct pool; so does a
 * user's thread that holds a deferred call (mcp_call_defer), until
 * mcp_call_finish posts it. Any thread may queue a message for the loop
 * in struct features, under its nlock.
 */
#ifndef MCP_SERVER_H
#define MCP_SERVER_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

#include <ev.h>
#include <jansson.h>

#include "core/core.h"
#include "core/schema.h"
#include "rpc/frame.h"
#include "rpc/rpc.h"

/* Defaults, documented in mcp_server_new(3) and mcp_server_main(3). */
#define MCP_DEF_MAX_MESSAGE	(4u * 1024 * 1024)
#define MCP_DEF_QUEUE_SIZE	1024
#define MCP_DEF_PAGE_SIZE	100
#define MCP_DEF_MAX_INFLIGHT	4096	/* per session */
#define MCP_DEF_MAX_BATCH	128	/* messages in a JSON-RPC batch */
#define MCP_DEF_MAX_SUBS	1024	/* resources/subscribe, per session */
#define MCP_MAX_URI		8192	/* bytes of a subscribed or read uri */
#define MCP_GROW_AFTER		0.02	/* s a call waits before the pool grows */
#define MCP_DEF_TASK_TTL	3600000	/* ms a task is kept, at most */
#define MCP_DEF_MAX_TASKS	1024	/* tasks kept, per server */
#define MCP_DEF_SESSION_TASKS	128	/* and per session */
#define MCP_DEF_TASK_BYTES	(64u * 1024 * 1024) /* their results' bytes */
#define MCP_TASK_POLL_MS	1000	/* the pollInterval suggested */
#define MCP_DEF_MAX_LISTENS	1024	/* subscriptions/listen, per process */
#define MCP_SESSION_LISTENS	64	/* ... per stdio connection */


/* ---- registry.c ------------------------------------------------------- */

#define TOOL_DECLARED	0x1	/* a declaration, not JSON (mcp_args(7)) */
#define TOOL_DEFAULTS	0x2	/* that declares defaults */

struct tool {
	struct entry		 e;		/* first; e.key is name */
	atomic_int		 refs;
	char			*name;
	char			*title;
	char			*description;
	json_t			*input_schema;
	json_t			*output_schema;
	json_t			*annotations;
	json_t			*icons;		/* [Icon], 2025-11-25 */
	struct mcp__schema	*in;
	struct mcp__schema	*out;
	int			 decl;		/* TOOL_*: how INPUT_SCHEMA came */
	atomic_int		 timeout_ms;	/* 0: the server's */
	atomic_uint		 flags;		/* MCP_TOOL_* */
	mcp_tool_fn		 fn;
	void			*udata;
	void			(*udata_free)(void *);
	struct tool_stats	*stats;		/* loop: its metrics */
	struct xheader		*xh;		/* x-mcp-header annotations */
	int			 nxh;
};

struct registry {
	pthread_mutex_t	 lock;
	struct table	 tools;
	int		 count;
};

/* The flags that say a tool may be called as a task. */
#define MCP_TOOL_TASKS	(MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED)

int	 mcp__registry_new(struct registry *r) MCP_HIDDEN;
/* Does any tool allow tasks? Any thread. */
int	 mcp__registry_tasks(struct registry *r) MCP_HIDDEN;
void	 mcp__registry_free(struct registry *r) MCP_HIDDEN;
/* A referenced tool, or NULL. Release with mcp__tool_unref. */
struct tool *mcp__registry_get(struct registry *r, const char *name)
	    MCP_HIDDEN;
void	 mcp__tool_unref(struct tool *t) MCP_HIDDEN;
/* tools/list: a page of at most LIMIT tools starting after CURSOR (NULL
 * for the first page). Returns the result object or NULL on a bad
 * cursor (*bad set) or ENOMEM. */
json_t	*mcp__registry_list(struct registry *r, const char *cursor,
	    int limit, int version, int *bad) MCP_HIDDEN;
/* Or'd into tools/list's VERSION: the session declared the tasks
 * capability, so tools show their execution.taskSupport. */
#define REG_TASKS_ON	0x40000000	/* above every MCP_V* (dates) */

/* ---- registry.c: the setup calls ------------------------------------ */

/*
 * Every registration and configuration call returns through this: a
 * failure before the server runs is kept, so that a program may make
 * them in a row without checking each, and mcp_server_run and
 * mcp_server_main refuse to start (mcp__setup_check). FN names the
 * call and WHAT (may be NULL) the tool, URI or name it was about, for
 * the line logged. Returns RC. Any thread.
 */
int	 mcp__setup_keep(mcp_server *srv, const char *fn, const char *what,
	    int rc) MCP_HIDDEN;
/* Ends the setup: MCP_OK, or the first kept failure, logged with WHO
 * (the function starting the server) and how many there were. */
int	 mcp__setup_check(mcp_server *srv, const char *who) MCP_HIDDEN;

/* ---- args.c: a tool's arguments ------------------------------------- */

/* Worker, before a tool's arguments are validated: a declared tool's
 * get their defaults (any shape; validation follows), and a string
 * holding U+0000 is refused (the call's result says why). 0: go on; -1:
 * its answer is set. */
int	 mcp__args_prepare(struct mcp_call *c) MCP_HIDDEN;

/* ---- features.c: resources, templates, prompts, completion ----------- */

enum feat_kind {
	FEAT_RESOURCE,		/* keyed by uri */
	FEAT_TEMPLATE,		/* keyed by uriTemplate */
	FEAT_PROMPT,		/* keyed by name */
	FEAT_NKINDS
};

/* One registered resource, template or prompt; like struct tool. */
struct feat {
	struct entry		 e;		/* first; e.key is key */
	atomic_int		 refs;
	enum feat_kind		 kind;
	char			*key;		/* uri, uriTemplate or name */
	char			*name;
	char			*title;
	char			*description;
	char			*mime;
	long long		 size;		/* -1: unknown */
	json_t			*args;		/* prompts: [{name,...}] */
	json_t			*annotations;	/* resources, templates */
	json_t			*icons;		/* [Icon], 2025-11-25 */
	mcp_tool_fn		 fn;
	void			*udata;
	void			(*udata_free)(void *);
};

/* Notifications queued from any thread for the loop (notify_cb). */
#define MCP_CHANGED_TOOLS	1
#define MCP_CHANGED_RESOURCES	2
#define MCP_CHANGED_PROMPTS	4

struct upd {
	struct upd	*next;
	char		 uri[];
};

/*
 * A message for one session or for all, queued from any thread by
 * mcp_server_log, mcp_server_log_to, mcp_server_notify_list_changed_to
 * and mcp_resource_notify_updated_to, and sent by notify_cb on the loop,
 * in the order queued (list_changed to all and resources/updated to all
 * are coalesced apart, in changed and uhead).
 */
enum notice_kind {
	NOTICE_LOG,		/* TEXT: a notifications/message */
	NOTICE_CHANGED,		/* LISTS: MCP_CHANGED_* */
	NOTICE_UPDATED		/* TEXT: the uri */
};

struct notice {
	struct notice	*next;
	enum notice_kind kind;
	int		 level;		/* LOG: its syslog level */
	int		 lists;		/* CHANGED */
	char		*sid;		/* NULL: every session */
	char		*text;
	size_t		 len;
};

#define MCP_MAX_NOTICES	4096	/* waiting for the loop, at most */

struct features {
	pthread_mutex_t	 lock;		/* the lists */
	struct table	 lists[FEAT_NKINDS];
	mcp_tool_fn	 complete_fn;
	void		*complete_udata;
	void		(*complete_free)(void *);
	mcp_roots_fn	 roots_fn;	/* roots/list_changed; set before run */
	void		*roots_udata;
	void		(*roots_free)(void *);
	pthread_mutex_t	 nlock;		/* the five below */
	int		 changed;	/* MCP_CHANGED_* */
	struct upd	*uhead;
	struct notice	*nhead;		/* oldest first */
	struct notice	*ntail;
	int		 nnotices;
	/* Initialized sessions by their public id (mcp_call_session_id),
	 * struct session's addr: the loop adds and removes them, any thread
	 * asks whether one is there. Under nlock. */
	struct table	 addrs;
	atomic_int	 live;		/* the loop is running */
	ev_async	 notify;
};

int	 mcp__features_new(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__features_free(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__feat_unref(struct feat *f) MCP_HIDDEN;
/* A referenced entry by key, or NULL. */
struct feat *mcp__feat_get(struct mcp_server *srv, enum feat_kind kind,
	    const char *key) MCP_HIDDEN;
/* The static resource URI names, else the first template matching it,
 * referenced; NULL if none. */
struct feat *mcp__feat_resolve(struct mcp_server *srv, const char *uri)
	    MCP_HIDDEN;
/* A page of the list of KIND, as tools/list (cursor "c<hex>"). */
json_t	*mcp__feat_list(struct mcp_server *srv, enum feat_kind kind,
	    const char *cursor, int limit, int version, int *bad) MCP_HIDDEN;
/* Prompt P's required arguments present in ARGS (an object or NULL)?
 * MCP_OK, or MCP_EINVAL with the first missing one's name in MISSING. */
int	 mcp__prompt_check(struct mcp_server *srv, struct feat *p,
	    const json_t *args, char *missing,
	    size_t len) MCP_HIDDEN;
/* RFC 6570 level 1: does URI match TMPL? Fills VARS (may be NULL) with
 * the decoded variables. 1 on a match, 0 otherwise. */
int	 mcp__template_match(const char *tmpl, const char *uri, json_t *vars)
	    MCP_HIDDEN;
/* Is TMPL a level-1 template we can match? */
int	 mcp__template_valid(const char *tmpl) MCP_HIDDEN;
/* Any thread: a list changed (MCP_CHANGED_*); sent to every session. */
void	 mcp__notify_changed(struct mcp_server *srv, int what) MCP_HIDDEN;
/* Annotations from the public arguments (mcp_result_annotate(3)); *OUT
 * NULL when all three are left out. MCP_EINVAL on a bad value. */
int	 mcp__annotations_make(int audience, double priority,
	    const char *last_modified, json_t **out) MCP_HIDDEN;
/* A as VERSION knows it (a new reference in *OUT; NULL if empty). */
int	 mcp__annotations_for(const json_t *a, int version, json_t **out)
	    MCP_HIDDEN;
/* JSON text of an array of Icon objects, checked; NULL (logged) if bad. */
json_t	*mcp__icons_parse(const char *text, const char *who) MCP_HIDDEN;
struct session;
/* Loop: S was initialized, and can be reached by its public id from
 * now on; S is closing, and cannot. Each is done once (s->listed). */
void	 mcp__notify_listen(struct session *s) MCP_HIDDEN;
void	 mcp__notify_forget(struct session *s) MCP_HIDDEN;
/* Loop: start and stop the notification watcher. */
void	 mcp__features_start(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__features_stop(struct mcp_server *srv) MCP_HIDDEN;

/* ---- the call (job): call.c, pool.c, session.c ------------------------ */

enum call_kind {
	CALL_TOOL,		/* tools/call */
	CALL_READ,		/* resources/read */
	CALL_PROMPT,		/* prompts/get */
	CALL_COMPLETE,		/* completion/complete */
	CALL_ROOTS,		/* roots/list_changed: no id, no answer */
	CALL_RELAY,		/* a request a relay answers (relay.c) */
	CALL_WAIT,		/* tasks/result, waiting for its task */
	CALL_LISTEN		/* subscriptions/listen: nothing runs */
};

struct session;
struct batch;

/*
 * Who sent a request, as the authentication hook said (transport/http.c):
 * a subject and claims, either may be NULL. Made on the loop and never
 * changed; the session holds its latest request's, a call the one of the
 * request that made it. Workers only read it. REFS is the loop's: every
 * holder takes and lets go of it there (calls are freed on the loop).
 */
struct identity {
	int		 refs;
	char		*subject;
	json_t		*claims;
};

/* Takes SUBJECT and CLAIMS (either may be NULL); NULL on ENOMEM, when
 * both have been freed. Loop thread. */
struct identity *mcp__identity_new(char *subject, json_t *claims)
	    MCP_HIDDEN;
void	 mcp__identity_free(struct identity *id) MCP_HIDDEN;

static inline struct identity *
mcp__identity_ref(struct identity *id)
{
	if (id != NULL)
		id->refs++;
	return id;
}

static inline void
mcp__identity_unref(struct identity *id)
{
	if (id != NULL && --id->refs == 0)
		mcp__identity_free(id);
}

/* Does A name the same subject as B (both anonymous counts)? */
int	 mcp__identity_same(const struct identity *a,
	    const struct identity *b) MCP_HIDDEN;

/*
 * mcp_session: what a call may know of its session. Filled on the loop
 * when the session opens (mcp__session_open: after initialize, or at a
 * stateless session's first request), before any call of it is queued,
 * and never changed after; freed with the session, which every call
 * holds until it is freed on the loop. So workers read it through
 * c->info with no lock and no reference count of its own, and never
 * touch struct session.
 */
struct mcp_session {
	char		 id[40];
	int		 transport;	/* MT_* */
	int		 version;
	json_t		*client_info;	/* references, or NULL */
	json_t		*client_caps;
	struct identity	*ident;		/* the opening request's */
	void		*data;		/* the open hook's */
	int		 opened;
	int		 hooked;	/* the open hook ran: close runs */
};

struct mcp_call {
	struct mcp_call	*next;		/* job or completion queue */
	/* A notification a callback sent (progress, log): it travels the
	 * completion queue like a call, so it reaches the client before the
	 * call's own answer. NOTE_OF is the call; OUT the message. */
	struct mcp_call	*note_of;
	struct client_req *req;		/* a note that asks the client */
	int		 close_stream;	/* a note: mcp_call_close_stream */
	struct pool	*pool;		/* for notes, from the worker */
	int		 caps;		/* MCP_CAP_*: what it may ask */
	struct mcp_call	*hnext;		/* session in-flight chain */
	struct session	*sess;		/* loop-side; a reference */
	struct mcp_session *info;	/* the session's, for the worker */
	struct identity	*ident;		/* its request's; a reference */
	struct batch	*batch;		/* JSON-RPC batch it belongs to */
	void		*route;		/* loop: where its messages go */
	struct tool	*tool;		/* a reference */
	/* Loop: a task's call, the task it runs for (NULL once the task
	 * is gone); a CALL_WAIT, the task it waits for, and the next
	 * waiter of that task. */
	struct task	*task;
	struct mcp_call	*wnext;
	struct listen	*listen;	/* loop: a CALL_LISTEN's */
	struct tpoll	*tpoll;		/* loop: a CALL_WAIT on the store's */
	enum call_kind	 kind;
	struct feat	*feat;		/* a reference; read, get, complete */
	struct mcp_server *srv;
	const char	*uri;		/* worker: borrowed from params */
	const char	*pname;		/* worker: prompt name, complete */
	const char	*cname;		/* worker: completion argument */
	const char	*cvalue;
	const char	*role;		/* prompts: of the next message */
	int		 open_msg;	/* prompts: a message to close */
	char		*description;	/* prompts */
	char		*method;	/* relayed: the request's method */
	int		 nvalues;	/* completion values given */
	long long	 total;		/* -1: not set */
	int		 has_more;
	json_t		*id;		/* owned */
	char		*ptext;		/* params as JSON text, for the worker */
	size_t		 ptextlen;
	json_t		*params;	/* built and owned by the worker */
	json_t		*args;		/* borrowed from params */
	/* A tool's arguments read in place (core.h): then ARGS is built
	 * from them only when asked for (mcp__call_args). */
	struct mcp__flat_args *flat;
	size_t		 flat_cap;	/* its bytes (a thread may keep it) */
	json_t		*meta;		/* a tool's _meta, when built apart */
	/* A tool call whose params were scanned as text: where its
	 * arguments and _meta lie in them (rpc_fields'), built alone. */
	int		 spans;
	size_t		 args_off, args_len;
	size_t		 meta_off, meta_len;
	int		 has_nul;	/* a string in params holds \u0000 */
	atomic_int	 cancelled;
	atomic_int	 defer;		/* CALL_DEFER_*: mcp_call_defer */
	int		 version;	/* negotiated, for result shapes */
	int		 dropped;	/* loop: no response is to be sent */
	int		 counted;	/* loop: its end was counted */
	char		 rid[MCP_RID_MAX];	/* the HTTP request id */
	int		 log_level;	/* the session's, when queued */
	ev_timer	 timer;		/* loop: the tool's time limit */
	double		 timeout;	/* s, 0 for none */
	json_t		*progress_token; /* worker; borrowed from params */
	double		 last_progress;
	int		 has_progress;
	double		 queued_at;	/* loop time when queued */
	uint32_t	 hash;
	char		 key[40];	/* id key; long ids are hashed */
	/* The result being built, worker side: content blocks go straight
	 * into CONTENT as serialised JSON, comma-separated. */
	struct buf	 content;
	size_t		 block_at;	/* where the last block starts */
	int		 annotated;	/* ... and it has annotations */
	json_t		*structured;
	int		 is_error;
	int		 has_text;
	int		 rpc_code;
	char		*rpc_msg;
	const char	*need_cap;	/* -32021: the capability missing */
	/* 2026-07-28 (mrtr.c): where requestState and inputResponses lie
	 * in a scanned tool call's params (a length of 0: absent); the
	 * answers and requests of the client's input, once there are any;
	 * and an answer that is dressed already (input_required). */
	size_t		 state_off, state_len;
	size_t		 resp_off, resp_len;
	struct mrtr	*mrtr;
	int		 dressed;
	/* A task's call run again by tasks/update (its requestState held
	 * by the task, never the client's: no --state-ttl). Set before it
	 * is queued. */
	int		 resumed;
	/* The serialised response, handed back to the loop. */
	char		*out;
	size_t		 outlen;
};

/* Where a result's content stood, to take back a half-made block. */
struct content_mark {
	size_t	 len;
	size_t	 block_at;
	int	 open_msg;
	int	 annotated;
	int	 has_text;
};

void	 mcp__content_mark(const struct mcp_call *c, struct content_mark *m)
	    MCP_HIDDEN;
/* Restores M; returns RC. */
int	 mcp__content_undo(struct mcp_call *c, const struct content_mark *m,
	    int rc) MCP_HIDDEN;
/*
 * A deferred call (mcp_call_defer) moves through these, and the two
 * threads that race at the end, its worker returning from the callback
 * and whoever calls mcp_call_finish, settle it with one compare and
 * swap each: the worker turns HELD into AWAY and lets go, or finds
 * DONE and posts it; mcp_call_finish turns HELD into DONE and leaves
 * the posting to the worker, or finds AWAY and posts it. Either way
 * the call reaches the loop once, after its callback has returned.
 */
enum {
	CALL_DEFER_NONE,	/* answered when the callback returns */
	CALL_DEFER_HELD,	/* deferred; the callback is still running */
	CALL_DEFER_AWAY,	/* deferred; the callback returned */
	CALL_DEFER_DONE		/* finished before the callback returned */
};

struct mcp_call *mcp__call_new(void) MCP_HIDDEN;
/* C's arguments as jansson values, built from c->flat at the first
 * use; NULL when out of memory. The thread that holds C. */
json_t	*mcp__call_args(struct mcp_call *c) MCP_HIDDEN;
void	 mcp__call_free(struct mcp_call *c) MCP_HIDDEN;
/* Frees the call and arguments block this thread kept for its next call. */
void	 mcp__call_spares_free(void) MCP_HIDDEN;
void	 mcp__call_serialise(struct mcp_call *c,
	    int (*write)(struct mcp_call *, struct buf *)) MCP_HIDDEN;
/* Worker: validates, runs the callback, serialises the response.
 * Returns 0 when C is to be posted to the loop now, 1 when it is not
 * the pool's to post (deferred: mcp__pool_post_deferred will). */
int	 mcp__call_run(struct mcp_call *c) MCP_HIDDEN;
/*
 * Loop: runs C, a tool call of a loop tool (MCP_TOOL_LOOP), there and
 * then, its params parsed from the LEN bytes of TEXT (borrowed), or
 * from c->ptext when TEXT is NULL. Returns as mcp__call_run does: 0
 * when the answer is in C, 1 when the callback deferred it.
 */
int	 mcp__call_run_loop(struct mcp_call *c, const char *text, size_t len)
	    MCP_HIDDEN;
/* The loop call whose callback this thread is running, or NULL: notes
 * of it are handled at once, and requests to the client refused. */
extern _Thread_local struct mcp_call *mcp__loop_call MCP_HIDDEN;
/* Any thread: a notifications/message of syslog level SYS (LOGGER may
 * be NULL) for the data TEXT, appended to B. */
int	 mcp__log_note(struct buf *b, int sys, const char *logger,
	    const char *text) MCP_HIDDEN;

/* ---- pool.c ----------------------------------------------------------- */

enum worker_state {
	WORKER_FREE,
	WORKER_RUNNING,
	WORKER_EXITED		/* left on its own: join, then reuse */
};

struct worker {
	struct pool		*pool;
	pthread_t		 tid;
	enum worker_state	 state;		/* under the pool lock */
	int			 join;		/* mcp__pool_stop's own */
};

struct pool {
	int		 started;
	struct worker	*workers;	/* max slots */
	pthread_mutex_t	 lock;
	sem_t		 wakeup;	/* work arrived, or stop */
	struct mcp_call	*head;
	struct mcp_call	*tail;
	int		 queued;
	atomic_int	 nqueued;	/* queued, for lock-free peeks */
	int		 max_queued;
	int		 idle;
	int		 stop;
	int		 nthreads;	/* alive */
	int		 core;		/* kept even when idle */
	int		 max;		/* grown to under slow calls */
	/* Held by the loop while plugged; loop thread only. */
	struct mcp_call	*hhead;
	struct mcp_call	*htail;
	int		 held;
	int		 plugged;
	/* Completions: workers append, the loop swaps the list out. */
	pthread_mutex_t	 clock;
	struct mcp_call	*chead;
	struct mcp_call	*ctail;
	/* Deferred calls not yet posted, under clock: mcp__pool_stop
	 * waits on DCOND for the last. */
	int		 deferred;
	int		 dwait;		/* mcp__pool_stop is waiting */
	pthread_cond_t	 dcond;
	struct ev_loop	*loop;
	ev_async	*wake;
	ev_timer	 grow;		/* loop: growth check, while queued */
	int		(*run)(struct mcp_call *);	/* a worker's job */
};

int	 mcp__pool_start(struct pool *p, int core, int max, int max_queued,
	    struct ev_loop *loop, ev_async *wake,
	    int (*run)(struct mcp_call *)) MCP_HIDDEN;
/* Loop timer: adds workers when all are stuck on slow calls. */
int	 mcp__pool_grow(struct pool *p, double grow_after) MCP_HIDDEN;
/* Loop, after submitting: arms that timer (mcp__pool_grow) if idle. */
void	 mcp__pool_queued(struct pool *p) MCP_HIDDEN;
/* Loop: queues C; MCP_ESTATE when the queue is full (C untouched). */
int	 mcp__pool_submit(struct pool *p, struct mcp_call *c) MCP_HIDDEN;
int	 mcp__pool_full(struct pool *p) MCP_HIDDEN;
void	 mcp__pool_plug(struct pool *p) MCP_HIDDEN;
/* Worker: hands a note (or finished call) to the loop. */
void	 mcp__pool_post(struct pool *p, struct mcp_call *c) MCP_HIDDEN;
/* Worker, in the callback: a call is deferred (counted until posted). */
void	 mcp__pool_defer(struct pool *p) MCP_HIDDEN;
/* Any thread: hands a deferred call, finished, to the loop. */
void	 mcp__pool_post_deferred(struct pool *p, struct mcp_call *c)
	    MCP_HIDDEN;
void	 mcp__pool_unplug(struct pool *p) MCP_HIDDEN;
/* Loop: the completed calls, oldest first. */
struct mcp_call *mcp__pool_completions(struct pool *p) MCP_HIDDEN;
/* Joins the workers and waits for the deferred calls to be finished;
 * queued calls that never ran are returned too. */
struct mcp_call *mcp__pool_stop(struct pool *p) MCP_HIDDEN;

/* ---- clientreq.c: requests to the client from a callback ------------- */

#define MCP_CAP_SAMPLING	0x01
#define MCP_CAP_ELICIT_FORM	0x02
#define MCP_CAP_ELICIT_URL	0x04
#define MCP_CAP_ROOTS		0x08

struct client_req;
struct session;
int	 mcp__clientreq_caps(const struct session *s) MCP_HIDDEN;
/* The MCP_CAP_* bits of a client's capabilities object, at VERSION. */
int	 mcp__caps_bits(const json_t *caps, int version) MCP_HIDDEN;
void	 mcp__clientreq_send(struct mcp_call *n) MCP_HIDDEN;
void	 mcp__clientreq_answer(struct session *s, struct rpc_fields *f)
	    MCP_HIDDEN;
void	 mcp__clientreq_drop(struct session *s, struct mcp_call *c)
	    MCP_HIDDEN;
/* Loop: the client sent notifications/initialized: held requests go. */
void	 mcp__clientreq_ready(struct session *s) MCP_HIDDEN;
/* Loop: the client sent notifications/roots/list_changed. */
void	 mcp__clientreq_roots_changed(struct session *s) MCP_HIDDEN;

/* ---- session.c -------------------------------------------------------- */

/*
 * A transport may route messages: Streamable HTTP sends what a request
 * causes (its notes, its requests to the client, its answer) on that
 * request's own stream. ROUTE is the transport's handle for it, taken
 * from s->route while the input is handled; NULL means the session's
 * own channel (stdio, the legacy stream, the standalone GET stream).
 */
struct session_ops {
	/* Sends one JSON text (no newline) on ROUTE; FINAL when it answers
	 * a request. The transport frames it. */
	int	(*send)(struct session *s, void *route, const char *json,
		    size_t len, int final);
	/* A call or batch takes (+1) or lets go of (-1) ROUTE: once let
	 * go, it sends nothing more there. NULL: no routing. */
	void	(*hold)(struct session *s, void *route, int delta);
	/* mcp_call_close_stream: end ROUTE's connection, keep the route
	 * for a resumption. NULL: nothing to close. */
	void	(*close)(struct session *s, void *route);
	/* mcp_peer_close: end the session once what was sent has gone
	 * out; its id is unknown from now on. NULL: it cannot end. */
	void	(*end)(struct session *s);
	int	 transport;	/* MT_*: what mcp_session_transport names */
	/* --redis: a message for another instance: RELAY_ANSWER, a
	 * response to a request of instance TAG's (8 hex digits); or
	 * RELAY_CANCEL, a notifications/cancelled for a call not running
	 * here (TAG NULL: every instance). JSON is the message. NULL: none. */
	void	(*relay)(struct session *s, int kind, const char *tag,
		    const char *json, size_t len);
};
enum { RELAY_ANSWER = 'r', RELAY_CANCEL = 'c', RELAY_READY = 'i',
	RELAY_POST = 'p' /* a POST /messages, for a legacy SSE stream */,
	RELAY_TASK = 'k' /* a tasks/cancel, for the task's instance */ };

struct session {
	struct entry			 addr;		/* srv->feat.addrs; key:
						   mcp__session_addr */
	int				 listed;	/* in srv->feat.addrs */
	struct mcp_server		*srv;
	const struct session_ops	*ops;
	void				*tdata;		/* the transport's */
	int				 refs;
	int				 closed;
	int				 initialized;
	int				 version;
	int				 log_level;	/* logging/setLevel */
	struct pending			 reqs;		/* ours, unanswered:
						   struct client_req by id */
	json_t				*client_caps;
	int				 caps;		/* MCP_CAP_*, from client_caps */
	json_t				*client_info;
	struct mcp_call			**buckets;
	size_t				 nbuckets;
	int				 inflight;	/* tracked calls */
	int				 pending;	/* still owed an answer */
	int				 max_inflight;
	struct session			*snext;		/* srv->sessions */
	struct session			*sprev;
	json_t				*subs;		/* subscribed uris */
	void				*route;		/* of the input being handled */
	unsigned			 nrequests;	/* requests seen, ever */
	int				 implicit;	/* stateless: no initialize needed */
	int				 ready;		/* notifications/initialized came */
	int				 transport;	/* MT_*, for the metrics */
	int				 counted;	/* counted open */
	int				 why;		/* MR_*: why it ends */
	int				 relayed;	/* the relay has seen it */
	void				*peer_data;	/* the relay's */
	char				 id[40];	/* the transport's id, for the log */
	struct identity			*ident;		/* its latest request's */
	struct mcp_session		*info;		/* for its calls */
	int				 era_only;	/* 2026-07-28 requests only
							   (a modern HTTP POST) */
	struct era_req			*era;		/* the modern request being
							   handled, or NULL */
	struct table			 tasks;		/* struct task, by id */
	int				 tasks_on;	/* the capability was declared */
	int				 ntasks;	/* in tasks */
	int				 shared;	/* other instances serve it too
							   (--redis): its tasks are
							   in the store */
	int				 nlistens;	/* subscriptions/listen open */
	char				 inst[9];	/* ... this instance's tag
							   (8 hex digits, copied
							   once by the transport:
							   the store may go first,
							   at exit), in our request
							   ids; "": none */
	int				 from_peer;	/* handling a message
							   another instance relayed:
							   not relayed again */
};

struct session *mcp__session_new(struct mcp_server *srv,
	    const struct session_ops *ops, void *tdata) MCP_HIDDEN;
/* The id user code knows S by (mcp_call_session_id): the transport's
 * (Mcp-Session-Id, the legacy sessionId), "stdio", or "" for a
 * stateless session, which cannot be reached once its request ends. */
const char *mcp__session_addr(const struct session *s) MCP_HIDDEN;
/* The transport is gone: flag in-flight calls, drop their answers. */
void	 mcp__session_close(struct session *s) MCP_HIDDEN;
void	 mcp__session_unref(struct session *s) MCP_HIDDEN;
int	 mcp__session_send(struct session *s, const char *json, size_t len)
	    MCP_HIDDEN;
int	 mcp__session_sendbuf(struct session *s, struct buf *b) MCP_HIDDEN;
/* Sends an answer (a response) on s->route. */
int	 mcp__session_answer(struct session *s, const char *json, size_t len)
	    MCP_HIDDEN;
/* In-flight table, keyed by id value and type. */
struct mcp_call *mcp__session_find(struct session *s, const char *key,
	    uint32_t hash) MCP_HIDDEN;
void	 mcp__session_track(struct session *s, struct mcp_call *c)
	    MCP_HIDDEN;
void	 mcp__session_untrack(struct session *s, struct mcp_call *c)
	    MCP_HIDDEN;
/* Loop: S opens (initialize accepted, or a stateless request): its info
 * is filled and the open hook runs. Once; before any call is queued. */
void	 mcp__session_open(struct session *s) MCP_HIDDEN;
/* Loop: the request being handled for S is ID's (a new reference is
 * taken): its calls carry it. The first one binds S to its subject. */
void	 mcp__session_identify(struct session *s, struct identity *id)
	    MCP_HIDDEN;

/* ---- era.c: protocol 2026-07-28, request by request ------------------ */

/* What a modern request's _meta says. VNAME is borrowed from it. */
struct era_req {
	const char	*vname;		/* the protocolVersion asked for */
	int		 version;	/* MCP_V20260728 once accepted */
	int		 log_level;	/* syslog number; -1: none asked for */
	int		 caps;		/* MCP_CAP_* declared */
	int		 cache;		/* ERA_CACHE_*, the method's */
	int		 tasks;		/* the extension io.modelcontextprotocol/
					   tasks was declared */
};

#define ERA_CACHE_NONE	0
#define ERA_CACHE_LIST	1	/* lists and server/discover */
#define ERA_CACHE_READ	2	/* resources/read */

/* Does params._meta META name a protocolVersion (a modern request)? */
int	 mcp__era_is_modern(const json_t *meta) MCP_HIDDEN;
/* Checks the required fields of META and its logLevel: 0 and ER filled,
 * or MCP_RPC_INVALID_PARAMS with WHY. */
int	 mcp__era_meta(const json_t *meta, struct era_req *er, char *why,
	    size_t whylen) MCP_HIDDEN;
/* 0 when VNAME is served per request, else MCP_RPC_UNSUPPORTED_VERSION
 * with WHY and *DATA (a new reference: supported and requested). */
int	 mcp__era_version(const char *vname, json_t **data, char *why,
	    size_t whylen) MCP_HIDDEN;
/* Both of the above, in that order. */
int	 mcp__era_check(const json_t *meta, struct era_req *er, json_t **data,
	    char *why, size_t whylen) MCP_HIDDEN;
/* Adds resultType, _meta's serverInfo and (CACHE) ttlMs and cacheScope
 * to RESULT (borrowed). MCP_ENOMEM, or MCP_OK. */
int	 mcp__era_result(const struct mcp_server *srv, json_t *result,
	    int cache) MCP_HIDDEN;
/* The same for a serialised response *OUT (malloc'd, replaced); an
 * error response is left as it is. */
int	 mcp__era_dress(const struct mcp_server *srv, char **out,
	    size_t *outlen, int cache) MCP_HIDDEN;
/* The same for the response in B. */
int	 mcp__era_dress_buf(const struct mcp_server *srv, struct buf *b,
	    int cache) MCP_HIDDEN;
/* server/discover's result, dressed; NULL when out of memory. */
json_t	*mcp__era_discover(const struct mcp_server *srv) MCP_HIDDEN;
/* 1 when METHOD exists in this era (*CACHE: its ERA_CACHE_*), else 0. */
int	 mcp__era_method(const char *method, int *cache) MCP_HIDDEN;
/* The params member that Mcp-Name mirrors for METHOD, or NULL. */
const char *mcp__era_name_of(const char *method) MCP_HIDDEN;
/* Does SRV offer the tasks extension (some tool may run as a task)? */
int	 mcp__era_tasks_on(struct mcp_server *srv) MCP_HIDDEN;
/* Loop: the session that holds the 2026-07-28 tasks and their calls
 * (none of that era outlives its request), made on first use; NULL on
 * ENOMEM. mcp__era_home_abort answers its calls (the grace period is
 * over), mcp__era_home_free ends it (teardown). */
struct session *mcp__era_home(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__era_home_abort(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__era_home_free(struct mcp_server *srv) MCP_HIDDEN;
/* ---- listen.c: subscriptions/listen (2026-07-28) ------------------- */

/* One open subscriptions/listen: its call (CALL_LISTEN, tracked, holding
 * its route) and what it asked for and was granted. */
struct listen {
	struct listen	*next;		/* srv->listens */
	struct listen	*prev;
	struct mcp_call	*call;
	int		 lists;		/* MCP_CHANGED_* */
	json_t		*uris;		/* resourceSubscriptions: uri -> true,
					   or NULL */
	int		 linked;
	struct listen	*dead;		/* srv->listens_dead */
};

/* Loop: checks a listen's PARAMS and the limits for S: 0 with *OUT (a
 * new listen, not linked) and *AGREED (the acknowledged filter, a new
 * reference), or a JSON-RPC error code with WHY. */
int	 mcp__listen_new(struct session *s, const json_t *params,
	    struct listen **out, json_t **agreed, char *why, size_t whylen)
	    MCP_HIDDEN;
void	 mcp__listen_free(struct listen *l) MCP_HIDDEN;
/* Loop: L (its call tracked) is open: acknowledged with AGREED (taken)
 * and listed. */
void	 mcp__listen_link(struct listen *l, json_t *agreed) MCP_HIDDEN;
/* Loop: C, a CALL_LISTEN, ends (answered or dropped): unlisted, freed. */
void	 mcp__listen_gone(struct mcp_call *c) MCP_HIDDEN;
/* Loop: LISTS (MCP_CHANGED_*) changed, URI was updated: to the listens
 * that asked. */
void	 mcp__listen_changed(struct mcp_server *srv, int lists) MCP_HIDDEN;
void	 mcp__listen_updated(struct mcp_server *srv, const char *uri)
	    MCP_HIDDEN;
/* Loop: the server ends every listen, each with its complete answer. */
void	 mcp__listen_end_all(struct mcp_server *srv) MCP_HIDDEN;

/* ---- mrtr.c: multi round-trip requests (2026-07-28) ---------------- */

/* The default of --state-ttl: ten minutes to answer and retry. */
#define MCP_DEF_STATE_TTL	600

struct mrtr;

/* The callback's thread, before the callback of a 2026-07-28 tools/call,
 * prompts/get or resources/read: checks the retry's STATE and RESP
 * (borrowed; NULL when absent) and takes their answers. 0, or -1 when
 * the request is refused: C's -32602 error is set, the callback is not
 * to run. */
int	 mcp__mrtr_begin(struct mcp_call *c, const json_t *state,
	    const json_t *resp) MCP_HIDDEN;
/* The callback's k-th request to the client (PARAMS stolen, may be
 * NULL): MCP_OK with the answer in *RESULT (a new reference), or
 * MCP_EINPUT when it is recorded for the input_required answer;
 * MCP_ENOMEM, or MCP_ESTATE past the bound of requests. */
int	 mcp__mrtr_ask(struct mcp_call *c, const char *method, json_t *params,
	    json_t **result) MCP_HIDDEN;
/* Does C's answer have to be input_required? */
int	 mcp__mrtr_pending(const struct mcp_call *c) MCP_HIDDEN;
/* Appends C's input_required response to B, dressed (c->dressed). */
int	 mcp__mrtr_write(struct mcp_call *c, struct buf *b) MCP_HIDDEN;
int	 mcp__mrtr_round(const struct mcp_call *c) MCP_HIDDEN;
void	 mcp__mrtr_free(struct mrtr *m) MCP_HIDDEN;

/* ---- tasks.c: task-augmented tools/call (2025-11-25) --------------- */

enum task_status {
	TASK_WORKING,
	TASK_COMPLETED,
	TASK_FAILED,
	TASK_CANCELLED,
	TASK_INPUT		/* the extension's input_required */
};

/*
 * A task: one tools/call that was answered with a CreateTaskResult, its
 * call (while it runs), the tasks/result requests waiting for it, and
 * its answer once it has one, until its ttl runs out or its session
 * ends. In its session's table, keyed by id. Loop thread only.
 */
struct task {
	struct entry		 e;		/* first; e.key is id */
	char			 id[33];
	struct session		*sess;		/* not a reference: the
						   session frees it */
	int			 linked;	/* in sess->tasks */
	enum task_status	 status;
	const char		*message;	/* statusMessage, static */
	char			*why;		/* ... or this, owned */
	double			 created;	/* wall clock, s */
	double			 updated;
	long long		 ttl_ms;
	ev_timer		 expire;
	struct mcp_call		*call;		/* running, or NULL */
	struct mcp_call		*waiters;	/* CALL_WAIT, by wnext */
	json_t			*result;	/* the answer's result ... */
	json_t			*error;		/* ... or its error */
	size_t			 bytes;		/* counted in srv->task_bytes */
	int			 era;		/* 2026-07-28 (the extension): in
						   srv->era_home, isError is
						   completed */
	struct identity		*owner;		/* era: who may see it */
	/*
	 * The extension's input_required (mrtr.c's rounds, held here): the
	 * round's requests still unanswered ({key: request}), the answers
	 * given so far ({key: response}, tasks/update) and its
	 * requestState; and what runs the call again once all are
	 * answered: its params (JSON text), its tool and the
	 * capabilities its request declared.
	 */
	json_t			*inputs;
	json_t			*answers;
	char			*state;
	char			*ptext;
	size_t			 ptextlen;
	struct tool		*tool;		/* a reference */
	int			 caps;
};

/* "working", "completed", "failed", "cancelled", "input_required": by
 * enum task_status. */
extern const char *const mcp__task_status_names[5] MCP_HIDDEN;

/* Loop: a task for S that asked for TTL ms (-1: none), clamped to
 * --task-ttl; not yet in S's table. NULL on ENOMEM. */
struct task *mcp__task_new(struct session *s, long long ttl) MCP_HIDDEN;
/* Loop: T is accepted: in its session's table, counted, timed. */
int	 mcp__task_link(struct task *t) MCP_HIDDEN;
/* Loop: ends T: its call is cancelled, its waiters told it is gone
 * (WHY), and it is freed. NULL does nothing. */
void	 mcp__task_free(struct task *t, const char *why) MCP_HIDDEN;
/* Loop: S's task ID, or NULL. */
struct task *mcp__task_find(struct session *s, const char *id)
	    MCP_HIDDEN;
/* The Task object of T (a new reference; NULL on ENOMEM). */
json_t	*mcp__task_json(const struct task *t) MCP_HIDDEN;
/* The same as the tasks extension (2026-07-28) has it, with ttlMs and
 * pollIntervalMs; DETAILED: with its result or error once it has one
 * (tasks/get). */
json_t	*mcp__task_json_era(const struct task *t, int detailed) MCP_HIDDEN;
static inline int
mcp__task_terminal(const struct task *t)
{
	return t->status != TASK_WORKING && t->status != TASK_INPUT;
}
/* Loop: tasks/update: the RESPONSES (borrowed) to T's open requests
 * are taken (others ignored); once none is open, its call runs again,
 * given them. */
void	 mcp__task_update(struct task *t, const json_t *responses)
	    MCP_HIDDEN;
/* Loop: T's call answered with the LEN bytes of JSON (a JSON-RPC
 * response): T is completed or failed, unless it ended already, and
 * its waiters are answered. */
void	 mcp__task_finish(struct task *t, const char *json, size_t len)
	    MCP_HIDDEN;
/* Loop: tasks/cancel: T is cancelled and its call told to stop. */
void	 mcp__task_cancel(struct task *t) MCP_HIDDEN;
/* Loop: W (a CALL_WAIT, tracked) waits for T, or leaves it. */
void	 mcp__task_wait(struct task *t, struct mcp_call *w) MCP_HIDDEN;
void	 mcp__task_unwait(struct mcp_call *w) MCP_HIDDEN;
/* Loop: the answer to tasks/result ID for T, terminal, into B; *CODE
 * is its error code, 0 for a result. */
int	 mcp__task_answer(const struct task *t, const json_t *id,
	    struct buf *b, int *code) MCP_HIDDEN;
/* Loop: a page of S's tasks (tasks/list), as tools/list. */
json_t	*mcp__tasks_list(struct session *s, const char *cursor, int limit,
	    int *bad) MCP_HIDDEN;
/* Loop: is a task's call still owed its answer? A drain waits for it:
 * it holds no stream that the transports would count. */
int	 mcp__tasks_running(struct mcp_server *srv) MCP_HIDDEN;
/* Loop: does a task of S still run its call? (--redis: S, idle here,
 * stays, for the clients of its other instances read that task.) */
int	 mcp__tasks_running_in(const struct session *s) MCP_HIDDEN;
/* Loop: S ends: every task of it goes. */
void	 mcp__tasks_close(struct session *s) MCP_HIDDEN;

/* ---- taskshare.c: tasks every instance can reach (--redis) ---------- */

/*
 * Where tasks are shared, main/ wires a store (redis.c's): each task has
 * a record, written by the instance running it (its only writer while it
 * lives) and read by any; a session's tasks are listed in an index that
 * ends with the session. The store's functions answer FN once, later,
 * unless they return non-zero (the store is away: then never). VAL and
 * VALS are borrowed for the callback, and untrusted. Loop thread.
 */
enum { TS_OK, TS_NONE, TS_ERR };	/* redis.c's ST_OK, ST_NONE, ST_ERR */
typedef void	(*tstore_fn)(void *arg, int status, const char *val,
		    size_t len);
typedef void	(*tstore_list_fn)(void *arg, int status, size_t n,
		    const char *const *vals, const size_t *lens);
struct task_store {
	/* SET task ID's record REC (LEN bytes) for TTL ms; SID (or NULL):
	 * the session whose index names it; WORKING: it has just started
	 * (the heartbeat is to name it at once). */
	int	(*put)(void *st, const char *id, const char *sid,
		    const char *rec, size_t len, long long ttl_ms,
		    int working);
	int	(*get)(void *st, const char *id, size_t max, tstore_fn fn,
		    void *arg);
	int	(*del)(void *st, const char *id, const char *sid);
	/* The records of SID's index, oldest first, from OFFSET, at most
	 * LIMIT, each at most MAX bytes; one more (a string "more") when
	 * there are more. */
	int	(*list)(void *st, const char *sid, int offset, int limit,
		    size_t max, tstore_list_fn fn, void *arg);
	/* Relays JSON (LEN bytes: {"taskId", and for tasks/update
	 * "inputResponses"}, a cancel without) to instance TAG (8 hex
	 * digits), for a task of session SID (NULL: of no session). */
	int	(*tell)(void *st, const char *tag, const char *sid,
		    const char *json, size_t len);
};

/* Loop: tasks are shared through OPS (ST; TAG, this instance's); NULL
 * OPS: no longer (the store goes). */
void	 mcp__taskshare_set(struct mcp_server *srv,
	    const struct task_store *ops, void *st, const char *tag)
	    MCP_HIDDEN;
/* Is T in the store (its session shared, or a 2026-07-28 task)? */
int	 mcp__task_shared(const struct task *t) MCP_HIDDEN;
/* Loop: T's record as it is now goes to the store; or T's goes. */
void	 mcp__taskshare_put(struct task *t) MCP_HIDDEN;
/* Loop: the store is (back) up: every shared task held here is written
 * again (a write while it was away, an end say, was lost). */
void	 mcp__taskshare_again(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__taskshare_del(struct task *t) MCP_HIDDEN;
/* Loop: C (a CALL_WAIT, tracked, C->method the request's) is answered
 * from the store: the task ID's record, seen from session S: tasks/get,
 * tasks/result (waiting until it ends), tasks/cancel (the instance
 * running it is told, and the answer waits for it to end); or S's index
 * (tasks/list: ID is the cursor, or NULL). ERA: the extension's. */
void	 mcp__taskshare_ask(struct session *s, struct mcp_call *c,
	    const char *id, int era, const json_t *resp) MCP_HIDDEN;
/* Loop: C is answered or dropped: its wait on the store ends. */
void	 mcp__taskshare_forget(struct mcp_call *c) MCP_HIDDEN;
/* Loop: another instance asks for the cancel of a task of ours, or
 * brings it a tasks/update (JSON, LEN bytes, untrusted: {"taskId": ...,
 * "inputResponses"?}). */
void	 mcp__taskshare_cancelled(struct mcp_server *srv, const char *json,
	    size_t len) MCP_HIDDEN;
/* REC (LEN bytes, untrusted: fuzzed, test/fuzz/record.c), the record of
 * task ID, into T, a copy on the stack whose why, result and error are
 * its own (mcp__taskshare_unload frees them, and *HOLD); *SID, *SUB and
 * *INST are borrowed from *HOLD. -1 when it is no record of ours. */
int	 mcp__taskshare_load(const char *rec, size_t len, const char *id,
	    struct task *t, json_t **hold, const char **sid,
	    const char **sub, const char **inst) MCP_HIDDEN;
void	 mcp__taskshare_unload(struct task *t, json_t *hold) MCP_HIDDEN;
/* Loop: the JSON array of the ids of the shared tasks running here, for
 * the heartbeat (a lost instance's are failed by another). */
int	 mcp__taskshare_working(struct mcp_server *srv, struct buf *out)
	    MCP_HIDDEN;

/* Loop: S's record for another instance (--redis): its id, version,
 * client capabilities and info, log level, subscriptions, readiness and
 * subject, as one JSON text (a new string, NULL on ENOMEM). AT
 * (wall-clock seconds) and BY (the writer) make each write's text its
 * own. */
char	*mcp__session_export(const struct session *s, double at,
	    const char *by) MCP_HIDDEN;
/* Loop: S (new, not open) takes the record DATA (LEN bytes, untrusted:
 * checked like input) of session ID; then it is initialized and bound
 * to the record's subject. MCP_EINVAL when it is not such a record. */
int	 mcp__session_import(struct session *s, const char *id,
	    const char *data, size_t len) MCP_HIDDEN;

/* ---- relay.c: the methods answered by a relay (mcp_server_set_relay) */

/* Loop: may a session open? NULL, or why not (for a 503). */
const char *mcp__relay_admit(struct mcp_server *srv) MCP_HIDDEN;
/* Loop: hands the relay a message of S's (a new reference). */
void	 mcp__relay_deliver(struct session *s, json_t *msg) MCP_HIDDEN;
/* Loop: tells the relay that C is cancelled (REASON), then frees C. */
void	 mcp__relay_dropped(struct mcp_call *c, const char *reason)
	    MCP_HIDDEN;
/* Loop: S ended; the relay is told if it ever saw S. */
void	 mcp__relay_closed(struct session *s) MCP_HIDDEN;

/* ---- protocol.c ------------------------------------------------------- */

/* Parses LEN bytes of one message (or batch) and acts on it. A parse
 * error is sent to the session, or, when ERR is not NULL, written there
 * as a JSON-RPC error and -1 returned (HTTP answers it in the body). */
int	 mcp__protocol_input(struct session *s, const char *data, size_t len,
	    struct buf *err) MCP_HIDDEN;
/* Its 400s, with no session (ERR filled): 0 when DATA would go on. */
int	 mcp__protocol_precheck(struct mcp_server *srv, const char *data,
	    size_t len, struct buf *err) MCP_HIDDEN;
/* Loop: T (input_required, every request answered) runs its call
 * again, with PTEXT (LEN bytes: its params, requestState and
 * inputResponses): MCP_OK, or why not. */
int	 mcp__protocol_resume(struct task *t, char *ptext, size_t len)
	    MCP_HIDDEN;
/* Loop: a call came back from the pool, or a note from a running one. */
void	 mcp__protocol_complete(struct mcp_call *c) MCP_HIDDEN;
void	 mcp__protocol_note(struct mcp_call *n) MCP_HIDDEN;
/* Flags C cancelled; no answer will be sent for it. */
void	 mcp__protocol_drop(struct mcp_call *c) MCP_HIDDEN;
/* Drops every call whose answer was to go on ROUTE. */
/* Loop: a message another instance relayed for S (RELAY_*; JSON, LEN
 * untrusted): MCP_OK, or MCP_EINVAL when it is not one. */
int	 mcp__protocol_relayed(struct session *s, int kind, const char *json,
	    size_t len) MCP_HIDDEN;
/* Loop: the ids of S's calls answering on ROUTE, a JSON array (to free),
 * or NULL for none. */
char	*mcp__protocol_route_ids(struct session *s, void *route) MCP_HIDDEN;
void	 mcp__protocol_drop_route(struct session *s, void *route)
	    MCP_HIDDEN;
/* Grace period over: answer every call still running with an error. */
void	 mcp__protocol_abort(struct session *s) MCP_HIDDEN;
/* Sends an error to the request ID (NULL: the id omitted), e.g. for an
 * oversized line. */
void	 mcp__protocol_error(struct session *s, const json_t *id, int code,
	    const char *msg) MCP_HIDDEN;

/* ---- metrics.c: the counters behind /metrics, loop thread only ------- */

enum {	/* methods, as counted */
	MM_INITIALIZE, MM_PING, MM_TOOLS_LIST, MM_TOOLS_CALL,
	MM_RESOURCES_LIST, MM_TEMPLATES_LIST, MM_RESOURCES_READ,
	MM_SUBSCRIBE, MM_UNSUBSCRIBE, MM_PROMPTS_LIST, MM_PROMPTS_GET,
	MM_COMPLETE, MM_SET_LEVEL, MM_OTHER, MM_INVALID, MM_N,
	MM_PENDING = -2		/* not looked up yet */
};
enum { MO_OK, MO_IS_ERROR, MO_ERROR, MO_CANCELLED, MO_TIMEOUT, MO_N };
enum { MT_STDIO, MT_SSE, MT_STREAMABLE, MT_N };	/* transports */
enum {	/* why a session ended */
	MR_CLOSED, MR_DELETED, MR_EXPIRED, MR_CUT, MR_SHUTDOWN, MR_N
};
enum {	/* what refused a connection or a request */
	ML_PER_IP, ML_TOTAL, ML_MAX_SESSIONS, ML_TOO_LARGE, ML_DRAINING, ML_N
};
enum {	/* HTTP routes, as counted and logged */
	HTTP_R_MCP, HTTP_R_SSE, HTTP_R_MESSAGES, HTTP_R_HEALTHZ,
	HTTP_R_METRICS, HTTP_R_METADATA, HTTP_R_OTHER, HTTP_R_N
};

#define MCP_METRIC_BUCKETS	13
#define MAX_CODES		64	/* (method, error code) pairs */
#define MAX_HTTP		128	/* (route, status) pairs */

/* A tool's own counters, made on its first counted call (loop). */
struct tool_stats {
	uint64_t	 out[MO_N];
	uint64_t	 bucket[MCP_METRIC_BUCKETS];
	double		 sum;
};

/* On a cache line of its own: only the loop thread writes it. */
struct metrics {
	_Alignas(64) int on;		/* --metrics or --metrics-listen */
	int		 cur;		/* the method of the request being
					 * answered on the loop (MM_*), or
					 * MM_PENDING: CUR_NAME's, or -1 */
	const char	*cur_name;
	double		 started;	/* wall clock */
	uint64_t	 req[MM_N][MO_N];
	struct {
		int	 method;
		int	 code;
		uint64_t n;
	}		 codes[MAX_CODES];
	int		 ncodes;
	uint64_t	 codes_other;
	uint64_t	 opened[MT_N];
	uint64_t	 ended[MT_N][MR_N];
	struct {
		short	 route;
		short	 status;
		uint64_t n;
	}		 http[MAX_HTTP];
	int		 nhttp;
	uint64_t	 body_in;
	uint64_t	 body_out;
	uint64_t	 refused[ML_N];
	uint64_t	 slow;
};

void	 mcp__metrics_init(struct metrics *m) MCP_HIDDEN;
int	 mcp__metrics_method(const char *name) MCP_HIDDEN;
void	 mcp__metrics_answer(struct metrics *m, int method, int outcome,
	    int code) MCP_HIDDEN;
/* C ended with OUTCOME (CODE for MO_ERROR); counted once per call. */
void	 mcp__metrics_call(struct mcp_server *srv, struct mcp_call *c,
	    int outcome, int code) MCP_HIDDEN;
void	 mcp__metrics_http(struct metrics *m, int route, int status)
	    MCP_HIDDEN;
/* A session became one to count (TRANSPORT an MT_*), or ended. */
void	 mcp__metrics_session_open(struct session *s, int transport)
	    MCP_HIDDEN;
void	 mcp__metrics_session_end(struct session *s) MCP_HIDDEN;
int	 mcp__metrics_render(struct mcp_server *srv, struct buf *b)
	    MCP_HIDDEN;
const char *mcp__metrics_route_name(int route) MCP_HIDDEN;

/* ---- the server object, as the layers under main/ see it -------------- */

/*
 * How the layers under main/ reach it: main/server.c fills this in
 * (mcp_server_new), and they call through it, never naming its
 * functions, as libuv's handles carry their callbacks. Loop thread.
 */
struct server_hooks {
	/* Something a drain waits for may have ended (a call, a stream, a
	 * write): the loop stops if nothing is left. While draining only:
	 * call it through mcp__server_check_drained. */
	void	(*check_drained)(struct mcp_server *srv);
};

/*
 * The server as the layers under main/ see it: what it serves, its
 * sessions, the pool, the loop and the counters. main/'s own part
 * (signals, the shutdown, the transports) is struct host (main/main.h),
 * which begins with this; the public mcp_server points to it.
 */
struct mcp_server {
	char			*name;
	char			*version;
	char			*title;
	char			*instructions;
	size_t			 max_message;
	int			 queue_size;
	int			 page_size;
	int			 tool_timeout_ms;
	int			 max_batch;
	int			 max_subscriptions;
	int			 task_ttl_ms;	/* the most a task is kept */
	int			 max_tasks;
	int			 max_session_tasks;
	size_t			 max_task_bytes;
	/* MRTR (mrtr.c): the key of requestState's HMAC, from
	 * --state-key-file or random at mcp_server_run; how long a state
	 * is good for, in seconds (--state-ttl). Read-only once running. */
	unsigned char		 state_key[32];
	int			 state_key_set;
	int			 state_ttl;
	int			 ntasks;	/* loop: kept now, all sessions */
	size_t			 task_bytes;	/* loop: their results' */
	int			 max_listens;	/* --max-listens */
	int			 nlistens;	/* loop: open now */
	struct listen		*listens;	/* loop: every one open */
	/* loop: the walks of srv->listens under way, and the listens
	 * that ended meanwhile, freed once the last walk is over (a send
	 * may end them all: stdio's EPIPE starts the drain). */
	int			 listens_walking;
	struct listen		*listens_dead;
	struct session		*era_home;	/* loop: 2026-07-28 tasks */
	/* loop: where tasks are shared (taskshare.c), or NULL */
	const struct task_store	*tshare;
	void			*tshare_st;
	char			 tshare_tag[9];
	struct registry		 reg;
	struct features		 feat;
	struct session		*sessions;	/* loop: every session */
	struct pool		 pool;
	struct ev_loop		*loop;
	const struct server_hooks *hooks;	/* main/'s */
	int			 running;	/* mcp_server_run is on */
	int			 draining;	/* input stops; set by main/ */
	double			 out_at;	/* answer bytes last went out */
	struct metrics		 metrics;
	const struct mcp_relay	*relay;		/* NULL: the methods are ours */
	void			*relay_udata;
	/* mcp_server_on_session: set before run, loop thread after */
	mcp_session_open_fn	 sess_open;
	mcp_session_close_fn	 sess_close;
	void			*sess_udata;
	void			(*sess_free)(void *);
	/* The setup calls' first failure (mcp__setup_keep) */
	atomic_int		 setup_over;	/* run or main has begun */
	atomic_int		 setup_rc;	/* MCP_OK: none failed */
	atomic_int		 setup_fails;
	_Atomic(const char *)	 setup_fn;	/* the first that failed */
};

/* Loop: something a drain waits for may have ended. Costs a test, and
 * nothing more, while the server is not draining. */
static inline void
mcp__server_check_drained(struct mcp_server *srv)
{
	if (srv->draining)
		srv->hooks->check_drained(srv);
}

/* Loop: bytes of an answer went to a client, or were handed to MHD for
 * one (a drain past its grace period waits while output moves). */
static inline void
mcp__server_progress(struct mcp_server *srv)
{
	srv->out_at = ev_now(srv->loop);
}

#endif /* MCP_SERVER_H */
