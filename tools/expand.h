/*
 * expand.h: what mcp-call and mcp-gateway share: $NAME and ${NAME} in a
 * header's value, from the environment, so that a token need not be on
 * the command line (--header 'Authorization: Bearer $TOKEN'). A name
 * that is not set expands to nothing. Single-threaded, like the tools.
 */
#ifndef MCP_TOOLS_EXPAND_H
#define MCP_TOOLS_EXPAND_H

#include <stdlib.h>
#include <string.h>

/* Room for N more bytes in *OUT (of *CAP, *LEN used); 0 on ENOMEM, when
 * *OUT is freed. */
static int
expand_room(char **out, size_t *cap, size_t len, size_t n)
{
	char	*p;

	if (len + n + 1 <= *cap)
		return 1;
	*cap = (len + n + 1) * 2;
	p = realloc(*out, *cap);
	if (p == NULL) {
		free(*out);
		*out = NULL;
		return 0;
	}
	*out = p;
	return 1;
}

/* A new string (the caller frees it), or NULL when out of memory. */
static char *
expand(const char *s)
{
	size_t		 cap = strlen(s) + 64, len = 0, n, vn;
	char		*out = malloc(cap), name[128];
	const char	*v, *p = s, *q;
	int		 brace;

	if (out == NULL)
		return NULL;
	while (*p != '\0') {
		if (*p == '$' && (p[1] == '{' || p[1] == '_' ||
		    (p[1] >= 'A' && p[1] <= 'Z') || (p[1] >= 'a' &&
		    p[1] <= 'z'))) {
			brace = p[1] == '{';
			q = p + 1 + brace;
			n = 0;
			while ((*q == '_' || (*q >= 'A' && *q <= 'Z') ||
			    (*q >= 'a' && *q <= 'z') || (*q >= '0' &&
			    *q <= '9')) && n < sizeof(name) - 1)
				name[n++] = *q++;
			name[n] = '\0';
			if (brace && *q == '}')
				q++;
			v = getenv(name);
			if (v == NULL)
				v = "";
			vn = strlen(v);
			if (!expand_room(&out, &cap, len, vn))
				return NULL;
			memcpy(out + len, v, vn);
			len += vn;
			p = q;
			continue;
		}
		if (!expand_room(&out, &cap, len, 1))
			return NULL;
		out[len++] = *p++;
	}
	out[len] = '\0';
	return out;
}

#endif /* MCP_TOOLS_EXPAND_H */
