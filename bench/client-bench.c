/*
 * client-bench.c: libmcp's client side of a benchmark, the counterpart
 * of test/node/bench-client-ts.mjs (the official TypeScript SDK's
 * client) with the same interface and output: connects, then makes N
 * tools/call of "echo" {text:"hi"} keeping C in flight with the
 * asynchronous API on one loop thread (as the SDK client runs on node's
 * one thread), checks every answer's text, and prints one JSON line:
 *
 *   {"transport", "calls", "concurrency", "seconds" (wall time of the
 *    calls), "calls_per_s", "cpu_ms" (user+system CPU of this process
 *    during the calls), "cpu_us_per_call"}
 *
 *   client-bench --transport stdio [--concurrency C] [--calls N] -- CMD...
 *   client-bench --transport http|sse --url URL [--concurrency C] [--calls N]
 *
 * Exits 1 if a call failed or answered wrong, 2 on bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <ev.h>
#include <mcp.h>

static struct ev_loop	*loop;
static mcp_client	*cl;
static long		 total, started, finished, errors;
static const char	*first_error;

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
cpu_ms(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void	 call_one(void);

static void
done_cb(mcp_client *c, int rc, json_t *result, void *udata)
{
	json_t		*item;
	const char	*text;

	(void)c;
	(void)udata;
	finished++;
	item = json_array_get(json_object_get(result, "content"), 0);
	text = json_string_value(json_object_get(item, "text"));
	if (rc != MCP_OK || text == NULL || strcmp(text, "hi") != 0) {
		errors++;
		if (first_error == NULL)
			first_error = rc != MCP_OK ? mcp_strerror(rc) :
			    "wrong answer";
	}
	if (started < total)
		call_one();
	else if (finished == total)
		ev_break(loop, EVBREAK_ALL);
}

static void
call_one(void)
{
	started++;
	if (mcp_client_request_async_new(cl, "tools/call",
	    json_pack("{s:s, s:{s:s}}", "name", "echo", "arguments", "text",
	    "hi"), done_cb, NULL, NULL) != MCP_OK) {
		finished++;
		errors++;
	}
}

static void
usage(const char *msg)
{
	fprintf(stderr, "client-bench: %s\nusage: client-bench --transport "
	    "stdio|http|sse [--concurrency C] [--calls N] (--url URL | -- "
	    "CMD ARGS...)\n", msg);
	exit(2);
}

int
main(int argc, char **argv)
{
	const char	*transport = NULL, *url = NULL;
	char		**cmd = NULL;
	long		 conc = 64, i;
	double		 t0, c0, secs, cpu;
	int		 rc;

	total = 1000;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			cmd = argv + i + 1;
			break;
		}
		if (i + 1 >= argc)
			usage("an option needs a value");
		if (strcmp(argv[i], "--transport") == 0)
			transport = argv[++i];
		else if (strcmp(argv[i], "--url") == 0)
			url = argv[++i];
		else if (strcmp(argv[i], "--concurrency") == 0)
			conc = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--calls") == 0)
			total = strtol(argv[++i], NULL, 10);
		else
			usage("unknown option");
	}
	if (transport == NULL || conc <= 0 || total <= 0)
		usage("--transport, and positive --calls and --concurrency");
	if (strcmp(transport, "stdio") == 0 ? cmd == NULL || cmd[0] == NULL :
	    url == NULL)
		usage("stdio needs -- CMD, http and sse --url");
	loop = ev_loop_new(EVFLAG_AUTO);
	cl = mcp_client_new("client-bench", "1");
	(void)mcp_client_set_loop(cl, loop);
	(void)mcp_client_set_option(cl, "listen", "0");
	if (strcmp(transport, "sse") == 0)
		(void)mcp_client_set_option(cl, "transport", "sse");
	rc = strcmp(transport, "stdio") == 0 ?
	    mcp_client_connect_stdio(cl, cmd, NULL, NULL) :
	    mcp_client_connect_url(cl, url);
	if (rc != MCP_OK) {
		fprintf(stderr, "client-bench: %s\n", mcp_client_error(cl));
		return 1;
	}
	/* Connected once a ping comes back: the clock starts after. */
	rc = mcp_client_request_async_new(cl, "ping", NULL, NULL, NULL, NULL);
	while (mcp_client_protocol(cl) == NULL && rc == MCP_OK &&
	    mcp_client_error(cl) == NULL)
		ev_run(loop, EVRUN_ONCE);
	if (mcp_client_error(cl) != NULL) {
		fprintf(stderr, "client-bench: %s\n", mcp_client_error(cl));
		return 1;
	}
	t0 = now();
	c0 = cpu_ms();
	for (i = 0; i < conc && started < total; i++)
		call_one();
	ev_run(loop, 0);
	secs = now() - t0;
	cpu = cpu_ms() - c0;
	printf("{\"client\":\"libmcp\",\"transport\":\"%s\",\"calls\":%ld,"
	    "\"concurrency\":%ld,\"seconds\":%.4f,\"calls_per_s\":%.1f,"
	    "\"cpu_ms\":%.1f,\"cpu_us_per_call\":%.2f", transport, total,
	    conc, secs, total / secs, cpu, cpu * 1e3 / total);
	if (errors > 0)
		printf(",\"errors\":%ld,\"error\":\"%s\"", errors, first_error);
	printf("}\n");
	fflush(stdout);
	mcp_client_free(cl);
	ev_loop_destroy(loop);
	return errors > 0 ? 1 : 0;
}
