/*
 * buf.c: a growable byte buffer with a read offset, used for the stdio
 * input and output queues and for serialising JSON. A buffer belongs to
 * one thread at a time: the loop's transport buffers, or a worker's
 * response buffer until it is handed over with the call.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/*
 * Makes room for EXTRA more bytes after len. Consumed bytes at the front
 * are reclaimed first, so a queue that drains steadily never grows.
 * Returns MCP_OK or MCP_ENOMEM (the buffer is unchanged).
 */
int
mcp__buf_reserve(struct buf *b, size_t extra)
{
	size_t	 need, ncap;
	char	*p;

	if (b->off > 0 && b->off == b->len) {
		b->off = b->len = 0;
	}
	if (b->cap - b->len >= extra)
		return MCP_OK;
	if (b->off > 0 && b->off >= b->len / 2) {
		memmove(b->data, b->data + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
		if (b->cap - b->len >= extra)
			return MCP_OK;
	}
	need = b->len + extra;
	if (need < b->len)
		return MCP_ENOMEM;
	ncap = b->cap ? b->cap : 256;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return MCP_ENOMEM;
		ncap *= 2;
	}
	/* realloc(NULL) is malloc's work and then some: most buffers
	 * start empty. */
	p = b->data == NULL ? malloc(ncap) : realloc(b->data, ncap);
	if (p == NULL)
		return MCP_ENOMEM;
	b->data = p;
	b->cap = ncap;
	return MCP_OK;
}

int
mcp__buf_add_grow(struct buf *b, const void *p, size_t n)
{
	if (mcp__buf_reserve(b, n) != MCP_OK)
		return MCP_ENOMEM;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return MCP_OK;
}

void
mcp__buf_consume(struct buf *b, size_t n)
{
	b->off += n;
	if (b->off >= b->len)
		b->off = b->len = 0;
}

void
mcp__buf_reset(struct buf *b)
{
	b->off = b->len = 0;
}

/* Hands the bytes (NUL-terminated) to the caller and empties B; their
 * length goes to *LENP unless it is NULL. */
char *
mcp__buf_steal(struct buf *b, size_t *lenp)
{
	char	*p;

	if (mcp__buf_addc(b, '\0') != MCP_OK)
		return NULL;
	if (b->off > 0)
		memmove(b->data, b->data + b->off, b->len - b->off);
	p = b->data;
	if (lenp != NULL)
		*lenp = b->len - b->off - 1;
	b->data = NULL;
	b->off = b->len = b->cap = 0;
	return p;
}
