/*
 * fuzz.h: what the libFuzzer harnesses of test/fuzz/ share. Each harness
 * is a file NAME.c with LLVMFuzzerTestOneInput, built with clang against
 * the library compiled with coverage, AddressSanitizer and
 * UndefinedBehaviorSanitizer (the Makefile's fuzz rules). `make fuzz`
 * runs each for FUZZ_SECONDS from its seeds in test/fuzz/corpus/NAME,
 * with the dictionary NAME.dict; test/fuzz.sh replays every seed (and
 * every crash once found, kept there as a regression input) in make
 * check. A harness aborts when the code under test breaks a property it
 * checks, so that libFuzzer reports it like a crash.
 */
#ifndef MCP_FUZZ_H
#define MCP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main/main.h"

/* A property broke: say which, and crash where libFuzzer sees it. */
#define FUZZ_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz: property broken at %s:%d: ",	\
		    __FILE__, __LINE__);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

/* Every line of the N bytes at P (each ending in '\n') is JSON. */
static void
fuzz_json_lines(const char *p, size_t n)
{
	const char	*end = p + n, *nl;
	struct json_perr e;
	json_t		*v;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		v = mcp__json_parse(p, (size_t)(nl - p), &e);
		FUZZ_CHECK(v != NULL && (json_is_object(v) || json_is_array(v)),
		    "the server wrote a line that is not a JSON-RPC message: "
		    "%.*s", (int)(nl - p > 200 ? 200 : nl - p), p);
		json_decref(v);
		p = nl + 1;
	}
}

/* A NUL-terminated copy of N bytes at P (the caller frees it). */
static char *
fuzz_str(const uint8_t *p, size_t n)
{
	char	*s = malloc(n + 1);

	if (s == NULL)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

#endif /* MCP_FUZZ_H */
