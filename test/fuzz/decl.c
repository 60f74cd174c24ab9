/*
 * decl.c: the declaration parser (src/core/decl.c): the input is a
 * declaration, a NUL byte, and an instance. Any declaration gives an
 * object schema that compiles, or is refused with a line, a column and a
 * reason; any instance gets its defaults filled in (the server does
 * so before it validates) and is validated repeatably.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t		*nul = memchr(data, 0, size);
	size_t			 n = nul != NULL ? (size_t)(nul - data) : size;
	struct json_perr	 e;
	struct mcp__schema	*s;
	json_t			*schema, *inst;
	char			*text, err[256];
	int			 dflt;

	if ((text = malloc(n + 1)) == NULL)
		return 0;
	memcpy(text, data, n);
	text[n] = '\0';
	err[0] = '\0';
	schema = mcp__decl_parse(text, &dflt, err, sizeof(err));
	free(text);
	if (schema == NULL) {
		FUZZ_CHECK(strncmp(err, "line ", 5) == 0, "a refused "
		    "declaration gave no position: %s", err);
		return 0;
	}
	s = mcp__schema_compile(schema, 1, err, sizeof(err));
	/* A pattern is compiled by the schema, not the parser: it may fail
	 * there, and nothing else may. */
	FUZZ_CHECK(s != NULL || strstr(err, "pattern") != NULL,
	    "a declaration gave a schema that does not compile: %s", err);
	if (s != NULL && nul != NULL) {
		inst = mcp__json_parse((const char *)nul + 1, size - n - 1, &e);
		if (inst != NULL) {
			FUZZ_CHECK(mcp__decl_defaults(schema, inst) == 0,
			    "filling in the defaults failed");
			err[0] = '\0';
			FUZZ_CHECK(mcp__schema_validate(s, inst, "arguments",
			    err, sizeof(err)) == 0 || err[0] != '\0',
			    "a refused instance gave no reason");
		}
		json_decref(inst);
	}
	mcp__schema_free(s);
	json_decref(schema);
	return 0;
}
