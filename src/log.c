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

#include "mcp-int.h"

atomic_int mcp__log_level = MCP_LOG_NOTICE;
int	 mcp__log_json;		/* --log-format json; set before run */
int	 mcp__log_fd = STDERR_FILENO;
static char	*log_path;	/* --log-file, reopened by SIGHUP */

/* The request being served on this thread: its tags on every line. */
_Thread_local struct log_ctx mcp__lctx;

static const char *const names[] = { "err", "warn", "notice", "info",
    "debug" };

void
mcp__log_set_request(const json_t *id)
{
	mcp__lctx.id = id;
}

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
	dup2(fd, mcp__log_fd);
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

struct line {
	char	 b[4096];
	size_t	 n;
	size_t	 max;	/* room kept for the ending */
};

static void
addn(struct line *l, const char *s, size_t n)
{
	if (n > l->max - l->n)
		n = l->max - l->n;
	memcpy(l->b + l->n, s, n);
	l->n += n;
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
	va_list	 ap;
	int	 r;

	va_start(ap, fmt);
	r = vsnprintf(l->b + l->n, l->max - l->n + 1, fmt, ap);
	va_end(ap);
	if (r > 0)
		l->n += (size_t)r < l->max - l->n ? (size_t)r : l->max - l->n;
}

/*
 * S as the inside of a JSON string, or, in text, as printable bytes:
 * a client chooses tool names, ids and session headers, and none of
 * its bytes is written raw. Invalid UTF-8 becomes '?' in JSON.
 */
static void
addesc(struct line *l, const char *s, size_t n)
{
	char	 e[8];
	size_t	 i;
	int	 utf8 = !mcp__log_json || mcp__utf8_valid(s, n);

	for (i = 0; i < n && l->n < l->max; i++) {
		unsigned char	 c = (unsigned char)s[i];

		if (!mcp__log_json) {
			l->b[l->n++] = isprint(c) || (c & 0x80) ? (char)c :
			    '?';
		} else if (c == '"' || c == '\\') {
			e[0] = '\\';
			e[1] = (char)c;
			addn(l, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(e, sizeof(e), "\\u%04x", c);
			addn(l, e, 6);
		} else if (c >= 0x80 && !utf8) {
			l->b[l->n++] = '?';
		} else
			l->b[l->n++] = (char)c;
	}
}

/* A "key":"value" member, or [key value] in text. */
static void
member(struct line *l, const char *key, const char *v, size_t n)
{
	if (mcp__log_json) {
		addf(l, ",\"%s\":\"", key);
		addesc(l, v, n);
		adds(l, "\"");
	} else {
		addf(l, "[%s ", key);
		addesc(l, v, n);
		adds(l, "] ");
	}
}

static void
fields(struct line *l, const struct log_fields *f)
{
	const char	*sep = mcp__log_json ? "," : " ";
	const char	*q = mcp__log_json ? "\"" : "";

	if (f == NULL)
		return;
	if (f->outcome != NULL)
		addf(l, "%s%soutcome%s%s%s%s%s", sep, q, q, mcp__log_json ?
		    ":" : "=", q, f->outcome, q);
	if (f->duration_ms >= 0)
		addf(l, "%s%sduration_ms%s%s%.3f", sep, q, q, mcp__log_json ?
		    ":" : "=", f->duration_ms);
	if (f->method != NULL) {
		addf(l, "%s%smethod%s%s%s", sep, q, q, mcp__log_json ? ":" :
		    "=", q);
		addesc(l, f->method, strlen(f->method));
		adds(l, q);
	}
	if (f->route != NULL)
		addf(l, "%s%sroute%s%s%s%s%s", sep, q, q, mcp__log_json ?
		    ":" : "=", q, f->route, q);
	if (f->status > 0)
		addf(l, "%s%sstatus%s%s%d", sep, q, q, mcp__log_json ? ":" :
		    "=", f->status);
	if (f->bytes_in >= 0)
		addf(l, "%s%sbytes_in%s%s%lld", sep, q, q, mcp__log_json ?
		    ":" : "=", f->bytes_in);
	if (f->bytes_out >= 0)
		addf(l, "%s%sbytes_out%s%s%lld", sep, q, q, mcp__log_json ?
		    ":" : "=", f->bytes_out);
}

void
mcp__log_fieldsv(int level, const struct log_fields *f, const char *fmt,
    va_list ap)
{
	struct line	 l;
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
	l.n = 0;
	l.max = sizeof(l.b) - 3;	/* "}\n" or "\n", and a NUL */
	r = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (r < 0)
		r = 0;
	if ((size_t)r >= sizeof(msg))
		r = sizeof(msg) - 1;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (mcp__log_json)
		adds(&l, "{\"time\":\"");
	l.n += strftime(l.b + l.n, l.max - l.n, "%Y-%m-%dT%H:%M:%S", &tm);
	if (mcp__log_json)
		addf(&l, ".%03ldZ\",\"level\":\"%s\",\"pid\":%ld,\"msg\":\"",
		    ts.tv_nsec / 1000000, names[level], (long)getpid());
	else
		addf(&l, ".%03ldZ mcp[%ld]: %s: ", ts.tv_nsec / 1000000,
		    (long)getpid(), names[level]);
	if (mcp__log_json) {
		addesc(&l, msg, (size_t)r);
		adds(&l, "\"");
	}
	if (mcp__lctx.id != NULL &&
	    mcp__buf_addid(&id, mcp__lctx.id) == MCP_OK) {
		if (mcp__log_json && id.len <= 64)
			addf(&l, ",\"id\":%.*s", (int)id.len, id.data);
		else
			member(&l, "id", id.data, id.len < 64 ? id.len : 64);
	}
	mcp__buf_free(&id);
	if (mcp__lctx.sid != NULL && mcp__lctx.sid[0] != '\0')
		member(&l, "session", mcp__lctx.sid, strlen(mcp__lctx.sid));
	if (mcp__lctx.rid != NULL && mcp__lctx.rid[0] != '\0')
		member(&l, "request", mcp__lctx.rid, strlen(mcp__lctx.rid));
	if (mcp__lctx.tool != NULL)
		member(&l, "tool", mcp__lctx.tool, strlen(mcp__lctx.tool));
	if (!mcp__log_json)
		addesc(&l, msg, (size_t)r);
	fields(&l, f);
	if (mcp__log_json)
		l.b[l.n++] = '}';
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
