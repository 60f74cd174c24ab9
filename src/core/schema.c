/*
 * schema.c: a small JSON Schema validator (2020-12, with the draft-07 and
 * draft-04 spellings of the same keywords) for tools/call arguments and
 * structuredContent. A schema is compiled once, at tool registration on
 * the setup thread, into a graph of nodes with every keyword already looked
 * up, type-checked and converted (numbers, counts, child pointers, property
 * tables, regular expressions), so validation, which runs on worker threads
 * for every call, never searches a schema by keyword name. The compiled
 * graph is never written after compilation, and validation keeps its state
 * on the stack (and, for regular expressions, in per-thread match data), so
 * any number of workers may validate against one schema at once.
 *
 * A flat schema (flat_make: an object of scalar properties) also lets a
 * call's arguments be read in place, into slots (core.h), which
 * mcp__schema_flat_ok checks with the same string and number checks; it
 * only ever says "valid", and anything else is the general path's.
 *
 * "pattern" and "patternProperties" are matched with PCRE2 (8-bit), which
 * is not ECMA-262, the dialect JSON Schema names; the compile options
 * bring it as close as PCRE2 goes: PCRE2_UTF (a character is a code point,
 * so "." matches all of "é"), PCRE2_ALT_BSUX and PCRE2_EXTRA_ALT_BSUX
 * (\uHHHH, \u{H...} and \xHH as in JavaScript, and a \u, \U or \x that
 * is not one of those a literal letter), PCRE2_DOLLAR_ENDONLY ("$" matches
 * only at the very end, never before a final newline),
 * PCRE2_MATCH_UNSET_BACKREF (a backreference to an unset group matches the
 * empty string), PCRE2_ALLOW_EMPTY_CLASS ("[]" matches nothing, "[^]" any
 * character) and PCRE2_NEVER_BACKSLASH_C (\C would split a code point),
 * with LF as the only newline whatever PCRE2's build default. Patterns
 * are not anchored: they search, as JavaScript's RegExp.test does. What
 * still differs: \s is ASCII white space only (JavaScript's includes
 * U+00A0, U+FEFF and the Unicode spaces), "." matches CR, U+2028 and
 * U+2029, lookbehinds must have a bounded length, and PCRE2's own syntax
 * ((?i), possessive quantifiers, \A...) is accepted. A pattern that PCRE2
 * refuses fails compilation, with PCRE2's offset and message.
 *
 * Matching is bounded: a match context caps the backtracking of each
 * match (RX_BUDGET in all for an anchored pattern; for a search, that
 * budget shared between the start positions, but never less than
 * RX_MINLIMIT a position) and the interpreter's heap (RX_HEAP_KIB), and the
 * JIT's stack is RX_JITSTACK; a JIT match that runs out of stack is tried
 * again by the interpreter. A value that hits a limit is invalid ("too
 * costly to match"), everywhere, anyOf and not included: a validation
 * never hangs on a catastrophic pattern ("^(a+)+$" against "aaaa...!").
 *
 * "format" is asserted for date-time, date, time, email, hostname, ipv4,
 * ipv6, uri, uri-reference and uuid (see the f_* functions); other formats
 * are ignored, as the standard allows.
 *
 * Keywords left out on purpose: the applicators nobody writes in tool
 * schemas (if/then/else, contains, propertyNames, dependent*,
 * unevaluated*, $dynamicRef). Unknown keywords are ignored, as the
 * standard requires.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/core.h"
#include "core/schema.h"

/*
 * How many $ref a validation may follow in one chain. A compiled schema may
 * be cyclic ({"$ref":"#"}), and only a $ref can close a cycle, so this cap
 * alone guarantees that validation ends.
 */
#define REF_MAXDEPTH	64

/* Above this many properties, a node gets a hash index instead of a scan. */
#define PROP_LINEAR	8

/* How every pattern is compiled; the header comment says why. */
#define RX_OPTIONS	(PCRE2_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY | \
			 PCRE2_MATCH_UNSET_BACKREF | PCRE2_ALLOW_EMPTY_CLASS | \
			 PCRE2_NEVER_BACKSLASH_C)
/*
 * The cost of one match, in PCRE2's match limit (backtracking points):
 * about 0.2 s of the interpreter, 0.05 s of the JIT, for "^(a+)+$" against
 * 30000 "a" and a "!". PCRE2 counts each start position of a search
 * afresh, so a search gets RX_BUDGET divided by the positions, but at least
 * RX_MINLIMIT each.
 */
#define RX_BUDGET	10000000u
#define RX_MINLIMIT	1000u
/* The interpreter's backtracking frames, KiB (PCRE2's default is 20 GB). */
#define RX_HEAP_KIB	16384u
/* The JIT's stack, per thread: it starts at 32 KiB. */
#define RX_JITSTACK	(1024u * 1024u)
/* After a value this long, a thread drops its match data (and frames). */
#define RX_KEEP		16384u

/* How much of a value or a pattern a message quotes, in code points. */
#define MSG_VALUE	40
#define MSG_PATTERN	60

#if defined(__GNUC__)
#define PRINTFLIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTFLIKE(f, a)
#endif

/* Instance types, as a mask in node.types (0: any type). */
#define T_OBJECT	0x01u
#define T_ARRAY		0x02u
#define T_STRING	0x04u
#define T_NUMBER	0x08u
#define T_INTEGER	0x10u
#define T_BOOLEAN	0x20u
#define T_NULL		0x40u

/* node.flags */
#define F_FALSE		0x0001u	/* the schema false: nothing is valid */
#define F_MIN		0x0002u
#define F_MAX		0x0004u
#define F_XMIN		0x0008u
#define F_XMAX		0x0010u
#define F_MULT		0x0020u
#define F_UNIQUE	0x0040u
#define F_OBJKW		0x0100u	/* some object keyword is present */
#define F_ARRKW		0x0200u
#define F_STRKW		0x0400u
#define F_NUMKW		0x0800u
#define F_APPLY		0x1000u	/* allOf, anyOf, oneOf, not or $ref */

static const struct {
	const char	*name;
	unsigned	 bit;
} types[] = {
	{ "object", T_OBJECT },
	{ "array", T_ARRAY },
	{ "string", T_STRING },
	{ "number", T_NUMBER },
	{ "integer", T_INTEGER },
	{ "boolean", T_BOOLEAN },
	{ "null", T_NULL },
};

/* A number from a schema or an instance, kept exact when it is integral. */
struct num {
	int		 isint;
	long long	 i;
	double		 d;
};

struct prop {
	const char	*name;	/* borrowed from the schema's copy */
	struct node	*sub;
};

/* A compiled regular expression, with its source for messages. */
struct rx {
	pcre2_code	*code;
	const char	*src;	/* borrowed from the schema's copy */
	int		 anchored;
};

/* One of patternProperties. */
struct pprop {
	struct rx	 rx;
	struct node	*sub;
};

/* node.format: the formats asserted; others are FMT_NONE. */
enum fmt {
	FMT_NONE,
	FMT_DATETIME,
	FMT_DATE,
	FMT_TIME,
	FMT_EMAIL,
	FMT_HOSTNAME,
	FMT_IPV4,
	FMT_IPV6,
	FMT_URI,
	FMT_URIREF,
	FMT_UUID,
};

struct node {
	const json_t	 *src;		/* compiled from this ($ref memo) */
	unsigned	  flags;
	unsigned	  types;
	struct num	  min;
	struct num	  max;
	struct num	  xmin;
	struct num	  xmax;
	struct num	  mult;
	long long	  minlen;	/* string length bounds, code points */
	long long	  maxlen;
	long long	  minitems;
	long long	  maxitems;
	long long	  minprops;
	long long	  maxprops;
	const json_t	 *enumv;	/* borrowed from the schema's copy */
	const json_t	 *constv;
	struct rx	  pattern;	/* code NULL: none */
	enum fmt	  format;
	const char	 *fmtname;	/* borrowed from the schema's copy */
	struct prop	 *props;
	size_t		  nprops;
	json_t		 *pindex;	/* name -> index, if nprops is big */
	struct pprop	 *pprops;	/* patternProperties */
	size_t		  npprops;
	const char	**req;
	size_t		  nreq;
	struct node	 *addl;		/* additionalProperties; NULL: any */
	struct node	**prefix;	/* prefixItems (or draft-07 items[]) */
	size_t		  nprefix;
	struct node	 *items;	/* items after the prefix; NULL: any */
	struct node	**allof;
	size_t		  nallof;
	struct node	**anyof;
	size_t		  nanyof;
	struct node	**oneof;
	size_t		  noneof;
	struct node	 *notn;
	struct node	 *ref;
};

struct mcp__schema {
	json_t		 *doc;		/* our copy; nodes borrow from it */
	struct node	 *root;
	struct node	**nodes;	/* every node, for the memo and free */
	size_t		  nnodes;
	size_t		  capnodes;
	/* A flat schema (flat_make): its properties, and which of them
	 * are required, a bit each. flat.n is 0 when it is not flat. */
	struct mcp__flat  flat;
	unsigned	  flat_req;
};

/* A bounded, always NUL-terminated string under construction. */
struct sbuf {
	char		*b;
	size_t		 cap;
	size_t		 len;
	int		 trunc;
};

/* A location in the schema, innermost first, for compile errors. */
struct spath {
	const struct spath	*up;
	const char		*key;	/* NULL: an array index */
	size_t			 idx;
};

/* A location in the instance, innermost first, for validation errors. */
struct path {
	const struct path	*up;
	const char		*key;	/* NULL: an array index */
	size_t			 idx;
};

struct cctx {
	struct mcp__schema	*s;
	char			*err;
	size_t			 errlen;
	pcre2_compile_context	*rxc;	/* made at the first pattern */
};

struct vctx {
	char		*err;
	size_t		 errlen;
	const char	*root;
	int		 quiet;		/* in anyOf/oneOf/not: no messages */
	int		 aborted;	/* $ref cap hit: fail everything */
};

static int	v_node(struct vctx *, const struct node *, const json_t *,
		    const struct path *, int);
static void	num_fmt(char *, size_t, const struct num *);
static void	num_get(const json_t *, struct num *);

static void
sb_putn(struct sbuf *sb, const char *s, size_t n)
{
	size_t	 room;

	room = sb->cap - 1 - sb->len;
	if (n > room) {
		n = room;
		sb->trunc = 1;
	}
	memcpy(sb->b + sb->len, s, n);
	sb->len += n;
	sb->b[sb->len] = '\0';
}

static void
sb_puts(struct sbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static void
sb_vprintf(struct sbuf *sb, const char *fmt, va_list ap)
{
	size_t	 room;
	int	 r;

	room = sb->cap - sb->len;
	r = vsnprintf(sb->b + sb->len, room, fmt, ap);
	if (r < 0)
		sb->b[sb->len] = '\0';
	else if ((size_t)r >= room) {
		sb->len = sb->cap - 1;
		sb->trunc = 1;
	} else
		sb->len += (size_t)r;
}

static void PRINTFLIKE(2, 3)
sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

/*
 * Appends the N bytes at S as a double-quoted string, escaping quotes,
 * backslashes and control characters (NUL included), so that a message
 * stays on one line whatever names a client sends. After MAX code points
 * the string is cut, and "..." follows the closing quote.
 */
static void
sb_quote_cut(struct sbuf *sb, const char *s, size_t n, size_t max)
{
	const char	*end = s + n;
	char		 esc[8];
	size_t		 cps = 0;

	sb_putn(sb, "\"", 1);
	for (; s < end; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80 && cps++ == max)
			break;
		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = *s;
			sb_putn(sb, esc, 2);
		} else if ((unsigned char)*s < 0x20 || *s == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x",
			    (unsigned)(unsigned char)*s);
			sb_puts(sb, esc);
		} else
			sb_putn(sb, s, 1);
	}
	sb_putn(sb, "\"", 1);
	if (s < end)
		sb_putn(sb, "...", 3);
}

static void
sb_quote(struct sbuf *sb, const char *s)
{
	sb_quote_cut(sb, s, strlen(s), SIZE_MAX);
}

/*
 * Appends V as compact JSON. Hand-written rather than json_dumpb because
 * jansson's encoder marks the containers it visits (its loop check), and V
 * belongs to a schema that other threads may be reading at the same time.
 * Numbers come out as in num_fmt, reals keeping a decimal point.
 */
static void
sb_json(struct sbuf *sb, const json_t *v)
{
	const char	*key;
	const json_t	*e;
	struct num	 n;
	char		 buf[40];
	size_t		 i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		sb_putn(sb, "{", 1);
		i = 0;
		json_object_foreach((json_t *)v, key, e) {
			if (sb->trunc)
				break;
			if (i++ > 0)
				sb_putn(sb, ",", 1);
			sb_quote(sb, key);
			sb_putn(sb, ":", 1);
			sb_json(sb, e);
		}
		sb_putn(sb, "}", 1);
		break;
	case JSON_ARRAY:
		sb_putn(sb, "[", 1);
		for (i = 0; i < json_array_size(v) && !sb->trunc; i++) {
			if (i > 0)
				sb_putn(sb, ",", 1);
			sb_json(sb, json_array_get(v, i));
		}
		sb_putn(sb, "]", 1);
		break;
	case JSON_STRING:
		sb_quote_cut(sb, json_string_value(v), json_string_length(v),
		    SIZE_MAX);
		break;
	case JSON_INTEGER:
	case JSON_REAL:
		num_get(v, &n);
		num_fmt(buf, sizeof(buf), &n);
		sb_puts(sb, buf);
		if (!n.isint && strpbrk(buf, ".eEin") == NULL)
			sb_putn(sb, ".0", 2);
		break;
	case JSON_TRUE:
		sb_puts(sb, "true");
		break;
	case JSON_FALSE:
		sb_puts(sb, "false");
		break;
	default:
		sb_puts(sb, "null");
		break;
	}
}

/*
 * Finishes SB: when it was cut short, drops a UTF-8 sequence left
 * incomplete at the end, because callers put the message into a json_t and
 * jansson refuses invalid UTF-8.
 */
static void
sb_end(struct sbuf *sb)
{
	size_t		 j;
	size_t		 need;
	unsigned char	 c;

	if (sb->trunc) {
		j = sb->len;
		while (j > 0 && ((unsigned char)sb->b[j - 1] & 0xc0) == 0x80)
			j--;
		if (j > 0) {
			c = (unsigned char)sb->b[j - 1];
			need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 :
			    c >= 0xc0 ? 2 : 1;
			if (sb->len - (j - 1) < need)
				sb->len = j - 1;
		}
	}
	sb->b[sb->len] = '\0';
}

/* Formats N so that it reads back as the same value. */
static void
num_fmt(char *buf, size_t sz, const struct num *n)
{
	if (n->isint) {
		snprintf(buf, sz, "%lld", n->i);
		return;
	}
	snprintf(buf, sz, "%.15g", n->d);
	if (strtod(buf, NULL) != n->d)
		snprintf(buf, sz, "%.17g", n->d);
}

static void
num_get(const json_t *v, struct num *n)
{
	if (json_is_integer(v)) {
		n->isint = 1;
		n->i = json_integer_value(v);
		n->d = (double)n->i;
	} else {
		n->isint = 0;
		n->i = 0;
		n->d = json_number_value(v);
	}
}

/* Returns <0, 0 or >0 as A is below, equal to or above B. */
static int
num_cmp(const struct num *a, const struct num *b)
{
	if (a->isint && b->isint)
		return (a->i > b->i) - (a->i < b->i);
	return (a->d > b->d) - (a->d < b->d);
}

/* Is the real D an integer that a long long holds exactly? */
static int
real_integral(double d, long long *out)
{
	if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 ||
	    d >= 9223372036854775808.0)
		return 0;
	*out = (long long)d;
	return 1;
}

/*
 * JSON equality for enum, const and uniqueItems. Unlike json_equal, an
 * integer and a real are equal when their values are, as JSON Schema says
 * (1 and 1.0 are the same number).
 */
static int
jeq(const json_t *a, const json_t *b)
{
	const char	*key;
	const json_t	*va;
	long long	 i;
	size_t		 n;
	size_t		 k;

	if (a == b)
		return 1;
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		if (json_is_real(a) && json_is_real(b))
			return json_real_value(a) == json_real_value(b);
		if (json_is_integer(a)) {
			va = a;
			a = b;
			b = va;
		}
		return real_integral(json_real_value(a), &i) &&
		    i == json_integer_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return 0;
	switch (json_typeof(a)) {
	case JSON_STRING:
		n = json_string_length(a);
		return n == json_string_length(b) &&
		    memcmp(json_string_value(a), json_string_value(b), n) == 0;
	case JSON_ARRAY:
		n = json_array_size(a);
		if (n != json_array_size(b))
			return 0;
		for (k = 0; k < n; k++)
			if (!jeq(json_array_get(a, k), json_array_get(b, k)))
				return 0;
		return 1;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)a, key, va) {
			if (json_object_get(b, key) == NULL ||
			    !jeq(va, json_object_get(b, key)))
				return 0;
		}
		return 1;
	default:
		/* true, false and null: the types already matched. */
		return 1;
	}
}

static const char *
json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}

/* ---- Compilation ------------------------------------------------------ */

static void
spath_render(struct sbuf *sb, const struct spath *p)
{
	const char	*s;

	if (p->up == NULL) {
		sb_puts(sb, p->key);
		return;
	}
	spath_render(sb, p->up);
	sb_putn(sb, "/", 1);
	if (p->key == NULL) {
		sb_printf(sb, "%zu", p->idx);
		return;
	}
	for (s = p->key; *s != '\0'; s++) {
		if (*s == '~')
			sb_putn(sb, "~0", 2);
		else if (*s == '/')
			sb_putn(sb, "~1", 2);
		else
			sb_putn(sb, s, 1);
	}
}

/*
 * Records a compile error as "<schema pointer>[/KW]: <message>" and returns
 * -1, for the callers' convenience.
 */
static int PRINTFLIKE(4, 5)
cfail(struct cctx *c, const struct spath *p, const char *kw,
    const char *fmt, ...)
{
	struct sbuf	 sb;
	va_list		 ap;

	if (c->err == NULL || c->errlen == 0)
		return -1;
	sb.b = c->err;
	sb.cap = c->errlen;
	sb.len = 0;
	sb.trunc = 0;
	sb.b[0] = '\0';
	if (p != NULL) {
		spath_render(&sb, p);
		if (kw != NULL) {
			sb_putn(&sb, "/", 1);
			sb_puts(&sb, kw);
		}
		sb_puts(&sb, ": ");
	}
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	sb_end(&sb);
	return -1;
}

/* Allocates a node for JS and records it in the schema's node list. */
static struct node *
node_new(struct cctx *c, const json_t *js, const struct spath *p)
{
	struct mcp__schema	 *s = c->s;
	struct node		**nv;
	struct node		 *n;
	size_t			  cap;

	if (s->nnodes == s->capnodes) {
		cap = s->capnodes == 0 ? 16 : s->capnodes * 2;
		nv = realloc(s->nodes, cap * sizeof(*nv));
		if (nv == NULL) {
			cfail(c, p, NULL, "out of memory");
			return NULL;
		}
		s->nodes = nv;
		s->capnodes = cap;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL) {
		cfail(c, p, NULL, "out of memory");
		return NULL;
	}
	n->src = js;
	n->maxlen = LLONG_MAX;
	n->maxitems = LLONG_MAX;
	n->maxprops = LLONG_MAX;
	s->nodes[s->nnodes++] = n;
	return n;
}

static void
node_free(struct node *n)
{
	size_t	 i;

	pcre2_code_free(n->pattern.code);
	for (i = 0; i < n->npprops; i++)
		pcre2_code_free(n->pprops[i].rx.code);
	free(n->pprops);
	free(n->props);
	json_decref(n->pindex);
	free(n->req);
	free(n->prefix);
	free(n->allof);
	free(n->anyof);
	free(n->oneof);
	free(n);
}

static struct node	*c_schema(struct cctx *, const json_t *,
			    const struct spath *);

/*
 * Compiles JS unless a node for that very JSON value exists already, which
 * is what makes recursive $ref terminate: a node joins the list before its
 * children are compiled, so a $ref back to an ancestor finds it.
 */
static struct node *
c_memo(struct cctx *c, const json_t *js, const struct spath *p)
{
	size_t	 i;

	for (i = 0; i < c->s->nnodes; i++)
		if (c->s->nodes[i]->src == js)
			return c->s->nodes[i];
	return c_schema(c, js, p);
}

/* Reads keyword KW as a number into OUT: 1 if present, 0 if not, -1. */
static int
c_num(struct cctx *c, const json_t *js, const struct spath *p,
    const char *kw, struct num *out)
{
	const json_t	*v;

	v = json_object_get(js, kw);
	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return cfail(c, p, kw, "must be a number, not %s",
		    json_type_name(v));
	num_get(v, out);
	return 1;
}

/* Reads keyword KW as a non-negative integer: 1 if present, 0 if not, -1. */
static int
c_count(struct cctx *c, const json_t *js, const struct spath *p,
    const char *kw, long long *out)
{
	const json_t	*v;
	double		 d;

	v = json_object_get(js, kw);
	if (v == NULL)
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = json_integer_value(v);
		return 1;
	}
	if (json_is_real(v)) {
		d = json_real_value(v);
		if (d >= 0 && d == floor(d)) {
			*out = d >= 9223372036854775807.0 ? LLONG_MAX :
			    (long long)d;
			return 1;
		}
	}
	return cfail(c, p, kw, "must be a non-negative integer");
}

/* Compiles the schema at JS[KW] into *OUT: 1 if present, 0 if not, -1. */
static int
c_sub(struct cctx *c, const json_t *js, const struct spath *p,
    const char *kw, struct node **out)
{
	struct spath	 sp;
	const json_t	*v;

	v = json_object_get(js, kw);
	if (v == NULL)
		return 0;
	sp.up = p;
	sp.key = kw;
	sp.idx = 0;
	*out = c_schema(c, v, &sp);
	return *out == NULL ? -1 : 1;
}

/* Compiles an array of schemas (allOf, prefixItems...) from V. */
static int
c_array(struct cctx *c, const json_t *v, const struct spath *p,
    const char *kw, struct node ***out, size_t *nout)
{
	struct spath	 sp;
	struct spath	 ip;
	size_t		 i;
	size_t		 n;

	if (!json_is_array(v) || json_array_size(v) == 0)
		return cfail(c, p, kw, "must be a non-empty array of schemas");
	n = json_array_size(v);
	*out = calloc(n, sizeof(**out));
	if (*out == NULL)
		return cfail(c, p, kw, "out of memory");
	*nout = n;
	sp.up = p;
	sp.key = kw;
	sp.idx = 0;
	for (i = 0; i < n; i++) {
		ip.up = &sp;
		ip.key = NULL;
		ip.idx = i;
		(*out)[i] = c_schema(c, json_array_get(v, i), &ip);
		if ((*out)[i] == NULL)
			return -1;
	}
	return 1;
}

static int
c_type(struct cctx *c, struct node *n, const json_t *v,
    const struct spath *p)
{
	const json_t	*e;
	const char	*name;
	size_t		 i;
	size_t		 k;
	size_t		 cnt;
	unsigned	 bit;

	if (json_is_string(v))
		cnt = 1;
	else if (json_is_array(v) && json_array_size(v) > 0)
		cnt = json_array_size(v);
	else
		return cfail(c, p, "type",
		    "must be a string or a non-empty array of strings");
	for (i = 0; i < cnt; i++) {
		e = json_is_string(v) ? v : json_array_get(v, i);
		if (!json_is_string(e))
			return cfail(c, p, "type",
			    "must be a string or a non-empty array of strings");
		name = json_string_value(e);
		bit = 0;
		for (k = 0; k < sizeof(types) / sizeof(types[0]); k++)
			if (strcmp(name, types[k].name) == 0)
				bit = types[k].bit;
		if (bit == 0)
			return cfail(c, p, "type", "unknown type \"%s\"", name);
		n->types |= bit;
	}
	return 0;
}

static int
c_exclusive(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p, int lower)
{
	const char	*kw = lower ? "exclusiveMinimum" : "exclusiveMaximum";
	const json_t	*v;
	unsigned	 inc = lower ? F_MIN : F_MAX;
	unsigned	 exc = lower ? F_XMIN : F_XMAX;
	struct num	*bound = lower ? &n->min : &n->max;
	struct num	*xbound = lower ? &n->xmin : &n->xmax;

	v = json_object_get(js, kw);
	if (v == NULL)
		return 0;
	if (json_is_number(v)) {
		num_get(v, xbound);
		n->flags |= exc;
		return 0;
	}
	if (!json_is_boolean(v))
		return cfail(c, p, kw, "must be a number (or, in draft-04, "
		    "a boolean)");
	/* Draft-04: a boolean that makes minimum/maximum exclusive. */
	if (json_is_true(v) && (n->flags & inc)) {
		*xbound = *bound;
		n->flags = (n->flags & ~inc) | exc;
	}
	return 0;
}

static int
c_properties(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	struct spath	 sp;
	struct spath	 kp;
	const json_t	*v;
	const json_t	*sub;
	const char	*key;
	size_t		 i;

	v = json_object_get(js, "properties");
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return cfail(c, p, "properties", "must be an object");
	n->nprops = json_object_size(v);
	if (n->nprops == 0)
		return 0;
	n->props = calloc(n->nprops, sizeof(*n->props));
	if (n->props == NULL)
		return cfail(c, p, "properties", "out of memory");
	if (n->nprops > PROP_LINEAR) {
		n->pindex = json_object();
		if (n->pindex == NULL)
			return cfail(c, p, "properties", "out of memory");
	}
	sp.up = p;
	sp.key = "properties";
	sp.idx = 0;
	i = 0;
	json_object_foreach((json_t *)v, key, sub) {
		kp.up = &sp;
		kp.key = key;
		kp.idx = 0;
		n->props[i].name = key;
		n->props[i].sub = c_schema(c, sub, &kp);
		if (n->props[i].sub == NULL)
			return -1;
		if (n->pindex != NULL && json_object_set_new(n->pindex, key,
		    json_integer((json_int_t)i)) == -1)
			return cfail(c, p, "properties", "out of memory");
		i++;
	}
	return 0;
}

/*
 * Compiles the LEN bytes at SRC into RX, or fails naming the schema
 * location P[/KW] and PCRE2's offset (in bytes) and message. The JIT is
 * tried too; without it (not built in, or no executable memory) the
 * interpreter matches.
 */
static int
c_regex(struct cctx *c, const struct spath *p, const char *kw,
    const char *src, size_t len, struct rx *rx)
{
	PCRE2_UCHAR	 msg[160];
	PCRE2_SIZE	 off;
	uint32_t	 opts;
	int		 ec;

	if (c->rxc == NULL) {
		c->rxc = pcre2_compile_context_create(NULL);
		if (c->rxc == NULL)
			return cfail(c, p, kw, "out of memory");
		if (pcre2_set_compile_extra_options(c->rxc,
		    PCRE2_EXTRA_ALT_BSUX) != 0 ||
		    pcre2_set_newline(c->rxc, PCRE2_NEWLINE_LF) != 0)
			return cfail(c, p, kw, "cannot set PCRE2's options");
	}
	rx->src = src;
	rx->code = pcre2_compile((PCRE2_SPTR)src, len, RX_OPTIONS, &ec, &off,
	    c->rxc);
	if (rx->code == NULL) {
		if (pcre2_get_error_message(ec, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "PCRE2 error %d",
			    ec);
		return cfail(c, p, kw, "invalid regular expression at offset "
		    "%zu: %s", (size_t)off, (const char *)msg);
	}
	(void)pcre2_jit_compile(rx->code, PCRE2_JIT_COMPLETE);
	/* "^..." is anchored: one start position, the whole budget. */
	if (pcre2_pattern_info(rx->code, PCRE2_INFO_ALLOPTIONS, &opts) == 0 &&
	    (opts & PCRE2_ANCHORED))
		rx->anchored = 1;
	return 0;
}

static int
c_pattern(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	const json_t	*v;

	v = json_object_get(js, "pattern");
	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return cfail(c, p, "pattern", "must be a string");
	return c_regex(c, p, "pattern", json_string_value(v),
	    json_string_length(v), &n->pattern);
}

static int
c_pattern_props(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	struct spath	 sp;
	struct spath	 kp;
	const json_t	*v;
	const json_t	*sub;
	const char	*key;
	size_t		 i;

	v = json_object_get(js, "patternProperties");
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return cfail(c, p, "patternProperties", "must be an object");
	if (json_object_size(v) == 0)
		return 0;
	n->pprops = calloc(json_object_size(v), sizeof(*n->pprops));
	if (n->pprops == NULL)
		return cfail(c, p, "patternProperties", "out of memory");
	sp.up = p;
	sp.key = "patternProperties";
	sp.idx = 0;
	i = 0;
	json_object_foreach((json_t *)v, key, sub) {
		kp.up = &sp;
		kp.key = key;
		kp.idx = 0;
		/* Counted first, so that node_free frees what compiled. */
		n->npprops = ++i;
		if (c_regex(c, &kp, NULL, key, strlen(key),
		    &n->pprops[i - 1].rx) == -1)
			return -1;
		n->pprops[i - 1].sub = c_schema(c, sub, &kp);
		if (n->pprops[i - 1].sub == NULL)
			return -1;
	}
	return 0;
}

static const struct {
	const char	*name;
	enum fmt	 fmt;
} formats[] = {
	{ "date-time", FMT_DATETIME },
	{ "date", FMT_DATE },
	{ "time", FMT_TIME },
	{ "email", FMT_EMAIL },
	{ "hostname", FMT_HOSTNAME },
	{ "ipv4", FMT_IPV4 },
	{ "ipv6", FMT_IPV6 },
	{ "uri", FMT_URI },
	{ "uri-reference", FMT_URIREF },
	{ "uuid", FMT_UUID },
};

static int
c_format(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	const json_t	*v;
	size_t		 i;

	v = json_object_get(js, "format");
	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return cfail(c, p, "format", "must be a string");
	/* An unknown format is an annotation only, as the standard allows. */
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(json_string_value(v), formats[i].name) == 0) {
			n->format = formats[i].fmt;
			n->fmtname = formats[i].name;
		}
	return 0;
}

static int
c_required(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	const json_t	*v;
	const json_t	*e;
	size_t		 i;

	v = json_object_get(js, "required");
	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return cfail(c, p, "required", "must be an array of strings");
	n->nreq = json_array_size(v);
	if (n->nreq == 0)
		return 0;
	n->req = calloc(n->nreq, sizeof(*n->req));
	if (n->req == NULL)
		return cfail(c, p, "required", "out of memory");
	for (i = 0; i < n->nreq; i++) {
		e = json_array_get(v, i);
		if (!json_is_string(e))
			return cfail(c, p, "required",
			    "must be an array of strings");
		n->req[i] = json_string_value(e);
	}
	return 0;
}

/*
 * Items, in both spellings: 2020-12 has prefixItems for the leading items
 * and items for the rest; draft-07 has items as an array for the leading
 * items and additionalItems for the rest, or items as one schema for all.
 */
static int
c_items(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	const json_t	*prefix;
	const json_t	*items;

	prefix = json_object_get(js, "prefixItems");
	items = json_object_get(js, "items");
	if (prefix != NULL) {
		if (c_array(c, prefix, p, "prefixItems", &n->prefix,
		    &n->nprefix) == -1)
			return -1;
		return c_sub(c, js, p, "items", &n->items) == -1 ? -1 : 0;
	}
	if (json_is_array(items)) {
		if (json_array_size(items) > 0 && c_array(c, items, p,
		    "items", &n->prefix, &n->nprefix) == -1)
			return -1;
		return c_sub(c, js, p, "additionalItems", &n->items) == -1 ?
		    -1 : 0;
	}
	return c_sub(c, js, p, "items", &n->items) == -1 ? -1 : 0;
}

/*
 * Resolves REF, a same-document reference ("#" or "#/json/pointer", URI
 * percent-escapes and RFC 6901 ~0 ~1 escapes allowed) against the root.
 * Returns NULL, with a reason, when REF is not local or leads nowhere.
 */
static const json_t *
resolve(struct cctx *c, const char *ref, const struct spath *p)
{
	const json_t	*cur;
	char		*buf;
	char		*tok;
	char		*end;
	char		*w;
	const char	*r;
	char		 hex[3];
	size_t		 idx;
	int		 more;

	if (ref[0] != '#' || (ref[1] != '\0' && ref[1] != '/')) {
		cfail(c, p, "$ref", "only local references (\"#\" or "
		    "\"#/...\") are supported, not \"%s\"", ref);
		return NULL;
	}
	buf = malloc(strlen(ref) + 1);
	if (buf == NULL) {
		cfail(c, p, "$ref", "out of memory");
		return NULL;
	}
	/* The fragment is percent-decoded first, then read as a pointer. */
	w = buf;
	for (r = ref + 1; *r != '\0'; r++) {
		if (*r == '%' && isxdigit((unsigned char)r[1]) &&
		    isxdigit((unsigned char)r[2])) {
			hex[0] = r[1];
			hex[1] = r[2];
			hex[2] = '\0';
			*w = (char)strtol(hex, NULL, 16);
			if (*w == '\0')
				goto fail;
			w++;
			r += 2;
		} else
			*w++ = *r;
	}
	*w = '\0';
	cur = c->s->doc;
	tok = buf;
	more = *tok == '/';
	while (cur != NULL && more) {
		tok++;
		end = tok + strcspn(tok, "/");
		more = *end == '/';
		*end = '\0';
		/* Unescape ~1 and ~0 in place; the token only shrinks. */
		w = tok;
		for (r = tok; r < end; r++) {
			if (*r == '~' && (r[1] == '0' || r[1] == '1')) {
				*w++ = r[1] == '0' ? '~' : '/';
				r++;
			} else
				*w++ = *r;
		}
		*w = '\0';
		if (json_is_object(cur))
			cur = json_object_get(cur, tok);
		else if (json_is_array(cur) && w > tok &&
		    strspn(tok, "0123456789") == (size_t)(w - tok) &&
		    (tok[0] != '0' || w - tok == 1)) {
			idx = 0;
			for (r = tok; r < w; r++)
				idx = idx * 10 + (size_t)(*r - '0');
			cur = json_array_get(cur, idx);
		} else
			cur = NULL;
		tok = end;
	}
	if (cur == NULL)
		goto fail;
	free(buf);
	return cur;
fail:
	free(buf);
	cfail(c, p, "$ref", "cannot resolve \"%s\"", ref);
	return NULL;
}

static int
c_ref(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	struct spath	 rp;
	const json_t	*v;
	const json_t	*target;

	v = json_object_get(js, "$ref");
	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return cfail(c, p, "$ref", "must be a string");
	target = resolve(c, json_string_value(v), p);
	if (target == NULL)
		return -1;
	/* Errors inside the target are reported at the target's pointer. */
	rp.up = NULL;
	rp.key = json_string_value(v);
	rp.idx = 0;
	n->ref = c_memo(c, target, &rp);
	return n->ref == NULL ? -1 : 0;
}

/*
 * Compiles the definitions under $defs and definitions too, although only
 * a $ref reaches them, so that a mistake there is reported at registration
 * rather than never.
 */
static int
c_defs(struct cctx *c, const json_t *js, const struct spath *p,
    const char *kw)
{
	struct spath	 sp;
	struct spath	 kp;
	const json_t	*v;
	const json_t	*sub;
	const char	*key;

	v = json_object_get(js, kw);
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return cfail(c, p, kw, "must be an object");
	sp.up = p;
	sp.key = kw;
	sp.idx = 0;
	json_object_foreach((json_t *)v, key, sub) {
		kp.up = &sp;
		kp.key = key;
		kp.idx = 0;
		if (c_memo(c, sub, &kp) == NULL)
			return -1;
	}
	return 0;
}

static int
c_keywords(struct cctx *c, struct node *n, const json_t *js,
    const struct spath *p)
{
	const json_t	*v;
	int		 r;

	v = json_object_get(js, "type");
	if (v != NULL && c_type(c, n, v, p) == -1)
		return -1;

	v = json_object_get(js, "enum");
	if (v != NULL && !json_is_array(v))
		return cfail(c, p, "enum", "must be an array");
	n->enumv = v;
	n->constv = json_object_get(js, "const");

	/* Numbers. */
	r = c_num(c, js, p, "minimum", &n->min);
	if (r == -1)
		return -1;
	if (r == 1)
		n->flags |= F_MIN;
	r = c_num(c, js, p, "maximum", &n->max);
	if (r == -1)
		return -1;
	if (r == 1)
		n->flags |= F_MAX;
	if (c_exclusive(c, n, js, p, 1) == -1 ||
	    c_exclusive(c, n, js, p, 0) == -1)
		return -1;
	r = c_num(c, js, p, "multipleOf", &n->mult);
	if (r == -1)
		return -1;
	if (r == 1) {
		if (n->mult.d <= 0)
			return cfail(c, p, "multipleOf",
			    "must be greater than 0");
		n->flags |= F_MULT;
	}
	if (n->flags & (F_MIN | F_MAX | F_XMIN | F_XMAX | F_MULT))
		n->flags |= F_NUMKW;

	/* Strings. */
	if (c_count(c, js, p, "minLength", &n->minlen) == -1 ||
	    c_count(c, js, p, "maxLength", &n->maxlen) == -1 ||
	    c_pattern(c, n, js, p) == -1 || c_format(c, n, js, p) == -1)
		return -1;
	if (n->minlen > 0 || n->maxlen < LLONG_MAX ||
	    n->pattern.code != NULL || n->format != FMT_NONE)
		n->flags |= F_STRKW;

	/* Arrays. */
	if (c_count(c, js, p, "minItems", &n->minitems) == -1 ||
	    c_count(c, js, p, "maxItems", &n->maxitems) == -1)
		return -1;
	v = json_object_get(js, "uniqueItems");
	if (v != NULL && !json_is_boolean(v))
		return cfail(c, p, "uniqueItems", "must be a boolean");
	if (json_is_true(v))
		n->flags |= F_UNIQUE;
	if (c_items(c, n, js, p) == -1)
		return -1;
	if (n->minitems > 0 || n->maxitems < LLONG_MAX ||
	    (n->flags & F_UNIQUE) || n->nprefix > 0 || n->items != NULL)
		n->flags |= F_ARRKW;

	/* Objects. */
	if (c_count(c, js, p, "minProperties", &n->minprops) == -1 ||
	    c_count(c, js, p, "maxProperties", &n->maxprops) == -1)
		return -1;
	if (c_required(c, n, js, p) == -1 ||
	    c_properties(c, n, js, p) == -1 ||
	    c_sub(c, js, p, "additionalProperties", &n->addl) == -1)
		return -1;
	if (c_pattern_props(c, n, js, p) == -1)
		return -1;
	if (n->minprops > 0 || n->maxprops < LLONG_MAX || n->nreq > 0 ||
	    n->nprops > 0 || n->npprops > 0 || n->addl != NULL)
		n->flags |= F_OBJKW;

	/* Applicators. */
	v = json_object_get(js, "allOf");
	if (v != NULL && c_array(c, v, p, "allOf", &n->allof,
	    &n->nallof) == -1)
		return -1;
	v = json_object_get(js, "anyOf");
	if (v != NULL && c_array(c, v, p, "anyOf", &n->anyof,
	    &n->nanyof) == -1)
		return -1;
	v = json_object_get(js, "oneOf");
	if (v != NULL && c_array(c, v, p, "oneOf", &n->oneof,
	    &n->noneof) == -1)
		return -1;
	if (c_sub(c, js, p, "not", &n->notn) == -1 ||
	    c_defs(c, js, p, "$defs") == -1 ||
	    c_defs(c, js, p, "definitions") == -1 ||
	    c_ref(c, n, js, p) == -1)
		return -1;
	if (n->nallof > 0 || n->nanyof > 0 || n->noneof > 0 ||
	    n->notn != NULL || n->ref != NULL)
		n->flags |= F_APPLY;
	return 0;
}

static struct node *
c_schema(struct cctx *c, const json_t *js, const struct spath *p)
{
	struct node	*n;

	if (!json_is_object(js) && !json_is_boolean(js)) {
		cfail(c, p, NULL, "a schema must be an object or a boolean, "
		    "not %s", json_type_name(js));
		return NULL;
	}
	n = node_new(c, js, p);
	if (n == NULL)
		return NULL;
	if (json_is_false(js))
		n->flags |= F_FALSE;
	else if (json_is_object(js) && c_keywords(c, n, js, p) == -1)
		return NULL;
	return n;
}

/*
 * Whether S is flat, and if so its properties into s->flat: an object
 * with properties only (required too, and any additionalProperties,
 * since a member that is not a property takes the general path), each
 * of them of scalar types, checked by keywords that need no jansson
 * value (string lengths, pattern, format, number bounds, multipleOf).
 */
static void
flat_make(struct mcp__schema *s)
{
	const struct node	*r = s->root, *sub;
	const unsigned		 scalar = T_STRING | T_NUMBER | T_INTEGER |
				     T_BOOLEAN;
	size_t			 i, j;

	if ((r->flags & ~F_OBJKW) != 0 || (r->types != 0 &&
	    !(r->types & T_OBJECT)) || r->constv != NULL ||
	    r->enumv != NULL || r->minprops > 0 ||
	    r->maxprops != LLONG_MAX || r->npprops > 0 ||
	    r->nprops > MCP__FLAT_MAX)
		return;
	for (i = 0; i < r->nprops; i++) {
		sub = r->props[i].sub;
		if ((sub->flags & (F_FALSE | F_APPLY | F_OBJKW | F_ARRKW |
		    F_UNIQUE)) != 0 || (sub->types & ~scalar) != 0 ||
		    sub->constv != NULL || sub->enumv != NULL)
			return;
	}
	for (j = 0; j < r->nreq; j++) {
		for (i = 0; i < r->nprops; i++)
			if (strcmp(r->props[i].name, r->req[j]) == 0)
				break;
		if (i == r->nprops)
			return;		/* required, never a property */
		s->flat_req |= 1u << i;
	}
	for (i = 0; i < r->nprops; i++) {
		const unsigned char *c = (const unsigned char *)
		    r->props[i].name;

		s->flat.name[i] = r->props[i].name;
		s->flat.len[i] = strlen(r->props[i].name);
		s->flat.plain[i] = 1;
		for (; *c != '\0'; c++)
			if (*c < 0x20 || *c == '"' || *c == '\\')
				s->flat.plain[i] = 0;
	}
	s->flat.n = r->nprops;
}

struct mcp__schema *
mcp__schema_compile(const json_t *schema, int require_object, char *err,
    size_t errlen)
{
	struct mcp__schema	*s;
	struct cctx		 c;
	struct spath		 root;
	const json_t		*type;

	c.s = NULL;
	c.err = err;
	c.errlen = errlen;
	c.rxc = NULL;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (schema == NULL) {
		cfail(&c, NULL, NULL, "no schema");
		return NULL;
	}
	if (require_object) {
		if (!json_is_object(schema)) {
			cfail(&c, NULL, NULL, "schema must be a JSON object, "
			    "not %s", json_type_name(schema));
			return NULL;
		}
		type = json_object_get(schema, "type");
		if (type == NULL) {
			cfail(&c, NULL, NULL, "schema has no \"type\"; it "
			    "must be \"object\"");
			return NULL;
		}
		if (!json_is_string(type) ||
		    strcmp(json_string_value(type), "object") != 0) {
			cfail(&c, NULL, NULL, "schema \"type\" must be "
			    "\"object\"");
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		cfail(&c, NULL, NULL, "out of memory");
		return NULL;
	}
	c.s = s;
	s->doc = json_deep_copy(schema);
	if (s->doc == NULL) {
		cfail(&c, NULL, NULL, "out of memory");
		goto fail;
	}
	root.up = NULL;
	root.key = "#";
	root.idx = 0;
	s->root = c_schema(&c, s->doc, &root);
	if (s->root == NULL)
		goto fail;
	flat_make(s);
	pcre2_compile_context_free(c.rxc);
	return s;
fail:
	pcre2_compile_context_free(c.rxc);
	mcp__schema_free(s);
	return NULL;
}

void
mcp__schema_free(struct mcp__schema *s)
{
	size_t	 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nnodes; i++)
		node_free(s->nodes[i]);
	free(s->nodes);
	json_decref(s->doc);
	free(s);
}

/* ---- Validation ------------------------------------------------------- */

static int
is_ident(const char *s)
{
	if (!(isalpha((unsigned char)*s) || *s == '_' || *s == '$'))
		return 0;
	for (s++; *s != '\0'; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '$'))
			return 0;
	return 1;
}

/* Renders P the way a JavaScript programmer would: a.b["c d"][2]. */
static void
path_render(struct sbuf *sb, const struct path *p)
{
	if (p == NULL)
		return;
	path_render(sb, p->up);
	if (p->key == NULL)
		sb_printf(sb, "[%zu]", p->idx);
	else if (is_ident(p->key)) {
		sb_putn(sb, ".", 1);
		sb_puts(sb, p->key);
	} else {
		sb_putn(sb, "[", 1);
		sb_quote(sb, p->key);
		sb_putn(sb, "]", 1);
	}
}

/*
 * Starts an error message at P in SB: returns 0 when no message is wanted
 * (no buffer, or inside a branch of anyOf/oneOf/not) unless FORCE.
 */
static int
err_begin(struct vctx *c, const struct path *p, struct sbuf *sb, int force)
{
	if (c->err == NULL || c->errlen == 0 || (c->quiet && !force))
		return 0;
	sb->b = c->err;
	sb->cap = c->errlen;
	sb->len = 0;
	sb->trunc = 0;
	sb->b[0] = '\0';
	sb_puts(sb, c->root);
	path_render(sb, p);
	sb_puts(sb, ": ");
	return 1;
}

static int PRINTFLIKE(3, 4)
fail(struct vctx *c, const struct path *p, const char *fmt, ...)
{
	struct sbuf	 sb;
	va_list		 ap;

	if (!err_begin(c, p, &sb, 0))
		return -1;
	va_start(ap, fmt);
	sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	sb_end(&sb);
	return -1;
}

/* "<path>: WHAT "KEY"", with KEY quoted and escaped. */
static int
fail_key(struct vctx *c, const struct path *p, const char *what,
    const char *key)
{
	struct sbuf	 sb;

	if (!err_begin(c, p, &sb, 0))
		return -1;
	sb_puts(&sb, what);
	sb_quote(&sb, key);
	sb_end(&sb);
	return -1;
}

static int
fail_const(struct vctx *c, const struct path *p, const json_t *v)
{
	struct sbuf	 sb;

	if (!err_begin(c, p, &sb, 0))
		return -1;
	sb_puts(&sb, "must be equal to ");
	sb_json(&sb, v);
	sb_end(&sb);
	return -1;
}

static int
fail_enum(struct vctx *c, const struct path *p, const json_t *v)
{
	struct sbuf	 sb;
	size_t		 i;

	if (!err_begin(c, p, &sb, 0))
		return -1;
	sb_puts(&sb, json_array_size(v) == 0 ? "no value is allowed here" :
	    "must be one of ");
	for (i = 0; i < json_array_size(v) && !sb.trunc; i++) {
		if (i > 0)
			sb_puts(&sb, ", ");
		sb_json(&sb, json_array_get(v, i));
	}
	sb_end(&sb);
	return -1;
}

static int
fail_type(struct vctx *c, const struct path *p, unsigned mask,
    const json_t *inst)
{
	struct sbuf	 sb;
	size_t		 i;
	size_t		 n;
	size_t		 k;

	if (!err_begin(c, p, &sb, 0))
		return -1;
	/* "number" already says "integer". */
	if (mask & T_NUMBER)
		mask &= ~T_INTEGER;
	n = 0;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (mask & types[i].bit)
			n++;
	sb_puts(&sb, "expected ");
	k = 0;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (!(mask & types[i].bit))
			continue;
		if (k > 0)
			sb_puts(&sb, k + 1 == n ? " or " : ", ");
		sb_puts(&sb, types[i].name);
		k++;
	}
	sb_puts(&sb, ", got ");
	sb_puts(&sb, json_type_name(inst));
	sb_end(&sb);
	return -1;
}

static int
type_ok(unsigned mask, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return (mask & T_OBJECT) != 0;
	case JSON_ARRAY:
		return (mask & T_ARRAY) != 0;
	case JSON_STRING:
		return (mask & T_STRING) != 0;
	case JSON_INTEGER:
		return (mask & (T_NUMBER | T_INTEGER)) != 0;
	case JSON_REAL:
		if (mask & T_NUMBER)
			return 1;
		/* 1.0 is an integer to JSON Schema, and so is 1e300. */
		return (mask & T_INTEGER) != 0 &&
		    isfinite(json_real_value(v)) &&
		    json_real_value(v) == floor(json_real_value(v));
	case JSON_TRUE:
	case JSON_FALSE:
		return (mask & T_BOOLEAN) != 0;
	default:
		return (mask & T_NULL) != 0;
	}
}

static const char *
plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static const struct node *
prop_find(const struct node *n, const char *key)
{
	const json_t	*ix;
	size_t		 i;

	if (n->pindex != NULL) {
		ix = json_object_get(n->pindex, key);
		return ix == NULL ? NULL :
		    n->props[json_integer_value(ix)].sub;
	}
	for (i = 0; i < n->nprops; i++)
		if (strcmp(n->props[i].name, key) == 0)
			return n->props[i].sub;
	return NULL;
}

/* ---- Regular expressions ---------------------------------------------- */

/*
 * What a thread matches with, made at its first match and kept: PCRE2's
 * match data (which also keeps the interpreter's frames between matches,
 * so that a match allocates nothing), a match context with the limits,
 * and a JIT stack. None of these may be shared between threads; the
 * compiled patterns are.
 */
struct rxthread {
	pcre2_match_data	*md;
	pcre2_match_context	*mc;
	pcre2_jit_stack		*js;
};

static pthread_once_t	 rx_once = PTHREAD_ONCE_INIT;
static pthread_key_t	 rx_key;
static int		 rx_keyok;

static void
rx_thread_free(void *arg)
{
	struct rxthread	*t = arg;

	if (t == NULL)
		return;
	pcre2_match_data_free(t->md);
	pcre2_match_context_free(t->mc);
	pcre2_jit_stack_free(t->js);
	free(t);
}

static void
rx_key_init(void)
{
	rx_keyok = pthread_key_create(&rx_key, rx_thread_free) == 0;
}

/*
 * The calling thread's match state, or NULL when out of memory. *OWNED is
 * set when it could not be kept for the thread, and the caller must free
 * it after the match.
 */
static struct rxthread *
rx_thread(int *owned)
{
	struct rxthread	*t;

	*owned = 0;
	(void)pthread_once(&rx_once, rx_key_init);
	t = rx_keyok ? pthread_getspecific(rx_key) : NULL;
	if (t == NULL) {
		t = calloc(1, sizeof(*t));
		if (t == NULL)
			return NULL;
		t->mc = pcre2_match_context_create(NULL);
		if (t->mc == NULL || pcre2_set_heap_limit(t->mc,
		    RX_HEAP_KIB) != 0) {
			rx_thread_free(t);
			return NULL;
		}
		/* Without a stack of its own, the JIT uses 32 KiB of ours. */
		t->js = pcre2_jit_stack_create(32 * 1024, RX_JITSTACK, NULL);
		if (t->js != NULL)
			pcre2_jit_stack_assign(t->mc, NULL, t->js);
		if (!rx_keyok || pthread_setspecific(rx_key, t) != 0)
			*owned = 1;
	}
	/* One pair is enough: only the verdict matters. */
	if (t->md == NULL)
		t->md = pcre2_match_data_create(1, NULL);
	if (t->md == NULL) {
		if (*owned)
			rx_thread_free(t);
		return NULL;
	}
	return t;
}

/*
 * Matches RX against the LEN bytes at S, the value at P (WHAT says which:
 * "" for a string value, "property name " for a key). Returns 1 on a
 * match, 0 on none, and -1 when the match could not be decided (too
 * costly, out of memory): that aborts the whole validation, as the $ref
 * cap does, because inside a not it would otherwise turn into a pass.
 */
static int
rx_match(struct vctx *c, const struct rx *rx, const char *s, size_t len,
    const struct path *p, const char *what)
{
	struct rxthread	*t;
	struct sbuf	 sb;
	uint32_t	 limit;
	int		 owned;
	int		 r;

	t = rx_thread(&owned);
	if (t == NULL) {
		r = PCRE2_ERROR_NOMEMORY;
		goto fail;
	}
	limit = RX_BUDGET;
	if (!rx->anchored) {
		limit = RX_BUDGET / (len + 1 < RX_BUDGET ? len + 1 : RX_BUDGET);
		if (limit < RX_MINLIMIT)
			limit = RX_MINLIMIT;
	}
	(void)pcre2_set_match_limit(t->mc, limit);
	r = pcre2_match(rx->code, (PCRE2_SPTR)s, len, 0, 0, t->md, t->mc);
	/* The interpreter's frames are on the heap, under a limit of theirs. */
	if (r == PCRE2_ERROR_JIT_STACKLIMIT)
		r = pcre2_match(rx->code, (PCRE2_SPTR)s, len, 0, PCRE2_NO_JIT,
		    t->md, t->mc);
	if (owned)
		rx_thread_free(t);
	else if (len > RX_KEEP) {
		/* The frames of a long match are not kept for the thread. */
		pcre2_match_data_free(t->md);
		t->md = NULL;
	}
	if (r >= 0)
		return 1;
	if (r == PCRE2_ERROR_NOMATCH)
		return 0;
fail:
	c->aborted = 1;
	if (!err_begin(c, p, &sb, 1))
		return -1;
	sb_puts(&sb, what);
	sb_quote_cut(&sb, s, len, MSG_VALUE);
	switch (r) {
	case PCRE2_ERROR_MATCHLIMIT:
	case PCRE2_ERROR_DEPTHLIMIT:
	case PCRE2_ERROR_HEAPLIMIT:
	case PCRE2_ERROR_JIT_STACKLIMIT:
		sb_puts(&sb, " is too costly to match against pattern ");
		break;
	case PCRE2_ERROR_NOMEMORY:
		sb_puts(&sb, ": out of memory matching pattern ");
		break;
	default:
		sb_printf(&sb, ": PCRE2 error %d matching pattern ", r);
		break;
	}
	sb_quote_cut(&sb, rx->src, strlen(rx->src), MSG_PATTERN);
	sb_end(&sb);
	return -1;
}

/* ---- Formats ----------------------------------------------------------- */

/*
 * Each f_* function checks the N bytes at S (no NUL needed, and a NUL in
 * them is no allowed character) and returns 1 when they are in the
 * format. ASCII only: these are the formats without "idn-" or "iri".
 */

static int
is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

static int
is_alpha(int ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int
is_hex(int ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'f') ||
	    (ch >= 'A' && ch <= 'F');
}

/* The N digits at S as a number; -1 if one is not a digit. */
static int
digits(const char *s, size_t n)
{
	size_t	 i;
	int	 v = 0;

	for (i = 0; i < n; i++) {
		if (!is_digit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* RFC 3339 full-date, YYYY-MM-DD, a real day: 02-29 in leap years only. */
static int
f_date(const char *s, size_t n)
{
	static const int	 mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31,
	    30, 31, 30, 31 };
	int			 y, m, d, leap;

	if (n != 10 || s[4] != '-' || s[7] != '-')
		return 0;
	y = digits(s, 4);
	m = digits(s + 5, 2);
	d = digits(s + 8, 2);
	if (y < 0 || m < 1 || m > 12 || d < 1)
		return 0;
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return d <= mdays[m - 1] + (m == 2 && leap);
}

/*
 * RFC 3339 full-time: HH:MM:SS, an optional fraction, then Z (or z) or an
 * offset +HH:MM or -HH:MM. The second may be 60, a leap second, only at
 * 23:59 UTC (so 15:59:60-08:00 is one).
 */
static int
f_time(const char *s, size_t n)
{
	size_t	 i;
	int	 h, mi, sec;
	int	 sign = 0, oh = 0, om = 0;

	if (n < 9 || s[2] != ':' || s[5] != ':')
		return 0;
	h = digits(s, 2);
	mi = digits(s + 3, 2);
	sec = digits(s + 6, 2);
	if (h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 60)
		return 0;
	i = 8;
	if (s[i] == '.') {
		for (i++; i < n && is_digit((unsigned char)s[i]); i++)
			;
		if (i == 9)
			return 0;
	}
	if (i + 1 == n && (s[i] == 'Z' || s[i] == 'z'))
		;
	else if (i + 6 == n && (s[i] == '+' || s[i] == '-') &&
	    s[i + 3] == ':') {
		sign = s[i] == '+' ? 1 : -1;
		oh = digits(s + i + 1, 2);
		om = digits(s + i + 4, 2);
		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return 0;
	} else
		return 0;
	if (sec == 60 && ((h * 60 + mi - sign * (oh * 60 + om)) % 1440 +
	    1440) % 1440 != 23 * 60 + 59)
		return 0;
	return 1;
}

/* RFC 3339 date-time: full-date "T" (or "t") full-time. */
static int
f_datetime(const char *s, size_t n)
{
	return n > 11 && (s[10] == 'T' || s[10] == 't') && f_date(s, 10) &&
	    f_time(s + 11, n - 11);
}

/* Dotted quad: four decimal numbers 0 to 255, without leading zeros. */
static int
f_ipv4(const char *s, size_t n)
{
	size_t	 i = 0;
	size_t	 k;
	int	 part;
	int	 v;

	for (part = 0; part < 4; part++) {
		if (part > 0) {
			if (i >= n || s[i] != '.')
				return 0;
			i++;
		}
		k = i;
		v = 0;
		while (i < n && i - k < 3 && is_digit((unsigned char)s[i]))
			v = v * 10 + (s[i++] - '0');
		if (i == k || v > 255 || (s[k] == '0' && i - k > 1))
			return 0;
	}
	return i == n;
}

/*
 * RFC 4291 text forms: eight groups of one to four hex digits separated
 * by ":", or fewer with one "::" standing for one or more zero groups;
 * the last two groups may be written as a dotted quad. No zone ("%eth0").
 */
static int
f_ipv6(const char *s, size_t n)
{
	size_t	 i = 0;
	size_t	 k;
	int	 groups = 0;
	int	 dbl = 0;

	if (n >= 2 && s[0] == ':' && s[1] == ':') {
		dbl = 1;
		i = 2;
		if (i == n)
			return 1;
	}
	for (;;) {
		k = i;
		while (i < n && is_hex((unsigned char)s[i]))
			i++;
		if (i < n && s[i] == '.') {
			/* The dotted quad ends the address. */
			if (!f_ipv4(s + k, n - k))
				return 0;
			groups += 2;
			break;
		}
		if (i == k || i - k > 4)
			return 0;
		groups++;
		if (i == n)
			break;
		if (s[i++] != ':' || i == n)
			return 0;
		if (s[i] == ':') {
			if (dbl)
				return 0;
			dbl = 1;
			if (++i == n)
				break;
		}
	}
	return dbl ? groups <= 7 : groups == 8;
}

/*
 * RFC 1123 host name: dot-separated labels of 1 to 63 letters, digits and
 * hyphens, no label starting or ending with a hyphen, 253 bytes at most.
 */
static int
f_hostname(const char *s, size_t n)
{
	size_t	 i;
	size_t	 start = 0;

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (i == start || i - start > 63 || s[start] == '-' ||
			    s[i - 1] == '-')
				return 0;
			start = i + 1;
		} else if (!is_alpha((unsigned char)s[i]) &&
		    !is_digit((unsigned char)s[i]) && s[i] != '-')
			return 0;
	}
	return 1;
}

/* RFC 5321 atext. */
static int
is_atext(int ch)
{
	return is_alpha(ch) || is_digit(ch) ||
	    (ch != '\0' && strchr("!#$%&'*+-/=?^_`{|}~", ch) != NULL);
}

/*
 * A practical RFC 5321 mailbox: a local part of at most 64 bytes, either
 * dot-separated atoms of atext or a non-empty quoted string (printable
 * ASCII, with \ quoting), then "@" and a host name or an address literal,
 * [1.2.3.4] or [IPv6:...].
 */
static int
f_email(const char *s, size_t n)
{
	const char	*d;
	size_t		 i;
	size_t		 dn;
	int		 ch;

	i = 0;
	if (n > 0 && s[0] == '"') {
		for (i = 1; i < n && s[i] != '"'; i++) {
			if (s[i] == '\\' && ++i == n)
				return 0;
			ch = (unsigned char)s[i];
			if (ch < 0x20 || ch > 0x7e)
				return 0;
		}
		if (i >= n || i == 1)
			return 0;
		i++;
	} else {
		for (; i < n && s[i] != '@'; i++)
			if (s[i] == '.' ? i == 0 || s[i - 1] == '.' :
			    !is_atext((unsigned char)s[i]))
				return 0;
		if (i == 0 || s[i - 1] == '.')
			return 0;
	}
	if (i > 64 || i >= n || s[i] != '@')
		return 0;
	d = s + i + 1;
	dn = n - i - 1;
	if (dn >= 2 && d[0] == '[' && d[dn - 1] == ']') {
		if (dn > 7 && strncasecmp(d + 1, "IPv6:", 5) == 0)
			return f_ipv6(d + 6, dn - 7);
		return f_ipv4(d + 1, dn - 2);
	}
	return f_hostname(d, dn);
}

/*
 * Are the N bytes at S all RFC 3986 unreserved or sub-delims characters,
 * percent-escapes (%HH) or characters of EXTRA?
 */
static int
uri_chars(const char *s, size_t n, const char *extra)
{
	size_t	 i;
	int	 ch;

	for (i = 0; i < n; i++) {
		ch = (unsigned char)s[i];
		if (ch == '%') {
			if (i + 2 >= n || !is_hex((unsigned char)s[i + 1]) ||
			    !is_hex((unsigned char)s[i + 2]))
				return 0;
			i += 2;
		} else if (!is_alpha(ch) && !is_digit(ch) && (ch == '\0' ||
		    (strchr("-._~!$&'()*+,;=", ch) == NULL &&
		    strchr(extra, ch) == NULL)))
			return 0;
	}
	return 1;
}

/* RFC 3986 authority: [ userinfo "@" ] host [ ":" port ]. */
static int
uri_authority(const char *s, size_t n)
{
	const char	*at;
	const char	*end;
	size_t		 i;

	at = memchr(s, '@', n);
	if (at != NULL) {
		if (!uri_chars(s, (size_t)(at - s), ":"))
			return 0;
		n -= (size_t)(at - s) + 1;
		s = at + 1;
	}
	if (n > 0 && s[0] == '[') {
		/* IP-literal: an IPv6 address or IPvFuture. */
		end = memchr(s, ']', n);
		if (end == NULL)
			return 0;
		i = (size_t)(end - s);
		if (i >= 2 && (s[1] == 'v' || s[1] == 'V')) {
			for (i = 2; s + i < end && is_hex((unsigned char)s[i]);
			    i++)
				;
			if (i == 2 || s + i >= end || s[i] != '.' ||
			    s + i + 1 == end || !uri_chars(s + i + 1,
			    (size_t)(end - s) - i - 1, ":"))
				return 0;
		} else if (!f_ipv6(s + 1, i - 1))
			return 0;
		i = (size_t)(end - s) + 1;
	} else {
		/* reg-name, or an IPv4 address, which is one too. */
		for (i = 0; i < n && s[i] != ':'; i++)
			;
		if (!uri_chars(s, i, ""))
			return 0;
	}
	if (i == n)
		return 1;
	if (s[i] != ':')
		return 0;
	for (i++; i < n; i++)
		if (!is_digit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* The length of the scheme that S starts with (before its ":"), or 0. */
static size_t
uri_scheme(const char *s, size_t n)
{
	size_t	 i;
	int	 ch;

	if (n == 0 || !is_alpha((unsigned char)s[0]))
		return 0;
	for (i = 1; i < n; i++) {
		ch = (unsigned char)s[i];
		if (ch == ':')
			return i;
		if (!is_alpha(ch) && !is_digit(ch) && ch != '+' && ch != '-' &&
		    ch != '.')
			return 0;
	}
	return 0;
}

/*
 * What follows a URI's scheme and ":" (a hier-part), or a whole relative
 * reference (a relative-part, whose first segment holds no ":"), then an
 * optional "?" query and "#" fragment.
 */
static int
uri_rest(const char *s, size_t n, int relative)
{
	const char	*h;
	size_t		 f;
	size_t		 q;
	size_t		 a;

	h = memchr(s, '#', n);
	f = h == NULL ? n : (size_t)(h - s);
	if (f < n && !uri_chars(s + f + 1, n - f - 1, ":@/?"))
		return 0;
	h = memchr(s, '?', f);
	q = h == NULL ? f : (size_t)(h - s);
	if (q < f && !uri_chars(s + q + 1, f - q - 1, ":@/?"))
		return 0;
	if (q >= 2 && s[0] == '/' && s[1] == '/') {
		for (a = 2; a < q && s[a] != '/'; a++)
			;
		if (!uri_authority(s + 2, a - 2))
			return 0;
		return uri_chars(s + a, q - a, ":@/");
	}
	if (relative) {
		h = memchr(s, '/', q);
		if (memchr(s, ':', h == NULL ? q : (size_t)(h - s)) != NULL)
			return 0;
	}
	return uri_chars(s, q, ":@/");
}

/* RFC 3986 URI: scheme ":" hier-part [ "?" query ] [ "#" fragment ]. */
static int
f_uri(const char *s, size_t n)
{
	size_t	 k;

	k = uri_scheme(s, n);
	return k > 0 && uri_rest(s + k + 1, n - k - 1, 0);
}

/* RFC 3986 URI-reference: a URI or a relative reference ("" too). */
static int
f_uriref(const char *s, size_t n)
{
	size_t	 k;

	k = uri_scheme(s, n);
	if (k > 0)
		return uri_rest(s + k + 1, n - k - 1, 0);
	return uri_rest(s, n, 1);
}

/* RFC 4122 text: 8-4-4-4-12 hex digits, either case, any version. */
static int
f_uuid(const char *s, size_t n)
{
	size_t	 i;

	if (n != 36)
		return 0;
	for (i = 0; i < n; i++)
		if (i == 8 || i == 13 || i == 18 || i == 23 ? s[i] != '-' :
		    !is_hex((unsigned char)s[i]))
			return 0;
	return 1;
}

static int
format_ok(enum fmt f, const char *s, size_t n)
{
	switch (f) {
	case FMT_DATETIME:
		return f_datetime(s, n);
	case FMT_DATE:
		return f_date(s, n);
	case FMT_TIME:
		return f_time(s, n);
	case FMT_EMAIL:
		return f_email(s, n);
	case FMT_HOSTNAME:
		return f_hostname(s, n);
	case FMT_IPV4:
		return f_ipv4(s, n);
	case FMT_IPV6:
		return f_ipv6(s, n);
	case FMT_URI:
		return f_uri(s, n);
	case FMT_URIREF:
		return f_uriref(s, n);
	case FMT_UUID:
		return f_uuid(s, n);
	default:
		return 1;
	}
}

/* "<path>: "VALUE" does not match WHAT "NAME"", both cut if long. */
static int
fail_match(struct vctx *c, const struct path *p, const char *s, size_t n,
    const char *what, const char *name)
{
	struct sbuf	 sb;

	if (!err_begin(c, p, &sb, 0))
		return -1;
	sb_quote_cut(&sb, s, n, MSG_VALUE);
	sb_puts(&sb, " does not match ");
	sb_puts(&sb, what);
	sb_quote_cut(&sb, name, strlen(name), MSG_PATTERN);
	sb_end(&sb);
	return -1;
}

static int
v_object(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p, int rdepth)
{
	const struct node	*sub;
	struct path		 cp;
	const char		*key;
	json_t			*val;
	long long		 size;
	size_t			 i;
	int			 matched;
	int			 r;

	size = (long long)json_object_size(inst);
	if (size < n->minprops)
		return fail(c, p, "must have at least %lld %s", n->minprops,
		    plural(n->minprops, "property", "properties"));
	if (size > n->maxprops)
		return fail(c, p, "must have at most %lld %s", n->maxprops,
		    plural(n->maxprops, "property", "properties"));
	for (i = 0; i < n->nreq; i++)
		if (mcp__json_get(inst, n->req[i]) == NULL)
			return fail_key(c, p, "missing required property ",
			    n->req[i]);
	if (n->nprops == 0 && n->npprops == 0 && n->addl == NULL)
		return 0;
	json_object_foreach((json_t *)inst, key, val) {
		cp.up = p;
		cp.key = key;
		cp.idx = 0;
		sub = prop_find(n, key);
		matched = sub != NULL;
		if (sub != NULL && v_node(c, sub, val, &cp, rdepth) == -1)
			return -1;
		/* Every pattern that matches applies, properties or not. */
		for (i = 0; i < n->npprops; i++) {
			r = rx_match(c, &n->pprops[i].rx, key, strlen(key), p,
			    "property name ");
			if (r == -1)
				return -1;
			if (r == 0)
				continue;
			matched = 1;
			if (v_node(c, n->pprops[i].sub, val, &cp, rdepth) == -1)
				return -1;
		}
		/* additionalProperties: the names neither of them matched. */
		if (matched || n->addl == NULL)
			continue;
		if (n->addl->flags & F_FALSE)
			return fail_key(c, p, "unexpected property ", key);
		if (v_node(c, n->addl, val, &cp, rdepth) == -1)
			return -1;
	}
	return 0;
}

static int
v_array(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p, int rdepth)
{
	const struct node	*sub;
	struct path		 cp;
	long long		 size;
	size_t			 i;
	size_t			 j;

	size = (long long)json_array_size(inst);
	if (size < n->minitems)
		return fail(c, p, "must have at least %lld %s", n->minitems,
		    plural(n->minitems, "item", "items"));
	if (size > n->maxitems)
		return fail(c, p, "must have at most %lld %s", n->maxitems,
		    plural(n->maxitems, "item", "items"));
	for (i = 0; i < (size_t)size; i++) {
		sub = i < n->nprefix ? n->prefix[i] : n->items;
		if (sub == NULL)
			break;
		if (i >= n->nprefix && (sub->flags & F_FALSE))
			return fail(c, p, "must have at most %zu %s",
			    n->nprefix, plural((long long)n->nprefix,
			    "item", "items"));
		cp.up = p;
		cp.key = NULL;
		cp.idx = i;
		if (v_node(c, sub, json_array_get(inst, i), &cp,
		    rdepth) == -1)
			return -1;
	}
	if (n->flags & F_UNIQUE)
		for (i = 0; i < (size_t)size; i++)
			for (j = i + 1; j < (size_t)size; j++)
				if (jeq(json_array_get(inst, i),
				    json_array_get(inst, j)))
					return fail(c, p, "must not contain "
					    "duplicates ([%zu] and [%zu] are "
					    "equal)", i, j);
	return 0;
}

static int
v_str(struct vctx *c, const struct node *n, const char *s, size_t bytes,
    const struct path *p)
{
	size_t		 i;
	long long	 cps;
	int		 r;

	/*
	 * A code point takes one to four bytes, so the byte count often
	 * settles both bounds without counting ("\xc3\xa9" is 2 bytes but 1
	 * code point, too short for minLength 2).
	 */
	if ((long long)bytes > n->maxlen ||
	    (long long)(bytes / 4) < n->minlen) {
		cps = 0;
		for (i = 0; i < bytes; i++)
			if (((unsigned char)s[i] & 0xc0) != 0x80)
				cps++;
		if (cps < n->minlen)
			return fail(c, p, "must be at least %lld character%s "
			    "long", n->minlen, plural(n->minlen, "", "s"));
		if (cps > n->maxlen)
			return fail(c, p, "must be at most %lld character%s "
			    "long", n->maxlen, plural(n->maxlen, "", "s"));
	}
	if (n->format != FMT_NONE && !format_ok(n->format, s, bytes))
		return fail_match(c, p, s, bytes, "format ", n->fmtname);
	if (n->pattern.code != NULL) {
		r = rx_match(c, &n->pattern, s, bytes, p, "");
		if (r == -1)
			return -1;
		if (r == 0)
			return fail_match(c, p, s, bytes, "pattern ",
			    n->pattern.src);
	}
	return 0;
}

static int
v_string(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p)
{
	return v_str(c, n, json_string_value(inst), json_string_length(inst),
	    p);
}

static int
multiple_ok(const struct num *v, const struct num *m)
{
	double	 q;

	if (v->isint && m->isint)
		return v->i % m->i == 0;
	q = v->d / m->d;
	if (!isfinite(q))
		return 0;
	/* Decimal fractions are inexact in binary: 0.3 / 0.1 is 2.999... */
	return fabs(q - nearbyint(q)) <= 1e-9 * fmax(1.0, fabs(q));
}

static int
v_num(struct vctx *c, const struct node *n, const struct num *vp,
    const struct path *p)
{
	struct num	 v = *vp;
	char		 buf[40];

	if ((n->flags & F_MIN) && num_cmp(&v, &n->min) < 0) {
		num_fmt(buf, sizeof(buf), &n->min);
		return fail(c, p, "must be >= %s", buf);
	}
	if ((n->flags & F_MAX) && num_cmp(&v, &n->max) > 0) {
		num_fmt(buf, sizeof(buf), &n->max);
		return fail(c, p, "must be <= %s", buf);
	}
	if ((n->flags & F_XMIN) && num_cmp(&v, &n->xmin) <= 0) {
		num_fmt(buf, sizeof(buf), &n->xmin);
		return fail(c, p, "must be > %s", buf);
	}
	if ((n->flags & F_XMAX) && num_cmp(&v, &n->xmax) >= 0) {
		num_fmt(buf, sizeof(buf), &n->xmax);
		return fail(c, p, "must be < %s", buf);
	}
	if ((n->flags & F_MULT) && !multiple_ok(&v, &n->mult)) {
		num_fmt(buf, sizeof(buf), &n->mult);
		return fail(c, p, "must be a multiple of %s", buf);
	}
	return 0;
}

static int
v_number(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p)
{
	struct num	 v;

	num_get(inst, &v);
	return v_num(c, n, &v, p);
}

/*
 * Runs N against INST with messages off, for a branch of anyOf, oneOf or
 * not. Returns 0 or -1 like v_node; when c->aborted is set afterwards the
 * $ref cap fired, and the -1 must be passed up, never inverted or ignored.
 */
static int
v_quiet(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p, int rdepth)
{
	int	 saved;
	int	 r;

	saved = c->quiet;
	c->quiet = 1;
	r = v_node(c, n, inst, p, rdepth);
	c->quiet = saved;
	return r;
}

static int
v_apply(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p, int rdepth)
{
	struct sbuf	 sb;
	size_t		 i;
	size_t		 first;
	size_t		 hits;

	for (i = 0; i < n->nallof; i++)
		if (v_node(c, n->allof[i], inst, p, rdepth) == -1)
			return -1;
	if (n->nanyof > 0) {
		for (i = 0; i < n->nanyof; i++) {
			if (v_quiet(c, n->anyof[i], inst, p, rdepth) == 0)
				break;
			if (c->aborted)
				return -1;
		}
		if (i == n->nanyof)
			return fail(c, p, "must match at least one schema "
			    "in anyOf");
	}
	if (n->noneof > 0) {
		hits = 0;
		first = 0;
		for (i = 0; i < n->noneof && hits < 2; i++) {
			if (v_quiet(c, n->oneof[i], inst, p, rdepth) == 0) {
				if (hits++ == 0)
					first = i;
			} else if (c->aborted)
				return -1;
		}
		if (hits == 0)
			return fail(c, p, "must match exactly one schema in "
			    "oneOf, but matches none");
		if (hits > 1)
			return fail(c, p, "must match exactly one schema in "
			    "oneOf, but matches [%zu] and [%zu]", first,
			    i - 1);
	}
	if (n->notn != NULL) {
		if (v_quiet(c, n->notn, inst, p, rdepth) == 0)
			return fail(c, p, "must not match the schema in not");
		if (c->aborted)
			return -1;
	}
	if (n->ref != NULL) {
		if (rdepth >= REF_MAXDEPTH) {
			/* Reported even inside anyOf: it is the real cause. */
			c->aborted = 1;
			if (err_begin(c, p, &sb, 1)) {
				sb_printf(&sb, "schema $ref nesting exceeds "
				    "%d levels", REF_MAXDEPTH);
				sb_end(&sb);
			}
			return -1;
		}
		return v_node(c, n->ref, inst, p, rdepth + 1);
	}
	return 0;
}

/* Validates INST against N at location P; RDEPTH counts the $ref taken. */
static int
v_node(struct vctx *c, const struct node *n, const json_t *inst,
    const struct path *p, int rdepth)
{
	unsigned	 f = n->flags;
	size_t		 i;

	if (f & F_FALSE)
		return fail(c, p, "no value is allowed here");
	if (n->types != 0 && !type_ok(n->types, inst))
		return fail_type(c, p, n->types, inst);
	if (n->constv != NULL && !jeq(n->constv, inst))
		return fail_const(c, p, n->constv);
	if (n->enumv != NULL) {
		for (i = 0; i < json_array_size(n->enumv); i++)
			if (jeq(json_array_get(n->enumv, i), inst))
				break;
		if (i == json_array_size(n->enumv))
			return fail_enum(c, p, n->enumv);
	}
	switch (json_typeof(inst)) {
	case JSON_OBJECT:
		if ((f & F_OBJKW) && v_object(c, n, inst, p, rdepth) == -1)
			return -1;
		break;
	case JSON_ARRAY:
		if ((f & F_ARRKW) && v_array(c, n, inst, p, rdepth) == -1)
			return -1;
		break;
	case JSON_STRING:
		if ((f & F_STRKW) && v_string(c, n, inst, p) == -1)
			return -1;
		break;
	case JSON_INTEGER:
	case JSON_REAL:
		if ((f & F_NUMKW) && v_number(c, n, inst, p) == -1)
			return -1;
		break;
	default:
		break;
	}
	if (f & F_APPLY)
		return v_apply(c, n, inst, p, rdepth);
	return 0;
}

int
mcp__schema_validate(const struct mcp__schema *s, const json_t *inst,
    const char *root, char *err, size_t errlen)
{
	struct vctx	 c;

	c.err = err;
	c.errlen = errlen;
	c.root = root == NULL ? "value" : root;
	c.quiet = 0;
	c.aborted = 0;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (s == NULL)
		return fail(&c, NULL, "no schema to validate against");
	if (inst == NULL)
		return fail(&c, NULL, "missing");
	return v_node(&c, s->root, inst, NULL, 0);
}

const struct mcp__flat *
mcp__schema_flat(const struct mcp__schema *s)
{
	return s != NULL && s->flat.n > 0 ? &s->flat : NULL;
}

int
mcp__schema_flat_ok(const struct mcp__schema *s,
    const struct mcp__flat_args *a)
{
	const struct mcp__slot	*sl;
	const struct node	*sub;
	struct vctx		 c;
	struct num		 v;
	unsigned		 mask;
	size_t			 i;

	memset(&c, 0, sizeof(c));
	c.root = "arguments";
	c.quiet = 1;
	for (i = 0; i < s->flat.n; i++) {
		sl = &a->slot[i];
		sub = s->root->props[i].sub;
		mask = sub->types != 0 ? sub->types : ~0u;
		switch (sl->type) {
		case MCP__SLOT_NONE:
			if (s->flat_req & (1u << i))
				return 0;
			continue;
		case MCP__SLOT_STR:
			if (!(mask & T_STRING) || ((sub->flags & F_STRKW) &&
			    v_str(&c, sub, sl->s, sl->len, NULL) != 0))
				return 0;
			continue;
		case MCP__SLOT_INT:
		case MCP__SLOT_REAL:
			/* A real where only integers go (3.0) is the general
			 * path's to judge. */
			if (!(mask & (sl->type == MCP__SLOT_INT ?
			    T_NUMBER | T_INTEGER : T_NUMBER)))
				return 0;
			v.isint = sl->type == MCP__SLOT_INT;
			v.i = v.isint ? sl->i : 0;
			v.d = sl->d;
			if ((sub->flags & F_NUMKW) && v_num(&c, sub, &v,
			    NULL) != 0)
				return 0;
			continue;
		default:
			if (!(mask & T_BOOLEAN))
				return 0;
			continue;
		}
	}
	return 1;
}
