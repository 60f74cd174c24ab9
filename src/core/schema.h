/*
 * schema.h: the JSON Schema validator that checks tools/call arguments
 * against a tool's inputSchema, and structuredContent against its
 * outputSchema. Internal to libmcp; see schema.c for the keywords it
 * understands and the ones it deliberately ignores.
 */
#ifndef MCP_SCHEMA_H
#define MCP_SCHEMA_H

#include <stddef.h>

#include <jansson.h>

/* A compiled schema: immutable once built, so any number of threads may
 * validate against it at the same time. */
struct mcp__schema;
struct mcp__flat;

/*
 * Compiles SCHEMA (borrowed; the compiled form keeps its own deep copy, so
 * the caller may drop its reference at once). If REQUIRE_OBJECT is
 * non-zero the schema must be a JSON object whose "type" is "object", as
 * MCP requires of inputSchema. Returns NULL on an unusable schema or out of
 * memory, with a one-line reason in ERR (ERRLEN bytes, always
 * NUL-terminated when ERRLEN > 0; ERR may be NULL). Any thread.
 */
struct mcp__schema	*mcp__schema_compile(const json_t *schema,
			    int require_object, char *err, size_t errlen);

/*
 * Validates INST (borrowed) against S. Returns 0 if it is valid; otherwise
 * -1 and a one-line message in ERR naming the location and the problem,
 * where ROOT names the instance itself, as in
 * `arguments.items[2]: expected string, got integer`. Stops at the first
 * error. ERR may be NULL when only the verdict matters. Any thread,
 * concurrently with other validations against the same S.
 */
int			 mcp__schema_validate(const struct mcp__schema *s,
			    const json_t *inst, const char *root, char *err,
			    size_t errlen);

/*
 * S's properties when its arguments can be read in place (core.h,
 * struct mcp__flat), or NULL. Borrowed from S.
 */
const struct mcp__flat	*mcp__schema_flat(const struct mcp__schema *s);
/*
 * 1 when the arguments scanned into A (mcp__json_flat, against
 * mcp__schema_flat(S)) are valid against S; 0 when they are not or it
 * cannot tell, and the general path must judge them, with its message.
 */
struct mcp__flat_args;
int			 mcp__schema_flat_ok(const struct mcp__schema *s,
			    const struct mcp__flat_args *a);

/* Frees S; NULL is a no-op. No validation may be running on S. */
void			 mcp__schema_free(struct mcp__schema *s);

/*
 * decl.c: a declaration (mcp_args(7)) turned into the object schema it
 * stands for, a new reference; *HAS_DEFAULTS tells whether a field has a
 * default. NULL on a mistake, with its line, column and reason in ERR.
 * Any thread.
 */
json_t			*mcp__decl_parse(const char *text, int *has_defaults,
			    char *err, size_t errlen);
/* Adds to ARGS copies of the defaults that SCHEMA (from mcp__decl_parse)
 * declares for members it lacks, at any depth. 0, or -1 (out of memory). */
int			 mcp__decl_defaults(const json_t *schema, json_t *args);

#endif /* MCP_SCHEMA_H */
