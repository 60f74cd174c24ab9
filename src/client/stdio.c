/*
 * stdio.c: the client's stdio transport. The server is a child process
 * (posix_spawnp, with the caller's argv, environment and directory);
 * messages go to its stdin as JSON lines and come back from its stdout
 * through the shared line reader, so a line that is not JSON is logged
 * and skipped and one over max-message fails its request by id. Its
 * stderr is the caller's, or lines for mcp_client_on_stderr's callback.
 * Closing: stdin closed, then SIGTERM, then SIGKILL, each after
 * MCP_CLIENT_CLOSE_S. The client's own loop waits for that; a caller's
 * loop must not, so there the child is handed to the reaper, a thread
 * of its own that escalates and reaps (no zombie, no blocked loop), and
 * that the process waits for as it exits.
 *
 * Threads: the client's loop thread only, but for the reaper.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* pipe2, posix_spawn_file_actions_addchdir_np */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/client-int.h"

#define READ_CHUNK	65536
#define ERR_LINE	4096	/* a stderr line longer comes in pieces */

extern char **environ;

struct cstdio {
	pid_t		 pid;
	int		 in;		/* the child's stdin, ours to write */
	int		 out;		/* its stdout, ours to read */
	int		 reaped;
	int		 status;
	ev_io		 rio;
	ev_io		 wio;
	ev_prepare	 flusher;	/* writes before the loop blocks */
	ev_timer	 kick;		/* ... which it must not do first */
	struct buf	 wbuf;
	struct jsonl	 lines;
	int		 lost;
	int		 wbroken;	/* its stdin is closed: no writes */
	const char	*overflow;	/* a send failed: lost, from prepare */
	int		 err;		/* its stderr, with on_stderr; or -1 */
	ev_io		 eio;
	size_t		 elen;
	char		 ebuf[ERR_LINE];
};

/* ---- the reaper -------------------------------------------------------- */

struct reapee {
	struct reapee	*next;
	pid_t		 pid;
	int		 err;		/* its stderr, drained until it ends */
	int		 stage;		/* 0 stdin closed, 1 SIGTERM, 2 KILL */
	struct timespec	 at;		/* the stage's start */
};

static pthread_mutex_t	 reap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 reap_cond = PTHREAD_COND_INITIALIZER;
static struct reapee	*reapees;
static pthread_t	 reaper_tid;
static int		 reaper_on;
static int		 reaper_quit;

static double
since(const struct timespec *t)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) +
	    (now.tv_nsec - t->tv_nsec) / 1e9;
}

static void *
reaper(void *arg)
{
	struct timespec	 tick = { 0, 10 * 1000 * 1000 };
	struct reapee	**pp, *r;
	char		 sink[4096];
	int		 status;
	pid_t		 p;

	(void)arg;
	pthread_mutex_lock(&reap_lock);
	for (;;) {
		while (reapees == NULL && !reaper_quit)
			pthread_cond_wait(&reap_cond, &reap_lock);
		if (reapees == NULL)
			break;
		for (pp = &reapees; (r = *pp) != NULL; ) {
			while (r->err >= 0 && read(r->err, sink,
			    sizeof(sink)) > 0)
				;	/* what it says now is not read */
			p = waitpid(r->pid, &status, WNOHANG);
			if (p == r->pid || (p < 0 && errno != EINTR)) {
				*pp = r->next;
				if (r->err >= 0)
					close(r->err);
				free(r);
				continue;
			}
			if (since(&r->at) >= MCP_CLIENT_CLOSE_S && r->stage < 2) {
				kill(r->pid, r->stage == 0 ? SIGTERM : SIGKILL);
				r->stage++;
				clock_gettime(CLOCK_MONOTONIC, &r->at);
			}
			pp = &r->next;
		}
		pthread_mutex_unlock(&reap_lock);
		nanosleep(&tick, NULL);
		pthread_mutex_lock(&reap_lock);
	}
	pthread_mutex_unlock(&reap_lock);
	return NULL;
}

/* A child of fork(): no reaper thread there, and its lock as new. */
static void	 reaper_forked(void);

static void
at_fork(void)
{
	(void)pthread_atfork(NULL, NULL, reaper_forked);
}

static void
reaper_forked(void)
{
	pthread_mutex_init(&reap_lock, NULL);
	pthread_cond_init(&reap_cond, NULL);
	reaper_on = 0;
	reaper_quit = 0;
	reapees = NULL;		/* the parent's to reap, not ours */
}

/* PID, whose stdin is closed, ends in its own time, or is made to. */
static void
reap_later(pid_t pid, int err)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	struct reapee	*r = calloc(1, sizeof(*r));
	sigset_t	 all, old;
	int		 status, rc = 0;

	(void)pthread_once(&once, at_fork);
	pthread_mutex_lock(&reap_lock);
	if (r != NULL && !reaper_on) {
		/* Born with every signal blocked: none is meant for it. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&reaper_tid, NULL, reaper, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (r == NULL || rc != 0) {
		pthread_mutex_unlock(&reap_lock);
		free(r);
		/* No thread, no memory: the old way, on this thread. */
		kill(pid, SIGKILL);
		(void)waitpid(pid, &status, 0);
		if (err >= 0)
			close(err);
		return;
	}
	reaper_on = 1;
	r->pid = pid;
	r->err = err;
	clock_gettime(CLOCK_MONOTONIC, &r->at);
	r->next = reapees;
	reapees = r;
	pthread_cond_signal(&reap_cond);
	pthread_mutex_unlock(&reap_lock);
}

/* As the process exits (or the library is unloaded): the children still
 * ending are waited for, SIGKILL included. */
__attribute__((destructor)) static void
reaper_end(void)
{
	pthread_mutex_lock(&reap_lock);
	if (!reaper_on) {
		pthread_mutex_unlock(&reap_lock);
		return;
	}
	reaper_quit = 1;
	pthread_cond_signal(&reap_cond);
	pthread_mutex_unlock(&reap_lock);
	pthread_join(reaper_tid, NULL);
	reaper_on = 0;
}

/* Bytes queued for a child that does not read: past this, it is lost. */
#define WBUF_MAX	(64u * 1024 * 1024)

static int
nonblock(int fd)
{
	int	 fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Has the child ended? Waits up to MS milliseconds for it. */
static int
reap(struct cstdio *t, int ms)
{
	struct timespec	 ts = { 0, 5 * 1000 * 1000 };
	pid_t		 p;

	while (!t->reaped) {
		p = waitpid(t->pid, &t->status, WNOHANG);
		if (p == t->pid || (p < 0 && errno != EINTR)) {
			t->reaped = 1;
			break;
		}
		if (ms <= 0)
			break;
		nanosleep(&ts, NULL);
		ms -= 5;
	}
	return t->reaped;
}

/* The connection is over: why, in the child's own terms. */
static void
lost(struct mcp_client *c, struct cstdio *t, const char *what)
{
	char	 why[160];

	if (t->lost)
		return;
	t->lost = 1;
	ev_io_stop(c->loop, &t->rio);
	ev_io_stop(c->loop, &t->wio);
	ev_prepare_stop(c->loop, &t->flusher);
	ev_timer_stop(c->loop, &t->kick);
	(void)reap(t, 200);
	if (t->reaped && WIFEXITED(t->status))
		snprintf(why, sizeof(why), "the server (%s) exited with status "
		    "%d", c->argv[0], WEXITSTATUS(t->status));
	else if (t->reaped && WIFSIGNALED(t->status))
		snprintf(why, sizeof(why), "the server (%s) was killed by "
		    "signal %d", c->argv[0], WTERMSIG(t->status));
	else
		snprintf(why, sizeof(why), "the server (%s) %s", c->argv[0],
		    what);
	mcp__client_lost(c, MCP_EIO, why);
}

/*
 * Writes what is queued. SIGPIPE, when the child has gone, must not end
 * this process: the client's own thread blocks it for good; on a
 * caller's loop it is blocked around the write and a pending one taken.
 */
static void
flush(struct mcp_client *c, struct cstdio *t)
{
	sigset_t	 pipe_set, old;
	ssize_t		 n;
	int		 masked = !c->own_loop;
	struct timespec	 zero = { 0, 0 };

	if (masked) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	}
	while (t->wbuf.len > t->wbuf.off) {
		n = write(t->in, t->wbuf.data + t->wbuf.off,
		    t->wbuf.len - t->wbuf.off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_start(c->loop, &t->wio);
			break;
		}
		if (n < 0) {
			/*
			 * The child stopped reading. What it wrote before is
			 * still in the pipe: read on to its end (lost comes
			 * with EOF); nothing more is written.
			 */
			mcp__buf_reset(&t->wbuf);
			if (masked && !sigismember(&old, SIGPIPE))
				(void)sigtimedwait(&pipe_set, NULL, &zero);
			t->wbroken = 1;
			MCP_LOG(MCP_LOG_INFO, "client: the server (%s) closed "
			    "its stdin", c->argv[0]);
			break;
		}
		mcp__buf_consume(&t->wbuf, (size_t)n);
	}
	if (t->wbuf.len == t->wbuf.off) {
		mcp__buf_reset(&t->wbuf);
		ev_io_stop(c->loop, &t->wio);
	}
	if (masked)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Before the loop blocks: what this iteration queued, in one write. */
static void
prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct mcp_client	*c = w->data;
	struct cstdio		*t = c->t;

	(void)revents;
	ev_prepare_stop(loop, w);
	if (t->overflow != NULL) {
		lost(c, t, t->overflow);
		return;
	}
	if (!t->lost && !ev_is_active(&t->wio))
		flush(c, t);
}

/*
 * A caller's loop may have us send from inside its own prepare phase (a
 * server answering in a prepare watcher reads the next request there):
 * a prepare watcher started then runs only after the loop has blocked.
 * A zero timer keeps that poll from blocking, and the flusher runs next.
 */
static void
kick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

static void
write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct mcp_client	*c = w->data;

	(void)loop;
	(void)revents;
	flush(c, c->t);
}

static int
line_cb(void *arg, const char *p, size_t n)
{
	mcp__client_input(arg, p, n);
	return 0;
}

static void
over_cb(void *arg, const struct idscan *sc)
{
	mcp__client_oversized(arg, sc);
}

static void
read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct mcp_client	*c = w->data;
	struct cstdio		*t = c->t;
	ssize_t			 n;

	(void)loop;
	(void)revents;
	if (mcp__jsonl_reserve(&t->lines, READ_CHUNK) != MCP_OK) {
		lost(c, t, "sent more than memory holds");
		return;
	}
	n = read(t->out, t->lines.in.data + t->lines.in.len,
	    t->lines.in.cap - t->lines.in.len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		mcp__jsonl_end(&t->lines, line_cb, over_cb, c);
		lost(c, t, "closed its stdout");
		return;
	}
	(void)mcp__jsonl_split(&t->lines, (size_t)n, line_cb, over_cb, c);
}

/* The child's stderr, line by line, to the caller's callback. */
static void
err_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct mcp_client	*c = w->data;
	struct cstdio		*t = c->t;
	char			*nl;
	ssize_t			 n;
	size_t			 k;

	(void)revents;
	n = read(t->err, t->ebuf + t->elen, sizeof(t->ebuf) - t->elen);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (t->elen > 0)
			c->on_stderr(c, t->ebuf, t->elen, c->stderr_udata);
		t->elen = 0;
		ev_io_stop(loop, w);
		return;
	}
	t->elen += (size_t)n;
	while ((nl = memchr(t->ebuf, '\n', t->elen)) != NULL ||
	    t->elen == sizeof(t->ebuf)) {
		k = nl != NULL ? (size_t)(nl - t->ebuf) : t->elen;
		c->on_stderr(c, t->ebuf, k > 0 && t->ebuf[k - 1] == '\r' ?
		    k - 1 : k, c->stderr_udata);
		if (nl != NULL)
			k++;
		memmove(t->ebuf, t->ebuf + k, t->elen - k);
		t->elen -= k;
	}
}

static int
stdio_start(struct mcp_client *c)
{
	struct cstdio			*t;
	posix_spawn_file_actions_t	 fa;
	posix_spawnattr_t		 sa;
	sigset_t			 none, dfl;
	int				 in[2], out[2], err[2] = { -1, -1 };
	int				 rc;

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return MCP_ENOMEM;
	t->in = t->out = t->err = -1;
	c->t = t;
	mcp__jsonl_init(&t->lines, c->max_message);
	t->lines.bom = 1;	/* some servers' runtimes start with one */
	if (pipe2(in, O_CLOEXEC) != 0)
		goto fail_sys;
	if (pipe2(out, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		goto fail_sys;
	}
	if (c->on_stderr != NULL && pipe2(err, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		goto fail_sys;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	if (err[1] >= 0)
		posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	if (c->cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, c->cwd);
	/* The child starts with no signal blocked and the usual ones at
	 * their default, whatever this process does with them: it must
	 * die of the SIGTERM that closing sends. */
	posix_spawnattr_init(&sa);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGHUP);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_setsigmask(&sa, &none);
	posix_spawnattr_setsigdefault(&sa, &dfl);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(&t->pid, c->argv[0], &fa, &sa, c->argv,
	    c->envp != NULL ? c->envp : environ);
	posix_spawnattr_destroy(&sa);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (err[1] >= 0)
		close(err[1]);
	t->in = in[1];
	t->out = out[0];
	t->err = err[0];
	if (rc != 0) {
		t->reaped = 1;
		snprintf(c->err, sizeof(c->err), "cannot start %s: %s",
		    c->argv[0], strerror(rc));
		return MCP_EIO;
	}
	if (nonblock(t->in) != 0 || nonblock(t->out) != 0 ||
	    (t->err >= 0 && nonblock(t->err) != 0))
		goto fail_sys;
	if (t->err >= 0) {
		ev_io_init(&t->eio, err_cb, t->err, EV_READ);
		t->eio.data = c;
		ev_io_start(c->loop, &t->eio);
	}
	ev_io_init(&t->rio, read_cb, t->out, EV_READ);
	ev_io_init(&t->wio, write_cb, t->in, EV_WRITE);
	ev_prepare_init(&t->flusher, prepare_cb);
	ev_timer_init(&t->kick, kick_cb, 0.0, 0.0);
	t->rio.data = t->wio.data = t->flusher.data = t->kick.data = c;
	ev_io_start(c->loop, &t->rio);
	if (c->own_loop) {
		sigset_t pipe_set;

		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	}
	return MCP_OK;

fail_sys:
	snprintf(c->err, sizeof(c->err), "cannot start %s: %s", c->argv[0],
	    strerror(errno));
	return MCP_ESYS;
}

static void
stdio_send(struct mcp_client *c, const char *json, size_t len,
    struct creq *r)
{
	struct cstdio	*t = c->t;

	(void)r;
	if (t->lost || t->wbroken || t->overflow != NULL)
		return;
	/* Never lost from here: a send may come from inside a caller's
	 * loop over its own requests, which the loss would fail. */
	if (t->wbuf.len - t->wbuf.off > WBUF_MAX)
		t->overflow = "has stopped reading its stdin";
	else if (mcp__buf_add(&t->wbuf, json, len) != MCP_OK ||
	    mcp__buf_addc(&t->wbuf, '\n') != MCP_OK)
		t->overflow = "could not be written to: out of memory";
	if (t->overflow != NULL) {
		ev_io_stop(c->loop, &t->wio);
		ev_prepare_start(c->loop, &t->flusher);
		ev_timer_start(c->loop, &t->kick);
		return;
	}
	/* Many sends in one loop iteration leave in one write(2). */
	if (!ev_is_active(&t->wio) && !ev_is_active(&t->flusher)) {
		ev_prepare_start(c->loop, &t->flusher);
		if (!c->own_loop)
			ev_timer_start(c->loop, &t->kick);
	}
}

static void
stdio_forget(struct mcp_client *c, struct creq *r, int answered)
{
	(void)c;
	(void)r;
	(void)answered;
}

static void
stdio_ready(struct mcp_client *c)
{
	(void)c;
}

/*
 * Closing, as the spec's stdio shutdown says: stdin closed so that the
 * server can finish, SIGTERM if it has not after a while, then SIGKILL.
 * On the client's own loop this blocks for at most three times
 * MCP_CLIENT_CLOSE_S; on a caller's, the reaper does it.
 */
static void
stdio_close(struct mcp_client *c)
{
	struct cstdio	*t = c->t;
	int		 ms = (int)(MCP_CLIENT_CLOSE_S * 1000);

	if (t == NULL)
		return;
	ev_io_stop(c->loop, &t->rio);
	ev_io_stop(c->loop, &t->wio);
	ev_prepare_stop(c->loop, &t->flusher);
	ev_timer_stop(c->loop, &t->kick);
	if (t->in >= 0 && !t->lost && t->wbuf.len > t->wbuf.off)
		flush(c, t);	/* what was sent last still goes out */
	ev_io_stop(c->loop, &t->wio);	/* flush may have armed it */
	if (t->in >= 0)
		close(t->in);
	if (t->out >= 0)
		close(t->out);
	if (t->err >= 0) {
		/* What it said last, if it is there already; the pipe stays
		 * open while it ends, so that its last words do not kill it. */
		if (ev_is_active(&t->eio))
			err_cb(c->loop, &t->eio, EV_READ);
		ev_io_stop(c->loop, &t->eio);
		if (t->elen > 0)
			c->on_stderr(c, t->ebuf, t->elen, c->stderr_udata);
		t->elen = 0;
	}
	if (t->pid > 0 && !c->own_loop) {
		if (!reap(t, 0)) {
			reap_later(t->pid, t->err);
			t->err = -1;
		}
	} else if (t->pid > 0 && !reap(t, ms)) {
		kill(t->pid, SIGTERM);
		if (!reap(t, ms)) {
			kill(t->pid, SIGKILL);
			(void)reap(t, ms);
		}
	}
	if (t->err >= 0)
		close(t->err);
	mcp__buf_free(&t->wbuf);
	mcp__jsonl_free(&t->lines);
	free(t);
	c->t = NULL;
}

const struct ctransport_ops mcp__client_stdio_ops = {
	"stdio",
	stdio_start,
	stdio_send,
	stdio_forget,
	stdio_ready,
	stdio_close,
};
