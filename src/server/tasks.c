/*
 * tasks.c: the 2025-11-25 Tasks utility, for tools/call. A call made
 * with params.task is answered at once with a CreateTaskResult, then
 * runs as any call does (the same pool, time limit, cancellation and
 * drain); its answer, when it comes, is kept in the task, and
 * tasks/result hands it out, then or later, on any request of the same
 * session: a client whose stream was cut comes back for it. A task is
 * kept for its ttl (at most --task-ttl) once it has ended, or until its
 * session ends (a task still working after --task-ttl is cancelled);
 * the server keeps at most --max-tasks of them, and --max-task-bytes of
 * their answers. protocol.c parses the requests; this file owns the
 * tasks; with --redis, taskshare.c keeps each one's record in Redis,
 * for the other instances, as it starts, ends and expires. Loop thread
 * only: workers never see a task, only their call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

const char *const mcp__task_status_names[5] = {
	"working", "completed", "failed", "cancelled", "input_required"
};

static void	 expire_cb(struct ev_loop *, ev_timer *, int);

struct task *
mcp__task_new(struct session *s, long long ttl)
{
	struct mcp_server *srv = s->srv;
	struct task	*t;

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	if (mcp__random_id(t->id) != 0) {
		mcp_log(MCP_LOG_ERR, "tasks: getrandom failed: no task id");
		free(t);
		return NULL;
	}
	t->e.key = t->id;
	t->sess = s;
	t->status = TASK_WORKING;
	t->message = "The tool is running.";
	t->created = t->updated = ev_now(srv->loop);
	/* None asked for (0 included: no preference), or more than the
	 * server keeps: the server's. */
	if (ttl <= 0 || ttl > srv->task_ttl_ms)
		ttl = srv->task_ttl_ms;
	t->ttl_ms = ttl;
	/* While it works, the server's own bound; its ttl once it ends. */
	ev_timer_init(&t->expire, expire_cb, srv->task_ttl_ms / 1000.0, 0.0);
	t->expire.data = t;
	return t;
}

/* T has just ended: it is kept for its ttl from now, so that a client
 * has all of it to come for the answer, however long the call ran. */
static void
keep(struct task *t)
{
	struct mcp_server *srv = t->sess->srv;

	if (!t->linked)
		return;
	ev_timer_stop(srv->loop, &t->expire);
	ev_timer_set(&t->expire, t->ttl_ms / 1000.0, 0.0);
	ev_timer_start(srv->loop, &t->expire);
}

int
mcp__task_link(struct task *t)
{
	struct mcp_server *srv = t->sess->srv;

	if (mcp__table_add(&t->sess->tasks, &t->e) != MCP_OK)
		return MCP_ENOMEM;	/* or 128 random bits met twice */
	t->linked = 1;
	srv->ntasks++;
	t->sess->ntasks++;
	ev_timer_start(srv->loop, &t->expire);
	MCP_LOG(MCP_LOG_INFO, "task %s created, kept %lld ms once it ends",
	    t->id, t->ttl_ms);
	mcp__taskshare_put(t);
	return MCP_OK;
}

struct task *
mcp__task_find(struct session *s, const char *id)
{
	return (struct task *)mcp__table_find(&s->tasks, id);
}

/* An RFC 3339 UTC time with milliseconds, in OUT[32]. */
static void
iso_time(double t, char *out, size_t len)
{
	struct tm	 tm;
	time_t		 secs = (time_t)t;
	int		 ms = (int)((t - (double)secs) * 1000);
	size_t		 n;

	if (gmtime_r(&secs, &tm) == NULL) {
		snprintf(out, len, "1970-01-01T00:00:00Z");
		return;
	}
	n = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, len - n, ".%03dZ", ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

json_t *
mcp__task_json(const struct task *t)
{
	char	 created[32], updated[32];

	iso_time(t->created, created, sizeof(created));
	iso_time(t->updated, updated, sizeof(updated));
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:i}", "taskId", t->id,
	    "status", mcp__task_status_names[t->status], "statusMessage",
	    t->why != NULL ? t->why : t->message, "createdAt", created,
	    "lastUpdatedAt", updated, "ttl", (json_int_t)t->ttl_ms,
	    "pollInterval", MCP_TASK_POLL_MS);
}

json_t *
mcp__task_json_era(const struct task *t, int detailed)
{
	char	 created[32], updated[32];
	json_t	*o;

	iso_time(t->created, created, sizeof(created));
	iso_time(t->updated, updated, sizeof(updated));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:i}", "taskId", t->id,
	    "status", mcp__task_status_names[t->status], "statusMessage",
	    t->why != NULL ? t->why : t->message, "createdAt", created,
	    "lastUpdatedAt", updated, "ttlMs", (json_int_t)t->ttl_ms,
	    "pollIntervalMs", MCP_TASK_POLL_MS);
	if (o == NULL || !detailed)
		return o;
	/* What it waits for: the requests not answered yet. */
	if (t->status == TASK_INPUT && t->inputs != NULL &&
	    json_object_set_new(o, "inputRequests", json_deep_copy(
	    t->inputs)) != 0) {
		json_decref(o);
		return NULL;
	}
	/* What the tools/call would have answered: its result (isError
	 * included) or its JSON-RPC error. */
	if (t->status == TASK_COMPLETED && t->result != NULL &&
	    json_object_set_new(o, "result", json_copy(t->result)) != 0) {
		json_decref(o);
		return NULL;
	}
	if (t->status == TASK_FAILED && t->error != NULL &&
	    json_object_set_new(o, "error", json_copy(t->error)) != 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* notifications/tasks/status with T as it is now, on its session's own
 * channel (the stream that asked for the task may be gone). */
static void
notify(struct task *t)
{
	struct session	*s = t->sess;
	struct buf	 b = { 0 };
	void		*saved = s->route;
	json_t		*n;

	if (s->closed)
		return;
	n = json_pack("{s:s, s:s, s:o*}", "jsonrpc", "2.0", "method",
	    "notifications/tasks/status", "params", mcp__task_json(t));
	if (n != NULL && mcp__buf_addjson(&b, n) == MCP_OK) {
		s->route = NULL;
		mcp__session_sendbuf(s, &b);
		s->route = saved;
	}
	json_decref(n);
	mcp__buf_free(&b);
}

int
mcp__task_answer(const struct task *t, const json_t *id, struct buf *b,
    int *code)
{
	json_t		*res, *meta;
	const char	*msg;
	int		 rc;

	if (t->error != NULL || t->result == NULL) {
		*code = MCP_RPC_INTERNAL_ERROR;
		msg = "the task was cancelled: it has no result";
		if (t->error != NULL) {
			*code = (int)json_integer_value(json_object_get(
			    t->error, "code"));
			msg = json_string_value(json_object_get(t->error,
			    "message"));
		}
		return mcp__rpc_error(b, id, *code, msg != NULL ? msg : "",
		    json_object_get(t->error, "data"));
	}
	*code = 0;
	/* A copy, so that the result kept is never touched. */
	res = json_copy(t->result);
	meta = json_object_get(res, "_meta");
	meta = json_is_object(meta) ? json_copy(meta) : json_object();
	if (res == NULL || meta == NULL || json_object_set_new(meta,
	    "io.modelcontextprotocol/related-task", json_pack("{s:s}",
	    "taskId", t->id)) != 0) {
		json_decref(meta);
		json_decref(res);
		return MCP_ENOMEM;
	}
	/* set_new takes META whether it succeeds or not. */
	if (json_object_set_new(res, "_meta", meta) != 0) {
		json_decref(res);
		return MCP_ENOMEM;
	}
	rc = mcp__rpc_result(b, id, res);
	json_decref(res);
	return rc;
}

/* Answers W (a CALL_WAIT, out of T's list) with T's answer, or, when
 * WHY is not NULL, with -32602 WHY: the task is gone. */
static void
answer(struct task *t, struct mcp_call *w, const char *why)
{
	struct buf	 b = { 0 };
	int		 code = MCP_RPC_INVALID_PARAMS, rc;

	w->task = NULL;
	w->wnext = NULL;
	if (why != NULL)
		rc = mcp__rpc_error(&b, w->id, code, why, NULL);
	else
		rc = mcp__task_answer(t, w->id, &b, &code);
	if (rc == MCP_OK) {
		w->out = mcp__buf_steal(&b, &w->outlen);
		w->rpc_code = code;
		w->is_error = code == 0 && t->status == TASK_FAILED;
	}
	mcp__buf_free(&b);
	mcp__protocol_complete(w);	/* frees W */
}

static void
wake(struct task *t, const char *why)
{
	struct mcp_call	*w;

	while ((w = t->waiters) != NULL) {
		t->waiters = w->wnext;
		answer(t, w, why);
	}
}

/*
 * RESULT is the extension's task's call asking the client
 * (input_required, mrtr.c): the task waits for tasks/update with its
 * requests and state, and runs again once all are answered. -1: not
 * such a result.
 */
static int
park(struct task *t, json_t *result)
{
	struct mcp_server *srv = t->sess->srv;
	json_t		*reqs;
	const char	*state, *type;

	reqs = json_object_get(result, "inputRequests");
	state = json_string_value(json_object_get(result, "requestState"));
	type = json_string_value(json_object_get(result, "resultType"));
	if (!json_is_object(reqs) || json_object_size(reqs) == 0 ||
	    state == NULL || type == NULL || strcmp(type, "input_required"))
		return -1;
	free(t->state);
	json_decref(t->inputs);
	json_decref(t->answers);
	t->state = strdup(state);
	t->inputs = json_deep_copy(reqs);
	t->answers = json_object();
	if (t->state == NULL || t->inputs == NULL || t->answers == NULL)
		return 1;	/* out of memory: the task fails */
	t->status = TASK_INPUT;
	t->message = "The tool asks the client (tasks/update answers it).";
	t->updated = ev_now(srv->loop);
	MCP_LOG(MCP_LOG_INFO, "task %s input_required (%zu requests)", t->id,
	    json_object_size(reqs));
	mcp__taskshare_put(t);
	return 0;
}

/* T has ended, or its call runs again: what would run it again (its
 * params, up to --max-message, not counted in --max-task-bytes) or
 * was given it goes, rather than be kept for T's ttl. ALL: T ended. */
static void
let_go(struct task *t, int all)
{
	json_decref(t->answers);
	t->answers = NULL;
	free(t->state);
	t->state = NULL;
	if (!all)
		return;
	json_decref(t->inputs);
	t->inputs = NULL;
	free(t->ptext);
	t->ptext = NULL;
	t->ptextlen = 0;
}

/* The call of T, run again, could not start (WHY): T fails. */
static void
resume_failed(struct task *t, const char *why)
{
	struct buf	 b = { 0 };
	json_t		*id = json_string(t->id);

	if (id != NULL && mcp__rpc_error(&b, id, MCP_RPC_INTERNAL_ERROR, why,
	    NULL) == MCP_OK)
		mcp__task_finish(t, b.data, b.len);
	json_decref(id);
	mcp__buf_free(&b);
}

void
mcp__task_update(struct task *t, const json_t *responses)
{
	struct buf	 b = { 0 };
	json_t		*params, *v;
	const char	*key;
	int		 took = 0, rc;

	if (t->status != TASK_INPUT || !json_is_object(responses))
		return;		/* nothing asked: nothing to take */
	json_object_foreach((json_t *)responses, key, v) {
		if (json_object_get(t->inputs, key) == NULL)
			continue;	/* not asked, or answered already */
		if (json_object_set(t->answers, key, v) != 0)
			return;
		json_object_del(t->inputs, key);
		took++;
	}
	if (took == 0)
		return;
	t->updated = ev_now(t->sess->srv->loop);
	if (json_object_size(t->inputs) > 0) {
		mcp__taskshare_put(t);	/* fewer requests open */
		return;
	}
	/* All answered: the call again, as the client's retry would be. */
	params = json_loadb(t->ptext, t->ptextlen, 0, NULL);
	rc = params != NULL && json_object_set_new(params, "requestState",
	    json_string(t->state)) == 0 && json_object_set(params,
	    "inputResponses", t->answers) == 0 &&
	    mcp__buf_addjson(&b, params) == MCP_OK ? MCP_OK : MCP_ENOMEM;
	json_decref(params);
	let_go(t, 0);
	t->status = TASK_WORKING;
	t->message = "The tool is running.";
	if (rc == MCP_OK) {
		MCP_LOG(MCP_LOG_INFO, "task %s: every request answered, its "
		    "call runs again", t->id);
		rc = mcp__protocol_resume(t, b.data, b.len);
		b.data = NULL;	/* taken */
	}
	mcp__buf_free(&b);
	if (rc != MCP_OK) {
		resume_failed(t, rc == MCP_ENOMEM ? "out of memory" :
		    "the task's call could not run again (its tool is gone, "
		    "or the server is busy)");
		return;
	}
	mcp__taskshare_put(t);
}

void
mcp__task_finish(struct task *t, const char *json, size_t len)
{
	struct mcp_server *srv = t->sess->srv;
	struct json_perr e;
	json_t		*resp, *err;
	char		 msg[200];
	int		 rc = -1;

	if (mcp__task_terminal(t))
		return;		/* cancelled, or timed out, first */
	resp = mcp__json_parse(json, len, &e);
	if (t->era && (rc = park(t, json_object_get(resp, "result"))) == 0) {
		json_decref(resp);
		return;
	}
	if (rc > 0) {	/* asked, but could not wait: out of memory */
		json_decref(resp);
		resp = NULL;
	}
	err = json_object_get(resp, "error");
	if (resp == NULL) {
		t->error = json_pack("{s:i, s:s}", "code",
		    MCP_RPC_INTERNAL_ERROR, "message", "out of memory");
	} else if (srv->task_bytes + len > srv->max_task_bytes) {
		snprintf(msg, sizeof(msg), "the task's result (%zu bytes) "
		    "would pass the %zu bytes the server keeps for task "
		    "results (--max-task-bytes)", len, srv->max_task_bytes);
		t->error = json_pack("{s:i, s:s}", "code",
		    MCP_RPC_INTERNAL_ERROR, "message", msg);
		mcp_log(MCP_LOG_NOTICE, "task %s: %s", t->id, msg);
	} else if (err != NULL) {
		t->error = json_incref(err);
		t->bytes = len;
	} else {
		t->result = json_incref(json_object_get(resp, "result"));
		t->bytes = len;
	}
	json_decref(resp);
	srv->task_bytes += t->bytes;
	if (t->result != NULL && (t->era || !json_is_true(json_object_get(
	    t->result, "isError")))) {
		/* The extension: failed is for JSON-RPC errors only, a
		 * result with isError is completed. */
		t->status = TASK_COMPLETED;
		t->message = "The tool finished.";
	} else {
		t->status = TASK_FAILED;
		t->message = t->result != NULL ?
		    "The tool reported an error (isError)." :
		    "The call ended with a JSON-RPC error.";
		err = json_object_get(t->error, "message");
		if (json_is_string(err)) {
			free(t->why);
			t->why = strdup(json_string_value(err));
		}
	}
	t->updated = ev_now(srv->loop);
	MCP_LOG(MCP_LOG_INFO, "task %s %s", t->id, mcp__task_status_names[t->status]);
	let_go(t, 1);
	keep(t);
	mcp__taskshare_put(t);
	notify(t);
	wake(t, NULL);
}

void
mcp__task_cancel(struct task *t)
{
	struct mcp_call	*c = t->call;

	t->status = TASK_CANCELLED;
	t->message = "The task was cancelled by request.";
	t->updated = ev_now(t->sess->srv->loop);
	MCP_LOG(MCP_LOG_INFO, "task %s cancelled", t->id);
	let_go(t, 1);
	/* The call goes on until its callback returns; its answer is
	 * dropped. */
	if (c != NULL && !c->dropped)
		mcp__protocol_drop(c);
	keep(t);
	mcp__taskshare_put(t);
	notify(t);
	wake(t, NULL);
	mcp__server_check_drained(t->sess->srv);
}

void
mcp__task_wait(struct task *t, struct mcp_call *w)
{
	w->task = t;
	w->wnext = t->waiters;
	t->waiters = w;
}

void
mcp__task_unwait(struct mcp_call *w)
{
	struct mcp_call	**p;

	if (w->task == NULL)
		return;
	for (p = &w->task->waiters; *p != NULL; p = &(*p)->wnext)
		if (*p == w) {
			*p = w->wnext;
			break;
		}
	w->task = NULL;
	w->wnext = NULL;
}

void
mcp__task_free(struct task *t, const char *why)
{
	struct mcp_server *srv;
	struct mcp_call	*c;

	if (t == NULL)
		return;
	srv = t->sess->srv;
	if (t->linked) {
		mcp__table_remove(&t->sess->tasks, t->id);
		srv->ntasks--;
		t->sess->ntasks--;
		ev_timer_stop(srv->loop, &t->expire);
	}
	srv->task_bytes -= t->bytes;
	if ((c = t->call) != NULL) {
		c->task = NULL;
		t->call = NULL;
		if (!c->dropped)
			mcp__protocol_drop(c);
	}
	wake(t, why);
	json_decref(t->result);
	json_decref(t->error);
	mcp__identity_unref(t->owner);
	json_decref(t->inputs);
	json_decref(t->answers);
	free(t->state);
	free(t->ptext);
	mcp__tool_unref(t->tool);
	free(t->why);
	free(t);
}

/* Its ttl ran out after it ended, or --task-ttl while it still worked:
 * the task and its answer go (a call still running is cancelled). */
static void
expire_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct task	*t = w->data;
	struct mcp_server *srv = t->sess->srv;
	char		 why[80];

	(void)loop;
	(void)revents;
	MCP_LOG(MCP_LOG_INFO, "task %s expired", t->id);
	snprintf(why, sizeof(why), "task %s has expired", t->id);
	mcp__taskshare_del(t);	/* it goes by its TTL too: now */
	mcp__task_free(t, why);
	mcp__server_check_drained(srv);
}

static json_t *
list_json(const struct entry *e, int version)
{
	(void)version;
	return mcp__task_json((const struct task *)e);
}

json_t *
mcp__tasks_list(struct session *s, const char *cursor, int limit, int *bad)
{
	return mcp__table_list(&s->tasks, "tasks", cursor, limit, 0,
	    list_json, bad);
}

int
mcp__tasks_running(struct mcp_server *srv)
{
	struct session	*s;
	struct entry	*e;
	struct task	*t;

	if (srv->ntasks == 0)
		return 0;
	for (s = srv->sessions; s != NULL; s = s->snext)
		for (e = s->tasks.head; e != NULL; e = e->next) {
			t = (struct task *)e;
			if (t->call != NULL && !t->call->dropped)
				return 1;
		}
	return 0;
}

int
mcp__tasks_running_in(const struct session *s)
{
	const struct entry *e;
	const struct task *t;

	for (e = s->tasks.head; e != NULL; e = e->next) {
		t = (const struct task *)e;
		if (t->call != NULL && !t->call->dropped)
			return 1;
	}
	return 0;
}

void
mcp__tasks_close(struct session *s)
{
	while (s->tasks.head != NULL)
		mcp__task_free((struct task *)s->tasks.head,
		    "the task's session ended");
}
