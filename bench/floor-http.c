/*
 * floor-http: the fastest legacy HTTP+SSE "MCP server" we can write, the
 * floor that libmcp's SSE transport is measured against.
 *
 *   floor-http [ADDR:]PORT		(default 127.0.0.1:0)
 *
 * It logs "listening on http://ADDR:PORT" on stderr, like mcp-demo.
 * GET /sse opens a stream: a 200 with text/event-stream, no framing (the
 * stream ends when the connection does), and an "endpoint" event naming
 * /messages?sessionId=ID.  Each POST /messages?sessionId=ID with a
 * Content-Length body is answered 202 with an empty body, and when the
 * body carries an "id", one canned "event: message" holding the same id
 * is queued on the session's stream: an initialize result for initialize,
 * otherwise an echo tool result whose text is the raw "text" string of the
 * request, copied byte for byte (as bench/floor-stdio.c does).  There is
 * no JSON parsing, only scanning for "id", "method" and "text", and no
 * header parsing beyond the request line and Content-Length.
 *
 * It is the Streamable HTTP floor too: a POST /mcp is answered in its own
 * response, keep-alive, with the same canned answer as an
 * application/json body (Content-Length), an initialize's with
 * "Mcp-Session-Id: floor"; a body without an "id" (a notification) gets
 * 202.  No header is checked, so stateful and stateless clients alike
 * work.
 *
 * One thread, epoll, non-blocking sockets.  The answers produced during
 * one epoll_wait batch go out together: one write per connection per
 * batch, streams included.  Pipelined requests work.  Anything else is a
 * 404 (or a 400 for a request it cannot frame).  SIGTERM and SIGINT exit
 * 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_EVENTS	256
#define MAX_HEAD	(64 * 1024)
#define MAX_BODY	(4 * 1024 * 1024)

static const char init_result[] =
    "\"result\":{\"protocolVersion\":\"2025-06-18\","
    "\"capabilities\":{\"tools\":{}},"
    "\"serverInfo\":{\"name\":\"floor-http\",\"version\":\"0.1.0\"}}}";
static const char echo_head[] =
    "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"";
static const char echo_tail[] = "\"}]}}";
static const char msg_head[] =
    "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":";
/* The same message as a Streamable HTTP POST's JSON body. */
static const char json_head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
static const char sse_head[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream\r\n"
    "Cache-Control: no-cache, no-transform\r\n"
    "X-Accel-Buffering: no\r\n"
    "Connection: keep-alive\r\n"
    "\r\n"
    "event: endpoint\ndata: /messages?sessionId=";
static const char accepted[] =
    "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n";
static const char not_found[] =
    "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
static const char bad_request[] =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n"
    "\r\n";

struct conn {
	int		 fd;
	int		 stream;	/* a GET /sse stream */
	int		 closing;	/* close once the output is written */
	int		 dirty;		/* on the flush list */
	int		 wantout;	/* EPOLLOUT registered */
	uint32_t	 sess;		/* stream: its session index */
	char		 sid[33];	/* stream: its session id */
	char		*in;
	size_t		 ilen, icap;
	char		*out;
	size_t		 olen, ooff, ocap;
	struct conn	*next;		/* flush list */
};

static int		 ep;
static struct conn	**sessions;	/* index -> stream, or NULL */
static uint32_t		 nsess, capsess;
static uint32_t		*freesess;	/* free session indices */
static uint32_t		 nfreesess;
static struct conn	*flushq;

static void
die(const char *msg)
{
	fprintf(stderr, "floor-http: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (p == NULL)
		die("realloc");
	return p;
}

static void
on_term(int sig)
{
	(void)sig;
	_exit(0);
}

static void
put(struct conn *c, const char *s, size_t n)
{
	if (c->olen + n > c->ocap) {
		if (c->ooff > 0) {
			memmove(c->out, c->out + c->ooff, c->olen - c->ooff);
			c->olen -= c->ooff;
			c->ooff = 0;
		}
		if (c->olen + n > c->ocap) {
			c->ocap = (c->olen + n) * 2;
			c->out = xrealloc(c->out, c->ocap);
		}
	}
	memcpy(c->out + c->olen, s, n);
	c->olen += n;
	if (!c->dirty) {
		c->dirty = 1;
		c->next = flushq;
		flushq = c;
	}
}

static void
drop(struct conn *c)
{
	if (c->stream) {
		sessions[c->sess] = NULL;
		freesess[nfreesess++] = c->sess;
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	/* Freed after the batch: it may still be on the flush list. */
	if (!c->dirty) {
		free(c->in);
		free(c->out);
		free(c);
	}
}

/* Write what is queued.  Returns -1 if the connection was dropped. */
static int
flush(struct conn *c)
{
	struct epoll_event	 ev;
	ssize_t			 n;

	while (c->ooff < c->olen) {
		n = write(c->fd, c->out + c->ooff, c->olen - c->ooff);
		if (n > 0) {
			c->ooff += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			if (!c->wantout) {
				c->wantout = 1;
				ev.events = EPOLLIN | EPOLLOUT;
				ev.data.ptr = c;
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			}
			return 0;
		}
		drop(c);
		return -1;
	}
	c->olen = c->ooff = 0;
	if (c->wantout) {
		c->wantout = 0;
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
	}
	if (c->closing) {
		drop(c);
		return -1;
	}
	return 0;
}

/* Find "KEY" then blanks, a colon and blanks: return what follows. */
static const char *
after_key(const char *p, const char *end, const char *key, size_t klen)
{
	for (;;) {
		p = memmem(p, (size_t)(end - p), key, klen);
		if (p == NULL)
			return NULL;
		p += klen;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == ':') {
			p++;
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			return p;
		}
	}
}

/* The closing quote of the JSON string whose contents start at P. */
static const char *
string_end(const char *p, const char *end)
{
	const char	*q, *b;

	for (;;) {
		q = memchr(p, '"', (size_t)(end - p));
		if (q == NULL)
			return end;
		for (b = q; b > p && b[-1] == '\\'; b--)
			continue;
		if ((q - b) % 2 == 0)
			return q;
		p = q + 1;
	}
}

/* What the answer to a message needs from it. */
struct msg {
	const char	*id;		/* the id's JSON text */
	size_t		 idlen;
	int		 init;		/* an initialize */
	const char	*text;		/* the raw "text" string, or NULL */
	size_t		 textlen;
};

/* Scan the message BODY; 0 if it has no id (a notification). */
static int
scan(const char *body, size_t len, struct msg *m)
{
	const char	*end, *q, *t;

	end = body + len;
	m->id = after_key(body, end, "\"id\"", 4);
	if (m->id == NULL || m->id >= end)
		return 0;
	q = m->id;
	if (*q == '"') {
		for (q++; q < end && *q != '"'; q++)
			if (*q == '\\')
				q++;
		if (q < end)
			q++;
	} else {
		while (q < end && *q != ',' && *q != '}' && *q != ' ')
			q++;
	}
	m->idlen = (size_t)(q - m->id);
	q = after_key(body, end, "\"method\"", 8);
	m->init = q != NULL && end - q >= 12 &&
	    memcmp(q, "\"initialize\"", 12) == 0;
	m->text = NULL;
	m->textlen = 0;
	t = after_key(body, end, "\"text\"", 6);
	if (!m->init && t != NULL && t < end && *t == '"') {
		m->text = t + 1;
		m->textlen = (size_t)(string_end(t + 1, end) - t - 1);
	}
	return 1;
}

/* Queue M's answer after its id on C: the result and the closing brace. */
static void
put_result(struct conn *c, const struct msg *m)
{
	put(c, m->id, m->idlen);
	put(c, ",", 1);
	if (m->init) {
		put(c, init_result, sizeof(init_result) - 1);
		return;
	}
	put(c, echo_head, sizeof(echo_head) - 1);
	if (m->text != NULL)
		put(c, m->text, m->textlen);
	put(c, echo_tail, sizeof(echo_tail) - 1);
}

/* Queue the answer to the message BODY on stream S, if it has an id. */
static void
answer(struct conn *s, const char *body, size_t len)
{
	struct msg	 m;

	if (!scan(body, len, &m))
		return;
	put(s, msg_head, sizeof(msg_head) - 1);
	put_result(s, &m);
	put(s, "\n\n", 2);
}

/* Answer the Streamable HTTP POST of BODY on C, in the response. */
static void
answer_mcp(struct conn *c, const char *body, size_t len)
{
	char		 head[192];
	struct msg	 m;
	size_t		 n;
	int		 r;

	if (!scan(body, len, &m)) {
		put(c, accepted, sizeof(accepted) - 1);
		return;
	}
	n = sizeof(json_head) - 1 + m.idlen + 1 + (m.init ?
	    sizeof(init_result) - 1 : sizeof(echo_head) - 1 + m.textlen +
	    sizeof(echo_tail) - 1);
	r = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n",
	    m.init ? "Mcp-Session-Id: floor\r\n" : "", n);
	put(c, head, (size_t)r);
	put(c, json_head, sizeof(json_head) - 1);
	put_result(c, &m);
}

static void
open_stream(struct conn *c)
{
	static const char	 hex[] = "0123456789abcdef";
	unsigned char		 rnd[12];
	uint32_t		 i;
	int			 k;

	if (nfreesess > 0)
		i = freesess[--nfreesess];
	else {
		if (nsess == capsess) {
			capsess = capsess ? capsess * 2 : 1024;
			sessions = xrealloc(sessions,
			    capsess * sizeof(*sessions));
			freesess = xrealloc(freesess,
			    capsess * sizeof(*freesess));
		}
		i = nsess++;
	}
	sessions[i] = c;
	c->stream = 1;
	c->sess = i;
	/* 8 hex digits of index, then 24 random ones. */
	for (k = 0; k < 8; k++)
		c->sid[k] = hex[(i >> (28 - 4 * k)) & 15];
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		memset(rnd, 0x5a, sizeof(rnd));
	for (k = 0; k < 12; k++) {
		c->sid[8 + 2 * k] = hex[rnd[k] >> 4];
		c->sid[9 + 2 * k] = hex[rnd[k] & 15];
	}
	c->sid[32] = '\0';
	put(c, sse_head, sizeof(sse_head) - 1);
	put(c, c->sid, 32);
	put(c, "\n\n", 2);
}

/* The stream whose session id starts the text at P, or NULL. */
static struct conn *
find_session(const char *p, const char *end)
{
	uint32_t	 i;
	int		 k, v;

	if (end - p < 32)
		return NULL;
	i = 0;
	for (k = 0; k < 8; k++) {
		if (p[k] >= '0' && p[k] <= '9')
			v = p[k] - '0';
		else if (p[k] >= 'a' && p[k] <= 'f')
			v = p[k] - 'a' + 10;
		else
			return NULL;
		i = i << 4 | (uint32_t)v;
	}
	if (i >= nsess || sessions[i] == NULL ||
	    memcmp(sessions[i]->sid, p, 32) != 0)
		return NULL;
	return sessions[i];
}

/* Content-Length of the head H..E (E at the blank line), or -1. */
static long
content_length(const char *h, const char *e)
{
	const char	*p;

	for (p = h; p < e; p++) {
		p = memchr(p, '\n', (size_t)(e - p));
		if (p == NULL)
			break;
		if (e - p > 16 && strncasecmp(p + 1, "content-length:", 15)
		    == 0)
			return strtol(p + 16, NULL, 10);
	}
	return -1;
}

/*
 * Handle every complete request in C's input.  Returns -1 if C was
 * dropped.
 */
static int
serve(struct conn *c)
{
	static const char	 qs[] = "/messages?sessionId=";
	char			*p, *end, *hend, *sp;
	struct conn		*s;
	long			 cl;
	size_t			 used;

	used = 0;
	for (;;) {
		p = c->in + used;
		end = c->in + c->ilen;
		hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		if (hend == NULL) {
			if (end - p > MAX_HEAD)
				goto bad;
			break;
		}
		if (end - p >= 8 && memcmp(p, "GET /sse", 8) == 0 &&
		    (p[8] == ' ' || p[8] == '?')) {
			used = (size_t)(hend + 4 - c->in);
			if (c->stream)
				goto bad;
			open_stream(c);
			continue;
		}
		if (end - p < 5 || memcmp(p, "POST ", 5) != 0) {
			used = (size_t)(hend + 4 - c->in);
			put(c, not_found, sizeof(not_found) - 1);
			continue;
		}
		cl = content_length(p, hend + 2);
		if (cl < 0 || cl > MAX_BODY)
			goto bad;
		if (end - (hend + 4) < cl)
			break;
		used = (size_t)(hend + 4 + cl - c->in);
		sp = p + 5;
		if (hend - sp > 4 && memcmp(sp, "/mcp", 4) == 0 &&
		    (sp[4] == ' ' || sp[4] == '?'))
			answer_mcp(c, hend + 4, (size_t)cl);
		else if (hend - sp > (long)sizeof(qs) &&
		    memcmp(sp, qs, sizeof(qs) - 1) == 0 &&
		    (s = find_session(sp + sizeof(qs) - 1, hend)) != NULL) {
			put(c, accepted, sizeof(accepted) - 1);
			answer(s, hend + 4, (size_t)cl);
		} else
			put(c, not_found, sizeof(not_found) - 1);
	}
	if (used > 0) {
		c->ilen -= used;
		memmove(c->in, c->in + used, c->ilen);
	}
	return 0;
bad:
	put(c, bad_request, sizeof(bad_request) - 1);
	c->closing = 1;
	c->ilen = 0;
	return 0;
}

static void
on_readable(struct conn *c)
{
	ssize_t	 n;

	for (;;) {
		if (c->icap - c->ilen < 4096) {
			c->icap = c->icap ? c->icap * 2 : 16384;
			c->in = xrealloc(c->in, c->icap);
		}
		n = read(c->fd, c->in + c->ilen, c->icap - c->ilen);
		if (n > 0) {
			c->ilen += (size_t)n;
			if (c->ilen < c->icap)
				break;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		drop(c);
		return;
	}
	if (c->stream) {
		c->ilen = 0;	/* nothing more is expected on a stream */
		return;
	}
	if (!c->closing)
		serve(c);
}

static void
on_accept(int lfd)
{
	struct epoll_event	 ev;
	struct conn		*c;
	int			 fd, one;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;	/* EAGAIN, or out of descriptors */
		}
		one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		if (c == NULL)
			die("calloc");
		c->fd = fd;
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1)
			die("epoll_ctl");
	}
}

static void
parse_addr(const char *arg, struct sockaddr_in *sin)
{
	const char	*colon;
	char		 host[64];
	char		*end;
	long		 port;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	colon = strrchr(arg, ':');
	if (colon != NULL) {
		if ((size_t)(colon - arg) >= sizeof(host))
			goto bad;
		memcpy(host, arg, (size_t)(colon - arg));
		host[colon - arg] = '\0';
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			goto bad;
		arg = colon + 1;
	}
	port = strtol(arg, &end, 10);
	if (end == arg || *end != '\0' || port < 0 || port > 65535)
		goto bad;
	sin->sin_port = htons((uint16_t)port);
	return;
bad:
	fprintf(stderr, "usage: floor-http [ADDR:]PORT\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct epoll_event	 evs[MAX_EVENTS], ev;
	struct sockaddr_in	 sin;
	socklen_t		 slen;
	struct conn		*c, *next;
	char			 abuf[INET_ADDRSTRLEN];
	int			 lfd, n, i, one;

	if (argc > 2) {
		fprintf(stderr, "usage: floor-http [ADDR:]PORT\n");
		return 2;
	}
	parse_addr(argc == 2 ? argv[1] : "127.0.0.1:0", &sin);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd == -1)
		die("socket");
	one = 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		die("bind");
	if (listen(lfd, 4096) == -1)
		die("listen");
	slen = sizeof(sin);
	if (getsockname(lfd, (struct sockaddr *)&sin, &slen) == -1)
		die("getsockname");
	inet_ntop(AF_INET, &sin.sin_addr, abuf, sizeof(abuf));
	fprintf(stderr, "floor-http: listening on http://%s:%d\n", abuf,
	    ntohs(sin.sin_port));

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep == -1)
		die("epoll_create1");
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == -1)
		die("epoll_ctl");

	for (;;) {
		n = epoll_wait(ep, evs, MAX_EVENTS, -1);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (i = 0; i < n; i++) {
			c = evs[i].data.ptr;
			if (c == NULL) {
				on_accept(lfd);
				continue;
			}
			if (c->fd == -1)
				continue;	/* dropped in this batch */
			if (evs[i].events & EPOLLOUT && flush(c) == -1)
				continue;
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				on_readable(c);
		}
		/* One write per connection for the whole batch. */
		for (c = flushq, flushq = NULL; c != NULL; c = next) {
			next = c->next;
			c->dirty = 0;
			if (c->fd == -1) {
				free(c->in);
				free(c->out);
				free(c);
				continue;
			}
			flush(c);
		}
	}
}
