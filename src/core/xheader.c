/*
 * xheader.c: the x-mcp-header annotations of a tool's inputSchema
 * (protocol 2026-07-28, Streamable HTTP). A property schema may name a
 * header, Mcp-Param-NAME, into which a client mirrors that argument's
 * value, so that an intermediary can route on it without reading the
 * body. At registration this file finds the annotations and checks the
 * spec's rules for them (a token, unique whatever the case, on a string,
 * integer or boolean property reached from the root through
 * "properties" alone); a tool that breaks one is refused. For a call,
 * it gives the transport the value each header must carry, which the
 * transport compares with what came (-32020 when they differ). The
 * client reads the same rules into a listed tool's headers
 * (client.c). Any
 * thread: a tool's list is made once, before the tool is shared, and
 * only read after.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"

#define XH_KEY		"x-mcp-header"
#define XH_NAME_MAX	MCP_XHEADER_NAME_MAX

struct xheader {
	char	 name[XH_NAME_MAX + 1];
	char	**path;			/* the property keys from the root */
	int	 depth;
	int	 type;			/* XH_*: the property's type */
};

enum { XH_STRING, XH_INTEGER, XH_BOOLEAN };

struct xlist {
	struct xheader	 h[MCP_XHEADER_MAX];
	int		 n;
	const char	*path[MCP_XHEADER_DEPTH];
	char		*why;
	size_t		 whylen;
};

/* RFC 9110's tchar. */
static int
is_token(const char *s)
{
	static const char	 extra[] = "!#$%&'*+-.^_`|~";

	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(extra, *s) != NULL))
			return 0;
	return 1;
}

/* WHERE, for the messages: the chain of properties down to DEPTH. */
static void
where(struct xlist *l, int depth, char *out, size_t len)
{
	size_t	 o = 0;
	int	 i;

	out[0] = '\0';
	for (i = 0; i < depth && o + 1 < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%sproperties.%s",
		    i > 0 ? "." : "", l->path[i]);
	if (depth == 0)
		snprintf(out, len, "the root");
	if (o >= len)
		out[len - 1] = '\0';
}

static int
add(struct xlist *l, const json_t *s, const json_t *v, int depth)
{
	const char	*name = json_string_value(v), *type;
	struct xheader	*h;
	char		 at[160];
	int		 i;

	where(l, depth, at, sizeof(at));
	if (name == NULL || !is_token(name) || strlen(name) > XH_NAME_MAX) {
		snprintf(l->why, l->whylen, "%s at %s must be an HTTP token "
		    "of 1 to %d characters", XH_KEY, at, XH_NAME_MAX);
		return -1;
	}
	type = json_string_value(json_object_get(s, "type"));
	if (type == NULL || (strcmp(type, "string") != 0 &&
	    strcmp(type, "integer") != 0 && strcmp(type, "boolean") != 0)) {
		snprintf(l->why, l->whylen, "%s at %s: its property must have "
		    "type string, integer or boolean", XH_KEY, at);
		return -1;
	}
	for (i = 0; i < l->n; i++)
		if (strcasecmp(l->h[i].name, name) == 0) {
			snprintf(l->why, l->whylen, "%s \"%s\" at %s is "
			    "already used (names are compared without case)",
			    XH_KEY, name, at);
			return -1;
		}
	if (l->n == MCP_XHEADER_MAX) {
		snprintf(l->why, l->whylen, "more than %d %s annotations",
		    MCP_XHEADER_MAX, XH_KEY);
		return -1;
	}
	h = &l->h[l->n];
	memset(h, 0, sizeof(*h));
	memcpy(h->name, name, strlen(name) + 1);
	h->type = type[0] == 's' ? XH_STRING : type[0] == 'i' ? XH_INTEGER :
	    XH_BOOLEAN;
	h->path = calloc((size_t)depth, sizeof(char *));
	if (h->path == NULL && depth > 0)
		return -2;
	l->n++;			/* freed with the list from here on */
	for (i = 0; i < depth; i++) {
		if ((h->path[i] = strdup(l->path[i])) == NULL)
			return -2;
		h->depth++;
	}
	return 0;
}

/*
 * Walks schema S. PROP: S is a property reached from the root through
 * "properties" alone, DEPTH keys down, so it may carry the annotation;
 * CONT: S's own "properties" are reached so (the root, and PROP). The
 * values of const, default, enum and examples are instances, not
 * schemas: an "x-mcp-header" member there is data.
 */
static int
walk(struct xlist *l, const json_t *s, int prop, int cont, int depth)
{
	const char	*k;
	json_t		*v, *pv;
	const char	*pk;
	size_t		 i;
	char		 at[160];
	int		 rc;

	if (json_is_array(s)) {
		json_array_foreach(s, i, v)
			if ((rc = walk(l, v, 0, 0, depth)) != 0)
				return rc;
		return 0;
	}
	if (!json_is_object(s))
		return 0;
	if ((v = json_object_get(s, XH_KEY)) != NULL) {
		if (!prop) {
			where(l, depth, at, sizeof(at));
			snprintf(l->why, l->whylen, "%s under %s is not on a "
			    "property reached through \"properties\" alone "
			    "(not through items, oneOf, anyOf, allOf, not, "
			    "if/then/else or $ref, nor on the root)", XH_KEY,
			    at);
			return -1;
		}
		if ((rc = add(l, s, v, depth)) != 0)
			return rc;
	}
	json_object_foreach((json_t *)s, k, v) {
		if (strcmp(k, XH_KEY) == 0 || strcmp(k, "const") == 0 ||
		    strcmp(k, "default") == 0 || strcmp(k, "enum") == 0 ||
		    strcmp(k, "examples") == 0)
			continue;
		if (strcmp(k, "properties") == 0 && json_is_object(v)) {
			json_object_foreach(v, pk, pv) {
				if (cont && depth == MCP_XHEADER_DEPTH) {
					/* Reached, but too deep to name. */
					if (json_object_get(pv, XH_KEY) !=
					    NULL) {
						snprintf(l->why, l->whylen,
						    "%s on a property more "
						    "than %d deep", XH_KEY,
						    MCP_XHEADER_DEPTH);
						return -1;
					}
					if ((rc = walk(l, pv, 0, 0,
					    depth)) != 0)
						return rc;
					continue;
				}
				if (cont)
					l->path[depth] = pk;
				if ((rc = walk(l, pv, cont, cont, cont ?
				    depth + 1 : depth)) != 0)
					return rc;
			}
			continue;
		}
		if ((rc = walk(l, v, 0, 0, depth)) != 0)
			return rc;
	}
	return 0;
}

static void
free_list(struct xheader *h, int n)
{
	int	 i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < h[i].depth; j++)
			free(h[i].path[j]);
		free(h[i].path);
	}
}

int
mcp__xheader_scan(const json_t *schema, struct xheader **out, int *nout,
    char *why, size_t whylen)
{
	struct xlist	*l;
	int		 rc;

	*out = NULL;
	*nout = 0;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return MCP_ENOMEM;
	l->why = why;
	l->whylen = whylen;
	rc = walk(l, schema, 0, 1, 0);
	if (rc == 0 && l->n > 0) {
		*out = calloc((size_t)l->n, sizeof(**out));
		if (*out == NULL)
			rc = -2;
		else {
			memcpy(*out, l->h, (size_t)l->n * sizeof(**out));
			*nout = l->n;
		}
	}
	if (rc != 0)
		free_list(l->h, l->n);
	free(l);
	if (rc == -2)
		snprintf(why, whylen, "out of memory");
	return rc == 0 ? MCP_OK : rc == -2 ? MCP_ENOMEM : MCP_EINVAL;
}

void
mcp__xheader_free(struct xheader *h, int n)
{
	if (h == NULL)
		return;
	free_list(h, n);
	free(h);
}

const char *
mcp__xheader_name(const struct xheader *h, int i)
{
	return h[i].name;
}

int
mcp__xheader_value(const struct xheader *h, int i, const json_t *args,
    char *buf, size_t buflen, const char **val, size_t *len)
{
	const json_t	*v = args;
	int		 d;

	for (d = 0; d < h[i].depth && v != NULL; d++)
		v = json_is_object(v) ? json_object_get(v, h[i].path[d]) :
		    NULL;
	if (v == NULL)
		return 0;
	if (json_is_string(v)) {
		*val = json_string_value(v);
		*len = json_string_length(v);
	} else if (json_is_integer(v)) {
		snprintf(buf, buflen, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		*val = buf;
		*len = strlen(buf);
	} else if (json_is_boolean(v)) {
		*val = json_is_true(v) ? "true" : "false";
		*len = strlen(*val);
	} else
		return -1;	/* the schema's check refuses it */
	return 1;
}
