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

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * The reverse of mcp__base64, strict: a length that is a multiple of 4,
 * padding only at the end. For the 2026-07-28 headers' "=?base64?...?="
 * values, which are compared with the body, so that anything loose is
 * refused rather than guessed at.
 */
char *
mcp__base64_decode(const char *s, size_t n, size_t *outlen)
{
	char	*out, *o;
	size_t	 i, pad = 0;
	int	 v[4], k;

	if (n % 4 != 0)
		return NULL;
	if (n > 0 && s[n - 1] == '=')
		pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
	out = malloc(n / 4 * 3 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	for (i = 0; i < n; i += 4) {
		for (k = 0; k < 4; k++) {
			if (i + k >= n - pad && s[i + k] == '=')
				v[k] = 0;
			else if ((v[k] = b64_value((unsigned char)s[i + k])) < 0) {
				free(out);
				return NULL;
			}
		}
		*o++ = (char)((v[0] << 2) | (v[1] >> 4));
		*o++ = (char)(((v[1] & 15) << 4) | (v[2] >> 2));
		*o++ = (char)(((v[2] & 3) << 6) | v[3]);
	}
	o -= pad;
	*o = '\0';
	*outlen = (size_t)(o - out);
	return out;
}
