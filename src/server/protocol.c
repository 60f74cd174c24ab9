/*
 * protocol.c: the JSON-RPC 2.0 rules and the MCP methods. Input is one
 * line (or HTTP body) from a transport; light methods are answered here
 * on the loop thread; tool calls, resource reads, prompt gets and
 * completions are queued to the pool and answered in
 * mcp__protocol_complete when they come back, in whatever order they
 * finish. Loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

/*
 * A JSON-RPC batch (2025-03-26 only). Answers are collected in OUT as
 * they arrive and the array goes out when the last call is answered.
 * Each call in it holds a reference, and so does the parser.
 */
struct batch {
	int		 refs;
	int		 pending;
	int		 count;
	int		 parsing;
	int		 sent;
	struct session	*sess;
	void		*route;		/* held until the answer is sent */
	size_t		 max_out;	/* bytes its answer may take */
	struct buf	 out;
};

static void
batch_unref(struct batch *bt)
{
	if (bt == NULL || --bt->refs > 0)
		return;
	mcp__buf_free(&bt->out);
	mcp__session_unref(bt->sess);
	free(bt);
}

/*
 * Adds one answer (to the request ID) to the batch's. Past the batch's
 * bound, the answer is replaced by an error that says so: a batch of
 * cheap requests must not build an answer of any size.
 */
static void
batch_add(struct batch *bt, const json_t *id, const char *json, size_t len)
{
	struct buf	 b = { 0 };
	char		 msg[120];

	if (bt->out.len + len + 2 > bt->max_out) {
		snprintf(msg, sizeof(msg), "the batch's answer would exceed "
		    "%zu bytes (4 x --max-message): this answer is left out",
		    bt->max_out);
		if (mcp__rpc_error(&b, id, MCP_RPC_INTERNAL_ERROR, msg, NULL) !=
		    MCP_OK) {
			mcp__buf_free(&b);
			return;
		}
		json = b.data;
		len = b.len;
	}
	if (mcp__buf_addc(&bt->out, bt->count ? ',' : '[') != MCP_OK ||
	    mcp__buf_add(&bt->out, json, len) != MCP_OK)
		mcp_log(MCP_LOG_ERR, "batch: out of memory, answer lost");
	else
		bt->count++;
	mcp__buf_free(&b);
}

/* What held *ROUTEP will send nothing more on it. */
static void
release(struct session *s, void **routep)
{
	if (*routep != NULL && s->ops->hold != NULL)
		s->ops->hold(s, *routep, -1);
	*routep = NULL;
}

static void
batch_flush(struct batch *bt)
{
	struct session	*s = bt->sess;
	void		*saved = s->route;

	if (bt->parsing || bt->pending > 0 || bt->sent)
		return;
	bt->sent = 1;
	/* A batch of notifications only is answered with nothing. */
	s->route = bt->route;
	if (bt->count > 0 && mcp__buf_addc(&bt->out, ']') == MCP_OK)
		mcp__session_answer(s, bt->out.data, bt->out.len);
	s->route = saved;
	release(s, &bt->route);
	mcp__buf_free(&bt->out);
}

/* Sends the answer in B (to the request ID), or adds it to the batch. */
static void
reply(struct session *s, struct batch *bt, const json_t *id, struct buf *b)
{
	if (bt != NULL)
		batch_add(bt, id, b->data + b->off, b->len - b->off);
	else
		mcp__session_answer(s, b->data + b->off, b->len - b->off);
}

/*
 * Metrics: an answer made on the loop, while a request is being handled
 * (message), is that request's; calls queued to the pool are counted
 * when they end (mcp__metrics_call).
 */
static void
count(struct session *s, int outcome, int code)
{
	struct metrics	*m = &s->srv->metrics;

	if (m->on && m->cur != -1) {
		/* The method's name is looked up only now: a call queued to
		 * the pool knows its method by its kind, and is never here. */
		mcp__metrics_answer(m, m->cur >= 0 ? m->cur :
		    mcp__metrics_method(m->cur_name), outcome, code);
		m->cur = -1;
	}
}

/*
 * A call queued to the pool ended: answered, timed out, cancelled or cut
 * short by the shutdown. Counted once, and logged at info with its
 * tags, duration and outcome.
 */
static void
ended(struct mcp_call *c, int outcome, int code)
{
	static const char *const what[] = { "ok", "is_error", "error",
	    "cancelled", "timeout" };
	static const char *const methods[] = { "tools/call",
	    "resources/read", "prompts/get", "completion/complete" };
	struct mcp_server *srv = c->sess->srv;
	struct log_fields lf;
	struct log_ctx	 saved;
	const char	*name;

	if (c->counted || c->kind == CALL_ROOTS)
		return;
	if (srv->metrics.on)
		mcp__metrics_call(srv, c, outcome, code);
	c->counted = 1;
	if (MCP_LOG_INFO > atomic_load_explicit(&mcp__log_level,
	    memory_order_relaxed))
		return;
	memset(&lf, 0, sizeof(lf));
	saved = mcp__lctx;
	mcp__lctx.id = c->id;
	mcp__lctx.sid = c->sess->id;
	mcp__lctx.rid = c->rid;
	mcp__lctx.tool = c->tool != NULL ? c->tool->name : NULL;
	lf.outcome = what[outcome];
	lf.duration_ms = (ev_now(srv->loop) - c->queued_at) * 1000;
	lf.bytes_in = lf.bytes_out = -1;
	name = c->kind == CALL_RELAY || c->kind == CALL_WAIT ||
	    c->kind == CALL_LISTEN ? c->method : methods[c->kind];
	if (outcome == MO_ERROR)
		mcp__log_fields(MCP_LOG_INFO, &lf, "%s: error %d", name, code);
	else
		mcp__log_fields(MCP_LOG_INFO, &lf, "%s: %s", name,
		    what[outcome]);
	mcp__lctx = saved;
}

static void
reply_error_data(struct session *s, struct batch *bt, const json_t *id,
    int code, const char *msg, const json_t *data)
{
	struct buf	 b = { 0 };

	count(s, MO_ERROR, code);
	if (mcp__rpc_error(&b, id, code, msg, data) == MCP_OK)
		reply(s, bt, id, &b);
	mcp__buf_free(&b);
}

static void
reply_error(struct session *s, struct batch *bt, const json_t *id, int code,
    const char *msg)
{
	reply_error_data(s, bt, id, code, msg, NULL);
}

static void
reply_result_new(struct session *s, struct batch *bt, const json_t *id,
    json_t *result)
{
	struct buf	 b = { 0 };

	if (result == NULL) {
		reply_error(s, bt, id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	/* A modern request's result says what it is and who answers. */
	if (s->era != NULL &&
	    mcp__era_result(s->srv, result, s->era->cache) != MCP_OK) {
		json_decref(result);
		reply_error(s, bt, id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	if (mcp__rpc_result(&b, id, result) == MCP_OK) {
		count(s, MO_OK, 0);
		reply(s, bt, id, &b);
	} else
		reply_error(s, bt, id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
	mcp__buf_free(&b);
	json_decref(result);
}

/* An error outside a request being handled: a message that is none. */
void
mcp__protocol_error(struct session *s, const json_t *id, int code,
    const char *msg)
{
	if (s->srv->metrics.on)
		s->srv->metrics.cur = MM_INVALID;
	reply_error(s, NULL, id, code, msg);
}

/* ---- methods answered on the loop ------------------------------------ */

/* The params as JSON, built from their text on first use. */
static json_t *
params_of(struct rpc_fields *f)
{
	struct json_perr e;

	if (f->params == NULL && f->praw != NULL)
		f->params = mcp__json_parse(f->praw, f->prawlen, &e);
	return f->params;
}

static void
do_initialize(struct session *s, struct batch *bt, const json_t *id,
    json_t *params)
{
	struct mcp_server	*srv = s->srv;
	const char		*want;
	json_t			*res, *info, *caps, *scaps;

	if (bt != NULL) {
		reply_error(s, bt, id, MCP_RPC_INVALID_REQUEST,
		    "initialize must not be part of a batch");
		return;
	}
	if (s->initialized) {
		reply_error(s, bt, id, MCP_RPC_INVALID_REQUEST,
		    "already initialized");
		return;
	}
	want = mcp__json_cstr(json_object_get(params, "protocolVersion"));
	if (want == NULL) {
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS,
		    "initialize: protocolVersion must be a string");
		return;
	}
	/* Echo the client's version when we know it, else offer our latest. */
	s->version = mcp__version_of(want);
	if (s->version == 0)
		s->version = MCP_V_LATEST;
	s->initialized = 1;
	caps = json_object_get(params, "capabilities");
	s->client_caps = json_is_object(caps) ? json_incref(caps) : json_object();
	s->caps = mcp__clientreq_caps(s);
	s->client_info = json_incref(json_object_get(params, "clientInfo"));

	info = json_pack("{s:s, s:s}", "name", srv->name, "version",
	    srv->version);
	if (info != NULL && srv->title != NULL && s->version >= MCP_V20250618)
		json_object_set_new(info, "title", json_string(srv->title));
	/*
	 * Resources and prompts are always declared, even with none yet
	 * registered: they may be added at run time, and list_changed is
	 * only sent when the capability was declared.
	 */
	scaps = json_pack("{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}}", "tools",
	    "listChanged", 1, "resources", "subscribe", 1, "listChanged", 1,
	    "prompts", "listChanged", 1, "logging");
	/* completions is a capability from 2025-03-26 on. */
	if (scaps != NULL && srv->feat.complete_fn != NULL &&
	    s->version >= MCP_V20250326)
		json_object_set_new(scaps, "completions", json_object());
	/* Tasks: 2025-11-25 on, on a session that outlives its requests
	 * (with --redis, its tasks are in the store: taskshare.c), and
	 * when some tool may be called as one. */
	if (scaps != NULL && s->version >= MCP_V20251125 && !s->implicit &&
	    mcp__registry_tasks(&srv->reg)) {
		s->tasks_on = 1;
		json_object_set_new(scaps, "tasks", json_pack("{s:{}, s:{}, "
		    "s:{s:{s:{}}}}", "list", "cancel", "requests", "tools",
		    "call"));
	}
	res = json_pack("{s:s, s:o, s:o*}", "protocolVersion",
	    mcp__version_str(s->version), "capabilities", scaps,
	    "serverInfo", info);
	if (res != NULL && srv->instructions != NULL)
		json_object_set_new(res, "instructions",
		    json_string(srv->instructions));
	MCP_LOG(MCP_LOG_INFO, "session initialized: client asked %s, "
	    "speaking %s", want, mcp__version_str(s->version));
	/* Its calls may come with the next line: the hook runs first. */
	mcp__session_open(s);
	mcp__notify_listen(s);
	reply_result_new(s, bt, id, res);
}

/* tools/list (KIND < 0), resources/list, .../templates/list, prompts/list. */
static void
do_list(struct session *s, struct batch *bt, const json_t *id,
    json_t *params, int kind)
{
	const char	*cursor;
	json_t		*cur, *res;
	int		 bad;

	cur = json_object_get(params, "cursor");
	if (cur != NULL && !json_is_string(cur)) {
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS,
		    "cursor must be a string");
		return;
	}
	cursor = mcp__json_cstr(cur);
	if (cur != NULL && cursor == NULL) {
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS,
		    "invalid cursor");
		return;
	}
	if (kind < 0)
		res = mcp__registry_list(&s->srv->reg, cursor,
		    s->srv->page_size, s->version |
		    (s->tasks_on ? REG_TASKS_ON : 0), &bad);
	else
		res = mcp__feat_list(s->srv, (enum feat_kind)kind, cursor,
		    s->srv->page_size, s->version, &bad);
	if (bad) {
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS,
		    "invalid cursor");
		return;
	}
	reply_result_new(s, bt, id, res);
}

/* -32002 with {"uri": URI} in data, as the spec asks. */
static void
reply_no_resource(struct session *s, struct batch *bt, const json_t *id,
    const char *uri)
{
	struct buf	 b = { 0 };
	json_t		*data;
	char		 msg[200];
	/* 2026-07-28 retired -32002: a missing resource is a bad param. */
	int		 code = s->era != NULL ? MCP_RPC_INVALID_PARAMS :
	    MCP_RPC_RESOURCE_NOT_FOUND;

	snprintf(msg, sizeof(msg), "resource not found: %.150s", uri);
	data = json_pack("{s:s}", "uri", uri);
	count(s, MO_ERROR, code);
	if (mcp__rpc_error(&b, id, code, msg, data) == MCP_OK)
		reply(s, bt, id, &b);
	mcp__buf_free(&b);
	json_decref(data);
}

static const char *
uri_param(struct session *s, struct batch *bt, const json_t *id,
    json_t *params, const char *method)
{
	const char	*uri;
	json_t		*v;
	char		 msg[120];

	v = json_object_get(params, "uri");
	uri = mcp__json_cstr(v);
	if (uri == NULL) {
		snprintf(msg, sizeof(msg), "%s: uri must be a string%s",
		    method, json_is_string(v) ? " without \\u0000" : "");
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS, msg);
	} else if (json_string_length(v) > MCP_MAX_URI) {
		snprintf(msg, sizeof(msg), "%s: uri longer than %d bytes",
		    method, MCP_MAX_URI);
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS, msg);
		uri = NULL;
	}
	return uri;
}

/* resources/subscribe and resources/unsubscribe: per session. */
static void
do_subscribe(struct session *s, struct batch *bt, const json_t *id,
    json_t *params, int on)
{
	struct feat	*f;
	const char	*uri;
	char		 msg[160];

	uri = uri_param(s, bt, id, params, on ? "resources/subscribe" :
	    "resources/unsubscribe");
	if (uri == NULL)
		return;
	if (on) {
		f = mcp__feat_resolve(s->srv, uri);
		if (f == NULL) {
			reply_no_resource(s, bt, id, uri);
			return;
		}
		mcp__feat_unref(f);
		if (json_object_get(s->subs, uri) == NULL &&
		    json_object_size(s->subs) >=
		    (size_t)s->srv->max_subscriptions) {
			snprintf(msg, sizeof(msg), "resources/subscribe: this "
			    "session has %d subscriptions, the most it may "
			    "have (--max-subscriptions)",
			    s->srv->max_subscriptions);
			reply_error(s, bt, id, MCP_RPC_SERVER_BUSY, msg);
			return;
		}
		if (s->subs == NULL)
			s->subs = json_object();
		if (s->subs == NULL ||
		    json_object_set_new(s->subs, uri, json_true()) != 0) {
			reply_error(s, bt, id, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
			return;
		}
	} else
		json_object_del(s->subs, uri);
	reply_result_new(s, bt, id, json_object());
}

/* The in-flight limit: 1 when the request (ID) has been refused. */
static int
too_many(struct session *s, struct batch *bt, const json_t *id)
{
	char	 msg[120];

	if (s->inflight < s->max_inflight)
		return 0;
	snprintf(msg, sizeof(msg), "server busy: %d requests in flight on "
	    "this session", s->inflight);
	reply_error(s, bt, id, MCP_RPC_SERVER_BUSY, msg);
	return 1;
}

/* The HTTP request id of the input being handled, for C's log lines:
 * per call, a bounded copy, not snprintf. */
static void
copy_rid(struct mcp_call *c)
{
	size_t	 n;

	if (mcp__lctx.rid == NULL)
		return;
	n = strnlen(mcp__lctx.rid, sizeof(c->rid) - 1);
	memcpy(c->rid, mcp__lctx.rid, n);
	c->rid[n] = '\0';
}

/*
 * C, a request the loop itself answers or relays (not a pool call): it
 * takes the session's version, KEY and HASH (its id's), the time it was
 * queued and the log's request id, and is tracked by S from now on, so
 * that a cancel, a lost stream and a drain all find it.
 */
static void
track_here(struct session *s, struct mcp_call *c, const char *key,
    uint32_t hash)
{
	c->srv = s->srv;
	c->version = s->version;
	c->hash = hash;
	c->queued_at = ev_now(s->srv->loop);
	memcpy(c->key, key, sizeof(c->key));
	copy_rid(c);
	mcp__session_track(s, c);
}

static void	 timeout_cb(struct ev_loop *, ev_timer *, int);

/* Loop: C's time limit (c->timeout, 0 for none) starts now. */
static void
arm(struct mcp_server *srv, struct mcp_call *c)
{
	if (c->timeout > 0) {
		ev_timer_init(&c->timer, timeout_cb, c->timeout, 0.0);
		c->timer.data = c;
		ev_timer_start(srv->loop, &c->timer);
	}
}

/*
 * A loop tool's call, tracked like a queued one, runs here and now and
 * is answered as a completion would be: in order, counted when it ends
 * (not as an answer of the request being handled), its batch and route
 * let go of. A callback that deferred its call leaves it tracked, with
 * its time limit running, as for a worker's.
 */
static void
run_here(struct session *s, struct mcp_call *c, const char *text,
    size_t len)
{
	struct mcp_server *srv = s->srv;

	c->queued_at = ev_now(srv->loop);
	srv->metrics.cur = -1;
	if (mcp__call_run_loop(c, text, len) == 0) {
		mcp__protocol_complete(c);
		mcp__server_check_drained(srv);
	} else
		arm(srv, c);
}

/* C's task, not yet kept, goes with C: the request was refused. */
static void
task_abandon(struct mcp_call *c)
{
	if (c == NULL || c->task == NULL)
		return;
	c->task->call = NULL;
	mcp__task_free(c->task, NULL);
	c->task = NULL;
}

/*
 * A task's call is on its way (its task is kept): the request (ID) is
 * answered with the CreateTaskResult.
 */
static void
task_created(struct session *s, struct batch *bt, const json_t *id,
    struct task *t)
{
	struct buf	 b = { 0 };
	json_t		*res;

	/* The call is counted when it ends, not as this answer. */
	s->srv->metrics.cur = -1;
	if (!t->era) {
		reply_result_new(s, bt, id, json_pack("{s:o*}", "task",
		    mcp__task_json(t)));
		return;
	}
	/* The extension: the Task itself, resultType "task". */
	res = mcp__task_json_era(t, 0);
	if (mcp__era_result(s->srv, res, ERA_CACHE_NONE) != MCP_OK ||
	    json_object_set_new(res, "resultType", json_string("task")) != 0 ||
	    mcp__rpc_result(&b, id, res) != MCP_OK)
		reply_error(s, bt, id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
	else
		reply(s, bt, id, &b);
	mcp__buf_free(&b);
	json_decref(res);
}

/*
 * Queues C (a tool, read, get or complete call whose entry is set) with
 * the request's params as text; the worker builds them. With LOOP (a
 * loop tool), runs it here instead, its params read from the input
 * itself. Takes C. Returns MCP_OK when queued or run; otherwise the
 * request has been answered.
 */
static int
submit(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *key, uint32_t hash, struct mcp_call *c, int loop)
{
	struct buf	 text = { 0 };
	char		 msgbuf[120];
	int		 borrow = loop && f->praw != NULL, code;
	struct task	*task = c != NULL ? c->task : NULL;
	/* A 2026-07-28 task's call outlives its request's session: its
	 * task's (the era's home) tracks it. */
	struct session	*ts = task != NULL ? task->sess : s;

	if (c != NULL && borrow) {
		;	/* read in place by run_here */
	} else if (c != NULL && f->praw != NULL) {
		c->ptext = malloc(f->prawlen);
		if (c->ptext != NULL)
			memcpy(c->ptext, f->praw, f->prawlen);
		c->ptextlen = f->prawlen;
	} else if (c != NULL && mcp__buf_addjson(&text, f->params) == MCP_OK)
		c->ptext = mcp__buf_steal(&text, &c->ptextlen);
	mcp__buf_free(&text);
	if (c == NULL || (c->ptext == NULL && !borrow)) {
		task_abandon(c);
		mcp__call_free(c);
		reply_error(s, bt, f->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return MCP_ENOMEM;
	}
	if (too_many(s, bt, f->id)) {
		task_abandon(c);
		mcp__call_free(c);
		return MCP_ESTATE;
	}
	if (task != NULL) {
		/* The request is answered with the CreateTaskResult; the
		 * call is the task's, known by its id, on no stream. */
		c->id = json_string(task->id);
		if (c->id == NULL) {
			task_abandon(c);
			mcp__call_free(c);
			reply_error(s, bt, f->id, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
			return MCP_ENOMEM;
		}
	} else {
		c->id = f->id;
		f->id = NULL;
	}
	if (f->praw != NULL) {
		c->spans = 1;
		c->args_off = f->args_off;
		c->args_len = f->args_len;
		c->meta_off = f->meta_off;
		c->meta_len = f->meta_len;
		c->state_off = f->state_off;
		c->state_len = f->state_len;
		c->resp_off = f->resp_off;
		c->resp_len = f->resp_len;
	}
	c->srv = s->srv;
	copy_rid(c);
	c->version = s->version;
	c->log_level = s->log_level;
	c->pool = &s->srv->pool;
	c->caps = s->caps;
	c->info = ts->info;
	c->ident = mcp__identity_ref(s->ident);
	c->hash = hash;
	memcpy(c->key, key, sizeof(c->key));
	if (task != NULL) {
		/* Not the request's id, which is answered now: no id of the
		 * client's ("i", "s") can name it. */
		c->key[0] = 'T';
		memcpy(c->key + 1, task->id, sizeof(task->id));
		c->hash = mcp__hash(c->key);
	}
	mcp__session_track(ts, c);
	code = MCP_RPC_SERVER_BUSY;
	if (task != NULL) {
		/* Its answer goes to the task, kept from now on. */
		if (mcp__task_link(task) != MCP_OK) {
			code = MCP_RPC_INTERNAL_ERROR;
			snprintf(msgbuf, sizeof(msgbuf), "out of memory");
			goto refused;
		}
	} else if (bt != NULL) {
		c->batch = bt;
		bt->refs++;
		bt->pending++;
	} else if (s->route != NULL && s->ops->hold != NULL) {
		c->route = s->route;
		s->ops->hold(s, c->route, 1);
	}
	if (loop) {
		if (task != NULL)
			task_created(s, bt, f->id, task);
		run_here(s, c, borrow ? f->praw : NULL, f->prawlen);
		return MCP_OK;
	}
	if (mcp__pool_submit(&s->srv->pool, c) == MCP_OK) {
		/* Before any answer of the call: the loop sees completions
		 * only once this request has been handled. */
		if (task != NULL)
			task_created(s, bt, f->id, task);
		mcp__pool_queued(&s->srv->pool);
		arm(s->srv, c);
		return MCP_OK;
	}
	snprintf(msgbuf, sizeof(msgbuf), "server busy: %d calls queued, try "
	    "again later", s->srv->queue_size);
refused:
	reply_error(s, bt, task != NULL ? f->id : c->id, code, msgbuf);
	task_abandon(c);
	release(s, &c->route);
	mcp__session_untrack(ts, c);
	ts->pending--;
	/* A task's call took no part in the batch. */
	if (bt != NULL && task == NULL) {
		bt->pending--;
		batch_unref(bt);
	}
	mcp__call_free(c);
	mcp__session_unref(ts);
	return MCP_ESTATE;
}

/* A new call of KIND for entry F (taken; may be NULL for completion). */
static struct mcp_call *
feat_call(enum call_kind kind, struct feat *f)
{
	struct mcp_call	*c;

	c = mcp__call_new();
	if (c == NULL) {
		mcp__feat_unref(f);
		return NULL;
	}
	c->kind = kind;
	c->feat = f;
	return c;
}

static void
do_read(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *key, uint32_t hash)
{
	struct feat	*r;
	const char	*uri;

	uri = uri_param(s, bt, f->id, params_of(f), "resources/read");
	if (uri == NULL)
		return;
	r = mcp__feat_resolve(s->srv, uri);
	if (r == NULL) {
		reply_no_resource(s, bt, f->id, uri);
		return;
	}
	submit(s, bt, f, key, hash, feat_call(CALL_READ, r), 0);
}

static void
do_prompt_get(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *key, uint32_t hash)
{
	struct feat	*p;
	json_t		*params, *args, *v;
	const char	*name, *k;
	char		 msg[200], missing[130];

	params = params_of(f);
	name = mcp__json_cstr(json_object_get(params, "name"));
	args = json_object_get(params, "arguments");
	if (name == NULL) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "prompts/get: name must be a string");
		return;
	}
	if (args != NULL && !json_is_object(args)) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "prompts/get: arguments must be an object");
		return;
	}
	json_object_foreach(args, k, v)
		if (mcp__json_cstr(v) == NULL) {
			snprintf(msg, sizeof(msg), "prompts/get: argument "
			    "%.100s must be a string%s", k, json_is_string(v) ?
			    " without \\u0000" : "");
			reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
			return;
		}
	p = mcp__feat_get(s->srv, FEAT_PROMPT, name);
	if (p == NULL) {
		snprintf(msg, sizeof(msg), "unknown prompt: %.100s", name);
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
		return;
	}
	if (mcp__prompt_check(s->srv, p, args, missing, sizeof(missing)) !=
	    MCP_OK) {
		snprintf(msg, sizeof(msg), "prompt %.60s: missing required "
		    "argument %.100s", name, missing);
		mcp__feat_unref(p);
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
		return;
	}
	submit(s, bt, f, key, hash, feat_call(CALL_PROMPT, p), 0);
}

static void
do_complete(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *key, uint32_t hash)
{
	struct feat	*e = NULL;
	json_t		*params, *ref, *arg;
	const char	*type, *name;
	char		 msg[200];

	params = params_of(f);
	ref = json_object_get(params, "ref");
	arg = json_object_get(params, "argument");
	type = json_string_value(json_object_get(ref, "type"));
	if (type == NULL || !json_is_string(json_object_get(arg, "name")) ||
	    !json_is_string(json_object_get(arg, "value"))) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "completion/complete: needs ref.type, argument.name and "
		    "argument.value");
		return;
	}
	if (mcp__json_cstr(json_object_get(ref, "type")) == NULL ||
	    mcp__json_cstr(json_object_get(arg, "name")) == NULL ||
	    mcp__json_cstr(json_object_get(arg, "value")) == NULL) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "completion/complete: ref.type, argument.name and "
		    "argument.value may not hold \\u0000");
		return;
	}
	if (strcmp(type, "ref/prompt") == 0) {
		name = mcp__json_cstr(json_object_get(ref, "name"));
		if (name != NULL)
			e = mcp__feat_get(s->srv, FEAT_PROMPT, name);
		if (e == NULL) {
			snprintf(msg, sizeof(msg), "unknown prompt: %.100s",
			    name != NULL ? name : "(none)");
			reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
			return;
		}
	} else if (strcmp(type, "ref/resource") == 0) {
		name = mcp__json_cstr(json_object_get(ref, "uri"));
		if (name != NULL &&
		    (e = mcp__feat_get(s->srv, FEAT_TEMPLATE, name)) == NULL)
			e = mcp__feat_get(s->srv, FEAT_RESOURCE, name);
		if (e == NULL) {
			snprintf(msg, sizeof(msg), "unknown resource or "
			    "template: %.100s", name != NULL ? name : "(none)");
			reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
			return;
		}
	} else {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "completion/complete: ref.type must be ref/prompt or "
		    "ref/resource");
		return;
	}
	submit(s, bt, f, key, hash, feat_call(CALL_COMPLETE, e), 0);
}

static void
do_set_level(struct session *s, struct batch *bt, const json_t *id,
    json_t *params)
{
	int	 level;

	level = mcp__level_parse(mcp__json_cstr(json_object_get(params,
	    "level")));
	if (level < 0) {
		reply_error(s, bt, id, MCP_RPC_INVALID_PARAMS,
		    "logging/setLevel: level must be one of debug, info, "
		    "notice, warning, error, critical, alert, emergency");
		return;
	}
	s->log_level = level;
	reply_result_new(s, bt, id, json_object());
}

/*
 * The tool's time limit passed: the client gets a tool error now, the
 * callback is told to stop, and whatever it returns later is dropped.
 */
static void
timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_call	*c = w->data;
	struct buf	 b = { 0 };
	void		*saved;
	char		 msg[200];
	int		 rc;

	(void)loop;
	(void)revents;
	if (c->dropped)
		return;
	snprintf(msg, sizeof(msg), "tool %s timed out after %.0f ms",
	    c->tool->name, c->timeout * 1000);
	ended(c, MO_TIMEOUT, 0);
	mcp_log(MCP_LOG_NOTICE, "%s", msg);
	rc = mcp__buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addid(&b, c->id);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&b, ",\"result\":{\"content\":[{\"type\":"
		    "\"text\",\"text\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addstr(&b, msg, strlen(msg));
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&b, "}],\"isError\":true}}");
	if (rc == MCP_OK && c->version == MCP_V20260728)
		rc = mcp__era_dress_buf(c->sess->srv, &b, ERA_CACHE_NONE);
	if (rc == MCP_OK && c->task != NULL) {
		mcp__task_finish(c->task, b.data, b.len);
	} else if (rc == MCP_OK) {
		saved = c->sess->route;
		c->sess->route = c->route;
		reply(c->sess, c->batch, c->id, &b);
		c->sess->route = saved;
	}
	mcp__buf_free(&b);
	mcp__protocol_drop(c);
	mcp__server_check_drained(c->sess->srv);
}

/*
 * A tools/call on a session that has tasks: is params.task there, and
 * may it be (execution.taskSupport)? The raw params are built only when
 * the envelope reader saw a task member in them. 0 with *TP the task object (or NULL) and
 * *TTL what it asked for (-1: nothing); -1 when the request has been
 * answered with an error.
 */
static int
task_param(struct session *s, struct batch *bt, struct rpc_fields *f,
    struct tool *t, unsigned flags, json_t **tp, long long *ttl)
{
	json_t		*v;
	char		 msg[200];
	double		 d;

	*tp = NULL;
	if (f->praw == NULL || f->has_task)
		*tp = json_object_get(params_of(f), "task");
	if (*tp == NULL && (flags & MCP_TOOL_TASK_REQUIRED)) {
		snprintf(msg, sizeof(msg), "tool %.100s must be called as a "
		    "task (execution.taskSupport is \"required\")", t->name);
		reply_error(s, bt, f->id, MCP_RPC_METHOD_NOT_FOUND, msg);
		return -1;
	}
	if (*tp == NULL)
		return 0;
	if ((flags & MCP_TOOL_TASKS) == 0) {
		snprintf(msg, sizeof(msg), "tool %.100s cannot be called as a "
		    "task (execution.taskSupport is \"forbidden\")", t->name);
		reply_error(s, bt, f->id, MCP_RPC_METHOD_NOT_FOUND, msg);
		return -1;
	}
	v = json_object_get(*tp, "ttl");
	if (!json_is_object(*tp) || (v != NULL && !json_is_null(v) &&
	    (!json_is_number(v) || json_number_value(v) < 0))) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "tools/call: task must be an object, and its ttl a "
		    "number of milliseconds");
		return -1;
	}
	if (json_is_number(v)) {
		d = json_number_value(v);
		*ttl = d > 9e15 ? (long long)9e15 : (long long)d;
	}
	if (s->ntasks >= s->srv->max_session_tasks) {
		/* One client cannot take every task the server keeps. */
		snprintf(msg, sizeof(msg), "too many tasks: this session "
		    "keeps %d, at most %d (--max-session-tasks); cancel or "
		    "wait for one", s->ntasks, s->srv->max_session_tasks);
		reply_error(s, bt, f->id, MCP_RPC_SERVER_BUSY, msg);
		return -1;
	}
	if (s->srv->ntasks >= s->srv->max_tasks ||
	    s->srv->task_bytes >= s->srv->max_task_bytes) {
		snprintf(msg, sizeof(msg), "server busy: %d tasks kept, "
		    "holding %zu bytes of results: at most %d tasks and %zu "
		    "bytes (--max-tasks, --max-task-bytes); try again later",
		    s->srv->ntasks, s->srv->task_bytes, s->srv->max_tasks,
		    s->srv->max_task_bytes);
		reply_error(s, bt, f->id, MCP_RPC_SERVER_BUSY, msg);
		return -1;
	}
	return 0;
}

/*
 * 2026-07-28, a tool that may run as a task (the tasks extension): the
 * server decides, and does whenever the request declared the extension.
 * 1: it runs as a task; 0: out of memory; -1: answered (-32021 for a
 * tool that must be a task, to a client without the extension; -32000
 * past --max-tasks, --max-task-bytes, or --max-session-tasks for one
 * subject, the era having no sessions). Not a task: plainly, as before.
 */
static int
era_task(struct session *s, struct rpc_fields *f, struct tool *t,
    unsigned flags)
{
	struct mcp_server *srv = s->srv;
	struct session	*home;
	struct entry	*e;
	json_t		*data;
	char		 msg[240];
	int		 mine = 0;

	if (!s->era->tasks) {
		if (!(flags & MCP_TOOL_TASK_REQUIRED))
			return 2;	/* runs plainly */
		snprintf(msg, sizeof(msg), "Missing required client "
		    "capability: tool %.100s runs only as a task (extension "
		    "io.modelcontextprotocol/tasks)", t->name);
		data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities",
		    "extensions", "io.modelcontextprotocol/tasks");
		reply_error_data(s, NULL, f->id, MCP_RPC_MISSING_CAPABILITY,
		    msg, data);
		json_decref(data);
		return -1;
	}
	home = mcp__era_home(srv);
	if (home == NULL)
		return 0;
	for (e = home->tasks.head; e != NULL; e = e->next)
		if (mcp__identity_same(((struct task *)e)->owner, s->ident))
			mine++;
	if (mine >= srv->max_session_tasks) {
		snprintf(msg, sizeof(msg), "too many tasks: %d kept for this "
		    "client, at most %d (--max-session-tasks); cancel or "
		    "wait for one", mine, srv->max_session_tasks);
		reply_error(s, NULL, f->id, MCP_RPC_SERVER_BUSY, msg);
		return -1;
	}
	if (srv->ntasks >= srv->max_tasks ||
	    srv->task_bytes >= srv->max_task_bytes) {
		snprintf(msg, sizeof(msg), "server busy: %d tasks kept, "
		    "holding %zu bytes of results: at most %d tasks and %zu "
		    "bytes (--max-tasks, --max-task-bytes); try again later",
		    srv->ntasks, srv->task_bytes, srv->max_tasks,
		    srv->max_task_bytes);
		reply_error(s, NULL, f->id, MCP_RPC_SERVER_BUSY, msg);
		return -1;
	}
	return 1;
}

static void	 task_wait(struct session *, struct batch *,
		    struct rpc_fields *, const char *, const char *, uint32_t,
		    struct task *, const char *, const json_t *);

/*
 * tasks/get, tasks/update, tasks/cancel of the extension (2026-07-28):
 * a task of the era's home, named by its unguessable id and seen only
 * by the subject that made it (any other is told it is not found).
 */
static void
do_era_tasks(struct session *s, struct rpc_fields *f, const char *method,
    const char *key, uint32_t hash)
{
	struct session	*home = s->srv->era_home;
	struct task	*t = NULL;
	json_t		*params = params_of(f), *v, *data, *r;
	const char	*id, *key2;
	char		 msg[200];

	/* The extension's MUST: a client that does not declare it is told
	 * so, whatever the task. */
	if (!s->era->tasks) {
		snprintf(msg, sizeof(msg), "Missing required client "
		    "capability: %s is of the extension "
		    "io.modelcontextprotocol/tasks", method);
		data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities",
		    "extensions", "io.modelcontextprotocol/tasks");
		reply_error_data(s, NULL, f->id, MCP_RPC_MISSING_CAPABILITY,
		    msg, data);
		json_decref(data);
		return;
	}
	id = mcp__json_cstr(json_object_get(params, "taskId"));
	if (id == NULL) {
		snprintf(msg, sizeof(msg), "%s: taskId must be a string",
		    method);
		reply_error(s, NULL, f->id, MCP_RPC_INVALID_PARAMS, msg);
		return;
	}
	v = json_object_get(params, "inputResponses");
	if (strcmp(method, "tasks/update") == 0 && !json_is_object(v)) {
		reply_error(s, NULL, f->id, MCP_RPC_INVALID_PARAMS,
		    "tasks/update: inputResponses must be an object");
		return;
	}
	/* Each a client's result: taken, one that is not would fail the
	 * task when its call runs again, the update acknowledged. */
	if (strcmp(method, "tasks/update") != 0)
		v = NULL;	/* of no other method */
	json_object_foreach(v, key2, r)
		if (!json_is_object(r)) {
			snprintf(msg, sizeof(msg), "tasks/update: "
			    "inputResponses[\"%.60s\"] must be an object "
			    "(the client's result)", key2);
			reply_error(s, NULL, f->id, MCP_RPC_INVALID_PARAMS,
			    msg);
			return;
		}
	if (home != NULL)
		t = mcp__task_find(home, id);
	if (t == NULL && s->srv->tshare != NULL) {
		/* --redis: maybe another instance's. */
		task_wait(s, NULL, f, method, key, hash, NULL, id,
		    strcmp(method, "tasks/update") == 0 ? v : NULL);
		return;
	}
	if (t == NULL || !t->era || !mcp__identity_same(t->owner, s->ident)) {
		snprintf(msg, sizeof(msg), "%s: task not found (or expired): "
		    "%.64s", method, id);
		reply_error(s, NULL, f->id, MCP_RPC_INVALID_PARAMS, msg);
		return;
	}
	if (strcmp(method, "tasks/get") == 0) {
		reply_result_new(s, NULL, f->id, mcp__task_json_era(t, 1));
		return;
	}
	if (strcmp(method, "tasks/update") == 0) {
		/* Answers to its open requests are taken; the rest (keys not
		 * asked, or answered already) ignored. */
		mcp__task_update(t, v);
		reply_result_new(s, NULL, f->id, json_object());
		return;
	}
	/* tasks/cancel: acknowledged; a task that ended already stays. */
	if (!mcp__task_terminal(t))
		mcp__task_cancel(t);
	reply_result_new(s, NULL, f->id, json_object());
}

/* T keeps its request's params (F's) as JSON text; none on ENOMEM: its
 * call then cannot run again (it fails if it asks the client). */
static void
task_params(struct task *t, struct rpc_fields *f)
{
	struct buf	 b = { 0 };

	if (f->praw != NULL) {
		t->ptext = malloc(f->prawlen);
		if (t->ptext != NULL)
			memcpy(t->ptext, f->praw, f->prawlen);
		t->ptextlen = f->prawlen;
	} else if (mcp__buf_addjson(&b, f->params) == MCP_OK)
		t->ptext = mcp__buf_steal(&b, &t->ptextlen);
	mcp__buf_free(&b);
}

/*
 * tools/call: checks what can be checked without running anything, then
 * moves the params into a call and queues it. From here on the loop does
 * not touch the params: the worker owns them.
 */
static void
do_tools_call(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *key, uint32_t hash)
{
	struct mcp_call	*c;
	struct tool	*t;
	struct task	*task = NULL;
	struct session	*home = NULL;
	json_t		*name, *args, *tp = NULL;
	const char	*tname;
	char		 msgbuf[200];
	int		 kind, args_kind, ms, era = 0;
	unsigned	 flags;
	long long	 ttl = -1;

	if (f->praw != NULL) {
		kind = f->tname_kind;
		tname = f->tname;
		args_kind = f->args_kind;
	} else {
		/* Params from a batch element, already built. */
		name = json_object_get(f->params, "name");
		kind = json_is_string(name) ? 1 : name == NULL ? 0 : 2;
		tname = json_string_value(name);
		args = json_object_get(f->params, "arguments");
		args_kind = args == NULL ? 0 : json_is_object(args) ? 1 : 2;
	}
	if (kind != 1) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    kind == 3 ? "tools/call: unknown tool (name too long)" :
		    "tools/call: name must be a string");
		return;
	}
	if (args_kind == 2) {
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
		    "tools/call: arguments must be an object");
		return;
	}
	if (too_many(s, bt, f->id))
		return;
	t = mcp__registry_get(&s->srv->reg, tname);
	if (t == NULL) {
		snprintf(msgbuf, sizeof(msgbuf), "unknown tool: %.100s",
		    tname);
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msgbuf);
		return;
	}
	/* The tool's flags as they are now: this call runs where it starts. */
	flags = atomic_load_explicit(&t->flags, memory_order_relaxed);
	if (s->tasks_on && task_param(s, bt, f, t, flags, &tp, &ttl) != 0) {
		mcp__tool_unref(t);
		return;
	}
	if (s->era != NULL && (flags & MCP_TOOL_TASKS) &&
	    mcp__era_tasks_on(s->srv)) {
		era = era_task(s, f, t, flags);
		if (era <= 0) {
			mcp__tool_unref(t);
			if (era == 0)
				reply_error(s, bt, f->id,
				    MCP_RPC_INTERNAL_ERROR, "out of memory");
			return;
		}
		if (era == 2)
			era = 0;	/* plainly */
		/* Its questions first (MCP_TOOL_INPUT_FIRST): a first round
		 * runs plainly (input_required, mrtr.c), the retry that
		 * answers them as the task. */
		if (era == 1 && (flags & MCP_TOOL_INPUT_FIRST) &&
		    !(f->praw != NULL ? f->state_len > 0 :
		    json_object_get(f->params, "requestState") != NULL))
			era = 0;
	}
	c = mcp__call_new();
	if (era > 0)
		home = mcp__era_home(s->srv);
	if (c == NULL || (tp != NULL &&
	    (task = mcp__task_new(s, ttl)) == NULL) || (era > 0 &&
	    (home == NULL || (task = mcp__task_new(home, -1)) == NULL))) {
		mcp__call_free(c);
		mcp__tool_unref(t);
		reply_error(s, bt, f->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	c->tool = t;
	if (task != NULL) {
		c->task = task;
		task->call = c;
	}
	if (task != NULL && era > 0) {
		task->era = 1;
		task->owner = mcp__identity_ref(s->ident);
		/* What runs its call again if it asks the client (tasks.c:
		 * input_required, then tasks/update). */
		task->tool = mcp__registry_get(&s->srv->reg, tname);
		task->caps = s->caps;
		task_params(task, f);
	}
	ms = atomic_load(&t->timeout_ms);
	if (ms == 0)
		ms = s->srv->tool_timeout_ms;
	if (ms > 0)
		c->timeout = ms / 1000.0;
	(void)submit(s, bt, f, key, hash, c, (flags & MCP_TOOL_LOOP) != 0);
}

/* ---- relay mode: the methods are the relay's (relay.c) --------------- */

/* The message F holds, rebuilt as JSON for the relay. */
static json_t *
relay_msg(struct rpc_fields *f, const struct rpc_msg *m)
{
	json_t	*msg, *params = params_of(f);

	msg = json_pack("{s:s}", "jsonrpc", "2.0");
	if (msg == NULL)
		return NULL;
	if (m != NULL && m->id != NULL)
		json_object_set(msg, "id", m->id);
	if (m != NULL)
		json_object_set_new(msg, "method", json_string(m->method));
	if (params != NULL)
		json_object_set(msg, "params", params);
	return msg;
}

/*
 * A request, tracked like a call until the relay answers it
 * (mcp_peer_send_new) or it is dropped. initialize is checked as ours
 * is and the session counts as initialized at once, with the version
 * the client asked for, until the relay's answer names its own.
 */
static void
relay_request(struct session *s, struct batch *bt, struct rpc_fields *f,
    const struct rpc_msg *m, const char *key, uint32_t hash)
{
	struct mcp_call	*c;
	json_t		*msg, *params, *caps;
	const char	*want = NULL;
	int		 init = strcmp(m->method, "initialize") == 0;

	params = params_of(f);
	if (s->closed)
		return;		/* nobody to answer, nor to relay to */
	if (init) {
		want = mcp__json_cstr(json_object_get(params,
		    "protocolVersion"));
		if (bt != NULL || s->initialized || want == NULL) {
			reply_error(s, bt, m->id, want == NULL ?
			    MCP_RPC_INVALID_PARAMS : MCP_RPC_INVALID_REQUEST,
			    bt != NULL ? "initialize must not be part of a "
			    "batch" : s->initialized ? "already initialized" :
			    "initialize: protocolVersion must be a string");
			return;
		}
	} else if (!s->initialized && !s->implicit) {
		reply_error(s, bt, m->id, MCP_RPC_INVALID_REQUEST,
		    "not initialized: send initialize first");
		return;
	}
	if (too_many(s, bt, m->id))
		return;
	c = mcp__call_new();
	msg = relay_msg(f, m);
	if (c == NULL || msg == NULL ||
	    (c->method = strdup(m->method)) == NULL) {
		mcp__call_free(c);
		json_decref(msg);
		reply_error(s, bt, m->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	if (init) {
		s->version = mcp__version_of(want);
		if (s->version == 0)
			s->version = MCP_V_LATEST;
		s->initialized = 1;
		caps = json_object_get(params, "capabilities");
		json_decref(s->client_caps);	/* a retry, on stdio */
		json_decref(s->client_info);
		s->client_caps = json_is_object(caps) ? json_incref(caps) :
		    json_object();
		s->caps = mcp__clientreq_caps(s);
		s->client_info = json_incref(json_object_get(params,
		    "clientInfo"));
		mcp__notify_listen(s);
	}
	c->kind = CALL_RELAY;
	c->id = json_incref(m->id);
	track_here(s, c, key, hash);
	if (bt != NULL) {
		c->batch = bt;
		bt->refs++;
		bt->pending++;
	} else if (s->route != NULL && s->ops->hold != NULL) {
		c->route = s->route;
		s->ops->hold(s, c->route, 1);
	}
	s->srv->metrics.cur = -1;	/* counted when it ends */
	mcp__relay_deliver(s, msg);
	json_decref(msg);
}

static void
relay_notification(struct session *s, struct rpc_fields *f,
    const struct rpc_msg *m)
{
	json_t	*msg;

	if (strcmp(m->method, "notifications/initialized") == 0)
		s->ready = 1;
	if (!s->initialized && !s->implicit)
		return;		/* nothing to tell anyone yet */
	if ((msg = relay_msg(f, m)) != NULL)
		mcp__relay_deliver(s, msg);
	json_decref(msg);
}

/* An answer to a request of the relay's own. */
static void
relay_response(struct session *s, struct rpc_fields *f)
{
	json_t	*msg = json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", f->id);

	if (msg == NULL)
		return;
	if (f->error != NULL)
		json_object_set(msg, "error", f->error);
	else
		json_object_set(msg, "result", f->result != NULL ? f->result :
		    json_null());
	mcp__relay_deliver(s, msg);
	json_decref(msg);
}

/* ---- notifications ---------------------------------------------------- */

/*
 * C will not be answered. A call a worker runs stays tracked until it
 * comes back; a relayed one is owed by nobody on our side, so it ends
 * here, and the relay is told (REASON). Callers that walk the in-flight
 * table must have taken C's hnext first.
 */
static void
drop(struct mcp_call *c, const char *reason)
{
	struct session	*s = c->sess;

	if (c->dropped)
		return;
	ended(c, MO_CANCELLED, 0);
	atomic_store(&c->cancelled, 1);
	c->dropped = 1;
	s->pending--;
	release(s, &c->route);
	if (c->batch != NULL) {
		c->batch->pending--;
		batch_flush(c->batch);
	}
	if (c->kind == CALL_RELAY) {
		mcp__session_untrack(s, c);
		batch_unref(c->batch);
		c->batch = NULL;
		mcp__relay_dropped(c, reason);	/* frees C */
		mcp__session_unref(s);
	} else if (c->kind == CALL_WAIT) {
		/* Nothing runs for it: it ends here. */
		mcp__task_unwait(c);
		mcp__protocol_complete(c);
	} else if (c->kind == CALL_LISTEN) {
		/* Cancelled: no answer, and nothing more sent for it. */
		mcp__protocol_complete(c);
	}
}

void
mcp__protocol_drop(struct mcp_call *c)
{
	drop(c, c->sess->closed ? "the client's session ended" :
	    "the client's connection was lost");
}

/*
 * The connection that ROUTE's answers were to go to is gone, and nobody
 * can resume it: its calls (its batch's too) are cancelled, as if the
 * client had sent notifications/cancelled for each.
 */
void
mcp__protocol_drop_route(struct session *s, void *route)
{
	struct mcp_call	*c, *next;
	size_t		 i;
	int		 relayed;

	for (i = 0; i < s->nbuckets; i++)
		for (c = s->buckets[i]; c != NULL; c = next) {
			next = c->hnext;
			if (!c->dropped && route != NULL &&
			    (c->route == route ||
			    (c->batch != NULL && c->batch->route == route))) {
				relayed = c->kind == CALL_RELAY;
				mcp__protocol_drop(c);
				/* The relay, told, may have ended others: the
				 * chain is walked again (a relayed call is
				 * gone from it once dropped). */
				if (relayed)
					next = i < s->nbuckets ?
					    s->buckets[i] : NULL;
			}
		}
	mcp__server_check_drained(s->srv);
}

/* Loop: the ids of the calls answering on ROUTE, as a JSON array (to
 * free), or NULL for none. */
char *
mcp__protocol_route_ids(struct session *s, void *route)
{
	struct mcp_call	*c;
	json_t		*a = NULL;
	char		*text;
	size_t		 i;

	for (i = 0; i < s->nbuckets; i++)
		for (c = s->buckets[i]; c != NULL; c = c->hnext) {
			if (c->dropped || c->id == NULL || route == NULL ||
			    (c->route != route && (c->batch == NULL ||
			    c->batch->route != route)))
				continue;
			if (a == NULL && (a = json_array()) == NULL)
				return NULL;
			(void)json_array_append(a, c->id);
		}
	if (a == NULL)
		return NULL;
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return text;
}

static void
do_cancelled(struct session *s, json_t *params)
{
	struct mcp_call	*c;
	const char	*reason;
	json_t		*rid;
	char		 key[sizeof(c->key)];

	rid = json_object_get(params, "requestId");
	if (mcp__rpc_id_key(rid, key, sizeof(key)) != MCP_OK)
		return;		/* malformed: ignored, never answered */
	c = mcp__session_find(s, key, mcp__hash(key));
	if (c == NULL && s->inst[0] != '\0' && !s->from_peer &&
	    s->ops->relay != NULL) {
		/* --redis: maybe running on another instance. */
		json_t	*m = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0",
		    "method", "notifications/cancelled", "params", params);
		char	*text = m != NULL ? json_dumps(m, JSON_COMPACT) : NULL;

		if (text != NULL)
			s->ops->relay(s, RELAY_CANCEL, NULL, text,
			    strlen(text));
		free(text);
		json_decref(m);
		return;
	}
	if (c == NULL)
		return;		/* finished already, or never existed */
	MCP_LOG(MCP_LOG_INFO, "call %s cancelled by the client%s", key + 1,
	    s->from_peer ? " (through another instance)" : "");
	reason = json_string_value(json_object_get(params, "reason"));
	drop(c, reason != NULL ? reason : "cancelled by the client");
	mcp__server_check_drained(s->srv);
}

int
mcp__protocol_relayed(struct session *s, int kind, const char *json,
    size_t len)
{
	struct rpc_fields f;
	struct rpc_msg	 m;
	json_t		*msg;
	int		 rc = MCP_EINVAL;

	msg = json_loadb(json, len, 0, NULL);
	if (msg == NULL)
		return MCP_EINVAL;
	if (mcp__rpc_fields_from_json(msg, &f) != MCP_OK) {
		json_decref(msg);
		return MCP_EINVAL;
	}
	mcp__rpc_classify(&f, &m);
	s->from_peer = 1;
	if (kind == RELAY_ANSWER && m.kind == RPC_RESPONSE) {
		mcp__clientreq_answer(s, &f);
		rc = MCP_OK;
	} else if (kind == RELAY_CANCEL && m.kind == RPC_NOTIFICATION &&
	    strcmp(m.method, "notifications/cancelled") == 0) {
		do_cancelled(s, params_of(&f));
		rc = MCP_OK;
	} else if (kind == RELAY_READY && m.kind == RPC_NOTIFICATION &&
	    strcmp(m.method, "notifications/initialized") == 0) {
		if (!s->ready)
			mcp__clientreq_ready(s);
		rc = MCP_OK;
	}
	s->from_peer = 0;
	mcp__rpc_fields_clear(&f);
	json_decref(msg);
	return rc;
}

static void
notification(struct session *s, struct rpc_fields *f,
    const struct rpc_msg *m)
{
	if (strcmp(m->method, "notifications/cancelled") == 0)
		do_cancelled(s, params_of(f));
	else if (s->srv->relay != NULL)
		relay_notification(s, f, m);
	else if (strcmp(m->method, "notifications/initialized") == 0) {
		mcp__clientreq_ready(s);	/* held requests may go */
		/*
		 * --redis: the instance that opened the session, or any
		 * holding a copy, may hold requests of its calls to the
		 * client until it hears this; it came here.
		 */
		if (s->inst[0] != '\0' && !s->from_peer && s->ops->relay != NULL)
			s->ops->relay(s, RELAY_READY, NULL, "{\"jsonrpc\":"
			    "\"2.0\",\"method\":\"notifications/initialized\"}",
			    54);
	}
	else if (strcmp(m->method, "notifications/roots/list_changed") == 0)
		mcp__clientreq_roots_changed(s);
	else
		MCP_LOG(MCP_LOG_DEBUG, "ignoring notification %.80s",
		    m->method);
}

/* ---- tasks/get, tasks/result, tasks/list, tasks/cancel --------------- */

/* The task params.taskId names, or NULL when the request (F) has been
 * answered with -32602, or waits on the store (--redis). */
static struct task *
task_of(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *method, const char *key, uint32_t hash)
{
	struct task	*t;
	const char	*id;
	char		 msg[200];

	id = mcp__json_cstr(json_object_get(params_of(f), "taskId"));
	if (id == NULL) {
		snprintf(msg, sizeof(msg), "tasks/%s: taskId must be a "
		    "string", method);
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
		return NULL;
	}
	t = mcp__task_find(s, id);
	if (t == NULL && s->shared && s->srv->tshare != NULL) {
		/* --redis: maybe another instance's. */
		snprintf(msg, sizeof(msg), "tasks/%s", method);
		task_wait(s, bt, f, msg, key, hash, NULL, id, NULL);
	} else if (t == NULL) {
		snprintf(msg, sizeof(msg), "tasks/%s: task not found (or "
		    "expired): %.64s", method, id);
		reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
	}
	return t;
}

/*
 * A tasks/ request (METHOD) whose answer waits: for T, not yet terminal
 * (tasks/result), or, T NULL, on the store (taskshare.c), for a task
 * another instance may hold, ID (tasks/list: the cursor). Tracked like a
 * call, so that it can be cancelled, is cut with its stream, and is
 * counted by a drain, until it is answered.
 */
static void
task_wait(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *method, const char *key, uint32_t hash, struct task *t,
    const char *id, const json_t *resp)
{
	struct mcp_call	*c;
	char		 msg[120];

	if (bt != NULL) {
		snprintf(msg, sizeof(msg), "%.40s cannot wait inside a batch",
		    method);
		reply_error(s, bt, f->id, MCP_RPC_INVALID_REQUEST, msg);
		return;
	}
	if (too_many(s, NULL, f->id))
		return;
	c = mcp__call_new();
	if (c == NULL || (c->method = strdup(method)) == NULL) {
		mcp__call_free(c);
		reply_error(s, NULL, f->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	c->kind = CALL_WAIT;
	c->id = f->id;
	f->id = NULL;
	track_here(s, c, key, hash);
	if (s->era != NULL)
		c->version = MCP_V20260728;	/* dressed as its answer */
	if (s->route != NULL && s->ops->hold != NULL) {
		c->route = s->route;
		s->ops->hold(s, c->route, 1);
	}
	s->srv->metrics.cur = -1;	/* counted when it ends */
	if (t != NULL)
		mcp__task_wait(t, c);
	else
		mcp__taskshare_ask(s, c, id, s->era != NULL, resp);
}

/* The tasks/ METHOD: 0 when it is one (and has been handled), -1 if
 * not (method not found). Tasks exist in no batch (2025-11-25 has none),
 * so BT is NULL but for a stray one. */
static int
do_tasks(struct session *s, struct batch *bt, struct rpc_fields *f,
    const char *method, const char *key, uint32_t hash)
{
	struct task	*t;
	struct buf	 b = { 0 };
	const char	*cursor;
	json_t		*cur, *res;
	char		 msg[120];
	int		 bad, code;

	if (strcmp(method, "list") == 0) {
		cur = json_object_get(params_of(f), "cursor");
		cursor = mcp__json_cstr(cur);
		res = NULL;
		bad = cur != NULL && cursor == NULL;
		if (!bad && s->shared && s->srv->tshare != NULL) {
			/* --redis: every instance's, from the index. */
			task_wait(s, bt, f, "tasks/list", key, hash, NULL,
			    cursor, NULL);
			return 0;
		}
		if (!bad)
			res = mcp__tasks_list(s, cursor, s->srv->page_size,
			    &bad);
		if (bad)
			reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS,
			    "tasks/list: invalid cursor");
		else
			reply_result_new(s, bt, f->id, res);
		return 0;
	}
	if (strcmp(method, "get") != 0 && strcmp(method, "result") != 0 &&
	    strcmp(method, "cancel") != 0)
		return -1;
	if ((t = task_of(s, bt, f, method, key, hash)) == NULL)
		return 0;
	if (strcmp(method, "get") == 0) {
		reply_result_new(s, bt, f->id, mcp__task_json(t));
	} else if (strcmp(method, "cancel") == 0) {
		if (mcp__task_terminal(t)) {
			snprintf(msg, sizeof(msg), "tasks/cancel: task %s is "
			    "already %s", t->id, t->status ==
			    TASK_COMPLETED ? "completed" : t->status ==
			    TASK_FAILED ? "failed" : "cancelled");
			reply_error(s, bt, f->id, MCP_RPC_INVALID_PARAMS, msg);
			return 0;
		}
		mcp__task_cancel(t);
		reply_result_new(s, bt, f->id, mcp__task_json(t));
	} else if (!mcp__task_terminal(t)) {
		task_wait(s, bt, f, "tasks/result", key, hash, t, NULL,
		    NULL);
	} else if (mcp__task_answer(t, f->id, &b, &code) == MCP_OK) {
		count(s, code != 0 ? MO_ERROR : MO_OK, code);
		reply(s, bt, f->id, &b);
	} else {
		reply_error(s, bt, f->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
	}
	mcp__buf_free(&b);
	return 0;
}

/* ---- dispatch --------------------------------------------------------- */

/* A new reference to the _meta of F's params, or NULL. */
static json_t *
meta_of(struct rpc_fields *f)
{
	struct json_perr e;

	if (f->praw != NULL)
		return f->meta_len > 0 ? mcp__json_parse(f->praw +
		    f->meta_off, f->meta_len, &e) : NULL;
	return json_incref(json_object_get(f->params, "_meta"));
}

/*
 * subscriptions/listen (listen.c): acknowledged, then held open as a
 * call that nothing runs, on the request's route, until the client
 * cancels it or the server ends it.
 */
static void
do_listen(struct session *s, struct rpc_fields *f, const char *key,
    uint32_t hash)
{
	struct mcp_call	*c;
	struct listen	*l;
	json_t		*agreed, *data;
	char		 why[240];
	int		 code;

	if (s->srv->draining) {
		reply_error(s, NULL, f->id, MCP_RPC_INTERNAL_ERROR,
		    "server shutting down");
		return;
	}
	code = mcp__listen_new(s, params_of(f), &l, &agreed, why,
	    sizeof(why));
	if (code == MCP_RPC_MISSING_CAPABILITY) {
		data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities",
		    "extensions", "io.modelcontextprotocol/tasks");
		reply_error_data(s, NULL, f->id, code, why, data);
		json_decref(data);
		return;
	}
	if (code != 0) {
		reply_error(s, NULL, f->id, code, why);
		return;
	}
	if (too_many(s, NULL, f->id)) {
		json_decref(agreed);
		mcp__listen_free(l);
		return;
	}
	c = mcp__call_new();
	if (c == NULL || (c->method = strdup("subscriptions/listen")) ==
	    NULL) {
		mcp__call_free(c);
		json_decref(agreed);
		mcp__listen_free(l);
		reply_error(s, NULL, f->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	c->kind = CALL_LISTEN;
	c->id = f->id;
	f->id = NULL;
	c->listen = l;
	l->call = c;
	track_here(s, c, key, hash);
	if (s->route != NULL && s->ops->hold != NULL) {
		c->route = s->route;
		s->ops->hold(s, c->route, 1);
	}
	s->srv->metrics.cur = -1;	/* counted when it ends */
	mcp__listen_link(l, agreed);
}

/*
 * A 2026-07-28 request (era.c): a session of the modern HTTP POST's, or
 * a request whose _meta names a protocolVersion on one that did not
 * initialize (stdio). Its _meta says all; nothing is kept from one
 * request to the next. It is served by the same methods as the others,
 * with the session's version, log level and capabilities set to the
 * request's while it is dispatched (queued calls copy them). Returns 0
 * for a legacy request, left to the caller; 1 when it was handled.
 */
static int
era_request(struct session *s, struct rpc_fields *f,
    const struct rpc_msg *m, const char *key, uint32_t hash)
{
	struct era_req	 er;
	const char	*method = m->method;
	json_t		*meta, *data;
	char		 why[200];
	int		 code, version, level, caps;

	/* A legacy stateless POST's: the transport said it is no modern
	 * one, so its _meta is not even read. */
	if (!s->era_only && s->implicit)
		return 0;
	meta = meta_of(f);
	if (!s->era_only && !mcp__era_is_modern(meta)) {
		json_decref(meta);
		return 0;
	}
	code = mcp__era_check(meta, &er, &data, why, sizeof(why));
	if (code == 0 && !mcp__era_method(method, &er.cache)) {
		code = MCP_RPC_METHOD_NOT_FOUND;
		snprintf(why, sizeof(why), "method not found: %.100s", method);
	}
	if (code != 0) {
		reply_error_data(s, NULL, m->id, code, why, data);
		json_decref(data);
		json_decref(meta);
		return 1;
	}
	version = s->version;
	level = s->log_level;
	caps = s->caps;
	s->version = er.version;
	/* Opened as a 2026-07-28 session: what mcp_session_protocol says. */
	if (!s->info->opened)
		mcp__session_open(s);
	s->log_level = er.log_level;
	s->caps = er.caps;
	s->era = &er;
	if (strcmp(method, "server/discover") == 0)
		reply_result_new(s, NULL, m->id, mcp__era_discover(s->srv));
	else if (strcmp(method, "subscriptions/listen") == 0)
		do_listen(s, f, key, hash);
	else if (strncmp(method, "tasks/", 6) == 0)
		do_era_tasks(s, f, method, key, hash);
	else if (strcmp(method, "tools/call") == 0)
		do_tools_call(s, NULL, f, key, hash);
	else if (strcmp(method, "tools/list") == 0)
		do_list(s, NULL, m->id, params_of(f), -1);
	else if (strcmp(method, "resources/list") == 0)
		do_list(s, NULL, m->id, params_of(f), FEAT_RESOURCE);
	else if (strcmp(method, "resources/templates/list") == 0)
		do_list(s, NULL, m->id, params_of(f), FEAT_TEMPLATE);
	else if (strcmp(method, "prompts/list") == 0)
		do_list(s, NULL, m->id, params_of(f), FEAT_PROMPT);
	else if (strcmp(method, "resources/read") == 0)
		do_read(s, NULL, f, key, hash);
	else if (strcmp(method, "prompts/get") == 0)
		do_prompt_get(s, NULL, f, key, hash);
	else if (s->srv->feat.complete_fn != NULL)
		do_complete(s, NULL, f, key, hash);
	else
		reply_error(s, NULL, m->id, MCP_RPC_METHOD_NOT_FOUND,
		    "method not found: completion/complete");
	s->era = NULL;
	s->version = version;
	s->log_level = level;
	s->caps = caps;
	json_decref(meta);
	return 1;
}

/*
 * Is M's method the literal LIT? By its length, then one compare the
 * compiler writes inline: a request passes a dozen of these, and a
 * strcmp call cost each about 25 instructions on a tools/call.
 */
static inline int
method_is(const struct rpc_msg *m, const char *lit, size_t n)
{
	return m->method_len == n && memcmp(m->method, lit, n) == 0;
}
#define METHOD_IS(m, lit)	method_is((m), (lit), sizeof(lit) - 1)

static void
request(struct session *s, struct batch *bt, struct rpc_fields *f,
    const struct rpc_msg *m)
{
	const char	*method = m->method;
	char		 key[sizeof(((struct mcp_call *)0)->key)];
	char		 why[160];
	uint32_t	 hash;

	if (f->praw == NULL && f->params != NULL &&
	    !json_is_object(f->params)) {
		reply_error(s, bt, m->id, MCP_RPC_INVALID_PARAMS,
		    "params must be an object");
		return;
	}
	mcp__rpc_id_key(m->id, key, sizeof(key));
	hash = mcp__hash(key);
	if (mcp__session_find(s, key, hash) != NULL) {
		reply_error(s, bt, m->id, MCP_RPC_INVALID_REQUEST,
		    "request id is already in flight");
		return;
	}
	/*
	 * 2026-07-28: never on a session that initialized (legacy). An
	 * initialize with a protocolVersion is legacy whatever its _meta;
	 * one without and with a modern _meta is a modern request, of a
	 * method this era lacks (versioning.mdx, dual-era servers): -32601,
	 * 404 on HTTP, where before it was -32602 for the missing version.
	 */
	if (!s->initialized && bt == NULL && s->srv->relay == NULL &&
	    (!METHOD_IS(m, "initialize") || json_object_get(
	    params_of(f), "protocolVersion") == NULL) && era_request(s, f, m,
	    key, hash))
		return;
	if (METHOD_IS(m, "ping")) {
		reply_result_new(s, bt, m->id, json_object());
		return;
	}
	if (s->srv->relay != NULL) {
		relay_request(s, bt, f, m, key, hash);
		return;
	}
	if (METHOD_IS(m, "initialize")) {
		do_initialize(s, bt, m->id, params_of(f));
		return;
	}
	if (!s->initialized && !s->implicit) {
		reply_error(s, bt, m->id, MCP_RPC_INVALID_REQUEST,
		    "not initialized: send initialize first");
		return;
	}
	/* A stateless request opens its session without initialize. */
	if (!s->info->opened)
		mcp__session_open(s);
	if (METHOD_IS(m, "tools/call")) {
		if (f->praw == NULL && f->params == NULL)
			reply_error(s, bt, m->id, MCP_RPC_INVALID_PARAMS,
			    "tools/call needs params");
		else
			do_tools_call(s, bt, f, key, hash);
	} else if (METHOD_IS(m, "tools/list")) {
		do_list(s, bt, m->id, params_of(f), -1);
	} else if (METHOD_IS(m, "resources/list")) {
		do_list(s, bt, m->id, params_of(f), FEAT_RESOURCE);
	} else if (METHOD_IS(m, "resources/templates/list")) {
		do_list(s, bt, m->id, params_of(f), FEAT_TEMPLATE);
	} else if (METHOD_IS(m, "prompts/list")) {
		do_list(s, bt, m->id, params_of(f), FEAT_PROMPT);
	} else if (METHOD_IS(m, "resources/read")) {
		do_read(s, bt, f, key, hash);
	} else if (METHOD_IS(m, "resources/subscribe")) {
		do_subscribe(s, bt, m->id, params_of(f), 1);
	} else if (METHOD_IS(m, "resources/unsubscribe")) {
		do_subscribe(s, bt, m->id, params_of(f), 0);
	} else if (METHOD_IS(m, "prompts/get")) {
		do_prompt_get(s, bt, f, key, hash);
	} else if (METHOD_IS(m, "completion/complete") &&
	    s->srv->feat.complete_fn != NULL) {
		do_complete(s, bt, f, key, hash);
	} else if (METHOD_IS(m, "logging/setLevel")) {
		do_set_level(s, bt, m->id, params_of(f));
	} else if (s->tasks_on && strncmp(method, "tasks/", 6) == 0 &&
	    do_tasks(s, bt, f, method + 6, key, hash) == 0) {
		;	/* answered, or waiting for its task */
	} else {
		snprintf(why, sizeof(why), "method not found: %.100s", method);
		reply_error(s, bt, m->id, MCP_RPC_METHOD_NOT_FOUND, why);
	}
}

static void
message(struct session *s, struct batch *bt, struct rpc_fields *f)
{
	struct rpc_msg	 m;

	mcp__rpc_classify(f, &m);
	switch (m.kind) {
	case RPC_REQUEST:
		s->nrequests++;
		s->srv->metrics.cur = MM_PENDING;
		s->srv->metrics.cur_name = m.method;
		mcp__lctx.id = m.id;
		mcp__lctx.sid = s->id;
		request(s, bt, f, &m);
		mcp__lctx.id = NULL;
		mcp__lctx.sid = NULL;
		s->srv->metrics.cur = -1;
		break;
	case RPC_NOTIFICATION:
		notification(s, f, &m);
		break;
	case RPC_RESPONSE:
		if (s->srv->relay != NULL)
			relay_response(s, f);
		else
			mcp__clientreq_answer(s, f);
		break;
	case RPC_INVALID:
		/* why == NULL: a malformed notification, never answered. */
		if (m.why != NULL) {
			if (s->srv->metrics.on)
				s->srv->metrics.cur = MM_INVALID;
			reply_error(s, bt, m.id, MCP_RPC_INVALID_REQUEST,
			    m.why);
		}
		break;
	}
}

static void
batch(struct session *s, json_t *arr)
{
	struct rpc_fields f;
	struct batch	*bt;
	size_t		 i;
	char		 why[120];

	if (json_array_size(arr) == 0) {
		mcp__protocol_error(s, NULL, MCP_RPC_INVALID_REQUEST,
		    "empty batch");
		return;
	}
	if ((!s->initialized && !s->implicit) ||
	    s->version != MCP_V20250326) {
		snprintf(why, sizeof(why), "batches are not supported by "
		    "protocol %s", s->initialized || s->implicit ?
		    mcp__version_str(s->version) : "before initialize");
		mcp__protocol_error(s, NULL, MCP_RPC_INVALID_REQUEST, why);
		return;
	}
	bt = calloc(1, sizeof(*bt));
	if (bt == NULL) {
		mcp__protocol_error(s, NULL, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	bt->refs = 1;
	bt->parsing = 1;
	bt->sess = s;
	bt->max_out = 4 * s->srv->max_message;
	s->refs++;
	if (s->route != NULL && s->ops->hold != NULL) {
		bt->route = s->route;
		s->ops->hold(s, bt->route, 1);
	}
	for (i = 0; i < json_array_size(arr); i++) {
		if (mcp__rpc_fields_from_json(json_array_get(arr, i), &f) !=
		    MCP_OK) {
			if (s->srv->metrics.on)
				s->srv->metrics.cur = MM_INVALID;
			reply_error(s, bt, NULL, MCP_RPC_INVALID_REQUEST,
			    "message is not a JSON object");
			continue;
		}
		message(s, bt, &f);
		mcp__rpc_fields_clear(&f);
	}
	bt->parsing = 0;
	batch_flush(bt);
	batch_unref(bt);
}

/* The id of a message that could not be taken as a whole, or NULL. */
static json_t *
id_of(const char *data, size_t len)
{
	struct idscan	 sc;

	mcp__idscan_init(&sc);
	mcp__idscan_feed(&sc, data, len);
	return mcp__idscan_id(&sc);
}

/*
 * Reads DATA as mcp__json_parse_message does (its result in *RC), but
 * refuses first what no session takes: a batch over --max-batch (a 4
 * MiB line holds 90,000 small requests, so it is counted before it is
 * built), then a message that does not parse or is refused. 0: read; -1:
 * refused, with the answer's CODE, WHY and *ID (the refused request's,
 * when it can be told; owned, may be NULL). Inline: every message
 * passes here (a call costs 65 instructions more without).
 */
static inline __attribute__((always_inline)) int
read_message(struct mcp_server *srv, const char *data, size_t len,
    struct rpc_fields *f, json_t **whole, int *rc, int *code, char *why,
    size_t whysz, json_t **id)
{
	struct json_perr e;
	long		 n;

	*id = NULL;
	if (len > 0 && (data[0] == '[' || data[0] == ' ' || data[0] == '\t' ||
	    data[0] == '\r' || data[0] == '\n') &&
	    (n = mcp__json_array_count(data, len)) > srv->max_batch) {
		snprintf(why, whysz, "a batch of %ld messages: at most "
		    "%d are taken (--max-batch)", n, srv->max_batch);
		*code = MCP_RPC_INVALID_REQUEST;
		return -1;
	}
	*rc = mcp__json_parse_message(data, len, f, whole, &e);
	if (*rc >= 0)
		return 0;
	snprintf(why, whysz, "%s: %s at byte %zu",
	    e.code == MCP_JSON_ESYNTAX ? "parse error" : "message refused",
	    e.text, e.position);
	*code = e.code == MCP_JSON_ESYNTAX ? MCP_RPC_PARSE_ERROR :
	    e.code == MCP_JSON_ENOMEM ? MCP_RPC_INTERNAL_ERROR :
	    MCP_RPC_INVALID_REQUEST;
	/* Refused, not unreadable: answer the request by its id. */
	if (e.code != MCP_JSON_ESYNTAX)
		*id = id_of(data, len);
	return -1;
}

/* A refusal of read_message, written into ERR (ID is consumed). */
static int
refuse(struct mcp_server *srv, struct buf *err, json_t *id, int code,
    const char *why)
{
	if (srv->metrics.on)
		mcp__metrics_answer(&srv->metrics, MM_INVALID, MO_ERROR, code);
	mcp__rpc_error(err, id, code, why, NULL);
	json_decref(id);
	return -1;
}

/*
 * What mcp__protocol_input answers 400 (with ERR) before any session
 * looks at DATA: a batch over --max-batch, a message that does not
 * parse or is refused. 0: it would go on (maybe to an error answer
 * down the stream). For --redis, a POST /messages relayed elsewhere.
 */
int
mcp__protocol_precheck(struct mcp_server *srv, const char *data,
    size_t len, struct buf *err)
{
	struct rpc_fields f;
	json_t		*whole, *id;
	char		 why[200];
	int		 rc, code;

	if (read_message(srv, data, len, &f, &whole, &rc, &code, why,
	    sizeof(why), &id) != 0)
		return refuse(srv, err, id, code, why);
	if (rc == 1)
		mcp__rpc_fields_clear(&f);
	json_decref(whole);
	return 0;
}

int
mcp__protocol_input(struct session *s, const char *data, size_t len,
    struct buf *err)
{
	struct rpc_fields f;
	json_t		*whole, *id;
	char		 why[200];
	int		 rc, code;

	if (read_message(s->srv, data, len, &f, &whole, &rc, &code, why,
	    sizeof(why), &id) != 0) {
		if (err != NULL)
			return refuse(s->srv, err, id, code, why);
		mcp__protocol_error(s, id, code, why);
		json_decref(id);
		return 0;
	}
	if (rc == 1) {
		message(s, NULL, &f);
		mcp__rpc_fields_clear(&f);
	} else if (json_is_array(whole)) {
		batch(s, whole);
	} else {
		mcp__protocol_error(s, NULL, MCP_RPC_INVALID_REQUEST,
		    "message is not a JSON object");
	}
	json_decref(whole);
	return 0;
}

/* ---- completions ------------------------------------------------------ */

/* C, a task's call, came back (or ran out of memory making its answer). */
static void
task_answered(struct mcp_call *c)
{
	struct buf	 b = { 0 };

	if (c->out != NULL) {
		mcp__task_finish(c->task, c->out, c->outlen);
		return;
	}
	if (mcp__rpc_error(&b, c->id, MCP_RPC_INTERNAL_ERROR, "out of memory",
	    NULL) == MCP_OK)
		mcp__task_finish(c->task, b.data, b.len);
	mcp__buf_free(&b);
}

void
mcp__protocol_complete(struct mcp_call *c)
{
	struct session	*s = c->sess;
	void		*saved = s->route;

	ev_timer_stop(s->srv->loop, &c->timer);
	if (s->reqs.count > 0)
		mcp__clientreq_drop(s, c);
	mcp__session_untrack(s, c);
	if (c->kind == CALL_LISTEN)
		mcp__listen_gone(c);	/* nothing more goes to it */
	if (c->tpoll != NULL)
		mcp__taskshare_forget(c);	/* a wait on the store ends */
	if (c->kind == CALL_TOOL && c->task != NULL) {
		c->task->call = NULL;
		if (!c->dropped) {
			/* A task's call: its answer is the task's. */
			s->pending--;
			ended(c, c->out == NULL || c->rpc_code != 0 ?
			    MO_ERROR : c->is_error ? MO_IS_ERROR : MO_OK,
			    c->out == NULL ? MCP_RPC_INTERNAL_ERROR :
			    c->rpc_code);
			task_answered(c);
			goto done;
		}
	}
	if (c->dropped) {
		if (c->kind != CALL_LISTEN && (c->out != NULL || s->closed))
			MCP_LOG(MCP_LOG_INFO, "dropping the result of "
			    "cancelled call %s", c->key + 1);
	} else {
		s->pending--;
		s->route = c->route;
		ended(c, c->out == NULL ||
			    c->rpc_code != 0 ? MO_ERROR : c->is_error ?
			    MO_IS_ERROR : MO_OK, c->out == NULL ?
			    MCP_RPC_INTERNAL_ERROR : c->rpc_code);
		/* A listen's answer (listen.c) is dressed already. */
		if (c->out != NULL && c->version == MCP_V20260728 &&
		    c->kind != CALL_LISTEN && !c->dressed &&
		    mcp__era_dress(s->srv, &c->out, &c->outlen,
		    c->kind == CALL_READ ? ERA_CACHE_READ : ERA_CACHE_NONE) !=
		    MCP_OK) {
			free(c->out);
			c->out = NULL;
		}
		if (c->kind == CALL_ROOTS) {
			;	/* a notification's callback: no answer */
		} else if (c->out == NULL) {
			reply_error(s, c->batch, c->id, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
		} else if (c->batch != NULL) {
			batch_add(c->batch, c->id, c->out, c->outlen);
		} else {
			mcp__session_answer(s, c->out, c->outlen);
		}
		s->route = saved;
		release(s, &c->route);
		if (c->batch != NULL) {
			c->batch->pending--;
			batch_flush(c->batch);
		}
	}
done:
	batch_unref(c->batch);
	mcp__call_free(c);
	mcp__session_unref(s);
}

int
mcp__protocol_resume(struct task *t, char *ptext, size_t len)
{
	struct session	*home = t->sess;
	struct mcp_server *srv = home->srv;
	struct mcp_call	*c = NULL;
	int		 ms;

	if (t->tool == NULL || srv->draining || home->closed ||
	    (c = mcp__call_new()) == NULL ||
	    (c->id = json_string(t->id)) == NULL) {
		free(ptext);
		mcp__call_free(c);
		return c == NULL && t->tool != NULL ? MCP_ENOMEM : MCP_ESTATE;
	}
	/* As the client's retry would be: the request's params, its
	 * requestState and inputResponses (mrtr.c reads them), as submit
	 * makes a task's call; no route, no batch. */
	atomic_fetch_add(&t->tool->refs, 1);
	c->tool = t->tool;
	c->kind = CALL_TOOL;
	c->ptext = ptext;
	c->ptextlen = len;
	c->resumed = 1;
	c->task = t;
	t->call = c;
	c->srv = srv;
	c->version = MCP_V20260728;
	c->log_level = -1;
	c->pool = &srv->pool;
	c->caps = t->caps;
	c->info = home->info;
	c->ident = mcp__identity_ref(t->owner);
	c->key[0] = 'T';
	memcpy(c->key + 1, t->id, sizeof(t->id));
	c->hash = mcp__hash(c->key);
	ms = atomic_load(&c->tool->timeout_ms);
	if (ms == 0)
		ms = srv->tool_timeout_ms;
	if (ms > 0)
		c->timeout = ms / 1000.0;
	mcp__session_track(home, c);
	if (atomic_load_explicit(&c->tool->flags, memory_order_relaxed) &
	    MCP_TOOL_LOOP) {
		/* A loop tool runs on the loop, as its first round did. */
		run_here(home, c, NULL, 0);
		return MCP_OK;
	}
	if (mcp__pool_submit(&srv->pool, c) != MCP_OK) {
		t->call = NULL;
		c->task = NULL;
		mcp__session_untrack(home, c);
		home->pending--;
		mcp__call_free(c);
		mcp__session_unref(home);
		return MCP_ESTATE;
	}
	mcp__pool_queued(&srv->pool);
	arm(srv, c);
	return MCP_OK;
}

/* A progress or log message from a running call: before its answer. */
void
mcp__protocol_note(struct mcp_call *n)
{
	struct mcp_call	*c = n->note_of;
	struct session	*s = c->sess;
	void		*saved = s->route;

	s->route = c->route;
	if (n->close_stream) {
		if (!c->dropped && c->route != NULL && s->ops->close != NULL)
			s->ops->close(s, c->route);
	} else if (n->req != NULL)
		mcp__clientreq_send(n);
	else if (!c->dropped)
		mcp__session_send(s, n->out, n->outlen);
	s->route = saved;
	mcp__call_free(n);
}

#define ABORTED	"server shutting down: the call did not finish within the " \
		"grace period"

/* The grace period is over for C, a task's call: the task fails. */
static void
task_aborted(struct mcp_call *c)
{
	struct buf	 b = { 0 };

	if (mcp__rpc_error(&b, c->id, MCP_RPC_INTERNAL_ERROR, ABORTED,
	    NULL) == MCP_OK)
		mcp__task_finish(c->task, b.data, b.len);
	mcp__buf_free(&b);
}

/*
 * The grace period is over: every call still owed an answer gets an
 * error now, so no request goes unanswered, and is flagged cancelled so
 * that its late result is dropped.
 */
void
mcp__protocol_abort(struct session *s)
{
	struct mcp_call	*c, *next;
	struct batch	*bt;
	void		*saved;
	size_t		 i;
	int		 relayed;

	for (i = 0; i < s->nbuckets; i++)
		for (c = s->buckets[i]; c != NULL; c = next) {
			next = c->hnext;
			if (c->dropped)
				continue;
			if (c->kind == CALL_ROOTS) {
				mcp__protocol_drop(c);	/* owes no answer */
				continue;
			}
			bt = c->batch;
			saved = s->route;
			s->route = c->route;
			ended(c, MO_ERROR,
			    MCP_RPC_INTERNAL_ERROR);
			if (c->task != NULL && c->kind == CALL_TOOL)
				task_aborted(c);
			else
				reply_error(s, bt, c->id,
				    MCP_RPC_INTERNAL_ERROR, ABORTED);
			s->route = saved;
			c->batch = NULL;
			/* A relayed call, a waiter, or a task's call (whose
			 * waiters are answered) may take others with it. */
			relayed = c->kind == CALL_RELAY ||
			    c->kind == CALL_WAIT || c->task != NULL;
			drop(c, "the server is shutting down");
			if (relayed)	/* as in mcp__protocol_drop_route */
				next = i < s->nbuckets ? s->buckets[i] : NULL;
			if (bt != NULL) {
				bt->pending--;
				batch_flush(bt);
				batch_unref(bt);
			}
		}
}
