/*
 * args.c: a tool's arguments as C values (mcp_arg_str(3) and the rest),
 * and what a declared tool's arguments get before its callback runs:
 * their defaults, and the refusal of strings that C cannot hold.
 *
 * The arguments were validated against the input schema first, so for
 * a declared argument the type is known to match what the declaration
 * says: an accessor of another type is the program's mistake, which is
 * logged, and answered with 0 or "" rather than a crash.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

/* Appends to the path in WHERE (SZ bytes, LEN used), keeping it cut
 * short rather than overflowing. Returns the new length. */
static size_t
path_add(char *where, size_t sz, size_t len, const char *key, size_t idx)
{
	int	 n;

	if (len + 1 >= sz)
		return len;
	n = key != NULL ? snprintf(where + len, sz - len, ".%s", key) :
	    snprintf(where + len, sz - len, "[%zu]", idx);
	if (n < 0)
		return len;
	return len + (size_t)n < sz ? len + (size_t)n : sz - 1;
}

/* Whether V holds a string with U+0000 somewhere; its path into WHERE. */
static int
holds_nul(const json_t *v, char *where, size_t sz, size_t len)
{
	const char	*key;
	json_t		*e;
	size_t		 i;

	if (json_is_string(v))
		return strlen(json_string_value(v)) != json_string_length(v);
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, e)
			if (holds_nul(e, where, sz,
			    path_add(where, sz, len, key, 0)))
				return 1;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (holds_nul(e, where, sz,
			    path_add(where, sz, len, NULL, i)))
				return 1;
	}
	where[len] = '\0';
	return 0;
}

int
mcp__args_prepare(struct mcp_call *c)
{
	char	 where[128] = "arguments";

	if (!(c->tool->decl & TOOL_DECLARED))
		return 0;
	/*
	 * mcp_arg_str gives a C string: one holding U+0000 would be cut
	 * short there ("a.txt\0.png"), so a declared tool never sees one.
	 */
	if (c->has_nul && holds_nul(c->args, where, sizeof(where),
	    strlen(where))) {
		mcp_result_errorf(c, "invalid arguments: %s: a string holds "
		    "U+0000", where);
		return -1;
	}
	if ((c->tool->decl & TOOL_DEFAULTS) &&
	    mcp__decl_defaults(c->tool->input_schema, c->args) != 0) {
		mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return -1;
	}
	return 0;
}

/*
 * The argument NAME: a member of the arguments, or a path into them
 * ("address.city", "tags[0]") when no member has that very name.
 */
static json_t *
arg(mcp_call *call, const char *name)
{
	json_t		*v = mcp__call_args(call), *m;
	const char	*p = name;
	char		 key[256], *end;
	size_t		 n;
	unsigned long	 i;

	if (v == NULL || name == NULL)
		return NULL;
	if ((m = mcp__json_get(v, name)) != NULL ||
	    strpbrk(name, ".[") == NULL)
		return m;
	while (*p != '\0' && v != NULL) {
		if (*p == '[') {
			i = strtoul(p + 1, &end, 10);
			if (end == p + 1 || *end != ']')
				return NULL;
			v = json_array_get(v, i);
			p = end + 1;
		} else {
			if (*p == '.')
				p++;
			n = strcspn(p, ".[");
			if (n == 0 || n >= sizeof(key))
				return NULL;
			memcpy(key, p, n);
			key[n] = '\0';
			v = json_object_get(v, key);
			p += n;
		}
	}
	return v;
}

/* The argument NAME for the typed accessors: null is absent. */
static json_t *
arg_value(mcp_call *call, const char *name)
{
	json_t	*v = arg(call, name);

	return json_is_null(v) ? NULL : v;
}

/*
 * The argument NAME when the arguments were read in place (c->flat): its
 * slot, or a slot that says absent for a name that is no property (no
 * other member was there). NULL means "ask jansson" (arg()): when they
 * were not read in place, once the object was built (the callback may
 * hold it), and for a path ("a.b", ".s", "t[0]"), which arg() resolves.
 */
static const struct mcp__slot *
slot(mcp_call *call, const char *name)
{
	static const struct mcp__slot	 absent;
	const struct mcp__flat		*f;
	size_t				 i;

	if (call->flat == NULL || call->args != NULL)
		return NULL;
	if (name == NULL)
		return &absent;
	f = mcp__schema_flat(call->tool->in);
	for (i = 0; i < f->n; i++)
		if (f->name[i][0] == name[0] && strcmp(f->name[i], name) == 0)
			return &call->flat->slot[i];
	return strpbrk(name, ".[") != NULL ? NULL : &absent;
}

static void
wrong_is(mcp_call *call, const char *fn, const char *name, const char *is)
{
	mcp_log(MCP_LOG_ERR, "%s %s: %s(\"%s\"): the argument is %s",
	    call->tool != NULL ? "tool" : "call",
	    call->tool != NULL ? call->tool->name : "", fn, name, is);
}

static void
wrong(mcp_call *call, const char *fn, const char *name, const json_t *v)
{
	static const char *const names[] = { "an object", "an array",
	    "a string", "an integer", "a number", "true", "false", "null" };

	wrong_is(call, fn, name, names[json_typeof(v)]);
}

static void
wrong_slot(mcp_call *call, const char *fn, const char *name,
    const struct mcp__slot *sl)
{
	static const char *const names[] = {
		[MCP__SLOT_NONE] = "absent",
		[MCP__SLOT_STR] = "a string",
		[MCP__SLOT_INT] = "an integer",
		[MCP__SLOT_REAL] = "a number",
		[MCP__SLOT_TRUE] = "true",
		[MCP__SLOT_FALSE] = "false",
	};

	wrong_is(call, fn, name, names[sl->type]);
}

/* mcp_arg_int's: D as a long long, when it is integral; 0 when not. */
static int
integral(double d, long long *out)
{
	/*
	 * 3.0 is an integer to JSON Schema, and so is 1e20: one beyond a
	 * long long saturates, which keeps it within any range declared.
	 */
	if (d != floor(d))
		return 0;
	*out = d >= 9.2233720368547758e18 ? LLONG_MAX :
	    d <= -9.2233720368547758e18 ? LLONG_MIN : (long long)d;
	return 1;
}

const char *
mcp_arg_str(mcp_call *call, const char *name)
{
	const struct mcp__slot	*sl = slot(call, name);
	json_t			*v;

	if (sl != NULL && (sl->type == MCP__SLOT_NONE ||
	    sl->type == MCP__SLOT_STR))
		return sl->s;
	if (sl != NULL) {
		wrong_slot(call, "mcp_arg_str", name, sl);
		return "";
	}
	v = arg_value(call, name);
	if (v == NULL || json_is_string(v))
		return json_string_value(v);
	wrong(call, "mcp_arg_str", name, v);
	return "";
}

long long
mcp_arg_int(mcp_call *call, const char *name)
{
	const struct mcp__slot	*sl = slot(call, name);
	json_t			*v;
	long long		 i;

	if (sl != NULL) {
		if (sl->type == MCP__SLOT_NONE || sl->type == MCP__SLOT_INT)
			return sl->i;
		if (sl->type == MCP__SLOT_REAL && integral(sl->d, &i))
			return i;
		wrong_slot(call, "mcp_arg_int", name, sl);
		return 0;
	}
	if ((v = arg_value(call, name)) == NULL)
		return 0;
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v) && integral(json_real_value(v), &i))
		return i;
	wrong(call, "mcp_arg_int", name, v);
	return 0;
}

double
mcp_arg_num(mcp_call *call, const char *name)
{
	const struct mcp__slot	*sl = slot(call, name);
	json_t			*v;

	if (sl != NULL) {
		if (sl->type == MCP__SLOT_NONE || sl->type == MCP__SLOT_INT ||
		    sl->type == MCP__SLOT_REAL)
			return sl->d;
		wrong_slot(call, "mcp_arg_num", name, sl);
		return 0;
	}
	v = arg_value(call, name);
	if (v == NULL || json_is_number(v))
		return json_number_value(v);
	wrong(call, "mcp_arg_num", name, v);
	return 0;
}

int
mcp_arg_bool(mcp_call *call, const char *name)
{
	const struct mcp__slot	*sl = slot(call, name);
	json_t			*v;

	if (sl != NULL) {
		if (sl->type == MCP__SLOT_NONE || sl->type == MCP__SLOT_TRUE ||
		    sl->type == MCP__SLOT_FALSE)
			return sl->type == MCP__SLOT_TRUE;
		wrong_slot(call, "mcp_arg_bool", name, sl);
		return 0;
	}
	v = arg_value(call, name);
	if (v == NULL || json_is_boolean(v))
		return json_is_true(v);
	wrong(call, "mcp_arg_bool", name, v);
	return 0;
}

json_t *
mcp_arg_json(mcp_call *call, const char *name)
{
	return arg(call, name);
}

int
mcp_arg_has(mcp_call *call, const char *name)
{
	const struct mcp__slot	*sl = slot(call, name);
	json_t			*v;

	if (sl != NULL)
		return sl->type != MCP__SLOT_NONE;
	v = arg(call, name);

	return v != NULL && !json_is_null(v);
}

size_t
mcp_arg_len(mcp_call *call, const char *name)
{
	const struct mcp__slot	*sl = slot(call, name);
	json_t			*v;

	if (sl != NULL)
		return sl->type == MCP__SLOT_STR ? sl->len : 0;
	v = arg(call, name);

	if (json_is_string(v))
		return json_string_length(v);
	if (json_is_array(v))
		return json_array_size(v);
	if (json_is_object(v))
		return json_object_size(v);
	return 0;
}
