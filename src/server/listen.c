/*
 * listen.c: subscriptions/listen, protocol 2026-07-28. A listen is a
 * request that is never answered while it lasts: its call (CALL_LISTEN)
 * is tracked like any other, holds its route (the POST's SSE stream on
 * HTTP; the one channel on stdio), and nothing runs for it. It starts
 * with notifications/subscriptions/acknowledged, naming what the server
 * agreed to send, then carries the list_changed and resources/updated
 * notifications it asked for, each tagged in _meta with its
 * subscription id (the request's id). It ends when the client cancels
 * it (a closed stream on HTTP, notifications/cancelled on stdio: the
 * call is dropped, and nothing more is sent), or when the server ends
 * it (the drain: the answer, a {resultType:"complete"} result, closes
 * it). Every listen of the process is in srv->listens, which the
 * notifications (features.c, notify_cb) walk. Loop thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define K_SUB	"io.modelcontextprotocol/subscriptionId"

/* The filter's booleans and the lists they stand for. */
static const struct {
	const char	*name;
	int		 list;
} kinds[] = {
	{ "toolsListChanged", MCP_CHANGED_TOOLS },
	{ "promptsListChanged", MCP_CHANGED_PROMPTS },
	{ "resourcesListChanged", MCP_CHANGED_RESOURCES },
};

#define NKINDS	(sizeof(kinds) / sizeof(kinds[0]))

int
mcp__listen_new(struct session *s, const json_t *params, struct listen **out,
    json_t **agreed, char *why, size_t whylen)
{
	struct mcp_server *srv = s->srv;
	struct listen	*l;
	struct feat	*ft;
	json_t		*filter, *v, *uris, *ack, *list;
	const char	*uri;
	size_t		 i, n;

	*out = NULL;
	*agreed = NULL;
	filter = json_object_get(params, "notifications");
	if (!json_is_object(filter)) {
		snprintf(why, whylen, "subscriptions/listen: params."
		    "notifications must be an object");
		return MCP_RPC_INVALID_PARAMS;
	}
	for (i = 0; i < NKINDS; i++) {
		v = json_object_get(filter, kinds[i].name);
		if (v != NULL && !json_is_boolean(v)) {
			snprintf(why, whylen, "subscriptions/listen: "
			    "notifications.%s must be a boolean",
			    kinds[i].name);
			return MCP_RPC_INVALID_PARAMS;
		}
	}
	/* notifications/tasks (SEP-2663) is not served: taskIds is left
	 * out of the acknowledgment, but a client that does not declare
	 * the extension MUST be told it lacks it. */
	if (json_object_get(filter, "taskIds") != NULL &&
	    (s->era == NULL || !s->era->tasks)) {
		snprintf(why, whylen, "Missing required client capability: "
		    "subscriptions/listen: notifications.taskIds is of the "
		    "extension io.modelcontextprotocol/tasks");
		return MCP_RPC_MISSING_CAPABILITY;
	}
	uris = json_object_get(filter, "resourceSubscriptions");
	if (uris != NULL && !json_is_array(uris)) {
		snprintf(why, whylen, "subscriptions/listen: notifications."
		    "resourceSubscriptions must be an array of strings");
		return MCP_RPC_INVALID_PARAMS;
	}
	n = json_array_size(uris);
	if (n > (size_t)srv->max_subscriptions && srv->max_subscriptions > 0) {
		snprintf(why, whylen, "subscriptions/listen: %zu resource "
		    "URIs, at most %d may be named in one listen "
		    "(--max-subscriptions)", n, srv->max_subscriptions);
		return MCP_RPC_INVALID_PARAMS;
	}
	for (i = 0; i < n; i++) {
		v = json_array_get(uris, i);
		uri = mcp__json_cstr(v);
		if (uri == NULL || uri[0] == '\0' ||
		    json_string_length(v) > MCP_MAX_URI) {
			snprintf(why, whylen, "subscriptions/listen: "
			    "notifications.resourceSubscriptions[%zu] must be "
			    "a non-empty string of at most %d bytes, without "
			    "\\u0000", i, MCP_MAX_URI);
			return MCP_RPC_INVALID_PARAMS;
		}
		/* Only what can be read can be watched, as resources/
		 * subscribe has it; not found is -32602 in this era. */
		if (srv->max_subscriptions > 0) {
			ft = mcp__feat_resolve(srv, uri);
			if (ft == NULL) {
				snprintf(why, whylen, "subscriptions/listen: "
				    "resource not found: %.150s", uri);
				return MCP_RPC_INVALID_PARAMS;
			}
			mcp__feat_unref(ft);
		}
	}
	if (srv->nlistens >= srv->max_listens) {
		snprintf(why, whylen, "server busy: %d subscriptions/listen "
		    "open, the most this server keeps (--max-listens)",
		    srv->nlistens);
		return MCP_RPC_SERVER_BUSY;
	}
	if (s->nlistens >= MCP_SESSION_LISTENS) {
		snprintf(why, whylen, "server busy: %d subscriptions/listen "
		    "open on this connection, the most it may have",
		    s->nlistens);
		return MCP_RPC_SERVER_BUSY;
	}
	l = calloc(1, sizeof(*l));
	ack = json_object();
	if (l == NULL || ack == NULL)
		goto nomem;
	for (i = 0; i < NKINDS; i++)
		if (json_is_true(json_object_get(filter, kinds[i].name))) {
			l->lists |= kinds[i].list;
			if (json_object_set_new(ack, kinds[i].name,
			    json_true()) != 0)
				goto nomem;
		}
	/* Not supported (--max-subscriptions 0, no resources.subscribe
	 * in server/discover): left out of the acknowledgment, as the
	 * spec has it, not refused. */
	if (n > 0 && srv->max_subscriptions > 0) {
		l->uris = json_object();
		list = json_array();
		if (l->uris == NULL || list == NULL ||
		    json_object_set_new(ack, "resourceSubscriptions",
		    list) != 0)
			goto nomem;
		for (i = 0; i < n; i++) {
			uri = json_string_value(json_array_get(uris, i));
			if (json_object_get(l->uris, uri) != NULL)
				continue;	/* named twice: once */
			if (json_object_set_new(l->uris, uri,
			    json_true()) != 0 ||
			    json_array_append_new(list,
			    json_string(uri)) != 0)
				goto nomem;
		}
	}
	*out = l;
	*agreed = ack;
	return 0;

nomem:
	json_decref(ack);
	mcp__listen_free(l);
	snprintf(why, whylen, "out of memory");
	return MCP_RPC_INTERNAL_ERROR;
}

void
mcp__listen_free(struct listen *l)
{
	if (l == NULL)
		return;
	json_decref(l->uris);
	free(l);
}

static void	 walk_begin(struct mcp_server *);
static void	 walk_end(struct mcp_server *);

/* Sends METHOD (PARAMS, taken; may be NULL) on L's stream, tagged. */
static void
listen_send(struct listen *l, const char *method, json_t *params)
{
	struct mcp_call	*c = l->call;
	struct session	*s = c->sess;
	struct buf	 b = { 0 };
	void		*saved = s->route;
	json_t		*meta;

	if (params == NULL)
		params = json_object();
	meta = json_pack("{s:O}", K_SUB, c->id);
	if (params == NULL || meta == NULL ||
	    json_object_set_new(params, "_meta", meta) != 0) {
		json_decref(params);
		mcp_log(MCP_LOG_ERR, "subscriptions/listen: out of memory, "
		    "%s lost", method);
		return;
	}
	/* The send may end L and its call (stdio's EPIPE drains): S is
	 * held until the route is put back. */
	if (mcp__rpc_notification(&b, method, params) == MCP_OK) {
		s->refs++;
		s->route = c->route;
		mcp__session_sendbuf(s, &b);
		s->route = saved;
		mcp__session_unref(s);
	}
	mcp__buf_free(&b);
	json_decref(params);
}

void
mcp__listen_link(struct listen *l, json_t *agreed)
{
	struct mcp_call	 *c = l->call;
	struct mcp_server *srv = c->sess->srv;

	l->prev = NULL;
	l->next = srv->listens;
	if (srv->listens != NULL)
		srv->listens->prev = l;
	srv->listens = l;
	srv->nlistens++;
	c->sess->nlistens++;
	l->linked = 1;
	MCP_LOG(MCP_LOG_INFO, "subscriptions/listen %s opened (%d open)",
	    c->key + 1, srv->nlistens);
	/* Before anything else tagged with its id (nothing else runs in
	 * between). Listed first, so that a drain this send starts (stdio's
	 * EPIPE) ends it too, and L may be gone when it returns. */
	walk_begin(srv);
	listen_send(l, "notifications/subscriptions/acknowledged",
	    json_pack("{s:o}", "notifications", agreed));
	walk_end(srv);
}

void
mcp__listen_gone(struct mcp_call *c)
{
	struct listen	 *l = c->listen;
	struct mcp_server *srv = c->srv;

	if (l == NULL)
		return;
	c->listen = NULL;
	if (l->linked) {
		if (l->prev != NULL)
			l->prev->next = l->next;
		else
			srv->listens = l->next;
		if (l->next != NULL)
			l->next->prev = l->prev;
		srv->nlistens--;
		c->sess->nlistens--;
		MCP_LOG(MCP_LOG_INFO, "subscriptions/listen %s ended%s (%d "
		    "open)", c->key + 1, c->dropped ? " by the client" : "",
		    srv->nlistens);
		l->linked = 0;
		l->call = NULL;
		if (srv->listens_walking > 0) {
			/* A walk may stand on it, or go through it: its
			 * next stays as it was until the walk is over. */
			l->dead = srv->listens_dead;
			srv->listens_dead = l;
			return;
		}
	}
	mcp__listen_free(l);
}

/* A walk of srv->listens begins; walk_end frees what ended meanwhile. */
static void
walk_begin(struct mcp_server *srv)
{
	srv->listens_walking++;
}

static void
walk_end(struct mcp_server *srv)
{
	struct listen	*l;

	if (--srv->listens_walking > 0)
		return;
	while ((l = srv->listens_dead) != NULL) {
		srv->listens_dead = l->dead;
		mcp__listen_free(l);
	}
}

void
mcp__listen_changed(struct mcp_server *srv, int lists)
{
	struct listen	*l;
	size_t		 i;

	walk_begin(srv);
	for (l = srv->listens; l != NULL; l = l->next)
		for (i = 0; i < NKINDS && l->linked; i++)
			if (lists & l->lists & kinds[i].list)
				listen_send(l, kinds[i].list ==
				    MCP_CHANGED_TOOLS ?
				    "notifications/tools/list_changed" :
				    kinds[i].list == MCP_CHANGED_PROMPTS ?
				    "notifications/prompts/list_changed" :
				    "notifications/resources/list_changed",
				    NULL);
	walk_end(srv);
}

void
mcp__listen_updated(struct mcp_server *srv, const char *uri)
{
	struct listen	*l;

	walk_begin(srv);
	for (l = srv->listens; l != NULL; l = l->next)
		if (l->linked && json_object_get(l->uris, uri) != NULL)
			listen_send(l, "notifications/resources/updated",
			    json_pack("{s:s}", "uri", uri));
	walk_end(srv);
}

/*
 * The server ends every listen (the drain): each is answered with the
 * graceful end, {resultType:"complete", _meta: {subscriptionId}}, and
 * its stream closes once that has been written.
 */
void
mcp__listen_end_all(struct mcp_server *srv)
{
	struct mcp_call	*c;
	struct buf	 b = { 0 };
	json_t		*res;

	while (srv->listens != NULL) {
		c = srv->listens->call;
		res = json_pack("{s:{s:O}}", "_meta", K_SUB, c->id);
		if (mcp__era_result(srv, res, ERA_CACHE_NONE) == MCP_OK &&
		    mcp__rpc_result(&b, c->id, res) == MCP_OK)
			c->out = mcp__buf_steal(&b, &c->outlen);
		mcp__buf_free(&b);
		json_decref(res);
		/* Answered as a completion is (out of memory: -32603). */
		mcp__protocol_complete(c);
	}
}
