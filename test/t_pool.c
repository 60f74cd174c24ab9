/*
 * t_pool.c: unit tests for the worker pool in src/pool.c, on a real libev
 * loop. Each test builds a tool by hand whose callback records which
 * thread ran it, then submits calls and collects them through
 * mcp__pool_completions when the ev_async fires, with a timer as a safety
 * net. Checked: every call comes back exactly once; calls run on several
 * threads at once; a full queue refuses without touching the call; a
 * plug holds calls until unplugged; a slow call does not hold up quick
 * ones while a worker is free; the pool grows past its core workers when
 * they are all stuck, up to its maximum; mcp__pool_stop waits for the
 * workers and returns the calls that never ran. The test's main thread
 * plays the loop thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ev.h>
#include <jansson.h>

#include "server/server.h"
#include "tap.h"

#define NMANY	10000

/* What the callback saw, per call index. */
struct rec {
	pthread_t	 thread;
	atomic_int	 runs;
};

static struct rec	 recs[NMANY];
static atomic_int	 running;	/* callbacks inside right now */
static atomic_int	 max_running;

/* A gate the blocking calls wait at. */
static pthread_mutex_t	 gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 gate_cond = PTHREAD_COND_INITIALIZER;
static int		 gate_open;

static void
gate_set(int open)
{
	pthread_mutex_lock(&gate_lock);
	gate_open = open;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

static void
sleep_ms(long ms)
{
	struct timespec	 ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		continue;
}

static double
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Polls until *V reaches WANT, for at most 10 s; 0 if it never does. */
static int
await(atomic_int *v, int want)
{
	int	 i;

	for (i = 0; i < 1000; i++) {
		if (atomic_load(v) >= want)
			return 1;
		sleep_ms(10);
	}
	return 0;
}

/*
 * The tool callback. Arguments: i (the record), ms (sleep), block (wait
 * at the gate). Answers "ran I".
 */
static void
tool_fn(mcp_call *call)
{
	json_t	*args = mcp_call_args(call);
	int	 i, ms, block, now, max;

	i = (int)json_integer_value(json_object_get(args, "i"));
	ms = (int)json_integer_value(json_object_get(args, "ms"));
	block = json_is_true(json_object_get(args, "block"));
	now = atomic_fetch_add(&running, 1) + 1;
	max = atomic_load(&max_running);
	while (now > max &&
	    !atomic_compare_exchange_weak(&max_running, &max, now))
		continue;
	if (i >= 0 && i < NMANY) {
		recs[i].thread = pthread_self();
		atomic_fetch_add(&recs[i].runs, 1);
	}
	if (ms > 0)
		sleep_ms(ms);
	if (block) {
		pthread_mutex_lock(&gate_lock);
		while (!gate_open)
			pthread_cond_wait(&gate_cond, &gate_lock);
		pthread_mutex_unlock(&gate_lock);
	}
	atomic_fetch_sub(&running, 1);
	mcp_result_textf(call, "ran %d", i);
}

/* A tool as the registry would hold it; the caller has one reference. */
static struct tool *
tool_new(void)
{
	struct tool	*t;
	json_t		*schema;
	char		 err[200];

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		exit(2);
	atomic_init(&t->refs, 1);
	t->name = strdup("probe");
	t->fn = tool_fn;
	schema = json_pack("{s:s, s:[s], s:{s:{s:s}}}", "type", "object",
	    "required", "i", "properties", "i", "type", "integer");
	t->in = mcp__schema_compile(schema, 1, err, sizeof(err));
	json_decref(schema);
	if (t->name == NULL || t->in == NULL) {
		diag("tool_new: %s", err);
		exit(2);
	}
	return t;
}

/* A call of T with id I and the params text PARAMS, as protocol.c
 * hands it over: the worker builds the params from the text. */
static struct mcp_call *
call_text(struct tool *t, int i, const char *params)
{
	struct mcp_call	*c;

	c = mcp__call_new();
	if (c == NULL)
		exit(2);
	atomic_fetch_add(&t->refs, 1);
	c->tool = t;
	c->id = json_integer(i);
	c->ptext = strdup(params);
	if (c->ptext == NULL)
		exit(2);
	c->ptextlen = strlen(params);
	c->version = MCP_V_LATEST;
	return c;
}

/* A call with arguments {i, ms, block}. */
static struct mcp_call *
call_new(struct tool *t, int i, int ms, int block)
{
	char	 params[200];

	snprintf(params, sizeof(params), "{\"name\":\"probe\","
	    "\"arguments\":{\"i\":%d,\"ms\":%d,\"block\":%s}}", i, ms,
	    block ? "true" : "false");
	return call_text(t, i, params);
}

/* ---- the loop side ---------------------------------------------------- */

struct harness {
	struct ev_loop	*loop;
	ev_async	 wake;
	ev_timer	 guard;
	struct pool	 pool;
	struct mcp_call	*head;	/* completions, in order */
	struct mcp_call	*tail;
	int		 ndone;
	int		 want;
	int		 wakeups;
	int		 timed_out;
};

static void
wake_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct harness	*h = w->data;
	struct mcp_call	*c, *next;

	(void)revents;
	h->wakeups++;
	for (c = mcp__pool_completions(&h->pool); c != NULL; c = next) {
		next = c->next;
		c->next = NULL;
		if (h->tail != NULL)
			h->tail->next = c;
		else
			h->head = c;
		h->tail = c;
		h->ndone++;
	}
	if (h->ndone >= h->want)
		ev_break(loop, EVBREAK_ALL);
}

static void
guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct harness	*h = w->data;

	(void)revents;
	h->timed_out = 1;
	ev_break(loop, EVBREAK_ALL);
}

/* A pool of NTHREADS workers that grows to MAX; MAX 0 means fixed. */
static void
harness_start2(struct harness *h, int nthreads, int max, int max_queued)
{
	memset(h, 0, sizeof(*h));
	h->loop = ev_loop_new(EVFLAG_AUTO);
	if (h->loop == NULL)
		exit(2);
	ev_async_init(&h->wake, wake_cb);
	ev_timer_init(&h->guard, guard_cb, 0.0, 0.0);
	h->wake.data = h->guard.data = h;
	ev_async_start(h->loop, &h->wake);
	is_int(mcp__pool_start(&h->pool, nthreads, max ? max : nthreads,
	    max_queued, h->loop, &h->wake, mcp__call_run), MCP_OK,
	    "pool of %d workers started", nthreads);
	atomic_store(&running, 0);
	atomic_store(&max_running, 0);
	memset(recs, 0, sizeof(recs));
}

static void
harness_start(struct harness *h, int nthreads, int max_queued)
{
	harness_start2(h, nthreads, 0, max_queued);
}

/* Runs the loop until N calls have come back in all, or SECS pass. */
static int
harness_wait(struct harness *h, int n, double secs)
{
	h->want = n;
	if (h->ndone < n) {
		ev_timer_set(&h->guard, secs, 0.0);
		ev_timer_start(h->loop, &h->guard);
		ev_run(h->loop, 0);
		ev_timer_stop(h->loop, &h->guard);
	}
	return h->ndone >= n;
}

/* Waits until every worker is parked, so timings start from idle. */
static void
harness_idle(struct harness *h, int nthreads)
{
	int	 i, idle = 0;

	for (i = 0; i < 1000; i++) {
		pthread_mutex_lock(&h->pool.lock);
		idle = h->pool.idle;
		pthread_mutex_unlock(&h->pool.lock);
		if (idle == nthreads)
			break;
		sleep_ms(5);
	}
	ok(idle == nthreads, "all %d workers idle", nthreads);
}

/* Stops the pool (nothing may be left) and frees what came back. */
static void
harness_end(struct harness *h, const char *name)
{
	struct mcp_call	*c, *next;

	ok(mcp__pool_stop(&h->pool) == NULL, "%s: nothing left at stop",
	    name);
	for (c = h->head; c != NULL; c = next) {
		next = c->next;
		mcp__call_free(c);
	}
	ev_timer_stop(h->loop, &h->guard);
	ev_async_stop(h->loop, &h->wake);
	ev_loop_destroy(h->loop);
}

/* ---- tests ------------------------------------------------------------ */

static void
t_basic(void)
{
	struct harness	 h;
	struct tool	*t;
	struct mcp_call	*c, *cancelled, *invalid;
	char		 want[200];
	int		 i, seen[8], good, rc;

	t = tool_new();
	harness_start(&h, 3, 64);
	rc = MCP_OK;
	for (i = 0; i < 8; i++)
		if (rc == MCP_OK)
			rc = mcp__pool_submit(&h.pool, call_new(t, i, 20, 0));
	is_int(rc, MCP_OK, "8 calls submitted");

	cancelled = call_new(t, 100, 0, 0);
	atomic_store(&cancelled->cancelled, 1);
	is_int(mcp__pool_submit(&h.pool, cancelled), MCP_OK,
	    "a cancelled call is accepted");
	invalid = call_text(t, 101, "{\"name\":\"probe\",\"arguments\":"
	    "{\"i\":\"101\"}}");
	is_int(mcp__pool_submit(&h.pool, invalid), MCP_OK,
	    "a call with bad arguments is accepted");

	is_int(h.ndone, 0, "nothing comes back before the loop runs");
	ok(harness_wait(&h, 10, 10.0), "10 calls came back (%d)", h.ndone);
	ok(!h.timed_out, "before the safety timer");
	ok(h.wakeups >= 1 && h.wakeups <= 10, "through the ev_async "
	    "(%d wakeups)", h.wakeups);
	ok(mcp__pool_completions(&h.pool) == NULL,
	    "completion list empty after the drain");

	memset(seen, 0, sizeof(seen));
	good = 1;
	for (c = h.head; c != NULL; c = c->next) {
		i = (int)json_integer_value(c->id);
		if (i >= 0 && i < 8) {
			seen[i]++;
			snprintf(want, sizeof(want), "{\"jsonrpc\":\"2.0\","
			    "\"id\":%d,\"result\":{\"content\":[{\"type\":"
			    "\"text\",\"text\":\"ran %d\"}]}}", i, i);
			if (c->out == NULL || strcmp(c->out, want) != 0 ||
			    c->outlen != strlen(want)) {
				diag("call %d: %s", i, c->out ? c->out : "-");
				good = 0;
			}
		}
	}
	ok(good, "each response is exact");
	for (i = 0; i < 8 && seen[i] == 1 && atomic_load(&recs[i].runs) == 1;
	    i++)
		continue;
	is_int(i, 8, "each call ran and came back once");
	ok(cancelled->out == NULL, "cancelled call: no response built");
	is_int(atomic_load(&recs[100].runs), 0, "cancelled call: not run");
	ok(invalid->out != NULL && strstr(invalid->out,
	    "\"isError\":true") != NULL && strstr(invalid->out,
	    "invalid arguments") != NULL && strstr(invalid->out,
	    "\"id\":101") != NULL, "bad arguments: an isError result");
	is_int(atomic_load(&recs[101].runs), 0, "bad arguments: not run");
	harness_end(&h, "basic");
	is_int(atomic_load(&t->refs), 1, "every call released the tool");
	mcp__tool_unref(t);
}

static void
t_concurrent(void)
{
	struct harness	 h;
	struct tool	*t;
	double		 t0, ms;
	int		 i, j, distinct;

	t = tool_new();
	harness_start(&h, 4, 16);
	harness_idle(&h, 4);
	t0 = now_ms();
	for (i = 0; i < 4; i++)
		mcp__pool_submit(&h.pool, call_new(t, i, 100, 0));
	ok(harness_wait(&h, 4, 10.0), "4 calls of 100 ms came back");
	ms = now_ms() - t0;
	ok(ms < 250.0, "in well under 400 ms: %.0f ms", ms);
	distinct = 0;
	for (i = 0; i < 4; i++) {
		for (j = 0; j < i; j++)
			if (pthread_equal(recs[i].thread, recs[j].thread))
				break;
		if (j == i)
			distinct++;
	}
	is_int(distinct, 4, "on 4 different threads");
	is_int(atomic_load(&max_running), 4, "all 4 running at once");
	for (i = 0; i < 4; i++)
		if (pthread_equal(recs[i].thread, pthread_self()))
			break;
	is_int(i, 4, "never on the loop thread");
	harness_end(&h, "concurrent");
	mcp__tool_unref(t);
}

static void
t_full(void)
{
	struct harness	 h;
	struct tool	*t;
	struct mcp_call	*c, *sentinel, *extra;
	char		*ptext;
	int		 refs;

	t = tool_new();
	gate_set(0);
	harness_start(&h, 2, 2);
	is_int(mcp__pool_submit(&h.pool, call_new(t, 0, 0, 1)), MCP_OK,
	    "blocking call 0");
	is_int(mcp__pool_submit(&h.pool, call_new(t, 1, 0, 1)), MCP_OK,
	    "blocking call 1");
	ok(await(&running, 2), "both workers blocked");
	is_int(mcp__pool_submit(&h.pool, call_new(t, 2, 0, 0)), MCP_OK,
	    "queued call 2");
	is_int(mcp__pool_submit(&h.pool, call_new(t, 3, 0, 0)), MCP_OK,
	    "queued call 3");

	c = call_new(t, 4, 0, 0);
	sentinel = mcp__call_new();
	c->next = sentinel;
	ptext = c->ptext;
	refs = atomic_load(&t->refs);
	is_int(mcp__pool_submit(&h.pool, c), MCP_ESTATE,
	    "a third queued call: ESTATE");
	ok(c->next == sentinel, "refused call: next untouched");
	ok(c->ptext == ptext && c->out == NULL && c->tool == t &&
	    json_integer_value(c->id) == 4 &&
	    atomic_load(&c->cancelled) == 0, "refused call: fields untouched");
	is_int(atomic_load(&t->refs), refs, "refused call: tool refs kept");
	is_int(atomic_load(&recs[4].runs), 0, "refused call: never run");
	is_int(mcp__pool_submit(&h.pool, c), MCP_ESTATE, "refused again");

	gate_set(1);
	ok(harness_wait(&h, 4, 10.0), "the 4 accepted calls came back");
	c->next = NULL;
	is_int(mcp__pool_submit(&h.pool, c), MCP_OK,
	    "once drained, the refused call is accepted");
	extra = call_new(t, 5, 0, 0);
	is_int(mcp__pool_submit(&h.pool, extra), MCP_OK, "and another");
	ok(harness_wait(&h, 6, 10.0), "both came back");
	is_int(atomic_load(&recs[4].runs), 1, "call 4 ran once");
	mcp__call_free(sentinel);
	harness_end(&h, "full");
	gate_set(0);
	mcp__tool_unref(t);
}

static void *
open_later(void *arg)
{
	(void)arg;
	sleep_ms(200);
	gate_set(1);
	return NULL;
}

static void
t_stop(void)
{
	struct harness	 h;
	struct tool	*t;
	struct mcp_call	*left, *c, *next;
	pthread_t	 opener;
	int		 n, order, i;

	t = tool_new();
	gate_set(0);
	harness_start(&h, 1, 10);
	mcp__pool_submit(&h.pool, call_new(t, 0, 0, 1));
	ok(await(&running, 1), "the worker is blocked in call 0");
	for (i = 1; i <= 3; i++)
		mcp__pool_submit(&h.pool, call_new(t, i, 0, 0));
	pthread_create(&opener, NULL, open_later, NULL);
	left = mcp__pool_stop(&h.pool);
	is_int(atomic_load(&running), 0, "stop waited for the running call");
	is_int(atomic_load(&recs[0].runs), 1, "call 0 ran");
	n = 0;
	order = 1;
	for (c = left; c != NULL; c = c->next) {
		i = (int)json_integer_value(c->id);
		if (n < 3 && (i != n + 1 || c->out != NULL))
			order = 0;
		if (n == 3 && (i != 0 || c->out == NULL))
			order = 0;
		n++;
	}
	is_int(n, 4, "stop returned 4 calls");
	ok(order, "the 3 never run, oldest first, then the finished one");
	for (i = 1; i <= 3 && atomic_load(&recs[i].runs) == 0; i++)
		continue;
	is_int(i, 4, "calls 1-3 never ran");
	pthread_join(opener, NULL);
	for (c = left; c != NULL; c = next) {
		next = c->next;
		mcp__call_free(c);
	}
	/* The pool is stopped: only the loop is left to free. */
	ev_async_stop(h.loop, &h.wake);
	ev_loop_destroy(h.loop);
	gate_set(0);
	is_int(atomic_load(&t->refs), 1, "every call released the tool");
	mcp__tool_unref(t);

	/* Stopping an idle pool returns nothing. */
	harness_start(&h, 2, 4);
	harness_end(&h, "idle pool");
}

static void
t_plug(void)
{
	struct harness	 h;
	struct tool	*t;
	struct mcp_call	*a, *b, *left, *c, *next;
	int		 i, n, has_a, has_b;

	t = tool_new();
	gate_set(0);

	/* While plugged, calls are held; unplug queues them together. */
	harness_start(&h, 2, 3);
	mcp__pool_plug(&h.pool);
	for (i = 0; i < 3; i++)
		mcp__pool_submit(&h.pool, call_new(t, i, 0, 0));
	a = call_new(t, 3, 0, 0);
	is_int(mcp__pool_submit(&h.pool, a), MCP_ESTATE,
	    "held calls count towards the queue limit");
	sleep_ms(50);
	is_int(atomic_load(&recs[0].runs) + atomic_load(&recs[1].runs) +
	    atomic_load(&recs[2].runs), 0, "plugged: held, not run");
	mcp__pool_unplug(&h.pool);
	ok(harness_wait(&h, 3, 10.0), "unplugged: the 3 came back");
	mcp__call_free(a);
	harness_end(&h, "plug");

	/*
	 * A slow call must not hold up quick ones submitted with it while
	 * a worker is free: here one worker is stuck in call 0 and the
	 * other is idle, so calls 1-3 should all come back.
	 */
	harness_start(&h, 2, 16);
	harness_idle(&h, 2);
	mcp__pool_plug(&h.pool);
	mcp__pool_submit(&h.pool, call_new(t, 0, 0, 1));
	for (i = 1; i <= 3; i++)
		mcp__pool_submit(&h.pool, call_new(t, i, 0, 0));
	mcp__pool_unplug(&h.pool);
	harness_wait(&h, 3, 2.0);
	n = 0;
	for (c = h.head; c != NULL; c = c->next)
		if (json_integer_value(c->id) != 0)
			n++;
	if (!ok(n == 3, "quick calls are not stuck behind a blocked one"))
		diag("  %d of 3 came back while call 0 was blocked", n);
	gate_set(1);
	ok(harness_wait(&h, 4, 10.0), "all 4 came back once released");
	harness_end(&h, "slow and quick");
	gate_set(0);

	/* Calls still held by a plug are returned by stop, not lost. */
	harness_start(&h, 2, 8);
	mcp__pool_plug(&h.pool);
	a = call_new(t, 0, 0, 0);
	b = call_new(t, 1, 0, 0);
	mcp__pool_submit(&h.pool, a);
	mcp__pool_submit(&h.pool, b);
	left = mcp__pool_stop(&h.pool);
	n = has_a = has_b = 0;
	for (c = left; c != NULL; c = c->next) {
		n++;
		has_a |= c == a;
		has_b |= c == b;
	}
	ok(n == 2 && has_a && has_b, "stop returns the calls a plug held");
	is_int(atomic_load(&recs[0].runs) + atomic_load(&recs[1].runs), 0,
	    "and never ran them");
	for (c = left; c != NULL; c = next) {
		next = c->next;
		mcp__call_free(c);
	}
	if (!has_a)
		mcp__call_free(a);
	if (!has_b)
		mcp__call_free(b);
	ev_async_stop(h.loop, &h.wake);
	ev_loop_destroy(h.loop);
	is_int(atomic_load(&t->refs), 1, "every call released the tool");
	mcp__tool_unref(t);
}

/* The live worker count, read under the pool's lock. */
static int
nthreads(struct harness *h)
{
	int	 n;

	pthread_mutex_lock(&h->pool.lock);
	n = h->pool.nthreads;
	pthread_mutex_unlock(&h->pool.lock);
	return n;
}

static void
t_grow(void)
{
	struct harness	 h;
	struct tool	*t;
	int		 i, q;

	t = tool_new();
	gate_set(0);

	/* One core worker, stuck; two calls wait behind it. */
	harness_start2(&h, 1, 3, 16);
	mcp__pool_submit(&h.pool, call_new(t, 0, 0, 1));
	ok(await(&running, 1), "the core worker is stuck in call 0");
	for (i = 1; i <= 2; i++)
		mcp__pool_submit(&h.pool, call_new(t, i, 0, 0));
	ev_now_update(h.loop);
	is_int(mcp__pool_grow(&h.pool, 60.0), 2,
	    "grow: 2 queued, none old enough yet");
	is_int(nthreads(&h), 1, "so no new worker");
	sleep_ms(30);
	ev_now_update(h.loop);
	q = mcp__pool_grow(&h.pool, 0.02);
	is_int(q, 2, "grow: 2 calls waited 30 ms");
	is_int(nthreads(&h), 3, "two workers added");
	ok(harness_wait(&h, 2, 10.0), "the waiting calls ran on them");
	is_int(atomic_load(&recs[0].runs), 1, "call 0 still stuck");
	gate_set(1);
	ok(harness_wait(&h, 3, 10.0), "call 0 came back once released");
	harness_end(&h, "grow");
	gate_set(0);

	/* Growth stops at max. */
	harness_start2(&h, 1, 2, 16);
	mcp__pool_submit(&h.pool, call_new(t, 0, 0, 1));
	ok(await(&running, 1), "the core worker is stuck again");
	for (i = 1; i <= 3; i++)
		mcp__pool_submit(&h.pool, call_new(t, i, 0, 1));
	sleep_ms(30);
	ev_now_update(h.loop);
	mcp__pool_grow(&h.pool, 0.02);
	is_int(nthreads(&h), 2, "3 calls waiting, max 2: one worker added");
	ok(await(&running, 2), "and it took a call");
	sleep_ms(30);
	ev_now_update(h.loop);
	mcp__pool_grow(&h.pool, 0.02);
	is_int(nthreads(&h), 2, "still 2 after another check");
	gate_set(1);
	ok(harness_wait(&h, 4, 10.0), "all 4 came back");
	harness_end(&h, "max");
	gate_set(0);

	/* Idle workers mean no growth, however old the queue. */
	harness_start2(&h, 2, 4, 16);
	harness_idle(&h, 2);
	is_int(mcp__pool_grow(&h.pool, 0.0), 0, "grow: nothing queued");
	is_int(nthreads(&h), 2, "no worker added");
	harness_end(&h, "idle");
	mcp__tool_unref(t);
}

static void
t_many(void)
{
	static int	 seen[NMANY];
	struct harness	 h;
	struct tool	*t;
	struct mcp_call	*c;
	char		 prefix[64];
	int		 i, rc, bad, twice, never, wrong;

	t = tool_new();
	harness_start(&h, 4, NMANY);
	rc = MCP_OK;
	for (i = 0; i < NMANY && rc == MCP_OK; i++)
		rc = mcp__pool_submit(&h.pool, call_new(t, i, 0, 0));
	is_int(rc, MCP_OK, "%d tiny calls submitted", NMANY);
	ok(harness_wait(&h, NMANY, 120.0), "all came back (%d)", h.ndone);
	bad = 0;
	for (c = h.head; c != NULL; c = c->next) {
		i = (int)json_integer_value(c->id);
		if (i < 0 || i >= NMANY) {
			bad++;
			continue;
		}
		seen[i]++;
		snprintf(prefix, sizeof(prefix), "{\"jsonrpc\":\"2.0\","
		    "\"id\":%d,", i);
		if (c->out == NULL || strncmp(c->out, prefix,
		    strlen(prefix)) != 0)
			bad++;
	}
	twice = never = wrong = 0;
	for (i = 0; i < NMANY; i++) {
		if (seen[i] > 1)
			twice++;
		if (seen[i] == 0)
			never++;
		if (atomic_load(&recs[i].runs) != 1)
			wrong++;
	}
	is_int(h.ndone, NMANY, "exactly %d completions", NMANY);
	is_int(twice, 0, "none came back twice");
	is_int(never, 0, "none went missing");
	is_int(wrong, 0, "each callback ran exactly once");
	is_int(bad, 0, "each response carries its own id");
	ok(h.wakeups < NMANY, "wakeups coalesce (%d for %d calls)",
	    h.wakeups, NMANY);
	harness_end(&h, "many");
	is_int(atomic_load(&t->refs), 1, "every call released the tool");
	mcp__tool_unref(t);
}

int
main(void)
{
	t_basic();
	t_concurrent();
	t_full();
	t_stop();
	t_plug();
	t_grow();
	t_many();
	return tap_done();
}
