/*
 * metrics.c: the counters behind GET /metrics (--metrics), and their
 * Prometheus text exposition (format 0.0.4).
 *
 * Every counter here is written by the loop thread only, and the scrape
 * runs on the loop thread too: plain integers, no atomics, no locks on
 * the hot path. What the loop does not own is read at scrape time from
 * its owner: the gauges walk the sessions, the pool's figures are read
 * under its lock, the tools under the registry's, the process's from
 * /proc. Workers count nothing. With --metrics off nothing is counted.
 *
 * Cardinality is bounded by what the server registered, never by what a
 * client sends: an unknown method is "other", an unknown tool is not a
 * series, and error codes beyond MAX_CODES pairs fold into code "other".
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/server.h"

static const char *const method_names[MM_N] = {
	"initialize", "ping", "tools/list", "tools/call", "resources/list",
	"resources/templates/list", "resources/read", "resources/subscribe",
	"resources/unsubscribe", "prompts/list", "prompts/get",
	"completion/complete", "logging/setLevel", "other", "invalid"
};

static const char *const outcome_names[MO_N] = {
	"ok", "is_error", "error", "cancelled", "timeout"
};

static const char *const transport_names[MT_N] = {
	"stdio", "sse", "streamable_http"
};

static const char *const reason_names[MR_N] = {
	"closed", "deleted", "expired", "cut", "shutdown"
};

static const char *const limit_names[ML_N] = {
	"per_ip", "total", "max_sessions", "too_large", "draining"
};

static const char *const route_names[HTTP_R_N] = {
	"/mcp", "/sse", "/messages", "/healthz", "/metrics",
	"/.well-known", "other"
};

/* Upper bounds of the call duration buckets, in seconds (+Inf last). */
static const double bounds[MCP_METRIC_BUCKETS - 1] = {
	0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300
};

void
mcp__metrics_init(struct metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->cur = -1;
	m->started = (double)time(NULL);
}

int
mcp__metrics_method(const char *name)
{
	int	 i;

	if (name == NULL)
		return MM_INVALID;
	for (i = 0; i < MM_OTHER; i++)
		if (strcmp(name, method_names[i]) == 0)
			return i;
	return MM_OTHER;
}

/* Counts one answer to a request of METHOD. CODE for MO_ERROR. */
void
mcp__metrics_answer(struct metrics *m, int method, int outcome, int code)
{
	int	 i;

	if (method < 0 || method >= MM_N)
		return;
	m->req[method][outcome]++;
	if (outcome != MO_ERROR)
		return;
	for (i = 0; i < m->ncodes; i++)
		if (m->codes[i].method == method && m->codes[i].code == code)
			break;
	if (i == m->ncodes) {
		if (m->ncodes == MAX_CODES) {
			m->codes_other++;
			return;
		}
		m->codes[i].method = method;
		m->codes[i].code = code;
		m->ncodes++;
	}
	m->codes[i].n++;
}

/* Counts C's end (once: protocol.c): its method, and a tool's own. */
void
mcp__metrics_call(struct mcp_server *srv, struct mcp_call *c, int outcome,
    int code)
{
	static const int kinds[] = { MM_TOOLS_CALL, MM_RESOURCES_READ,
	    MM_PROMPTS_GET, MM_COMPLETE };
	struct tool_stats *ts;
	double		 d;
	int		 i;

	if (!srv->metrics.on || c->kind == CALL_ROOTS)
		return;
	mcp__metrics_answer(&srv->metrics, c->kind == CALL_RELAY ||
	    c->kind == CALL_WAIT || c->kind == CALL_LISTEN ?
	    mcp__metrics_method(c->method) :
	    kinds[c->kind], outcome, code);
	if (c->kind != CALL_TOOL || c->tool == NULL)
		return;
	/* Written once: the tool's other members are read by workers, and
	 * a store on every call would take their cache line from them. */
	if ((ts = c->tool->stats) == NULL) {
		if ((ts = calloc(1, sizeof(*ts))) == NULL)
			return;
		c->tool->stats = ts;
	}
	ts->out[outcome]++;
	d = ev_now(srv->loop) - c->queued_at;
	if (d < 0)
		d = 0;
	for (i = 0; i < MCP_METRIC_BUCKETS - 1 && d > bounds[i]; i++)
		;
	ts->bucket[i]++;
	ts->sum += d;
}

/* ROUTE's name (HTTP_R_*), as counted and logged. */
const char *
mcp__metrics_route_name(int route)
{
	return route >= 0 && route < HTTP_R_N ? route_names[route] : "other";
}

/* Counts a response of STATUS on ROUTE (an HTTP_R_* index). */
void
mcp__metrics_http(struct metrics *m, int route, int status)
{
	int	 i;

	for (i = 0; i < m->nhttp; i++)
		if (m->http[i].route == route && m->http[i].status == status)
			break;
	if (i == m->nhttp) {
		if (m->nhttp == MAX_HTTP)
			return;
		m->http[i].route = (short)route;
		m->http[i].status = (short)status;
		m->nhttp++;
	}
	m->http[i].n++;
}

void
mcp__metrics_session_end(struct session *s)
{
	struct metrics	*m = &s->srv->metrics;

	if (!s->counted)
		return;
	s->counted = 0;
	m->ended[s->transport][s->why]++;
}

void
mcp__metrics_session_open(struct session *s, int transport)
{
	s->transport = transport;
	if (s->counted)
		return;
	s->counted = 1;
	s->srv->metrics.opened[transport]++;
}

/* ---- the exposition ---------------------------------------------------- */

static int	 render_failed;	/* a put() ran out of memory */

static void
put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	if (mcp__buf_reserve(b, 256) != MCP_OK) {
		render_failed = 1;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (mcp__buf_reserve(b, (size_t)n + 1) != MCP_OK) {
			render_failed = 1;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

static void
family(struct buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void
label(struct buf *b, const char *s)
{
	int	 rc = MCP_OK;

	for (; *s != '\0' && rc == MCP_OK; s++) {
		if (*s == '\\' || *s == '"')
			rc = mcp__buf_addc(b, '\\');
		if (*s == '\n')
			rc = mcp__buf_adds(b, "\\n");
		else if (rc == MCP_OK)
			rc = mcp__buf_addc(b, *s);
	}
	if (rc != MCP_OK)
		render_failed = 1;
}

static void
requests(struct buf *b, const struct metrics *m)
{
	int	 i, j;

	family(b, "mcp_requests_total", "counter",
	    "JSON-RPC requests answered, by method and outcome.");
	for (i = 0; i < MM_N; i++)
		for (j = 0; j < MO_N; j++) {
			if (j == MO_ERROR || m->req[i][j] == 0)
				continue;
			put(b, "mcp_requests_total{method=\"%s\",outcome=\"%s\"}"
			    " %llu\n", method_names[i], outcome_names[j],
			    (unsigned long long)m->req[i][j]);
		}
	for (i = 0; i < m->ncodes; i++)
		put(b, "mcp_requests_total{method=\"%s\",outcome=\"error\","
		    "code=\"%d\"} %llu\n", method_names[m->codes[i].method],
		    m->codes[i].code, (unsigned long long)m->codes[i].n);
	if (m->codes_other > 0)
		put(b, "mcp_requests_total{method=\"other\",outcome=\"error\","
		    "code=\"other\"} %llu\n",
		    (unsigned long long)m->codes_other);
}

static void
tool_calls(struct buf *b, struct mcp_server *srv)
{
	struct entry		*e;
	struct tool		*t;
	struct tool_stats	*ts;
	unsigned long long	 cum;
	int			 j;

	family(b, "mcp_tool_calls_total", "counter",
	    "tools/call requests answered, by tool and outcome.");
	pthread_mutex_lock(&srv->reg.lock);
	for (e = srv->reg.tools.head; e != NULL; e = e->next) {
		t = (struct tool *)e;
		if ((ts = t->stats) == NULL)
			continue;
		for (j = 0; j < MO_N; j++) {
			if (ts->out[j] == 0)
				continue;
			put(b, "mcp_tool_calls_total{tool=\"");
			label(b, t->name);
			put(b, "\",outcome=\"%s\"} %llu\n", outcome_names[j],
			    (unsigned long long)ts->out[j]);
		}
	}
	family(b, "mcp_tool_call_duration_seconds", "histogram",
	    "Time from a tools/call being queued to its answer.");
	for (e = srv->reg.tools.head; e != NULL; e = e->next) {
		t = (struct tool *)e;
		if ((ts = t->stats) == NULL)
			continue;
		cum = 0;
		for (j = 0; j < MCP_METRIC_BUCKETS; j++) {
			cum += ts->bucket[j];
			put(b, "mcp_tool_call_duration_seconds_bucket{tool=\"");
			label(b, t->name);
			if (j < MCP_METRIC_BUCKETS - 1)
				put(b, "\",le=\"%g\"} %llu\n", bounds[j], cum);
			else
				put(b, "\",le=\"+Inf\"} %llu\n", cum);
		}
		put(b, "mcp_tool_call_duration_seconds_sum{tool=\"");
		label(b, t->name);
		put(b, "\"} %.6f\n", ts->sum);
		put(b, "mcp_tool_call_duration_seconds_count{tool=\"");
		label(b, t->name);
		put(b, "\"} %llu\n", cum);
	}
	pthread_mutex_unlock(&srv->reg.lock);
}

static void
sessions(struct buf *b, struct mcp_server *srv)
{
	const struct metrics	*m = &srv->metrics;
	const struct session	*s;
	long			 open[MT_N] = { 0 }, inflight = 0;
	int			 i, j;

	for (s = srv->sessions; s != NULL; s = s->snext) {
		if (!s->closed)
			inflight += s->pending - s->nlistens;
		if (s->counted && !s->closed)
			open[s->transport]++;
	}
	family(b, "mcp_sessions", "gauge", "Sessions open, by transport.");
	for (i = 0; i < MT_N; i++)
		put(b, "mcp_sessions{transport=\"%s\"} %ld\n",
		    transport_names[i], open[i]);
	family(b, "mcp_sessions_opened_total", "counter",
	    "Sessions opened, by transport.");
	for (i = 0; i < MT_N; i++)
		put(b, "mcp_sessions_opened_total{transport=\"%s\"} %llu\n",
		    transport_names[i], (unsigned long long)m->opened[i]);
	family(b, "mcp_sessions_ended_total", "counter",
	    "Sessions ended, by transport and reason.");
	for (i = 0; i < MT_N; i++)
		for (j = 0; j < MR_N; j++)
			if (m->ended[i][j] > 0)
				put(b, "mcp_sessions_ended_total{transport="
				    "\"%s\",reason=\"%s\"} %llu\n",
				    transport_names[i], reason_names[j],
				    (unsigned long long)m->ended[i][j]);
	family(b, "mcp_calls_in_flight", "gauge",
	    "Requests received and not yet answered.");
	put(b, "mcp_calls_in_flight %ld\n", inflight);
	family(b, "mcp_listens", "gauge",
	    "subscriptions/listen streams open (2026-07-28).");
	put(b, "mcp_listens %d\n", srv->nlistens);
}

static void
pool(struct buf *b, struct pool *p)
{
	int	 n = 0, idle = 0, queued;

	if (p->started) {
		pthread_mutex_lock(&p->lock);
		n = p->nthreads;
		idle = p->idle;
		pthread_mutex_unlock(&p->lock);
	}
	queued = atomic_load(&p->nqueued) + p->held;
	family(b, "mcp_workers", "gauge", "Worker threads in the pool.");
	put(b, "mcp_workers %d\n", n);
	family(b, "mcp_workers_busy", "gauge",
	    "Worker threads running a callback.");
	put(b, "mcp_workers_busy %d\n", n - idle > 0 ? n - idle : 0);
	family(b, "mcp_workers_max", "gauge",
	    "Worker threads the pool may grow to (--max-workers).");
	put(b, "mcp_workers_max %d\n", p->max);
	family(b, "mcp_queue_depth", "gauge",
	    "Calls queued for a worker, not yet running.");
	put(b, "mcp_queue_depth %d\n", queued);
	family(b, "mcp_queue_capacity", "gauge",
	    "Calls the queue holds before input waits (--queue-size).");
	put(b, "mcp_queue_capacity %d\n", p->max_queued);
}

static void
http(struct buf *b, const struct metrics *m)
{
	int	 i;

	family(b, "mcp_http_responses_total", "counter",
	    "HTTP responses, by route and status.");
	for (i = 0; i < m->nhttp; i++)
		put(b, "mcp_http_responses_total{route=\"%s\",status=\"%d\"} "
		    "%llu\n", mcp__metrics_route_name(m->http[i].route),
		    m->http[i].status, (unsigned long long)m->http[i].n);
	family(b, "mcp_http_request_body_bytes_total", "counter",
	    "Bytes of HTTP request bodies received.");
	put(b, "mcp_http_request_body_bytes_total %llu\n",
	    (unsigned long long)m->body_in);
	family(b, "mcp_http_response_body_bytes_total", "counter",
	    "Bytes of HTTP response bodies sent, streams included.");
	put(b, "mcp_http_response_body_bytes_total %llu\n",
	    (unsigned long long)m->body_out);
	family(b, "mcp_http_refused_total", "counter",
	    "Connections or requests refused, by the limit that refused "
	    "them.");
	for (i = 0; i < ML_N; i++)
		put(b, "mcp_http_refused_total{limit=\"%s\"} %llu\n",
		    limit_names[i], (unsigned long long)m->refused[i]);
	family(b, "mcp_http_slow_closed_total", "counter",
	    "Connections closed for sending too slowly or idling "
	    "(--request-timeout, --idle-timeout).");
	put(b, "mcp_http_slow_closed_total %llu\n",
	    (unsigned long long)m->slow);
}

static long
count_fds(void)
{
	DIR		*d;
	struct dirent	*e;
	long		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* not the one reading the directory */
}

static void
process(struct buf *b, const struct metrics *m)
{
	FILE	*f;
	long	 pages = 0, rss = 0;

	if ((f = fopen("/proc/self/statm", "r")) != NULL) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	family(b, "process_resident_memory_bytes", "gauge",
	    "Resident memory size in bytes.");
	put(b, "process_resident_memory_bytes %ld\n",
	    rss * sysconf(_SC_PAGESIZE));
	family(b, "process_open_fds", "gauge",
	    "Open file descriptors.");
	put(b, "process_open_fds %ld\n", count_fds());
	family(b, "process_start_time_seconds", "gauge",
	    "Start time of the process since the epoch, in seconds.");
	put(b, "process_start_time_seconds %.0f\n", m->started);
	family(b, "mcp_uptime_seconds", "gauge",
	    "Seconds since the server started.");
	put(b, "mcp_uptime_seconds %.0f\n", (double)time(NULL) - m->started);
}

int
mcp__metrics_render(struct mcp_server *srv, struct buf *b)
{
	render_failed = 0;
	requests(b, &srv->metrics);
	tool_calls(b, srv);
	sessions(b, srv);
	pool(b, &srv->pool);
	http(b, &srv->metrics);
	process(b, &srv->metrics);
	/* A page with lines missing is no page: 500, not 200. */
	return b->data != NULL && !render_failed ? MCP_OK : MCP_ENOMEM;
}
