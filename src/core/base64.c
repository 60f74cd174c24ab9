/*
 * base64.c: standard base64 (RFC 4648, with padding) for image, audio and
 * blob contents. Pure; any thread.
 */
#include <stdlib.h>

#include "core/core.h"

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A new NUL-terminated string, or NULL when out of memory. */
char *
mcp__base64(const void *data, size_t len)
{
	const unsigned char	*p = data;
	char			*out, *o;
	size_t			 i;

	if (len > (SIZE_MAX - 1) / 4 * 3)
		return NULL;
	out = malloc((len + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	for (i = 0; i + 2 < len; i += 3) {
		*o++ = b64[p[i] >> 2];
		*o++ = b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
		*o++ = b64[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)];
		*o++ = b64[p[i + 2] & 63];
	}
	if (i < len) {
		*o++ = b64[p[i] >> 2];
		if (i + 1 < len) {
			*o++ = b64[((p[i] & 3) << 4) | (p[i + 1] >> 4)];
			*o++ = b64[(p[i + 1] & 15) << 2];
		} else {
			*o++ = b64[(p[i] & 3) << 4];
			*o++ = '=';
		}
		*o++ = '=';
	}
	*o = '\0';
	return out;
}
