/*
 * sha256.c: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), written
 * here so that the library needs no crypto library: they protect the
 * requestState of protocol 2026-07-28's input_required results (MRTR,
 * server/mrtr.c) and hash the arguments it binds. Plain and portable,
 * not fast: a state is a few hundred bytes. Pure; any thread.
 */
#include <string.h>

#include "core/core.h"

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

/* One 64-byte block into the state. */
static void
block(uint32_t h[8], const unsigned char *p)
{
	uint32_t	 w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int		 i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
		    (w[i - 2] >> 10)) + w[i - 7] + (ROR(w[i - 15], 7) ^
		    ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 16];
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	f = h[5];
	g = h[6];
	hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + k256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

void
mcp__sha256_init(struct sha256 *s)
{
	static const uint32_t	 iv[8] = { 0x6a09e667, 0xbb67ae85,
	    0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
	    0x5be0cd19 };

	memcpy(s->h, iv, sizeof(iv));
	s->len = 0;
	s->used = 0;
}

void
mcp__sha256_update(struct sha256 *s, const void *data, size_t len)
{
	const unsigned char	*p = data;
	size_t			 n;

	s->len += len;
	if (s->used > 0) {
		n = 64 - s->used < len ? 64 - s->used : len;
		memcpy(s->buf + s->used, p, n);
		s->used += n;
		p += n;
		len -= n;
		if (s->used < 64)
			return;
		block(s->h, s->buf);
		s->used = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		block(s->h, p);
	memcpy(s->buf, p, len);
	s->used = len;
}

void
mcp__sha256_final(struct sha256 *s, unsigned char out[32])
{
	uint64_t	 bits = s->len * 8;
	int		 i;

	s->buf[s->used++] = 0x80;
	if (s->used > 56) {
		memset(s->buf + s->used, 0, 64 - s->used);
		block(s->h, s->buf);
		s->used = 0;
	}
	memset(s->buf + s->used, 0, 56 - s->used);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
	block(s->h, s->buf);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
	memset(s, 0, sizeof(*s));
}

void
mcp__sha256(const void *data, size_t len, unsigned char out[32])
{
	struct sha256	 s;

	mcp__sha256_init(&s);
	mcp__sha256_update(&s, data, len);
	mcp__sha256_final(&s, out);
}

void
mcp__hmac_sha256(const void *key, size_t klen, const void *data,
    size_t len, unsigned char out[32])
{
	struct sha256	 s;
	unsigned char	 k[64], pad[64], inner[32];
	int		 i;

	memset(k, 0, sizeof(k));
	/* A key longer than a block is its hash (RFC 2104, 2). */
	if (klen > sizeof(k))
		mcp__sha256(key, klen, k);
	else if (klen > 0)
		memcpy(k, key, klen);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	mcp__sha256_init(&s);
	mcp__sha256_update(&s, pad, sizeof(pad));
	mcp__sha256_update(&s, data, len);
	mcp__sha256_final(&s, inner);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	mcp__sha256_init(&s);
	mcp__sha256_update(&s, pad, sizeof(pad));
	mcp__sha256_update(&s, inner, sizeof(inner));
	mcp__sha256_final(&s, out);
	memset(k, 0, sizeof(k));
	memset(pad, 0, sizeof(pad));
}

int
mcp__ct_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char	*p = a, *q = b;
	unsigned char			 d = 0;
	size_t				 i;

	/* Time independent of where they differ: a MAC is compared. */
	for (i = 0; i < n; i++)
		d |= p[i] ^ q[i];
	return d == 0;
}
