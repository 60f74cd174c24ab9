/*
 * server.c: the server object, its loop, and the orderly shutdown. The
 * thread that calls mcp_server_run becomes the loop thread: it owns the
 * libev loop, every transport and session, and is the only thread that
 * writes to a client. Setup calls run before that on one thread;
 * mcp_server_stop may be called from anywhere, signal handlers included.
 * The object is a struct host around the struct mcp_server that the
 * layers under this one see; they reach back here only through the
 * server_hooks and callbacks set below.
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

#include "main/main.h"

static void	 check_drained(struct mcp_server *);

static void
done_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct host	*host = w->data;
	struct mcp_call	*c, *next;

	(void)loop;
	(void)revents;
	for (c = mcp__pool_completions(&host->srv.pool); c != NULL;
	    c = next) {
		next = c->next;
		if (c->note_of != NULL)
			mcp__protocol_note(c);
		else
			mcp__protocol_complete(c);
	}
	if (host->stdio != NULL && !host->srv.draining)
		mcp__stdio_resume(host->stdio);
	check_drained(&host->srv);
}

/* Flush output just before the loop blocks (Redis's beforeSleep). */
static void
flush_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct host	*host = w->data;

	(void)loop;
	(void)revents;
	if (host->stdio != NULL)
		mcp__stdio_flush(host->stdio);
	mcp__http_flush(host->http);
	mcp__http_flush(host->mhttp);
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
	struct host	*host = w->data;
	double		 now = ev_now(loop), out_at = host->srv.out_at;

	(void)revents;
	if (now - out_at < MCP_STALL_S &&
	    now - host->aborted_at < host->hconf.idle_timeout) {
		ev_timer_set(w, MCP_STALL_S - (now - out_at), 0.0);
		ev_timer_start(loop, w);
		return;
	}
	mcp_log(MCP_LOG_WARN, "shutdown: output could not be flushed, "
	    "exiting anyway");
	host->stopped = 1;
	ev_break(loop, EVBREAK_ALL);
}

/* The grace period is over: answer what is left with errors. */
static void
abort_now(struct host *host)
{
	struct ev_loop	*loop = host->srv.loop;

	if (host->aborted)
		return;
	host->aborted = 1;
	ev_timer_stop(loop, &host->grace);
	if (host->stdio != NULL)
		mcp__stdio_abort(host->stdio);
	mcp__http_abort(host->http);
	mcp__era_home_abort(&host->srv);	/* 2026-07-28 tasks */
	/* A client that never reads must not keep us alive. */
	host->aborted_at = host->srv.out_at = ev_now(loop);
	ev_timer_set(&host->deadline, MCP_STALL_S, 0.0);
	ev_timer_start(loop, &host->deadline);
	check_drained(&host->srv);
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
drain(struct host *host, int with_grace)
{
	if (!host->srv.draining) {
		host->srv.draining = 1;
		mcp__sd_notify("STOPPING=1");
		if (host->stdio != NULL)
			mcp__stdio_stop_input(host->stdio);
		mcp__http_quiesce(host->http);
		/* A listen lasts until it is ended: it ends now, answered
		 * as the spec's graceful end, and is not waited for. */
		mcp__listen_end_all(&host->srv);
	}
	if (with_grace && !ev_is_active(&host->grace) && !host->aborted) {
		ev_timer_set(&host->grace, host->grace_ms / 1000.0, 0.0);
		ev_timer_start(host->srv.loop, &host->grace);
	}
	check_drained(&host->srv);
}

/* The stdio transport's input ended (EOF): alone, that ends the server. */
static void
input_done(struct mcp_server *srv)
{
	struct host	*host = mcp__host(srv);

	if (host->http == NULL)
		drain(host, 0);
}

/* The server_hooks' check: the loop stops once every transport is idle. */
static void
check_drained(struct mcp_server *srv)
{
	struct host	*host = mcp__host(srv);

	if (!srv->draining)
		return;
	if (host->stdio != NULL && !mcp__stdio_idle(host->stdio))
		return;
	if (mcp__tasks_running(srv))
		return;
	if (!mcp__http_drained(host->http))
		return;
	host->stopped = 1;
	ev_break(srv->loop, EVBREAK_ALL);
}

static void
stop_request(struct host *host, const char *why)
{
	if (host->srv.draining && ev_is_active(&host->grace)) {
		mcp_log(MCP_LOG_NOTICE, "%s again: not waiting any longer",
		    why);
		abort_now(host);
		return;
	}
	mcp_log(MCP_LOG_NOTICE, "%s: finishing calls in flight (grace "
	    "%d ms)", why, host->grace_ms);
	drain(host, 1);
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
	struct host	*host = w->data;
	struct timespec	 ts;
	char		 state[64];

	(void)loop;
	(void)revents;

	/* Type=notify-reload wants the time of the reload beside it. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(state, sizeof(state), "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000 +
	    (unsigned long long)ts.tv_nsec / 1000);
	mcp__sd_notify(state);
	mcp__log_reopen();
	if (host->hconf.auth_token_file == NULL)
		mcp_log(MCP_LOG_NOTICE, "SIGHUP: reloaded");
	else if (mcp__reload_token(&host->hconf) == MCP_OK)
		mcp_log(MCP_LOG_NOTICE, "SIGHUP: auth token re-read from %s",
		    host->hconf.auth_token_file);
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

/* What the HTTP daemon routes to: the legacy SSE transport, /mcp. */
static const struct http_transport *const http_transports[HT_N] = {
	&mcp__sse_transport,
	&mcp__streamable_transport,
};

mcp_server *
mcp_server_new(const char *name, const char *version)
{
	struct host		*host;
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
	host = calloc(1, sizeof(*host));
	if (host == NULL)
		return NULL;
	srv = &host->srv;
	srv->hooks = &hooks;
	srv->name = strdup(name != NULL ? name : "mcp-server");
	srv->version = strdup(version != NULL ? version : "0.0.0");
	if (srv->name == NULL || srv->version == NULL)
		goto fail;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	host->workers = n > 0 ? (int)n : 2;
	host->max_workers = MCP_DEF_MAX_WORKERS;
	srv->max_message = MCP_DEF_MAX_MESSAGE;
	srv->queue_size = MCP_DEF_QUEUE_SIZE;
	srv->page_size = MCP_DEF_PAGE_SIZE;
	host->grace_ms = MCP_DEF_GRACE_MS;
	srv->max_batch = MCP_DEF_MAX_BATCH;
	host->stdio_in = STDIN_FILENO;
	host->stdio_out = STDOUT_FILENO;
	srv->max_subscriptions = MCP_DEF_MAX_SUBS;
	srv->max_listens = MCP_DEF_MAX_LISTENS;
	srv->task_ttl_ms = MCP_DEF_TASK_TTL;
	srv->state_ttl = MCP_DEF_STATE_TTL;
	srv->max_tasks = MCP_DEF_MAX_TASKS;
	srv->max_session_tasks = MCP_DEF_SESSION_TASKS;
	srv->max_task_bytes = MCP_DEF_TASK_BYTES;
	host->hconf.base_path = strdup("");
	host->hconf.keepalive = MCP_DEF_KEEPALIVE;
	host->hconf.max_sessions = MCP_DEF_MAX_SESSIONS;
	host->hconf.max_inflight = MCP_DEF_HTTP_INFLIGHT;
	host->hconf.max_queued = MCP_DEF_MAX_QUEUED;
	host->hconf.request_timeout = MCP_DEF_REQ_TIMEOUT;
	host->hconf.idle_timeout = MCP_DEF_IDLE_TIMEOUT;
	host->hconf.max_per_ip = MCP_DEF_MAX_PER_IP;
	host->hconf.event_log = MCP_DEF_EVENT_LOG;
	host->hconf.session_timeout = MCP_DEF_SESSION_TIMEOUT;
	host->hconf.sse_retry = MCP_DEF_SSE_RETRY;
	host->hconf.stream_after_ms = MCP_DEF_STREAM_AFTER;
	if (host->hconf.base_path == NULL)
		goto fail;
	if (mcp__registry_new(&srv->reg) != MCP_OK)
		goto fail;
	if (mcp__features_new(srv) != MCP_OK)
		goto fail_reg;
	srv->loop = ev_loop_new(EVFLAG_AUTO);
	if (srv->loop == NULL)
		goto fail_feat;
	atomic_init(&host->stop_requested, 0);
	ev_async_init(&host->done, done_cb);
	ev_async_init(&host->stop_async, stop_cb);
	ev_signal_init(&host->sigterm, signal_cb, SIGTERM);
	ev_signal_init(&host->sigint, signal_cb, SIGINT);
	ev_signal_init(&host->sighup, hup_cb, SIGHUP);
	ev_timer_init(&host->watchdog, watchdog_cb, 0.0, 0.0);
	host->sighup.data = host->watchdog.data = host;
	mcp__metrics_init(&srv->metrics);
	ev_prepare_init(&host->flush, flush_cb);
	ev_timer_init(&host->grace, grace_cb, 0.0, 0.0);
	ev_timer_init(&host->deadline, deadline_cb, 0.0, 0.0);
	host->done.data = host->stop_async.data = host;
	host->sigterm.data = host->sigint.data = host;
	host->flush.data = host->grace.data = host->deadline.data = host;
	return srv;

fail_feat:
	mcp__features_free(srv);
fail_reg:
	mcp__registry_free(&srv->reg);
fail:
	free(srv->name);
	free(srv->version);
	free(host);
	return NULL;
}

void
mcp_server_free(mcp_server *srv)
{
	if (srv == NULL)
		return;
	mcp__registry_free(&srv->reg);
	mcp__features_free(srv);
	if (srv->sess_free != NULL)
		srv->sess_free(srv->sess_udata);
	ev_loop_destroy(srv->loop);
	free(srv->name);
	free(srv->version);
	free(srv->title);
	free(srv->instructions);
	mcp__http_conf_free(&mcp__host(srv)->hconf);
	mcp__flags_free(mcp__host(srv));
	free(mcp__host(srv));
	mcp__call_spares_free();	/* this thread's, its loop's mostly */
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
	return mcp__setup_keep(srv, __func__, NULL,
	    set_string(srv, srv ? &srv->title : NULL, title));
}

int
mcp_server_set_instructions(mcp_server *srv, const char *text)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_string(srv, srv ? &srv->instructions : NULL, text));
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
	return mcp__setup_keep(srv, __func__, NULL,
	    set_int(srv, srv ? &mcp__host(srv)->workers : NULL, n, 1, 1024));
}

int
mcp_server_set_max_workers(mcp_server *srv, int n)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_int(srv, srv ? &mcp__host(srv)->max_workers : NULL, n, 1,
	    4096));
}

int
mcp_server_set_queue_size(mcp_server *srv, int n)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_int(srv, srv ? &srv->queue_size : NULL, n, 1, 1 << 24));
}

int
mcp_server_set_page_size(mcp_server *srv, int n)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_int(srv, srv ? &srv->page_size : NULL, n, 1, 1 << 20));
}

int
mcp_server_set_grace_ms(mcp_server *srv, int ms)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_int(srv, srv ? &mcp__host(srv)->grace_ms : NULL, ms, 0,
	    3600000));
}

static int
set_max_message(mcp_server *srv, size_t bytes)
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

/*
 * The authentication hook lives in the HTTP configuration beside the
 * static token it replaces; the daemon calls it (transport/http.c).
 */
static int
set_auth(mcp_server *srv, mcp_auth_fn fn, void *udata,
    void (*udata_free)(void *))
{
	struct http_conf	*c;

	if (srv == NULL || srv->running) {
		if (udata_free != NULL)
			udata_free(udata);
		return srv == NULL ? MCP_ENOMEM : MCP_ESTATE;
	}
	c = &mcp__host(srv)->hconf;
	if (c->auth_free != NULL)
		c->auth_free(c->auth_udata);
	c->auth_fn = fn;
	c->auth_udata = fn != NULL ? udata : NULL;
	c->auth_free = fn != NULL ? udata_free : NULL;
	if (fn == NULL && udata_free != NULL)
		udata_free(udata);
	return MCP_OK;
}

/* "ADDR:PORT[/base/path]": the path becomes the base path. */
static int
listen_http(struct host *host, const char *rest)
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
	free(host->hconf.addr);
	host->hconf.addr = addr;
	if (slash != NULL && slash[1] != '\0')
		return mcp_server_set_option(&host->srv, "base-path", slash);
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
		mcp__host(srv)->want_stdio = 1;
		return MCP_OK;
	}
	if (uri != NULL && strncmp(uri, "http://", 7) == 0)
		return listen_http(mcp__host(srv), uri + 7);
	mcp_log(MCP_LOG_ERR, "listen: unsupported transport \"%s\"",
	    uri != NULL ? uri : "(null)");
	return MCP_EINVAL;
}

void
mcp_server_stop(mcp_server *srv)
{
	struct host	*host;

	if (srv == NULL)
		return;
	host = mcp__host(srv);
	atomic_store(&host->stop_requested, 1);
	/* ev_async_send is async-signal-safe. */
	ev_async_send(srv->loop, &host->stop_async);
}

/* After the loop: cancel what is left, join the workers, free. */
static void
teardown(struct host *host)
{
	struct ev_loop	*loop = host->srv.loop;
	struct mcp_call	*c, *next;

	if (host->stdio != NULL)
		mcp__stdio_free(host->stdio);	/* flags calls cancelled */
	host->stdio = NULL;
	/* First: what waits on Redis is answered while its requests and
	 * sessions are still there. The sessions stay in Redis, for the
	 * other instances. */
	mcp__taskshare_set(&host->srv, NULL, NULL, NULL);
	mcp__store_free(host->hconf.store);
	host->hconf.store = NULL;
	mcp__http_free(host->http);		/* ends every session */
	host->http = NULL;
	mcp__http_free(host->mhttp);
	host->mhttp = NULL;
	mcp__era_home_free(&host->srv);		/* 2026-07-28 tasks */
	for (c = mcp__pool_stop(&host->srv.pool); c != NULL; c = next) {
		next = c->next;
		if (c->note_of != NULL)
			mcp__protocol_note(c);
		else
			mcp__protocol_complete(c);
	}
	ev_async_stop(loop, &host->done);
	ev_async_stop(loop, &host->stop_async);
	mcp__features_stop(&host->srv);
	ev_signal_stop(loop, &host->sigterm);
	ev_signal_stop(loop, &host->sigint);
	ev_signal_stop(loop, &host->sighup);
	ev_timer_stop(loop, &host->watchdog);
	ev_prepare_stop(loop, &host->flush);
	ev_timer_stop(loop, &host->grace);
	ev_timer_stop(loop, &host->deadline);
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
	struct host	*host = mcp__host(srv);
	struct ev_loop	*loop = srv->loop;
	double		 wd;
	int		 rc;

	/* A vanished reader must give EPIPE, not kill the process. */
	signal(SIGPIPE, SIG_IGN);
	/* Without --state-key-file, a key of this process's own: a retry
	 * of a 2026-07-28 request must come back here (mrtr.c). */
	if (!srv->state_key_set && mcp__random_bytes(srv->state_key,
	    sizeof(srv->state_key)) != 0) {
		mcp_log(MCP_LOG_ERR, "getrandom: %s", strerror(errno));
		return MCP_ESYS;
	}
	srv->running = 1;
	host->stopped = 0;
	srv->draining = host->aborted = 0;
	ev_async_start(loop, &host->done);
	ev_async_start(loop, &host->stop_async);
	mcp__features_start(srv);
	ev_signal_start(loop, &host->sigterm);
	ev_signal_start(loop, &host->sigint);
	ev_signal_start(loop, &host->sighup);
	ev_prepare_start(loop, &host->flush);
	rc = mcp__pool_start(&srv->pool, host->workers,
	    host->max_workers > host->workers ? host->max_workers :
	    host->workers, srv->queue_size, loop, &host->done,
	    mcp__call_run);
	if (rc != MCP_OK)
		return rc;
	srv->metrics.on = host->hconf.metrics ||
	    host->hconf.metrics_listen != NULL;
	if (host->hconf.redis != NULL && host->hconf.addr != NULL &&
	    host->hconf.store == NULL) {
		if (host->hconf.stateless)
			mcp_log(MCP_LOG_NOTICE, "--redis with --stateless: "
			    "no sessions to share, Redis is not used");
		else if (srv->relay != NULL)
			mcp_log(MCP_LOG_NOTICE, "--redis with a relay: its "
			    "sessions live in the relay, Redis is not used");
		else if ((host->hconf.store = mcp__store_new(srv,
		    &host->hconf)) == NULL)
			return MCP_EINVAL;
	}
	if (host->hconf.addr != NULL || host->hconf.metrics_listen != NULL) {
		rc = mcp__http_start(srv, &host->hconf, http_transports,
		    &host->http, &host->mhttp);
		if (rc != MCP_OK)
			return rc;
		if (host->hconf.store != NULL && host->http != NULL) {
			mcp__store_on_ended(host->hconf.store,
			    mcp__streamable_ended, host->http);
			mcp__store_on_event(host->hconf.store,
			    mcp__streamable_event, host->http);
			mcp__store_on_beat(host->hconf.store,
			    mcp__streamable_calls, host->http,
			    mcp__streamable_maxlen(host->http),
			    mcp__streamable_ttl(host->http));
			mcp__taskshare_set(srv, &mcp__store_tasks,
			    host->hconf.store,
			    mcp__store_tag(host->hconf.store));
		}
	}
	if (host->want_stdio) {
		host->stdio = mcp__stdio_new(srv, host->stdio_in,
		    host->stdio_out, input_done);
		if (host->stdio == NULL)
			return MCP_ENOMEM;
		mcp__stdio_start(host->stdio);
	}
	/* Type=notify: listening, and taking requests. */
	mcp__sd_notify("READY=1");
	wd = mcp__sd_watchdog();
	if (wd > 0) {
		ev_timer_set(&host->watchdog, wd, wd);
		ev_timer_start(loop, &host->watchdog);
	}
	if (atomic_load(&host->stop_requested))
		stop_request(host, "stop requested");
	return MCP_OK;
}

void
mcp__server_finish(struct mcp_server *srv)
{
	struct host	*host = mcp__host(srv);

	teardown(host);
	srv->running = 0;
	/* A stop asked for ended this run, not the next one. */
	atomic_store(&host->stop_requested, 0);
}

int
mcp_server_run(mcp_server *srv)
{
	struct host	*host;
	int		 rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (srv->running) {
		mcp_log(MCP_LOG_ERR, "mcp_server_run: already running");
		return MCP_ESTATE;
	}
	if ((rc = mcp__setup_check(srv, "mcp_server_run")) != MCP_OK)
		return rc;
	host = mcp__host(srv);
	if (!host->want_stdio && host->hconf.addr == NULL) {
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

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_server_set_max_message(mcp_server *srv, size_t bytes)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_max_message(srv, bytes));
}

int
mcp_server_set_auth(mcp_server *srv, mcp_auth_fn fn, void *udata,
    void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_auth(srv, fn, udata, udata_free));
}
