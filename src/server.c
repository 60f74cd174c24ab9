/*
 * server.c: the server object, its loop, and the orderly shutdown. The
 * thread that calls mcp_server_run becomes the loop thread: it owns the
 * libev loop, every transport and session, and is the only thread that
 * writes to a client. Setup calls run before that on one thread;
 * mcp_server_stop may be called from anywhere, signal handlers included.
 *
 * Shutdown: end of input, a signal or mcp_server_stop makes the server
 * drain: transports stop reading, calls in flight finish and their
 * answers are flushed, then the loop ends. A signal also starts the
 * grace timer; when it fires, calls still running are answered with an
 * error and cancelled, so no request goes unanswered.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp-int.h"

static void	 check_drained(struct mcp_server *);

static void
done_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct mcp_server	*srv = w->data;
	struct mcp_call		*c, *next;

	(void)loop;
	(void)revents;
	for (c = mcp__pool_completions(&srv->pool); c != NULL; c = next) {
		next = c->next;
		if (c->note_of != NULL)
			mcp__protocol_note(c);
		else
			mcp__protocol_complete(c);
	}
	if (srv->stdio != NULL && !srv->draining)
		mcp__stdio_resume(srv->stdio);
	check_drained(srv);
}

/* Flush output just before the loop blocks (Redis's beforeSleep). */
static void
flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct mcp_server	*srv = w->data;

	(void)loop;
	(void)revents;
	if (srv->stdio != NULL)
		mcp__stdio_flush(srv->stdio);
	mcp__http_flush(srv->http);
	mcp__http_flush(srv->mhttp);
}

/*
 * After the grace period, answers still owed to clients are being
 * written. A client that reads them, however slowly, gets them: the
 * server waits while its output moves (mcp__server_progress), and gives
 * up once it has stalled for MCP_STALL_S (a client that never reads),
 * or at --idle-timeout in all.
 */
static void
deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_server	*srv = w->data;
	double			 now = ev_now(loop);

	(void)revents;
	if (now - srv->out_at < MCP_STALL_S &&
	    now - srv->aborted_at < srv->hconf.idle_timeout) {
		ev_timer_set(w, MCP_STALL_S - (now - srv->out_at), 0.0);
		ev_timer_start(loop, w);
		return;
	}
	mcp_log(MCP_LOG_WARN, "shutdown: output could not be flushed, "
	    "exiting anyway");
	srv->stopped = 1;
	ev_break(loop, EVBREAK_ALL);
}

/* The grace period is over: answer what is left with errors. */
static void
abort_now(struct mcp_server *srv)
{
	if (srv->aborted)
		return;
	srv->aborted = 1;
	ev_timer_stop(srv->loop, &srv->grace);
	if (srv->stdio != NULL)
		mcp__stdio_abort(srv->stdio);
	mcp__http_abort(srv->http);
	/* A client that never reads must not keep us alive. */
	srv->aborted_at = srv->out_at = ev_now(srv->loop);
	ev_timer_set(&srv->deadline, MCP_STALL_S, 0.0);
	ev_timer_start(srv->loop, &srv->deadline);
	check_drained(srv);
}

static void
grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	mcp_log(MCP_LOG_NOTICE, "shutdown: grace period over, cancelling "
	    "calls still running");
	abort_now(w->data);
}

/*
 * A transport ran dry (EOF) or a signal came: stop taking input, and
 * finish when every transport is idle. WITH_GRACE bounds the wait.
 */
static void
drain(struct mcp_server *srv, int with_grace)
{
	if (!srv->draining) {
		srv->draining = 1;
		mcp__sd_notify("STOPPING=1");
		if (srv->stdio != NULL)
			mcp__stdio_stop_input(srv->stdio);
		mcp__http_quiesce(srv->http);
	}
	if (with_grace && !ev_is_active(&srv->grace) && !srv->aborted) {
		ev_timer_set(&srv->grace, srv->grace_ms / 1000.0, 0.0);
		ev_timer_start(srv->loop, &srv->grace);
	}
	check_drained(srv);
}

/* The stdio transport's input ended (EOF): alone, that ends the server. */
static void
input_done(struct mcp_server *srv)
{
	if (srv->http == NULL)
		drain(srv, 0);
}

/* The server_hooks' check: the loop stops once every transport is idle. */
static void
check_drained(struct mcp_server *srv)
{
	if (!srv->draining)
		return;
	if (srv->stdio != NULL && !mcp__stdio_idle(srv->stdio))
		return;
	if (!mcp__http_drained(srv->http))
		return;
	srv->stopped = 1;
	ev_break(srv->loop, EVBREAK_ALL);
}

static void
stop_request(struct mcp_server *srv, const char *why)
{
	if (srv->draining && ev_is_active(&srv->grace)) {
		mcp_log(MCP_LOG_NOTICE, "%s again: not waiting any longer",
		    why);
		abort_now(srv);
		return;
	}
	mcp_log(MCP_LOG_NOTICE, "%s: finishing calls in flight (grace "
	    "%d ms)", why, srv->grace_ms);
	drain(srv, 1);
}

static void
signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)loop;
	(void)revents;
	stop_request(w->data, w->signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/*
 * SIGHUP: re-read --auth-token-file (a rotated token takes effect for
 * the next request; connections and sessions stay), and reopen
 * --log-file (after logrotate moved it).
 */
static void
hup_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct mcp_server	*srv = w->data;
	struct timespec		 ts;
	char			 state[64];

	(void)loop;
	(void)revents;

	/* Type=notify-reload wants the time of the reload beside it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000 +
	    (unsigned long long)ts.tv_nsec / 1000);
	mcp__sd_notify(state);
	mcp__log_reopen();
	if (srv->hconf.auth_token_file == NULL)
		mcp_log(MCP_LOG_NOTICE, "SIGHUP: reloaded");
	else if (mcp__reload_token(&srv->hconf) == MCP_OK)
		mcp_log(MCP_LOG_NOTICE, "SIGHUP: auth token re-read from %s",
		    srv->hconf.auth_token_file);
	mcp__sd_notify("READY=1");
}

static void
watchdog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	mcp__sd_notify("WATCHDOG=1");
}

static void
stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)loop;
	(void)revents;
	stop_request(w->data, "stop requested");
}

static const struct server_hooks hooks = {
	check_drained,
};

mcp_server *
mcp_server_new(const char *name, const char *version)
{
	struct mcp_server	*srv;
	long			 n;
	int			 fd;

	/* Before any thread exists (jansson's thread-safety rules). */
	json_object_seed(0);
	/*
	 * A closed fd 0, 1 or 2 would be handed to the epoll fd or a pipe,
	 * and replies would go there: give them /dev/null instead.
	 */
	for (fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF &&
		    open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY) != fd)
			return NULL;
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return NULL;
	srv->hooks = &hooks;
	srv->name = strdup(name != NULL ? name : "mcp-server");
	srv->version = strdup(version != NULL ? version : "0.0.0");
	if (srv->name == NULL || srv->version == NULL)
		goto fail;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	srv->workers = n > 0 ? (int)n : 2;
	srv->max_workers = MCP_DEF_MAX_WORKERS;
	srv->max_message = MCP_DEF_MAX_MESSAGE;
	srv->queue_size = MCP_DEF_QUEUE_SIZE;
	srv->page_size = MCP_DEF_PAGE_SIZE;
	srv->grace_ms = MCP_DEF_GRACE_MS;
	srv->max_batch = MCP_DEF_MAX_BATCH;
	srv->stdio_in = STDIN_FILENO;
	srv->stdio_out = STDOUT_FILENO;
	srv->max_subscriptions = MCP_DEF_MAX_SUBS;
	srv->hconf.base_path = strdup("");
	srv->hconf.keepalive = MCP_DEF_KEEPALIVE;
	srv->hconf.max_sessions = MCP_DEF_MAX_SESSIONS;
	srv->hconf.max_inflight = MCP_DEF_HTTP_INFLIGHT;
	srv->hconf.max_queued = MCP_DEF_MAX_QUEUED;
	srv->hconf.request_timeout = MCP_DEF_REQ_TIMEOUT;
	srv->hconf.idle_timeout = MCP_DEF_IDLE_TIMEOUT;
	srv->hconf.max_per_ip = MCP_DEF_MAX_PER_IP;
	srv->hconf.event_log = MCP_DEF_EVENT_LOG;
	srv->hconf.session_timeout = MCP_DEF_SESSION_TIMEOUT;
	srv->hconf.sse_retry = MCP_DEF_SSE_RETRY;
	srv->hconf.stream_after_ms = MCP_DEF_STREAM_AFTER;
	if (srv->hconf.base_path == NULL)
		goto fail;
	if (mcp__registry_new(&srv->reg) != MCP_OK)
		goto fail;
	if (mcp__features_new(srv) != MCP_OK)
		goto fail_reg;
	srv->loop = ev_loop_new(EVFLAG_AUTO);
	if (srv->loop == NULL)
		goto fail_feat;
	atomic_init(&srv->stop_requested, 0);
	ev_async_init(&srv->done, done_cb);
	ev_async_init(&srv->stop_async, stop_cb);
	ev_signal_init(&srv->sigterm, signal_cb, SIGTERM);
	ev_signal_init(&srv->sigint, signal_cb, SIGINT);
	ev_signal_init(&srv->sighup, hup_cb, SIGHUP);
	ev_timer_init(&srv->watchdog, watchdog_cb, 0.0, 0.0);
	srv->sighup.data = srv->watchdog.data = srv;
	mcp__metrics_init(&srv->metrics);
	ev_prepare_init(&srv->flush, flush_cb);
	ev_timer_init(&srv->grace, grace_cb, 0.0, 0.0);
	ev_timer_init(&srv->deadline, deadline_cb, 0.0, 0.0);
	srv->done.data = srv->stop_async.data = srv;
	srv->sigterm.data = srv->sigint.data = srv;
	srv->flush.data = srv->grace.data = srv->deadline.data = srv;
	return srv;

fail_feat:
	mcp__features_free(srv);
fail_reg:
	mcp__registry_free(&srv->reg);
fail:
	free(srv->name);
	free(srv->version);
	free(srv);
	return NULL;
}

void
mcp_server_free(mcp_server *srv)
{
	if (srv == NULL)
		return;
	mcp__registry_free(&srv->reg);
	mcp__features_free(srv);
	ev_loop_destroy(srv->loop);
	free(srv->name);
	free(srv->version);
	free(srv->title);
	free(srv->instructions);
	mcp__http_conf_free(&srv->hconf);
	free(srv);
}

static int
set_string(mcp_server *srv, char **dst, const char *s)
{
	char	*p = NULL;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (s != NULL && (p = strdup(s)) == NULL)
		return MCP_ENOMEM;
	free(*dst);
	*dst = p;
	return MCP_OK;
}

int
mcp_server_set_title(mcp_server *srv, const char *title)
{
	return set_string(srv, srv ? &srv->title : NULL, title);
}

int
mcp_server_set_instructions(mcp_server *srv, const char *text)
{
	return set_string(srv, srv ? &srv->instructions : NULL, text);
}

/* Shared checks for the numeric setters: before run, within range. */
static int
set_int(mcp_server *srv, int *dst, long v, long lo, long hi)
{
	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running)
		return MCP_ESTATE;
	if (v < lo || v > hi)
		return MCP_EINVAL;
	*dst = (int)v;
	return MCP_OK;
}

int
mcp_server_set_workers(mcp_server *srv, int n)
{
	return set_int(srv, srv ? &srv->workers : NULL, n, 1, 1024);
}

int
mcp_server_set_max_workers(mcp_server *srv, int n)
{
	return set_int(srv, srv ? &srv->max_workers : NULL, n, 1, 4096);
}

int
mcp_server_set_queue_size(mcp_server *srv, int n)
{
	return set_int(srv, srv ? &srv->queue_size : NULL, n, 1, 1 << 24);
}

int
mcp_server_set_page_size(mcp_server *srv, int n)
{
	return set_int(srv, srv ? &srv->page_size : NULL, n, 1, 1 << 20);
}

int
mcp_server_set_grace_ms(mcp_server *srv, int ms)
{
	return set_int(srv, srv ? &srv->grace_ms : NULL, ms, 0, 3600000);
}

int
mcp_server_set_max_message(mcp_server *srv, size_t bytes)
{
	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running)
		return MCP_ESTATE;
	if (bytes < 64 || bytes > ((size_t)1 << 30))
		return MCP_EINVAL;
	srv->max_message = bytes;
	return MCP_OK;
}

/* "ADDR:PORT[/base/path]": the path becomes the base path. */
static int
listen_http(struct mcp_server *srv, const char *rest)
{
	const char	*p = rest, *slash;
	char		*addr;

	if (*p == '[' && strchr(p, ']') != NULL)
		p = strchr(p, ']');
	slash = strchr(p, '/');
	addr = slash != NULL ? strndup(rest, (size_t)(slash - rest)) :
	    strdup(rest);
	if (addr == NULL)
		return MCP_ENOMEM;
	free(srv->hconf.addr);
	srv->hconf.addr = addr;
	if (slash != NULL && slash[1] != '\0')
		return mcp_server_set_option(srv, "base-path", slash);
	return MCP_OK;
}

int
mcp_server_listen(mcp_server *srv, const char *uri)
{
	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running)
		return MCP_ESTATE;
	if (uri != NULL && strcmp(uri, "stdio") == 0) {
		srv->want_stdio = 1;
		return MCP_OK;
	}
	if (uri != NULL && strncmp(uri, "http://", 7) == 0)
		return listen_http(srv, uri + 7);
	mcp_log(MCP_LOG_ERR, "listen: unsupported transport \"%s\"",
	    uri != NULL ? uri : "(null)");
	return MCP_EINVAL;
}

void
mcp_server_stop(mcp_server *srv)
{
	if (srv == NULL)
		return;
	atomic_store(&srv->stop_requested, 1);
	/* ev_async_send is async-signal-safe. */
	ev_async_send(srv->loop, &srv->stop_async);
}

/* After the loop: cancel what is left, join the workers, free. */
static void
teardown(struct mcp_server *srv)
{
	struct mcp_call	*c, *next;

	if (srv->stdio != NULL)
		mcp__stdio_free(srv->stdio);	/* flags calls cancelled */
	srv->stdio = NULL;
	mcp__http_free(srv->http);		/* ends every session */
	srv->http = NULL;
	mcp__http_free(srv->mhttp);
	srv->mhttp = NULL;
	for (c = mcp__pool_stop(&srv->pool); c != NULL; c = next) {
		next = c->next;
		if (c->note_of != NULL)
			mcp__protocol_note(c);
		else
			mcp__protocol_complete(c);
	}
	ev_async_stop(srv->loop, &srv->done);
	ev_async_stop(srv->loop, &srv->stop_async);
	mcp__features_stop(srv);
	ev_signal_stop(srv->loop, &srv->sigterm);
	ev_signal_stop(srv->loop, &srv->sigint);
	ev_signal_stop(srv->loop, &srv->sighup);
	ev_timer_stop(srv->loop, &srv->watchdog);
	ev_prepare_stop(srv->loop, &srv->flush);
	ev_timer_stop(srv->loop, &srv->grace);
	ev_timer_stop(srv->loop, &srv->deadline);
}

/*
 * Everything mcp_server_run does before the loop runs: the watchers, the
 * pool and the transports. mcp__server_finish undoes it, whatever this
 * returned. The fault-injection test and the fuzzers drive the loop
 * themselves between the two, one step at a time.
 */
int
mcp__server_start(struct mcp_server *srv)
{
	double	 wd;
	int	 rc;

	/* A vanished reader must give EPIPE, not kill the process. */
	signal(SIGPIPE, SIG_IGN);
	srv->running = 1;
	srv->stopped = 0;
	srv->draining = srv->aborted = 0;
	ev_async_start(srv->loop, &srv->done);
	ev_async_start(srv->loop, &srv->stop_async);
	mcp__features_start(srv);
	ev_signal_start(srv->loop, &srv->sigterm);
	ev_signal_start(srv->loop, &srv->sigint);
	ev_signal_start(srv->loop, &srv->sighup);
	ev_prepare_start(srv->loop, &srv->flush);
	rc = mcp__pool_start(&srv->pool, srv->workers,
	    srv->max_workers > srv->workers ? srv->max_workers : srv->workers,
	    srv->queue_size, srv->loop, &srv->done);
	if (rc != MCP_OK)
		return rc;
	srv->metrics.on = srv->hconf.metrics ||
	    srv->hconf.metrics_listen != NULL;
	if (srv->hconf.addr != NULL || srv->hconf.metrics_listen != NULL) {
		rc = mcp__http_start(srv, &srv->hconf, &srv->http,
		    &srv->mhttp);
		if (rc != MCP_OK)
			return rc;
	}
	if (srv->want_stdio) {
		srv->stdio = mcp__stdio_new(srv, srv->stdio_in,
		    srv->stdio_out, input_done);
		if (srv->stdio == NULL)
			return MCP_ENOMEM;
		mcp__stdio_start(srv->stdio);
	}
	/* Type=notify: listening, and taking requests. */
	mcp__sd_notify("READY=1");
	wd = mcp__sd_watchdog();
	if (wd > 0) {
		ev_timer_set(&srv->watchdog, wd, wd);
		ev_timer_start(srv->loop, &srv->watchdog);
	}
	if (atomic_load(&srv->stop_requested))
		stop_request(srv, "stop requested");
	return MCP_OK;
}

void
mcp__server_finish(struct mcp_server *srv)
{
	teardown(srv);
	srv->running = 0;
	/* A stop asked for ended this run, not the next one. */
	atomic_store(&srv->stop_requested, 0);
}

int
mcp_server_run(mcp_server *srv)
{
	int	 rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running) {
		mcp_log(MCP_LOG_ERR, "mcp_server_run: already running");
		return MCP_ESTATE;
	}
	if (!srv->want_stdio && srv->hconf.addr == NULL) {
		mcp_log(MCP_LOG_ERR, "mcp_server_run: no transport; call "
		    "mcp_server_listen first");
		return MCP_ESTATE;
	}
	rc = mcp__server_start(srv);
	if (rc == MCP_OK) {
		ev_run(srv->loop, 0);
		MCP_LOG(MCP_LOG_INFO, "loop ended, stopping workers");
	}
	mcp__server_finish(srv);
	return rc;
}
