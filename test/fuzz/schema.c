/*
 * schema.c: the schema compiler and validator (src/schema.c): the input
 * is a schema, a NUL byte, and an instance. Any schema compiles or is
 * refused with a message; a compiled one validates any instance, twice
 * the same way, and a refusal says why. When the schema is flat, the
 * instance read in place must agree with it parsed (test/flat.h).
 */
#include "fuzz.h"
#include "../flat.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t		*nul = memchr(data, 0, size);
	size_t			 n = nul != NULL ? (size_t)(nul - data) : size;
	struct json_perr	 e;
	struct mcp__schema	*s;
	json_t			*schema, *inst;
	const char		*why;
	char			 err[256], err2[256];
	int			 r1, r2, fast;

	schema = mcp__json_parse((const char *)data, n, &e);
	if (schema == NULL)
		return 0;
	err[0] = '\0';
	s = mcp__schema_compile(schema, 0, err, sizeof(err));
	FUZZ_CHECK(s != NULL || err[0] != '\0', "a refused schema gave no "
	    "reason");
	if (s != NULL && nul != NULL) {
		why = flat_differs(s, (const char *)nul + 1, size - n - 1,
		    &fast);
		FUZZ_CHECK(why == NULL, "arguments read in place: %s", why);
		inst = mcp__json_parse((const char *)nul + 1, size - n - 1, &e);
		if (inst != NULL) {
			err[0] = err2[0] = '\0';
			r1 = mcp__schema_validate(s, inst, "arguments", err,
			    sizeof(err));
			r2 = mcp__schema_validate(s, inst, "arguments", err2,
			    sizeof(err2));
			FUZZ_CHECK(r1 == r2 && strcmp(err, err2) == 0,
			    "validation is not repeatable");
			FUZZ_CHECK(r1 == 0 || err[0] != '\0',
			    "a refused instance gave no reason");
			json_decref(inst);
		}
	}
	mcp__schema_free(s);
	json_decref(schema);
	return 0;
}
