/*
 * relay.c: the server as a relay (mcp_server_set_relay): its sessions'
 * requests are answered by someone else, tools/mcp-gateway's child
 * processes, say. The transports, the sessions and the JSON-RPC rules
 * are the library's as ever (protocol.c checks a message before it gets
 * here, and tracks a relayed request as a call of kind CALL_RELAY, with
 * its route, its batch and its place in the in-flight table); this file
 * is the relay's side of it: what it is handed, and how what it sends
 * finds its way back. A peer is a session. Loop thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define PEER(s)		((mcp_peer *)(void *)(s))
#define SESS(p)		((struct session *)(void *)(p))

static int
set_relay(mcp_server *srv, const struct mcp_relay *ops,
    void *udata)
{
	if (srv == NULL)
		return MCP_ENOMEM;
	if (ops == NULL || ops->message == NULL)
		return MCP_EINVAL;
	if (srv->running)
		return MCP_ESTATE;
	srv->relay = ops;
	srv->relay_udata = udata;
	return MCP_OK;
}

struct ev_loop *
mcp_server_loop(mcp_server *srv)
{
	return srv != NULL ? srv->loop : NULL;
}

const char *
mcp_protocol_negotiate(const char *want)
{
	int	 v = want != NULL ? mcp__version_of(want) : 0;

	return mcp__version_str(v != 0 ? v : MCP_V_LATEST);
}

const char *
mcp__relay_admit(struct mcp_server *srv)
{
	if (srv->relay == NULL || srv->relay->admit == NULL)
		return NULL;
	return srv->relay->admit(srv->relay_udata);
}

void
mcp__relay_deliver(struct session *s, json_t *msg)
{
	struct mcp_server *srv = s->srv;

	if (s->closed)
		return;
	s->relayed = 1;
	srv->relay->message(PEER(s), msg, srv->relay_udata);
}

void
mcp__relay_dropped(struct mcp_call *c, const char *reason)
{
	struct session	*s = c->sess;
	json_t		*msg;

	/* A session already closed is told once, by closed. */
	if (!s->closed || s->srv->relay->closed == NULL) {
		msg = json_pack("{s:s, s:s, s:{s:O, s:s}}", "jsonrpc", "2.0",
		    "method", "notifications/cancelled", "params", "requestId",
		    c->id, "reason", reason);
		if (msg != NULL) {
			s->relayed = 1;
			s->srv->relay->message(PEER(s), msg,
			    s->srv->relay_udata);
		}
		json_decref(msg);
	}
	mcp__call_free(c);
}

void
mcp__relay_closed(struct session *s)
{
	struct mcp_server *srv = s->srv;

	if (srv->relay == NULL || !s->relayed || srv->relay->closed == NULL)
		return;
	s->relayed = 0;
	srv->relay->closed(PEER(s), srv->relay_udata);
}

/* The call the request ID names, still owed an answer; NULL if none. */
static struct mcp_call *
owed(struct session *s, const json_t *id)
{
	struct mcp_call	*c;
	char		 key[sizeof(c->key)];

	if (id == NULL || mcp__rpc_id_key(id, key, sizeof(key)) != MCP_OK)
		return NULL;
	c = mcp__session_find(s, key, mcp__hash(key));
	return c != NULL && c->kind == CALL_RELAY ? c : NULL;
}

/*
 * The relay's answer to initialize names the version it speaks: the
 * session's from now on, if we speak it too. An answer in a version we
 * do not know would leave the transports guessing: the client is told
 * instead, as an error.
 */
static int
initialized(struct session *s, json_t *msg)
{
	json_t		*res = json_object_get(msg, "result");
	const char	*v;
	char		 why[160];
	int		 n;

	if (res == NULL)
		return MCP_ECLIENT;	/* an error: passed on as it is */
	v = json_string_value(json_object_get(res, "protocolVersion"));
	n = v != NULL ? mcp__version_of(v) : 0;
	if (n != 0) {
		s->version = n;
		return MCP_OK;
	}
	snprintf(why, sizeof(why), "the server answered initialize with "
	    "protocol version %.40s, which is not one of ours", v != NULL ?
	    v : "(none)");
	mcp_log(MCP_LOG_WARN, "relay: session %.8s: %s", mcp_peer_id(PEER(s)),
	    why);
	json_object_del(msg, "result");
	json_object_set_new(msg, "error", json_pack("{s:i, s:s}", "code",
	    MCP_RPC_INTERNAL_ERROR, "message", why));
	return MCP_EPROTO;
}

/* An answer: C's, sent where C's request came from. */
static int
answer(struct session *s, struct mcp_call *c, json_t *msg)
{
	struct buf	 b = { 0 };
	json_t		*err;
	int		 failed = 0;

	/* A failed initialize: the session never began. On stdio another
	 * may be tried; over HTTP the session ends (404 from now on), once
	 * the error has gone out. */
	if (strcmp(c->method, "initialize") == 0 &&
	    initialized(s, msg) != MCP_OK) {
		s->initialized = 0;
		failed = 1;
	}
	if ((err = json_object_get(msg, "error")) != NULL) {
		c->rpc_code = (int)json_integer_value(json_object_get(err,
		    "code"));
		if (c->rpc_code == 0)
			c->rpc_code = MCP_RPC_INTERNAL_ERROR;
	} else if (json_is_true(json_object_get(json_object_get(msg,
	    "result"), "isError")))
		c->is_error = 1;
	if (mcp__buf_addjson(&b, msg) == MCP_OK)
		c->out = mcp__buf_steal(&b, &c->outlen);
	mcp__buf_free(&b);
	mcp__protocol_complete(c);	/* answers, frees C */
	if (failed && !s->closed && s->ops->end != NULL)
		s->ops->end(s);		/* S: the transport's reference */
	return MCP_OK;
}

int
mcp_peer_send_new(mcp_peer *peer, json_t *msg, const json_t *related)
{
	struct session	*s = SESS(peer);
	struct mcp_call	*c;
	struct buf	 b = { 0 };
	void		*saved;
	int		 rc;

	if (msg == NULL)
		return MCP_ENOMEM;
	if (peer == NULL || !json_is_object(msg)) {
		json_decref(msg);
		return MCP_EINVAL;
	}
	if (s->closed) {
		json_decref(msg);
		return MCP_ESTATE;
	}
	if (json_object_get(msg, "jsonrpc") == NULL)
		json_object_set_new(msg, "jsonrpc", json_string("2.0"));
	if (json_object_get(msg, "method") == NULL) {
		/* An answer. */
		c = owed(s, json_object_get(msg, "id"));
		if (c == NULL) {
			MCP_LOG(MCP_LOG_DEBUG, "relay: an answer nobody waits "
			    "for any more: dropped");
			json_decref(msg);
			return MCP_ENOENT;
		}
		rc = answer(s, c, msg);
		json_decref(msg);
		return rc;
	}
	/* A request or notification: on its request's stream, if owed. */
	c = owed(s, related);
	saved = s->route;
	s->route = c == NULL ? NULL : c->batch != NULL ? NULL : c->route;
	rc = mcp__buf_addjson(&b, msg);
	if (rc == MCP_OK)
		rc = mcp__session_sendbuf(s, &b);
	s->route = saved;
	mcp__buf_free(&b);
	json_decref(msg);
	return rc;
}

void
mcp_peer_close(mcp_peer *peer)
{
	struct session	*s = SESS(peer);

	if (s == NULL || s->closed || s->ops->end == NULL)
		return;
	s->ops->end(s);
}

void
mcp_peer_set_data(mcp_peer *peer, void *data)
{
	if (peer != NULL)
		SESS(peer)->peer_data = data;
}

void *
mcp_peer_data(mcp_peer *peer)
{
	return peer != NULL ? SESS(peer)->peer_data : NULL;
}

const char *
mcp_peer_id(mcp_peer *peer)
{
	struct session	*s = SESS(peer);

	if (s == NULL || s->implicit)
		return "";
	return s->id[0] != '\0' ? s->id : "stdio";
}

const char *
mcp_peer_version(mcp_peer *peer)
{
	return mcp__version_str(peer != NULL ? SESS(peer)->version :
	    MCP_V_LATEST);
}

int
mcp_peer_stateless(mcp_peer *peer)
{
	return peer != NULL && SESS(peer)->implicit;
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_server_set_relay(mcp_server *srv, const struct mcp_relay *ops,
    void *udata)
{
	return mcp__setup_keep(srv, __func__, NULL,
	    set_relay(srv, ops, udata));
}
