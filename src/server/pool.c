/*
 * pool.c: the worker threads and the two queues that are the only place
 * where the loop thread and the workers meet. The loop submits calls to
 * a bounded FIFO (a full queue is refused at once, never blocked on);
 * workers run them, append them to the completion list and wake the loop
 * with ev_async only on the empty-to-non-empty transition (h2o), and the
 * loop swaps the whole list out under the lock and drains it unlocked
 * (libuv). Workers run with every signal blocked, so SIGTERM and SIGINT
 * reach the loop.
 *
 * The pool is elastic: it keeps CORE threads, and when every thread is
 * busy and a call has waited longer than GROW_AFTER (slow tools holding
 * all the workers), the loop's timer adds threads up to MAX; extra
 * threads leave after IDLE_EXIT seconds without work. So a slow tool
 * never blocks the others, and CPU-bound load stays on CORE threads.
 *
 * A call the callback deferred (mcp_call_defer) is not the worker's to
 * post: the worker moves on, and the call reaches the completion list
 * later, from whichever thread finishes it (mcp__pool_post_deferred).
 * The pool counts such calls, and mcp__pool_stop waits for the last, so
 * that no thread posts to a pool that is gone.
 */
#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

#define IDLE_EXIT	30	/* seconds before an extra thread leaves */

/*
 * Lock held. Sleeps until there is work; 0 means leave. Workers sleep on
 * a semaphore, not a condition variable: glibc hands a mutex back from
 * pthread_cond_wait marked contended, which costs every call one more
 * futex system call when the worker unlocks it. A post may outlive its
 * waiter (one that timed out, or was woken twice): the next wait then
 * returns at once, finds no work and sleeps again.
 */
static int
wait_for_work(struct pool *p)
{
	struct timespec	 until;
	int		 extra, rc;

	while (p->head == NULL && !p->stop) {
		p->idle++;
		extra = p->nthreads > p->core;
		pthread_mutex_unlock(&p->lock);
		if (extra) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += IDLE_EXIT;
			while ((rc = sem_timedwait(&p->wakeup, &until)) != 0 &&
			    errno == EINTR)
				;
		} else
			while ((rc = sem_wait(&p->wakeup)) != 0 &&
			    errno == EINTR)
				;
		pthread_mutex_lock(&p->lock);
		p->idle--;
		if (extra && rc != 0 && p->head == NULL &&
		    p->nthreads > p->core)
			return 0;
	}
	return p->head != NULL;
}

/* Hands a list of finished calls to the loop: one lock, one wake-up. */
static void
post(struct pool *p, struct mcp_call *first, struct mcp_call *last)
{
	int	 wake;

	pthread_mutex_lock(&p->clock);
	wake = p->chead == NULL;
	if (p->ctail != NULL)
		p->ctail->next = first;
	else
		p->chead = first;
	p->ctail = last;
	pthread_mutex_unlock(&p->clock);
	if (wake)
		ev_async_send(p->loop, p->wake);
}

void
mcp__pool_post(struct pool *p, struct mcp_call *c)
{
	c->next = NULL;
	post(p, c, c);
}

void
mcp__pool_defer(struct pool *p)
{
	pthread_mutex_lock(&p->clock);
	p->deferred++;
	pthread_mutex_unlock(&p->clock);
}

/*
 * Any thread: a deferred call, finished, joins the completion list, and
 * stops being counted in the same lock, so that mcp__pool_stop, woken,
 * finds it there. The loop is woken under the lock too: once the count
 * is down, mcp__pool_stop may return and the server be freed, and this
 * thread must not touch the loop after that. While mcp__pool_stop waits
 * the loop has stopped running, and it collects the list itself.
 */
void
mcp__pool_post_deferred(struct pool *p, struct mcp_call *c)
{
	c->next = NULL;
	pthread_mutex_lock(&p->clock);
	if (p->chead == NULL && !p->dwait)
		ev_async_send(p->loop, p->wake);
	if (p->ctail != NULL)
		p->ctail->next = c;
	else
		p->chead = c;
	p->ctail = c;
	if (--p->deferred == 0 && p->dwait)
		pthread_cond_signal(&p->dcond);
	pthread_mutex_unlock(&p->clock);
}

/*
 * A worker takes one call at a time, so a slow call never holds others
 * hostage, and hands it back at once; the loop is woken only when the
 * completion list was empty, so under load wake-ups coalesce.
 */
static void *
worker(void *arg)
{
	struct worker	*w = arg;
	struct pool	*p = w->pool;
	struct mcp_call	*c;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		if (!wait_for_work(p))
			break;
		c = p->head;
		p->head = c->next;
		if (p->head == NULL)
			p->tail = NULL;
		p->queued--;
		atomic_store_explicit(&p->nqueued, p->queued,
		    memory_order_relaxed);
		pthread_mutex_unlock(&p->lock);
		c->next = NULL;
		if (p->run(c) == 0)
			post(p, c, c);
	}
	/* Lock held: leaving, idle too long or stopping; join me later. */
	p->nthreads--;
	w->state = WORKER_EXITED;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/*
 * Lock held. Starts one worker, with every signal blocked, in a free
 * slot; a slot whose thread has left is joined first. Threads stay
 * joinable so that mcp__pool_stop can wait for every one of them.
 */
static int
spawn(struct pool *p)
{
	struct worker	*w = NULL;
	sigset_t	 all, old;
	int		 i, rc;

	for (i = 0; i < p->max; i++)
		if (p->workers[i].state != WORKER_RUNNING) {
			w = &p->workers[i];
			break;
		}
	if (w == NULL)
		return MCP_ESTATE;
	if (w->state == WORKER_EXITED) {
		pthread_join(w->tid, NULL);	/* it has left: no wait */
		w->state = WORKER_FREE;
	}
	w->pool = p;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->tid, NULL, worker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		mcp_log(MCP_LOG_ERR, "pthread_create: %s", strerror(rc));
		return MCP_ESYS;
	}
	w->state = WORKER_RUNNING;
	p->nthreads++;
	return MCP_OK;
}

/* Runs only while calls are queued, so an idle server never wakes. */
static void
grow_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	if (mcp__pool_grow(w->data, MCP_GROW_AFTER) == 0)
		ev_timer_stop(loop, w);
}

/* Loop: calls were queued: watch that they do not wait behind slow ones. */
void
mcp__pool_queued(struct pool *p)
{
	if (!ev_is_active(&p->grow))
		ev_timer_again(p->loop, &p->grow);
}

/*
 * Starts CORE workers, growing to MAX under slow calls, each running RUN
 * on the calls it takes (mcp__call_run: the pool does not know what a
 * call does, as libuv's does not know its work_cb). Completions wake
 * WAKE on LOOP. Returns MCP_OK, or MCP_ESYS after logging (no thread is
 * left running then).
 */
int
mcp__pool_start(struct pool *p, int core, int max, int max_queued,
    struct ev_loop *loop, ev_async *wake, int (*run)(struct mcp_call *))
{
	int	 i, rc = MCP_OK;

	memset(p, 0, sizeof(*p));
	p->max_queued = max_queued;
	p->core = core;
	p->max = max > core ? max : core;
	p->loop = loop;
	p->wake = wake;
	p->run = run;
	ev_timer_init(&p->grow, grow_cb, MCP_GROW_AFTER / 2,
	    MCP_GROW_AFTER / 2);
	p->grow.data = p;
	p->workers = calloc((size_t)p->max, sizeof(*p->workers));
	if (p->workers == NULL)
		return MCP_ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->clock, NULL);
	pthread_cond_init(&p->dcond, NULL);
	sem_init(&p->wakeup, 0, 0);
	p->started = 1;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < core && rc == MCP_OK; i++)
		rc = spawn(p);
	pthread_mutex_unlock(&p->lock);
	if (rc != MCP_OK) {
		mcp__pool_stop(p);
		return rc;
	}
	return MCP_OK;
}

/*
 * Queues C, or holds it while the pool is plugged (the loop is working
 * through one read's worth of input). Refuses with MCP_ESTATE when the
 * queue, counting held calls, is full; C is untouched then.
 */
int
mcp__pool_submit(struct pool *p, struct mcp_call *c)
{
	int	 full;

	pthread_mutex_lock(&p->lock);
	full = p->queued + p->held >= p->max_queued || p->stop;
	pthread_mutex_unlock(&p->lock);
	if (full)
		return MCP_ESTATE;
	c->next = NULL;
	c->queued_at = ev_now(p->loop);
	if (p->htail != NULL)
		p->htail->next = c;
	else
		p->hhead = c;
	p->htail = c;
	p->held++;
	if (!p->plugged)
		mcp__pool_unplug(p);
	return MCP_OK;
}

/*
 * Loop: would a call be refused now? Asked before every line of input,
 * so it reads a mirror of the queue length instead of taking the lock
 * the workers contend on; being a moment stale only delays a pause.
 */
int
mcp__pool_full(struct pool *p)
{
	return atomic_load_explicit(&p->nqueued, memory_order_relaxed) +
	    p->held >= p->max_queued;
}

/* Loop: hold submitted calls until mcp__pool_unplug. */
void
mcp__pool_plug(struct pool *p)
{
	p->plugged = 1;
}

/* Loop: queues the held calls with one lock and wakes enough workers. */
void
mcp__pool_unplug(struct pool *p)
{
	int	 n, wake;

	p->plugged = 0;
	if (p->hhead == NULL)
		return;
	n = p->held;
	pthread_mutex_lock(&p->lock);
	if (p->tail != NULL)
		p->tail->next = p->hhead;
	else
		p->head = p->hhead;
	p->tail = p->htail;
	p->queued += n;
	atomic_store_explicit(&p->nqueued, p->queued, memory_order_relaxed);
	/* A busy worker will find the jobs anyway: no futex call needed. */
	wake = p->idle < n ? p->idle : n;
	pthread_mutex_unlock(&p->lock);
	p->hhead = p->htail = NULL;
	p->held = 0;
	while (wake-- > 0)
		sem_post(&p->wakeup);
}

/*
 * Loop, from a timer while calls are queued: when every worker is busy
 * and the oldest call has waited GROW_AFTER seconds, add workers (one per
 * such call, up to max). Returns the number of calls still queued.
 */
int
mcp__pool_grow(struct pool *p, double grow_after)
{
	struct mcp_call	*c;
	double		 now = ev_now(p->loop);
	int		 n, queued;

	pthread_mutex_lock(&p->lock);
	queued = p->queued;
	if (p->idle == 0 && !p->stop) {
		n = 0;
		for (c = p->head; c != NULL && n < queued; c = c->next) {
			if (now - c->queued_at < grow_after ||
			    p->nthreads >= p->max)
				break;
			if (spawn(p) != MCP_OK)
				break;
			n++;
		}
		if (n > 0)
			MCP_LOG(MCP_LOG_INFO, "pool: all workers busy, %d "
			    "more (now %d)", n, p->nthreads);
	}
	pthread_mutex_unlock(&p->lock);
	return queued;
}

struct mcp_call *
mcp__pool_completions(struct pool *p)
{
	struct mcp_call	*c;

	pthread_mutex_lock(&p->clock);
	c = p->chead;
	p->chead = p->ctail = NULL;
	pthread_mutex_unlock(&p->clock);
	return c;
}

/*
 * Stops the workers and joins every one, then waits until every deferred
 * call has been finished. A callback that never returns, or a deferred
 * call never finished, blocks here: calls are flagged cancelled before
 * this is called, and their owners must poll. Returns the calls still
 * queued or completed (notes among them), oldest first, for the caller
 * to free.
 */
struct mcp_call *
mcp__pool_stop(struct pool *p)
{
	struct mcp_call	*left, *c, *t;
	int		 i;

	if (!p->started)
		return NULL;
	p->started = 0;
	ev_timer_stop(p->loop, &p->grow);
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	/* Calls a plug still holds never reached a worker either. */
	if (p->hhead != NULL) {
		if (p->tail != NULL)
			p->tail->next = p->hhead;
		else
			p->head = p->hhead;
		p->tail = p->htail;
		p->hhead = p->htail = NULL;
		p->held = 0;
	}
	p->plugged = 0;
	left = p->head;
	p->head = p->tail = NULL;
	p->queued = 0;
	/* A leaving worker marks its own slot: read them under the lock. */
	for (i = 0; i < p->max; i++) {
		p->workers[i].join = p->workers[i].state != WORKER_FREE;
		if (p->workers[i].state == WORKER_RUNNING)
			sem_post(&p->wakeup);
	}
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->max; i++)
		if (p->workers[i].join)
			pthread_join(p->workers[i].tid, NULL);
	free(p->workers);
	p->workers = NULL;
	pthread_mutex_lock(&p->clock);
	if (p->deferred > 0)
		mcp_log(MCP_LOG_NOTICE, "shutdown: waiting for %d deferred "
		    "call%s to be finished", p->deferred,
		    p->deferred == 1 ? "" : "s");
	p->dwait = 1;
	while (p->deferred > 0)
		pthread_cond_wait(&p->dcond, &p->clock);
	p->dwait = 0;
	pthread_mutex_unlock(&p->clock);
	c = mcp__pool_completions(p);
	if (left == NULL)
		left = c;
	else {
		for (t = left; t->next != NULL; t = t->next)
			;
		t->next = c;
	}
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->clock);
	pthread_cond_destroy(&p->dcond);
	sem_destroy(&p->wakeup);
	return left;
}
