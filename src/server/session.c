/*
 * session.c: one client, whatever its transport: the negotiated version,
 * the client's capabilities, and the table of requests in flight, keyed
 * by id value and JSON type. A transport gives the session one way to
 * send a message. Loop thread only; the reference count is touched only
 * there (calls take a reference when queued and drop it on completion).
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

struct session *
mcp__session_new(struct mcp_server *srv, const struct session_ops *ops,
    void *tdata)
{
	struct session	*s;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->nbuckets = 8;		/* grows with the calls in flight */
	s->buckets = calloc(s->nbuckets, sizeof(*s->buckets));
	if (s->buckets == NULL) {
		free(s);
		return NULL;
	}
	s->srv = srv;
	s->ops = ops;
	s->tdata = tdata;
	s->refs = 1;
	s->version = MCP_V_LATEST;
	s->log_level = MCP_SYSLOG_DEBUG;	/* all, until setLevel */
	s->max_inflight = MCP_DEF_MAX_INFLIGHT;
	/* Linked for notifications sent to every session. */
	s->snext = srv->sessions;
	if (srv->sessions != NULL)
		srv->sessions->sprev = s;
	srv->sessions = s;
	return s;
}

const char *
mcp__session_addr(const struct session *s)
{
	if (s->id[0] != '\0')
		return s->id;
	return s->implicit ? "" : "stdio";
}

void
mcp__session_unref(struct session *s)
{
	if (s == NULL || --s->refs > 0)
		return;
	mcp__notify_forget(s);
	if (s->sprev != NULL)
		s->sprev->snext = s->snext;
	else if (s->srv->sessions == s)
		s->srv->sessions = s->snext;
	if (s->snext != NULL)
		s->snext->sprev = s->sprev;
	json_decref(s->subs);
	json_decref(s->client_caps);
	json_decref(s->client_info);
	mcp__pending_free(&s->reqs);
	free(s->buckets);
	free(s);
}

/*
 * The transport is gone. Calls in flight are flagged cancelled so their
 * callbacks can stop early; when they complete, their answers are
 * dropped with a log line (protocol.c). The session lives on until the
 * last of them has come back.
 */
void
mcp__session_close(struct session *s)
{
	struct mcp_call	*c, *next;
	size_t		 i;

	if (s->closed)
		return;
	s->closed = 1;
	mcp__notify_forget(s);		/* mcp_server_log_to: MCP_ENOENT */
	mcp__metrics_session_end(s);
	mcp__clientreq_drop(s, NULL);	/* waiting callbacks give up */
	for (i = 0; i < s->nbuckets; i++)
		for (c = s->buckets[i]; c != NULL; c = next) {
			next = c->hnext;	/* a relayed call ends here */
			mcp__protocol_drop(c);
		}
	mcp__relay_closed(s);
	mcp__session_unref(s);
}

int
mcp__session_send(struct session *s, const char *json, size_t len)
{
	if (s->closed)
		return MCP_ESTATE;
	return s->ops->send(s, s->route, json, len, 0);
}

int
mcp__session_answer(struct session *s, const char *json, size_t len)
{
	if (s->closed)
		return MCP_ESTATE;
	return s->ops->send(s, s->route, json, len, 1);
}

int
mcp__session_sendbuf(struct session *s, struct buf *b)
{
	return mcp__session_send(s, b->data + b->off, b->len - b->off);
}

struct mcp_call *
mcp__session_find(struct session *s, const char *key, uint32_t hash)
{
	struct mcp_call	*c;

	for (c = s->buckets[hash & (s->nbuckets - 1)]; c != NULL;
	    c = c->hnext)
		if (c->hash == hash && !c->dropped &&
		    strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

static void
grow(struct session *s)
{
	struct mcp_call	**nb, *c, *next;
	size_t		 n = s->nbuckets * 2, i;

	nb = calloc(n, sizeof(*nb));
	if (nb == NULL)
		return;		/* longer chains, still correct */
	for (i = 0; i < s->nbuckets; i++)
		for (c = s->buckets[i]; c != NULL; c = next) {
			next = c->hnext;
			c->hnext = nb[c->hash & (n - 1)];
			nb[c->hash & (n - 1)] = c;
		}
	free(s->buckets);
	s->buckets = nb;
	s->nbuckets = n;
}

void
mcp__session_track(struct session *s, struct mcp_call *c)
{
	size_t	 i;

	if ((size_t)s->inflight >= s->nbuckets)
		grow(s);
	i = c->hash & (s->nbuckets - 1);
	c->hnext = s->buckets[i];
	s->buckets[i] = c;
	s->inflight++;
	s->pending++;
	c->sess = s;
	s->refs++;
}

/* Removes C by identity: a cancelled call may share its id key. */
void
mcp__session_untrack(struct session *s, struct mcp_call *c)
{
	struct mcp_call	**p;

	for (p = &s->buckets[c->hash & (s->nbuckets - 1)]; *p != NULL;
	    p = &(*p)->hnext)
		if (*p == c) {
			*p = c->hnext;
			s->inflight--;
			break;
		}
	c->hnext = NULL;
}
