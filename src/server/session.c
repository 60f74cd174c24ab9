/*
 * session.c: one client, whatever its transport: the negotiated version,
 * the client's capabilities, and the table of requests in flight, keyed
 * by id value and JSON type. A transport gives the session one way to
 * send a message. Loop thread only; the reference count is touched only
 * there (calls take a reference when queued and drop it on completion).
 *
 * What a callback may know of its session (mcp_session(3)) is a copy
 * made when the session opens, struct mcp_session, which workers read
 * and nobody changes; the mcp_session_* getters below read only that,
 * so they are safe on any thread. The open and close hooks, and the
 * identities the transports attach, are the loop's.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static const char *const transport_names[MT_N] = {
	"stdio", "sse", "streamable"
};

struct identity *
mcp__identity_new(char *subject, json_t *claims)
{
	struct identity	*id;

	id = malloc(sizeof(*id));
	if (id == NULL) {
		free(subject);
		json_decref(claims);
		return NULL;
	}
	id->refs = 1;
	id->subject = subject;
	id->claims = claims;
	return id;
}

void
mcp__identity_free(struct identity *id)
{
	if (id == NULL)
		return;
	free(id->subject);
	json_decref(id->claims);
	free(id);
}

int
mcp__identity_same(const struct identity *a, const struct identity *b)
{
	const char	*sa = a != NULL ? a->subject : NULL;
	const char	*sb = b != NULL ? b->subject : NULL;

	if (sa == NULL || sb == NULL)
		return sa == sb;
	return strcmp(sa, sb) == 0;
}

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
	/* Made now, filled when it opens: nothing can fail then. */
	s->info = calloc(1, sizeof(*s->info));
	if (s->buckets == NULL || s->info == NULL) {
		free(s->buckets);
		free(s->info);
		free(s);
		return NULL;
	}
	s->srv = srv;
	s->ops = ops;
	s->transport = ops->transport;
	s->tdata = tdata;
	s->refs = 1;
	s->version = MCP_V_LATEST;
	s->log_level = MCP_SYSLOG_DEBUG;	/* all, until setLevel */
	s->max_inflight = MCP_DEF_MAX_INFLIGHT;
	mcp__table_init(&s->tasks);
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
	mcp__tasks_close(s);	/* none is left running: calls hold S */
	if (s->sprev != NULL)
		s->sprev->snext = s->snext;
	else if (s->srv->sessions == s)
		s->srv->sessions = s->snext;
	if (s->snext != NULL)
		s->snext->sprev = s->sprev;
	/* The last call of the session has come back: nothing reads its
	 * data any more. */
	if (s->info->hooked && s->srv->sess_close != NULL)
		s->srv->sess_close(s->info, s->info->data,
		    s->srv->sess_udata);
	json_decref(s->info->client_info);
	json_decref(s->info->client_caps);
	mcp__identity_unref(s->info->ident);
	free(s->info);
	mcp__identity_unref(s->ident);
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
	mcp__tasks_close(s);		/* their calls are cancelled */
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

/*
 * The session opens: what its calls may read is copied into s->info
 * (struct mcp_session), and the open hook runs with it. From here on
 * the info does not change, so that workers can read it without a lock;
 * a stdio client cannot initialize twice, and a relay's sessions never
 * open (their calls run nowhere but in the relay).
 */
void
mcp__session_open(struct session *s)
{
	struct mcp_session	*info = s->info;
	struct mcp_server	*srv = s->srv;

	if (info->opened)
		return;
	info->opened = 1;
	memcpy(info->id, s->id, sizeof(info->id));
	info->transport = s->transport;
	info->version = s->version;
	info->client_info = json_incref(s->client_info);
	info->client_caps = json_incref(s->client_caps);
	info->ident = mcp__identity_ref(s->ident);
	if (srv->sess_open != NULL || srv->sess_close != NULL) {
		info->hooked = 1;
		if (srv->sess_open != NULL)
			info->data = srv->sess_open(info, srv->sess_udata);
	}
}

void
mcp__session_identify(struct session *s, struct identity *id)
{
	mcp__identity_ref(id);
	mcp__identity_unref(s->ident);
	s->ident = id;
}

static int
on_session(mcp_server *srv, mcp_session_open_fn open_fn,
    mcp_session_close_fn close_fn, void *udata, void (*udata_free)(void *))
{
	int	 none = open_fn == NULL && close_fn == NULL;

	if (srv == NULL || srv->running) {
		if (udata_free != NULL)
			udata_free(udata);
		return srv == NULL ? MCP_ENOMEM : MCP_ESTATE;
	}
	if (srv->sess_free != NULL)
		srv->sess_free(srv->sess_udata);
	srv->sess_open = open_fn;
	srv->sess_close = close_fn;
	srv->sess_udata = none ? NULL : udata;
	srv->sess_free = none ? NULL : udata_free;
	if (none && udata_free != NULL)
		udata_free(udata);
	return MCP_OK;
}

/* ---- mcp_session: any thread, reading only the info ------------------ */

const char *
mcp_session_id(mcp_session *sess)
{
	if (sess == NULL)
		return NULL;
	if (sess->id[0] == '\0' && sess->transport == MT_STDIO)
		return "stdio";
	return sess->id;
}

const char *
mcp_session_transport(mcp_session *sess)
{
	if (sess == NULL || sess->transport < 0 || sess->transport >= MT_N)
		return NULL;
	return transport_names[sess->transport];
}

const char *
mcp_session_protocol(mcp_session *sess)
{
	return sess != NULL ? mcp__version_str(sess->version) : NULL;
}

const json_t *
mcp_session_client_info(mcp_session *sess)
{
	return sess != NULL ? sess->client_info : NULL;
}

const json_t *
mcp_session_client_capabilities(mcp_session *sess)
{
	return sess != NULL ? sess->client_caps : NULL;
}

const char *
mcp_session_identity(mcp_session *sess)
{
	return sess != NULL && sess->ident != NULL ? sess->ident->subject :
	    NULL;
}

const json_t *
mcp_session_identity_claims(mcp_session *sess)
{
	return sess != NULL && sess->ident != NULL ? sess->ident->claims :
	    NULL;
}

void *
mcp_session_data(mcp_session *sess)
{
	return sess != NULL ? sess->data : NULL;
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_server_on_session(mcp_server *srv, mcp_session_open_fn open_fn,
    mcp_session_close_fn close_fn, void *udata, void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, NULL,
	    on_session(srv, open_fn, close_fn, udata, udata_free));
}

/* ---- a session's record, for another instance (--redis) ------------- */

#define RECORD_VERSION	1
#define SUBJECT_MAX	1024

char *
mcp__session_export(const struct session *s, double at, const char *by)
{
	json_t		*rec;
	const char	*k;
	json_t		*v;
	json_t		*subs;
	char		*text;

	subs = json_array();
	rec = json_pack("{s:i, s:s, s:s, s:o, s:O?, s:i, s:b, s:o, s:f, s:s}",
	    "v", RECORD_VERSION, "id", s->id, "version",
	    mcp__version_str(s->version), "caps", s->client_caps != NULL ?
	    json_incref(s->client_caps) : json_object(), "info",
	    s->client_info, "level",
	    s->log_level, "ready", s->ready, "subs", subs, "at", at, "by", by);
	if (rec == NULL)
		return NULL;
	if (s->subs != NULL)
		json_object_foreach(s->subs, k, v)
			json_array_append_new(subs, json_string(k));
	if (s->ident != NULL && s->ident->subject != NULL)
		json_object_set_new(rec, "sub", json_string(s->ident->subject));
	text = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	return text;
}

int
mcp__session_import(struct session *s, const char *id, const char *data,
    size_t len)
{
	json_t		*rec, *caps, *info, *subs, *v;
	json_error_t	 e;
	const char	*rid, *ver, *sub = NULL;
	char		*subject;
	int		 recv, level, ready, version;
	size_t		 i;

	rec = json_loadb(data, len, JSON_REJECT_DUPLICATES, &e);
	if (rec == NULL)
		return MCP_EINVAL;
	info = NULL;
	if (json_unpack_ex(rec, &e, 0, "{s:i, s:s, s:s, s:o, s?o, s:i, s:b, "
	    "s:o, s?s}", "v", &recv, "id", &rid, "version", &ver, "caps", &caps,
	    "info", &info, "level", &level, "ready", &ready, "subs", &subs,
	    "sub", &sub) != 0)
		goto bad;
	version = mcp__version_of(ver);
	if (recv != RECORD_VERSION || strcmp(rid, id) != 0 || version == 0 ||
	    !json_is_object(caps) || (info != NULL && !json_is_object(info) &&
	    !json_is_null(info)) || level < 0 || level > MCP_SYSLOG_DEBUG ||
	    !json_is_array(subs) || json_array_size(subs) >
	    (size_t)s->srv->max_subscriptions ||
	    (sub != NULL && strnlen(sub, SUBJECT_MAX + 1) > SUBJECT_MAX))
		goto bad;
	json_array_foreach(subs, i, v)
		if (!json_is_string(v))
			goto bad;
	if (json_array_size(subs) > 0) {
		s->subs = json_object();
		if (s->subs == NULL)
			goto nomem;
		json_array_foreach(subs, i, v)
			json_object_set_new(s->subs, json_string_value(v),
			    json_true());
	}
	if (sub != NULL) {
		subject = strdup(sub);
		if (subject == NULL)
			goto nomem;
		mcp__identity_unref(s->ident);
		s->ident = mcp__identity_new(subject, NULL);
		if (s->ident == NULL)
			goto nomem;
	}
	s->version = version;
	s->initialized = 1;
	/* As initialize declared it (the same tools here): its tasks are
	 * the store's (taskshare.c). */
	s->tasks_on = version >= MCP_V20251125 &&
	    mcp__registry_tasks(&s->srv->reg);
	s->ready = ready;
	s->log_level = level;
	s->client_caps = json_incref(caps);
	s->caps = mcp__clientreq_caps(s);
	s->client_info = json_is_object(info) ? json_incref(info) : NULL;
	json_decref(rec);
	return MCP_OK;
bad:
	json_decref(rec);
	return MCP_EINVAL;
nomem:
	json_decref(rec);
	return MCP_ENOMEM;
}
