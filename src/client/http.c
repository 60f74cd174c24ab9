/*
 * http.c: the client's HTTP transports, on libcurl's multi interface
 * driven by the client's libev loop (one ev_io a socket curl asks for,
 * one ev_timer for its timeout).
 *
 * Streamable HTTP: each message is a POST; a request's answer comes as
 * a JSON body or in an SSE body, read up to the event with its id. The
 * session id is kept and sent back; an SSE body that drops before the
 * answer is resumed with a GET carrying Last-Event-ID; a 404 for the
 * session opens a new one (client.c); a GET stream, when the server
 * offers one, carries the server's own messages and is resumed too.
 * Closing sends DELETE.
 *
 * 2026-07-28: no session, no GET stream, no resumption, no DELETE;
 * each POST carries MCP-Protocol-Version, Mcp-Method and, for the
 * methods that name something, Mcp-Name (plain, or "=?base64?...?="
 * when the value is not plain visible ASCII), and for tools/call the
 * Mcp-Param-* lines client.c made from the tool's x-mcp-header
 * annotations. A 4xx's JSON-RPC error
 * is the request's answer; the probe's 4xx without one is a legacy
 * server's (client.c falls back to initialize). Cancelling closes the
 * request's stream.
 *
 * Legacy HTTP+SSE (2024-11-05): a GET stream whose first event names
 * the endpoint to POST to; every answer comes on that stream. It is
 * chosen by "transport sse", or when the POST of initialize gets a 4xx
 * (the spec's backward compatibility: the GET goes to the same URL,
 * then to a sibling /sse when the URL ends in /mcp).
 *
 * Threads: the client's loop thread only. libcurl refuses to be called
 * from its own callbacks, so transfers started or cut while it runs one
 * are queued and handled once it returns (settle).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "client/client-int.h"

#define MAX_RESUMES	3	/* GETs to resume one dropped stream */
#define MAX_ERRBODY	4096	/* bytes of an error body kept to show */
#define LISTEN_RETRY_S	1.0
#define LISTEN_MAX_FAIL	5

enum xkind {
	X_POST,		/* one message */
	X_RESUME,	/* a GET resuming a POST's stream */
	X_LISTEN,	/* the GET stream for server messages */
	X_SSE		/* the legacy transport's stream */
};

enum ctype {
	CT_NONE,
	CT_JSON,
	CT_SSE,
	CT_OTHER
};

struct chttp;

struct xfer {
	struct xfer		*next;
	struct xfer		*prev;
	struct chttp		*h;
	enum xkind		 kind;
	CURL			*easy;
	struct curl_slist	*hdrs;
	struct creq		*r;		/* the request, while it waits */
	long long		 rid;
	int			 is_init;
	int			 with_session;	/* the generation of the
						   Mcp-Session-Id it had */
	int			 added;		/* in the multi handle */
	int			 cut;		/* to be removed, unanswered */
	long			 status;
	enum ctype		 ctype;
	int			 seen_headers;
	struct buf		 body;		/* JSON, or an error's text */
	int			 over;		/* JSON body over max-message */
	struct idscan		 scan;
	struct sse_parser	 sse;
	int			 resumes;
	char			 errbuf[CURL_ERROR_SIZE];
	char			 www_auth[256];
};

struct sockw {
	ev_io		 io;
	struct chttp	*h;
	curl_socket_t	 fd;
};

struct chttp {
	struct mcp_client	*c;
	CURLM			*multi;
	ev_timer		 timer;
	int			 in_curl;
	struct xfer		*xfers;		/* every live transfer */
	struct xfer		*to_add;	/* made while in curl */
	int			 sse;		/* legacy mode */
	int			 fallback;	/* 1: GET url tried, 2: /sse */
	char			*sse_url;
	char			*endpoint;	/* legacy: where POSTs go */
	struct buf		 waiting;	/* legacy: sent before endpoint */
	char			*session;	/* Mcp-Session-Id */
	int			 had_session;	/* Streamable HTTP worked */
	int			 generation;	/* of the session id, from 1 */
	struct xfer		*listener;
	char			 listen_id[256];
	int			 listen_fails;
	int			 no_listen;
	ev_timer		 relisten;
	char			 version_hdr[48];
};

static void	 settle(struct chttp *);
static void	 flush_waiting(struct chttp *);
static void	 open_sse(struct chttp *, const char *);
static void	 open_listener(struct chttp *);

static pthread_once_t	 curl_once = PTHREAD_ONCE_INIT;

static void
curl_start(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- Transfers ------------------------------------------------------- */

static void
xfer_free(struct xfer *x)
{
	struct chttp	*h = x->h;

	if (x->added)
		curl_multi_remove_handle(h->multi, x->easy);
	if (x->prev != NULL)
		x->prev->next = x->next;
	else if (h->xfers == x)
		h->xfers = x->next;
	if (x->next != NULL)
		x->next->prev = x->prev;
	if (h->listener == x)
		h->listener = NULL;
	if (x->r != NULL && x->r->tstate == x)
		x->r->tstate = NULL;
	curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->hdrs);
	mcp__buf_free(&x->body);
	mcp__sse_parser_free(&x->sse);
	free(x);
}

/* Starts X: now, or once libcurl has returned from its callback. */
static void
xfer_go(struct xfer *x)
{
	struct chttp	*h = x->h;

	x->next = h->xfers;
	if (h->xfers != NULL)
		h->xfers->prev = x;
	h->xfers = x;
	if (h->in_curl) {
		x->cut = 0;
		x->added = 0;
		return;		/* settle adds it */
	}
	if (curl_multi_add_handle(h->multi, x->easy) == CURLM_OK)
		x->added = 1;
}

static size_t	 header_cb(char *, size_t, size_t, void *);
static size_t	 write_cb(char *, size_t, size_t, void *);

/* A transfer to URL with the client's headers and the session's. */
static struct xfer *
xfer_new(struct chttp *h, enum xkind kind, const char *url)
{
	struct mcp_client	*c = h->c;
	struct xfer		*x;
	struct curl_slist	*l = NULL;
	char			 line[320];
	int			 i;

	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->h = h;
	x->kind = kind;
	x->easy = curl_easy_init();
	if (x->easy == NULL) {
		free(x);
		return NULL;
	}
	mcp__sse_parser_init(&x->sse, c->max_message);
	for (i = 0; i < c->nheaders; i++)
		l = curl_slist_append(l, c->headers[i]);
	if (kind == X_POST) {
		l = curl_slist_append(l, "Content-Type: application/json");
		l = curl_slist_append(l, h->sse ? "Accept: application/json" :
		    "Accept: application/json, text/event-stream");
	} else {
		l = curl_slist_append(l, "Accept: text/event-stream");
	}
	if (h->session != NULL && !h->sse) {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", h->session);
		l = curl_slist_append(l, line);
		x->with_session = h->generation;
	}
	if (h->version_hdr[0] != '\0' && !h->sse)
		l = curl_slist_append(l, h->version_hdr);
	l = curl_slist_append(l, "Expect:");
	x->hdrs = l;
	curl_easy_setopt(x->easy, CURLOPT_URL, url);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, l);
	curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(c->connect_timeout * 1000));
	curl_easy_setopt(x->easy, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->cacert != NULL)
		curl_easy_setopt(x->easy, CURLOPT_CAINFO, c->cacert);
	if (c->insecure) {
		curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(x->easy, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (l == NULL) {
		xfer_free(x);
		return NULL;
	}
	return x;
}

/* Cuts X, whose request ended unanswered, or which is no longer needed. */
static void
xfer_cut(struct xfer *x)
{
	if (x->h->in_curl) {
		x->cut = 1;	/* settle removes it */
		return;
	}
	xfer_free(x);
}

/* ---- What comes back ------------------------------------------------- */

static size_t
header_cb(char *p, size_t size, size_t n, void *arg)
{
	struct xfer	*x = arg;
	struct chttp	*h = x->h;
	size_t		 len = size * n, k, v;

	if (len > 15 && strncasecmp(p, "Mcp-Session-Id:", 15) == 0 &&
	    x->kind == X_POST && !h->sse && !h->c->modern) {
		for (k = 15; k < len && (p[k] == ' ' || p[k] == '\t'); k++)
			;
		for (v = len; v > k && (p[v - 1] == '\r' ||
		    p[v - 1] == '\n' || p[v - 1] == ' '); v--)
			;
		if (v > k && v - k < 200 && (h->session == NULL ||
		    strlen(h->session) != v - k ||
		    memcmp(h->session, p + k, v - k) != 0)) {
			free(h->session);
			h->session = strndup(p + k, v - k);
			h->generation++;
		}
	} else if (len > 17 && strncasecmp(p, "WWW-Authenticate:", 17) == 0) {
		for (k = 17; k < len && p[k] == ' '; k++)
			;
		for (v = len; v > k && (p[v - 1] == '\r' || p[v - 1] == '\n');
		    v--)
			;
		snprintf(x->www_auth, sizeof(x->www_auth), "%.*s",
		    (int)(v - k), p + k);
	}
	return len;
}

/* Do URLs A and B have one scheme, host and port? */
static int
same_origin(const char *a, const char *b)
{
	static const CURLUPart parts[] = {
		CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT
	};
	CURLU	*ua = curl_url(), *ub = curl_url();
	char	*pa, *pb;
	size_t	 i;
	int	 same = ua != NULL && ub != NULL &&
		    curl_url_set(ua, CURLUPART_URL, a, 0) == CURLUE_OK &&
		    curl_url_set(ub, CURLUPART_URL, b, 0) == CURLUE_OK;

	for (i = 0; same && i < sizeof(parts) / sizeof(parts[0]); i++) {
		pa = pb = NULL;
		same = curl_url_get(ua, parts[i], &pa, CURLU_DEFAULT_PORT) ==
		    CURLUE_OK && curl_url_get(ub, parts[i], &pb,
		    CURLU_DEFAULT_PORT) == CURLUE_OK && strcasecmp(pa, pb) == 0;
		curl_free(pa);
		curl_free(pb);
	}
	curl_url_cleanup(ua);
	curl_url_cleanup(ub);
	return same;
}

/* An SSE event: a message, or the legacy stream's endpoint. */
static void
event_cb(void *arg, const char *event, const char *data, size_t len,
    const char *id)
{
	struct xfer		*x = arg;
	struct chttp		*h = x->h;
	CURLU			*u;
	char			*abs = NULL;

	(void)id;
	if (x->kind == X_SSE && strcmp(event, "endpoint") == 0) {
		u = curl_url();
		if (u != NULL && curl_url_set(u, CURLUPART_URL, h->sse_url,
		    0) == CURLUE_OK && curl_url_set(u, CURLUPART_URL, data,
		    0) == CURLUE_OK)
			(void)curl_url_get(u, CURLUPART_URL, &abs, 0);
		curl_url_cleanup(u);
		if (abs == NULL) {
			mcp__client_lost(h->c, MCP_EPROTO, "the SSE stream's "
			    "endpoint event holds no usable URL");
			return;
		}
		if (!same_origin(abs, h->sse_url)) {
			/* The client's headers (a token) would follow it. */
			curl_free(abs);
			mcp__client_lost(h->c, MCP_EPROTO, "the SSE stream's "
			    "endpoint is on another origin than the stream; "
			    "refused");
			return;
		}
		free(h->endpoint);
		h->endpoint = strdup(abs);
		curl_free(abs);
		flush_waiting(h);
		return;
	}
	if (strcmp(event, "message") != 0 || len == 0)
		return;		/* a priming event, or one of no concern */
	/* The stream moves on: a later drop may be resumed afresh. */
	x->resumes = 0;
	mcp__client_input(h->c, data, len);
}

static void
sse_over_cb(void *arg, const struct idscan *sc)
{
	struct xfer	*x = arg;

	mcp__client_oversized(x->h->c, sc);
}

static enum ctype
ctype_of(CURL *e)
{
	char	*ct = NULL;

	curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &ct);
	if (ct == NULL)
		return CT_NONE;
	if (strncasecmp(ct, "application/json", 16) == 0)
		return CT_JSON;
	if (strncasecmp(ct, "text/event-stream", 17) == 0)
		return CT_SSE;
	return CT_OTHER;
}

static size_t
write_cb(char *p, size_t size, size_t n, void *arg)
{
	struct xfer	*x = arg;
	size_t		 len = size * n;

	if (x->cut)
		return 0;	/* ends the transfer: settle frees it */
	if (!x->seen_headers) {
		x->seen_headers = 1;
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
		x->ctype = ctype_of(x->easy);
	}
	if (x->status == 200 && x->ctype == CT_SSE) {
		if (mcp__sse_feed(&x->sse, p, len, event_cb, sse_over_cb,
		    x) != MCP_OK)
			return 0;
		return x->cut ? 0 : len;
	}
	if (x->status >= 200 && x->status < 300 && x->ctype == CT_JSON) {
		if (x->over) {
			mcp__idscan_feed(&x->scan, p, len);
		} else if (x->body.len + len > x->h->c->max_message) {
			mcp__idscan_init(&x->scan);
			mcp__idscan_feed(&x->scan, x->body.data, x->body.len);
			mcp__idscan_feed(&x->scan, p, len);
			mcp__buf_free(&x->body);
			x->over = 1;
		} else if (mcp__buf_add(&x->body, p, len) != MCP_OK) {
			return 0;
		}
		return len;
	}
	/* An error's body, or one of no known type: a little of it. */
	if (x->body.len < MAX_ERRBODY)
		(void)mcp__buf_add(&x->body, p, len < MAX_ERRBODY -
		    x->body.len ? len : MAX_ERRBODY - x->body.len);
	return len;
}

/* ---- Ends of transfers ----------------------------------------------- */

/* The request X carries, if it still waits for its answer. */
static struct creq *
waiting(struct xfer *x)
{
	if (x->r == NULL)
		return NULL;
	if (mcp__pending_find(&x->h->c->pend, x->rid) != &x->r->pe)
		return NULL;
	return x->r;
}

/* "HTTP 500: body..." or curl's reason, for an error message. */
static void
describe(struct xfer *x, CURLcode res, char *out, size_t len)
{
	size_t	 i, n;
	char	 text[200];

	if (res != CURLE_OK && x->status == 0) {
		snprintf(out, len, "%s", x->errbuf[0] != '\0' ? x->errbuf :
		    curl_easy_strerror(res));
		return;
	}
	n = x->body.len < sizeof(text) - 1 ? x->body.len : sizeof(text) - 1;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)x->body.data[i];

		text[i] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	while (n > 0 && text[n - 1] == ' ')
		n--;		/* a body's own line end */
	text[n] = '\0';
	if (x->status == 401)
		snprintf(out, len, "HTTP 401 (unauthorized)%s%.200s%s%.150s",
		    x->www_auth[0] != '\0' ? "; WWW-Authenticate: " : "",
		    x->www_auth, n > 0 ? ": " : "", text);
	else
		snprintf(out, len, "HTTP %ld%s%.190s", x->status, n > 0 ? ": " :
		    "", text);
}

/* A GET that takes up X's stream where it dropped, at its last id. */
static int
resume(struct xfer *x)
{
	struct chttp	*h = x->h;
	struct xfer	*y;
	struct creq	*r = waiting(x);
	char		 line[300];

	if (h->sse || h->c->modern || x->sse.last_id[0] == '\0' ||
	    x->resumes >= MAX_RESUMES)
		return 0;	/* 2026-07-28: streams are not resumable */
	y = xfer_new(h, x->kind == X_LISTEN ? X_LISTEN : X_RESUME,
	    h->c->url);
	if (y == NULL)
		return 0;
	snprintf(line, sizeof(line), "Last-Event-ID: %s", x->sse.last_id);
	y->hdrs = curl_slist_append(y->hdrs, line);
	curl_easy_setopt(y->easy, CURLOPT_HTTPHEADER, y->hdrs);
	y->resumes = x->resumes + 1;
	snprintf(y->sse.last_id, sizeof(y->sse.last_id), "%s",
	    x->sse.last_id);
	if (r != NULL) {
		y->r = r;
		y->rid = x->rid;
		r->tstate = y;
		x->r = NULL;
	}
	if (x->kind == X_LISTEN)
		h->listener = y;
	MCP_LOG(MCP_LOG_INFO, "client: the stream dropped; resuming after "
	    "event %s", x->sse.last_id);
	xfer_go(y);
	return 1;
}

/* The legacy stream could not be opened here: the next URL, or lost. */
static void
sse_failed(struct xfer *x, const char *why)
{
	struct chttp	*h = x->h;
	char		 msg[600], *alt;
	size_t		 n;

	if (h->fallback == 1 && h->c->url != NULL) {
		n = strlen(h->c->url);
		if (n > 4 && strcmp(h->c->url + n - 4, "/mcp") == 0 &&
		    (alt = strdup(h->c->url)) != NULL) {
			memcpy(alt + n - 4, "/sse", 4);
			h->fallback = 2;
			open_sse(h, alt);
			free(alt);
			return;
		}
	}
	snprintf(msg, sizeof(msg), "%s: %s", h->fallback ? "neither "
	    "Streamable HTTP nor the legacy SSE transport answered; GET" :
	    "GET", why);
	mcp__client_lost(h->c, MCP_EIO, msg);
}

/* The server no longer knows our session: forget it, open another. */
static void
session_lost(struct chttp *h, struct creq *r)
{
	free(h->session);
	h->session = NULL;
	h->version_hdr[0] = '\0';
	mcp__client_session_gone(h->c, r);
}

/*
 * 2026-07-28: a 4xx to R's POST. Its body, a JSON-RPC error with R's
 * id (-32022 or -32020 with 400, -32601 with 404), is R's answer. The
 * probe's 4xx without one is a legacy server's (basic/transports/
 * streamable-http, Backward Compatibility); not 401 or 403, which are
 * the authorization's. Non-zero when R has ended.
 */
static int
modern_refusal(struct xfer *x, struct creq *r)
{
	struct mcp_client	*c = x->h->c;
	int			 probe = r == c->probe;

	if (x->ctype == CT_JSON && x->body.len > 0 &&
	    x->body.len < MAX_ERRBODY) {
		(void)mcp__buf_addc(&x->body, '\0');
		mcp__client_input(c, x->body.data, x->body.len - 1);
		x->body.len--;
		if (waiting(x) == NULL)
			return 1;
	}
	if (probe && x->status < 500 && x->status != 401 &&
	    x->status != 403)
		c->probe_legacy = 1;
	return 0;
}

static void
done(struct xfer *x, CURLcode res)
{
	struct chttp		*h = x->h;
	struct mcp_client	*c = h->c;
	struct creq		*r;
	char			 why[400];

	if (!x->seen_headers) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
		x->ctype = ctype_of(x->easy);
	}
	r = waiting(x);
	if (x->status == 404 && x->with_session && !h->sse &&
	    x->kind != X_LISTEN) {
		/*
		 * The session is gone. Another transfer may have found out
		 * first: then a new one is being opened, and R waits for it.
		 */
		if (h->session != NULL && x->with_session == h->generation)
			session_lost(h, r);
		else if (r != NULL)
			mcp__client_resend(c, r);
		return;
	}
	MCP_LOG(MCP_LOG_DEBUG, "client: %s ended: HTTP %ld, curl %d, for "
	    "id %lld", x->kind == X_POST ? "POST" : "GET", x->status,
	    (int)res, r != NULL ? r->pe.id : -1);
	switch (x->kind) {
	case X_SSE:
		if (x->status == 200 && x->ctype == CT_SSE) {
			mcp__client_lost(c, MCP_EIO, "the SSE stream ended; "
			    "the legacy transport cannot resume it");
			break;
		}
		describe(x, res, why, sizeof(why));
		sse_failed(x, why);
		break;
	case X_LISTEN:
		if (x->status >= 400 && x->status < 500) {
			/* The server offers none: 405 as the spec says, or
			 * 404 from one that routes POST only (a lost session
			 * shows in the POSTs). */
			h->no_listen = 1;
			break;
		}
		if (x->status == 200 && x->ctype == CT_SSE)
			h->listen_fails = 0;	/* it was up: not a failure */
		if (c->state == CS_READY && !resume(x) &&
		    ++h->listen_fails <= LISTEN_MAX_FAIL) {
			snprintf(h->listen_id, sizeof(h->listen_id), "%s",
			    x->sse.last_id);
			ev_timer_stop(c->loop, &h->relisten);
			ev_timer_set(&h->relisten, x->sse.retry_ms > 0 ?
			    (x->sse.retry_ms > 30000 ? 30. :
			    x->sse.retry_ms / 1000.) : LISTEN_RETRY_S, 0.);
			ev_timer_start(c->loop, &h->relisten);
		}
		break;
	case X_POST:
	case X_RESUME:
		if (r == NULL)
			break;		/* answered (or ended) already */
		if (c->modern && x->status >= 400 && modern_refusal(x, r))
			break;
		if (x->is_init && !h->sse && c->force == 0 && !h->had_session &&
		    x->status >= 400 && x->status < 500 && x->status != 401 &&
		    x->status != 403) {
			/* The backward-compatible path: legacy SSE. */
			MCP_LOG(MCP_LOG_INFO, "client: POST initialize got "
			    "HTTP %ld; trying the legacy SSE transport",
			    x->status);
			x->r = NULL;
			r->tstate = NULL;
			h->fallback = 1;
			h->sse = 1;
			c->tname = "sse";
			open_sse(h, c->url);
			(void)mcp__buf_add(&h->waiting, r->body, r->len);
			(void)mcp__buf_addc(&h->waiting, '\n');
			break;
		}
		if (h->sse && x->status >= 200 && x->status < 300)
			break;		/* the answer comes on the stream */
		if (x->status >= 200 && x->status < 300 &&
		    x->ctype == CT_JSON) {
			if (x->over) {
				mcp__client_oversized(c, &x->scan);
			} else if (x->body.len > 0) {
				(void)mcp__buf_addc(&x->body, '\0');
				mcp__client_input(c, x->body.data,
				    x->body.len - 1);
			}
			if (waiting(x) != NULL)
				mcp__client_fail(c, r, MCP_EPROTO, "the JSON "
				    "body did not hold the answer");
			break;
		}
		if (x->status == 200 && x->ctype == CT_SSE) {
			if (resume(x))
				break;
			mcp__client_fail(c, r, MCP_EIO, res != CURLE_OK ?
			    "the answer's stream dropped before the answer, "
			    "with no event id to resume from" :
			    "the answer's stream ended without the answer");
			break;
		}
		if (h->sse && x->status >= 200 && x->status < 300)
			break;		/* the answer comes on the stream */
		if (x->status >= 200 && x->status < 300) {
			snprintf(why, sizeof(why), "HTTP %ld with a %s body "
			    "for a request", x->status, x->ctype == CT_NONE ?
			    "missing" : "non-JSON, non-SSE");
			mcp__client_fail(c, r, MCP_EPROTO, why);
			break;
		}
		describe(x, res, why, sizeof(why));
		mcp__client_fail(c, r, MCP_EIO, why);
		break;
	}
	if (x->kind == X_POST && r == NULL && x->status >= 300 &&
	    res == CURLE_OK && !x->cut) {
		describe(x, res, why, sizeof(why));
		MCP_LOG(MCP_LOG_INFO, "client: POST of a notification or "
		    "reply: %s", why);
	}
}

/*
 * After each run of libcurl: transfers that ended, transfers cut while
 * it ran, transfers made while it ran. Ends may start new transfers
 * (the core answers, resends, resumes), hence the loop.
 */
static void
settle(struct chttp *h)
{
	CURLMsg		*m;
	struct xfer	*x, *next;
	int		 left, again = 1;

	while (again) {
		again = 0;
		while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
			if (m->msg != CURLMSG_DONE)
				continue;
			x = NULL;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
			    (char **)&x);
			if (x == NULL)
				continue;
			/* What done() cuts or starts waits for the pass below. */
			h->in_curl++;
			if (!x->cut)
				done(x, m->data.result);
			h->in_curl--;
			x->cut = 0;
			xfer_free(x);
			again = 1;
		}
		for (x = h->xfers; x != NULL; x = next) {
			next = x->next;
			if (x->cut) {
				xfer_free(x);
			} else if (!x->added) {
				if (curl_multi_add_handle(h->multi, x->easy) ==
				    CURLM_OK)
					x->added = 1;
				else
					x->cut = 1;
				again = 1;
			}
		}
	}
}

/* ---- libcurl in libev ------------------------------------------------ */

static void
act(struct chttp *h, curl_socket_t fd, int what)
{
	int	 running;

	h->in_curl++;
	curl_multi_socket_action(h->multi, fd, what, &running);
	h->in_curl--;
	if (h->in_curl == 0)
		settle(h);
}

static void
io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct sockw	*s = (struct sockw *)w;

	(void)loop;
	act(s->h, s->fd, (revents & EV_READ ? CURL_CSELECT_IN : 0) |
	    (revents & EV_WRITE ? CURL_CSELECT_OUT : 0));
}

static void
timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	act(w->data, CURL_SOCKET_TIMEOUT, 0);
}

static int
sock_cb(CURL *e, curl_socket_t fd, int what, void *userp, void *sockp)
{
	struct chttp	*h = userp;
	struct sockw	*s = sockp;
	int		 ev = 0;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			ev_io_stop(h->c->loop, &s->io);
			free(s);
			curl_multi_assign(h->multi, fd, NULL);
		}
		return 0;
	}
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return -1;
		s->h = h;
		s->fd = fd;
		ev_init(&s->io, io_cb);
		curl_multi_assign(h->multi, fd, s);
	} else {
		ev_io_stop(h->c->loop, &s->io);
	}
	if (what & CURL_POLL_IN)
		ev |= EV_READ;
	if (what & CURL_POLL_OUT)
		ev |= EV_WRITE;
	ev_io_set(&s->io, fd, ev);
	ev_io_start(h->c->loop, &s->io);
	return 0;
}

static int
curl_timer_cb(CURLM *m, long ms, void *userp)
{
	struct chttp	*h = userp;

	(void)m;
	ev_timer_stop(h->c->loop, &h->timer);
	if (ms >= 0) {
		ev_timer_set(&h->timer, ms / 1000.0, 0.);
		ev_timer_start(h->c->loop, &h->timer);
	}
	return 0;
}

/* ---- Streams --------------------------------------------------------- */

static void
open_sse(struct chttp *h, const char *url)
{
	struct xfer	*x;

	free(h->sse_url);
	h->sse_url = strdup(url);
	x = h->sse_url != NULL ? xfer_new(h, X_SSE, url) : NULL;
	if (x == NULL) {
		mcp__client_lost(h->c, MCP_ENOMEM, NULL);
		return;
	}
	xfer_go(x);
}

static void
open_listener(struct chttp *h)
{
	struct xfer	*x;
	char		 line[300];

	if (h->sse || h->no_listen || !h->c->listen || h->listener != NULL ||
	    h->c->state != CS_READY || h->c->modern)
		return;
	x = xfer_new(h, X_LISTEN, h->c->url);
	if (x == NULL)
		return;
	if (h->listen_id[0] != '\0') {
		snprintf(line, sizeof(line), "Last-Event-ID: %s",
		    h->listen_id);
		x->hdrs = curl_slist_append(x->hdrs, line);
		curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->hdrs);
	}
	h->listener = x;
	xfer_go(x);
}

static void
relisten_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	open_listener(w->data);
}

/* ---- The transport --------------------------------------------------- */

static int
http_start(struct mcp_client *c)
{
	struct chttp	*h;

	pthread_once(&curl_once, curl_start);
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return MCP_ENOMEM;
	c->t = h;
	h->c = c;
	h->multi = curl_multi_init();
	if (h->multi == NULL)
		return MCP_ENOMEM;
	ev_timer_init(&h->timer, timer_cb, 0., 0.);
	h->timer.data = h;
	ev_timer_init(&h->relisten, relisten_cb, 1., 0.);
	h->relisten.data = h;
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	if (c->force == 2) {
		h->sse = 1;
		c->tname = "sse";
		open_sse(h, c->url);
	}
	return MCP_OK;
}

/*
 * "Mcp-Name: V" with V as the spec wants a header value: plain when it
 * is visible ASCII or inner spaces, else (control bytes, non-ASCII,
 * spaces at an end, empty, or what looks like the encoding itself)
 * "=?base64?...?=" of its UTF-8 bytes. NULL on ENOMEM.
 */
static char *
name_header(const char *v)
{
	size_t		 n = strlen(v), i;
	int		 plain = n > 0 && v[0] != ' ' && v[n - 1] != ' ';
	char		*b64, *out;

	for (i = 0; plain && i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			plain = 0;
	if (plain && n >= 11 && strncmp(v, "=?base64?", 9) == 0 &&
	    strcmp(v + n - 2, "?=") == 0)
		plain = 0;
	if (plain) {
		out = malloc(n + 11);
		if (out != NULL)
			snprintf(out, n + 11, "Mcp-Name: %s", v);
		return out;
	}
	b64 = mcp__base64(v, n);
	if (b64 == NULL)
		return NULL;
	n = strlen(b64) + 24;
	out = malloc(n);
	if (out != NULL)
		snprintf(out, n, "Mcp-Name: =?base64?%s?=", b64);
	free(b64);
	return out;
}

/* 2026-07-28: the headers that mirror the body, onto X. A message of no
 * request of ours (a notification) names its method from its JSON. */
static int
modern_headers(struct xfer *x, const char *json, size_t len,
    struct creq *r)
{
	char		 line[300], *nh;
	const char	*method = r != NULL ? r->method : NULL;
	json_t		*v = NULL;
	struct json_perr e;

	if (method == NULL) {
		v = mcp__json_parse(json, len, &e);
		method = json_string_value(json_object_get(v, "method"));
	}
	x->hdrs = curl_slist_append(x->hdrs, "MCP-Protocol-Version: "
	    MCP_CLIENT_MODERN);
	if (method != NULL && strlen(method) < 200 &&
	    strpbrk(method, "\r\n") == NULL) {
		snprintf(line, sizeof(line), "Mcp-Method: %s", method);
		x->hdrs = curl_slist_append(x->hdrs, line);
	}
	json_decref(v);
	if (r != NULL && r->hname != NULL) {
		nh = name_header(r->hname);
		if (nh == NULL)
			return MCP_ENOMEM;
		x->hdrs = curl_slist_append(x->hdrs, nh);
		free(nh);
	}
	if (r != NULL && r->pheaders != NULL) {
		size_t	 i;
		json_t	*l;

		json_array_foreach(r->pheaders, i, l)
			x->hdrs = curl_slist_append(x->hdrs,
			    json_string_value(l));
	}
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->hdrs);
	return x->hdrs != NULL ? MCP_OK : MCP_ENOMEM;
}

/* Legacy: POSTs wait for the endpoint event. */
static void
post(struct chttp *h, const char *json, size_t len, struct creq *r)
{
	struct xfer	*x;
	const char	*url = h->sse ? h->endpoint : h->c->url;

	x = xfer_new(h, X_POST, url);
	if (x != NULL && h->c->modern && !h->sse &&
	    modern_headers(x, json, len, r) != MCP_OK) {
		xfer_free(x);
		x = NULL;
	}
	if (x == NULL) {
		if (r != NULL)
			mcp__client_fail(h->c, r, MCP_ENOMEM, NULL);
		return;
	}
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE, (long)len);
	curl_easy_setopt(x->easy, CURLOPT_COPYPOSTFIELDS, json);
	if (r == NULL)		/* no request's timer ends it */
		curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS,
		    (long)(h->c->timeout * 1000));
	if (r != NULL) {
		x->r = r;
		x->rid = r->pe.id;
		x->is_init = r == h->c->init;
		r->tstate = x;
	}
	xfer_go(x);
}

static void
flush_waiting(struct chttp *h)
{
	char	*p, *end, *nl;

	if (h->endpoint == NULL || h->waiting.len == 0)
		return;
	p = h->waiting.data;
	end = p + h->waiting.len;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		*nl = '\0';
		post(h, p, (size_t)(nl - p), NULL);
		p = nl + 1;
	}
	mcp__buf_reset(&h->waiting);
}

static void
http_send(struct mcp_client *c, const char *json, size_t len,
    struct creq *r)
{
	struct chttp	*h = c->t;

	if (h->sse && h->endpoint == NULL) {
		/* Not known yet: sent when the endpoint event comes. */
		if (h->waiting.len + len > 4 * c->max_message) {
			if (r != NULL)
				mcp__client_fail(c, r, MCP_EPROTO, "the SSE "
				    "stream has sent no endpoint event");
			return;
		}
		if (mcp__buf_add(&h->waiting, json, len) != MCP_OK ||
		    mcp__buf_addc(&h->waiting, '\n') != MCP_OK) {
			if (r != NULL)
				mcp__client_fail(c, r, MCP_ENOMEM, NULL);
		}
		return;
	}
	flush_waiting(h);
	post(h, json, len, r);
}

static void
http_forget(struct mcp_client *c, struct creq *r, int answered)
{
	struct xfer	*x = r->tstate;

	(void)c;
	r->tstate = NULL;
	if (x == NULL)
		return;
	x->r = NULL;
	if (!answered)
		xfer_cut(x);
}

static void
http_ready(struct mcp_client *c)
{
	struct chttp	*h = c->t;

	if (!h->sse) {
		/* 2026-07-28: each POST says it itself (modern_headers). */
		if (!c->modern)
			snprintf(h->version_hdr, sizeof(h->version_hdr),
			    "MCP-Protocol-Version: %s", c->negotiated);
		h->had_session = 1;
	}
	h->listen_fails = 0;
	open_listener(h);
}

/*
 * Closing: every transfer cut, then DELETE for the session, as the spec
 * asks of a client that is done with one; blocking, for at most
 * MCP_CLIENT_CLOSE_S.
 */
static void
http_close(struct mcp_client *c)
{
	struct chttp	*h = c->t;
	struct xfer	*x;
	CURL		*e;
	struct curl_slist *l = NULL;
	char		 line[320];
	int		 i;

	if (h == NULL)
		return;
	while ((x = h->xfers) != NULL)
		xfer_free(x);
	ev_timer_stop(c->loop, &h->timer);
	ev_timer_stop(c->loop, &h->relisten);
	if (h->session != NULL && !h->sse && (e = curl_easy_init()) != NULL) {
		for (i = 0; i < c->nheaders; i++)
			l = curl_slist_append(l, c->headers[i]);
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", h->session);
		l = curl_slist_append(l, line);
		if (h->version_hdr[0] != '\0')
			l = curl_slist_append(l, h->version_hdr);
		curl_easy_setopt(e, CURLOPT_URL, c->url);
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE");
		curl_easy_setopt(e, CURLOPT_HTTPHEADER, l);
		curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
		    (long)(MCP_CLIENT_CLOSE_S * 1000));
		if (c->cacert != NULL)
			curl_easy_setopt(e, CURLOPT_CAINFO, c->cacert);
		if (c->insecure) {
			curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
			curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
		}
		(void)curl_easy_perform(e);
		curl_easy_cleanup(e);
		curl_slist_free_all(l);
	}
	curl_multi_cleanup(h->multi);
	free(h->session);
	free(h->sse_url);
	free(h->endpoint);
	mcp__buf_free(&h->waiting);
	free(h);
	c->t = NULL;
}

const struct ctransport_ops mcp__client_http_ops = {
	"http",
	http_start,
	http_send,
	http_forget,
	http_ready,
	http_close,
};
