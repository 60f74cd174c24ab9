/*
 * floor-stdio: the fastest stdio "MCP server" we can write, the floor that
 * libmcp's stdio transport is measured against.  It reads JSON lines from
 * stdin in large chunks and answers every line that carries an "id" with
 * one canned response line holding the same id: an initialize result for
 * the initialize request, and for anything else an echo tool result whose
 * text is the raw "text" string of the request, copied byte for byte.
 * There is no JSON parsing, only scanning for "id", "method" and "text";
 * lines without an id (notifications) get no answer.  Answers go out
 * once FLUSH_AT bytes of them wait, and the rest at the end of each
 * chunk of input: one write a chunk made client and server take turns
 * (at c=64 it gave a third of what this does, 2026-12-03).  128 bytes is
 * the middle of the fastest range of 1 to 64 KiB (96 to 160 bytes, c=64
 * medians of 7 interleaved runs on 2026-12-04: 2.11 to 2.25 M req/s,
 * where 256 gave 1.53 M); -DFLUSH_AT=N builds another.
 * Single-threaded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK	(1024 * 1024)
#ifndef FLUSH_AT
#define FLUSH_AT	128
#endif

static const char init_result[] =
    "\"result\":{\"protocolVersion\":\"2025-06-18\","
    "\"capabilities\":{\"tools\":{}},"
    "\"serverInfo\":{\"name\":\"floor-stdio\",\"version\":\"0.1.0\"}}}\n";
static const char echo_head[] =
    "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"";
static const char echo_tail[] = "\"}]}}\n";
static const char rpc_head[] = "{\"jsonrpc\":\"2.0\",\"id\":";

static char	*obuf;
static size_t	 olen;
static size_t	 ocap;

static void
flush_out(void)
{
	size_t	 off;
	ssize_t	 n;

	off = 0;
	while (off < olen) {
		n = write(1, obuf + off, olen - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			exit(1);
		off += (size_t)n;
	}
	olen = 0;
}

static void
put(const char *s, size_t n)
{
	if (olen + n > ocap) {
		flush_out();
		if (n > ocap) {
			ocap = n;
			obuf = realloc(obuf, ocap);
			if (obuf == NULL)
				exit(1);
		}
	}
	memcpy(obuf + olen, s, n);
	olen += n;
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

/*
 * The closing quote of the JSON string whose contents start at P, found
 * with memchr: a quote preceded by an odd number of backslashes is
 * escaped.  END if there is none.
 */
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

/*
 * Answer one line.  The id token is copied as it is (a number, or a
 * string up to its closing quote), so any id the client chose comes back.
 */
static void
answer(const char *line, size_t len)
{
	const char	*end, *id, *q, *t;

	end = line + len;
	id = after_key(line, end, "\"id\"", 4);
	if (id == NULL || id >= end)
		return;
	q = id;
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
	put(rpc_head, sizeof(rpc_head) - 1);
	put(id, (size_t)(q - id));
	put(",", 1);
	q = after_key(line, end, "\"method\"", 8);
	if (q != NULL && end - q >= 12 &&
	    memcmp(q, "\"initialize\"", 12) == 0) {
		put(init_result, sizeof(init_result) - 1);
		return;
	}
	put(echo_head, sizeof(echo_head) - 1);
	t = after_key(line, end, "\"text\"", 6);
	if (t != NULL && t < end && *t == '"')
		put(t + 1, (size_t)(string_end(t + 1, end) - t - 1));
	put(echo_tail, sizeof(echo_tail) - 1);
}

int
main(void)
{
	char	*ibuf, *start, *nl, *end;
	size_t	 ilen, icap;
	ssize_t	 n;

	icap = CHUNK;
	ibuf = malloc(icap);
	ocap = CHUNK;
	obuf = malloc(ocap);
	if (ibuf == NULL || obuf == NULL)
		return 1;
	ilen = 0;
	for (;;) {
		if (ilen == icap) {
			icap *= 2;
			ibuf = realloc(ibuf, icap);
			if (ibuf == NULL)
				return 1;
		}
		n = read(0, ibuf + ilen, icap - ilen);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		ilen += (size_t)n;
		start = ibuf;
		end = ibuf + ilen;
		for (;;) {
			nl = memchr(start, '\n', (size_t)(end - start));
			if (nl == NULL)
				break;
			answer(start, (size_t)(nl - start));
			if (olen >= FLUSH_AT)
				flush_out();
			start = nl + 1;
		}
		ilen = (size_t)(end - start);
		if (ilen > 0 && start != ibuf)
			memmove(ibuf, start, ilen);
		flush_out();
	}
	flush_out();
	return 0;
}
