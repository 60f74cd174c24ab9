/*
 * log.c: mcp_log, one line per message on stderr. Any thread: the line is
 * built on the caller's stack and written with a single write(2), so
 * lines from different threads never interleave. The level is checked
 * before any formatting. Nothing here ever writes to stdout, which on the
 * stdio transport carries only MCP messages.
 *
 * A line carries the tags of the request its thread is serving (struct
 * log_ctx: the JSON-RPC id, the session, the HTTP request id, the tool),
 * set by the loop while it handles input and by a worker while it runs
 * a call, so a callback's mcp_log is tagged without asking. Two formats:
 * text, and with --log-format json one JSON object a line. Lines are
 * bounded (4 KiB), and bytes that came from a client are escaped.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

atomic_int mcp__log_level = MCP_LOG_NOTICE;
int	 mcp__log_json;		/* --log-format json; set before run */
int	 mcp__log_fd = STDERR_FILENO;
static char	*log_path;	/* --log-file, reopened by SIGHUP */

/* The request being served on this thread: its tags on every line. */
_Thread_local struct log_ctx mcp__lctx;

static const char *const names[] = { "err", "warn", "notice", "info",
    "debug" };

void
mcp_log_set_level(int level)
{
	if (level < MCP_LOG_ERR)
		level = MCP_LOG_ERR;
	if (level > MCP_LOG_DEBUG)
		level = MCP_LOG_DEBUG;
	atomic_store(&mcp__log_level, level);
}

int
mcp_log_get_level(void)
{
	return atomic_load(&mcp__log_level);
}

int
mcp_log_level_parse(const char *s)
{
	int	 i;

	if (s == NULL)
		return -1;
	if (s[0] >= '0' && s[0] <= '4' && s[1] == '\0')
		return s[0] - '0';
	for (i = 0; i <= MCP_LOG_DEBUG; i++)
		if (strcasecmp(s, names[i]) == 0)
			return i;
	if (strcasecmp(s, "error") == 0)
		return MCP_LOG_ERR;
	if (strcasecmp(s, "warning") == 0)
		return MCP_LOG_WARN;
	return -1;
}

/*
 * --log-file: log lines go to PATH (appended) instead of stderr. Opened
 * now, and again by mcp__log_reopen (SIGHUP, after a rotation): the new
 * file takes the old descriptor's number with dup2, so a line being
 * written on another thread goes to one file or the other, whole.
 */
int
mcp__log_open(const char *path)
{
	char	*p;
	int	 fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0) {
		mcp_log(MCP_LOG_ERR, "log file %s: %s", path, strerror(errno));
		return MCP_ESYS;
	}
	if ((p = strdup(path)) == NULL) {
		close(fd);
		return MCP_ENOMEM;
	}
	free(log_path);
	log_path = p;
	if (mcp__log_fd == STDERR_FILENO) {
		mcp__log_fd = fd;
		return MCP_OK;
	}
	dup2(fd, mcp__log_fd);		/* dup2 clears FD_CLOEXEC */
	fcntl(mcp__log_fd, F_SETFD, FD_CLOEXEC);
	close(fd);
	return MCP_OK;
}

void
mcp__log_reopen(void)
{
	char	*p;

	if (log_path == NULL || (p = strdup(log_path)) == NULL)
		return;
	if (mcp__log_open(p) == MCP_OK)
		MCP_LOG(MCP_LOG_INFO, "log file %s reopened", p);
	free(p);
}

/* ---- one line ----------------------------------------------------------- */

#define LINE_MAX_BYTES	4096

struct line {
	char	 b[LINE_MAX_BYTES];
	size_t	 n;
	size_t	 max;	/* bytes it may hold; the ending is kept apart */
};

/* Appends N bytes only if all of them fit: no escape or UTF-8 sequence
 * is ever cut in two. 0 when they did not fit. */
static int
addn(struct line *l, const char *s, size_t n)
{
	if (n > l->max - l->n)
		return 0;
	memcpy(l->b + l->n, s, n);
	l->n += n;
	return 1;
}

static void
adds(struct line *l, const char *s)
{
	addn(l, s, strlen(s));
}

static void
addf(struct line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
addf(struct line *l, const char *fmt, ...)
{
	char	 tmp[256];
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (r > 0 && (size_t)r < sizeof(tmp))
		addn(l, tmp, (size_t)r);
}

/* The length of the UTF-8 sequence at S (N bytes left), or 0 if none. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	size_t	 len, i;

	len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 :
	    (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (len == 0 || len > n || !mcp__utf8_valid((const char *)s, len))
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/*
 * S as the inside of a JSON string, or, in text, as printable text: a
 * client chooses tool names, ids, methods and session headers, and none
 * of its bytes is written raw. Control characters (C0, DEL and C1) and
 * invalid UTF-8 become \u escapes in JSON and '?' in text; in text, TAG
 * also turns '[', ']' and space to '?', so that a value cannot end its
 * tag. Stops, whole, where the line is full.
 */
static void
addesc(struct line *l, const char *s, size_t n, int tag)
{
	const unsigned char	*u = (const unsigned char *)s;
	char			 e[8];
	size_t			 i, k;
	int			 fit;

	for (i = 0; i < n; i += k) {
		k = utf8_len(u + i, n - i);
		if (k == 0 || (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			/* Not UTF-8, or a C1 control: one byte, escaped. */
			if (k == 0)
				k = 1;
			if (mcp__log_json)
				snprintf(e, sizeof(e), "\\u%04x", k == 1 ?
				    0xfffd : u[i + 1]);
			fit = mcp__log_json ? addn(l, e, 6) : addn(l, "?", 1);
		} else if (k > 1) {
			fit = addn(l, s + i, k);
		} else if (mcp__log_json && (u[i] == '"' || u[i] == '\\')) {
			e[0] = '\\';
			e[1] = s[i];
			fit = addn(l, e, 2);
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			snprintf(e, sizeof(e), "\\u%04x", u[i]);
			fit = mcp__log_json ? addn(l, e, 6) : addn(l, "?", 1);
		} else if (!mcp__log_json && tag && (u[i] == '[' ||
		    u[i] == ']' || u[i] == ' ')) {
			fit = addn(l, "?", 1);
		} else
			fit = addn(l, s + i, 1);
		if (!fit)
			return;
	}
}

/* A "key":"value" member, or [key value] in text. */
static void
member(struct line *l, const char *key, const char *v, size_t n)
{
	size_t	 at = l->n;

	if (mcp__log_json) {
		addf(l, ",\"%s\":\"", key);
		addesc(l, v, n, 1);
		if (!addn(l, "\"", 1))
			l->n = at;	/* no room: the member goes whole */
	} else {
		addf(l, "[%s ", key);
		addesc(l, v, n, 1);
		if (!addn(l, "] ", 2))
			l->n = at;
	}
}

/* One figure: ,"key":value in JSON, " key=value" in text. */
static void
figure(struct line *l, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
figure(struct line *l, const char *key, const char *fmt, ...)
{
	char	 v[128];
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (mcp__log_json)
		addf(l, ",\"%s\":%s", key, v);
	else
		addf(l, " %s=%s", key, v);
}

static void
fields(struct line *l, const struct log_fields *f)
{
	struct line	 m;
	const char	*q = mcp__log_json ? "\"" : "";

	if (f == NULL)
		return;
	if (f->outcome != NULL)
		figure(l, "outcome", "%s%s%s", q, f->outcome, q);
	if (f->duration_ms >= 0)
		figure(l, "duration_ms", "%.3f", f->duration_ms);
	if (f->method != NULL) {
		m.n = 0;
		m.max = 64;
		addesc(&m, f->method, strlen(f->method), 1);
		figure(l, "method", "%s%.*s%s", q, (int)m.n, m.b, q);
	}
	if (f->route != NULL)
		figure(l, "route", "%s%s%s", q, f->route, q);
	if (f->status > 0)
		figure(l, "status", "%d", f->status);
	if (f->bytes_in >= 0)
		figure(l, "bytes_in", "%lld", f->bytes_in);
	if (f->bytes_out >= 0)
		figure(l, "bytes_out", "%lld", f->bytes_out);
}

/*
 * The line is made in three parts: the head (time, level, pid), the
 * tags and figures, and the message last, which alone is cut when the
 * line would pass LINE_MAX_BYTES; what ends the line is kept room for.
 * So a line is always whole: one JSON object, or one line of text.
 */
void
mcp__log_fieldsv(int level, const struct log_fields *f, const char *fmt,
    va_list ap)
{
	struct line	 l, tags, figs;
	char		 msg[1024];
	struct buf	 id = { 0 };
	struct timespec	 ts;
	struct tm	 tm;
	int		 r, saved;
	ssize_t		 w;

	if (level & MCP_LOG_FORCE)
		level &= ~MCP_LOG_FORCE;
	else if (level > atomic_load_explicit(&mcp__log_level,
	    memory_order_relaxed))
		return;
	if (level < MCP_LOG_ERR)
		level = MCP_LOG_ERR;
	if (level > MCP_LOG_DEBUG)
		level = MCP_LOG_DEBUG;
	saved = errno;
	r = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (r < 0)
		r = 0;
	if ((size_t)r >= sizeof(msg))
		r = sizeof(msg) - 1;
	/* The tags of the request this thread serves, and the figures. */
	tags.n = figs.n = 0;
	tags.max = figs.max = 1024;
	if (mcp__lctx.id != NULL &&
	    mcp__buf_addid(&id, mcp__lctx.id) == MCP_OK) {
		if (mcp__log_json && id.len <= 64)
			addf(&tags, ",\"id\":%.*s", (int)id.len, id.data);
		else
			member(&tags, "id", id.data, id.len < 64 ? id.len : 64);
	}
	mcp__buf_free(&id);
	if (mcp__lctx.sid != NULL && mcp__lctx.sid[0] != '\0')
		member(&tags, "session", mcp__lctx.sid, strlen(mcp__lctx.sid));
	if (mcp__lctx.rid != NULL && mcp__lctx.rid[0] != '\0')
		member(&tags, "request", mcp__lctx.rid, strlen(mcp__lctx.rid));
	if (mcp__lctx.tool != NULL)
		member(&tags, "tool", mcp__lctx.tool, strlen(mcp__lctx.tool));
	fields(&figs, f);
	/*
	 * JSON: head, tags, figures, then "msg"; text: head, tags, the
	 * message, then the figures. Only the message is ever cut: room
	 * for what follows it, and for the line's end, is kept.
	 */
	l.n = 0;
	l.max = sizeof(l.b) - 3;	/* "\"}" and "\n" */
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (mcp__log_json)
		adds(&l, "{\"time\":\"");
	l.n += strftime(l.b + l.n, l.max - l.n, "%Y-%m-%dT%H:%M:%S", &tm);
	if (mcp__log_json) {
		addf(&l, ".%03ldZ\",\"level\":\"%s\",\"pid\":%ld", ts.tv_nsec /
		    1000000, names[level], (long)getpid());
		addn(&l, tags.b, tags.n);
		addn(&l, figs.b, figs.n);
		adds(&l, ",\"msg\":\"");
		addesc(&l, msg, (size_t)r, 0);
		l.b[l.n++] = '"';
		l.b[l.n++] = '}';
	} else {
		addf(&l, ".%03ldZ mcp[%ld]: %s: ", ts.tv_nsec / 1000000,
		    (long)getpid(), names[level]);
		addn(&l, tags.b, tags.n);
		l.max -= figs.n;
		addesc(&l, msg, (size_t)r, 0);
		l.max += figs.n;
		addn(&l, figs.b, figs.n);
	}
	l.b[l.n++] = '\n';
	/* A failed log write has nowhere to be reported. */
	w = write(mcp__log_fd, l.b, l.n);
	(void)w;
	errno = saved;
}

void
mcp__log_fields(int level, const struct log_fields *f, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	mcp__log_fieldsv(level, f, fmt, ap);
	va_end(ap);
}

void
mcp_logv(int level, const char *fmt, va_list ap)
{
	mcp__log_fieldsv(level, NULL, fmt, ap);
}

void
mcp_log(int level, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	mcp__log_fieldsv(level, NULL, fmt, ap);
	va_end(ap);
}

/* The MCP logging levels are syslog's, by name. */
static const char *const syslog_names[] = { "emergency", "alert",
    "critical", "error", "warning", "notice", "info", "debug" };

int
mcp__level_syslog(int level)
{
	/* err 3, warn 4, notice 5, info 6, debug 7 */
	if (level < MCP_LOG_ERR)
		level = MCP_LOG_ERR;
	if (level > MCP_LOG_DEBUG)
		level = MCP_LOG_DEBUG;
	return level + 3;
}

const char *
mcp__level_name(int syslog_level)
{
	if (syslog_level < 0 || syslog_level > 7)
		return "info";
	return syslog_names[syslog_level];
}

int
mcp__level_parse(const char *name)
{
	int	 i;

	for (i = 0; name != NULL && i < 8; i++)
		if (strcmp(name, syslog_names[i]) == 0)
			return i;
	return -1;
}
