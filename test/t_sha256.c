/*
 * t_sha256.c: SHA-256 (FIPS 180-4's examples and the million a's) and
 * HMAC-SHA256 (RFC 4231's test cases 1 to 7) of src/core/sha256.c, the
 * digest fed in pieces of every size, and the constant-time compare.
 * Single-threaded; never runs the server.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "tap.h"

static const char *
hex(const unsigned char *d, size_t n)
{
	static char	 out[129];
	size_t		 i;

	for (i = 0; i < n && i < 64; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	return out;
}

static const char *
sha(const char *s)
{
	unsigned char	 d[32];

	mcp__sha256(s, strlen(s), d);
	return hex(d, 32);
}

static const char *
hmac(const void *key, size_t klen, const void *data, size_t len,
    size_t outlen)
{
	unsigned char	 d[32];

	mcp__hmac_sha256(key, klen, data, len, d);
	return hex(d, outlen);
}

int
main(void)
{
	struct sha256	 s;
	unsigned char	 key[131], data[152], one[32], two[32];
	char		 buf[1000];
	size_t		 i, cut;
	int		 same;

	/* FIPS 180-4 (NIST's examples) */
	is_str(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934c"
	    "a495991b7852b855", "SHA-256 of the empty string");
	is_str(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a"
	    "9cb410ff61f20015ad", "SHA-256 of abc");
	is_str(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	    "SHA-256 of the 448-bit message");
	is_str(sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
	    "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
	    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
	    "SHA-256 of the 896-bit message");
	memset(buf, 'a', sizeof(buf));
	mcp__sha256_init(&s);
	for (i = 0; i < 1000; i++)
		mcp__sha256_update(&s, buf, sizeof(buf));
	mcp__sha256_final(&s, one);
	is_str(hex(one, 32), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a4972"
	    "00e046d39ccc7112cd0", "SHA-256 of a million a's, in pieces");
	/* Every cut of a 200-byte message, across block boundaries. */
	for (i = 0; i < 200; i++)
		buf[i] = (char)(i * 7 + 3);
	mcp__sha256(buf, 200, one);
	same = 1;
	for (cut = 0; cut <= 200; cut++) {
		mcp__sha256_init(&s);
		mcp__sha256_update(&s, buf, cut);
		mcp__sha256_update(&s, buf + cut, 200 - cut);
		mcp__sha256_final(&s, two);
		if (memcmp(one, two, 32) != 0)
			same = 0;
	}
	ok(same, "two pieces, cut anywhere, hash as one");
	/* Lengths around the padding's edge: 55, 56, 63, 64 bytes. */
	is_str(sha("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	    "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
	    "SHA-256 of 55 a's");
	is_str(sha("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	    "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
	    "SHA-256 of 56 a's");

	/* RFC 4231 */
	memset(key, 0x0b, 20);
	is_str(hmac(key, 20, "Hi There", 8, 32), "b0344c61d8db38535ca8afceaf0"
	    "bf12b881dc200c9833da726e9376c2e32cff7", "RFC 4231 case 1");
	is_str(hmac("Jefe", 4, "what do ya want for nothing?", 28, 32),
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
	    "RFC 4231 case 2");
	memset(key, 0xaa, 20);
	memset(data, 0xdd, 50);
	is_str(hmac(key, 20, data, 50, 32), "773ea91e36800e46854db8ebd09181a7"
	    "2959098b3ef8c122d9635514ced565fe", "RFC 4231 case 3");
	for (i = 0; i < 25; i++)
		key[i] = (unsigned char)(i + 1);
	memset(data, 0xcd, 50);
	is_str(hmac(key, 25, data, 50, 32), "82558a389a443c0ea4cc819899f2083a"
	    "85f0faa3e578f8077a2e3ff46729665b", "RFC 4231 case 4");
	memset(key, 0x0c, 20);
	is_str(hmac(key, 20, "Test With Truncation", 20, 16),
	    "a3b6167473100ee06e0c796c2955552b", "RFC 4231 case 5 (128 bits)");
	memset(key, 0xaa, 131);
	is_str(hmac(key, 131, "Test Using Larger Than Block-Size Key - Hash "
	    "Key First", 54, 32), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc621372"
	    "8c5140546040f0ee37f54", "RFC 4231 case 6 (a key longer than a "
	    "block)");
	memcpy(data, "This is a test using a larger than block-size key and a "
	    "larger than block-size data. The key needs to be hashed before "
	    "being used by the HMAC algorithm.", 152);
	is_str(hmac(key, 131, data, 152, 32), "9b09ffa71b942fcb27635fbcd5b0e9"
	    "44bfdc63644f0713938a7f51535c3a35e2", "RFC 4231 case 7 (key and "
	    "data longer than a block)");

	ok(mcp__ct_equal("abcdef", "abcdef", 6), "ct_equal: equal");
	ok(!mcp__ct_equal("abcdef", "abcdeg", 6), "ct_equal: last byte");
	ok(!mcp__ct_equal("xbcdef", "abcdef", 6), "ct_equal: first byte");
	ok(mcp__ct_equal("", "", 0), "ct_equal: nothing");
	return tap_done();
}
