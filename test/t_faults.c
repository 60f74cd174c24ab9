/*
 * t_faults.c: fault injection, the way SQLite tests out-of-memory. The
 * library's allocations (malloc, calloc, realloc, strdup, strndup, and
 * jansson's through json_set_alloc_funcs), its read and write calls and
 * its MHD_queue_response calls go through the wrappers below (ld --wrap,
 * see the Makefile's t_faults rule), which fail on demand. The server is
 * the real one, run in this thread a loop step at a time (driver.h), so
 * a fault is armed exactly around one request:
 *
 * - every allocation on a request's path fails in turn (the first, then
 *   the second...), for each kind of request, on stdio and over HTTP;
 *   each time the request is answered (a result, or an error with its
 *   id) or dropped, the server answers the next request, and once the
 *   run is over every allocation the library made has been freed;
 * - the stdio pipes give short writes, EAGAIN and EINTR, and short and
 *   interrupted reads, under 300 pipelined calls: every answer arrives
 *   whole;
 * - MHD_queue_response fails for a new /sse and /mcp stream while other
 *   streams are open: those still end, and the server still stops.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "main/main.h"
#include "transport/http.h"
#include "driver.h"
#include "tap.h"
#include "tools.h"

/* ---- the wrappers ----------------------------------------------------- */

void	*__real_malloc(size_t);
void	*__real_calloc(size_t, size_t);
void	*__real_realloc(void *, size_t);
void	 __real_free(void *);
ssize_t	 __real_read(int, void *, size_t);
ssize_t	 __real_write(int, const void *, size_t);
enum MHD_Result __real_MHD_queue_response(struct MHD_Connection *,
	    unsigned int, struct MHD_Response *);

static atomic_long	 live;		/* allocations not freed yet */
static atomic_int	 armed;		/* counting toward fail_at */
static atomic_long	 nallocs;	/* counted since armed */
static atomic_long	 fail_at;	/* this one fails (1-based) */
static atomic_int	 fired;		/* ... and it did */
static atomic_int	 queue_fail;	/* MHD_queue_response calls to fail */

/* Is this allocation the one to fail? */
static int
inject(void)
{
	if (!atomic_load(&armed))
		return 0;
	if (atomic_fetch_add(&nallocs, 1) + 1 != atomic_load(&fail_at))
		return 0;
	atomic_store(&fired, 1);
	return 1;
}

void *
__wrap_malloc(size_t n)
{
	void	*p;

	if (inject()) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_malloc(n);
	if (p != NULL)
		atomic_fetch_add(&live, 1);
	return p;
}

void *
__wrap_calloc(size_t n, size_t m)
{
	void	*p;

	if (inject()) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_calloc(n, m);
	if (p != NULL)
		atomic_fetch_add(&live, 1);
	return p;
}

void *
__wrap_realloc(void *old, size_t n)
{
	void	*p;

	if (inject()) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_realloc(old, n);
	if (p != NULL && old == NULL)
		atomic_fetch_add(&live, 1);
	return p;
}

void
__wrap_free(void *p)
{
	if (p != NULL)
		atomic_fetch_sub(&live, 1);
	__real_free(p);
}

char *
__wrap_strdup(const char *s)
{
	size_t	 n = strlen(s) + 1;
	char	*p = __wrap_malloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

char *
__wrap_strndup(const char *s, size_t max)
{
	size_t	 n = strnlen(s, max);
	char	*p = __wrap_malloc(n + 1);

	if (p != NULL) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/*
 * Short I/O on one fd each way: every call takes the next step of a
 * pattern (EINTR, EAGAIN, one byte, seven bytes, as much as asked).
 */
static int	 io_rfd = -1, io_wfd = -1;
static unsigned	 io_rstep, io_wstep;

static ssize_t
io_fault(unsigned *step, size_t *n)
{
	switch ((*step)++ % 5) {
	case 0:
		errno = EINTR;
		return -1;
	case 1:
		errno = EAGAIN;
		return -1;
	case 2:
		*n = *n < 1 ? *n : 1;
		break;
	case 3:
		*n = *n < 7 ? *n : 7;
		break;
	}
	return 0;
}

ssize_t
__wrap_read(int fd, void *buf, size_t n)
{
	if (fd == io_rfd && n > 0 && io_fault(&io_rstep, &n) < 0)
		return -1;
	return __real_read(fd, buf, n);
}

ssize_t
__wrap_write(int fd, const void *buf, size_t n)
{
	if (fd == io_wfd && n > 0 && io_fault(&io_wstep, &n) < 0)
		return -1;
	return __real_write(fd, buf, n);
}

enum MHD_Result
__wrap_MHD_queue_response(struct MHD_Connection *c, unsigned int status,
    struct MHD_Response *r)
{
	if (atomic_load(&queue_fail) > 0) {
		atomic_fetch_sub(&queue_fail, 1);
		return MHD_NO;
	}
	return __real_MHD_queue_response(c, status, r);
}

static void
arm(long n)
{
	atomic_store(&nallocs, 0);
	atomic_store(&fail_at, n);
	atomic_store(&fired, 0);
	atomic_store(&armed, 1);
}

static void
disarm(void)
{
	atomic_store(&armed, 0);
}

/* jansson's allocations are the library's too. */
static void *
j_malloc(size_t n)
{
	return __wrap_malloc(n);
}

static void
j_free(void *p)
{
	__wrap_free(p);
}

/* ---- reading the answers ------------------------------------------------ */

/* Does the N bytes at P hold the M bytes at S? */
static int
has(const char *p, size_t n, const char *s, size_t m)
{
	size_t	 i;

	for (i = 0; i + m <= n; i++)
		if (memcmp(p + i, s, m) == 0)
			return 1;
	return 0;
}

/*
 * The line of the drv's output that answers ID (its JSON, as the server
 * writes ids), from offset FROM; NULL if none yet. *BAD is set when a
 * line is not JSON-RPC.
 */
static const char *
answer_of(struct drv *d, size_t from, const char *id, size_t *len, int *bad)
{
	char		 pat[128];
	const char	*p = d->out + from, *end = d->out + d->outlen, *nl;
	struct json_perr e;
	json_t		*v;

	snprintf(pat, sizeof(pat), "\"id\":%s,", id);
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		v = mcp__json_parse(p, (size_t)(nl - p), &e);
		if (v == NULL || !json_is_object(v)) {
			if (bad != NULL && !*bad)
				diag("not JSON-RPC: %.*s", (int)(nl - p > 300 ?
				    300 : nl - p), p);
			if (bad != NULL)
				*bad = 1;
		} else if (has(p, (size_t)(nl - p), pat, strlen(pat)) &&
		    json_object_get(v, "method") == NULL) {
			json_decref(v);
			*len = (size_t)(nl - p);
			return p;
		}
		json_decref(v);
		p = nl + 1;
	}
	return NULL;
}

struct want {
	size_t		 from;
	const char	*id;
};

static int
answered(struct drv *d, const void *arg)
{
	const struct want *w = arg;
	size_t		 n;

	return answer_of(d, w->from, w->id, &n, NULL) != NULL;
}

/* Answered, or dropped: nothing owed, nothing left to write, twice. */
static int
settled(struct drv *d, const void *arg)
{
	static int	 idle;

	if (answered(d, arg)) {
		idle = 0;
		return 1;
	}
	idle = mcp__stdio_idle(mcp__host(d->srv)->stdio) ? idle + 1 : 0;
	if (idle < 3)
		return 0;
	idle = 0;
	return 1;
}

/* Is the answer at P (N bytes) a result, not an error? */
static int
is_result(const char *p, size_t n)
{
	return has(p, n, "\"result\":", 9) &&
	    !has(p, n, "\"isError\":true", 14);
}

/* ---- every allocation of a request's path fails in turn ------------------ */

struct sreq {
	const char	*what;
	const char	*line;		/* the request, without its newline */
	const char	*id;		/* its id, as the answer writes it */
	int		 succeeds;	/* without faults: a result */
};

static const struct sreq reqs[] = {
	{ "tools/call echo", "{\"jsonrpc\":\"2.0\",\"id\":\"e\",\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":"
	    "{\"text\":\"a\\u0000b\"}}}", "\"e\"", 1 },
	{ "tools/call of every block", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"kinds\"}}", "2", 1 },
	{ "tools/call with progress and a log", "{\"jsonrpc\":\"2.0\",\"id\":3,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"notes\","
	    "\"_meta\":{\"progressToken\":\"t\"}}}", "3", 1 },
	{ "tools/call with an output schema", "{\"jsonrpc\":\"2.0\",\"id\":4,"
	    "\"method\":\"tools/call\",\"params\":{\"name\":\"structured\"}}",
	    "4", 1 },
	{ "resources/read of a template", "{\"jsonrpc\":\"2.0\",\"id\":5,"
	    "\"method\":\"resources/read\",\"params\":{\"uri\":\"t://x/J%C3%B6\"}}",
	    "5", 1 },
	{ "prompts/get", "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":"
	    "\"prompts/get\",\"params\":{\"name\":\"p\",\"arguments\":{\"a\":"
	    "\"b\"}}}", "6", 1 },
	{ "completion/complete", "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	    "\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
	    "\"name\":\"p\"},\"argument\":{\"name\":\"a\",\"value\":\"x\"}}}",
	    "7", 1 },
	{ "tools/list", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}",
	    "8", 1 },
	{ "resources/subscribe", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":"
	    "\"resources/subscribe\",\"params\":{\"uri\":\"t://r\"}}", "9", 1 },
	{ "an unknown tool", "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":"
	    "\"tools/call\",\"params\":{\"name\":\"nope\"}}", "10", 0 },
	{ "a refused message (a NUL in a key)", "{\"jsonrpc\":\"2.0\",\"id\":11,"
	    "\"method\":\"ping\",\"params\":{\"a\\u0000\":1}}", "11", 0 },
	{ "an id written as a real", "{\"jsonrpc\":\"2.0\",\"id\":12.0,"
	    "\"method\":\"ping\"}", "12.0", 1 },
};

/* Lines of the big message: over --max-message (2048), its id last. */
static char	 big[4096];

static int
stdio_allocs(mcp_server *srv, const struct sreq *r, long *runs)
{
	struct drv	 d;
	struct want	 w;
	char		 line[8192], alive[128], aid[64];
	const char	*a;
	size_t		 n;
	long		 k;
	int		 good = 1, bad = 0, last_ok = 0, errs = 0, drops = 0;

	if (drv_start(&d, srv, 1) != MCP_OK) {
		drv_finish(&d, 2);
		return 0;
	}
	drv_writes(&d, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"t_faults\",\"version\":\"1\"}}}\n"
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
	w.from = 0;
	w.id = "0";
	drv_until(&d, answered, &w, 5);
	for (k = 1; k < 5000; k++) {
		w.from = d.outlen;
		w.id = r->id;
		snprintf(line, sizeof(line), "%s\n", r->line);
		arm(k);
		drv_writes(&d, line);
		drv_until(&d, settled, &w, 1.5);
		disarm();
		a = answer_of(&d, w.from, r->id, &n, &bad);
		if (a != NULL && !is_result(a, n))
			errs++;
		else if (a == NULL)
			drops++;
		/* The server lives on: the next request is answered. */
		snprintf(aid, sizeof(aid), "\"alive%ld\"", k);
		snprintf(alive, sizeof(alive), "{\"jsonrpc\":\"2.0\",\"id\":%s,"
		    "\"method\":\"ping\"}\n", aid);
		w.from = d.outlen;
		w.id = aid;
		drv_writes(&d, alive);
		if (!drv_until(&d, answered, &w, 3)) {
			diag("%s: allocation %ld failed: the server no longer "
			    "answers", r->what, k);
			good = 0;
			break;
		}
		if (!atomic_load(&fired)) {
			/* Fewer than K allocations: every one has failed. */
			last_ok = a != NULL && is_result(a, n) == r->succeeds;
			break;
		}
	}
	*runs = k;
	if (drv_finish(&d, 5) != 0) {
		diag("%s: the server did not stop at EOF", r->what);
		good = 0;
	}
	if (bad) {
		diag("%s: a line that is not JSON-RPC came out", r->what);
		good = 0;
	}
	if (!last_ok)
		diag("%s: without a fault, the answer is wrong: %.*s", r->what,
		    (int)(d.outlen > 300 ? 300 : d.outlen),
		    d.outlen > 300 ? d.out + d.outlen - 300 : d.out);
	diag("%s: %ld allocations on its path; with one failing: %d "
	    "answered with an error, %d dropped", r->what, k - 1, errs, drops);
	drv_free(&d);
	return good && last_ok;
}

/* ---- short reads and writes on the pipes --------------------------------- */

static int
nth_echo(struct drv *d, const void *arg)
{
	const int	*n = arg;
	char		 id[32];
	size_t		 len;

	snprintf(id, sizeof(id), "%d", *n - 1);
	return answer_of(d, 0, id, &len, NULL) != NULL;
}

static void
short_io(mcp_server *srv)
{
	struct drv	 d;
	char		 line[4096], text[1600], id[32];
	const char	*a;
	size_t		 n;
	int		 i, total = 300, whole = 0, bad = 0;

	if (drv_start(&d, srv, 1) != MCP_OK) {
		ok(0, "short I/O: the server starts");
		drv_finish(&d, 2);
		return;
	}
	io_rfd = d.srv_in;
	io_wfd = d.srv_out;
	drv_writes(&d, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
	    "\"clientInfo\":{\"name\":\"t_faults\",\"version\":\"1\"}}}\n");
	for (i = 0; i < total; i++) {
		memset(text, 'a' + i % 26, sizeof(text));
		text[i * 5 % 1500 + 1] = '\0';
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,"
		    "\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
		    "\"arguments\":{\"text\":\"%s\"}}}\n", i, text);
		drv_writes(&d, line);
	}
	drv_until(&d, nth_echo, &total, 20);
	for (i = 0; i < total; i++) {
		memset(text, 'a' + i % 26, sizeof(text));
		text[i * 5 % 1500 + 1] = '\0';
		snprintf(id, sizeof(id), "%d", i);
		a = answer_of(&d, 0, id, &n, &bad);
		snprintf(line, sizeof(line), "\"text\":\"%s\"", text);
		if (a != NULL && has(a, n, line, strlen(line)))
			whole++;
	}
	ok(whole == total && !bad, "short reads and writes, EAGAIN and EINTR on "
	    "both pipes: %d of %d answers arrive whole", whole, total);
	ok(io_rstep >= 10 && io_wstep >= 10, "the faults were hit (%u reads, "
	    "%u writes)", io_rstep, io_wstep);
	io_rfd = io_wfd = -1;
	ok(drv_finish(&d, 5) == 0, "short I/O: the server stops at EOF");
	drv_free(&d);
}

/* ---- HTTP ---------------------------------------------------------------- */

/* One HTTP exchange on a new connection (Connection: close): the whole
 * response read until the server closes, stepping the server meanwhile. */
static int
exchange(struct drv *d, const char *req, char *resp, size_t cap,
    double secs)
{
	struct sockaddr_in	 sa;
	size_t			 got = 0, off = 0, len = strlen(req);
	double			 until = drv_now() + secs;
	ssize_t			 k;
	int			 fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)mcp__host(d->srv)->http->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	resp[0] = '\0';
	while (drv_now() < until) {
		drv_step(d);
		if (off < len && (k = send(fd, req + off, len - off,
		    MSG_NOSIGNAL)) > 0)
			off += (size_t)k;
		k = recv(fd, resp + got, cap - 1 - got, 0);
		if (k > 0) {
			got += (size_t)k;
			resp[got] = '\0';
		} else if (k == 0 || (k < 0 && errno != EAGAIN &&
		    errno != EINPROGRESS && errno != ENOTCONN))
			break;
	}
	close(fd);
	return (int)got;
}

static char	 sid[64];

static const char init_body[] = "{\"jsonrpc\":\"2.0\",\"id\":%ld,"
    "\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
    "\"version\":\"1\"}}}";


/* A POST of BODY to PATH, with the session's header when SESSION. */
static void
post_text(char *out, size_t cap, const char *path, const char *body,
    int session)
{
	session = session && sid[0] != '\0';
	snprintf(out, cap, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Connection: close\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "%s%s%sContent-Length: %zu\r\n\r\n%s", path,
	    session ? "Mcp-Session-Id: " : "", session ? sid : "",
	    session ? "\r\n" : "", strlen(body), body);
}

/* initialize and notifications/initialized: the session id in SID. */
static void
open_session(struct drv *d)
{
	char		 req[2048], body[1024], resp[8192];
	const char	*p;

	sid[0] = '\0';
	snprintf(body, sizeof(body), init_body, 0L);
	post_text(req, sizeof(req), "/mcp", body, 0);
	exchange(d, req, resp, sizeof(resp), 3);
	p = strstr(resp, "Mcp-Session-Id: ");
	if (p != NULL)
		sscanf(p + 16, "%32[0-9a-f]", sid);
	post_text(req, sizeof(req), "/mcp", "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/initialized\"}", 1);
	exchange(d, req, resp, sizeof(resp), 3);
}

static int
status_of(const char *resp)
{
	int	 st;

	return sscanf(resp, "HTTP/1.1 %d", &st) == 1 ? st : 0;
}

struct hreq {
	const char	*what;
	const char	*path;
	const char	*body;		/* NULL: a GET of PATH; %ld: an id */
	int		 session;	/* with the session's header */
	const char	*want;		/* in a good answer */
};

static const struct hreq hreqs[] = {
	{ "POST /mcp tools/call, answered whole", "/mcp",
	    "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}}",
	    1, "\"text\":\"hi\"" },
	{ "POST /mcp tools/call, a live stream", "/mcp",
	    "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"sleep\",\"arguments\":{\"ms\":300}}}",
	    1, "slept" },
	{ "POST /mcp initialize (a new session)", "/mcp", init_body, 0,
	    "Mcp-Session-Id" },
	{ "GET /sse", "/sse", NULL, 0, "event: endpoint" },
};

static int
http_allocs(mcp_server *srv, const struct hreq *r, long *runs)
{
	struct drv	 d;
	char		 req[4096], resp[65536], body[1024];
	long		 k;
	int		 good = 1, last_ok = 0, st, codes = 0, cut = 0;

	if (drv_start(&d, srv, 0) != MCP_OK) {
		drv_finish(&d, 2);
		return 0;
	}
	open_session(&d);
	for (k = 1; k < 5000; k++) {
		if (r->body != NULL) {
			snprintf(body, sizeof(body), r->body, k);
			post_text(req, sizeof(req), r->path, body, r->session);
		} else
			snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: "
			    "127.0.0.1\r\nAccept: text/event-stream\r\n\r\n",
			    r->path);
		arm(k);
		/* A stream does not end: read it for 0.5 s. */
		exchange(&d, req, resp, sizeof(resp), r->body != NULL ? 3 : 0.5);
		disarm();
		st = status_of(resp);
		if (st == 0)
			cut++;
		else
			codes++;
		/* The server lives on. */
		post_text(req, sizeof(req), "/mcp", "{\"jsonrpc\":\"2.0\",\"id\":"
		    "\"alive\",\"method\":\"ping\"}", 1);
		exchange(&d, req, resp + 32768, sizeof(resp) - 32768, 3);
		if (status_of(resp + 32768) != 200) {
			diag("%s: allocation %ld failed: then a ping got %.80s",
			    r->what, k, resp + 32768);
			good = 0;
			break;
		}
		if (!atomic_load(&fired)) {
			last_ok = strstr(resp, r->want) != NULL;
			break;
		}
	}
	*runs = k;
	if (drv_finish(&d, 8) != 0) {
		diag("%s: the server did not stop", r->what);
		good = 0;
	}
	diag("%s: %ld allocations on its path; with one failing: %d HTTP "
	    "answers, %d connections closed", r->what, k - 1, codes, cut);
	if (!last_ok)
		diag("%s: without a fault: %.200s", r->what, resp);
	drv_free(&d);
	return good && last_ok;
}

/* A new stream whose response cannot be queued, while others are open. */
static void
queue_failures(mcp_server *srv)
{
	struct drv	 d;
	struct http	*h;
	char		 req[1024], resp[8192];
	double		 t0;
	int		 fd_a, st;
	struct sockaddr_in sa;
	ssize_t		 k;

	if (drv_start(&d, srv, 0) != MCP_OK) {
		ok(0, "queue failures: the server starts");
		drv_finish(&d, 2);
		return;
	}
	h = mcp__host(d.srv)->http;
	/* Stream A stays open on its own connection. */
	fd_a = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)h->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	connect(fd_a, (struct sockaddr *)&sa, sizeof(sa));
	snprintf(req, sizeof(req), "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Accept: text/event-stream\r\n\r\n");
	t0 = drv_now();
	while (drv_now() - t0 < 1) {
		drv_step(&d);
		send(fd_a, req, strlen(req), MSG_NOSIGNAL);
		break;
	}
	while (drv_now() - t0 < 2 && h->nstreams < 1)
		drv_step(&d);
	ok(h->nstreams == 1, "queue failures: stream A is open");
	/* B and C: their responses fail to queue. */
	atomic_store(&queue_fail, 1);
	exchange(&d, req, resp, sizeof(resp), 0.5);
	st = status_of(resp);
	ok(st == 0 && atomic_load(&queue_fail) == 0 &&
	    h->nstreams == 1, "GET /sse whose response fails to queue: "
	    "closed, and the list of streams still holds A alone (%d)",
	    h->nstreams);
	open_session(&d);
	snprintf(req, sizeof(req), "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n", sid);
	atomic_store(&queue_fail, 1);
	exchange(&d, req, resp, sizeof(resp), 0.5);
	ok(status_of(resp) == 0 && h->nsconns == 0,
	    "GET /mcp whose response fails to queue: closed, no stream left "
	    "behind (%d)", h->nsconns);
	exchange(&d, req, resp, sizeof(resp), 0.3);
	ok(status_of(resp) == 200, "then the same GET /mcp works: %d (not 409)",
	    status_of(resp));
	/* The server stops, and stream A ends. */
	t0 = drv_now();
	ok(drv_finish(&d, 8) == 0 && drv_now() - t0 < 6,
	    "the server still stops with A open (%.1f s)", drv_now() - t0);
	k = recv(fd_a, resp, sizeof(resp), 0);
	(void)k;
	close(fd_a);
	drv_free(&d);
}

int
main(void)
{
	mcp_server	*srv;
	long		 before, runs, total = 0;
	size_t		 i;
	int		 n, good;

	/* First of all: every jansson value from here on is counted. */
	json_set_alloc_funcs(j_malloc, j_free);
	mcp_log_set_level(MCP_LOG_ERR);
	before = atomic_load(&live);
	srv = tools_server();
	n = snprintf(big, sizeof(big), "{\"jsonrpc\":\"2.0\",\"method\":\"ping\","
	    "\"params\":{\"pad\":\"");
	memset(big + n, 'p', 3000);
	snprintf(big + n + 3000, sizeof(big) - n - 3000, "\"},\"id\":\"big\"}");

	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		good = stdio_allocs(srv, &reqs[i], &runs);
		ok(good, "stdio, %s: each allocation on its path failed in "
		    "turn (%ld runs): always an answer or a drop, the server "
		    "alive after each", reqs[i].what, runs);
		total += runs;
	}
	{
		struct sreq over = { "a line over --max-message", big,
		    "\"big\"", 0 };

		good = stdio_allocs(srv, &over, &runs);
		ok(good, "stdio, %s: each allocation failed in turn (%ld runs)",
		    over.what, runs);
		total += runs;
	}
	short_io(srv);
	mcp_server_free(srv);
	ok(atomic_load(&live) == before, "stdio: every allocation the library "
	    "made was freed (%ld left)", atomic_load(&live) - before);

	/* HTTP: MHD frees some of our buffers itself, so no count there;
	 * the sanitizer build checks the leaks (make check SANITIZE=1). */
	srv = tools_server();
	mcp_server_set_option(srv, "http", "127.0.0.1:0");
	mcp_server_set_option(srv, "grace-ms", "2000");
	for (i = 0; i < sizeof(hreqs) / sizeof(hreqs[0]); i++) {
		good = http_allocs(srv, &hreqs[i], &runs);
		ok(good, "HTTP, %s: each allocation on its path failed in turn "
		    "(%ld runs): an answer or a closed connection, the server "
		    "alive after each", hreqs[i].what, runs);
		total += runs;
	}
	queue_failures(srv);
	mcp_server_free(srv);
	diag("%ld runs in all", total);
	return tap_done();
}
