/*
 * mcp-int.h: internal structures and the mcp__ functions shared between
 * the layers. Nothing here is installed. The layers, top to bottom:
 *
 *   transport_stdio.c   bytes <-> JSON-RPC messages on fds 0 and 1
 *   http.c              the libmicrohttpd daemon in the loop, routing, checks
 *   transport_sse.c     legacy HTTP+SSE: GET /sse, POST /messages
 *   transport_streamable.c  /mcp: sessions, per-POST routes (s->route,
 *                       session_ops hold and close), event logs
 *   session.c           one client: version, capabilities, in-flight table
 *   protocol.c          JSON-RPC envelope rules and the MCP methods
 *   registry.c          the tool table with compiled schemas
 *   features.c          resources, templates, prompts, completion
 *   table.c             the ordered, hashed table under both of those
 *   pool.c              worker threads, job queue, completion queue
 *   call.c              mcp_call/mcp_args/mcp_result: runs on the workers
 *   metrics.c           counters for /metrics, loop thread only
 *   systemd.c           passed sockets, the notify socket
 *   log.c               lines tagged by the request a thread serves
 *
 * Thread rule: everything touching a session, a transport or the loop runs
 * on the loop thread. Workers see only their own struct mcp_call, the tool
 * it holds a reference to, and the two queues in struct pool.
 */
#ifndef MCP_INT_H
#define MCP_INT_H

#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>

#include <ev.h>
#include <jansson.h>

#include "mcp.h"
#include "schema.h"

#define MCP_HIDDEN	__attribute__((visibility("hidden")))

/* Defaults, documented in mcp_server_new(3) and mcp_server_main(3). */
#define MCP_DEF_MAX_MESSAGE	(4u * 1024 * 1024)
#define MCP_DEF_QUEUE_SIZE	1024
#define MCP_DEF_PAGE_SIZE	100
#define MCP_DEF_GRACE_MS	5000
#define MCP_DEF_MAX_INFLIGHT	4096	/* per session */
#define MCP_DEF_MAX_WORKERS	64
#define MCP_DEF_MAX_BATCH	128	/* messages in a JSON-RPC batch */
#define MCP_DEF_MAX_SUBS	1024	/* resources/subscribe, per session */
#define MCP_MAX_URI		8192	/* bytes of a subscribed or read uri */
#define MCP_GROW_AFTER		0.02	/* s a call waits before the pool grows */
#define MCP_STALL_S		2.0	/* s of stalled output that end a drain */

/* Protocol versions as yyyymmdd, so features gate with >=. */
#define MCP_V20241105	20241105
#define MCP_V20250326	20250326
#define MCP_V20250618	20250618
#define MCP_V20251125	20251125
#define MCP_V_LATEST	MCP_V20251125

#define MCP_RID_MAX	65	/* an HTTP request id, with its NUL */
#define MCP_LOG_FORCE	0x100	/* or'ed into a level: written at any level */

/* ---- buf.c: a growable byte buffer with a read offset ----------------- */

struct buf {
	char	*data;
	size_t	 off;	/* bytes before off are consumed */
	size_t	 len;	/* bytes in use, from 0 */
	size_t	 cap;
};

int	 mcp__buf_reserve(struct buf *b, size_t extra) MCP_HIDDEN;
int	 mcp__buf_add(struct buf *b, const void *p, size_t n) MCP_HIDDEN;
int	 mcp__buf_addc(struct buf *b, char c) MCP_HIDDEN;
int	 mcp__buf_adds(struct buf *b, const char *s) MCP_HIDDEN;
int	 mcp__buf_addjson(struct buf *b, const json_t *v) MCP_HIDDEN;
void	 mcp__buf_consume(struct buf *b, size_t n) MCP_HIDDEN;
void	 mcp__buf_reset(struct buf *b) MCP_HIDDEN;
void	 mcp__buf_free(struct buf *b) MCP_HIDDEN;
char	*mcp__buf_steal(struct buf *b, size_t *lenp) MCP_HIDDEN;

/* ---- log.c ------------------------------------------------------------ */

extern atomic_int mcp__log_level MCP_HIDDEN;
#define MCP_LOG(lvl, ...) do {						\
	if ((lvl) <= atomic_load_explicit(&mcp__log_level,		\
	    memory_order_relaxed))					\
		mcp_log((lvl), __VA_ARGS__);				\
} while (0)
/* What the request this thread serves puts on each of its log lines. */
struct log_ctx {
	const json_t	*id;	/* the JSON-RPC id */
	const char	*sid;	/* its session's id */
	const char	*rid;	/* the HTTP request id */
	const char	*tool;	/* the tool being called */
};
extern _Thread_local struct log_ctx mcp__lctx MCP_HIDDEN;
extern int	 mcp__log_json MCP_HIDDEN;	/* --log-format json */
extern int	 mcp__log_fd MCP_HIDDEN;

/* The figures of an event line: a call's end, an HTTP access. */
struct log_fields {
	const char	*outcome;	/* NULL: none */
	double		 duration_ms;	/* < 0: none */
	const char	*method;
	const char	*route;
	int		 status;	/* 0: none */
	long long	 bytes_in;	/* < 0: none */
	long long	 bytes_out;
};
void	 mcp__log_fields(int level, const struct log_fields *f,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)))
	    MCP_HIDDEN;
int	 mcp__log_open(const char *path) MCP_HIDDEN;
void	 mcp__log_reopen(void) MCP_HIDDEN;

/* ---- json.c: the hot-path parser and serialiser ---------------------- */

#define MCP_JSON_ESYNTAX	1	/* not JSON: -32700 */
#define MCP_JSON_ENOMEM		2
#define MCP_JSON_ERANGE		3	/* a number too big to keep exact */
#define MCP_JSON_EDEPTH		4	/* nested deeper than we accept */

struct json_perr {
	int	 code;
	size_t	 position;
	char	 text[80];
	int	 has_nul;	/* not an error: a string held \u0000 */
};

json_t	*mcp__json_parse(const char *data, size_t len, struct json_perr *err)
	    MCP_HIDDEN;
size_t	 mcp__fmt_int(char *out, long long v) MCP_HIDDEN;
/* How many elements the JSON array in DATA has, or -1: not an array. */
long	 mcp__json_array_count(const char *data, size_t len) MCP_HIDDEN;
struct rpc_fields;
/* Parses one message: an object fills F without building it as a whole
 * (returns 1); anything else comes back in *WHOLE (returns 0); -1 on
 * error, with ERR set. */
int	 mcp__json_parse_message(const char *data, size_t len,
	    struct rpc_fields *f, json_t **whole, struct json_perr *err)
	    MCP_HIDDEN;
/* Are the N bytes at S UTF-8 (JSON's rules: no overlongs, surrogates)? */
int	 mcp__utf8_valid(const char *s, size_t n) MCP_HIDDEN;
/* V's string when V is a string without \u0000, else NULL: for the
 * protocol's names, uris and arguments, which are C strings. */
const char *mcp__json_cstr(const json_t *v) MCP_HIDDEN;
/* Appends S (N bytes) as a JSON string; invalid UTF-8 becomes U+FFFD. */
int	 mcp__buf_addstr(struct buf *b, const char *s, size_t n) MCP_HIDDEN;

/* Levels of notifications/message, syslog's numbers (debug 7). */
#define MCP_SYSLOG_DEBUG	7
int	 mcp__level_syslog(int mcp_log_level) MCP_HIDDEN;
const char *mcp__level_name(int syslog_level) MCP_HIDDEN;
int	 mcp__level_parse(const char *name) MCP_HIDDEN;
/* Appends a number: integral values without a fraction. */
int	 mcp__buf_addnum(struct buf *b, double d) MCP_HIDDEN;
/* An integral id written as a real ("2.0", "1e2"), kept as TEXT (behind
 * a 0xff byte, which no parsed string holds) so that it is echoed as
 * sent; mcp__buf_addid writes any id. */
json_t	*mcp__json_id_raw(const char *text, size_t len) MCP_HIDDEN;
int	 mcp__json_id_is_raw(const json_t *id) MCP_HIDDEN;
/* Is the number written as TEXT (LEN bytes) a finite integral value? */
int	 mcp__json_integral(const char *text, size_t len, double *out)
	    MCP_HIDDEN;
int	 mcp__buf_addid(struct buf *b, const json_t *id) MCP_HIDDEN;

/* ---- base64.c --------------------------------------------------------- */

char	*mcp__base64(const void *data, size_t len) MCP_HIDDEN;

/* ---- jsonrpc.c: the envelope, pure ------------------------------------ */

enum rpc_kind {
	RPC_REQUEST,
	RPC_NOTIFICATION,
	RPC_RESPONSE,
	RPC_INVALID
};

/*
 * The members of one message object that JSON-RPC cares about, as the
 * envelope parser or mcp__rpc_fields_from_json found them. ID and PARAMS
 * are owned references (a caller may steal them by setting them NULL);
 * release the rest with mcp__rpc_fields_clear.
 */
struct rpc_fields {
	int	 jsonrpc;	/* 0 absent, 1 "2.0", 2 anything else */
	int	 method;	/* 0 absent, 1 a usable string, 2 other */
	char	 mname[96];	/* the method, when method == 1 */
	int	 has_id;
	json_t	*id;
	json_t	*params;	/* built only when needed (params_of) */
	/* A params object is left as text for the worker to build; the
	 * loop only needs tools/call's name and the type of arguments. */
	const char *praw;
	size_t	 prawlen;
	char	 tname[132];
	int	 tname_kind;	/* 0 absent, 1 a name, 2 not a string, 3 too long */
	int	 args_kind;	/* 0 absent, 1 an object, 2 other */
	int	 has_result;	/* a result or error member */
	json_t	*result;	/* a response's result, owned */
	json_t	*error;		/* or its error, owned */
};

struct rpc_msg {
	enum rpc_kind	 kind;
	const char	*method;	/* requests and notifications */
	json_t		*id;		/* from the fields; NULL when unusable */
	const char	*why;		/* RPC_INVALID: the reason */
};

void	 mcp__rpc_classify(struct rpc_fields *f, struct rpc_msg *m)
	    MCP_HIDDEN;
/* Fills F from a parsed object (a batch element); MCP_EINVAL if MSG is
 * not an object. */
int	 mcp__rpc_fields_from_json(json_t *msg, struct rpc_fields *f)
	    MCP_HIDDEN;
void	 mcp__rpc_fields_clear(struct rpc_fields *f) MCP_HIDDEN;
int	 mcp__rpc_result(struct buf *b, const json_t *id,
	    const json_t *result) MCP_HIDDEN;
int	 mcp__rpc_error(struct buf *b, const json_t *id, int code,
	    const char *msg, const json_t *data) MCP_HIDDEN;
int	 mcp__rpc_notification(struct buf *b, const char *method,
	    const json_t *params) MCP_HIDDEN;
/* A key that tells ids apart by value and JSON type ("i42", "s42"). */
int	 mcp__rpc_id_key(const json_t *id, char *key, size_t keylen)
	    MCP_HIDDEN;

/* The id of a message too large to parse, found by a streaming scan of
 * its top-level members (jsonrpc.c). */
struct idscan {
	int	 state;
	int	 depth;
	int	 instr;
	int	 esc;
	int	 which;		/* the key just read: 1 id, 2 method */
	char	 key[8];
	size_t	 klen;
	char	 val[64];	/* the id's value so far */
	size_t	 vlen;
	int	 vover;		/* too long to be an id */
	char	 id[64];
	size_t	 idlen;
	int	 has_id;
	int	 has_method;
	int	 complete;	/* the whole object was seen */
};

void	 mcp__idscan_init(struct idscan *sc) MCP_HIDDEN;
void	 mcp__idscan_feed(struct idscan *sc, const char *data, size_t len)
	    MCP_HIDDEN;
/* A new reference to the id found, or NULL. */
json_t	*mcp__idscan_id(const struct idscan *sc) MCP_HIDDEN;

/* ---- table.c: entries in registration order, hashed by key ---------- */

/*
 * The header at the start of a tool or a feat. The owner keeps the key
 * string (key points into it), the reference count and the lock; every
 * mcp__table_ function runs with that lock held.
 */
struct entry {
	struct entry	*next;		/* registration order */
	struct entry	*hnext;		/* hash chain */
	uint64_t	 seq;		/* registration number, the cursor */
	const char	*key;		/* the owner's name or uri */
};

struct table {
	struct entry	*head;
	struct entry	*tail;
	struct entry	*buckets[64];
	uint64_t	 next_seq;
};

void	 mcp__table_init(struct table *t) MCP_HIDDEN;
/* The entry under KEY, or NULL. */
struct entry *mcp__table_find(struct table *t, const char *key) MCP_HIDDEN;
/* Appends E (its key set) with the next seq; MCP_EEXIST if the key is
 * taken, and E is then untouched. */
int	 mcp__table_add(struct table *t, struct entry *e) MCP_HIDDEN;
/* Unlinks and returns the entry under KEY (the caller drops it), or
 * NULL. */
struct entry *mcp__table_remove(struct table *t, const char *key)
	    MCP_HIDDEN;
/* Calls DROP on every entry, in order, and empties the table. */
void	 mcp__table_clear(struct table *t, void (*drop)(struct entry *))
	    MCP_HIDDEN;
/* A page of at most LIMIT entries (0: all) from CURSOR (NULL: the
 * start) as {MEMBER: [TO_JSON(e, VERSION)...], nextCursor?}. NULL on a
 * bad cursor (*bad set) or ENOMEM. */
json_t	*mcp__table_list(struct table *t, const char *member,
	    const char *cursor, int limit, int version,
	    json_t *(*to_json)(const struct entry *, int), int *bad)
	    MCP_HIDDEN;
/* FNV-1a; the sessions and streams hash their ids with it too. */
uint32_t mcp__hash(const char *s) MCP_HIDDEN;

/* ---- registry.c ------------------------------------------------------- */

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
	atomic_int		 timeout_ms;	/* 0: the server's */
	mcp_tool_fn		 fn;
	void			*udata;
	void			(*udata_free)(void *);
	struct tool_stats	*stats;		/* loop: its metrics */
};

struct registry {
	pthread_mutex_t	 lock;
	struct table	 tools;
	int		 count;
};

int	 mcp__registry_new(struct registry *r) MCP_HIDDEN;
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

struct features {
	pthread_mutex_t	 lock;		/* the lists */
	struct table	 lists[FEAT_NKINDS];
	mcp_tool_fn	 complete_fn;
	void		*complete_udata;
	void		(*complete_free)(void *);
	mcp_roots_fn	 roots_fn;	/* roots/list_changed; set before run */
	void		*roots_udata;
	void		(*roots_free)(void *);
	pthread_mutex_t	 nlock;		/* the two below */
	int		 changed;	/* MCP_CHANGED_* */
	struct upd	*uhead;
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
/* Loop: start and stop the notification watcher. */
void	 mcp__features_start(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__features_stop(struct mcp_server *srv) MCP_HIDDEN;

/* ---- the call (job): call.c, pool.c, session.c ------------------------ */

enum call_kind {
	CALL_TOOL,		/* tools/call */
	CALL_READ,		/* resources/read */
	CALL_PROMPT,		/* prompts/get */
	CALL_COMPLETE,		/* completion/complete */
	CALL_ROOTS		/* roots/list_changed: no id, no answer */
};

struct session;
struct batch;

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
	struct batch	*batch;		/* JSON-RPC batch it belongs to */
	void		*route;		/* loop: where its messages go */
	struct tool	*tool;		/* a reference */
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
	int		 nvalues;	/* completion values given */
	long long	 total;		/* -1: not set */
	int		 has_more;
	json_t		*id;		/* owned */
	char		*ptext;		/* params as JSON text, for the worker */
	size_t		 ptextlen;
	json_t		*params;	/* built and owned by the worker */
	json_t		*args;		/* borrowed from params */
	int		 has_nul;	/* a string in params holds \u0000 */
	atomic_int	 cancelled;
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
struct mcp_call *mcp__call_new(void) MCP_HIDDEN;
void	 mcp__call_free(struct mcp_call *c) MCP_HIDDEN;
void	 mcp__call_serialise(struct mcp_call *c,
	    int (*write)(struct mcp_call *, struct buf *)) MCP_HIDDEN;
/* Worker: validates, runs the callback, serialises the response. */
void	 mcp__call_run(struct mcp_call *c) MCP_HIDDEN;

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
	struct ev_loop	*loop;
	ev_async	*wake;
	ev_timer	 grow;		/* loop: growth check, while queued */
	void		(*run)(struct mcp_call *);	/* a worker's job */
};

int	 mcp__pool_start(struct pool *p, int core, int max, int max_queued,
	    struct ev_loop *loop, ev_async *wake,
	    void (*run)(struct mcp_call *)) MCP_HIDDEN;
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
void	 mcp__pool_unplug(struct pool *p) MCP_HIDDEN;
/* Loop: the completed calls, oldest first. */
struct mcp_call *mcp__pool_completions(struct pool *p) MCP_HIDDEN;
/* Joins the workers; queued calls that never ran are returned too. */
struct mcp_call *mcp__pool_stop(struct pool *p) MCP_HIDDEN;

/* ---- clientreq.c: requests to the client from a callback ------------- */

#define MCP_CAP_SAMPLING	0x01
#define MCP_CAP_ELICIT_FORM	0x02
#define MCP_CAP_ELICIT_URL	0x04
#define MCP_CAP_ROOTS		0x08

struct client_req;
struct session;
int	 mcp__clientreq_caps(const struct session *s) MCP_HIDDEN;
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
};

struct session {
	struct mcp_server		*srv;
	const struct session_ops	*ops;
	void				*tdata;		/* the transport's */
	int				 refs;
	int				 closed;
	int				 initialized;
	int				 version;
	int				 log_level;	/* logging/setLevel */
	struct client_req		*reqs;		/* ours, unanswered */
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
	char				 id[40];	/* the transport's id, for the log */
};

struct session *mcp__session_new(struct mcp_server *srv,
	    const struct session_ops *ops, void *tdata) MCP_HIDDEN;
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

/* ---- protocol.c ------------------------------------------------------- */

/* Parses LEN bytes of one message (or batch) and acts on it. A parse
 * error is sent to the session, or, when ERR is not NULL, written there
 * as a JSON-RPC error and -1 returned (HTTP answers it in the body). */
int	 mcp__protocol_input(struct session *s, const char *data, size_t len,
	    struct buf *err) MCP_HIDDEN;
/* Loop: a call came back from the pool, or a note from a running one. */
void	 mcp__protocol_complete(struct mcp_call *c) MCP_HIDDEN;
void	 mcp__protocol_note(struct mcp_call *n) MCP_HIDDEN;
/* Flags C cancelled; no answer will be sent for it. */
void	 mcp__protocol_drop(struct mcp_call *c) MCP_HIDDEN;
/* Drops every call whose answer was to go on ROUTE. */
void	 mcp__protocol_drop_route(struct session *s, void *route)
	    MCP_HIDDEN;
/* Grace period over: answer every call still running with an error. */
void	 mcp__protocol_abort(struct session *s) MCP_HIDDEN;
/* Sends an error to the request ID (NULL: the id omitted), e.g. for an
 * oversized line. */
void	 mcp__protocol_error(struct session *s, const json_t *id, int code,
	    const char *msg) MCP_HIDDEN;
const char *mcp__version_str(int version) MCP_HIDDEN;
int	 mcp__version_of(const char *name) MCP_HIDDEN;

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

/* ---- http.c and transport_sse.c ------------------------------------- */

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
};

struct http;
struct sse_stream;
struct MHD_Connection;

/* The MCP transports over HTTP, by the routes they take. */
enum {
	HT_SSE,		/* GET /sse, POST /messages */
	HT_MCP,		/* /mcp: Streamable HTTP */
	HT_N
};
struct http_transport;
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
/* http.c helpers for transport_sse.c */
int	 mcp__http_reply(struct MHD_Connection *conn, int status,
	    const char *ctype, const char *body, size_t len,
	    const char *origin) MCP_HIDDEN;
int	 mcp__http_reply_rpc(struct MHD_Connection *conn, int status,
	    int code, const char *msg, const char *origin) MCP_HIDDEN;
void	 mcp__http_cors(void *resp, const char *origin) MCP_HIDDEN;
void	 mcp__http_wake(struct http *h) MCP_HIDDEN;

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

/* ---- server.c --------------------------------------------------------- */

/*
 * How the layers under server.c reach it: server.c fills this in
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
 * The server as the layers under server.c see it: what it serves, its
 * sessions, the pool, the loop and the counters. server.c's own part
 * (signals, the shutdown, the transports) is struct host, which begins
 * with this; the public mcp_server points to it.
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
	struct registry		 reg;
	struct features		 feat;
	struct session		*sessions;	/* loop: every session */
	struct pool		 pool;
	struct ev_loop		*loop;
	const struct server_hooks *hooks;	/* server.c's */
	int			 running;	/* mcp_server_run is on */
	int			 draining;	/* input stops; set by server.c */
	double			 out_at;	/* answer bytes last went out */
	struct metrics		 metrics;
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

/* ---- systemd.c: socket activation and the notify socket ------------- */

/* A socket passed by systemd: named NAME, or the first (NULL); -1. */
int	 mcp__sd_listen_fd(const char *name, const char *who) MCP_HIDDEN;
/* STATE ("READY=1") to $NOTIFY_SOCKET: 1 sent, 0 none, -1 error. */
int	 mcp__sd_notify(const char *state) MCP_HIDDEN;
/* The WATCHDOG=1 interval in seconds, or 0 for none. */
double	 mcp__sd_watchdog(void) MCP_HIDDEN;

/* options.c: SIGHUP re-reads --auth-token-file; the old token stays
 * when the file cannot be read. */
int	 mcp__reload_token(struct http_conf *c) MCP_HIDDEN;

/*
 * The server as the process that runs it (server.c, options.c, cli.c):
 * the loop's watchers, signals, the orderly shutdown, and the
 * transports it listens on. Begins with the struct mcp_server the layers
 * under it see, so that mcp__host finds it.
 */
struct host {
	struct mcp_server	 srv;		/* first */
	int			 workers;
	int			 max_workers;
	int			 grace_ms;
	ev_async		 done;		/* completions ready */
	ev_async		 stop_async;	/* mcp_server_stop */
	ev_signal		 sigterm;
	ev_signal		 sigint;
	ev_signal		 sighup;	/* reload */
	ev_timer		 watchdog;	/* WATCHDOG=1 to systemd */
	ev_prepare		 flush;		/* write before blocking */
	ev_timer		 grace;
	ev_timer		 deadline;
	atomic_int		 stop_requested;
	int			 stopped;	/* the loop was told to end */
	double			 aborted_at;	/* the grace period ended */
	int			 aborted;
	struct stdio_transport	*stdio;
	int			 want_stdio;
	int			 stdio_in;	/* 0 and 1, but in tests */
	int			 stdio_out;
	struct http_conf	 hconf;
	struct http		*http;
	struct http		*mhttp;		/* --metrics-listen */
};

_Static_assert(offsetof(struct host, srv) == 0,
    "struct host begins with its struct mcp_server");

/* The host whose server SRV is (mcp_server_new makes only hosts). */
static inline struct host *
mcp__host(struct mcp_server *srv)
{
	return (struct host *)(void *)srv;
}

/* mcp_server_run in two halves, around the loop (which a test or a fuzzer
 * may run itself, a step at a time, until the host's stopped). */
int	 mcp__server_start(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__server_finish(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__http_conf_free(struct http_conf *c) MCP_HIDDEN;

#endif /* MCP_INT_H */
