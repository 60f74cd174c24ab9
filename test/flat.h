/*
 * flat.h: arguments read in place (mcp__json_flat, mcp__schema_flat_ok)
 * checked against the general path (mcp__json_parse, then
 * mcp__schema_validate), for test/t_schema.c and the schema fuzzer: what
 * the fast path accepts must be valid, with the same members, in the same
 * order, holding the same values.
 */
#ifndef MCP_TEST_FLAT_H
#define MCP_TEST_FLAT_H

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/core.h"
#include "core/schema.h"

/* 1 when slot SL holds what V, a member of the parsed arguments, is. */
static int
flat_slot_is(const struct mcp__slot *sl, const json_t *v)
{
	switch (sl->type) {
	case MCP__SLOT_STR:
		return json_is_string(v) && json_string_length(v) == sl->len &&
		    memcmp(json_string_value(v), sl->s, sl->len) == 0 &&
		    sl->s[sl->len] == '\0';
	case MCP__SLOT_INT:
		return json_is_integer(v) && json_integer_value(v) == sl->i &&
		    sl->d == (double)sl->i;
	case MCP__SLOT_REAL:
		return json_is_real(v) && json_real_value(v) == sl->d;
	case MCP__SLOT_TRUE:
		return json_is_true(v);
	case MCP__SLOT_FALSE:
		return json_is_false(v);
	default:
		return 0;
	}
}

/*
 * Reads TEXT (LEN bytes) both ways against S; *FAST tells whether the
 * fast path took it. NULL when the two agree, else what differs.
 */
static const char *
flat_differs(const struct mcp__schema *s, const char *text, size_t len,
    int *fast)
{
	const struct mcp__flat	*f = mcp__schema_flat(s);
	struct mcp__flat_args	*a;
	struct json_perr	 e;
	const char		*k, *why = NULL;
	json_t			*o, *v;
	size_t			 i, seen = 0;
	int			 slow;

	*fast = 0;
	if (f == NULL)
		return NULL;
	if ((a = malloc(sizeof(*a) + len)) == NULL)
		return "out of memory";
	*fast = mcp__json_flat(text, len, f, a) && mcp__schema_flat_ok(s, a);
	o = mcp__json_parse(text, len, &e);
	slow = o != NULL && json_is_object(o) &&
	    mcp__schema_validate(s, o, "arguments", NULL, 0) == 0;
	if (*fast && !slow)
		why = "the fast path took what is invalid";
	else if (*fast && a->nmembers != json_object_size(o))
		why = "another number of members";
	else if (*fast) {
		json_object_foreach(o, k, v) {
			for (i = 0; i < f->n; i++)
				if (strcmp(f->name[i], k) == 0)
					break;
			if (i == f->n || seen >= a->nmembers ||
			    a->order[seen] != i ||
			    !flat_slot_is(&a->slot[i], v)) {
				why = "a member differs";
				break;
			}
			seen++;
		}
	}
	json_decref(o);
	free(a);
	return why;
}

#endif /* MCP_TEST_FLAT_H */
