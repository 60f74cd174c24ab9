/*
 * clientreq.c: requests from the server to the client (sampling,
 * elicitation, roots), made from inside a callback. The worker builds
 * the request and sends it to the loop as a note of its call, so it
 * leaves in order with the call's progress; then it waits on its own
 * condition variable. The loop keeps the request in the session's table
 * until the client answers, the session ends or the call finishes, and
 * hands the answer over under the request's lock. A request is shared
 * by exactly two owners, the worker and the loop, and freed by the
 * last; a late answer, after the worker gave up, is dropped, and the
 * client is told that the server gave up (notifications/cancelled).
 * Also here: the client's notifications/roots/list_changed, which runs
 * the user's callback on a worker so that it can ask for the roots.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

#define DEFAULT_TIMEOUT_MS	60000

struct client_req {
	struct pending_entry	 pe;		/* s->reqs, by the id's number;
						   loop only */
	struct mcp_call		*call;		/* loop only */
	atomic_int		 refs;
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;
	int			 done;		/* under lock, from here on */
	int			 abandoned;
	int			 rc;
	json_t			*result;
	char			*held;		/* loop: not sent yet (see below) */
	size_t			 heldlen;
	char			 id[40];	/* "s" and pe.id (and --redis: "-" and
						   the instance) */
};

/*
 * Server request ids live in their own space, "s1", "s2"..., so that a
 * client never mistakes them for its own; the table (rpc/frame.c, the
 * client's too) is keyed by the number.
 */
static atomic_llong	 next_id = 1;

/* Is R in S's table? */
static int
in_table(struct session *s, struct client_req *r)
{
	return mcp__pending_find(&s->reqs, r->pe.id) == &r->pe;
}

static void
req_unref(struct client_req *r)
{
	if (atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	json_decref(r->result);
	free(r->held);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}

/* Loop: the answer (or its absence) reaches the waiting worker. */
static void
finish(struct client_req *r, int rc, json_t *result)
{
	pthread_mutex_lock(&r->lock);
	if (!r->abandoned && !r->done) {
		r->done = 1;
		r->rc = rc;
		r->result = result;
		result = NULL;
		pthread_cond_signal(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	json_decref(result);		/* nobody is waiting for it */
	req_unref(r);
}

/*
 * Loop: the worker stopped waiting for R (its time ran out, or its call
 * was cancelled). If R went out and is still unanswered, the client is
 * told with notifications/cancelled, as the spec asks of a requester
 * that gives up, so it can stop working on it (close a sampling dialog);
 * its answer would be ignored anyway. Drops the note's reference to R.
 */
static void
give_up(struct session *s, struct client_req *r)
{
	struct buf		 b = { 0 };
	int			 why, rc;

	if (in_table(s, r) && r->held != NULL) {
		(void)mcp__pending_take(&s->reqs, r->pe.id);
		finish(r, MCP_ECANCELED, NULL);	/* never sent: no cancel */
	} else if (in_table(s, r)) {
		(void)mcp__pending_take(&s->reqs, r->pe.id);
		pthread_mutex_lock(&r->lock);
		why = r->rc;
		pthread_mutex_unlock(&r->lock);
		rc = mcp__buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"method\":"
		    "\"notifications/cancelled\",\"params\":{\"requestId\":\"");
		if (rc == MCP_OK)
			rc = mcp__buf_adds(&b, r->id);
		if (rc == MCP_OK)
			rc = mcp__buf_adds(&b, why == MCP_ETIMEDOUT ?
			    "\",\"reason\":\"timed out\"}}" :
			    "\",\"reason\":\"cancelled\"}}");
		if (rc == MCP_OK)
			mcp__session_sendbuf(s, &b);
		mcp__buf_free(&b);
		MCP_LOG(MCP_LOG_INFO, "request %s to the client cancelled: %s",
		    r->id, mcp_strerror(why));
		finish(r, MCP_ECANCELED, NULL);	/* the table's reference */
	}
	req_unref(r);
}

/*
 * Loop: the note carrying R arrived; send it, or fail it at once. A
 * note without a message says that the worker gave up on R. Before the
 * client's notifications/initialized the request is held (the spec asks
 * a server not to send requests until then), and goes out, on its
 * call's route, when that notification comes.
 */
void
mcp__clientreq_send(struct mcp_call *n)
{
	struct client_req	*r = n->req;
	struct mcp_call		*c = n->note_of;
	struct session		*s = c->sess;

	n->req = NULL;
	if (n->out == NULL) {
		give_up(s, r);
		return;
	}
	if (c->dropped || s->closed) {
		finish(r, MCP_ECANCELED, NULL);
		return;
	}
	if (!s->ready && !s->implicit) {
		MCP_LOG(MCP_LOG_DEBUG, "request %s to the client held until "
		    "notifications/initialized", r->id);
		r->held = n->out;
		r->heldlen = n->outlen;
		n->out = NULL;
	} else if (mcp__session_send(s, n->out, n->outlen) != MCP_OK) {
		finish(r, MCP_ECANCELED, NULL);
		return;
	}
	r->call = c;
	if (mcp__pending_add(&s->reqs, &r->pe) != MCP_OK) {
		free(r->held);
		r->held = NULL;
		finish(r, MCP_ECANCELED, NULL);
	}
}

/*
 * Sends R, held until now, on its call's route; fails it if it cannot,
 * or if its call was cancelled meanwhile (its worker may not have seen
 * that yet).
 */
static void
release_held(struct session *s, struct client_req *r)
{
	void			*saved = s->route;
	int			 rc = MCP_ECANCELED;

	if (!r->call->dropped) {
		s->route = r->call->route;
		rc = mcp__session_send(s, r->held, r->heldlen);
		s->route = saved;
	}
	free(r->held);
	r->held = NULL;
	if (rc == MCP_OK)
		return;
	(void)mcp__pending_take(&s->reqs, r->pe.id);
	finish(r, MCP_ECANCELED, NULL);
}

static int
is_held(struct pending_entry *e, void *arg)
{
	(void)arg;
	return ((struct client_req *)e)->held != NULL;
}

/* Loop: notifications/initialized came; the held requests go, oldest
 * (lowest id) first. They are few. */
void
mcp__clientreq_ready(struct session *s)
{
	struct pending_entry	*held, *e, **pp, *oldest;

	s->ready = 1;
	held = mcp__pending_take_if(&s->reqs, is_held, NULL);
	while (held != NULL) {
		oldest = held;
		for (e = held; e != NULL; e = e->next)
			if (e->id < oldest->id)
				oldest = e;
		for (pp = &held; *pp != oldest; pp = &(*pp)->next)
			;
		*pp = oldest->next;
		if (mcp__pending_add(&s->reqs, oldest) != MCP_OK) {
			free(((struct client_req *)oldest)->held);
			((struct client_req *)oldest)->held = NULL;
			finish((struct client_req *)oldest, MCP_ECANCELED,
			    NULL);
			continue;
		}
		release_held(s, (struct client_req *)oldest);
	}
}

/* Loop: F, a response to instance TAG's request, goes there (--redis). */
static void
relay_answer(struct session *s, struct rpc_fields *f, const char *tag)
{
	json_t	*m;
	char	*text;

	if (s->from_peer || s->ops->relay == NULL) {
		MCP_LOG(MCP_LOG_INFO, "a relayed response for instance %.8s "
		    "came back: dropped", tag);
		return;
	}
	m = json_pack("{s:s, s:O, s:O*, s:O*}", "jsonrpc", "2.0", "id", f->id,
	    "result", f->error == NULL ? f->result : NULL, "error", f->error);
	text = m != NULL ? json_dumps(m, JSON_COMPACT) : NULL;
	if (text != NULL)
		s->ops->relay(s, RELAY_ANSWER, tag, text, strlen(text));
	else
		mcp_log(MCP_LOG_ERR, "out of memory: a response for another "
		    "instance lost");
	free(text);
	json_decref(m);
}

/* Loop: a response from the client. Unknown ids are ignored. */
void
mcp__clientreq_answer(struct session *s, struct rpc_fields *f)
{
	struct client_req	*r;
	const char		*id = json_string_value(f->id), *p;
	long long		 n = 0;

	/* "s" and digits, as sent; anything else is no id of ours. */
	if (id == NULL || id[0] != 's' || id[1] == '\0')
		goto unknown;
	for (p = id + 1; *p >= '0' && *p <= '9' && n < (1LL << 60); p++)
		n = n * 10 + (*p - '0');
	if (id[1] == '0' || p == id + 1)
		goto unknown;
	if (*p == '-' && s->inst[0] != '\0' && strlen(p + 1) == 8 &&
	    strspn(p + 1, "0123456789abcdef") == 8 &&
	    strcmp(p + 1, s->inst) != 0) {
		relay_answer(s, f, p + 1);	/* another instance's */
		return;
	}
	if (*p == '-' && s->inst[0] != '\0' && strcmp(p + 1, s->inst) == 0)
		p += 9;
	if (*p != '\0')
		goto unknown;
	r = (struct client_req *)mcp__pending_take(&s->reqs, n);
	if (r == NULL)
		goto unknown;
	if (f->error != NULL) {
		finish(r, MCP_ECLIENT, f->error);
		f->error = NULL;
	} else {
		finish(r, MCP_OK, f->result);
		f->result = NULL;
	}
	return;
unknown:
	MCP_LOG(MCP_LOG_DEBUG, "ignoring a response to no request we sent");
}

static int
of_call(struct pending_entry *e, void *arg)
{
	return arg == NULL || ((struct client_req *)e)->call == arg;
}

/* Loop: fails the requests of call C, or of every call when C is NULL. */
void
mcp__clientreq_drop(struct session *s, struct mcp_call *c)
{
	struct pending_entry	*e, *next;

	for (e = mcp__pending_take_if(&s->reqs, of_call, c); e != NULL;
	    e = next) {
		next = e->next;
		finish((struct client_req *)e, MCP_ECANCELED, NULL);
	}
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Worker: sends METHOD with PARAMS (stolen; NULL for none) and waits.
 * Wakes every 100 ms to notice a cancelled call.
 */
static int
request(mcp_call *call, const char *method, json_t *params, int timeout_ms,
    json_t **result)
{
	struct client_req	*r;
	struct mcp_call		*n;
	struct buf		 b = { 0 };
	json_t			*idv;
	struct timespec		 until;
	double			 deadline, t;
	int			 rc, gave_up = 0;

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		json_decref(params);
		return MCP_ENOMEM;
	}
	atomic_init(&r->refs, 2);	/* the worker and the loop */
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->pe.id = atomic_fetch_add(&next_id, 1);
	/* --redis: "s<n>-<instance>", so that another instance given the
	 * answer knows whose it is. */
	if (call->sess->inst[0] != '\0')
		snprintf(r->id, sizeof(r->id), "s%lld-%.8s", r->pe.id,
		    call->sess->inst);
	else
		snprintf(r->id, sizeof(r->id), "s%lld", r->pe.id);
	idv = json_string(r->id);
	rc = idv != NULL ? mcp__rpc_request(&b, idv, 0, method, params, 0) :
	    MCP_ENOMEM;
	json_decref(idv);
	json_decref(params);
	n = rc == MCP_OK ? mcp__call_new() : NULL;
	if (n != NULL)
		n->out = mcp__buf_steal(&b, &n->outlen);
	mcp__buf_free(&b);
	if (n == NULL || n->out == NULL) {
		mcp__call_free(n);	/* and the spare its content holds */
		req_unref(r);
		req_unref(r);
		return MCP_ENOMEM;
	}
	n->note_of = call;
	n->req = r;
	mcp__pool_post(call->pool, n);

	deadline = now_s() + (timeout_ms > 0 ? timeout_ms :
	    DEFAULT_TIMEOUT_MS) / 1000.0;
	pthread_mutex_lock(&r->lock);
	while (!r->done && !mcp_call_cancelled(call) &&
	    (t = now_s()) < deadline) {
		clock_gettime(CLOCK_REALTIME, &until);
		t = deadline - t < 0.1 ? deadline - t : 0.1;
		until.tv_nsec += (long)(t * 1e9);
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&r->cond, &r->lock, &until);
	}
	if (r->done) {
		rc = r->rc;
		*result = r->result;
		r->result = NULL;
	} else {
		r->abandoned = 1;	/* a late answer is dropped */
		rc = mcp_call_cancelled(call) ? MCP_ECANCELED : MCP_ETIMEDOUT;
		r->rc = rc;		/* for give_up's reason */
		gave_up = 1;
	}
	pthread_mutex_unlock(&r->lock);
	/*
	 * Tell the loop, in order behind the request itself, so that it can
	 * cancel the request with the client. Without memory the request
	 * just stays in the table until the call ends; nothing is lost.
	 */
	if (gave_up) {
		n = mcp__call_new();
		if (n != NULL) {
			atomic_fetch_add(&r->refs, 1);
			n->note_of = call;
			n->req = r;
			mcp__pool_post(call->pool, n);
		}
	}
	req_unref(r);
	if (rc != MCP_OK)
		MCP_LOG(MCP_LOG_INFO, "%s: %s", method, mcp_strerror(rc));
	return rc;
}

/*
 * A loop tool's callback runs on the loop thread, which is the one that
 * would carry the client's answer: waiting for it there never ends.
 */
#define ON_LOOP	"a loop tool (MCP_TOOL_LOOP) cannot wait for the client"

static int
refuse(json_t *params, const char *method, const char *why)
{
	json_decref(params);
	MCP_LOG(MCP_LOG_INFO, "%s not sent: %s", method, why);
	return MCP_ESTATE;
}

/*
 * 2026-07-28 has no requests from server to client. With CAP declared,
 * the request is a multi round-trip one (mrtr.c): answered at once from
 * the retry's inputResponses, or recorded for an input_required answer
 * (MCP_EINPUT), never waited for, so that a loop tool may ask too; a
 * task's, likewise, through its task. A notification's callback has no
 * request to retry, and a completion/complete may not answer
 * input_required (the spec lists
 * tools/call, prompts/get and resources/read). Without CAP declared the
 * call is answered with -32021 (the spec's
 * MissingRequiredClientCapability), whatever the callback sets next.
 */
static int
era_ask(mcp_call *call, json_t *params, const char *method,
    const char *cap, int declared, json_t **result)
{
	char	 msg[120];

	/* A task's call too (the extension's, known by its key "T" and
	 * the task id): its input_required waits in the task for
	 * tasks/update, which runs it again (tasks.c). */
	if (declared && (call->kind == CALL_TOOL ||
	    call->kind == CALL_PROMPT || call->kind == CALL_READ))
		return mcp__mrtr_ask(call, method, params, result);
	if (declared)
		return refuse(params, method, "protocol 2026-07-28 lets only "
		    "tools/call, prompts/get and resources/read ask the "
		    "client");
	snprintf(msg, sizeof(msg), "Missing required client capability: %s",
	    cap);
	if (mcp_result_rpc_error(call, MCP_RPC_MISSING_CAPABILITY, msg) ==
	    MCP_OK)
		call->need_cap = cap;
	return refuse(params, method, msg);
}

int
mcp_call_sample(mcp_call *call, json_t *params, int timeout_ms,
    json_t **result)
{
	*result = NULL;
	if (params == NULL)
		return MCP_ENOMEM;
	if (call->version == MCP_V20260728)
		return era_ask(call, params, "sampling/createMessage",
		    "sampling", call->caps & MCP_CAP_SAMPLING, result);
	if (mcp__loop_call != NULL)
		return refuse(params, "sampling/createMessage", ON_LOOP);
	if (!(call->caps & MCP_CAP_SAMPLING))
		return refuse(params, "sampling/createMessage",
		    "the client did not declare sampling");
	return request(call, "sampling/createMessage", params, timeout_ms,
	    result);
}

int
mcp_call_elicit(mcp_call *call, json_t *params, int timeout_ms,
    json_t **result)
{
	const char	*mode;

	*result = NULL;
	if (params == NULL)
		return MCP_ENOMEM;
	mode = json_string_value(json_object_get(params, "mode"));
	if (call->version == MCP_V20260728)
		return era_ask(call, params, "elicitation/create",
		    "elicitation", call->caps & (mode != NULL &&
		    strcmp(mode, "url") == 0 ? MCP_CAP_ELICIT_URL :
		    MCP_CAP_ELICIT_FORM), result);
	if (mcp__loop_call != NULL)
		return refuse(params, "elicitation/create", ON_LOOP);
	if (mode != NULL && strcmp(mode, "url") == 0) {
		if (!(call->caps & MCP_CAP_ELICIT_URL))
			return refuse(params, "elicitation/create",
			    "the client did not declare URL elicitation");
	} else if (!(call->caps & MCP_CAP_ELICIT_FORM))
		return refuse(params, "elicitation/create",
		    "the client did not declare elicitation");
	return request(call, "elicitation/create", params, timeout_ms, result);
}

int
mcp_call_roots(mcp_call *call, int timeout_ms, json_t **result)
{
	*result = NULL;
	if (call->version == MCP_V20260728)
		return era_ask(call, NULL, "roots/list", "roots",
		    call->caps & MCP_CAP_ROOTS, result);
	if (mcp__loop_call != NULL)
		return refuse(NULL, "roots/list", ON_LOOP);
	if (!(call->caps & MCP_CAP_ROOTS))
		return refuse(NULL, "roots/list",
		    "the client did not declare roots");
	return request(call, "roots/list", NULL, timeout_ms, result);
}

static int
on_roots(mcp_server *srv, mcp_roots_fn fn, void *udata,
    void (*udata_free)(void *))
{
	struct features	*fs;

	if (srv == NULL) {
		if (udata_free != NULL)
			udata_free(udata);
		return MCP_ENOMEM;
	}
	fs = &srv->feat;
	if (srv->running) {
		mcp_log(MCP_LOG_ERR, "mcp_server_on_roots_changed: server "
		    "running");
		if (udata_free != NULL)
			udata_free(udata);
		return MCP_ESTATE;
	}
	if (fs->roots_free != NULL)
		fs->roots_free(fs->roots_udata);
	fs->roots_fn = fn;
	fs->roots_udata = fn != NULL ? udata : NULL;
	fs->roots_free = fn != NULL ? udata_free : NULL;
	if (fn == NULL && udata_free != NULL)
		udata_free(udata);
	return MCP_OK;
}

/*
 * Loop: notifications/roots/list_changed. The user's callback runs on a
 * worker as a call of its own, so that it can ask for the new list with
 * mcp_call_roots like any tool; the call has no id and gets no answer.
 * It is tracked in the session like a request, under a key no request
 * id can have ("r..."; ids are "i...", "s...", "S..."), so that the end
 * of the session cancels it and the drain waits for it; it is not sent
 * on any request's route, there being none. A client that did not
 * declare roots has none to list, and one notification too many (past
 * the in-flight limit or a full queue) is dropped with a log line.
 */
void
mcp__clientreq_roots_changed(struct session *s)
{
	static unsigned		 seq;		/* loop thread only */
	struct mcp_server	*srv = s->srv;
	struct mcp_call		*c;
	int			 caps;

	caps = s->caps;
	if (srv->feat.roots_fn == NULL || !s->initialized ||
	    !(caps & MCP_CAP_ROOTS)) {
		MCP_LOG(MCP_LOG_DEBUG, "ignoring notifications/roots/"
		    "list_changed: %s", srv->feat.roots_fn == NULL ?
		    "no callback" : "the client declared no roots");
		return;
	}
	if (s->inflight >= s->max_inflight) {
		mcp_log(MCP_LOG_WARN, "roots/list_changed dropped: %d requests "
		    "in flight on this session", s->inflight);
		return;
	}
	c = mcp__call_new();
	if (c == NULL) {
		mcp_log(MCP_LOG_ERR, "roots/list_changed: out of memory");
		return;
	}
	c->kind = CALL_ROOTS;
	c->srv = srv;
	c->version = s->version;
	c->log_level = s->log_level;
	c->pool = &srv->pool;
	c->caps = caps;
	c->info = s->info;
	c->ident = mcp__identity_ref(s->ident);
	snprintf(c->key, sizeof(c->key), "r%u", ++seq);
	c->hash = mcp__hash(c->key);
	mcp__session_track(s, c);
	if (mcp__pool_submit(&srv->pool, c) == MCP_OK) {
		mcp__pool_queued(&srv->pool);
		return;
	}
	mcp_log(MCP_LOG_WARN, "roots/list_changed dropped: %d calls queued",
	    srv->queue_size);
	mcp__session_untrack(s, c);
	s->pending--;
	mcp__call_free(c);
	mcp__session_unref(s);
}

/* Loop, when a call is queued: what the client lets it ask. */
int
mcp__caps_bits(const json_t *caps, int version)
{
	json_t	*e;
	int	 bits = 0;

	if (json_is_object(json_object_get(caps, "sampling")))
		bits |= MCP_CAP_SAMPLING;
	if (json_is_object(json_object_get(caps, "roots")))
		bits |= MCP_CAP_ROOTS;
	e = json_object_get(caps, "elicitation");
	if (json_is_object(e)) {
		/* {} means form only; "form" and "url" name the modes. */
		if (json_object_size(e) == 0 ||
		    json_object_get(e, "form") != NULL)
			bits |= MCP_CAP_ELICIT_FORM;
		if (json_object_get(e, "url") != NULL &&
		    version >= MCP_V20251125)
			bits |= MCP_CAP_ELICIT_URL;
	}
	return bits;
}

int
mcp__clientreq_caps(const struct session *s)
{
	return mcp__caps_bits(s->client_caps, s->version);
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_server_on_roots_changed(mcp_server *srv, mcp_roots_fn fn, void *udata,
    void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, NULL,
	    on_roots(srv, fn, udata, udata_free));
}
