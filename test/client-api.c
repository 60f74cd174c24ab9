/*
 * client-api.c: the C client API (mcp_client_*) against real servers over
 * real pipes and sockets: mcp-demo on stdio and HTTP, the official
 * TypeScript SDK's McpServer (test/node/peer-server.mjs) and the bad
 * servers of test/node/quirk-server.mjs. Blocking calls from many
 * threads at once, the asynchronous use on a caller's libev loop,
 * timeouts that progress extends, cancellation the server hears of,
 * requests from the server, a session the server forgets, a stream
 * that drops, a server that dies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <mcp.h>

#include "tap.h"

extern char **environ;

static const char *demo;	/* build/mcp-demo */

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- Servers --------------------------------------------------------- */

struct proc {
	pid_t	 pid;
	int	 port;
};

/*
 * Starts ARGV with its stdout (node peers: "PORT n") or its stderr
 * (mcp-demo: "listening on http://127.0.0.1:N/sse ...") read until the
 * port shows; 10 s at most.
 */
static int
start_http(struct proc *p, char *const argv[], int from_stderr)
{
	posix_spawn_file_actions_t	 fa;
	int				 fd[2], n;
	char				 buf[4096], *s;
	size_t				 len = 0;
	double				 until = now() + 10;

	p->port = 0;
	if (pipe2(fd, O_CLOEXEC) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], from_stderr ? 2 : 1);
	if (posix_spawnp(&p->pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	while (p->port == 0 && now() < until && len < sizeof(buf) - 1) {
		n = (int)read(fd[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if ((s = strstr(buf, "PORT ")) != NULL && strchr(s, '\n'))
			p->port = (int)strtol(s + 5, NULL, 10);
		else if ((s = strstr(buf, "http://127.0.0.1:")) != NULL &&
		    strchr(s, '\n'))
			p->port = (int)strtol(s + 17, NULL, 10);
	}
	/* The rest of its output: to a reader that throws it away. */
	if (fork() == 0) {
		while (read(fd[0], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(fd[0]);
	return p->port > 0 ? 0 : -1;
}

static void
stop(struct proc *p)
{
	int	 st;

	if (p->pid <= 0)
		return;
	kill(p->pid, SIGTERM);
	waitpid(p->pid, &st, 0);
	p->pid = 0;
}

/* GET http://127.0.0.1:PORT/PATH, the body into OUT (NUL-terminated). */
static int
http_get(int port, const char *path, char *out, size_t outlen)
{
	struct sockaddr_in	 sa;
	char			 req[256];
	int			 fd, n;
	size_t			 len = 0;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d"
	    "\r\n\r\n", path, port);
	if (write(fd, req, strlen(req)) < 0) {
		close(fd);
		return -1;
	}
	while (len < outlen - 1 && (n = (int)read(fd, out + len,
	    outlen - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fd);
	return 0;
}

/* The value of a Prometheus sample whose line starts with PREFIX. */
static double
metric(int port, const char *prefix)
{
	static char	 body[1 << 20];
	char		*s;

	if (http_get(port, "/metrics", body, sizeof(body)) != 0)
		return -1;
	s = strstr(body, prefix);
	if (s == NULL)
		return 0;
	s = strchr(s, ' ');
	return s != NULL ? strtod(s, NULL) : -1;
}

/* ---- Helpers --------------------------------------------------------- */

static const char *
text_of(json_t *result)
{
	json_t	*c = json_array_get(json_object_get(result, "content"), 0);

	return json_string_value(json_object_get(c, "text"));
}

static mcp_client *
stdio_client(char *const argv[], const char *timeout, int *rc)
{
	mcp_client	*c = mcp_client_new("client-api", "1");

	if (timeout != NULL)
		(void)mcp_client_set_option(c, "timeout", timeout);
	*rc = mcp_client_connect_stdio(c, argv, NULL, NULL);
	return c;
}

static mcp_client *
url_client_v(int port, const char *path, const char *transport,
    const char *protocol, int *rc)
{
	mcp_client	*c = mcp_client_new("client-api", "1");
	char		 url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	if (protocol != NULL)
		(void)mcp_client_set_option(c, "protocol", protocol);
	if (transport != NULL)
		(void)mcp_client_set_option(c, "transport", transport);
	*rc = mcp_client_connect_url(c, url);
	return c;
}

static mcp_client *
url_client(int port, const char *path, const char *transport, int *rc)
{
	return url_client_v(port, path, transport, NULL, rc);
}

/* ---- Many threads through one blocking client ------------------------ */

struct worker {
	mcp_client	*c;
	int		 n;
	int		 k;
	int		 bad;
	int		 errors;
};

static void *
echo_worker(void *arg)
{
	struct worker	*w = arg;
	json_t		*res;
	char		 want[64];
	const char	*got;
	int		 i, rc;

	for (i = 0; i < w->n; i++) {
		snprintf(want, sizeof(want), "thread %d call %d", w->k, i);
		rc = mcp_client_call_tool_new(w->c, "echo",
		    json_pack("{s:s}", "text", want), &res);
		got = rc == MCP_OK ? text_of(res) : NULL;
		if (rc != MCP_OK)
			w->errors++;
		else if (got == NULL || strcmp(got, want) != 0)
			w->bad++;
		json_decref(res);
	}
	return NULL;
}

static void
many_threads(mcp_client *c, const char *what)
{
	pthread_t	 th[16];
	struct worker	 w[16];
	int		 i, bad = 0, errors = 0;

	for (i = 0; i < 16; i++) {
		w[i] = (struct worker){ c, 100, i, 0, 0 };
		pthread_create(&th[i], NULL, echo_worker, &w[i]);
	}
	for (i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
		bad += w[i].bad;
		errors += w[i].errors;
	}
	is_int(errors, 0, "%s: 16 threads x 100 calls through one client: "
	    "no errors", what);
	is_int(bad, 0, "%s: every answer reached its own caller", what);
}

/* ---- Asynchronous use on the caller's loop --------------------------- */

struct async_state {
	int	 done;
	int	 ok;
	int	 cancelled;
	int	 mismatched;
	double	 cancel_at;
};

struct async_one {
	struct async_state	*st;
	int			 k;
};

static void
async_cb(mcp_client *c, int rc, json_t *result, void *udata)
{
	struct async_one	*one = udata;
	char			 want[32];
	const char		*got;

	(void)c;
	one->st->done++;
	if (rc == MCP_ECANCELED) {
		one->st->cancelled++;
		one->st->cancel_at = now();
	} else if (rc == MCP_OK) {
		snprintf(want, sizeof(want), "async %d", one->k);
		got = text_of(result);
		if (one->k >= 0 && (got == NULL || strcmp(got, want) != 0))
			one->st->mismatched++;
		else
			one->st->ok++;
	}
}

static void
async_tests(void)
{
	struct ev_loop		*loop = ev_loop_new(EVFLAG_AUTO);
	mcp_client		*c = mcp_client_new("client-api", "1");
	char			*argv[] = { (char *)demo, NULL };
	struct async_state	 st = { 0 };
	struct async_one	 ones[101];
	long long		 sleep_id = -1;
	double			 t0, until;
	int			 i, rc;

	ok(mcp_client_set_loop(c, loop) == MCP_OK, "async: set_loop");
	rc = mcp_client_connect_stdio(c, argv, NULL, NULL);
	is_int(rc, MCP_OK, "async: connect returns at once on a caller's "
	    "loop");
	for (i = 0; i < 100; i++) {
		char text[32];

		ones[i] = (struct async_one){ &st, i };
		snprintf(text, sizeof(text), "async %d", i);
		(void)mcp_client_request_async_new(c, "tools/call",
		    json_pack("{s:s, s:{s:s}}", "name", "echo", "arguments",
		    "text", text), async_cb, &ones[i], NULL);
	}
	ones[100] = (struct async_one){ &st, -1 };
	(void)mcp_client_request_async_new(c, "tools/call",
	    json_pack("{s:s, s:{s:i}}", "name", "sleep", "arguments", "ms",
	    20000), async_cb, &ones[100], &sleep_id);
	ok(sleep_id > 0, "async: the request's id is given back");
	until = now() + 10;
	while (st.done < 100 && now() < until)
		ev_run(loop, EVRUN_ONCE);
	is_int(st.ok, 100, "async: 100 requests made before the "
	    "initialization ended are answered, each with its own text");
	is_int(st.mismatched, 0, "async: no answer went to another request");
	t0 = now();
	ok(mcp_client_cancel(c, sleep_id, "test") == MCP_OK, "async: cancel");
	until = now() + 5;
	while (st.cancelled == 0 && now() < until)
		ev_run(loop, EVRUN_ONCE);
	ok(st.cancelled == 1 && st.cancel_at - t0 < 0.5, "async: the "
	    "cancelled call ends at once with MCP_ECANCELED");
	mcp_client_free(c);
	ev_loop_destroy(loop);
}

/* ---- Blocking calls from threads while the caller's loop runs -------- */

struct loop_runner {
	struct ev_loop	*loop;
	ev_async	 stop;
	mcp_client	*c;
	char		**argv;
	volatile int	 connected;
};

static void
stop_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* The loop's own thread connects (and so owns the client), then runs. */
static void *
run_loop(void *arg)
{
	struct loop_runner	*lr = arg;

	(void)mcp_client_set_loop(lr->c, lr->loop);
	if (mcp_client_connect_stdio(lr->c, lr->argv, NULL, NULL) == MCP_OK)
		lr->connected = 1;
	ev_run(lr->loop, 0);
	return NULL;
}

/* ---- Server requests and notifications ------------------------------- */

struct seen {
	pthread_mutex_t	 m;
	int		 logs;
	int		 updated;
	char		 log_text[128];
};

static void
on_note(mcp_client *c, const char *method, json_t *params, void *udata)
{
	struct seen	*s = udata;
	json_t		*d;

	(void)c;
	pthread_mutex_lock(&s->m);
	if (strcmp(method, "notifications/message") == 0) {
		s->logs++;
		d = json_object_get(params, "data");
		if (json_is_string(d))
			snprintf(s->log_text, sizeof(s->log_text), "%s",
			    json_string_value(d));
	} else if (strcmp(method, "notifications/resources/updated") == 0) {
		s->updated++;
	}
	pthread_mutex_unlock(&s->m);
}

static void
on_sampling(mcp_client *c, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	json_t	*msg = json_array_get(json_object_get(params, "messages"), 0);
	char	 text[200];

	(void)c;
	(void)method;
	(void)udata;
	snprintf(text, sizeof(text), "sampled: %s", json_string_value(
	    json_object_get(json_object_get(msg, "content"), "text")) ?
	    json_string_value(json_object_get(json_object_get(msg,
	    "content"), "text")) : "?");
	(void)mcp_client_reply_result(reply, json_pack("{s:s, s:s, s:{s:s, "
	    "s:s}}", "model", "test-model", "role", "assistant", "content",
	    "type", "text", "text", text));
}

/* Answered later, from another thread, as a slow handler would. */
static void *
later(void *arg)
{
	struct timespec	 ts = { 0, 100 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	(void)mcp_client_reply_result(arg, json_pack("{s:s, s:{s:s}}",
	    "action", "accept", "content", "name", "Ada"));
	return NULL;
}

static void
on_elicit(mcp_client *c, mcp_client_reply *reply, const char *method,
    json_t *params, void *udata)
{
	pthread_t	 th;

	(void)c;
	(void)method;
	(void)params;
	(void)udata;
	pthread_create(&th, NULL, later, reply);
	pthread_detach(th);
}

static void
peer_tests(const char *mode, const char *flag)
{
	char		*argv[] = { "node", "test/node/peer-server.mjs",
			    (char *)mode, (char *)flag, NULL };
	struct proc	 p = { 0 };
	struct seen	 s = { PTHREAD_MUTEX_INITIALIZER, 0, 0, "" };
	mcp_client	*c;
	json_t		*res = NULL, *tools = NULL;
	char		 url[128], what[64];
	int		 rc;
	double		 until;

	snprintf(what, sizeof(what), "ts-sdk %s%s%s", mode, flag ? " " : "",
	    flag ? flag : "");
	c = mcp_client_new("client-api", "1");
	(void)mcp_client_on_notification(c, on_note, &s);
	(void)mcp_client_on_request(c, "sampling/createMessage", on_sampling,
	    NULL);
	(void)mcp_client_on_request(c, "elicitation/create", on_elicit, NULL);
	(void)mcp_client_set_roots_new(c, json_pack("[{s:s, s:s}]", "uri",
	    "file:///tmp/project", "name", "project"));
	if (strcmp(mode, "stdio") == 0) {
		rc = mcp_client_connect_stdio(c, argv, NULL, NULL);
	} else {
		if (start_http(&p, argv, 0) != 0) {
			ok(0, "%s: the peer started", what);
			mcp_client_free(c);
			return;
		}
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s", p.port,
		    strcmp(mode, "sse") == 0 ? "sse" : "mcp");
		rc = mcp_client_connect_url(c, url);
	}
	if (!ok(rc == MCP_OK, "%s: connect", what)) {
		diag("%s", mcp_client_error(c) ? mcp_client_error(c) : "");
		mcp_client_free(c);
		stop(&p);
		return;
	}
	is_str(mcp_client_transport(c), strcmp(mode, "stdio") == 0 ? "stdio" :
	    strcmp(mode, "sse") == 0 ? "sse" : "http", "%s: transport", what);
	rc = mcp_client_list_tools(c, &tools);
	ok(rc == MCP_OK && json_array_size(tools) >= 30, "%s: all the tools "
	    "(%zu)", what, json_array_size(tools));
	json_decref(tools);
	rc = mcp_client_call_tool_new(c, "add", json_pack("{s:i, s:i}", "a", 2,
	    "b", 3), &res);
	ok(rc == MCP_OK && json_integer_value(json_object_get(
	    json_object_get(res, "structuredContent"), "sum")) == 5,
	    "%s: add gives structuredContent", what);
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "fail", json_object(), &res);
	ok(rc == MCP_OK && json_is_true(json_object_get(res, "isError")),
	    "%s: isError comes back as a result", what);
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "nonesuch", json_object(), &res);
	ok(rc == MCP_ESERVER || (rc == MCP_OK && json_is_true(
	    json_object_get(res, "isError"))), "%s: an unknown tool is an "
	    "error", what);
	json_decref(res);
	rc = mcp_client_read_resource(c, "peer://hello", &res);
	is_str(json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "contents"), 0), "text")), "hello",
	    "%s: resources/read", what);
	json_decref(res);
	rc = mcp_client_get_prompt_new(c, "greet", json_pack("{s:s}", "name",
	    "Bo"), &res);
	is_str(json_string_value(json_object_get(json_object_get(
	    json_array_get(json_object_get(res, "messages"), 0), "content"),
	    "text")), "Hello, Bo", "%s: prompts/get", what);
	json_decref(res);
	rc = mcp_client_complete_new(c, json_pack("{s:s, s:s}", "type",
	    "ref/prompt", "name", "greet"), "name", "al", &res);
	ok(rc == MCP_OK && json_array_size(json_object_get(res, "values")) ==
	    2, "%s: completion/complete", what);
	json_decref(res);
	if (strcmp(flag != NULL ? flag : "", "--stateless") != 0) {
		rc = mcp_client_call_tool_new(c, "sample", json_pack("{s:s}",
		    "prompt", "hi"), &res);
		is_str(rc == MCP_OK ? text_of(res) : mcp_client_error(c),
		    "sampled: hi", "%s: sampling/createMessage reaches the "
		    "handler, and its answer the tool", what);
		json_decref(res);
		rc = mcp_client_call_tool_new(c, "elicit", json_object(), &res);
		ok(rc == MCP_OK && text_of(res) != NULL &&
		    strstr(text_of(res), "Ada") != NULL, "%s: an elicitation "
		    "answered later from another thread", what);
		json_decref(res);
		rc = mcp_client_call_tool_new(c, "roots", json_object(), &res);
		ok(rc == MCP_OK && text_of(res) != NULL &&
		    strstr(text_of(res), "file:///tmp/project") != NULL,
		    "%s: roots/list answered from the roots set", what);
		json_decref(res);
		ok(mcp_client_set_log_level(c, "debug") == MCP_OK,
		    "%s: logging/setLevel", what);
		rc = mcp_client_call_tool_new(c, "log", json_pack("{s:s}",
		    "text", "a line"), &res);
		json_decref(res);
		until = now() + 3;
		while (now() < until) {
			pthread_mutex_lock(&s.m);
			if (s.logs > 0) {
				pthread_mutex_unlock(&s.m);
				break;
			}
			pthread_mutex_unlock(&s.m);
			usleep(10000);
		}
		is_str(s.log_text, "a line", "%s: a log notification reaches "
		    "the handler", what);
		ok(mcp_client_subscribe(c, "peer://hello") == MCP_OK,
		    "%s: resources/subscribe", what);
		rc = mcp_client_call_tool_new(c, "touch", json_pack("{s:s}",
		    "uri", "peer://hello"), &res);
		json_decref(res);
		until = now() + 3;
		while (now() < until) {
			pthread_mutex_lock(&s.m);
			if (s.updated > 0) {
				pthread_mutex_unlock(&s.m);
				break;
			}
			pthread_mutex_unlock(&s.m);
			usleep(10000);
		}
		ok(s.updated > 0, "%s: resources/updated reaches the handler",
		    what);
	}
	ok(mcp_client_ping(c) == MCP_OK, "%s: ping", what);
	many_threads(c, what);
	mcp_client_free(c);
	stop(&p);
}

/* ---- main ------------------------------------------------------------ */

int
main(void)
{
	static char	 demo_path[512];
	const char	*b = getenv("MCP_BUILD");
	char		*argv_demo[] = { NULL, NULL };
	char		*argv_bad[] = { "/nonexistent/server", NULL };
	mcp_client	*c;
	json_t		*res = NULL, *tools = NULL;
	int		 rc;
	double		 t0;

	signal(SIGPIPE, SIG_IGN);
	snprintf(demo_path, sizeof(demo_path), "%s/mcp-demo", b != NULL ? b :
	    "build");
	demo = demo_path;
	argv_demo[0] = demo_path;
	mcp_log_set_level(MCP_LOG_ERR);

	/* stdio, mcp-demo */
	c = stdio_client(argv_demo, NULL, &rc);
	is_int(rc, MCP_OK, "stdio: connect to mcp-demo");
	is_str(mcp_client_protocol(c), "2026-07-28", "stdio: auto speaks "
	    "2026-07-28 to a server of both eras");
	is_str(json_string_value(json_object_get(mcp_client_server_info(c),
	    "name")), "mcp-demo", "stdio: serverInfo");
	ok(mcp_client_instructions(c) != NULL, "stdio: instructions");
	rc = mcp_client_list_tools(c, &tools);
	ok(rc == MCP_OK && json_array_size(tools) == 4, "stdio: tools/list");
	json_decref(tools);
	rc = mcp_client_call_tool_new(c, "echo", json_pack("{s:s}", "text",
	    "hi"), &res);
	is_str(text_of(res), "hi", "stdio: tools/call echo");
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "add", json_pack("{s:s}", "a", "x"),
	    &res);
	ok(rc == MCP_OK && json_is_true(json_object_get(res, "isError")) &&
	    strstr(text_of(res), "invalid arguments") != NULL, "stdio: bad "
	    "arguments: a tool error, as 2025-11-25 has it");
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "echo", NULL, &res);
	ok(rc == MCP_ENOMEM && json_integer_value(json_object_get(res,
	    "code")) == MCP_ENOMEM, "a NULL json_t (a failed constructor) is "
	    "MCP_ENOMEM, as every _new function has it");
	json_decref(res);
	rc = mcp_client_request_new(c, "nonesuch/method", json_object(), &res);
	ok(rc == MCP_ESERVER && json_integer_value(json_object_get(res,
	    "code")) == MCP_RPC_METHOD_NOT_FOUND, "stdio: an unknown method: "
	    "MCP_ESERVER with the server's error object");
	json_decref(res);
	many_threads(c, "stdio");
	mcp_client_free(c);

	/* The child's environment and directory are the caller's to give:
	 * the shell exits 1 (no initialize: connect fails) if either is
	 * not what was asked. */
	{
		static char	 script[1024], abs_demo[600];
		char		*argv_sh[] = { "/bin/sh", "-c", script, NULL };
		char		*envp[] = { "MCP_T_CLIENT=yes", "PATH=/usr/bin:/bin",
				    NULL };

		if (realpath(demo_path, abs_demo) == NULL)
			snprintf(abs_demo, sizeof(abs_demo), "%s", demo_path);
		snprintf(script, sizeof(script), "[ \"$MCP_T_CLIENT\" = yes ] "
		    "&& [ -z \"$HOME\" ] && [ \"$(pwd)\" = /tmp ] && exec %s",
		    abs_demo);
		c = mcp_client_new("client-api", "1");
		rc = mcp_client_connect_stdio(c, argv_sh, envp, "/tmp");
		is_int(rc, MCP_OK, "stdio: the child gets the environment and "
		    "the directory asked for");
		mcp_client_free(c);
		c = mcp_client_new("client-api", "1");
		rc = mcp_client_connect_stdio(c, argv_sh, envp, "/");
		ok(rc == MCP_EIO, "stdio: ... and a check that can fail: in / "
		    "it exits, and connect says so");
		mcp_client_free(c);
	}

	/* Versions. */
	c = mcp_client_new("client-api", "1");
	ok(mcp_client_set_option(c, "protocol", "2024-11-05") == MCP_OK,
	    "protocol option");
	ok(mcp_client_set_option(c, "protocol", "1999-01-01") == MCP_EINVAL,
	    "an unknown version is refused");
	rc = mcp_client_connect_stdio(c, argv_demo, NULL, NULL);
	is_str(mcp_client_protocol(c), "2024-11-05", "stdio: 2024-11-05 when "
	    "asked for");
	mcp_client_free(c);

	/* Timeouts and progress. */
	c = stdio_client(argv_demo, "0.5", &rc);
	t0 = now();
	rc = mcp_client_call_tool_new(c, "sleep", json_pack("{s:i}", "ms",
	    1500), &res);
	ok(rc == MCP_OK && now() - t0 >= 1.4, "progress extends a 0.5 s "
	    "timeout over a 1.5 s call");
	json_decref(res);
	mcp_client_free(c);
	c = mcp_client_new("client-api", "1");
	(void)mcp_client_set_option(c, "timeout", "0.5");
	(void)mcp_client_set_option(c, "progress-resets-timeout", "0");
	rc = mcp_client_connect_stdio(c, argv_demo, NULL, NULL);
	t0 = now();
	rc = mcp_client_call_tool_new(c, "sleep", json_pack("{s:i}", "ms",
	    1500), &res);
	ok(rc == MCP_ETIMEDOUT && now() - t0 < 1.0, "without progress "
	    "resets, the call times out at 0.5 s");
	ok(strstr(json_string_value(json_object_get(res, "message")) ?
	    json_string_value(json_object_get(res, "message")) : "",
	    "no answer") != NULL, "the timeout says why");
	json_decref(res);
	rc = mcp_client_call_tool_new(c, "echo", json_pack("{s:s}", "text",
	    "after"), &res);
	is_str(text_of(res), "after", "the connection lives on after a "
	    "timeout");
	json_decref(res);
	mcp_client_free(c);
	c = mcp_client_new("client-api", "1");
	(void)mcp_client_set_option(c, "timeout", "0.5");
	(void)mcp_client_set_option(c, "max-timeout", "1");
	rc = mcp_client_connect_stdio(c, argv_demo, NULL, NULL);
	t0 = now();
	rc = mcp_client_call_tool_new(c, "sleep", json_pack("{s:i}", "ms",
	    5000), &res);
	ok(rc == MCP_ETIMEDOUT && now() - t0 < 1.5, "max-timeout bounds a "
	    "call that keeps sending progress");
	json_decref(res);
	mcp_client_free(c);

	/* Faults on stdio. */
	c = stdio_client(argv_bad, NULL, &rc);
	/* Under valgrind, posix_spawn forks: the child exits 127. */
	ok(rc == MCP_EIO && (strstr(mcp_client_error(c), "cannot start") !=
	    NULL || strstr(mcp_client_error(c), "status 127") != NULL),
	    "a server that cannot start: MCP_EIO, and why");
	mcp_client_free(c);
	{
		char *argv_die[] = { "node", "test/node/quirk-server.mjs",
		    "stdio", "die", NULL };

		c = stdio_client(argv_die, "10", &rc);
		t0 = now();
		rc = mcp_client_call_tool_new(c, "q", json_object(), &res);
		ok(rc == MCP_EIO && now() - t0 < 2 && strstr(
		    json_string_value(json_object_get(res, "message")),
		    "status 3") != NULL, "a server that dies mid-call: the "
		    "call fails at once with its exit status");
		json_decref(res);
		rc = mcp_client_ping(c);
		is_int(rc, MCP_EIO, "later requests fail at once too");
		mcp_client_free(c);
	}
	{
		char *argv_q[] = { "node", "test/node/quirk-server.mjs",
		    "stdio", "silent", NULL };
		pthread_t th;
		struct worker w;

		c = stdio_client(argv_q, "60", &rc);
		w = (struct worker){ c, 1, 0, 0, 0 };
		pthread_create(&th, NULL, echo_worker, &w);
		usleep(200000);
		t0 = now();
		mcp_client_free(c);
		pthread_join(th, NULL);
		ok(w.errors == 1 && now() - t0 < 3, "mcp_client_free ends a "
		    "blocked call at once, and the silent server");
	}

	async_tests();

	/* Blocking calls from a thread while the caller's loop runs. */
	{
		struct loop_runner lr;
		pthread_t th;
		struct worker w;

		lr.loop = ev_loop_new(EVFLAG_AUTO);
		ev_async_init(&lr.stop, stop_cb);
		ev_async_start(lr.loop, &lr.stop);
		c = mcp_client_new("client-api", "1");
		lr.c = c;
		lr.argv = argv_demo;
		lr.connected = 0;
		pthread_create(&th, NULL, run_loop, &lr);
		t0 = now();
		while (!lr.connected && now() - t0 < 5)
			usleep(1000);
		w = (struct worker){ c, 50, 0, 0, 0 };
		echo_worker(&w);
		ok(w.errors == 0 && w.bad == 0, "blocking calls from another "
		    "thread while the caller's loop runs");
		ev_async_send(lr.loop, &lr.stop);
		pthread_join(th, NULL);
		/* The loop has stopped: this thread may close the client. */
		mcp_client_free(c);
		ev_loop_destroy(lr.loop);
	}

	/* HTTP, mcp-demo with metrics: the server hears of cancels. */
	{
		char *argv_h[] = { demo_path, "--http", "127.0.0.1:0",
		    "--metrics", NULL };
		struct proc p = { 0 };
		long long id;
		struct async_state st = { 0 };
		struct async_one one = { &st, -1 };
		double before, cancelled, sessions;

		if (start_http(&p, argv_h, 1) != 0) {
			ok(0, "mcp-demo --http started");
		} else {
			/* The legacy session's ways: DELETE, the
			 * notifications/cancelled of a POST. */
			c = url_client_v(p.port, "/mcp", NULL, "2025-11-25",
			    &rc);
			is_int(rc, MCP_OK, "http: connect");
			is_str(mcp_client_transport(c), "http", "http: "
			    "Streamable HTTP");
			many_threads(c, "http");
			before = metric(p.port, "mcp_requests_total{method="
			    "\"tools/call\",outcome=\"cancelled\"}");
			rc = mcp_client_request_async_new(c, "tools/call",
			    json_pack("{s:s, s:{s:i}}", "name", "sleep",
			    "arguments", "ms", 20000), async_cb, &one, &id);
			usleep(300000);
			(void)mcp_client_cancel(c, id, "test");
			usleep(500000);
			cancelled = metric(p.port, "mcp_requests_total{method="
			    "\"tools/call\",outcome=\"cancelled\"}");
			ok(st.cancelled == 1 && cancelled == before + 1,
			    "http: a cancel ends the call here and there "
			    "(notifications/cancelled)");
			mcp_client_free(c);

			c = mcp_client_new("client-api", "1");
			(void)mcp_client_set_option(c, "protocol",
			    "2025-11-25");
			(void)mcp_client_set_option(c, "timeout", "0.3");
			(void)mcp_client_set_option(c,
			    "progress-resets-timeout", "0");
			{
				char url[64];

				snprintf(url, sizeof(url),
				    "http://127.0.0.1:%d/mcp", p.port);
				rc = mcp_client_connect_url(c, url);
			}
			rc = mcp_client_call_tool_new(c, "sleep",
			    json_pack("{s:i}", "ms", 20000), &res);
			json_decref(res);
			usleep(500000);
			ok(rc == MCP_ETIMEDOUT && metric(p.port,
			    "mcp_requests_total{method=\"tools/call\","
			    "outcome=\"cancelled\"}") == cancelled + 1,
			    "http: a timeout is sent as a cancel too");
			mcp_client_free(c);
			usleep(200000);
			sessions = metric(p.port, "mcp_sessions_ended_total{"
			    "transport=\"streamable_http\",reason=\"deleted\"}");
			ok(sessions >= 2, "http: closing sends DELETE "
			    "(%g sessions deleted)", sessions);

			c = url_client(p.port, "/sse", "sse", &rc);
			is_int(rc, MCP_OK, "sse: connect");
			is_str(mcp_client_transport(c), "sse", "sse: legacy");
			many_threads(c, "sse");
			mcp_client_free(c);
			stop(&p);
		}
	}

	/* HTTP quirks. */
	{
		char *argv_g[] = { "node", "test/node/quirk-server.mjs",
		    "http", "gone", NULL };
		char *argv_d[] = { "node", "test/node/quirk-server.mjs",
		    "http", "drop", NULL };
		char *argv_l[] = { "node", "test/node/quirk-server.mjs",
		    "http", "legacy", NULL };
		struct proc p = { 0 };
		char body[4096];

		if (start_http(&p, argv_g, 0) == 0) {
			c = url_client(p.port, "/mcp", NULL, &rc);
			rc = mcp_client_call_tool_new(c, "q", json_object(), &res);
			json_decref(res);
			is_int(rc, MCP_OK, "gone: the first call");
			rc = mcp_client_call_tool_new(c, "q", json_object(), &res);
			is_str(rc == MCP_OK ? text_of(res) : "failed", "ok",
			    "gone: a 404 for the session opens a new one, "
			    "and the call goes through");
			json_decref(res);
			mcp_client_free(c);
			stop(&p);
		} else {
			ok(0, "quirk gone started");
		}
		if (start_http(&p, argv_d, 0) == 0) {
			c = url_client(p.port, "/mcp", NULL, &rc);
			rc = mcp_client_call_tool_new(c, "q", json_object(), &res);
			is_str(rc == MCP_OK ? text_of(res) : "failed", "ok",
			    "drop: the dropped stream is resumed");
			json_decref(res);
			http_get(p.port, "/debug", body, sizeof(body));
			ok(strstr(body, "\"e2\"") != NULL, "drop: with "
			    "Last-Event-ID of the last event seen");
			mcp_client_free(c);
			stop(&p);
		} else {
			ok(0, "quirk drop started");
		}
		if (start_http(&p, argv_l, 0) == 0) {
			c = url_client(p.port, "/mcp", NULL, &rc);
			is_int(rc, MCP_OK, "legacy: POST initialize gets 405, "
			    "the client falls back to GET /sse");
			is_str(mcp_client_transport(c), "sse", "legacy: on "
			    "the SSE transport");
			rc = mcp_client_call_tool_new(c, "q", json_object(), &res);
			is_str(rc == MCP_OK ? text_of(res) : "failed", "ok",
			    "legacy: calls work");
			json_decref(res);
			mcp_client_free(c);
			stop(&p);
		} else {
			ok(0, "quirk legacy started");
		}
	}

	/* The official TypeScript SDK's servers. */
	peer_tests("stdio", NULL);
	peer_tests("http", NULL);
	peer_tests("http", "--json");
	peer_tests("http", "--stateless");
	peer_tests("sse", NULL);
	return tap_done();
}
