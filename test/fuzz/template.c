/*
 * template.c: URI template matching (src/features.c): the input is a
 * template, a NUL byte, and a URI. Whether a URI matches must not depend
 * on whether the variables are wanted (the loop resolves without them,
 * the worker reads them), and every variable of a match is a string a
 * callback can read: UTF-8, without NUL.
 */
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t	*nul = memchr(data, 0, size);
	char		*tmpl, *uri;
	const char	*k;
	json_t		*vars, *v;
	int		 m0, m1;

	if (nul == NULL)
		return 0;
	tmpl = fuzz_str(data, (size_t)(nul - data));
	uri = fuzz_str(nul + 1, size - (size_t)(nul - data) - 1);
	if (mcp__template_valid(tmpl)) {
		vars = json_object();
		m0 = mcp__template_match(tmpl, uri, NULL);
		m1 = mcp__template_match(tmpl, uri, vars);
		FUZZ_CHECK(m0 == m1, "\"%s\" and \"%s\": a match without the "
		    "variables (%d) but not with them (%d)", tmpl, uri, m0, m1);
		if (m1)
			json_object_foreach(vars, k, v)
				FUZZ_CHECK(mcp__json_cstr(v) != NULL &&
				    mcp__utf8_valid(json_string_value(v),
				    json_string_length(v)),
				    "variable %s of a match is not a readable "
				    "string", k);
		json_decref(vars);
	}
	free(tmpl);
	free(uri);
	return 0;
}
