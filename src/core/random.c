/*
 * random.c: identifiers nobody can guess, for the sessions of the HTTP
 * transports and for tasks: 128 bits from the kernel's CSPRNG
 * (getrandom(2)); and the per-process key of MRTR's requestState when
 * no --state-key-file gives one. Any thread.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/random.h>

#include "core/core.h"

int
mcp__random_bytes(void *out, size_t len)
{
	unsigned char	*raw = out;
	size_t		 got = 0;
	ssize_t		 n;

	while (got < len) {
		n = getrandom(raw + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* 128 bits from the CSPRNG as 32 hex digits, in OUT[33]. 0, or -1 when
 * the kernel gave none (errno set). */
int
mcp__random_id(char *out)
{
	unsigned char	 raw[16];
	int		 i;

	if (mcp__random_bytes(raw, sizeof(raw)) != 0)
		return -1;
	for (i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return 0;
}
