/*
 * pool.c: the worker threads and the two queues that are the only place
 * where the loop thread and the workers meet. The loop submits calls to
 * a bounded FIFO (a full queue is refused at once, never blocked on);
 * a worker runs one call, then appends it to the completion list and
 * wakes the loop with ev_async only on the empty-to-non-empty transition
 * (h2o), and the loop swaps the whole list out under the lock and drains
 * it unlocked (libuv). Workers run with every signal blocked, so SIGTERM
 * and SIGINT reach the loop.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-int.h"

/*
 * A worker takes its fair share of the queue at once (up to BATCH), runs
 * those calls, then hands them all back with one lock and at most one
 * wake-up. Under load this turns per-call thread hand-offs into
 * per-batch ones; when the queue is short each worker still takes one.
 */
#define BATCH	16

static void *
worker(void *arg)
{
	struct pool	*p = arg;
	struct mcp_call	*first, *last, *c;
	int		 n, take, wake;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		while (p->head == NULL && !p->stop) {
			p->idle++;
			pthread_cond_wait(&p->cond, &p->lock);
			p->idle--;
		}
		if (p->head == NULL) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		take = p->queued / p->nthreads;
		if (take < 1)
			take = 1;
		if (take > BATCH)
			take = BATCH;
		first = last = p->head;
		for (n = 1; n < take && last->next != NULL; n++)
			last = last->next;
		p->head = last->next;
		if (p->head == NULL)
			p->tail = NULL;
		p->queued -= n;
		pthread_mutex_unlock(&p->lock);

		last->next = NULL;
		for (c = first; c != NULL; c = c->next)
			mcp__call_run(c);

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
}

/*
 * Starts NTHREADS workers. Completions wake WAKE on LOOP. Returns MCP_OK,
 * or MCP_ESYS after logging (no thread is left running then).
 */
int
mcp__pool_start(struct pool *p, int nthreads, int max_queued,
    struct ev_loop *loop, ev_async *wake)
{
	sigset_t	 all, old;
	int		 i, rc;

	memset(p, 0, sizeof(*p));
	p->max_queued = max_queued;
	p->loop = loop;
	p->wake = wake;
	p->threads = calloc((size_t)nthreads, sizeof(*p->threads));
	if (p->threads == NULL)
		return MCP_ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->clock, NULL);
	pthread_cond_init(&p->cond, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < nthreads; i++) {
		rc = pthread_create(&p->threads[i], NULL, worker, p);
		if (rc != 0) {
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			mcp_log(MCP_LOG_ERR, "pthread_create: %s", strerror(rc));
			mcp__pool_stop(p);
			return MCP_ESYS;
		}
		p->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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

	c->next = NULL;
	pthread_mutex_lock(&p->lock);
	full = p->queued + p->held >= p->max_queued || p->stop;
	pthread_mutex_unlock(&p->lock);
	if (full)
		return MCP_ESTATE;
	if (p->plugged) {
		if (p->htail != NULL)
			p->htail->next = c;
		else
			p->hhead = c;
		p->htail = c;
		p->held++;
		return MCP_OK;
	}
	p->hhead = p->htail = c;
	p->held = 1;
	p->plugged = 1;
	mcp__pool_unplug(p);
	return MCP_OK;
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
	/* A busy worker will find the jobs anyway: no futex call needed. */
	wake = p->idle < n ? p->idle : n;
	pthread_mutex_unlock(&p->lock);
	p->hhead = p->htail = NULL;
	p->held = 0;
	if (wake >= p->nthreads)
		pthread_cond_broadcast(&p->cond);
	else
		while (wake-- > 0)
			pthread_cond_signal(&p->cond);
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
 * Stops and joins the workers. A callback that never returns blocks here:
 * callbacks are flagged cancelled before this is called, and must poll.
 * Returns the calls still queued or completed, for the caller to free.
 */
struct mcp_call *
mcp__pool_stop(struct pool *p)
{
	struct mcp_call	*left, *c;
	int		 i;

	if (p->threads == NULL)
		return NULL;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	left = p->head;
	p->head = p->tail = NULL;
	p->queued = 0;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	free(p->threads);
	p->threads = NULL;
	c = mcp__pool_completions(p);
	if (left == NULL)
		left = c;
	else {
		struct mcp_call *t = left;

		while (t->next != NULL)
			t = t->next;
		t->next = c;
	}
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->clock);
	pthread_cond_destroy(&p->cond);
	return left;
}
