/*
 * driver.h: runs a libmcp server inside the calling thread, one loop step
 * at a time, for the tests and fuzzers that must know exactly when the
 * server works (test/t_faults.c arms a fault, feeds one request, and
 * waits for its answer; the fuzzers feed one input and wait until the
 * server has dealt with it). The server is the real one: mcp__server_start
 * and mcp__server_finish are mcp_server_run's two halves, and the loop
 * between them is the server's own, only run from here. Its stdio goes
 * over pipes; its HTTP listener is a real socket on 127.0.0.1.
 */
#ifndef MCP_DRIVER_H
#define MCP_DRIVER_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "main/main.h"

struct drv {
	struct mcp_server	*srv;
	int			 in_w;		/* requests go in here */
	int			 out_r;		/* answers come out here */
	int			 srv_in;	/* the server's ends */
	int			 srv_out;
	ev_timer		 tick;		/* a step never blocks longer */
	char			*out;		/* everything read from out_r */
	size_t			 outlen;
	size_t			 outcap;
	int			 started;
};

static double
drv_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
drv_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

/* Reads what the server wrote so far. */
static void
drv_read(struct drv *d)
{
	ssize_t	 n;

	if (d->out_r < 0)
		return;
	for (;;) {
		if (d->outcap - d->outlen < 65536) {
			d->outcap = d->outcap * 2 + 65536;
			d->out = realloc(d->out, d->outcap);
			if (d->out == NULL)
				abort();
		}
		n = read(d->out_r, d->out + d->outlen, d->outcap - d->outlen);
		if (n <= 0)
			break;
		d->outlen += (size_t)n;
	}
}

/* One turn of the loop (at most 5 ms of waiting), then the output. */
static void
drv_step(struct drv *d)
{
	ev_timer_again(d->srv->loop, &d->tick);
	ev_run(d->srv->loop, EVRUN_ONCE);
	drv_read(d);
}

/*
 * Starts SRV (set up, not running) with stdio on pipes when STDIO is set,
 * and whatever listener its options name. MCP_OK, or the start's error
 * (the server is finished then).
 */
static int
drv_start(struct drv *d, struct mcp_server *srv, int stdio)
{
	int	 p1[2] = { -1, -1 }, p2[2] = { -1, -1 }, rc;

	memset(d, 0, sizeof(*d));
	d->srv = srv;
	d->in_w = d->out_r = d->srv_in = d->srv_out = -1;
	if (stdio) {
		if (pipe(p1) != 0 || pipe(p2) != 0)
			return MCP_ESYS;
		d->srv_in = p1[0];
		d->in_w = p1[1];
		d->out_r = p2[0];
		d->srv_out = p2[1];
		fcntl(d->in_w, F_SETFL, O_NONBLOCK);
		fcntl(d->out_r, F_SETFL, O_NONBLOCK);
		mcp__host(srv)->want_stdio = 1;
		mcp__host(srv)->stdio_in = d->srv_in;
		mcp__host(srv)->stdio_out = d->srv_out;
	}
	ev_timer_init(&d->tick, drv_tick, 0.0, 0.005);
	rc = mcp__server_start(srv);
	d->started = 1;
	return rc;
}

/* Writes N bytes into the server's stdin, stepping while the pipe is
 * full. 0, or -1 if the server stopped reading for 5 s. */
static int
drv_write(struct drv *d, const char *p, size_t n)
{
	double	 until = drv_now() + 5;
	ssize_t	 w;

	while (n > 0) {
		w = write(d->in_w, p, n);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (drv_now() > until)
			return -1;
		drv_step(d);
	}
	return 0;
}

static int
drv_writes(struct drv *d, const char *s)
{
	return drv_write(d, s, strlen(s));
}

/* Steps until DONE(d, arg) holds, or SECS pass; the last DONE. */
static int
drv_until(struct drv *d, int (*done)(struct drv *, const void *),
    const void *arg, double secs)
{
	double	 until = drv_now() + secs;

	while (!done(d, arg)) {
		if (mcp__host(d->srv)->stopped || drv_now() > until)
			return done(d, arg);
		drv_step(d);
	}
	return 1;
}

/*
 * Ends stdin (EOF: calls in flight finish first) and steps until the
 * server has stopped, for SECS; then stops it as SIGTERM would (the
 * grace period, then errors), and waits 10 s more. Finishes it. 0 if it
 * stopped, -1 if it never did.
 */
static int
drv_finish(struct drv *d, double secs)
{
	double	 until = drv_now() + secs;
	int	 rc = 0, stopped = 0;

	if (!d->started)
		return 0;
	if (d->in_w >= 0) {
		close(d->in_w);
		d->in_w = -1;
	} else {
		mcp_server_stop(d->srv);
		stopped = 1;
	}
	while (!mcp__host(d->srv)->stopped) {
		if (drv_now() > until && !stopped) {
			mcp_server_stop(d->srv);
			stopped = 1;
			until = drv_now() + 10;
		} else if (drv_now() > until) {
			rc = -1;
			break;
		}
		drv_step(d);
	}
	ev_timer_stop(d->srv->loop, &d->tick);
	mcp__server_finish(d->srv);
	drv_read(d);
	d->started = 0;
	if (d->out_r >= 0)
		close(d->out_r);
	if (d->srv_in >= 0)
		close(d->srv_in);
	if (d->srv_out >= 0)
		close(d->srv_out);
	d->out_r = d->srv_in = d->srv_out = -1;
	return rc;
}

static void
drv_free(struct drv *d)
{
	free(d->out);
	d->out = NULL;
	d->outlen = d->outcap = 0;
}

#endif /* MCP_DRIVER_H */
