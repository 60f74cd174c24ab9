/*
 * json.c: a strict JSON parser that builds jansson values, and a compact
 * serialiser, both for the hot path. jansson stays the JSON type of the
 * API; its own parser spends about 22,000 instructions on a 110-byte
 * tools/call line (a stream abstraction and a buffer append per byte),
 * and its encoder about 9,000 on a small response. These do the same
 * work in a fraction of that (callgrind figures in docs/PERFORMANCE.md).
 *
 * The parser follows RFC 8259: one value, whitespace around it, UTF-8
 * checked byte by byte (no overlongs, no surrogates, nothing past
 * U+10FFFF), escapes decoded with surrogate pairs, integers kept exact
 * in 64 bits (larger ones become reals, as JavaScript writes them),
 * nesting capped. \u0000 is taken in string values (their length says
 * where they end; err->has_nul tells that one was seen) but refused in
 * object keys, which jansson keeps as C strings. Pure: any thread.
 *
 * A message's envelope is read here too (mcp__json_parse_message): its
 * top-level members in place, with the parser's own insides, building
 * only the id (an integral id written as a real kept as its text, to be
 * echoed as sent) and what must be built; the layer above, rpc/, says
 * what the members mean.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define MAX_DEPTH	512

struct parser {
	const unsigned char	*p;
	const unsigned char	*start;
	const unsigned char	*end;
	int			 depth;
	int			 nul;	/* the last string held \u0000 */
	int			 batch;	/* the input is an array of messages */
	struct json_perr	*err;
	struct buf		 tmp;	/* decoded strings with escapes */
};

static json_t	*value(struct parser *);

/* Bytes a string scan must stop at: controls, '"', '\\', non-ASCII. */
static const unsigned char stop[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/*
 * Eight bytes at a time, where the byte order lets the first flagged
 * byte be found with a count of trailing zeros: about a third of the
 * instructions of a byte loop on long strings (3,000-byte arguments:
 * 25,000 fewer a call, docs/PERFORMANCE.md); a byte loop finishes.
 */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR	1
#define ONES	0x0101010101010101ULL
#define HIGH	0x8080808080808080ULL

/*
 * The high bit of each byte of X below 0x20, '"' or '\\'. A borrow only
 * runs upward from a byte that truly matched, so the lowest flag is
 * exact (the ones above it may not be).
 */
static inline uint64_t
swar_special(uint64_t x)
{
	uint64_t	 q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');

	return (((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) |
	    ((b - ONES) & ~b)) & HIGH;
}
#endif

/* The first byte at or after P that stop[] flags, or END. */
static inline __attribute__((always_inline)) const unsigned char *
scan_plain(const unsigned char *p, const unsigned char *end)
{
#ifdef SWAR
	uint64_t	 x, hit;

	for (; end - p >= 8; p += 8) {
		memcpy(&x, p, 8);
		if ((hit = swar_special(x) | (x & HIGH)) != 0)
			return p + (__builtin_ctzll(hit) >> 3);
	}
#endif
	while (p < end && !stop[*p])
		p++;
	return p;
}

/* The first byte at or after P that a JSON string must escape, or END. */
static const unsigned char *
scan_unescaped(const unsigned char *p, const unsigned char *end)
{
#ifdef SWAR
	uint64_t	 x, hit;

	for (; end - p >= 8; p += 8) {
		memcpy(&x, p, 8);
		if ((hit = swar_special(x)) != 0)
			return p + (__builtin_ctzll(hit) >> 3);
	}
#endif
	while (p < end && *p >= 0x20 && *p != '"' && *p != '\\')
		p++;
	return p;
}

/* The first byte at or after P that is not ASCII, or END. */
static const unsigned char *
scan_ascii(const unsigned char *p, const unsigned char *end)
{
#ifdef SWAR
	uint64_t	 x, hit;

	for (; end - p >= 8; p += 8) {
		memcpy(&x, p, 8);
		if ((hit = x & HIGH) != 0)
			return p + (__builtin_ctzll(hit) >> 3);
	}
#endif
	while (p < end && *p < 0x80)
		p++;
	return p;
}

static json_t *
fail(struct parser *ps, int code, const char *what)
{
	if (ps->err->code == 0) {
		ps->err->code = code;
		ps->err->position = (size_t)(ps->p - ps->start);
		snprintf(ps->err->text, sizeof(ps->err->text), "%s", what);
	}
	return NULL;
}

/* Inline: its common case is one compare, called for every token. */
static inline __attribute__((always_inline)) void
skip_ws(struct parser *ps)
{
	const unsigned char	*p = ps->p;

	/* Compact JSON has none: test the common case first. */
	if (p < ps->end && *p > ' ')
		return;
	while (p < ps->end && (*p == ' ' || *p == '\n' || *p == '\r' ||
	    *p == '\t'))
		p++;
	ps->p = p;
}

/* Length of the valid UTF-8 sequence at P (lead byte >= 0x80), or 0. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char	 c = p[0];
	size_t		 n, i;
	unsigned int	 cp;

	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static int
hex4(const unsigned char *p, unsigned int *out)
{
	unsigned int	 v = 0;
	int		 i;

	for (i = 0; i < 4; i++) {
		v <<= 4;
		if (p[i] >= '0' && p[i] <= '9')
			v |= p[i] - '0';
		else if (p[i] >= 'a' && p[i] <= 'f')
			v |= p[i] - 'a' + 10;
		else if (p[i] >= 'A' && p[i] <= 'F')
			v |= p[i] - 'A' + 10;
		else
			return -1;
	}
	*out = v;
	return 0;
}

static int
put_utf8(struct buf *b, unsigned int cp)
{
	char	 u[4];
	size_t	 n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return mcp__buf_add(b, u, n);
}

/* string()'s whole work, for strings with escapes or beyond ASCII. */
static __attribute__((noinline)) int
string_slow(struct parser *ps, const char **s, size_t *n)
{
	const unsigned char	*p = ps->p, *end = ps->end, *run;
	unsigned int		 cp, lo;
	size_t			 k;
	int			 escaped = 0;

	run = p;
	for (;;) {
		p = scan_plain(p, end);
		if (p >= ps->end) {
			ps->p = p;
			fail(ps, 1, "unterminated string");
			return -1;
		}
		if (*p == '"')
			break;
		if (*p >= 0x80) {
			k = utf8_len(p, ps->end);
			if (k == 0) {
				ps->p = p;
				fail(ps, 1, "invalid UTF-8 in string");
				return -1;
			}
			p += k;
			continue;
		}
		if (*p < 0x20) {
			ps->p = p;
			fail(ps, 1, "control character in string");
			return -1;
		}
		/* A backslash: switch to the decoded copy. */
		if (!escaped) {
			mcp__buf_reset(&ps->tmp);
			escaped = 1;
		}
		if (mcp__buf_add(&ps->tmp, run, (size_t)(p - run)) != MCP_OK)
			goto nomem;
		if (ps->end - p < 2)
			goto bad_escape;
		p++;
		switch (*p) {
		case '"': case '\\': case '/':
			cp = *p;
			p++;
			break;
		case 'b': cp = '\b'; p++; break;
		case 'f': cp = '\f'; p++; break;
		case 'n': cp = '\n'; p++; break;
		case 'r': cp = '\r'; p++; break;
		case 't': cp = '\t'; p++; break;
		case 'u':
			if (ps->end - p < 5 || hex4(p + 1, &cp) != 0)
				goto bad_escape;
			p += 5;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (ps->end - p < 6 || p[0] != '\\' ||
				    p[1] != 'u' || hex4(p + 2, &lo) != 0 ||
				    lo < 0xdc00 || lo > 0xdfff) {
					ps->p = p;
					fail(ps, 1, "invalid \\u surrogate pair");
					return -1;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				    (lo - 0xdc00);
				p += 6;
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				ps->p = p;
				fail(ps, 1, "invalid \\u surrogate");
				return -1;
			} else if (cp == 0) {
				/* Valid JSON: a string value may hold it (its
				 * length says where it ends). */
				ps->err->has_nul = 1;
				ps->nul = 1;
			}
			break;
		default:
			goto bad_escape;
		}
		if (put_utf8(&ps->tmp, cp) != MCP_OK)
			goto nomem;
		run = p;
	}
	if (escaped) {
		if (mcp__buf_add(&ps->tmp, run, (size_t)(p - run)) != MCP_OK)
			goto nomem;
		*s = ps->tmp.data;
		*n = ps->tmp.len;
	} else {
		*s = (const char *)ps->p;
		*n = (size_t)(p - ps->p);
	}
	ps->p = p + 1;
	return 0;

bad_escape:
	ps->p = p;
	fail(ps, 1, "invalid escape in string");
	return -1;
nomem:
	fail(ps, 2, "out of memory");
	return -1;
}

/*
 * Scans the string at ps->p (just after its opening quote). Returns 0
 * and sets *S, *N to its bytes: straight from the input when there was
 * no escape, otherwise from ps->tmp. -1 on error. Most strings of a
 * message are short ASCII without escapes: those take one scan here,
 * inline, without the slow path's frame (about 30 instructions fewer
 * a string, and a tools/call line has a dozen).
 */
static inline __attribute__((always_inline)) int
string(struct parser *ps, const char **s, size_t *n)
{
	const unsigned char	*p = scan_plain(ps->p, ps->end);

	if (__builtin_expect(p < ps->end && *p == '"', 1)) {
		*s = (const char *)ps->p;
		*n = (size_t)(p - ps->p);
		ps->p = p + 1;
		return 0;
	}
	return string_slow(ps, s, n);
}

/*
 * Reads an object member's name and its colon, from just before the
 * name's quote. *K and *N are valid until the next string is read.
 */
static inline __attribute__((always_inline)) int
member_name(struct parser *ps, const char **k, size_t *n)
{
	/* Compact JSON first: the quote and the colon are where they are
	 * looked for, without skip_ws's tests. */
	if (ps->p >= ps->end || *ps->p != '"')
		skip_ws(ps);
	if (ps->p >= ps->end || *ps->p != '"') {
		fail(ps, 1, "expected a string key");
		return -1;
	}
	ps->p++;
	ps->nul = 0;
	if (string(ps, k, n) != 0)
		return -1;
	if (ps->nul) {
		/* jansson's keys are C strings: it would be cut there. */
		fail(ps, 3, "\\u0000 in an object key is not supported");
		return -1;
	}
	if (ps->p < ps->end && *ps->p == ':') {
		ps->p++;
		return 0;
	}
	skip_ws(ps);
	if (ps->p >= ps->end || *ps->p != ':') {
		fail(ps, 1, "expected ':'");
		return -1;
	}
	ps->p++;
	return 0;
}

/* After a member or element: 1 if another follows, 0 at CLOSE, -1. */
static inline __attribute__((always_inline)) int
next_item(struct parser *ps, int close)
{
	if (ps->p >= ps->end || (*ps->p != ',' && *ps->p != close))
		skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		return 1;
	}
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	fail(ps, 1, close == '}' ? "expected ',' or '}'" :
	    "expected ',' or ']'");
	return -1;
}

/*
 * Is the member name at ps->p exactly "LIT": (N bytes with its quotes and
 * colon)? Then ps->p moves past the colon. Only a name written plainly
 * matches: one with escapes or spaces is member_name's.
 */
static inline __attribute__((always_inline)) int
plain_name(struct parser *ps, const char *lit, size_t n)
{
	if ((size_t)(ps->end - ps->p) <= n || memcmp(ps->p, lit, n) != 0)
		return 0;
	ps->p += n;
	return 1;
}

/*
 * The real number from S to ps->p (number_scan's): 0 and *D, or -1. Out
 * of line, with its copy for strtod: the integers of a message (its id)
 * take no stack buffer and no canary.
 */
static __attribute__((noinline)) int
number_real(struct parser *ps, const unsigned char *s, double *d)
{
	const unsigned char	*p = ps->p;
	char			 tmp[64], *endp;

	if ((size_t)(p - s) >= sizeof(tmp)) {
		/* Long mantissas: strtod needs a terminated copy. */
		char	*big = strndup((const char *)s, (size_t)(p - s));

		if (big == NULL)
			return (fail(ps, 2, "out of memory"), -1);
		errno = 0;
		*d = strtod(big, &endp);
		free(big);
	} else {
		memcpy(tmp, s, (size_t)(p - s));
		tmp[p - s] = '\0';
		errno = 0;
		*d = strtod(tmp, &endp);
	}
	if (isinf(*d)) {
		ps->p = s;
		return (fail(ps, 3, "real number overflow"), -1);
	}
	return 0;
}

/*
 * Scans the number at ps->p: 1 and *I when it is an integer a long long
 * holds, 0 and *D for a real, -1 on error.
 */
static int
number_scan(struct parser *ps, long long *i, double *d)
{
	const unsigned char	*p = ps->p, *s = ps->p, *lim;
	int			 neg = 0, real = 0;
	unsigned long long	 u = 0;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (p >= ps->end || *p < '0' || *p > '9')
		return (fail(ps, 1, "invalid number"), -1);
	if (*p == '0') {
		p++;
	} else {
		/* 18 digits cannot overflow: no test in the loop for them. */
		lim = ps->end - p > 18 ? p + 18 : ps->end;
		while (p < lim && (unsigned)(*p - '0') < 10)
			u = u * 10 + (unsigned)(*p++ - '0');
		while (p < ps->end && *p >= '0' && *p <= '9') {
			if (u > (ULLONG_MAX - 9) / 10)
				u = ULLONG_MAX;		/* overflow below */
			else
				u = u * 10 + (unsigned)(*p - '0');
			p++;
		}
	}
	if (p < ps->end && *p == '.') {
		real = 1;
		p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return (fail(ps, 1, "invalid number"), -1);
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		real = 1;
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return (fail(ps, 1, "invalid number"), -1);
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	ps->p = p;
	/*
	 * An integer past 64 bits becomes a real, as JavaScript writes
	 * 12345678901234567000: refusing it would lose the whole request.
	 * (An id must be an integer, so such an id is still refused.)
	 */
	if (!real && (neg ? u <= (unsigned long long)LLONG_MAX + 1 :
	    u <= (unsigned long long)LLONG_MAX)) {
		*i = neg ? (long long)(0 - u) : (long long)u;
		return 1;
	}
	return number_real(ps, s, d);
}

static json_t *
number(struct parser *ps)
{
	long long	 i;
	double		 d;

	switch (number_scan(ps, &i, &d)) {
	case 1:
		return json_integer((json_int_t)i);
	case 0:
		return json_real(d);
	default:
		return NULL;
	}
}

/*
 * V, the id of a message, parsed from TEXT: an integral id written as a
 * real (2.0, 1e2) is taken, kept as that text to be echoed byte for byte
 * (mcp__json_id_raw). V is consumed.
 */
static json_t *
message_id(struct parser *ps, json_t *v, const unsigned char *text)
{
	size_t	 n = (size_t)(ps->p - text);

	if (!json_is_real(v) || !mcp__json_integral((const char *)text, n, NULL))
		return v;
	json_decref(v);
	v = mcp__json_id_raw((const char *)text, n);
	return v != NULL ? v : fail(ps, 2, "out of memory");
}

static json_t *
object(struct parser *ps)
{
	json_t		*o, *v;
	const unsigned char *vstart;
	const char	*k;
	char		 small[64], *key;
	size_t		 n;
	int		 rc;

	o = json_object();
	if (o == NULL)
		return fail(ps, 2, "out of memory");
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return o;
	}
	for (;;) {
		if (member_name(ps, &k, &n) != 0)
			goto fail;
		key = n < sizeof(small) ? small : malloc(n + 1);
		if (key == NULL) {
			fail(ps, 2, "out of memory");
			goto fail;
		}
		memcpy(key, k, n);
		key[n] = '\0';
		vstart = ps->p;
		v = value(ps);
		if (v != NULL && ps->batch && ps->depth == 2 &&
		    strcmp(key, "id") == 0)
			v = message_id(ps, v, vstart);	/* a batch's message */
		rc = v == NULL ? -1 : json_object_set_new_nocheck(o, key, v);
		if (key != small)
			free(key);
		if (rc != 0) {
			if (v != NULL)
				fail(ps, 2, "out of memory");
			goto fail;
		}
		rc = next_item(ps, '}');
		if (rc == 0)
			return o;
		if (rc < 0)
			goto fail;
	}
fail:
	json_decref(o);
	return NULL;
}

static json_t *
array(struct parser *ps)
{
	json_t	*a, *v;
	int	 rc;

	a = json_array();
	if (a == NULL)
		return fail(ps, 2, "out of memory");
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return a;
	}
	for (;;) {
		v = value(ps);
		if (v == NULL || json_array_append_new(a, v) != 0) {
			if (v != NULL)
				fail(ps, 2, "out of memory");
			json_decref(a);
			return NULL;
		}
		rc = next_item(ps, ']');
		if (rc == 0)
			return a;
		if (rc < 0) {
			json_decref(a);
			return NULL;
		}
	}
}

static int
word(struct parser *ps, const char *w, size_t n)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
		return 0;
	ps->p += n;
	return 1;
}

static json_t *
value(struct parser *ps)
{
	json_t		*v;
	const char	*s;
	size_t		 n;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, 1, "unexpected end of input");
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->depth > MAX_DEPTH)
			return fail(ps, 4, "nesting too deep");
		v = *ps->p == '{' ? object(ps) : array(ps);
		ps->depth--;
		return v;
	case '"':
		ps->p++;
		if (string(ps, &s, &n) != 0)
			return NULL;
		v = json_stringn_nocheck(s, n);
		return v != NULL ? v : fail(ps, 2, "out of memory");
	case 't':
		if (word(ps, "true", 4))
			return json_true();
		break;
	case 'f':
		if (word(ps, "false", 5))
			return json_false();
		break;
	case 'n':
		if (word(ps, "null", 4))
			return json_null();
		break;
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return number(ps);
		break;
	}
	return fail(ps, 1, "invalid JSON value");
}

json_t *
mcp__json_parse(const char *data, size_t len, struct json_perr *err)
{
	struct parser	 ps;
	json_t		*v;

	memset(err, 0, sizeof(*err));
	memset(&ps, 0, sizeof(ps));
	ps.start = ps.p = (const unsigned char *)data;
	ps.end = ps.p + len;
	ps.err = err;
	v = value(&ps);
	if (v != NULL) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			fail(&ps, 1, "end of input expected after the value");
			json_decref(v);
			v = NULL;
		}
	}
	mcp__buf_free(&ps.tmp);
	return v;
}

/*
 * plain_name for "NAME": (N bytes without the quotes and colon). Only
 * for a name whose JSON is its own bytes (mcp__flat's plain): a raw key
 * "a\b" is a and a backspace, not the name a\b.
 */
static inline __attribute__((always_inline)) int
plain_arg(struct parser *ps, const char *name, size_t n)
{
	const unsigned char	*p = ps->p;

	if ((size_t)(ps->end - p) <= n + 3 || p[0] != '"' ||
	    memcmp(p + 1, name, n) != 0 || p[n + 1] != '"' || p[n + 2] != ':')
		return 0;
	ps->p = p + n + 3;
	return 1;
}

/* One member's value into SL; its string's bytes at *OUT. 1, or 0. */
static int
flat_value(struct parser *ps, struct mcp__slot *sl, char **out)
{
	const char	*s;
	size_t		 n;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return 0;
	switch (*ps->p) {
	case '"':
		ps->p++;
		ps->nul = 0;
		if (string(ps, &s, &n) != 0 || ps->nul)
			return 0;
		memcpy(*out, s, n);
		(*out)[n] = '\0';
		sl->type = MCP__SLOT_STR;
		sl->s = *out;
		sl->len = n;
		*out += n + 1;
		return 1;
	case 't':
		if (!word(ps, "true", 4))
			return 0;
		sl->type = MCP__SLOT_TRUE;
		return 1;
	case 'f':
		if (!word(ps, "false", 5))
			return 0;
		sl->type = MCP__SLOT_FALSE;
		return 1;
	default:
		if (*ps->p != '-' && (*ps->p < '0' || *ps->p > '9'))
			return 0;	/* null, an object, an array */
		switch (number_scan(ps, &sl->i, &sl->d)) {
		case 1:
			sl->type = MCP__SLOT_INT;
			sl->d = (double)sl->i;
			return 1;
		case 0:
			sl->type = MCP__SLOT_REAL;
			return 1;
		default:
			return 0;
		}
	}
}

int
mcp__json_flat(const char *text, size_t len, const struct mcp__flat *f,
    struct mcp__flat_args *a)
{
	struct json_perr e;
	struct parser	 ps;
	const char	*k;
	char		*out = a->strings;
	size_t		 n, i;
	int		 ok = 0, more;

	memset(&ps, 0, sizeof(ps));
	e.code = 0;		/* what fail() reads; the rest it writes */
	e.has_nul = 0;
	ps.start = ps.p = (const unsigned char *)text;
	ps.end = ps.p + len;
	ps.err = &e;
	a->nmembers = 0;
	memset(a->slot, 0, f->n * sizeof(a->slot[0]));	/* NONE */
	skip_ws(&ps);
	if (ps.p >= ps.end || *ps.p != '{')
		goto out;
	ps.p++;
	skip_ws(&ps);
	if (ps.p < ps.end && *ps.p == '}') {
		ps.p++;
		more = 0;
	} else
		more = 1;
	while (more) {
		/* A declared name written plainly is found in place; any
		 * other is read (before the value's string can reuse tmp). */
		for (i = 0; i < f->n; i++)
			if (f->plain[i] && plain_arg(&ps, f->name[i], f->len[i]))
				break;
		if (i == f->n) {
			if (member_name(&ps, &k, &n) != 0)
				goto out;
			for (i = 0; i < f->n; i++)
				if (f->len[i] == n &&
				    memcmp(f->name[i], k, n) == 0)
					break;
		}
		if (i == f->n || a->slot[i].type != MCP__SLOT_NONE ||
		    !flat_value(&ps, &a->slot[i], &out))
			goto out;
		a->order[a->nmembers++] = (unsigned char)i;
		if ((more = next_item(&ps, '}')) < 0)
			goto out;
	}
	skip_ws(&ps);
	ok = ps.p == ps.end;
out:
	mcp__buf_free(&ps.tmp);
	return ok;
}

/*
 * Checks the value at ps->p without building it. A member's or element's
 * string, the usual case, is read in the loop rather than by a call.
 */
static int
skip(struct parser *ps)
{
	const char	*s;
	size_t		 n;
	long long	 i;
	double		 d;
	int		 close, rc;

	skip_ws(ps);
	if (ps->p >= ps->end) {
		fail(ps, 1, "unexpected end of input");
		return -1;
	}
	switch (*ps->p) {
	case '"':
		ps->p++;
		return string(ps, &s, &n);
	case '{':
	case '[':
		if (++ps->depth > MAX_DEPTH) {
			fail(ps, 4, "nesting too deep");
			return -1;
		}
		close = *ps->p == '{' ? '}' : ']';
		ps->p++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			ps->depth--;
			return 0;
		}
		for (;;) {
			if (close == '}' && member_name(ps, &s, &n) != 0)
				return -1;
			if (ps->p < ps->end && *ps->p == '"') {
				ps->p++;
				if (string(ps, &s, &n) != 0)
					return -1;
			} else if (skip(ps) != 0)
				return -1;
			rc = next_item(ps, close);
			if (rc <= 0) {
				ps->depth--;
				return rc;
			}
		}
	case 't':
		if (word(ps, "true", 4))
			return 0;
		break;
	case 'f':
		if (word(ps, "false", 5))
			return 0;
		break;
	case 'n':
		if (word(ps, "null", 4))
			return 0;
		break;
	default:
		/* Scanned, not built: the range is checked all the same. */
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return number_scan(ps, &i, &d) < 0 ? -1 : 0;
		break;
	}
	fail(ps, 1, "invalid JSON value");
	return -1;
}

/*
 * The number of elements of the array that DATA holds, counted without
 * building it (a batch is bounded before it costs memory); -1 if DATA
 * is not a valid JSON array.
 */
long
mcp__json_array_count(const char *data, size_t len)
{
	struct parser	 ps;
	struct json_perr e;
	long		 n = 0;
	int		 rc;

	memset(&e, 0, sizeof(e));
	memset(&ps, 0, sizeof(ps));
	ps.start = ps.p = (const unsigned char *)data;
	ps.end = ps.p + len;
	ps.err = &e;
	skip_ws(&ps);
	if (ps.p >= ps.end || *ps.p != '[')
		return -1;
	ps.p++;
	ps.depth = 1;
	skip_ws(&ps);
	if (ps.p < ps.end && *ps.p == ']') {
		ps.p++;
	} else {
		for (;;) {
			if (skip(&ps) != 0) {
				n = -1;
				break;
			}
			n++;
			rc = next_item(&ps, ']');
			if (rc < 0) {
				n = -1;
				break;
			}
			if (rc == 0)
				break;
		}
	}
	skip_ws(&ps);
	if (n >= 0 && ps.p != ps.end)
		n = -1;
	mcp__buf_free(&ps.tmp);
	return n;
}

/*
 * A params object: checked and left as text (F->praw), noting what the
 * loop needs: tools/call's name, whether arguments is an object, and
 * whether there is a task member (however its name was escaped).
 */
static int
scan_params(struct parser *ps, struct rpc_fields *f)
{
	const unsigned char	*start = ps->p, *vstart;
	const char		*s;
	size_t			 n;
	int			 which, rc;

	f->tname_kind = f->args_kind = f->has_task = 0;
	f->args_len = f->meta_len = f->state_len = f->resp_len = 0;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		goto done;
	}
	for (;;) {
		/* tools/call's two, as top_name reads a message's. */
		if (plain_name(ps, "\"name\":", 7))
			which = 1;
		else if (plain_name(ps, "\"arguments\":", 12))
			which = 2;
		else if (member_name(ps, &s, &n) != 0)
			return -1;
		else if (n == 4 && memcmp(s, "task", 4) == 0) {
			which = 0;
			f->has_task = 1;
		} else
			which = n == 4 && memcmp(s, "name", 4) == 0 ? 1 :
			    n == 9 && memcmp(s, "arguments", 9) == 0 ? 2 :
			    n == 5 && memcmp(s, "_meta", 5) == 0 ? 3 :
			    n == 12 && memcmp(s, "requestState", 12) == 0 ? 4 :
			    n == 14 && memcmp(s, "inputResponses", 14) == 0 ?
			    5 : 0;
		skip_ws(ps);
		vstart = ps->p;
		if (which == 1 && ps->p < ps->end && *ps->p == '"') {
			ps->p++;
			ps->nul = 0;	/* set by a \u0000: no memchr */
			if (string(ps, &s, &n) != 0)
				return -1;
			if (n <= 128 && !ps->nul) {
				memcpy(f->tname, s, n);
				f->tname[n] = '\0';
				f->tname_kind = 1;
			} else
				f->tname_kind = 3;	/* no such tool */
		} else {
			if (which == 1)
				f->tname_kind = 2;
			if (which == 2)
				f->args_kind = ps->p < ps->end &&
				    *ps->p == '{' ? 1 : 2;
			if (skip(ps) != 0)
				return -1;
			if (which == 2) {
				f->args_off = (size_t)(vstart - start);
				f->args_len = (size_t)(ps->p - vstart);
			} else if (which == 3) {
				f->meta_off = (size_t)(vstart - start);
				f->meta_len = *vstart == '{' ?
				    (size_t)(ps->p - vstart) : 0;
			} else if (which == 4) {
				f->state_off = (size_t)(vstart - start);
				f->state_len = (size_t)(ps->p - vstart);
			} else if (which == 5) {
				f->resp_off = (size_t)(vstart - start);
				f->resp_len = (size_t)(ps->p - vstart);
			}
		}
		rc = next_item(ps, '}');
		if (rc < 0)
			return -1;
		if (rc == 0)
			break;
	}
done:
	/* A duplicate params member: the last wins. */
	json_decref(f->params);
	f->params = NULL;
	f->praw = (const char *)start;
	f->prawlen = (size_t)(ps->p - start);
	return 0;
}

/* Is the string S (N bytes) exactly LIT? */
static int
is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/*
 * The number of the top-level member whose name is at ps->p (1 jsonrpc,
 * 2 method, 3 id, 4 params, 5 result, 6 error), when it is written
 * plainly, as nearly every client writes it: found by its first letter
 * and one compare, not scanned as a string and then compared. 0, and
 * ps->p unmoved, otherwise.
 */
static inline __attribute__((always_inline)) int
top_name(struct parser *ps)
{
	if (ps->end - ps->p < 2 || ps->p[0] != '"')
		return 0;
	switch (ps->p[1]) {
	case 'j': return plain_name(ps, "\"jsonrpc\":", 10) ? 1 : 0;
	case 'm': return plain_name(ps, "\"method\":", 9) ? 2 : 0;
	case 'i': return plain_name(ps, "\"id\":", 5) ? 3 : 0;
	case 'p': return plain_name(ps, "\"params\":", 9) ? 4 : 0;
	case 'r': return plain_name(ps, "\"result\":", 9) ? 5 : 0;
	case 'e': return plain_name(ps, "\"error\":", 8) ? 6 : 0;
	}
	return 0;
}

/* The number top_name gives the name K (N bytes), however it was read. */
static int
top_which(const char *k, size_t n)
{
	return is(k, n, "jsonrpc") ? 1 : is(k, n, "method") ? 2 :
	    is(k, n, "id") ? 3 : is(k, n, "params") ? 4 :
	    is(k, n, "result") ? 5 : is(k, n, "error") ? 6 : 0;
}

/* One top-level member of a message object, number WHICH (top_name). */
static int
member(struct parser *ps, struct rpc_fields *f, int which)
{
	const unsigned char *vstart;
	const char	*s;
	size_t		 sn;
	json_t		*v, **slot = NULL;

	skip_ws(ps);
	if (which == 1 && plain_name(ps, "\"2.0\"", 5)) {
		f->jsonrpc = 1;
		return 0;
	}
	if ((which == 1 || which == 2) && ps->p < ps->end && *ps->p == '"') {
		/* The common case builds nothing: compare in place. */
		ps->p++;
		ps->nul = 0;	/* set by a \u0000: no memchr */
		if (string(ps, &s, &sn) != 0)
			return -1;
		if (which == 1) {
			f->jsonrpc = is(s, sn, "2.0") ? 1 : 2;
		} else if (ps->nul) {
			/* Matches nothing, and prints safely. */
			snprintf(f->mname, sizeof(f->mname), "(a name with NUL)");
			f->mlen = strlen(f->mname);
			f->method = 1;
		} else if (sn < sizeof(f->mname)) {
			memcpy(f->mname, s, sn);
			f->mname[sn] = '\0';
			f->mlen = sn;
			f->method = 1;
		} else {
			/* Longer than any method we know: keep a prefix. */
			memcpy(f->mname, s, sizeof(f->mname) - 4);
			memcpy(f->mname + sizeof(f->mname) - 4, "...", 4);
			f->mlen = sizeof(f->mname) - 1;
			f->method = 1;
		}
		return 0;
	}
	if (which == 4 && ps->p < ps->end && *ps->p == '{')
		return scan_params(ps, f);
	vstart = ps->p;
	v = value(ps);
	if (v == NULL)
		return -1;
	if (which == 3 && (v = message_id(ps, v, vstart)) == NULL)
		return -1;
	switch (which) {
	case 1:
		f->jsonrpc = 2;
		break;
	case 2:
		f->method = 2;
		break;
	case 3:
		f->has_id = 1;
		slot = &f->id;
		break;
	case 4:
		slot = &f->params;
		f->praw = NULL;
		f->tname_kind = f->args_kind = 0;
		break;
	case 5:
	case 6:
		f->has_result = 1;
		slot = which == 5 ? &f->result : &f->error;
		break;
	}
	if (slot != NULL) {
		json_decref(*slot);	/* a duplicate key: the last wins */
		*slot = v;
	} else
		json_decref(v);
	return 0;
}

int
mcp__json_parse_message(const char *data, size_t len, struct rpc_fields *f,
    json_t **whole, struct json_perr *err)
{
	struct parser	 ps;
	const char	*k;
	size_t		 n;
	int		 rc = -1, more, which;

	memset(err, 0, sizeof(*err));
	memset(f, 0, offsetof(struct rpc_fields, mname));
	f->mname[0] = f->tname[0] = '\0';
	memset(&ps, 0, sizeof(ps));
	*whole = NULL;
	ps.start = ps.p = (const unsigned char *)data;
	ps.end = ps.p + len;
	ps.err = err;
	skip_ws(&ps);
	if (ps.p >= ps.end || *ps.p != '{') {
		ps.batch = ps.p < ps.end && *ps.p == '[';
		*whole = value(&ps);
		rc = *whole == NULL ? -1 : 0;
		goto end;
	}
	ps.p++;
	skip_ws(&ps);
	if (ps.p < ps.end && *ps.p == '}') {
		ps.p++;
		rc = 1;
		goto end;
	}
	for (;;) {
		if ((which = top_name(&ps)) == 0) {
			if (member_name(&ps, &k, &n) != 0)
				goto end;
			which = top_which(k, n);
		}
		if (member(&ps, f, which) != 0)
			goto end;
		more = next_item(&ps, '}');
		if (more < 0)
			goto end;
		if (more == 0) {
			rc = 1;
			break;
		}
	}
end:
	if (rc >= 0) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			fail(&ps, 1, "end of input expected after the value");
			rc = -1;
		}
	}
	if (rc < 0) {
		json_decref(*whole);
		*whole = NULL;
		/* mcp__rpc_fields_clear's work, which is the layer above's. */
		json_decref(f->id);
		json_decref(f->params);
		json_decref(f->result);
		json_decref(f->error);
		f->id = f->params = f->result = f->error = NULL;
	}
	mcp__buf_free(&ps.tmp);
	return rc;
}

int
mcp__utf8_valid(const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s, *e = p + n;
	size_t			 k;

	while (p < e) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		k = utf8_len(p, e);
		if (k == 0)
			return 0;
		p += k;
	}
	return 1;
}

json_t *
mcp__json_get(const json_t *o, const char *key)
{
	void	*it;

	if (json_object_size(o) > 4)
		return json_object_get(o, key);
	for (it = json_object_iter((json_t *)o); it != NULL;
	    it = json_object_iter_next((json_t *)o, it)) {
		if (strcmp(json_object_iter_key(it), key) != 0)
			continue;
#if JANSSON_VERSION_HEX >= 0x020e00
		/* A key set with a NUL inside ("sum\0x") is not "sum" to
		 * json_object_get (before 2.14 none can be set). */
		if (json_object_iter_key_len(it) != strlen(key))
			continue;
#endif
		return json_object_iter_value(it);
	}
	return NULL;
}

const char *
mcp__json_cstr(const json_t *v)
{
	const char	*s = json_string_value(v);

	if (s == NULL || memchr(s, '\0', json_string_length(v)) != NULL)
		return NULL;
	return s;
}

/* ---- serialiser ------------------------------------------------------- */

static const char hexd[] = "0123456789abcdef";

static int
add_string(struct buf *b, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s, *e = p + n, *r;
	char			 esc[6];

	/* Worst case every byte becomes \u00XX. */
	if (mcp__buf_reserve(b, n + 2) != MCP_OK)
		return MCP_ENOMEM;
	b->data[b->len++] = '"';
	while (p < e) {
		r = p;
		p = scan_unescaped(p, e);
		if (mcp__buf_add(b, r, (size_t)(p - r)) != MCP_OK)
			return MCP_ENOMEM;
		if (p == e)
			break;
		esc[0] = '\\';
		switch (*p) {
		case '"': esc[1] = '"'; n = 2; break;
		case '\\': esc[1] = '\\'; n = 2; break;
		case '\n': esc[1] = 'n'; n = 2; break;
		case '\r': esc[1] = 'r'; n = 2; break;
		case '\t': esc[1] = 't'; n = 2; break;
		case '\b': esc[1] = 'b'; n = 2; break;
		case '\f': esc[1] = 'f'; n = 2; break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hexd[*p >> 4];
			esc[5] = hexd[*p & 15];
			n = 6;
			break;
		}
		if (mcp__buf_add(b, esc, n) != MCP_OK)
			return MCP_ENOMEM;
		p++;
	}
	return mcp__buf_addc(b, '"');
}

/*
 * A string from a user callback, which may not be UTF-8: valid runs go
 * through add_string, each invalid byte becomes U+FFFD.
 */
int
mcp__buf_addstr(struct buf *b, const char *s, size_t n)
{
	const unsigned char	*p = (const unsigned char *)s, *e = p + n;
	struct buf		 fixed = { 0 };
	size_t			 k;
	int			 rc;

	/* Mostly plain ASCII, nothing to escape: one scan and a copy. */
	if (scan_plain(p, e) == e) {
		if (mcp__buf_reserve(b, n + 2) != MCP_OK)
			return MCP_ENOMEM;
		b->data[b->len] = '"';
		memcpy(b->data + b->len + 1, s, n);
		b->data[b->len + n + 1] = '"';
		b->len += n + 2;
		return MCP_OK;
	}
	p = scan_ascii(p, e);
	for (; p < e; p += k) {
		if (*p < 0x80) {
			k = 1;
			continue;
		}
		k = utf8_len(p, e);
		if (k == 0)
			break;
	}
	if (p == e)
		return add_string(b, s, n);
	/* Rare: rebuild with replacements, then encode. */
	p = (const unsigned char *)s;
	while (p < e) {
		k = *p < 0x80 ? 1 : utf8_len(p, e);
		if (k == 0) {
			rc = mcp__buf_add(&fixed, "\xef\xbf\xbd", 3);
			k = 1;
		} else
			rc = mcp__buf_add(&fixed, p, k);
		if (rc != MCP_OK) {
			mcp__buf_free(&fixed);
			return MCP_ENOMEM;
		}
		p += k;
	}
	rc = add_string(b, fixed.data, fixed.len);
	mcp__buf_free(&fixed);
	return rc;
}

/* "00" to "99": two digits a division. */
static const char digits2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* Formats V in decimal into OUT (at least 21 bytes); returns the length. */
size_t
mcp__fmt_int(char *out, long long v)
{
	unsigned long long	 u, t;
	size_t			 n = 1, i = 0;
	char			*p;

	u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
	if (v < 0)
		out[i++] = '-';
	/* Its digits counted first, then written from the end, in place
	 * (ids and counts are short: no buffer to copy from). */
	for (t = u; t >= 10; t /= 10)
		n++;
	p = out + i + n;
	*p = '\0';
	while (u >= 100) {
		p -= 2;
		memcpy(p, digits2 + (u % 100) * 2, 2);
		u /= 100;
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, digits2 + u * 2, 2);
	} else
		*--p = (char)('0' + u);
	return i + n;
}

/* The shortest of %.15g, %.16g, %.17g that reads back the same. */
static int
add_real(struct buf *b, double d)
{
	char	 s[40];
	int	 prec, n = 0;

	if (!isfinite(d))
		return MCP_EINVAL;	/* JSON has no NaN or Infinity */
	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(s, sizeof(s), "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	/* Keep it a real on the way back: 3 would read as an integer. */
	if (strpbrk(s, ".eE") == NULL && (size_t)n + 2 < sizeof(s)) {
		s[n++] = '.';
		s[n++] = '0';
		s[n] = '\0';
	}
	return mcp__buf_add(b, s, (size_t)n);
}

static int
add_value(struct buf *b, const json_t *v, int depth)
{
	const char	*k;
	json_t		*x;
	size_t		 i, n;
	char		 num[24];
	int		 first;

	if (depth > 2 * MAX_DEPTH)
		return MCP_EINVAL;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (mcp__buf_addc(b, '{') != MCP_OK)
			return MCP_ENOMEM;
		first = 1;
		json_object_foreach((json_t *)v, k, x) {
			if ((!first && mcp__buf_addc(b, ',') != MCP_OK) ||
			    add_string(b, k, strlen(k)) != MCP_OK ||
			    mcp__buf_addc(b, ':') != MCP_OK ||
			    add_value(b, x, depth + 1) != MCP_OK)
				return MCP_ENOMEM;
			first = 0;
		}
		return mcp__buf_addc(b, '}');
	case JSON_ARRAY:
		if (mcp__buf_addc(b, '[') != MCP_OK)
			return MCP_ENOMEM;
		n = json_array_size(v);
		for (i = 0; i < n; i++)
			if ((i > 0 && mcp__buf_addc(b, ',') != MCP_OK) ||
			    add_value(b, json_array_get(v, i), depth + 1) !=
			    MCP_OK)
				return MCP_ENOMEM;
		return mcp__buf_addc(b, ']');
	case JSON_STRING:
		return add_string(b, json_string_value(v),
		    json_string_length(v));
	case JSON_INTEGER:
		n = mcp__fmt_int(num, (long long)json_integer_value(v));
		return mcp__buf_add(b, num, n);
	case JSON_REAL:
		return add_real(b, json_real_value(v));
	case JSON_TRUE:
		return mcp__buf_add(b, "true", 4);
	case JSON_FALSE:
		return mcp__buf_add(b, "false", 5);
	case JSON_NULL:
		return mcp__buf_add(b, "null", 4);
	}
	return MCP_EINVAL;
}

int
mcp__buf_addnum(struct buf *b, double d)
{
	char	 num[24];

	if (d == (double)(long long)d && d > -1e15 && d < 1e15)
		return mcp__buf_add(b, num, mcp__fmt_int(num, (long long)d));
	return add_real(b, d);
}

/* Appends V as compact JSON: one line, never a raw newline. */
int
mcp__buf_addjson(struct buf *b, const json_t *v)
{
	if (v == NULL)
		return MCP_EINVAL;
	return add_value(b, v, 0);
}

/* ---- ids written as reals ---------------------------------------------- */

/*
 * An id such as 2.0 or 1e2 is an integer to JSON Schema, so it is taken,
 * and it is echoed as the client wrote it: kept as its text behind a
 * 0xff byte, a string no parsed message can hold (0xff is never UTF-8,
 * and the parser takes only UTF-8). The parser makes them (message_id),
 * mcp__buf_addid writes them back unquoted, and mcp__rpc_id_key gives
 * them the key of the integer. They are here, under the parser, so that
 * it and the log (an id tag) need nothing from the JSON-RPC layer.
 */
json_t *
mcp__json_id_raw(const char *text, size_t len)
{
	char	 tmp[72];

	if (len + 1 > sizeof(tmp))
		return NULL;
	tmp[0] = (char)0xff;
	memcpy(tmp + 1, text, len);
	return json_stringn_nocheck(tmp, len + 1);
}

int
mcp__json_id_is_raw(const json_t *id)
{
	const char	*s = json_string_value(id);

	return s != NULL && (unsigned char)s[0] == 0xff;
}

/* Is the number written as TEXT (LEN bytes) a finite integral value? */
int
mcp__json_integral(const char *text, size_t len, double *out)
{
	char	 tmp[64], *end;
	double	 d;

	if (len == 0 || len >= sizeof(tmp))
		return 0;
	memcpy(tmp, text, len);
	tmp[len] = '\0';
	d = strtod(tmp, &end);
	if (*end != '\0' || !isfinite(d) || d != floor(d))
		return 0;
	if (out != NULL)
		*out = d;
	return 1;
}

int
mcp__buf_addid(struct buf *b, const json_t *id)
{
	if (!mcp__json_id_is_raw(id))
		return mcp__buf_addjson(b, id);
	return mcp__buf_add(b, json_string_value(id) + 1,
	    json_string_length(id) - 1);
}
