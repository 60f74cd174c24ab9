/*
 * cli.c: mcp_server_main, the command line every server built on libmcp
 * inherits (mcp_server_main(3)). Each long option with a value is handed
 * to mcp_server_set_option under its own name, so the command line and
 * programs share one parser. Runs on the calling thread before the loop
 * starts. --help and --version are the only output to stdout; they never
 * coexist with a running stdio transport.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main/main.h"

enum {
	OPT_STDIO = 256,
	OPT_LOG_LEVEL,
	OPT_FLAG,		/* set_option(name, "1") */
	OPT_SET			/* anything at or past this: set_option */
};

static const struct option longopts[] = {
	{ "stdio",		no_argument,		NULL, OPT_STDIO },
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
	{ "stateless",		no_argument,		NULL, OPT_FLAG },
	{ "json-response",	no_argument,		NULL, OPT_FLAG },
	{ "event-log",		required_argument,	NULL, OPT_SET },
	{ "session-timeout",	required_argument,	NULL, OPT_SET },
	{ "sse-retry",		required_argument,	NULL, OPT_SET },
	{ "authorization-server", required_argument,	NULL, OPT_SET },
	{ "resource-url",	required_argument,	NULL, OPT_SET },
	{ "drain-timeout",	required_argument,	NULL, OPT_SET },
	{ "metrics",		no_argument,		NULL, OPT_FLAG },
	{ "metrics-listen",	required_argument,	NULL, OPT_SET },
	{ "access-log",		no_argument,		NULL, OPT_FLAG },
	{ "log-format",		required_argument,	NULL, OPT_SET },
	{ "log-file",		required_argument,	NULL, OPT_SET },
	{ NULL,			0,			NULL, 0 }
};

static const char usage_line[] =
"usage: %s [--stdio] [--http ADDR:PORT] [options]; %s --help for more\n";

static const char usage_text[] =
"usage: %s [--stdio] [--http ADDR:PORT] [options]\n"
"\n"
"An MCP server built with libmcp %s. By default it speaks JSON-RPC 2.0 as\n"
"JSON lines on stdin and stdout; with --http it serves HTTP: Streamable\n"
"HTTP at /mcp, and the legacy GET /sse with POST /messages. Logs go to\n"
"stderr.\n"
"\n"
"  --stdio                 serve on stdin/stdout (the default without --http)\n"
"  --http ADDR:PORT        serve HTTP, e.g. 127.0.0.1:8080 or [::1]:0; \"systemd\"\n"
"                          takes the socket a systemd socket unit passes\n"
"  --workers N             worker threads for tool calls (default: %d, cores)\n"
"  --max-workers N         threads the pool may grow to while slow calls hold\n"
"                          every worker (default: %d)\n"
"  --log-level LEVEL       err, warn, notice, info or debug (default: notice;\n"
"                          also MCP_LOG_LEVEL in the environment)\n"
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
"  --max-subscriptions N   resources/subscribe per session (default: %d)\n"
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
"  --help, --version       print this, or the version, and exit\n";

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

/* The --help text into TEXT; its length. */
static size_t
help(struct mcp_server *srv, const char *prog, char *text, size_t size)
{
	struct host		*host = mcp__host(srv);
	struct http_conf	*c = &host->hconf;
	int			 n;

	n = snprintf(text, size, usage_text, prog, MCP_VERSION,
	    host->workers, host->max_workers, srv->max_message,
	    srv->queue_size, srv->page_size, host->grace_ms,
	    srv->tool_timeout_ms, srv->max_batch, srv->max_subscriptions,
	    c->keepalive,
	    c->max_sessions, c->max_inflight, c->max_queued,
	    c->request_timeout, c->idle_timeout, c->max_per_ip, c->event_log,
	    c->session_timeout, c->sse_retry, c->stream_after_ms);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

int
mcp_server_main(mcp_server *srv, int argc, char *argv[])
{
	const char	*prog;
	char		 text[4096];
	int		 ch, idx, level, n, rc, stdio = 0;

	if (srv == NULL)
		return MCP_ENOMEM;
	prog = argc > 0 && argv[0] != NULL ? argv[0] : srv->name;
	if (strrchr(prog, '/') != NULL)
		prog = strrchr(prog, '/') + 1;
	level = mcp_log_level_parse(getenv("MCP_LOG_LEVEL"));
	if (level >= 0)
		mcp_log_set_level(level);
	optind = 1;
	opterr = 1;
	for (;;) {
		idx = -1;
		ch = getopt_long(argc, argv, "vqhV", longopts, &idx);
		if (ch == -1)
			break;
		switch (ch) {
		case OPT_SET:
			if (mcp_server_set_option(srv, longopts[idx].name,
			    optarg) != MCP_OK)
				goto usage;
			break;
		case OPT_FLAG:
			if (mcp_server_set_option(srv, longopts[idx].name,
			    "1") != MCP_OK)
				goto usage;
			break;
		case OPT_STDIO:
			stdio = 1;
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
			print_stdout(text, help(srv, prog, text,
			    sizeof(text)));
			return MCP_OK;
		case 'V':
			n = snprintf(text, sizeof(text), "%s %s (libmcp %s)\n",
			    srv->name, srv->version, MCP_VERSION);
			if (n > 0)
				print_stdout(text, (size_t)n);
			return MCP_OK;
		default:
			goto usage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument \"%s\"\n", prog,
		    argv[optind]);
		goto usage;
	}
	/* stdio is the default; with --http, only when asked for too. */
	if (stdio || mcp__host(srv)->hconf.addr == NULL) {
		rc = mcp_server_listen(srv, "stdio");
		if (rc != MCP_OK)
			return rc;
		if (isatty(STDIN_FILENO))
			mcp_log(MCP_LOG_NOTICE, "%s %s on stdio: type JSON-RPC "
			    "lines, e.g. {\"jsonrpc\":\"2.0\",\"id\":1,"
			    "\"method\":\"ping\"}", srv->name, srv->version);
		else
			MCP_LOG(MCP_LOG_INFO, "%s %s on stdio, %d workers",
			    srv->name, srv->version,
			    mcp__host(srv)->workers);
	}
	return mcp_server_run(srv);

usage:
	fprintf(stderr, usage_line, prog, prog);
	return MCP_EUSAGE;
}
