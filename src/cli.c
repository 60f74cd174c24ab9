/*
 * cli.c: mcp_server_main, the command line every server built on libmcp
 * inherits (mcp_server_main(3)). Runs on the calling thread before the
 * loop starts. --help and --version are the only output to stdout; they
 * never coexist with a running stdio transport.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp-int.h"

enum {
	OPT_STDIO = 256,
	OPT_WORKERS,
	OPT_MAX_WORKERS,
	OPT_LOG_LEVEL,
	OPT_MAX_MESSAGE,
	OPT_QUEUE_SIZE,
	OPT_PAGE_SIZE,
	OPT_GRACE_MS
};

static const struct option longopts[] = {
	{ "stdio",	 no_argument,		NULL, OPT_STDIO },
	{ "workers",	 required_argument,	NULL, OPT_WORKERS },
	{ "max-workers", required_argument,	NULL, OPT_MAX_WORKERS },
	{ "log-level",	 required_argument,	NULL, OPT_LOG_LEVEL },
	{ "max-message", required_argument,	NULL, OPT_MAX_MESSAGE },
	{ "queue-size",	 required_argument,	NULL, OPT_QUEUE_SIZE },
	{ "page-size",	 required_argument,	NULL, OPT_PAGE_SIZE },
	{ "grace-ms",	 required_argument,	NULL, OPT_GRACE_MS },
	{ "verbose",	 no_argument,		NULL, 'v' },
	{ "quiet",	 no_argument,		NULL, 'q' },
	{ "help",	 no_argument,		NULL, 'h' },
	{ "version",	 no_argument,		NULL, 'V' },
	{ NULL,		 0,			NULL, 0 }
};

static const char usage_text[] =
"usage: %s [--stdio] [--workers N] [--max-workers N] [--log-level LEVEL]\n"
"       [-v] [-q]"
" [--max-message BYTES] [--queue-size N] [--page-size N]\n"
"       [--grace-ms MS] [--help] [--version]\n"
"\n"
"An MCP server built with libmcp %s. It speaks JSON-RPC 2.0 as JSON\n"
"lines on stdin and stdout; logs go to stderr.\n"
"\n"
"  --stdio             serve on stdin/stdout (the default)\n"
"  --workers N         worker threads for tool calls (default: %d, cores)\n"
"  --max-workers N     threads the pool may grow to while slow calls hold\n"
"                      every worker (default: %d)\n"
"  --log-level LEVEL   err, warn, notice, info or debug (default: notice;\n"
"                      also MCP_LOG_LEVEL in the environment)\n"
"  -v, -q              one level more, or less, verbose\n"
"  --max-message BYTES largest message accepted (default: %zu)\n"
"  --queue-size N      calls queued before \"server busy\" (default: %d)\n"
"  --page-size N       tools per tools/list page (default: %d)\n"
"  --grace-ms MS       time calls get to finish on SIGTERM (default: %d)\n"
"  --help, --version   print this, or the version, and exit\n";

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

static int
number(const char *prog, const char *opt, const char *arg, long lo, long hi,
    long *out)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s: expected a number from %ld to "
		    "%ld, got \"%s\"\n", prog, opt, lo, hi, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int
mcp_server_main(mcp_server *srv, int argc, char *argv[])
{
	const char	*prog;
	char		 text[2048];
	long		 v;
	int		 ch, level, n, rc;

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
	while ((ch = getopt_long(argc, argv, "vqhV", longopts, NULL)) != -1) {
		v = 0;
		switch (ch) {
		case OPT_STDIO:
			break;
		case OPT_WORKERS:
			if (number(prog, "workers", optarg, 1, 1024, &v) != 0)
				goto usage;
			srv->workers = (int)v;
			break;
		case OPT_MAX_WORKERS:
			if (number(prog, "max-workers", optarg, 1, 4096,
			    &v) != 0)
				goto usage;
			srv->max_workers = (int)v;
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
		case OPT_MAX_MESSAGE:
			if (number(prog, "max-message", optarg, 64, 1L << 30,
			    &v) != 0)
				goto usage;
			srv->max_message = (size_t)v;
			break;
		case OPT_QUEUE_SIZE:
			if (number(prog, "queue-size", optarg, 1, 1L << 24,
			    &v) != 0)
				goto usage;
			srv->queue_size = (int)v;
			break;
		case OPT_PAGE_SIZE:
			if (number(prog, "page-size", optarg, 1, 1L << 20,
			    &v) != 0)
				goto usage;
			srv->page_size = (int)v;
			break;
		case OPT_GRACE_MS:
			if (number(prog, "grace-ms", optarg, 0, 3600000,
			    &v) != 0)
				goto usage;
			srv->grace_ms = (int)v;
			break;
		case 'h':
			n = snprintf(text, sizeof(text), usage_text, prog,
			    MCP_VERSION, srv->workers, srv->max_workers,
			    srv->max_message,
			    srv->queue_size, srv->page_size, srv->grace_ms);
			if (n > 0)
				print_stdout(text, (size_t)n < sizeof(text) ?
				    (size_t)n : sizeof(text) - 1);
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
	rc = mcp_server_listen(srv, "stdio");
	if (rc != MCP_OK)
		return rc;
	if (isatty(STDIN_FILENO))
		mcp_log(MCP_LOG_NOTICE, "%s %s on stdio: type JSON-RPC lines, "
		    "e.g. {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
		    srv->name, srv->version);
	else
		MCP_LOG(MCP_LOG_INFO, "%s %s on stdio, %d workers", srv->name,
		    srv->version, srv->workers);
	return mcp_server_run(srv);

usage:
	fprintf(stderr, "usage: %s [--stdio] [--workers N] [--max-workers N] "
	    "[--log-level LEVEL] [-v] [-q] [--max-message BYTES] "
	    "[--queue-size N] "
	    "[--page-size N] [--grace-ms MS] [--help] [--version]\n", prog);
	return MCP_EUSAGE;
}
