/*
 * era.c: protocol 2026-07-28, the stateless core, beside the versions
 * that initialize (2024-11-05 to 2025-11-25). A modern request carries
 * its version, the client's capabilities and, optionally, its log level
 * in params._meta; this file checks that _meta, answers server/discover,
 * and dresses results the way the era wants them: resultType, the
 * server's identity in _meta, and caching hints on the lists and on
 * resources/read. protocol.c decides which requests are modern; the
 * Streamable HTTP transport uses the same checks before its own header
 * checks. Loop thread only (pure apart from reading the server).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define K_VERSION	"io.modelcontextprotocol/protocolVersion"
#define K_CAPS		"io.modelcontextprotocol/clientCapabilities"
#define K_INFO		"io.modelcontextprotocol/clientInfo"
#define K_LEVEL		"io.modelcontextprotocol/logLevel"
#define K_SERVER	"io.modelcontextprotocol/serverInfo"
#define K_TASKS		"io.modelcontextprotocol/tasks"

/*
 * Caching hints (the spec leaves the values to the server). Lists and
 * discover: a minute, shared: they are the same for every client, and
 * a client that must know sooner listens for list_changed
 * (subscriptions/listen). resources/read: always stale, private: a
 * callback makes the contents, perhaps per user.
 */
#define TTL_LIST_MS	60000
#define TTL_READ_MS	0

/* Every version we speak, newest first: the modern one, then those of
 * initialize. server/discover and -32022 name them all. */
static const char *const supported[] = { "2026-07-28", "2025-11-25",
    "2025-06-18", "2025-03-26", "2024-11-05" };

#define NSUPPORTED	(sizeof(supported) / sizeof(supported[0]))

int
mcp__era_is_modern(const json_t *meta)
{
	return json_object_get(meta, K_VERSION) != NULL;
}

int
mcp__era_meta(const json_t *meta, struct era_req *er, char *why,
    size_t whylen)
{
	const char	*v, *lvl;
	json_t		*caps, *info, *level;

	memset(er, 0, sizeof(*er));
	er->log_level = -1;	/* none asked for: no notifications/message */
	if (!json_is_object(meta)) {
		snprintf(why, whylen, "params._meta is required (with %s and "
		    "%s)", K_VERSION, K_CAPS);
		return MCP_RPC_INVALID_PARAMS;
	}
	v = mcp__json_cstr(json_object_get(meta, K_VERSION));
	if (v == NULL) {
		snprintf(why, whylen, "_meta[\"%s\"] must be a string",
		    K_VERSION);
		return MCP_RPC_INVALID_PARAMS;
	}
	caps = json_object_get(meta, K_CAPS);
	if (!json_is_object(caps)) {
		snprintf(why, whylen, "_meta[\"%s\"] must be an object",
		    K_CAPS);
		return MCP_RPC_INVALID_PARAMS;
	}
	info = json_object_get(meta, K_INFO);
	if (info != NULL && !json_is_object(info)) {
		snprintf(why, whylen, "_meta[\"%s\"] must be an object",
		    K_INFO);
		return MCP_RPC_INVALID_PARAMS;
	}
	level = json_object_get(meta, K_LEVEL);
	if (level != NULL) {
		lvl = mcp__json_cstr(level);
		er->log_level = mcp__level_parse(lvl);
		if (er->log_level < 0) {
			snprintf(why, whylen, "_meta[\"%s\"] must be one of "
			    "debug, info, notice, warning, error, critical, "
			    "alert, emergency", K_LEVEL);
			return MCP_RPC_INVALID_PARAMS;
		}
	}
	er->vname = v;
	er->caps = mcp__caps_bits(caps, MCP_V20260728);
	er->tasks = json_is_object(json_object_get(json_object_get(caps,
	    "extensions"), K_TASKS));
	return 0;
}

int
mcp__era_version(const char *vname, json_t **data, char *why, size_t whylen)
{
	json_t	*list;
	size_t	 i;

	*data = NULL;
	if (strcmp(vname, "2026-07-28") == 0)
		return 0;
	list = json_array();
	for (i = 0; list != NULL && i < NSUPPORTED; i++)
		json_array_append_new(list, json_string(supported[i]));
	*data = json_pack("{s:o*, s:s}", "supported", list, "requested",
	    vname);
	/* A version of initialize's, named in _meta: say how to get it. */
	if (mcp__version_of(vname) != 0)
		snprintf(why, whylen, "Unsupported protocol version: %.40s is "
		    "served after initialize only; per request: 2026-07-28",
		    vname);
	else
		snprintf(why, whylen, "Unsupported protocol version: %.40s",
		    vname);
	return MCP_RPC_UNSUPPORTED_VERSION;
}

int
mcp__era_check(const json_t *meta, struct era_req *er, json_t **data,
    char *why, size_t whylen)
{
	int	 code;

	*data = NULL;
	code = mcp__era_meta(meta, er, why, whylen);
	if (code == 0)
		code = mcp__era_version(er->vname, data, why, whylen);
	if (code == 0)
		er->version = MCP_V20260728;
	return code;
}

static json_t *
server_info(const struct mcp_server *srv)
{
	json_t	*info;

	info = json_pack("{s:s, s:s}", "name", srv->name, "version",
	    srv->version);
	if (info != NULL && srv->title != NULL)
		json_object_set_new(info, "title", json_string(srv->title));
	return info;
}

int
mcp__era_result(const struct mcp_server *srv, json_t *result,
    int cache)
{
	json_t	*meta;

	if (result == NULL)
		return MCP_ENOMEM;
	meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		if (json_object_set_new(result, "_meta", meta) != 0)
			return MCP_ENOMEM;
	}
	if (json_object_set_new(meta, K_SERVER, server_info(srv)) != 0 ||
	    json_object_set_new(result, "resultType",
	    json_string("complete")) != 0)
		return MCP_ENOMEM;
	if (cache != ERA_CACHE_NONE &&
	    (json_object_set_new(result, "ttlMs", json_integer(cache ==
	    ERA_CACHE_READ ? TTL_READ_MS : TTL_LIST_MS)) != 0 ||
	    json_object_set_new(result, "cacheScope", json_string(cache ==
	    ERA_CACHE_READ ? "private" : "public")) != 0))
		return MCP_ENOMEM;
	return MCP_OK;
}

/*
 * What mcp__era_result adds, as the text that goes right after a result
 * object's "{" (with the comma that follows it): for answers that a
 * worker serialised already.
 */
static int
era_prefix(const struct mcp_server *srv, struct buf *b, int cache)
{
	json_t	*info;
	char	 num[32];
	int	 rc;

	info = server_info(srv);
	if (info == NULL)
		return MCP_ENOMEM;
	rc = mcp__buf_adds(b, "\"resultType\":\"complete\",\"_meta\":{\""
	    K_SERVER "\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addjson(b, info);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, "},");
	if (rc == MCP_OK && cache != ERA_CACHE_NONE) {
		snprintf(num, sizeof(num), "\"ttlMs\":%d,", cache ==
		    ERA_CACHE_READ ? TTL_READ_MS : TTL_LIST_MS);
		rc = mcp__buf_adds(b, num);
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, cache == ERA_CACHE_READ ?
			    "\"cacheScope\":\"private\"," :
			    "\"cacheScope\":\"public\",");
	}
	json_decref(info);
	return rc;
}

int
mcp__era_dress(const struct mcp_server *srv, char **out, size_t *outlen,
    int cache)
{
	static const char	 key[] = ",\"result\":{";
	struct buf		 b = { 0 };
	const char		*p = *out, *end = *out + *outlen;
	size_t			 at, n = sizeof(key) - 1;
	int			 rc;

	/* Inside a JSON string a quote is escaped, so the first ,"result":{
	 * is the member's; an error response has none and stays as it is. */
	for (;;) {
		if ((size_t)(end - p) < n)
			return MCP_OK;
		p = memchr(p, ',', (size_t)(end - p) - n + 1);
		if (p == NULL)
			return MCP_OK;
		if (memcmp(p, key, n) == 0)
			break;
		p++;
	}
	at = (size_t)(p - *out) + n;
	rc = mcp__buf_add(&b, *out, at);
	if (rc == MCP_OK)
		rc = era_prefix(srv, &b, cache);
	/* An empty result object: no comma may follow the prefix. */
	if (rc == MCP_OK && at < *outlen && (*out)[at] == '}')
		b.len--;
	if (rc == MCP_OK)
		rc = mcp__buf_add(&b, *out + at, *outlen - at);
	if (rc != MCP_OK) {
		mcp__buf_free(&b);
		return rc;
	}
	free(*out);
	*out = mcp__buf_steal(&b, outlen);
	mcp__buf_free(&b);
	return *out != NULL ? MCP_OK : MCP_ENOMEM;
}

json_t *
mcp__era_discover(const struct mcp_server *srv)
{
	json_t	*res, *list, *caps;
	size_t	 i;

	list = json_array();
	for (i = 0; list != NULL && i < NSUPPORTED; i++)
		json_array_append_new(list, json_string(supported[i]));
	/*
	 * subscriptions/listen carries the list changes, and updates of
	 * the resources it names unless --max-subscriptions is 0.
	 */
	caps = json_pack("{s:{s:b}, s:{s:b, s:b}, s:{s:b}, s:{}}", "tools",
	    "listChanged", 1, "resources", "listChanged", 1, "subscribe",
	    srv->max_subscriptions > 0, "prompts", "listChanged", 1,
	    "logging");
	if (caps != NULL && srv->feat.complete_fn != NULL)
		json_object_set_new(caps, "completions", json_object());
	if (caps != NULL && mcp__era_tasks_on((struct mcp_server *)srv))
		json_object_set_new(caps, "extensions", json_pack("{s:{}}",
		    K_TASKS));
	res = json_pack("{s:o*, s:o*}", "supportedVersions", list,
	    "capabilities", caps);
	if (res != NULL && srv->instructions != NULL)
		json_object_set_new(res, "instructions",
		    json_string(srv->instructions));
	if (mcp__era_result(srv, res, ERA_CACHE_LIST) != MCP_OK) {
		json_decref(res);
		return NULL;
	}
	return res;
}

int
mcp__era_method(const char *method, int *cache)
{
	static const struct {
		const char	*name;
		int		 cache;
	} known[] = {
		{ "server/discover", ERA_CACHE_LIST },
		{ "tools/list", ERA_CACHE_LIST },
		{ "tools/call", ERA_CACHE_NONE },
		{ "resources/list", ERA_CACHE_LIST },
		{ "resources/templates/list", ERA_CACHE_LIST },
		{ "resources/read", ERA_CACHE_READ },
		{ "prompts/list", ERA_CACHE_LIST },
		{ "prompts/get", ERA_CACHE_NONE },
		{ "completion/complete", ERA_CACHE_NONE },
		{ "subscriptions/listen", ERA_CACHE_NONE },
		/* The tasks extension; no tasks/list nor tasks/result. */
		{ "tasks/get", ERA_CACHE_NONE },
		{ "tasks/update", ERA_CACHE_NONE },
		{ "tasks/cancel", ERA_CACHE_NONE },
	};
	size_t	 i;

	/* ping, logging/setLevel, resources/subscribe and /unsubscribe are
	 * gone in this era, like initialize: unknown methods. */
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(method, known[i].name) == 0) {
			*cache = known[i].cache;
			return 1;
		}
	return 0;
}

const char *
mcp__era_name_of(const char *method)
{
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		return "name";
	if (strcmp(method, "resources/read") == 0)
		return "uri";
	/* The tasks extension routes by task (Mcp-Name: the taskId). */
	if (strcmp(method, "tasks/get") == 0 ||
	    strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		return "taskId";
	return NULL;
}

int
mcp__era_tasks_on(struct mcp_server *srv)
{
	return srv->relay == NULL && mcp__registry_tasks(&srv->reg);
}

/* The home session has no client: nothing is ever sent from it (a
 * task's notifications/tasks/status goes nowhere in this era). */
static int
home_send(struct session *s, void *route, const char *json, size_t len,
    int final)
{
	(void)s;
	(void)route;
	(void)json;
	(void)len;
	(void)final;
	return MCP_ESTATE;
}

static const struct session_ops home_ops = {
	home_send, NULL, NULL, NULL, MT_STREAMABLE, NULL
};

struct session *
mcp__era_home(struct mcp_server *srv)
{
	struct session	*s = srv->era_home;

	if (s != NULL)
		return s;
	s = mcp__session_new(srv, &home_ops, NULL);
	if (s == NULL)
		return NULL;
	/* Its calls' info: a session of no id (as a stateless one), with
	 * no hook: no client opened it. */
	s->implicit = 1;
	s->era_only = 1;
	s->version = MCP_V20260728;
	s->max_inflight = srv->max_tasks + 1;
	s->info->opened = 1;
	s->info->version = MCP_V20260728;
	s->info->transport = MT_STREAMABLE;
	srv->era_home = s;
	return s;
}

void
mcp__era_home_abort(struct mcp_server *srv)
{
	if (srv->era_home != NULL)
		mcp__protocol_abort(srv->era_home);
}

void
mcp__era_home_free(struct mcp_server *srv)
{
	struct session	*s = srv->era_home;

	if (s == NULL)
		return;
	srv->era_home = NULL;
	mcp__session_close(s);	/* its tasks go; calls hold it */
}

int
mcp__era_dress_buf(const struct mcp_server *srv, struct buf *b, int cache)
{
	char	*out;
	size_t	 len;
	int	 rc;

	out = mcp__buf_steal(b, &len);
	if (out == NULL)
		return MCP_ENOMEM;
	rc = mcp__era_dress(srv, &out, &len, cache);
	if (rc == MCP_OK)
		rc = mcp__buf_add(b, out, len);
	free(out);
	return rc;
}
