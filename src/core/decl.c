/*
 * decl.c: argument declarations, the compact alternative to writing a
 * tool's inputSchema (or outputSchema) as JSON text. A declaration is a
 * list of fields; this turns it into the JSON Schema object that the
 * client sees and schema.c validates against, so there is one validator
 * and one source of truth. mcp_args(7) is the user's reference; in short:
 *
 *	decl	:= { field sep }			sep: ',' ';' newline
 *	field	:= name ['?'] [':'] type ['=' literal] [desc] | "..."
 *	type	:= word ['(' mod {',' mod} ')']
 *		 | '[' type ']' ['(' mod {',' mod} ')']
 *		 | '{' decl '}'
 *		 | "enum" '(' literal {',' literal} ')'
 *	word	:= string integer number boolean object any
 *		 | date-time date time email uri uuid ipv4 ipv6 hostname
 *	mod	:= [num] ".." [num] | num | ('>' | ">=" | '<' | "<=") num
 *		 | '/' regex '/' | "unique" | "header" token
 *	desc	:= 'text' | "text" | '#' text to the end of the line
 *
 * A quote inside a quoted text is written twice, as in SQL. A field with
 * '?' or a default is optional; an object refuses members it does not
 * declare unless it lists "...". Everything is checked here, at
 * registration, and a mistake is reported with its line and column.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/schema.h"

#define DECL_MAXDEPTH	32	/* nested objects and arrays */

/* What a type word stands for. */
enum kind { K_STRING, K_INTEGER, K_NUMBER, K_BOOLEAN, K_OBJECT, K_ARRAY,
	K_ANY, K_ENUM };

static const struct {
	const char	*word;
	enum kind	 kind;
	const char	*format;	/* strings of a format */
} words[] = {
	{ "string", K_STRING, NULL },
	{ "integer", K_INTEGER, NULL },
	{ "int", K_INTEGER, NULL },
	{ "number", K_NUMBER, NULL },
	{ "boolean", K_BOOLEAN, NULL },
	{ "bool", K_BOOLEAN, NULL },
	{ "object", K_OBJECT, NULL },
	{ "any", K_ANY, NULL },
	{ "date-time", K_STRING, "date-time" },
	{ "date", K_STRING, "date" },
	{ "time", K_STRING, "time" },
	{ "email", K_STRING, "email" },
	{ "uri", K_STRING, "uri" },
	{ "uuid", K_STRING, "uuid" },
	{ "ipv4", K_STRING, "ipv4" },
	{ "ipv6", K_STRING, "ipv6" },
	{ "hostname", K_STRING, "hostname" },
};

struct dp {
	const char	*s;		/* the declaration, for positions */
	const char	*p;		/* the next character */
	char		*err;
	size_t		 errlen;
	int		 failed;
	int		 depth;
	int		 defaults;	/* some field has a default */
};

static int	 fields(struct dp *, json_t *, char);
static json_t	*type(struct dp *, enum kind *);

/* Records the first error, at the current position. Returns -1. */
static int
fail(struct dp *d, const char *fmt, ...)
{
	const char	*q;
	va_list		 ap;
	int		 line = 1, col = 1, n;

	if (d->failed++ || d->err == NULL || d->errlen == 0)
		return -1;
	for (q = d->s; q < d->p; q++) {
		if (*q == '\n') {
			line++;
			col = 1;
		} else
			col++;
	}
	n = snprintf(d->err, d->errlen, "line %d, column %d: ", line, col);
	if (n < 0 || (size_t)n >= d->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(d->err + n, d->errlen - n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Skips blanks; newlines too when NL. */
static void
blank(struct dp *d, int nl)
{
	while (*d->p == ' ' || *d->p == '\t' || *d->p == '\r' ||
	    (nl && *d->p == '\n'))
		d->p++;
}

static int
is_word(int c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

/* A bare word into BUF (SZ bytes); 0 if there is none here. */
static size_t
word(struct dp *d, char *buf, size_t sz)
{
	size_t	 n = 0;

	if (!isalpha((unsigned char)*d->p) && *d->p != '_')
		return 0;
	while (is_word(d->p[n]))
		n++;
	if (n >= sz) {
		fail(d, "a word of more than %zu bytes", sz - 1);
		return 0;
	}
	memcpy(buf, d->p, n);
	buf[n] = '\0';
	d->p += n;
	return n;
}

/* A quoted text ('...' or "...", the quote doubled inside), new. */
static char *
quoted(struct dp *d)
{
	char		 q = *d->p, *out, *o;
	const char	*r, *x;

	for (r = d->p + 1; *r != q || r[1] == q; r++) {
		if (*r == '\0') {
			fail(d, "unterminated %c", q);
			return NULL;
		}
		if (*r == q)
			r++;
	}
	if ((out = o = malloc(r - d->p)) == NULL) {
		fail(d, "out of memory");
		return NULL;
	}
	for (x = d->p + 1; x < r; x++) {
		if (*x == q)
			x++;
		*o++ = *x;
	}
	*o = '\0';
	d->p = r + 1;
	return out;
}

/*
 * A number, in JSON's syntax but for a leading '+': scanned here, and
 * converted by jansson, which ignores the locale (strtod would read
 * "1.5" as 1 where the decimal point is a comma). The integer form when
 * it is one; an integer beyond 64 bits is refused, not rounded.
 */
static json_t *
number(struct dp *d)
{
	const char	*q = d->p, *start = d->p;
	json_error_t	 e;
	json_t		*v;

	if (*q == '+')
		start = ++q;
	else if (*q == '-')
		q++;
	if (!isdigit((unsigned char)*q)) {
		fail(d, "expected a number");
		return NULL;
	}
	while (isdigit((unsigned char)*q))
		q++;
	if (*q == '.' && isdigit((unsigned char)q[1]))
		for (q++; isdigit((unsigned char)*q); q++)
			;
	if ((*q == 'e' || *q == 'E') && (isdigit((unsigned char)q[1]) ||
	    ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
		for (q += 2; isdigit((unsigned char)*q); q++)
			;
	}
	v = json_loadb(start, q - start, JSON_DECODE_ANY, &e);
	if (!json_is_number(v) || (json_is_real(v) &&
	    !isfinite(json_real_value(v)))) {
		json_decref(v);
		fail(d, "bad number (%s)", v == NULL ? e.text : "not finite");
		return NULL;
	}
	d->p = q;
	return v;
}

/* A literal: number, true, false, null, a quoted or bare string, or a
 * bracketed list of literals. */
static json_t *
literal(struct dp *d)
{
	char	 w[256], *s;
	json_t	*v, *e;

	if (*d->p == '\'' || *d->p == '"') {
		if ((s = quoted(d)) == NULL)
			return NULL;
		v = json_string(s);
		free(s);
		if (v == NULL)
			fail(d, "not UTF-8");
		return v;
	}
	if (*d->p == '-' || *d->p == '+' || isdigit((unsigned char)*d->p))
		return number(d);
	if (*d->p == '[') {
		if (++d->depth > DECL_MAXDEPTH) {
			fail(d, "nested too deep");
			return NULL;
		}
		d->p++;
		v = json_array();
		for (blank(d, 1); v != NULL && *d->p != ']'; blank(d, 1)) {
			if ((e = literal(d)) == NULL ||
			    json_array_append_new(v, e) != 0) {
				json_decref(v);
				return NULL;
			}
			blank(d, 1);
			if (*d->p == ',')
				d->p++;
			else if (*d->p != ']') {
				json_decref(v);
				fail(d, "expected ',' or ']'");
				return NULL;
			}
		}
		d->depth--;
		if (v != NULL)
			d->p++;
		return v;
	}
	if (word(d, w, sizeof(w)) == 0) {
		fail(d, "expected a value");
		return NULL;
	}
	if (strcmp(w, "true") == 0)
		return json_true();
	if (strcmp(w, "false") == 0)
		return json_false();
	if (strcmp(w, "null") == 0)
		return json_null();
	return json_string(w);
}

/* Sets KEY of O to V (stolen). A NULL V is a string that was not UTF-8
 * or memory that ran out. */
static int
set(struct dp *d, json_t *o, const char *key, json_t *v)
{
	if (v == NULL)
		return fail(d, "not UTF-8, or out of memory");
	if (json_object_get(o, key) != NULL) {
		json_decref(v);
		return fail(d, "\"%s\" given twice", key);
	}
	if (json_object_set_new(o, key, v) != 0)
		return fail(d, "out of memory");
	return 0;
}

/* The bounds of a range on schema T of kind K: lengths, counts, values. */
static int
bound(struct dp *d, json_t *t, enum kind k, const char *op, json_t *v)
{
	static const struct {
		enum kind	 k;
		const char	*lo, *hi;
	} names[] = {
		{ K_STRING, "minLength", "maxLength" },
		{ K_ARRAY, "minItems", "maxItems" },
		{ K_OBJECT, "minProperties", "maxProperties" },
		{ K_INTEGER, "minimum", "maximum" },
		{ K_NUMBER, "minimum", "maximum" },
	};
	size_t	 i;
	int	 lo = op[0] == '>';

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].k == k)
			break;
	if (i == sizeof(names) / sizeof(names[0])) {
		json_decref(v);
		return fail(d, "a range fits strings, arrays, objects and "
		    "numbers only");
	}
	if (k != K_INTEGER && k != K_NUMBER) {
		if (op[1] != '=') {
			json_decref(v);
			return fail(d, "'<' and '>' fit numbers only");
		}
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			json_decref(v);
			return fail(d, "a length or count is a whole number "
			    "of at least 0");
		}
	}
	if (op[1] == '=')
		return set(d, t, lo ? names[i].lo : names[i].hi, v);
	return set(d, t, lo ? "exclusiveMinimum" : "exclusiveMaximum", v);
}

/* Whether nothing is within the bounds of T: LO or XLO (exclusive) below,
 * HI or XHI above (the exclusive names may be NULL). */
static int
empty(const json_t *t, const char *lo, const char *xlo, const char *hi,
    const char *xhi)
{
	const json_t	*l = json_object_get(t, lo), *h = json_object_get(t, hi);
	int		 open = 0;

	if (xlo != NULL && l == NULL && (l = json_object_get(t, xlo)) != NULL)
		open = 1;
	if (xhi != NULL && h == NULL && (h = json_object_get(t, xhi)) != NULL)
		open = 1;
	if (l == NULL || h == NULL)
		return 0;
	return json_number_value(l) > json_number_value(h) ||
	    (open && json_number_value(l) >= json_number_value(h));
}

/*
 * "header NAME": T's argument is mirrored into the HTTP header
 * Mcp-Param-NAME (x-mcp-header, protocol 2026-07-28). NAME is an HTTP
 * token; where it may stand, and that it is unique, the registration
 * checks (xheader.c).
 */
static int
header(struct dp *d, json_t *t, enum kind k)
{
	static const char	 tchar[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~";
	size_t			 n;

	if (k != K_STRING && k != K_INTEGER && k != K_BOOLEAN)
		return fail(d, "\"header\" fits strings, integers and "
		    "booleans only");
	blank(d, 0);
	n = strspn(d->p, tchar);
	if (n == 0)
		return fail(d, "\"header\" needs a name (an HTTP token)");
	if (json_object_get(t, "x-mcp-header") != NULL)
		return fail(d, "two headers");
	if (set(d, t, "x-mcp-header", json_stringn(d->p, n)) != 0)
		return -1;
	d->p += n;
	return 0;
}

/* The modifiers of schema T of kind K, after its '('. */
static int
mods(struct dp *d, json_t *t, enum kind k)
{
	const char	*q, *open = d->p - 1;
	json_t		*lo, *hi;
	char		 w[32], *re;

	for (;;) {
		blank(d, 1);
		if (*d->p == '/') {
			if (k != K_STRING)
				return fail(d, "a pattern fits strings only");
			for (q = d->p + 1; *q != '\0' && *q != '/'; q++)
				if (*q == '\\' && q[1] != '\0')
					q++;
			if (*q != '/')
				return fail(d, "unterminated /pattern/");
			if ((re = strndup(d->p + 1, q - d->p - 1)) == NULL)
				return fail(d, "out of memory");
			if (json_object_get(t, "pattern") != NULL) {
				free(re);
				return fail(d, "two patterns");
			}
			d->p = q + 1;
			if (set(d, t, "pattern", json_string(re)) != 0) {
				free(re);
				return -1;
			}
			free(re);
		} else if (isalpha((unsigned char)*d->p)) {
			q = d->p;
			if (word(d, w, sizeof(w)) == 0 ||
			    (strcmp(w, "unique") != 0 &&
			    strcmp(w, "header") != 0)) {
				d->p = q;
				return fail(d, "unknown modifier");
			}
			if (w[0] == 'h') {
				if (header(d, t, k) != 0)
					return -1;
				goto next;
			}
			if (k != K_ARRAY)
				return fail(d, "\"unique\" fits arrays only");
			if (set(d, t, "uniqueItems", json_true()) != 0)
				return -1;
		} else if (*d->p == '<' || *d->p == '>') {
			char	 op[3] = { *d->p, '\0', '\0' };

			if (*++d->p == '=') {
				op[1] = '=';
				d->p++;
			}
			blank(d, 0);
			if ((lo = number(d)) == NULL ||
			    bound(d, t, k, op, lo) != 0)
				return -1;
		} else {
			lo = hi = NULL;
			if (*d->p != '.' && (lo = number(d)) == NULL)
				return -1;
			blank(d, 0);
			if (strncmp(d->p, "..", 2) == 0) {
				d->p += 2;
				blank(d, 0);
				if (*d->p != ',' && *d->p != ')' &&
				    (hi = number(d)) == NULL) {
					json_decref(lo);
					return -1;
				}
			} else if (lo != NULL)
				hi = json_incref(lo);	/* (N): exactly N */
			else
				return fail(d, "expected a range");
			if (lo == NULL && hi == NULL)
				return fail(d, "an empty range");
			if (lo != NULL && bound(d, t, k, ">=", lo) != 0) {
				json_decref(hi);
				return -1;
			}
			if (hi != NULL && bound(d, t, k, "<=", hi) != 0)
				return -1;
		}
next:
		blank(d, 1);
		if (*d->p == ')')
			break;
		if (*d->p != ',')
			return fail(d, "expected ',' or ')'");
		d->p++;
	}
	d->p++;
	/* A range that nothing can be in is a mistake, not a schema. */
	if (empty(t, "minimum", "exclusiveMinimum", "maximum",
	    "exclusiveMaximum") ||
	    empty(t, "minLength", NULL, "maxLength", NULL) ||
	    empty(t, "minItems", NULL, "maxItems", NULL) ||
	    empty(t, "minProperties", NULL, "maxProperties", NULL)) {
		d->p = open;
		return fail(d, "the range is empty");
	}
	return 0;
}

/* enum(a, b, ...): the values, and their type when they share one. */
static json_t *
enumeration(struct dp *d)
{
	json_t		*t, *vals, *v;
	const char	*ty = NULL;
	size_t		 i;

	blank(d, 0);
	if (*d->p != '(') {
		fail(d, "expected '(' after enum");
		return NULL;
	}
	d->p++;
	t = json_object();
	if (t == NULL || set(d, t, "enum", json_array()) != 0) {
		json_decref(t);
		return NULL;
	}
	vals = json_object_get(t, "enum");
	for (;;) {
		blank(d, 1);
		if ((v = literal(d)) == NULL)
			goto bad;
		for (i = 0; i < json_array_size(vals); i++)
			if (json_equal(json_array_get(vals, i), v)) {
				json_decref(v);
				fail(d, "a value listed twice");
				goto bad;
			}
		if (json_array_append_new(vals, v) != 0) {
			fail(d, "out of memory");
			goto bad;
		}
		blank(d, 1);
		if (*d->p == ')')
			break;
		if (*d->p != ',') {
			fail(d, "expected ',' or ')'");
			goto bad;
		}
		d->p++;
	}
	d->p++;
	json_array_foreach(vals, i, v) {
		const char *vt = json_is_string(v) ? "string" :
		    json_is_integer(v) ? "integer" :
		    json_is_number(v) ? "number" : "";

		if (i == 0)
			ty = vt;
		else if (strcmp(ty, vt) != 0)
			ty = (strcmp(ty, "integer") == 0 ||
			    strcmp(ty, "number") == 0) &&
			    (strcmp(vt, "integer") == 0 ||
			    strcmp(vt, "number") == 0) ? "number" : "";
	}
	if (ty[0] != '\0' && set(d, t, "type", json_string(ty)) != 0)
		goto bad;
	return t;
bad:
	json_decref(t);
	return NULL;
}

/* An object's fields, after its '{'. */
static json_t *
object(struct dp *d)
{
	json_t	*t;

	t = json_pack("{s:s, s:{}}", "type", "object", "properties");
	if (t == NULL) {
		fail(d, "out of memory");
		return NULL;
	}
	if (fields(d, t, '}') != 0) {
		json_decref(t);
		return NULL;
	}
	d->p++;
	return t;
}

/* A type, with its modifiers; its kind in *K. */
static json_t *
type(struct dp *d, enum kind *k)
{
	const char	*at = d->p;
	json_t		*t = NULL, *items;
	enum kind	 ik;
	char		 w[32];
	size_t		 i;

	if (++d->depth > DECL_MAXDEPTH) {
		fail(d, "nested too deep");
		return NULL;
	}
	if (*d->p == '[') {
		d->p++;
		blank(d, 1);
		if ((items = type(d, &ik)) == NULL)
			return NULL;
		blank(d, 1);
		if (*d->p != ']') {
			json_decref(items);
			fail(d, "expected ']'");
			return NULL;
		}
		d->p++;
		t = json_pack("{s:s, s:o}", "type", "array", "items", items);
		*k = K_ARRAY;
	} else if (*d->p == '{') {
		d->p++;
		t = object(d);
		*k = K_OBJECT;
		d->depth--;
		return t;
	} else if (word(d, w, sizeof(w)) == 0) {
		fail(d, "expected a type");
		return NULL;
	} else if (strcmp(w, "enum") == 0) {
		*k = K_ENUM;
		t = enumeration(d);
		d->depth--;
		return t;
	} else {
		for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
			if (strcmp(w, words[i].word) == 0)
				break;
		if (i == sizeof(words) / sizeof(words[0])) {
			d->p = at;
			fail(d, "unknown type \"%s\"", w);
			return NULL;
		}
		*k = words[i].kind;
		if ((t = json_object()) == NULL ||
		    (*k != K_ANY && set(d, t, "type", json_string(
		    *k == K_STRING ? "string" :
		    *k == K_INTEGER ? "integer" :
		    *k == K_NUMBER ? "number" :
		    *k == K_BOOLEAN ? "boolean" : "object")) != 0) ||
		    (words[i].format != NULL && set(d, t, "format",
		    json_string(words[i].format)) != 0)) {
			json_decref(t);
			if (t == NULL)
				fail(d, "out of memory");
			return NULL;
		}
	}
	if (t == NULL) {
		fail(d, "out of memory");
		return NULL;
	}
	blank(d, 0);
	if (*d->p == '(') {
		d->p++;
		if (mods(d, t, *k) != 0) {
			json_decref(t);
			return NULL;
		}
	}
	d->depth--;
	return t;
}

/* The default V of a field of schema T must itself be valid. */
static int
check_default(struct dp *d, const json_t *t, const json_t *v)
{
	struct mcp__schema	*s;
	char			 why[200];
	int			 rc;

	s = mcp__schema_compile(t, 0, why, sizeof(why));
	if (s == NULL)
		return fail(d, "%s", why);
	rc = mcp__schema_validate(s, v, "default", why, sizeof(why));
	mcp__schema_free(s);
	return rc == 0 ? 0 : fail(d, "%s", why);
}

/* One field into object schema O. */
static int
field(struct dp *d, json_t *o)
{
	const char	*at = d->p, *e;
	json_t		*props = json_object_get(o, "properties"), *t, *v;
	json_t		*req;
	char		 name[256], *s = NULL;
	enum kind	 k;
	size_t		 n;
	int		 optional = 0;

	if (*d->p == '\'' || *d->p == '"') {
		if ((s = quoted(d)) == NULL)
			return -1;
		n = strlen(s);
		if (n >= sizeof(name) || n == 0) {
			free(s);
			d->p = at;
			return fail(d, "a name of 1 to 255 bytes");
		}
		memcpy(name, s, n + 1);
		free(s);
		s = NULL;
	} else if (word(d, name, sizeof(name)) == 0)
		return d->failed ? -1 : fail(d, "expected a name");
	if (json_object_get(props, name) != NULL) {
		d->p = at;
		return fail(d, "\"%s\" declared twice", name);
	}
	blank(d, 0);
	if (*d->p == '?') {
		optional = 1;
		d->p++;
		blank(d, 0);
	}
	if (*d->p == ':')
		d->p++;
	blank(d, 1);
	if ((t = type(d, &k)) == NULL)
		return -1;
	if (json_object_set_new(props, name, t) != 0)
		return fail(d, "out of memory");
	blank(d, 0);
	if (*d->p == '=') {
		d->p++;
		blank(d, 0);
		at = d->p;
		if ((v = literal(d)) == NULL)
			return -1;
		e = d->p;
		d->p = at;
		if (check_default(d, t, v) != 0) {
			json_decref(v);
			return -1;
		}
		d->p = e;
		if (set(d, t, "default", v) != 0)
			return -1;
		optional = 1;
		d->defaults = 1;
		blank(d, 0);
	}
	if (*d->p == '\'' || *d->p == '"') {
		if ((s = quoted(d)) == NULL)
			return -1;
	} else if (*d->p == '#') {
		for (e = ++d->p; *e != '\0' && *e != '\n'; e++)
			;
		while (*d->p == ' ' || *d->p == '\t')
			d->p++;
		while (e > d->p && isspace((unsigned char)e[-1]))
			e--;
		if ((s = strndup(d->p, e - d->p)) == NULL)
			return fail(d, "out of memory");
		d->p = e;
	}
	if (s != NULL) {
		v = json_string(s);
		free(s);
		if (v == NULL)
			return fail(d, "the description is not UTF-8");
		if (set(d, t, "description", v) != 0)
			return -1;
	}
	if (optional)
		return 0;
	if ((req = json_object_get(o, "required")) == NULL) {
		if (set(d, o, "required", json_array()) != 0)
			return -1;
		req = json_object_get(o, "required");
	}
	if (json_array_append_new(req, json_string(name)) != 0)
		return fail(d, "out of memory");
	return 0;
}

/* Fields into object schema O up to CLOSE ('}' or '\0'), which is left
 * for the caller. */
static int
fields(struct dp *d, json_t *o, char close)
{
	int	 open = 0;

	for (;;) {
		blank(d, 1);
		if (*d->p == close)
			break;
		if (*d->p == '\0')
			return fail(d, "expected '}'");
		if (*d->p == ',' || *d->p == ';') {
			d->p++;
			continue;
		}
		if (strncmp(d->p, "...", 3) == 0) {
			d->p += 3;
			open = 1;
		} else if (field(d, o) != 0)
			return -1;
		blank(d, 0);
		if (*d->p != ',' && *d->p != ';' && *d->p != '\n' &&
		    *d->p != close)
			return *d->p == '\0' ? fail(d, "expected '}'") :
			    fail(d, "expected ',' or a new line");
	}
	if (!open && set(d, o, "additionalProperties", json_false()) != 0)
		return -1;
	return 0;
}

json_t *
mcp__decl_parse(const char *text, int *has_defaults, char *err,
    size_t errlen)
{
	struct dp	 d = { text, text, err, errlen, 0, 0, 0 };
	json_t		*o;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	o = json_pack("{s:s, s:{}}", "type", "object", "properties");
	if (o == NULL) {
		fail(&d, "out of memory");
		return NULL;
	}
	if (fields(&d, o, '\0') != 0) {
		json_decref(o);
		return NULL;
	}
	if (has_defaults != NULL)
		*has_defaults = d.defaults;
	return o;
}

/*
 * Gives the members of ARGS that a declared default stands for, by
 * SCHEMA, into nested objects and arrays of objects too. Copies, so
 * that a callback may change its arguments. 0, or -1 out of memory.
 */
int
mcp__decl_defaults(const json_t *schema, json_t *args)
{
	const json_t	*props, *sub, *def, *items;
	json_t		*v;
	const char	*key;
	size_t		 i;

	if (json_is_array(args)) {
		items = json_object_get(schema, "items");
		if (items == NULL)
			return 0;
		json_array_foreach(args, i, v)
			if (mcp__decl_defaults(items, v) != 0)
				return -1;
		return 0;
	}
	if (!json_is_object(args) ||
	    (props = json_object_get(schema, "properties")) == NULL)
		return 0;
	json_object_foreach((json_t *)props, key, sub) {
		v = json_object_get(args, key);
		if (v != NULL) {
			if ((json_is_object(v) || json_is_array(v)) &&
			    mcp__decl_defaults(sub, v) != 0)
				return -1;
		} else if ((def = json_object_get(sub, "default")) != NULL) {
			if (json_object_set_new(args, key,
			    json_deep_copy(def)) != 0)
				return -1;
		}
	}
	return 0;
}
