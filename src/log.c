/*
 * log.c: mcp_log, one line per message on stderr. Any thread: the line is
 * built on the caller's stack and written with a single write(2), so
 * lines from different threads never interleave. The level is checked
 * before any formatting. Nothing here ever writes to stdout, which on the
 * stdio transport carries only MCP messages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "mcp-int.h"

atomic_int mcp__log_level = MCP_LOG_NOTICE;

/* The request being served on this thread, for the [id ...] tag. */
static _Thread_local const json_t *cur_id;

static const char *const names[] = { "err", "warn", "notice", "info",
    "debug" };

void
mcp__log_set_request(const json_t *id)
{
	cur_id = id;
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

void
mcp_logv(int level, const char *fmt, va_list ap)
{
	char		 line[2048];
	struct buf	 id = { 0 };
	struct timespec	 ts;
	struct tm	 tm;
	size_t		 n, i;
	int		 r, saved;
	ssize_t		 w;

	if (level > atomic_load_explicit(&mcp__log_level,
	    memory_order_relaxed))
		return;
	if (level < MCP_LOG_ERR)
		level = MCP_LOG_ERR;
	saved = errno;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	r = snprintf(line + n, sizeof(line) - n, ".%03ldZ mcp[%ld]: %s: ",
	    ts.tv_nsec / 1000000, (long)getpid(), names[level]);
	if (r > 0)
		n += (size_t)r;
	if (cur_id != NULL && mcp__buf_addid(&id, cur_id) == MCP_OK) {
		r = snprintf(line + n, sizeof(line) - n, "[id %.*s] ",
		    (int)(id.len < 64 ? id.len : 64), id.data);
		if (r > 0 && (size_t)r < sizeof(line) - n)
			n += (size_t)r;
	}
	mcp__buf_free(&id);
	if (n < sizeof(line) - 1) {
		r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		if (r > 0)
			n += (size_t)r < sizeof(line) - n ?
			    (size_t)r : sizeof(line) - n - 1;
	}
	/* Clients choose tool names and ids: keep the line one line. */
	for (i = 0; i < n; i++)
		if (!isprint((unsigned char)line[i]) &&
		    !((unsigned char)line[i] & 0x80))
			line[i] = '?';
	line[n++] = '\n';
	/* A failed log write has nowhere to be reported. */
	w = write(STDERR_FILENO, line, n);
	(void)w;
	errno = saved;
}

void
mcp_log(int level, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	mcp_logv(level, fmt, ap);
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
