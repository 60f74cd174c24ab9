/*
 * mcp-call: the debug client. One run connects to a server (a command on
 * stdio, or a URL), initializes, does one thing and says what came back,
 * so that a fault shows as the protocol's or the business code's:
 *
 *   mcp-call [OPTIONS] COMMAND [ARGS...] -- SERVER_CMD [SERVER_ARGS...]
 *   mcp-call [OPTIONS] --url URL COMMAND [ARGS...]
 *
 * Exit codes: 0 success, 1 the tool answered isError, 2 usage, 3 a
 * protocol or transport error (a timeout or a refused connection too).
 * Results go to stdout; progress, logs, -v traces and errors to stderr.
 * A thin program over the public mcp_client API: see mcp-call(1).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <mcp.h>

#include "expand.h"

#define EX_OK		0
#define EX_TOOLERR	1
#define EX_USAGE	2
#define EX_FAIL		3

static const char usage_text[] =
"usage: mcp-call [OPTIONS] COMMAND [ARGS...] -- SERVER_CMD [SERVER_ARGS...]\n"
"       mcp-call [OPTIONS] --url URL COMMAND [ARGS...]\n"
"\n"
"Commands:\n"
"  list                    tools, resources, templates and prompts\n"
"  tools                   the tools, with their descriptions\n"
"  call TOOL [KEY=VALUE...] call a tool (a VALUE that parses as JSON is\n"
"                          JSON, else a string; or --args JSON)\n"
"  read URI                read a resource\n"
"  prompt NAME [KEY=VALUE...] get a prompt\n"
"  complete REF ARG=VALUE  completion: REF is prompt:NAME or resource:URI\n"
"  ping                    ping the server\n"
"  info                    what initialize (or, in 2026-07-28,\n"
"                          server/discover) gave: the protocol,\n"
"                          serverInfo, capabilities\n"
"\n"
"Options:\n"
"  --url URL               an HTTP server (Streamable HTTP, falling back\n"
"                          to legacy SSE)\n"
"  --transport T           stdio, http (Streamable HTTP, falling back to\n"
"                          SSE; the default with --url) or sse (legacy)\n"
"  --header 'K: V'         an HTTP header (repeatable); $NAME in V is\n"
"                          taken from the environment\n"
"  --timeout S             seconds to wait for each answer (default 30),\n"
"                          and to connect; progress starts it again\n"
"  --max-time S            seconds a request may last, progress or not\n"
"  --args JSON             the arguments of call or prompt, as an object\n"
"  --json                  the raw result on stdout\n"
"  --protocol VERSION      auto (the default: server/discover, falling\n"
"                          back to initialize for a legacy server),\n"
"                          2026-07-28 only, or the version to ask for\n"
"                          in initialize (2025-11-25 ... 2024-11-05)\n"
"  --log-level LEVEL       the server's log messages from LEVEL up\n"
"                          (logging/setLevel; in 2026-07-28, in _meta)\n"
"  --cacert FILE           CA certificates for https\n"
"  --insecure              do not verify the server's certificate\n"
"  --max-message BYTES     the largest message taken (default 4M)\n"
"  --no-progress           ask for no progress (so none restarts --timeout)\n"
"  -v, --verbose           every JSON-RPC message, both ways, on stderr,\n"
"                          and what the client decides (resume, fallback)\n"
"  -h, --help              this text\n"
"  --version               the version\n"
"\n"
"Exit status: 0 success, 1 the tool answered isError, 2 usage,\n"
"3 a protocol or transport error, 128+N when signal N (SIGTERM, SIGINT)\n"
"ended the call (it is cancelled, and the server told).\n";

static int	 verbose;
static volatile sig_atomic_t stopped_by;	/* the signal that ended it */
static volatile sig_atomic_t quitting;		/* main is done: the thread too */
static int	 raw_json;
static int	 tty_progress;
static int	 bar_shown;

static void
usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "mcp-call: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", "try 'mcp-call --help'\n");
	exit(EX_USAGE);
}

static void
clear_bar(void)
{
	if (bar_shown) {
		fprintf(stderr, "\r\033[K");
		bar_shown = 0;
	}
}

/* ---- Callbacks ------------------------------------------------------- */

static void
trace(mcp_client *c, int out, const char *json, size_t len, void *udata)
{
	struct timeval	 tv;
	struct tm	 tm;
	char		 ts[32];

	(void)c;
	(void)udata;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	clear_bar();
	fprintf(stderr, "%s.%03ld %s %.*s\n", ts, (long)(tv.tv_usec / 1000),
	    out ? "->" : "<-", (int)len, json);
}

static void
progress(mcp_client *c, long long id, double done, double total,
    const char *message, void *udata)
{
	int	 i, filled;

	(void)c;
	(void)id;
	(void)udata;
	if (!tty_progress) {
		if (total > 0)
			fprintf(stderr, "progress %g/%g%s%s\n", done, total,
			    message != NULL ? " " : "", message != NULL ?
			    message : "");
		else
			fprintf(stderr, "progress %g%s%s\n", done,
			    message != NULL ? " " : "", message != NULL ?
			    message : "");
		return;
	}
	fprintf(stderr, "\r\033[K");
	if (total > 0) {
		filled = (int)(30 * (done / total));
		if (filled > 30)
			filled = 30;
		if (filled < 0)
			filled = 0;
		fputc('[', stderr);
		for (i = 0; i < 30; i++)
			fputc(i < filled ? '#' : ' ', stderr);
		fprintf(stderr, "] %3.0f%%", 100 * done / total);
	} else {
		fprintf(stderr, "[%g]", done);
	}
	if (message != NULL)
		fprintf(stderr, " %.60s", message);
	bar_shown = 1;
}

static void
notified(mcp_client *c, const char *method, json_t *params, void *udata)
{
	json_t		*data;
	const char	*level, *logger;
	char		*text;

	(void)c;
	(void)udata;
	clear_bar();
	if (strcmp(method, "notifications/message") == 0) {
		level = json_string_value(json_object_get(params, "level"));
		logger = json_string_value(json_object_get(params, "logger"));
		data = json_object_get(params, "data");
		text = json_is_string(data) ? strdup(json_string_value(data)) :
		    json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
		fprintf(stderr, "log %s%s%s: %s\n", level != NULL ? level :
		    "?", logger != NULL ? " " : "", logger != NULL ? logger :
		    "", text != NULL ? text : "");
		free(text);
		return;
	}
	if (verbose)
		return;		/* the trace showed it */
	fprintf(stderr, "notification %s\n", method);
}

/* ---- Output ---------------------------------------------------------- */

static void
print_json(json_t *v)
{
	char	*s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);

	if (s != NULL)
		printf("%s\n", s);
	free(s);
}

/* A content list: the text of each text item; the others named. */
static void
print_content(json_t *content)
{
	size_t		 i;
	json_t		*item, *res;
	const char	*type, *text;

	for (i = 0; i < json_array_size(content); i++) {
		item = json_array_get(content, i);
		type = json_string_value(json_object_get(item, "type"));
		if (type == NULL)
			continue;
		if (strcmp(type, "text") == 0) {
			text = json_string_value(json_object_get(item, "text"));
			printf("%s\n", text != NULL ? text : "");
		} else if (strcmp(type, "resource") == 0) {
			res = json_object_get(item, "resource");
			text = json_string_value(json_object_get(res, "text"));
			if (text != NULL)
				printf("%s\n", text);
			else
				printf("[resource %s]\n", json_string_value(
				    json_object_get(res, "uri")) ?
				    json_string_value(json_object_get(res,
				    "uri")) : "?");
		} else if (strcmp(type, "resource_link") == 0) {
			printf("[link %s]\n", json_string_value(
			    json_object_get(item, "uri")) ?
			    json_string_value(json_object_get(item, "uri")) :
			    "?");
		} else {
			printf("[%s %s]\n", type, json_string_value(
			    json_object_get(item, "mimeType")) ?
			    json_string_value(json_object_get(item,
			    "mimeType")) : "");
		}
	}
}

static const char *
str(json_t *o, const char *key)
{
	const char	*s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* One line a thing: its kind, its name, its description's first line. */
static void
print_items(const char *kind, json_t *items, const char *namekey)
{
	size_t		 i;
	json_t		*it;
	const char	*d;
	int		 n;

	for (i = 0; i < json_array_size(items); i++) {
		it = json_array_get(items, i);
		d = str(it, "description");
		n = (int)strcspn(d, "\n");
		if (kind != NULL)
			printf("%-9s ", kind);
		printf("%s%s%.*s\n", str(it, namekey), n > 0 ? "\t" : "", n, d);
	}
}

/* ---- Arguments ------------------------------------------------------- */

/* KEY=VALUE words into an object: VALUE as JSON when it parses. */
static json_t *
parse_kv(char **words, int n, json_t *args)
{
	json_t	*v;
	char	*eq;
	int	 i;

	if (args == NULL)
		args = json_object();
	for (i = 0; i < n; i++) {
		eq = strchr(words[i], '=');
		if (eq == NULL || eq == words[i])
			usage_error("'%s' is not KEY=VALUE", words[i]);
		*eq = '\0';
		v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
		if (v == NULL)
			v = json_string(eq + 1);
		json_object_set_new(args, words[i], v);
	}
	return args;
}

/* ---- Signals ---------------------------------------------------------- */

/*
 * SIGTERM and SIGINT are taken by a thread of their own (sigwait), which
 * cancels what is in flight: the server hears notifications/cancelled,
 * the blocked call returns, and main closes as usual (DELETE for an HTTP
 * session, the child stopped), then exits 128 + the signal.
 */
static void *
signal_thread(void *arg)
{
	mcp_client	*c = arg;
	sigset_t	 set;
	int		 sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (quitting)
			break;		/* woken by main, to be joined */
		if (stopped_by == 0) {
			stopped_by = sig;
			(void)mcp_client_cancel_all(c, sig == SIGTERM ?
			    "SIGTERM" : "SIGINT");
		} else {
			_exit(128 + sig);	/* a second one: now */
		}
	}
	return NULL;
}

/* ---- main ------------------------------------------------------------ */

static int
fail(mcp_client *c, int rc, json_t *err)
{
	const char	*msg = json_string_value(json_object_get(err,
	    "message"));
	json_t		*code = json_object_get(err, "code");

	clear_bar();
	if (rc == MCP_ESERVER)
		fprintf(stderr, "mcp-call: the server answered error %lld: "
		    "%s\n", (long long)json_integer_value(code), msg != NULL ?
		    msg : "(no message)");
	else
		fprintf(stderr, "mcp-call: %s\n", msg != NULL ? msg :
		    mcp_client_error(c) != NULL ? mcp_client_error(c) :
		    mcp_strerror(rc));
	json_decref(err);
	return rc == MCP_EINVAL ? EX_USAGE : EX_FAIL;
}

static int
has_cap(mcp_client *c, const char *name)
{
	return json_object_get(mcp_client_server_capabilities(c), name) !=
	    NULL;
}

/* One list, into ALL[KEY] for --json, else printed a thing a line. */
static int
one_list(mcp_client *c, int (*fn)(mcp_client *, json_t **),
    const char *kind, const char *key, const char *namekey, json_t *all)
{
	json_t	*v = NULL;
	int	 rc;

	rc = fn(c, &v);
	if (rc != MCP_OK)
		return fail(c, rc, v);
	if (all != NULL)
		json_object_set_new(all, key, v);
	else {
		print_items(kind, v, namekey);
		json_decref(v);
	}
	return EX_OK;
}

/* list: what the server's capabilities say it has; tools: the tools. */
static int
cmd_list(mcp_client *c, int tools_only)
{
	json_t	*all = raw_json ? json_object() : NULL;
	int	 ex = EX_OK;

	if (tools_only || has_cap(c, "tools"))
		ex = one_list(c, mcp_client_list_tools, tools_only ? NULL :
		    "tool", "tools", "name", all);
	if (!tools_only && ex == EX_OK && has_cap(c, "resources"))
		ex = one_list(c, mcp_client_list_resources, "resource",
		    "resources", "uri", all);
	if (!tools_only && ex == EX_OK && has_cap(c, "resources"))
		ex = one_list(c, mcp_client_list_templates, "template",
		    "resourceTemplates", "uriTemplate", all);
	if (!tools_only && ex == EX_OK && has_cap(c, "prompts"))
		ex = one_list(c, mcp_client_list_prompts, "prompt", "prompts",
		    "name", all);
	if (all != NULL && ex == EX_OK)
		print_json(tools_only ? json_object_get(all, "tools") : all);
	json_decref(all);
	return ex;
}

int
main(int argc, char **argv)
{
	mcp_client	*c;
	json_t		*args = NULL, *res = NULL, *ref;
	const char	*url = NULL, *transport = NULL, *level = NULL;
	char		**server = NULL, **words, *cmd, *h, *eq;
	int		 i, nwords, rc, ex = EX_OK;
	int		 nopt;
	pthread_t	 sigthread;
	int		 have_sigthread = 0;

	signal(SIGPIPE, SIG_IGN);
	c = mcp_client_new("mcp-call", mcp_version());
	if (c == NULL) {
		fprintf(stderr, "mcp-call: out of memory\n");
		return EX_FAIL;
	}
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = NULL;
			server = argv + i + 1;
			argc = i;
			break;
		}
	}
	words = calloc((size_t)argc, sizeof(char *));
	if (words == NULL)
		return EX_FAIL;
	nwords = 0;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		nopt = 1;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			goto quit;
		} else if (strcmp(a, "--version") == 0) {
			printf("mcp-call %s\n", mcp_version());
			goto quit;
		} else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
			verbose = 1;
			nopt = 0;
		} else if (strcmp(a, "--json") == 0) {
			raw_json = 1;
			nopt = 0;
		} else if (strcmp(a, "--insecure") == 0) {
			(void)mcp_client_set_option(c, "insecure", "1");
			nopt = 0;
		} else if (strcmp(a, "--no-progress") == 0) {
			(void)mcp_client_set_option(c, "progress", "0");
			nopt = 0;
		} else if (a[0] == '-' && a[1] == '-' && v == NULL) {
			usage_error("%s needs a value", a);
		} else if (strcmp(a, "--url") == 0) {
			if (strncmp(v, "http://", 7) != 0 &&
			    strncmp(v, "https://", 8) != 0)
				usage_error("--url '%s' is not http:// or "
				    "https://", v);
			url = v;
		} else if (strcmp(a, "--transport") == 0) {
			transport = v;
			if (strcmp(v, "stdio") != 0 && strcmp(v, "http") != 0 &&
			    strcmp(v, "sse") != 0)
				usage_error("unknown transport '%s' (stdio, "
				    "http, sse)", v);
		} else if (strcmp(a, "--header") == 0) {
			h = expand(v);
			if (h == NULL || mcp_client_set_option(c, "header", h) !=
			    MCP_OK)
				usage_error("bad header '%s' (K: V)", v);
			free(h);
		} else if (strcmp(a, "--timeout") == 0) {
			if (mcp_client_set_option(c, "timeout", v) != MCP_OK ||
			    mcp_client_set_option(c, "connect-timeout", v) !=
			    MCP_OK)
				usage_error("bad timeout '%s'", v);
		} else if (strcmp(a, "--max-time") == 0) {
			if (mcp_client_set_option(c, "max-timeout", v) !=
			    MCP_OK)
				usage_error("bad --max-time '%s'", v);
		} else if (strcmp(a, "--args") == 0) {
			json_decref(args);
			args = json_loads(v, 0, NULL);
			if (!json_is_object(args))
				usage_error("--args '%s' is not a JSON object",
				    v);
		} else if (strcmp(a, "--protocol") == 0) {
			if (mcp_client_set_option(c, "protocol", v) != MCP_OK)
				usage_error("unknown protocol version '%s'", v);
		} else if (strcmp(a, "--log-level") == 0) {
			/* The protocol's eight (syslog's), not libmcp's. */
			if (strcmp(v, "debug") != 0 && strcmp(v, "info") != 0 &&
			    strcmp(v, "notice") != 0 &&
			    strcmp(v, "warning") != 0 &&
			    strcmp(v, "error") != 0 &&
			    strcmp(v, "critical") != 0 &&
			    strcmp(v, "alert") != 0 &&
			    strcmp(v, "emergency") != 0)
				usage_error("unknown log level '%s' (debug, "
				    "info, notice, warning, error, critical, "
				    "alert, emergency)", v);
			level = v;
		} else if (strcmp(a, "--cacert") == 0) {
			(void)mcp_client_set_option(c, "cacert", v);
		} else if (strcmp(a, "--max-message") == 0) {
			if (mcp_client_set_option(c, "max-message", v) !=
			    MCP_OK)
				usage_error("bad size '%s'", v);
		} else if (a[0] == '-' && a[1] != '\0' && nwords == 0) {
			usage_error("unknown option '%s'", a);
		} else {
			words[nwords++] = argv[i];
			nopt = 0;
		}
		if (nopt)
			i++;
	}
	if (nwords == 0)
		usage_error("%s", "no command");
	cmd = words[0];
	if (url == NULL && server == NULL)
		usage_error("%s", "no server: give --url URL or -- SERVER_CMD");
	if (url != NULL && server != NULL)
		usage_error("%s", "give --url or a server command, not both");
	if (transport != NULL && strcmp(transport, "stdio") == 0 &&
	    server == NULL)
		usage_error("%s", "--transport stdio needs -- SERVER_CMD");
	if (transport != NULL && strcmp(transport, "stdio") != 0 &&
	    url == NULL)
		usage_error("--transport %s needs --url", transport);
	if (server != NULL && server[0] == NULL)
		usage_error("%s", "no command after --");
	if (strcmp(cmd, "list") != 0 && strcmp(cmd, "tools") != 0 &&
	    strcmp(cmd, "call") != 0 && strcmp(cmd, "read") != 0 &&
	    strcmp(cmd, "prompt") != 0 && strcmp(cmd, "complete") != 0 &&
	    strcmp(cmd, "ping") != 0 && strcmp(cmd, "info") != 0)
		usage_error("unknown command '%s'", cmd);
	if ((strcmp(cmd, "call") == 0 || strcmp(cmd, "read") == 0 ||
	    strcmp(cmd, "prompt") == 0) && nwords < 2)
		usage_error("%s needs a name", cmd);
	if (strcmp(cmd, "complete") == 0 && nwords != 3)
		usage_error("%s", "complete needs REF and ARG=VALUE");

	tty_progress = isatty(2);
	if (verbose) {
		(void)mcp_client_on_trace(c, trace, NULL);
		mcp_log_set_level(MCP_LOG_INFO);
	}
	(void)mcp_client_on_progress(c, progress, NULL);
	(void)mcp_client_on_notification(c, notified, NULL);
	if (transport != NULL && url != NULL)
		(void)mcp_client_set_option(c, "transport", transport);
	/* One command: the GET stream for server messages is not needed. */
	(void)mcp_client_set_option(c, "listen", "0");
	{
		sigset_t	 set;

		/* Blocked in every thread (the client's inherits it), taken
		 * by the one that waits for them. */
		sigemptyset(&set);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGINT);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		have_sigthread = pthread_create(&sigthread, NULL,
		    signal_thread, c) == 0;
	}
	rc = url != NULL ? mcp_client_connect_url(c, url) :
	    mcp_client_connect_stdio(c, server, NULL, NULL);
	if (rc != MCP_OK) {
		fprintf(stderr, "mcp-call: %s\n", mcp_client_error(c) != NULL ?
		    mcp_client_error(c) : mcp_strerror(rc));
		ex = EX_FAIL;
		goto out;
	}
	if (verbose)
		fprintf(stderr, "mcp-call: protocol %s (%s)\n",
		    mcp_client_protocol(c), mcp_client_transport(c));
	if (level != NULL) {
		/* 2026-07-28 has no logging/setLevel: each request asks. */
		rc = strcmp(mcp_client_protocol(c), "2026-07-28") == 0 ?
		    mcp_client_set_log_level(c, level) :
		    mcp_client_request_new(c, "logging/setLevel",
		    json_pack("{s:s}", "level", level), &res);
		if (rc != MCP_OK) {
			ex = fail(c, rc, res);
			goto out;
		}
		json_decref(res);
		res = NULL;
	}

	if (strcmp(cmd, "list") == 0 || strcmp(cmd, "tools") == 0) {
		ex = cmd_list(c, strcmp(cmd, "tools") == 0);
	} else if (strcmp(cmd, "call") == 0) {
		args = parse_kv(words + 2, nwords - 2, args);
		rc = mcp_client_call_tool_new(c, words[1], args, &res);
		args = NULL;
		if (rc != MCP_OK) {
			ex = fail(c, rc, res);
			goto out;
		}
		clear_bar();
		if (raw_json)
			print_json(res);
		else
			print_content(json_object_get(res, "content"));
		if (json_is_true(json_object_get(res, "isError"))) {
			if (!raw_json)
				fprintf(stderr, "mcp-call: %s answered "
				    "isError\n", words[1]);
			ex = EX_TOOLERR;
		}
		json_decref(res);
	} else if (strcmp(cmd, "read") == 0) {
		json_t *contents, *item;
		size_t k;

		rc = mcp_client_read_resource(c, words[1], &res);
		if (rc != MCP_OK) {
			ex = fail(c, rc, res);
			goto out;
		}
		if (raw_json) {
			print_json(res);
		} else {
			contents = json_object_get(res, "contents");
			for (k = 0; k < json_array_size(contents); k++) {
				item = json_array_get(contents, k);
				if (json_is_string(json_object_get(item,
				    "text")))
					printf("%s\n", str(item, "text"));
				else
					printf("[blob %s %s: use --json]\n",
					    str(item, "uri"),
					    str(item, "mimeType"));
			}
		}
		json_decref(res);
	} else if (strcmp(cmd, "prompt") == 0) {
		json_t *msgs, *m, *content;
		size_t k;

		args = parse_kv(words + 2, nwords - 2, args);
		rc = mcp_client_get_prompt_new(c, words[1], args, &res);
		args = NULL;
		if (rc != MCP_OK) {
			ex = fail(c, rc, res);
			goto out;
		}
		if (raw_json) {
			print_json(res);
		} else {
			msgs = json_object_get(res, "messages");
			for (k = 0; k < json_array_size(msgs); k++) {
				m = json_array_get(msgs, k);
				content = json_object_get(m, "content");
				printf("%s: ", str(m, "role"));
				if (json_is_string(json_object_get(content,
				    "text")))
					printf("%s\n", str(content, "text"));
				else
					printf("[%s]\n", str(content, "type"));
			}
		}
		json_decref(res);
	} else if (strcmp(cmd, "complete") == 0) {
		json_t *values;
		size_t k;

		if (strncmp(words[1], "prompt:", 7) == 0)
			ref = json_pack("{s:s, s:s}", "type", "ref/prompt",
			    "name", words[1] + 7);
		else if (strncmp(words[1], "resource:", 9) == 0)
			ref = json_pack("{s:s, s:s}", "type", "ref/resource",
			    "uri", words[1] + 9);
		else
			usage_error("REF '%s' is not prompt:NAME or "
			    "resource:URI", words[1]);
		eq = strchr(words[2], '=');
		if (eq == NULL || eq == words[2])
			usage_error("'%s' is not ARG=VALUE", words[2]);
		*eq = '\0';
		rc = mcp_client_complete_new(c, ref, words[2], eq + 1, &res);
		if (rc != MCP_OK) {
			ex = fail(c, rc, res);
			goto out;
		}
		if (raw_json) {
			print_json(res);
		} else {
			values = json_object_get(res, "values");
			for (k = 0; k < json_array_size(values); k++)
				printf("%s\n", json_string_value(
				    json_array_get(values, k)) ?
				    json_string_value(json_array_get(values,
				    k)) : "");
		}
		json_decref(res);
	} else if (strcmp(cmd, "ping") == 0) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		/* 2026-07-28 has no ping: server/discover then. */
		rc = strcmp(mcp_client_protocol(c), "2026-07-28") == 0 ?
		    mcp_client_request_new(c, "server/discover", json_object(),
		    &res) : mcp_client_request_new(c, "ping", json_object(),
		    &res);
		if (rc != MCP_OK) {
			ex = fail(c, rc, res);
			goto out;
		}
		json_decref(res);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("pong in %.2f ms\n", (t1.tv_sec - t0.tv_sec) * 1e3 +
		    (t1.tv_nsec - t0.tv_nsec) / 1e6);
	} else if (strcmp(cmd, "info") == 0) {
		json_t *o = json_pack("{s:s, s:s, s:O*, s:O*}", "transport",
		    mcp_client_transport(c), "protocolVersion",
		    mcp_client_protocol(c), "serverInfo",
		    mcp_client_server_info(c), "capabilities",
		    mcp_client_server_capabilities(c));

		if (mcp_client_instructions(c) != NULL)
			json_object_set_new(o, "instructions",
			    json_string(mcp_client_instructions(c)));
		print_json(o);
		json_decref(o);
	}
out:
	json_decref(args);
	fflush(stdout);
	clear_bar();
	if (have_sigthread) {
		/* Before the client goes: the thread may use it. */
		quitting = 1;
		pthread_kill(sigthread, SIGINT);
		pthread_join(sigthread, NULL);
	}
	if (stopped_by != 0) {
		fprintf(stderr, "mcp-call: stopped by %s; the call was "
		    "cancelled\n", stopped_by == SIGTERM ? "SIGTERM" :
		    "SIGINT");
		ex = 128 + stopped_by;
	}
quit:
	mcp_client_free(c);
	free(words);
	return ex;
}
