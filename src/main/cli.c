/*
 * cli.c: mcp_server_main, the command line every server built on libmcp
 * inherits (mcp_server_main(3)), with the application's own flags beside
 * it (flags.c). Each long option with a value is handed to
 * mcp_server_set_option under its own name, so the command line and
 * programs share one parser. Every option can come from the environment
 * too, under a name made from its own (MCP_HTTP for --http), for the
 * agents that configure a stdio server with env rather than args: the
 * command line is read first, then the variables of the settings it left
 * alone. Runs on the calling thread before the loop starts. --help and
 * --version are the only output to stdout; they never coexist with a
 * running stdio transport.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main/main.h"

enum {
	OPT_STDIO = 256,
	OPT_LOG_LEVEL,
	OPT_FLAG,		/* set_option(name, "1" or "0") */
	OPT_SET,		/* set_option(name, value) */
	OPT_APP = 0x1000	/* + i: the application's flag i */
};

static const struct option longopts[] = {
	{ "stdio",		optional_argument,	NULL, OPT_STDIO },
	{ "log-level",		required_argument,	NULL, OPT_LOG_LEVEL },
	{ "verbose",		no_argument,		NULL, 'v' },
	{ "quiet",		no_argument,		NULL, 'q' },
	{ "help",		no_argument,		NULL, 'h' },
	{ "version",		no_argument,		NULL, 'V' },
	/* From here on, handed to mcp_server_set_option by name. */
	{ "http",		required_argument,	NULL, OPT_SET },
	{ "workers",		required_argument,	NULL, OPT_SET },
	{ "max-workers",	required_argument,	NULL, OPT_SET },
	{ "max-message",	required_argument,	NULL, OPT_SET },
	{ "queue-size",		required_argument,	NULL, OPT_SET },
	{ "page-size",		required_argument,	NULL, OPT_SET },
	{ "grace-ms",		required_argument,	NULL, OPT_SET },
	{ "tool-timeout",	required_argument,	NULL, OPT_SET },
	{ "max-batch",		required_argument,	NULL, OPT_SET },
	{ "max-subscriptions",	required_argument,	NULL, OPT_SET },
	{ "max-listens",	required_argument,	NULL, OPT_SET },
	{ "task-ttl",		required_argument,	NULL, OPT_SET },
	{ "max-tasks",		required_argument,	NULL, OPT_SET },
	{ "max-session-tasks",	required_argument,	NULL, OPT_SET },
	{ "max-task-bytes",	required_argument,	NULL, OPT_SET },
	{ "stream-after-ms",	required_argument,	NULL, OPT_SET },
	{ "auth-scopes",	required_argument,	NULL, OPT_SET },
	{ "base-path",		required_argument,	NULL, OPT_SET },
	{ "keepalive",		required_argument,	NULL, OPT_SET },
	{ "max-sessions",	required_argument,	NULL, OPT_SET },
	{ "max-inflight",	required_argument,	NULL, OPT_SET },
	{ "max-queued",		required_argument,	NULL, OPT_SET },
	{ "request-timeout",	required_argument,	NULL, OPT_SET },
	{ "idle-timeout",	required_argument,	NULL, OPT_SET },
	{ "max-per-ip",		required_argument,	NULL, OPT_SET },
	{ "allow-host",		required_argument,	NULL, OPT_SET },
	{ "allow-origin",	required_argument,	NULL, OPT_SET },
	{ "auth-token-file",	required_argument,	NULL, OPT_SET },
	{ "state-key-file",	required_argument,	NULL, OPT_SET },
	{ "state-ttl",		required_argument,	NULL, OPT_SET },
	{ "stateless",		optional_argument,	NULL, OPT_FLAG },
	{ "json-response",	optional_argument,	NULL, OPT_FLAG },
	{ "event-log",		required_argument,	NULL, OPT_SET },
	{ "session-timeout",	required_argument,	NULL, OPT_SET },
	{ "sse-retry",		required_argument,	NULL, OPT_SET },
	{ "redis",		required_argument,	NULL, OPT_SET },
	{ "redis-password-file", required_argument,	NULL, OPT_SET },
	{ "redis-prefix",	required_argument,	NULL, OPT_SET },
	{ "authorization-server", required_argument,	NULL, OPT_SET },
	{ "resource-url",	required_argument,	NULL, OPT_SET },
	{ "drain-timeout",	required_argument,	NULL, OPT_SET },
	{ "metrics",		optional_argument,	NULL, OPT_FLAG },
	{ "metrics-listen",	required_argument,	NULL, OPT_SET },
	{ "access-log",		optional_argument,	NULL, OPT_FLAG },
	{ "log-format",		required_argument,	NULL, OPT_SET },
	{ "log-file",		required_argument,	NULL, OPT_SET },
	{ NULL,			0,			NULL, 0 }
};

/* --help: the usage line (add_usage), this, the application's flags,
 * then the standard options. */
static const char intro_text[] =
"\n"
"An MCP server built with libmcp %s. By default it speaks JSON-RPC 2.0 as\n"
"JSON lines on stdin and stdout; with --http it serves HTTP: Streamable\n"
"HTTP at /mcp, and the legacy GET /sse with POST /messages. Logs go to\n"
"stderr.\n"
"\n";

static const char options_text[] =
"  --stdio                 serve on stdin/stdout (the default without --http)\n"
"  --http ADDR:PORT        serve HTTP, e.g. 127.0.0.1:8080 or [::1]:0; \"systemd\"\n"
"                          takes the socket a systemd socket unit passes\n"
"  --workers N             worker threads for tool calls (default: %d, cores)\n"
"  --max-workers N         threads the pool may grow to while slow calls hold\n"
"                          every worker (default: %d)\n"
"  --log-level LEVEL       err, warn, notice, info or debug (default: notice)\n"
"  --log-format FORMAT     text or json: one JSON object a line (default: text)\n"
"  --log-file FILE         log to FILE, reopened on SIGHUP (default: stderr)\n"
"  -v, -q                  one level more, or less, verbose\n"
"  --max-message BYTES     largest message accepted (default: %zu)\n"
"  --queue-size N          calls queued before input waits (default: %d)\n"
"  --page-size N           tools per tools/list page (default: %d)\n"
"  --grace-ms MS           time calls get to finish on SIGTERM (default: %d)\n"
"  --drain-timeout S       the same in seconds, for rolling restarts\n"
"  --tool-timeout MS       time limit for a tool call, 0 for none (default: %d)\n"
"  --max-batch N           messages in a JSON-RPC batch (default: %d)\n"
"  --max-subscriptions N   resources/subscribe per session, and resource URIs\n"
"                          per subscriptions/listen (default: %d)\n"
"  --max-listens N         subscriptions/listen open at once (default: %d)\n"
"  --task-ttl MS           the longest a task and its result are kept\n"
"                          (default: %d)\n"
"  --max-tasks N           tasks kept by the server (default: %d)\n"
"  --max-session-tasks N   tasks kept for one session (default: %d)\n"
"  --max-task-bytes BYTES  bytes of task results kept (default: %zu)\n"
"  --state-key-file FILE   sign 2026-07-28 requestState with the key in FILE,\n"
"                          shared by every instance (default: a random key\n"
"                          per process: a retry must come back to it)\n"
"  --state-ttl S           how long a requestState is good for (default: %d)\n"
"HTTP:\n"
"  --base-path PATH        serve under PATH, e.g. /mcp-demo (default: none)\n"
"  --keepalive SECONDS     SSE keepalive comment interval (default: %d)\n"
"  --max-sessions N        open sessions before 503 (default: %d)\n"
"  --max-inflight N        calls in flight per session (default: %d)\n"
"  --max-queued BYTES      bytes queued on a stream before it is cut\n"
"                          (default: %zu)\n"
"  --request-timeout S     time to send a whole request (default: %d)\n"
"  --idle-timeout S        time a kept-alive connection may idle, and a\n"
"                          stream's writes may stall (default: %d)\n"
"  --max-per-ip N          connections per client address (default: %d)\n"
"  --allow-host NAME       accept this Host too (repeatable)\n"
"  --allow-origin ORIGIN   accept this Origin too (repeatable)\n"
"  --auth-token-file FILE  require Authorization: Bearer <token in FILE>\n"
"  --auth-scopes LIST      scopes named in 401 challenges and the metadata\n"
"  --authorization-server URL  name it in the protected-resource metadata\n"
"  --resource-url URL      this server's public /mcp URL, for that metadata\n"
"  --access-log            log a line per HTTP request, with its request id\n"
"  --metrics               serve GET /metrics (Prometheus) on the HTTP address\n"
"  --metrics-listen ADDR   serve /metrics on ADDR:PORT instead (stdio too)\n"
"Streamable HTTP (/mcp):\n"
"  --stateless             no sessions: each POST stands alone\n"
"  --json-response         answer requests with JSON bodies, never SSE\n"
"  --event-log BYTES       events kept per stream for a replay (default: %zu)\n"
"  --session-timeout S     time a session may idle (default: %d)\n"
"  --sse-retry MS          retry sent in priming events (default: %d)\n"
"  --stream-after-ms MS    a POST whose answer takes longer becomes a live\n"
"                          stream, primed with an event id (default: %d)\n"
"Several instances (Streamable HTTP sessions shared, docs/DEPLOY.md):\n"
"  --redis URL             keep sessions in Redis, so that any instance serves\n"
"                          any of them: redis://[user:pass@]host:port[/db]\n"
"                          or unix:///path (default: none, sessions local)\n"
"  --redis-password-file FILE  AUTH with the first line of FILE\n"
"  --redis-prefix PREFIX   of every key and channel (default: mcp:)\n"
"  --help, --version       print this, or the version, and exit\n"
"\n"
"Every option but --help, --version, -v and -q can be set in the environment\n"
"instead, as MCP_ and its name in capitals, _ for - (MCP_HTTP=127.0.0.1:8080,\n"
"MCP_MAX_MESSAGE=65536); the command line wins, and an empty variable counts\n"
"as unset. A boolean, there or after = (--stateless=no), is 1, 0, true,\n"
"false, yes or no; a repeatable option takes a comma-separated list.\n";


#define NSTD	(sizeof(longopts) / sizeof(longopts[0]) - 1)

/* Writes to stdout on purpose: --help and --version are asked for. */
static void
print_stdout(const char *s, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		w = write(STDOUT_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

int
mcp__cli_is_std(const char *name)
{
	size_t	 i;

	for (i = 0; i < NSTD; i++)
		if (strcmp(longopts[i].name, name) == 0)
			return 1;
	return 0;
}

/* The index of option I's setting: --drain-timeout is --grace-ms in
 * seconds, so either on the command line leaves both variables unread. */
static size_t
setting(size_t i)
{
	size_t	 j;

	if (strcmp(longopts[i].name, "drain-timeout") != 0)
		return i;
	for (j = 0; j < NSTD; j++)
		if (strcmp(longopts[j].name, "grace-ms") == 0)
			return j;
	return i;
}

static int	 addf(struct buf *, const char *, ...) MCP_PRINTF(2, 3);

/* Appends printf's output to B. */
static int
addf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || mcp__buf_reserve(b, (size_t)n + 1) != MCP_OK)
		return MCP_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return MCP_OK;
}

/* What --help shows after a flag of TYPE. */
static const char *
metavar(int type)
{
	if (type == MCP_FLAG_STR)
		return " VALUE";
	if (type == MCP_FLAG_INT)
		return " N";
	return "";
}

/* "usage: PROG --required VALUE ... [--stdio] ...", no newline. */
static int
add_usage(struct buf *b, struct host *host, const char *prog)
{
	int	 i, rc;

	rc = addf(b, "usage: %s", prog);
	for (i = 0; i < host->nflags && rc == MCP_OK; i++)
		if (host->flags[i].required)
			rc = addf(b, " --%s%s", host->flags[i].name,
			    metavar(host->flags[i].type));
	if (rc == MCP_OK)
		rc = addf(b, " [--stdio] [--http ADDR:PORT] [options]");
	return rc;
}

#define HELP_COL	26	/* where the options' help starts */
#define HELP_WIDTH	79

/*
 * F's lines of --help, as the standard options have theirs: the flag
 * from column 2; from column 26, its help and, in brackets, whether it
 * is required, its default and its variable, wrapped before column 80.
 */
static int
add_flag_help(struct buf *b, struct host *host, const struct appflag *f)
{
	struct buf	 t = { NULL, 0, 0, 0 };
	char		 env[MCP_ENV_NAME_MAX];
	const char	*p, *q;
	size_t		 start = b->len, col, wl;
	int		 first = 1, rc;

	mcp__flag_env(host, f, env);
	rc = addf(&t, "%s%s", f->help, f->help[0] != '\0' ? " (" : "(");
	if (rc == MCP_OK && f->required)
		rc = addf(&t, "required; ");
	else if (rc == MCP_OK && f->def != NULL)
		rc = addf(&t, "default: %s; ", f->def);
	/* \001: a space the lines are not broken at. */
	if (rc == MCP_OK && env[0] != '\0')
		rc = addf(&t, "env\001%s; ", env);
	if (rc != MCP_OK)
		goto out;
	/* The last "; " becomes ")", or the " (" goes when it holds none. */
	if (t.len >= 2 && strcmp(t.data + t.len - 2, "; ") == 0)
		memcpy(t.data + t.len - 2, ")", 2);
	else
		t.data[t.len - (f->help[0] != '\0' ? 2 : 1)] = '\0';
	rc = addf(b, "  --%s%s", f->name, metavar(f->type));
	col = b->len - start;
	if (rc == MCP_OK && col + 2 <= HELP_COL)
		rc = addf(b, "%*s", (int)(HELP_COL - col), "");
	else if (rc == MCP_OK && col + 2 <= HELP_COL + 16)
		rc = addf(b, "  ");
	else if (rc == MCP_OK)
		rc = addf(b, "\n%*s", HELP_COL, "");
	col = col + 2 <= HELP_COL || col + 2 > HELP_COL + 16 ? HELP_COL :
	    col + 2;
	for (p = t.data; rc == MCP_OK && *p != '\0'; p = q) {
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		for (q = p; *q != '\0' && *q != ' '; q++)
			continue;
		wl = (size_t)(q - p);
		if (!first && col + 1 + wl > HELP_WIDTH) {
			rc = addf(b, "\n%*s", HELP_COL, "");
			col = HELP_COL;
		} else if (!first) {
			rc = mcp__buf_addc(b, ' ');
			col++;
		}
		for (; rc == MCP_OK && p < q; p++)
			rc = mcp__buf_addc(b, *p == '\001' ? ' ' : *p);
		col += wl;
		first = 0;
	}
	if (rc == MCP_OK)
		rc = mcp__buf_addc(b, '\n');
out:
	mcp__buf_free(&t);
	return rc;
}

/* The --help text into B. */
static int
help(struct mcp_server *srv, const char *prog, struct buf *b)
{
	struct host		*host = mcp__host(srv);
	struct http_conf	*c = &host->hconf;
	int			 i, rc;

	rc = add_usage(b, host, prog);
	if (rc == MCP_OK)
		rc = addf(b, "\n");
	if (rc == MCP_OK)
		rc = addf(b, intro_text, MCP_VERSION);
	if (rc == MCP_OK && host->nflags > 0)
		rc = addf(b, "Options of %s:\n", prog);
	for (i = 0; i < host->nflags && rc == MCP_OK; i++)
		rc = add_flag_help(b, host, &host->flags[i]);
	if (rc == MCP_OK && host->nflags > 0)
		rc = addf(b, "Standard options:\n");
	if (rc == MCP_OK)
		rc = addf(b, options_text,
		    host->workers, host->max_workers, srv->max_message,
		    srv->queue_size, srv->page_size, host->grace_ms,
		    srv->tool_timeout_ms, srv->max_batch,
		    srv->max_subscriptions, srv->max_listens,
		    srv->task_ttl_ms,
		    srv->max_tasks, srv->max_session_tasks,
		    srv->max_task_bytes, srv->state_ttl, c->keepalive,
		    c->max_sessions, c->max_inflight, c->max_queued,
		    c->request_timeout, c->idle_timeout, c->max_per_ip,
		    c->event_log, c->session_timeout, c->sse_retry,
		    c->stream_after_ms);
	return rc;
}

/* The usage line on stderr, for a bad command line. */
static void
usage(struct host *host, const char *prog)
{
	struct buf	 b = { NULL, 0, 0, 0 };

	if (add_usage(&b, host, prog) == MCP_OK)
		fprintf(stderr, "%s; %s --help for more\n", b.data, prog);
	else
		fprintf(stderr, "usage: %s [options]; %s --help for more\n",
		    prog, prog);
	mcp__buf_free(&b);
}

/* WHERE (a flag, or a variable and its flag) gave F the bad value V. */
static void
bad_value(const char *prog, const char *where, const struct appflag *f,
    const char *v)
{
	const char	*want;

	want = f->type == MCP_FLAG_INT ? "an integer" :
	    "true or false (1, 0, yes, no)";
	if (where[0] == '-')
		fprintf(stderr, "%s: %s: expected %s, not \"%s\"\n", prog,
		    where, want, v);
	else
		fprintf(stderr, "%s: %s (--%s): expected %s, not \"%s\"\n",
		    prog, where, f->name, want, v);
}

/*
 * No application flag may read a standard option's variable: "mcp-log"
 * with a flag "level" would read MCP_LOG_LEVEL. A bug of the program's,
 * found on its first run whatever its command line.
 */
static int
check_env_names(struct host *host)
{
	char	 env[MCP_ENV_NAME_MAX], std[MCP_ENV_NAME_MAX];
	size_t	 j;
	int	 i;

	for (i = 0; i < host->nflags; i++) {
		mcp__flag_env(host, &host->flags[i], env);
		if (env[0] == '\0')
			continue;
		for (j = 0; j < NSTD; j++) {
			mcp__env_name("MCP", longopts[j].name, std);
			if (strcmp(env, std) != 0)
				continue;
			mcp_log(MCP_LOG_ERR, "flag --%s: its variable %s is "
			    "--%s's; choose another with "
			    "mcp_server_set_flag_env or _set_env_prefix",
			    host->flags[i].name, env, longopts[j].name);
			return MCP_EINVAL;
		}
	}
	return MCP_OK;
}

/* Sets standard option O from the environment's V. */
static int
std_env(mcp_server *srv, int *stdio, const struct option *o, const char *v)
{
	const char	*p, *q;
	char		 item[4096];
	size_t		 n;
	int		 b, rc;

	if (o->val == OPT_STDIO || o->val == OPT_FLAG) {
		b = mcp__flag_bool(v);
		if (b < 0)
			return MCP_EINVAL;
		if (o->val == OPT_STDIO) {
			*stdio = b;
			return MCP_OK;
		}
		return mcp_server_set_option(srv, o->name, b ? "1" : "0");
	}
	if (strcmp(o->name, "allow-host") != 0 &&
	    strcmp(o->name, "allow-origin") != 0)
		return mcp_server_set_option(srv, o->name, v);
	/* Repeatable: a comma-separated list, spaces around items dropped. */
	for (p = v; *p != '\0'; p = *q == ',' ? q + 1 : q) {
		while (*p == ' ' || *p == '\t')
			p++;
		for (q = p; *q != '\0' && *q != ','; q++)
			continue;
		n = (size_t)(q - p);
		while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == 0)
			continue;
		if (n >= sizeof(item))
			return MCP_EINVAL;
		memcpy(item, p, n);
		item[n] = '\0';
		rc = mcp_server_set_option(srv, o->name, item);
		if (rc != MCP_OK)
			return rc;
	}
	return MCP_OK;
}

int
mcp_server_main(mcp_server *srv, int argc, char *argv[])
{
	struct host	*host;
	struct appflag	*f;
	struct option	*opts = NULL;
	unsigned char	*seen = NULL;
	struct buf	 text = { NULL, 0, 0, 0 };
	const char	*prog, *v, *envlevel;
	char		 env[MCP_ENV_NAME_MAX], vtext[256];
	size_t		 i, nopt;
	int		 b, ch, idx, level, n, rc, stdio = 0, badlevel = 0;

	if (srv == NULL)
		return MCP_ENOMEM;
	/* What fails from here on is the command line's, not the setup's. */
	atomic_store(&srv->setup_over, 1);
	host = mcp__host(srv);
	prog = argc > 0 && argv[0] != NULL ? argv[0] : srv->name;
	if (strrchr(prog, '/') != NULL)
		prog = strrchr(prog, '/') + 1;
	rc = check_env_names(host);
	if (rc != MCP_OK)
		return rc;
	mcp__flags_reset(host);
	nopt = NSTD + (size_t)host->nflags;
	opts = calloc(nopt + 1, sizeof(*opts));
	seen = calloc(nopt, 1);
	if (opts == NULL || seen == NULL) {
		rc = MCP_ENOMEM;
		goto out;
	}
	memcpy(opts, longopts, NSTD * sizeof(*opts));
	for (i = 0; i < (size_t)host->nflags; i++) {
		opts[NSTD + i].name = host->flags[i].name;
		opts[NSTD + i].has_arg = host->flags[i].type == MCP_FLAG_BOOL ?
		    optional_argument : required_argument;
		opts[NSTD + i].val = OPT_APP + (int)i;
	}
	/* First, so that -v and -q count from it; a bad one is an error
	 * only if --log-level does not replace it. */
	envlevel = getenv("MCP_LOG_LEVEL");
	if (envlevel != NULL && envlevel[0] != '\0') {
		level = mcp_log_level_parse(envlevel);
		if (level >= 0)
			mcp_log_set_level(level);
		else
			badlevel = 1;
	}
	optind = 1;
	opterr = 1;
	for (;;) {
		idx = -1;
		ch = getopt_long(argc, argv, "vqhV", opts, &idx);
		if (ch == -1)
			break;
		if (idx >= 0)
			seen[(size_t)idx < NSTD ? setting((size_t)idx) :
			    (size_t)idx] = 1;
		if (ch >= OPT_APP) {
			f = &host->flags[ch - OPT_APP];
			v = optarg != NULL ? optarg : "true";
			rc = mcp__flag_set(f, v);
			if (rc == MCP_EINVAL) {
				snprintf(vtext, sizeof(vtext), "--%s",
				    f->name);
				bad_value(prog, vtext, f, v);
				goto usage;
			}
			if (rc != MCP_OK)
				goto out;
			continue;
		}
		switch (ch) {
		case OPT_SET:
			if (mcp_server_set_option(srv, longopts[idx].name,
			    optarg) != MCP_OK)
				goto usage;
			break;
		case OPT_FLAG:
		case OPT_STDIO:
			b = optarg != NULL ? mcp__flag_bool(optarg) : 1;
			if (b < 0) {
				fprintf(stderr, "%s: --%s: expected true or "
				    "false (1, 0, yes, no), not \"%s\"\n",
				    prog, longopts[idx].name, optarg);
				goto usage;
			}
			if (ch == OPT_STDIO)
				stdio = b;
			else if (mcp_server_set_option(srv,
			    longopts[idx].name, b ? "1" : "0") != MCP_OK)
				goto usage;
			break;
		case OPT_LOG_LEVEL:
			level = mcp_log_level_parse(optarg);
			if (level < 0) {
				fprintf(stderr, "%s: --log-level: unknown "
				    "level \"%s\"\n", prog, optarg);
				goto usage;
			}
			mcp_log_set_level(level);
			break;
		case 'v':
			mcp_log_set_level(mcp_log_get_level() + 1);
			break;
		case 'q':
			mcp_log_set_level(mcp_log_get_level() - 1);
			break;
		case 'h':
			rc = help(srv, prog, &text);
			if (rc == MCP_OK)
				print_stdout(text.data, text.len);
			goto out;
		case 'V':
			n = snprintf(vtext, sizeof(vtext),
			    "%s %s (libmcp %s)\n", srv->name, srv->version,
			    MCP_VERSION);
			if (n > 0)
				print_stdout(vtext, (size_t)n < sizeof(vtext) ?
				    (size_t)n : sizeof(vtext) - 1);
			rc = MCP_OK;
			goto out;
		default:
			goto usage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", prog,
		    argv[optind]);
		goto usage;
	}

	/* The environment, for what the command line left alone. */
	for (i = 0; i < NSTD; i++) {
		if (strcmp(longopts[i].name, "log-level") == 0) {
			if (badlevel && !seen[i]) {
				fprintf(stderr, "%s: MCP_LOG_LEVEL "
				    "(--log-level): unknown level \"%s\"\n",
				    prog, envlevel);
				goto usage;
			}
			continue;
		}
		if ((longopts[i].val != OPT_SET &&
		    longopts[i].val != OPT_FLAG &&
		    longopts[i].val != OPT_STDIO) || seen[setting(i)])
			continue;
		mcp__env_name("MCP", longopts[i].name, env);
		v = getenv(env);
		if (v == NULL || v[0] == '\0')
			continue;
		seen[setting(i)] = 1;
		if (std_env(srv, &stdio, &longopts[i], v) != MCP_OK) {
			fprintf(stderr, "%s: %s (--%s): bad value \"%s\"\n",
			    prog, env, longopts[i].name, v);
			goto usage;
		}
	}
	for (i = 0; i < (size_t)host->nflags; i++) {
		f = &host->flags[i];
		if (seen[NSTD + i])
			continue;
		mcp__flag_env(host, f, env);
		v = env[0] != '\0' ? getenv(env) : NULL;
		if (v == NULL || v[0] == '\0')
			continue;
		rc = mcp__flag_set(f, v);
		if (rc == MCP_EINVAL) {
			bad_value(prog, env, f, v);
			goto usage;
		}
		if (rc != MCP_OK)
			goto out;
	}
	for (i = 0; i < (size_t)host->nflags; i++) {
		f = &host->flags[i];
		if (!f->required || f->val != NULL)
			continue;
		mcp__flag_env(host, f, env);
		if (env[0] != '\0')
			fprintf(stderr, "%s: --%s is required (or %s in the "
			    "environment)\n", prog, f->name, env);
		else
			fprintf(stderr, "%s: --%s is required\n", prog,
			    f->name);
		goto usage;
	}
	/*
	 * An address to listen on is this process's alone, as systemd's
	 * LISTEN_FDS are: a child that is a libmcp server too (mcp-gateway
	 * runs them) would bind it, or serve HTTP instead of its stdio.
	 */
	unsetenv("MCP_HTTP");
	unsetenv("MCP_METRICS_LISTEN");
	free(opts);
	free(seen);
	opts = NULL;
	seen = NULL;

	/* --help and --version work whatever the setup; running does not. */
	if ((rc = mcp__setup_check(srv, "mcp_server_main")) != MCP_OK)
		goto out;

	/* stdio is the default; with --http, only when asked for too. */
	if (stdio || host->hconf.addr == NULL) {
		rc = mcp_server_listen(srv, "stdio");
		if (rc != MCP_OK)
			goto out;
		if (isatty(STDIN_FILENO))
			mcp_log(MCP_LOG_NOTICE, "%s %s on stdio: type JSON-RPC "
			    "lines, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,"
			    "\"method\":\"ping\"}", srv->name, srv->version);
		else
			MCP_LOG(MCP_LOG_INFO, "%s %s on stdio, %d workers",
			    srv->name, srv->version, host->workers);
	}
	rc = mcp_server_run(srv);
	goto out;

usage:
	usage(host, prog);
	rc = MCP_EUSAGE;
out:
	free(opts);
	free(seen);
	mcp__buf_free(&text);
	return rc;
}
