/*
 * taskshare.c: tasks that every instance can reach (--redis). A task
 * runs where it was made, as tasks.c has it; this file keeps its record
 * in the store (struct task_store, redis.c's) for the instances that do
 * not hold it:
 *   - the record, <prefix>task:<id>: the task as tasks/get shows it, and
 *     once it has ended its result or error, with who may see it (the
 *     session, or the 2026-07-28 subject) and the instance running it.
 *     That instance is its only writer while it lives: at its start, at
 *     its end (kept for its ttl from then), and gone when it expires. A
 *     lost instance's running tasks are failed by another (redis.c's
 *     heartbeat, from mcp__taskshare_working);
 *   - a session's index (its tasks/list), which ends with the session;
 *   - a request for a task not held here waits on the store as a
 *     CALL_WAIT does on a local task: it polls the record (20 ms, then
 *     doubling to 500 ms) until it has its answer, and is cancelled,
 *     cut with its stream and aborted at a drain like any call;
 *   - tasks/cancel and tasks/update are relayed to the instance running
 *     the task (the only writer), and answered once the record shows
 *     them: the task ended, or no longer asks what was answered (an
 *     update names the record it answers, its "updated": a later round
 *     asking under the same keys takes no earlier answer).
 * Loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define RECORD_V	1
#define POLL_FIRST	0.02	/* s: the first poll of a record */
#define POLL_MAX	0.5	/* s: the slowest */
#define TELL_AGAIN	8	/* polls between relays resent (a PUBLISH
				   heard by nobody is lost) */
#define WORKING_SLACK	10000	/* ms a running task's record outlives
				   --task-ttl, its owner's bound */

enum { P_GET, P_RESULT, P_CANCEL, P_LIST, P_UPDATE };

/* A request waiting on the store: C's, until C is answered or dropped. */
struct tpoll {
	struct mcp_call	*c;		/* NULL: gone (freed once !busy) */
	struct mcp_server *srv;
	int		 what;		/* P_* */
	int		 era;		/* the extension's request */
	char		 id[33];	/* the task's */
	char		 sid[40];	/* the asking session's (legacy) */
	char		*sub;		/* era: the asker's subject, or NULL */
	int		 offset;	/* tasks/list: the page's */
	json_t		*resp;		/* tasks/update: its inputResponses */
	double		 seen;		/* tasks/update: the record's
					   "updated" when they were told */
	int		 asked;		/* tasks/cancel: the owner was told */
	int		 polls;
	int		 busy;		/* a store command unanswered */
	double		 delay;
	ev_timer	 timer;
};

static void	 step(struct tpoll *);

void
mcp__taskshare_set(struct mcp_server *srv, const struct task_store *ops,
    void *st, const char *tag)
{
	srv->tshare = ops;
	srv->tshare_st = st;
	snprintf(srv->tshare_tag, sizeof(srv->tshare_tag), "%.8s",
	    tag != NULL ? tag : "");
}

int
mcp__task_shared(const struct task *t)
{
	return t->sess->srv->tshare != NULL && (t->era || t->sess->shared);
}

/* The most a record may be read back: its result's bound, and the rest. */
static size_t
record_max(const struct mcp_server *srv)
{
	return srv->max_task_bytes + 64 * 1024;
}

/* ---- the record ---------------------------------------------------------- */

static char *
record(const struct task *t)
{
	struct mcp_server *srv = t->sess->srv;
	const char	*sub = t->owner != NULL ? t->owner->subject : NULL;
	json_t		*o;
	char		*text;

	o = json_pack("{s:i, s:s, s:s, s:s, s:s?, s:b, s:s, s:s, s:f, s:f, "
	    "s:I}", "v", RECORD_V, "id", t->id, "inst", srv->tshare_tag,
	    "sid", t->era ? "" : t->sess->id, "sub", t->era ? sub : NULL,
	    "era", t->era, "status", mcp__task_status_names[t->status],
	    "msg", t->why != NULL ? t->why : t->message, "created",
	    t->created, "updated", t->updated, "ttl", (json_int_t)t->ttl_ms);
	if (o != NULL && t->result != NULL)
		json_object_set(o, "result", t->result);
	if (o != NULL && t->error != NULL)
		json_object_set(o, "error", t->error);
	if (o != NULL && t->status == TASK_INPUT && t->inputs != NULL)
		json_object_set(o, "inputs", t->inputs);
	text = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

void
mcp__taskshare_put(struct task *t)
{
	struct mcp_server *srv = t->sess->srv;
	char		*rec;
	long long	 ttl;

	if (!mcp__task_shared(t) || !t->linked)
		return;
	rec = record(t);
	if (rec == NULL) {
		mcp_log(MCP_LOG_ERR, "tasks: task %s: out of memory: its "
		    "record is not shared", t->id);
		return;
	}
	ttl = mcp__task_terminal(t) ? t->ttl_ms :
	    (long long)srv->task_ttl_ms + WORKING_SLACK;
	if (srv->tshare->put(srv->tshare_st, t->id, t->era ? NULL :
	    t->sess->id, rec, strlen(rec), ttl, !mcp__task_terminal(t)) != 0)
		MCP_LOG(MCP_LOG_WARN, "tasks: task %s: Redis is away: other "
		    "instances see it as it was", t->id);
	free(rec);
}

void
mcp__taskshare_again(struct mcp_server *srv)
{
	struct session	*s;
	struct entry	*e;

	if (srv->tshare == NULL)
		return;
	for (s = srv->sessions; s != NULL; s = s->snext)
		for (e = s->tasks.head; e != NULL; e = e->next)
			mcp__taskshare_put((struct task *)e);
}

void
mcp__taskshare_del(struct task *t)
{
	struct mcp_server *srv = t->sess->srv;

	if (mcp__task_shared(t) && t->linked)
		(void)srv->tshare->del(srv->tshare_st, t->id, t->era ? NULL :
		    t->sess->id);
}

/* The record's reader, declared in server.h. */
int
mcp__taskshare_load(const char *rec, size_t len, const char *id,
    struct task *t, json_t **hold, const char **sid, const char **sub,
    const char **inst)
{
	json_t		*o, *res = NULL, *err = NULL, *subv = NULL, *in = NULL;
	json_error_t	 e;
	const char	*rid, *status, *msg;
	double		 created, updated;
	json_int_t	 ttl;
	int		 v, era, i;

	memset(t, 0, sizeof(*t));
	*hold = NULL;
	o = json_loadb(rec, len, JSON_REJECT_DUPLICATES, &e);
	if (o == NULL || json_unpack_ex(o, &e, 0, "{s:i, s:s, s:s, s:s, "
	    "s?o, s:b, s:s, s:s, s:F, s:F, s:I, s?o, s?o, s?o}", "v", &v, "id",
	    &rid, "inst", inst, "sid", sid, "sub", &subv, "era", &era,
	    "status", &status, "msg", &msg, "created", &created, "updated",
	    &updated, "ttl", &ttl, "result", &res, "error", &err, "inputs",
	    &in) != 0 || (in != NULL && !json_is_object(in)) ||
	    v != RECORD_V || strcmp(rid, id) != 0 || strlen(*inst) != 8 ||
	    ttl < 0 || !(created >= 0 && created < 1e11) || /* a time_t */
	    !(updated >= 0 && updated < 1e11) || (subv != NULL &&
	    !json_is_string(subv) && !json_is_null(subv)) || (res != NULL && !json_is_object(res)) ||
	    (err != NULL && (!json_is_object(err) || !json_is_integer(
	    json_object_get(err, "code")) || json_integer_value(
	    json_object_get(err, "code")) == 0 || !json_is_string(
	    json_object_get(err, "message"))))) {
		json_decref(o);
		return -1;
	}
	for (i = 0; i < 5; i++)
		if (strcmp(status, mcp__task_status_names[i]) == 0)
			break;
	if (i == 5 || (i == TASK_INPUT && !era) ||
	    (t->why = strdup(msg)) == NULL) {
		json_decref(o);
		return -1;
	}
	*sub = json_string_value(subv);
	snprintf(t->id, sizeof(t->id), "%s", id);
	t->status = (enum task_status)i;
	t->message = "";
	t->created = created;
	t->updated = updated;
	t->ttl_ms = (long long)ttl;
	t->era = era;
	t->result = json_incref(res);
	t->error = json_incref(err);
	t->inputs = t->status == TASK_INPUT ? json_incref(in) : NULL;
	*hold = o;
	return 0;
}

void
mcp__taskshare_unload(struct task *t, json_t *hold)
{
	free(t->why);
	json_decref(t->result);
	json_decref(t->error);
	json_decref(t->inputs);
	json_decref(hold);
}

/* ---- a request waiting on the store -------------------------------------- */

static void
poll_free(struct tpoll *p)
{
	ev_timer_stop(p->srv->loop, &p->timer);
	json_decref(p->resp);
	free(p->sub);
	free(p);
}

void
mcp__taskshare_forget(struct mcp_call *c)
{
	struct tpoll	*p = c->tpoll;

	if (p == NULL)
		return;
	c->tpoll = NULL;
	p->c = NULL;
	ev_timer_stop(p->srv->loop, &p->timer);
	if (!p->busy)
		poll_free(p);
}

/* P's call is answered with B (its result, or its error CODE). */
static void
answer(struct tpoll *p, struct buf *b, int code, int is_error)
{
	struct mcp_call	*c = p->c;

	mcp__taskshare_forget(c);	/* frees P: no command is out */
	c->out = mcp__buf_steal(b, &c->outlen);
	c->rpc_code = code;
	c->is_error = is_error;
	mcp__protocol_complete(c);	/* out of memory, if OUT is NULL */
}

static void
fail(struct tpoll *p, int code, const char *msg)
{
	struct buf	 b = { 0 };

	if (mcp__rpc_error(&b, p->c->id, code, msg, NULL) != MCP_OK)
		mcp__buf_free(&b);
	answer(p, &b, code, 0);
}

static void
result(struct tpoll *p, json_t *res)
{
	struct buf	 b = { 0 };

	if (res == NULL || mcp__rpc_result(&b, p->c->id, res) != MCP_OK)
		mcp__buf_free(&b);
	json_decref(res);
	answer(p, &b, 0, 0);
}

static void
not_found(struct tpoll *p)
{
	char	 msg[200];

	snprintf(msg, sizeof(msg), "%s: task not found (or expired): %.64s",
	    p->c->method, p->id);
	fail(p, MCP_RPC_INVALID_PARAMS, msg);
}

static void
later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	step(w->data);
}

/* P asks again in a while: the task is still working. */
static void
later(struct tpoll *p)
{
	ev_timer_set(&p->timer, p->delay, 0.0);
	ev_timer_start(p->srv->loop, &p->timer);
	p->delay = p->delay * 2 > POLL_MAX ? POLL_MAX : p->delay * 2;
}

/* May P's asker see the task of this record (SID, SUB, ERA its)? */
static int
mine(const struct tpoll *p, const struct task *t, const char *sid,
    const char *sub)
{
	if (p->era != t->era)
		return 0;
	if (!p->era)
		return strcmp(sid, p->sid) == 0;
	if (p->sub == NULL || sub == NULL)
		return p->sub == sub;
	return strcmp(p->sub, sub) == 0;
}

static void
cancel_done(struct tpoll *p, const struct task *t)
{
	char	 msg[120];

	if (p->era) {
		result(p, json_object());	/* acknowledged, as here */
		return;
	}
	if (p->asked && t->status == TASK_CANCELLED) {
		result(p, mcp__task_json(t));
		return;
	}
	snprintf(msg, sizeof(msg), "tasks/cancel: task %s is already %s",
	    t->id, mcp__task_status_names[t->status]);
	fail(p, MCP_RPC_INVALID_PARAMS, msg);
}

/* Does T (input_required) still ask for any of RESP's keys? */
static int
asks(const struct task *t, const json_t *resp)
{
	const char	*key;
	json_t		*v;

	json_object_foreach((json_t *)resp, key, v)
		if (json_object_get(t->inputs, key) != NULL)
			return 1;
	return 0;
}

/* Tells instance INST (T's) to cancel T, or to take RESP for it. */
static int
tell(struct tpoll *p, const char *inst, const struct task *t,
    const json_t *resp)
{
	struct mcp_server *srv = p->srv;
	json_t		*m;
	char		*text;
	int		 rc = -1;

	/* Answers name the record they answer ("updated"): its owner
	 * takes them for no other (a later round's, asking again). */
	m = resp != NULL ? json_pack("{s:s, s:O, s:f}", "taskId", t->id,
	    "inputResponses", resp, "updated", p->seen) :
	    json_pack("{s:s}", "taskId", t->id);
	text = m != NULL ? json_dumps(m, JSON_COMPACT) : NULL;
	if (text != NULL && srv->tshare != NULL)
		rc = srv->tshare->tell(srv->tshare_st, inst, t->era ? NULL :
		    p->sid, text, strlen(text));
	free(text);
	json_decref(m);
	return rc;
}

static void
unload_fail(struct tpoll *p, struct task *t, json_t *hold)
{
	mcp__taskshare_unload(t, hold);
	fail(p, MCP_RPC_INTERNAL_ERROR, "the task store (Redis) is away: "
	    "this task cannot be reached now; try again");
}

static void
got_cb(void *arg, int status, const char *val, size_t len)
{
	struct tpoll	*p = arg;
	struct task	 t;
	struct buf	 b = { 0 };
	json_t		*hold;
	const char	*sid, *sub, *inst;
	int		 code;

	p->busy = 0;
	if (p->c == NULL) {
		poll_free(p);
		return;
	}
	if (status == TS_ERR) {
		fail(p, MCP_RPC_INTERNAL_ERROR, "the task store (Redis) did "
		    "not answer; try again");
		return;
	}
	if (status != TS_OK || val == NULL ||
	    mcp__taskshare_load(val, len, p->id, &t, &hold, &sid, &sub,
	    &inst) != 0) {
		if (status == TS_OK && val != NULL)
			mcp_log(MCP_LOG_WARN, "tasks: the record of task "
			    "%.32s is not of ours: taken for none", p->id);
		not_found(p);
		return;
	}
	if (!mine(p, &t, sid, sub)) {
		mcp__taskshare_unload(&t, hold);
		not_found(p);
		return;
	}
	if (p->what == P_GET) {
		result(p, p->era ? mcp__task_json_era(&t, 1) :
		    mcp__task_json(&t));
	} else if (p->what == P_UPDATE && (t.status != TASK_INPUT ||
	    !asks(&t, p->resp) || (p->asked && t.updated != p->seen))) {
		/* None of them asked (ignored, as here), or taken: the
		 * record no longer asks for any, or is another since they
		 * were told (a later round may ask under the same keys:
		 * they are not its answers). */
		result(p, json_object());
	} else if (p->what == P_UPDATE) {
		/* To the instance holding the task, which takes them (again
		 * after a while: a PUBLISH heard by nobody is lost). */
		if (!p->asked)
			p->seen = t.updated;
		if (p->polls % TELL_AGAIN == 0 && tell(p, inst, &t,
		    p->resp) != 0) {
			unload_fail(p, &t, hold);
			return;
		}
		p->asked = 1;
		p->polls++;
		later(p);
	} else if (mcp__task_terminal(&t) && p->what == P_CANCEL) {
		cancel_done(p, &t);
	} else if (mcp__task_terminal(&t)) {
		/* tasks/result */
		if (mcp__task_answer(&t, p->c->id, &b, &code) != MCP_OK)
			mcp__buf_free(&b);
		answer(p, &b, code, code == 0 && t.status == TASK_FAILED);
	} else {
		/* Still working. A cancel goes to the instance running it
		 * (again after a while: a PUBLISH heard by nobody is lost),
		 * and its answer waits for the record to say it ended. */
		if (p->what == P_CANCEL && p->polls % TELL_AGAIN == 0) {
			(void)tell(p, inst, &t, NULL);
			p->asked = 1;
		}
		p->polls++;
		later(p);
	}
	mcp__taskshare_unload(&t, hold);
}

static void
list_cb(void *arg, int status, size_t n, const char *const *vals,
    const size_t *lens)
{
	struct tpoll	*p = arg;
	struct task	 t;
	json_t		*res, *tasks, *hold;
	const char	*sid, *sub, *inst;
	char		 cursor[24], id[33];
	size_t		 i;
	int		 more = 0;

	p->busy = 0;
	if (p->c == NULL) {
		poll_free(p);
		return;
	}
	if (status != TS_OK) {
		fail(p, MCP_RPC_INTERNAL_ERROR, "the task store (Redis) did "
		    "not answer; try again");
		return;
	}
	tasks = json_array();
	res = json_pack("{s:o*}", "tasks", tasks);
	for (i = 0; res != NULL && i < n; i++) {
		if (lens[i] == 4 && memcmp(vals[i], "more", 4) == 0) {
			more = 1;
			continue;
		}
		/* "<id> <record>": the id the index names. */
		if (lens[i] < 34 || vals[i][32] != ' ')
			continue;
		memcpy(id, vals[i], 32);
		id[32] = '\0';
		if (mcp__taskshare_load(vals[i] + 33, lens[i] - 33, id, &t,
		    &hold, &sid, &sub, &inst) != 0)
			continue;	/* not of ours */
		if (mine(p, &t, sid, sub))
			json_array_append_new(tasks, mcp__task_json(&t));
		mcp__taskshare_unload(&t, hold);
	}
	if (res != NULL && more) {
		snprintf(cursor, sizeof(cursor), "%d", p->offset +
		    p->srv->page_size);
		json_object_set_new(res, "nextCursor", json_string(cursor));
	}
	result(p, res);
}

/* The next command of P: its record, or its page. */
static void
step(struct tpoll *p)
{
	struct mcp_server *srv = p->srv;
	int		 rc = -1;

	if (srv->tshare != NULL) {
		p->busy = 1;
		rc = p->what == P_LIST ? srv->tshare->list(srv->tshare_st,
		    p->sid, p->offset, srv->page_size, record_max(srv),
		    list_cb, p) : srv->tshare->get(srv->tshare_st, p->id,
		    record_max(srv), got_cb, p);
	}
	if (rc != 0) {
		p->busy = 0;
		fail(p, MCP_RPC_INTERNAL_ERROR, "the task store (Redis) is "
		    "away: this task cannot be reached now; try again");
	}
}

void
mcp__taskshare_ask(struct session *s, struct mcp_call *c, const char *id,
    int era, const json_t *resp)
{
	struct tpoll	*p;
	const char	*m = c->method + 6;	/* after "tasks/" */
	const char	*sub = s->ident != NULL ? s->ident->subject : NULL;
	char		*end;
	long		 off = 0;

	p = calloc(1, sizeof(*p));
	if (p == NULL || (sub != NULL && (p->sub = strdup(sub)) == NULL)) {
		free(p);
		c->out = NULL;
		mcp__protocol_complete(c);	/* out of memory */
		return;
	}
	p->srv = s->srv;
	p->c = c;
	c->tpoll = p;
	p->resp = json_incref((json_t *)resp);
	p->era = era;
	p->delay = POLL_FIRST;
	ev_timer_init(&p->timer, later_cb, 0.0, 0.0);
	p->timer.data = p;
	snprintf(p->sid, sizeof(p->sid), "%s", s->id);
	p->what = strcmp(m, "get") == 0 ? P_GET : strcmp(m, "result") == 0 ?
	    P_RESULT : strcmp(m, "cancel") == 0 ? P_CANCEL :
	    strcmp(m, "update") == 0 ? P_UPDATE : P_LIST;
	if (p->what == P_LIST) {
		/* Ours: the offset of the page, as nextCursor said. */
		if (id != NULL && (id[0] < '0' || id[0] > '9' ||
		    (off = strtol(id, &end, 10)) < 0 || *end != '\0' ||
		    off > 1000000000L)) {
			fail(p, MCP_RPC_INVALID_PARAMS,
			    "tasks/list: invalid cursor");
			return;
		}
		p->offset = (int)off;
	} else {
		snprintf(p->id, sizeof(p->id), "%.32s", id);
		/* Longer is no id of ours: not the record of its first 32. */
		if (strlen(id) >= sizeof(p->id)) {
			not_found(p);
			return;
		}
	}
	step(p);
}

/* ---- the instance running the task --------------------------------------- */

/* The task ID held here, in any session (the era's home included). */
static struct task *
find_here(struct mcp_server *srv, const char *id)
{
	struct session	*s;
	struct task	*t;

	for (s = srv->sessions; s != NULL; s = s->snext)
		if ((t = mcp__task_find(s, id)) != NULL)
			return t;
	return NULL;
}

void
mcp__taskshare_cancelled(struct mcp_server *srv, const char *json,
    size_t len)
{
	struct task	*t;
	json_t		*o, *resp, *upd;
	const char	*id;

	o = json_loadb(json, len, 0, NULL);
	id = mcp__json_cstr(json_object_get(o, "taskId"));
	resp = json_object_get(o, "inputResponses");
	upd = json_object_get(o, "updated");
	t = id != NULL ? find_here(srv, id) : NULL;
	if (id == NULL || (resp != NULL && !json_is_number(upd)) ||
	    (resp != NULL && !json_is_object(resp)))
		mcp_log(MCP_LOG_WARN, "tasks: a relayed message not of ours "
		    "(%zu bytes): dropped", len);
	else if (t == NULL || !mcp__task_shared(t))
		MCP_LOG(MCP_LOG_INFO, "tasks: a relayed message for task "
		    "%.32s, not here (ended, or never was)", id);
	else if (resp != NULL && json_number_value(upd) != t->updated) {
		/* Told late (again), the task changed since: a round asking
		 * under the same keys is not answered by them. */
		MCP_LOG(MCP_LOG_INFO, "task %s: a relayed tasks/update of an "
		    "earlier state: ignored", t->id);
		mcp__taskshare_put(t);
	} else if (resp != NULL) {
		MCP_LOG(MCP_LOG_INFO, "task %s: tasks/update through another "
		    "instance", t->id);
		mcp__task_update(t, resp);
		mcp__taskshare_put(t);	/* as it is now: its asker reads it */
	} else if (!mcp__task_terminal(t)) {
		MCP_LOG(MCP_LOG_INFO, "task %s: cancelled through another "
		    "instance", t->id);
		mcp__task_cancel(t);	/* writes its record */
	} else
		mcp__taskshare_put(t);	/* as it is: its asker reads it */
	json_decref(o);
}

int
mcp__taskshare_working(struct mcp_server *srv, struct buf *out)
{
	struct session	*s;
	struct entry	*e;
	struct task	*t;
	int		 rc, first = 1;

	rc = mcp__buf_addc(out, '[');
	for (s = srv->sessions; rc == MCP_OK && s != NULL; s = s->snext)
		for (e = s->tasks.head; rc == MCP_OK && e != NULL;
		    e = e->next) {
			t = (struct task *)e;
			if (mcp__task_terminal(t) || !mcp__task_shared(t))
				continue;
			if (!first)
				rc = mcp__buf_addc(out, ',');
			first = 0;
			if (rc == MCP_OK)
				rc = mcp__buf_addc(out, '"');
			if (rc == MCP_OK)
				rc = mcp__buf_add(out, t->id, strlen(t->id));
			if (rc == MCP_OK)
				rc = mcp__buf_addc(out, '"');
		}
	if (rc == MCP_OK)
		rc = mcp__buf_addc(out, ']');
	return rc;
}
