/*
 * options.c: mcp_server_set_option, the one place where every tunable
 * that has a long command-line flag can also be set by name, so the
 * command line (cli.c) and programs share one parser. Setup thread,
 * before mcp_server_run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main/main.h"

static int
num(const char *name, const char *v, long lo, long hi, long *out)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || n < lo || n > hi) {
		mcp_log(MCP_LOG_ERR, "option %s: expected a number from %ld "
		    "to %ld, got \"%s\"", name, lo, hi, v);
		return MCP_EINVAL;
	}
	*out = n;
	return MCP_OK;
}

static int
add_to(char ***list, int *n, const char *v)
{
	char	**p, *s;

	s = strdup(v);
	p = realloc(*list, (size_t)(*n + 1) * sizeof(**list));
	if (s == NULL || p == NULL) {
		free(s);
		if (p != NULL)
			*list = p;
		return MCP_ENOMEM;
	}
	p[(*n)++] = s;
	*list = p;
	return MCP_OK;
}

/* The first line of FILE, without surrounding white space; WHAT names
 * the file in the log. */
static int
read_secret(const char *what, const char *file, char **out)
{
	FILE	*f;
	char	 line[4096], *p, *e;

	f = fopen(file, "r");
	if (f == NULL) {
		mcp_log(MCP_LOG_ERR, "%s %s: %s", what, file,
		    strerror(errno));
		return MCP_ESYS;
	}
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL) {
		mcp_log(MCP_LOG_ERR, "%s %s is empty", what, file);
		return MCP_EINVAL;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strlen(p);
	while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' ||
	    e[-1] == '\t'))
		*--e = '\0';
	if (*p == '\0') {
		mcp_log(MCP_LOG_ERR, "%s %s is empty", what, file);
		return MCP_EINVAL;
	}
	free(*out);
	*out = strdup(p);
	return *out == NULL ? MCP_ENOMEM : MCP_OK;
}

static int
read_token(const char *file, char **out)
{
	return read_secret("auth token file", file, out);
}

/* Wipes and frees a secret. */
static void
free_secret(char *p)
{
	volatile char	*z = p;

	if (p == NULL)
		return;
	while (*z != '\0')
		*z++ = '\0';
	free(p);
}

/* SIGHUP: the token file again. A bad read keeps the token in use. */
int
mcp__reload_token(struct http_conf *c)
{
	char	*tok = NULL, *old;
	int	 rc;

	rc = read_token(c->auth_token_file, &tok);
	if (rc != MCP_OK) {
		mcp_log(MCP_LOG_WARN, "SIGHUP: keeping the auth token in use");
		return rc;
	}
	old = c->auth_token;
	c->auth_token = tok;
	if (old != NULL) {
		volatile char	*z = old;

		while (*z != '\0')
			*z++ = '\0';
	}
	free(old);
	return MCP_OK;
}

/*
 * --state-key-file: the key of MRTR's requestState (server/mrtr.c) is
 * the SHA-256 of FILE's first line, which every instance behind one
 * balancer shares; 16 bytes at least, so that it is no password.
 */
static int
read_state_key(mcp_server *srv, const char *file)
{
	char	*p = NULL;
	int	 rc;

	rc = read_secret("state key file", file, &p);
	if (rc != MCP_OK)
		return rc;
	if (strlen(p) < 16) {
		mcp_log(MCP_LOG_ERR, "state key file %s: the key must have 16 "
		    "bytes at least (e.g. openssl rand -hex 32)", file);
		free_secret(p);
		return MCP_EINVAL;
	}
	mcp__sha256(p, strlen(p), srv->state_key);
	srv->state_key_set = 1;
	free_secret(p);
	return MCP_OK;
}

static int
set_str(char **dst, const char *value)
{
	char	*p;

	if ((p = strdup(value)) == NULL)
		return MCP_ENOMEM;
	free(*dst);
	*dst = p;
	return MCP_OK;
}

/*
 * "read write": the scopes a 401 challenge names and the metadata lists,
 * space-separated as in RFC 6749. Each is checked to be a scope-token
 * (printable ASCII but space, '"' and '\\'), since it goes into a
 * header.
 */
static int
set_scopes(struct http_conf *c, const char *value)
{
	const char	*p;
	char		*norm, *q;

	norm = malloc(strlen(value) + 1);
	if (norm == NULL)
		return MCP_ENOMEM;
	q = norm;
	for (p = value; *p != '\0'; p++) {
		if (*p == ' ') {
			if (q > norm && q[-1] != ' ')
				*q++ = ' ';
			continue;
		}
		if (*p < 0x21 || *p > 0x7e || *p == '"' || *p == '\\') {
			mcp_log(MCP_LOG_ERR, "option auth-scopes: a scope may "
			    "not hold \"%c\" (RFC 6749 scope-token)", *p);
			free(norm);
			return MCP_EINVAL;
		}
		*q++ = *p;
	}
	while (q > norm && q[-1] == ' ')
		q--;
	*q = '\0';
	free(c->auth_scopes);
	c->auth_scopes = norm[0] != '\0' ? norm : NULL;
	if (c->auth_scopes == NULL)
		free(norm);
	return MCP_OK;
}

static int
set_option(mcp_server *srv, const char *name, const char *value)
{
	struct host		*host;
	struct http_conf	*c;
	char			*p;
	long			 v;
	int			 rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (name == NULL || value == NULL)
		return MCP_EINVAL;
	if (srv->running)
		return MCP_ESTATE;
	host = mcp__host(srv);
	c = &host->hconf;
#define NUM(opt, lo, hi, dst) \
	if (strcmp(name, opt) == 0) { \
		rc = num(name, value, lo, hi, &v); \
		if (rc == MCP_OK) \
			dst = v; \
		return rc; \
	}
	NUM("workers", 1, 1024, host->workers)
	NUM("max-workers", 1, 4096, host->max_workers)
	NUM("max-message", 64, 1L << 30, srv->max_message)
	NUM("queue-size", 1, 1L << 24, srv->queue_size)
	NUM("page-size", 1, 1L << 20, srv->page_size)
	NUM("grace-ms", 0, 3600000, host->grace_ms)
	NUM("tool-timeout", 0, 86400000, srv->tool_timeout_ms)
	NUM("max-batch", 1, 1000000, srv->max_batch)
	NUM("max-subscriptions", 0, 1000000, srv->max_subscriptions)
	NUM("max-listens", 0, 1000000, srv->max_listens)
	NUM("task-ttl", 1, 86400000 * 7L, srv->task_ttl_ms)
	NUM("state-ttl", 1, 86400, srv->state_ttl)
	NUM("max-tasks", 0, 1000000, srv->max_tasks)
	NUM("max-session-tasks", 0, 1000000, srv->max_session_tasks)
	NUM("max-task-bytes", 0, 1L << 40, srv->max_task_bytes)
	NUM("keepalive", 1, 3600, c->keepalive)
	NUM("max-sessions", 1, 1000000, c->max_sessions)
	NUM("max-inflight", 1, 1000000, c->max_inflight)
	NUM("max-queued", 4096, 1L << 30, c->max_queued)
	NUM("request-timeout", 1, 3600, c->request_timeout)
	NUM("idle-timeout", 1, 86400, c->idle_timeout)
	NUM("max-per-ip", 1, 1000000, c->max_per_ip)
	NUM("stateless", 0, 1, c->stateless)
	NUM("json-response", 0, 1, c->json_response)
	NUM("event-log", 0, 1L << 30, c->event_log)
	NUM("session-timeout", 1, 86400 * 30, c->session_timeout)
	NUM("sse-retry", 0, 3600000, c->sse_retry)
	NUM("stream-after-ms", 0, 3600000, c->stream_after_ms)
	NUM("metrics", 0, 1, c->metrics)
	NUM("access-log", 0, 1, c->access_log)
#undef NUM
	if (strcmp(name, "drain-timeout") == 0) {
		rc = num(name, value, 0, 3600, &v);
		if (rc == MCP_OK)
			host->grace_ms = (int)(v * 1000);
		return rc;
	}
	if (strcmp(name, "metrics-listen") == 0)
		return set_str(&c->metrics_listen, value);
	if (strcmp(name, "log-file") == 0)
		return mcp__log_open(value);
	if (strcmp(name, "log-format") == 0) {
		if (strcmp(value, "text") != 0 && strcmp(value, "json") != 0) {
			mcp_log(MCP_LOG_ERR, "option log-format: text or json, "
			    "not \"%s\"", value);
			return MCP_EINVAL;
		}
		mcp__log_json = strcmp(value, "json") == 0;
		return MCP_OK;
	}
	if (strcmp(name, "http") == 0) {
		p = strdup(value);
		if (p == NULL)
			return MCP_ENOMEM;
		free(c->addr);
		c->addr = p;
		return MCP_OK;
	}
	if (strcmp(name, "base-path") == 0) {
		if (value[0] != '\0' && value[0] != '/') {
			mcp_log(MCP_LOG_ERR, "base path must start with /");
			return MCP_EINVAL;
		}
		p = strdup(value);
		if (p == NULL)
			return MCP_ENOMEM;
		/* "/x/" and "/x" are the same prefix. */
		while (strlen(p) > 0 && p[strlen(p) - 1] == '/')
			p[strlen(p) - 1] = '\0';
		free(c->base_path);
		c->base_path = p;
		return MCP_OK;
	}
	if (strcmp(name, "allow-host") == 0)
		return add_to(&c->allow_hosts, &c->nallow_hosts, value);
	if (strcmp(name, "allow-origin") == 0)
		return add_to(&c->allow_origins, &c->nallow_origins, value);
	if (strcmp(name, "authorization-server") == 0)
		return set_str(&c->auth_server, value);
	if (strcmp(name, "resource-url") == 0)
		return set_str(&c->resource_url, value);
	if (strcmp(name, "auth-scopes") == 0)
		return set_scopes(c, value);
	if (strcmp(name, "auth-token-file") == 0) {
		rc = read_token(value, &c->auth_token);
		if (rc == MCP_OK)
			rc = set_str(&c->auth_token_file, value);
		return rc;
	}
	if (strcmp(name, "redis") == 0) {
		if (strncmp(value, "redis://", 8) != 0 &&
		    strncmp(value, "unix:///", 8) != 0) {
			/* Only its scheme: the rest may hold a password. */
			mcp_log(MCP_LOG_ERR, "option redis: redis://[user:pass@]"
			    "host:port[/db] or unix:///path, not a URL of "
			    "scheme \"%.*s\"", (int)strcspn(value, ":/@"),
			    value);
			return MCP_EINVAL;
		}
		return set_str(&c->redis, value);
	}
	if (strcmp(name, "state-key-file") == 0)
		return read_state_key(srv, value);
	if (strcmp(name, "redis-password-file") == 0) {
		p = NULL;
		rc = read_secret("redis password file", value, &p);
		if (rc == MCP_OK) {
			free_secret(c->redis_password);
			c->redis_password = p;
		}
		return rc;
	}
	if (strcmp(name, "redis-prefix") == 0) {
		/* Part of every key: printable, no space, and short. */
		for (p = (char *)value; *p != '\0'; p++)
			if (*p < 0x21 || *p > 0x7e)
				break;
		if (*p != '\0' || strlen(value) > 64) {
			mcp_log(MCP_LOG_ERR, "option redis-prefix: at most 64 "
			    "printable bytes without spaces");
			return MCP_EINVAL;
		}
		return set_str(&c->redis_prefix, value);
	}
	if (strcmp(name, "auth-token") == 0) {
		p = strdup(value);
		if (p == NULL)
			return MCP_ENOMEM;
		free(c->auth_token);
		c->auth_token = p;
		return MCP_OK;
	}
	mcp_log(MCP_LOG_ERR, "unknown option \"%s\"", name);
	return MCP_EINVAL;
}

void
mcp__http_conf_free(struct http_conf *c)
{
	int	 i;

	free(c->addr);
	free(c->base_path);
	for (i = 0; i < c->nallow_hosts; i++)
		free(c->allow_hosts[i]);
	free(c->allow_hosts);
	for (i = 0; i < c->nallow_origins; i++)
		free(c->allow_origins[i]);
	free(c->allow_origins);
	if (c->auth_token != NULL) {
		volatile char	*z = c->auth_token;

		/* Do not leave the secret in freed memory. */
		while (*z != '\0')
			*z++ = '\0';
	}
	free(c->auth_token);
	free(c->auth_token_file);
	if (c->auth_free != NULL)
		c->auth_free(c->auth_udata);
	c->auth_fn = NULL;
	c->auth_free = NULL;
	free(c->metrics_listen);
	free(c->auth_server);
	free(c->resource_url);
	free(c->auth_scopes);
	free(c->redis);
	free_secret(c->redis_password);
	free(c->redis_prefix);
	memset(c, 0, sizeof(*c));
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_server_set_option(mcp_server *srv, const char *name, const char *value)
{
	return mcp__setup_keep(srv, __func__, name,
	    set_option(srv, name, value));
}
