/*
 * t_schema.c: unit tests for the JSON Schema validator in src/schema.c:
 * every supported keyword with valid and invalid instances, the exact
 * wording of error messages, compile failures, recursive $ref, boolean
 * schemas, Unicode lengths and integer-versus-real, patterns (PCRE2 made
 * ECMA-like, and bounded on hostile values) and formats. Single-threaded
 * but for t_threads, whose threads share one schema and report to main.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "core/core.h"
#include "core/schema.h"
#include "flat.h"
#include "tap.h"

static char	 err[1024];

/* Compiles the schema in the JSON text JS; NULL (and err) on failure. */
static struct mcp__schema *
comp(const char *js, int require_object)
{
	struct mcp__schema	*s;
	json_error_t		 jerr;
	json_t			*v;

	v = json_loads(js, JSON_DECODE_ANY, &jerr);
	if (v == NULL) {
		diag("bad test JSON %s: %s", js, jerr.text);
		snprintf(err, sizeof(err), "bad test JSON");
		return NULL;
	}
	s = mcp__schema_compile(v, require_object, err, sizeof(err));
	json_decref(v);
	return s;
}

/* Validates the JSON text INST against S at root "arguments". */
static int
val(const struct mcp__schema *s, const char *inst)
{
	json_error_t	 jerr;
	json_t		*v;
	int		 r;

	v = json_loads(inst, JSON_DECODE_ANY, &jerr);
	if (v == NULL) {
		diag("bad test JSON %s: %s", inst, jerr.text);
		snprintf(err, sizeof(err), "bad test JSON");
		return -2;
	}
	r = mcp__schema_validate(s, v, "arguments", err, sizeof(err));
	json_decref(v);
	return r;
}

/* Compiles SCHEMA (not requiring an object) and checks INST is VALID. */
static void
check(const char *schema, const char *inst, int valid)
{
	struct mcp__schema	*s;
	int			 r;

	s = comp(schema, 0);
	if (s == NULL) {
		ok(0, "compile %s", schema);
		diag("  %s", err);
		return;
	}
	r = val(s, inst);
	if (!ok(r == (valid ? 0 : -1), "%s %s %s", inst,
	    valid ? "matches" : "does not match", schema))
		diag("  validate returned %d: %s", r, err);
	mcp__schema_free(s);
}

/* Checks that INST fails SCHEMA with exactly the message MSG. */
static void
check_msg(const char *schema, const char *inst, const char *msg)
{
	struct mcp__schema	*s;

	s = comp(schema, 0);
	if (s == NULL) {
		ok(0, "compile %s", schema);
		diag("  %s", err);
		return;
	}
	if (val(s, inst) != -1)
		err[0] = '\0';
	is_str(err, msg, "message for %s against %s", inst, schema);
	mcp__schema_free(s);
}

/* Checks that SCHEMA does not compile and that the reason contains WHY. */
static void
check_bad(const char *schema, int require_object, const char *why)
{
	struct mcp__schema	*s;

	s = comp(schema, require_object);
	if (!ok(s == NULL, "%s is rejected", schema))
		mcp__schema_free(s);
	else if (!ok(strstr(err, why) != NULL, "reason mentions \"%s\"",
	    why))
		diag("  got \"%s\"", err);
}

static void
t_type(void)
{
	check("{\"type\":\"string\"}", "\"x\"", 1);
	check("{\"type\":\"string\"}", "1", 0);
	check("{\"type\":\"object\"}", "{}", 1);
	check("{\"type\":\"object\"}", "[]", 0);
	check("{\"type\":\"array\"}", "[1]", 1);
	check("{\"type\":\"boolean\"}", "false", 1);
	check("{\"type\":\"boolean\"}", "0", 0);
	check("{\"type\":\"null\"}", "null", 1);
	check("{\"type\":\"null\"}", "false", 0);
	check("{\"type\":\"number\"}", "1", 1);
	check("{\"type\":\"number\"}", "1.5", 1);
	check("{\"type\":\"number\"}", "\"1\"", 0);
	check("{\"type\":\"integer\"}", "7", 1);
	check("{\"type\":\"integer\"}", "7.0", 1);
	check("{\"type\":\"integer\"}", "7.5", 0);
	check("{\"type\":\"integer\"}", "-0.0", 1);
	check("{\"type\":[\"string\",\"null\"]}", "null", 1);
	check("{\"type\":[\"string\",\"null\"]}", "3", 0);
	check("{}", "[1,{\"a\":null}]", 1);
	check_msg("{\"type\":[\"string\",\"null\"]}", "3",
	    "arguments: expected string or null, got integer");
	check_msg("{\"type\":[\"object\",\"array\",\"null\"]}", "2.5",
	    "arguments: expected object, array or null, got number");
	check_msg("{\"type\":[\"integer\",\"number\"]}", "true",
	    "arguments: expected number, got boolean");
}

static void
t_numbers(void)
{
	const char	*ms = "{\"type\":\"object\",\"properties\":{\"ms\":"
	    "{\"type\":\"integer\",\"minimum\":0,\"maximum\":600000}}}";
	const char	*ex = "{\"exclusiveMinimum\":0,"
	    "\"exclusiveMaximum\":10}";
	const char	*d4 = "{\"minimum\":0,\"exclusiveMinimum\":true,"
	    "\"maximum\":10,\"exclusiveMaximum\":false}";

	check(ms, "{\"ms\":600000}", 1);
	check(ms, "{\"ms\":0}", 1);
	check(ms, "{\"ms\":-1}", 0);
	check_msg(ms, "{\"ms\":600001}", "arguments.ms: must be <= 600000");
	check_msg(ms, "{\"ms\":-3}", "arguments.ms: must be >= 0");
	check_msg(ms, "{\"ms\":1.5}",
	    "arguments.ms: expected integer, got number");
	check(ms, "{\"ms\":5.0}", 1);
	check(ex, "5", 1);
	check(ex, "0.001", 1);
	check_msg(ex, "0", "arguments: must be > 0");
	check_msg(ex, "10", "arguments: must be < 10");
	check(ex, "\"not a number\"", 1);
	check(d4, "0.5", 1);
	check_msg(d4, "0", "arguments: must be > 0");
	check(d4, "10", 1);
	check("{\"maximum\":2.5}", "2.5", 1);
	check_msg("{\"maximum\":2.5}", "3", "arguments: must be <= 2.5");
	check("{\"minimum\":9007199254740993}", "9007199254740992", 0);
	check("{\"multipleOf\":5}", "25", 1);
	check_msg("{\"multipleOf\":5}", "26",
	    "arguments: must be a multiple of 5");
	check("{\"multipleOf\":0.1}", "0.3", 1);
	check("{\"multipleOf\":0.1}", "0.35", 0);
	check("{\"multipleOf\":2}", "4.0", 1);
	check("{\"multipleOf\":2}", "4.5", 0);
}

static void
t_strings(void)
{
	const char	*s = "{\"type\":\"string\",\"minLength\":2,"
	    "\"maxLength\":3}";

	check(s, "\"ab\"", 1);
	check(s, "\"abc\"", 1);
	check_msg(s, "\"a\"",
	    "arguments: must be at least 2 characters long");
	check_msg(s, "\"abcd\"",
	    "arguments: must be at most 3 characters long");
	/* Code points, not bytes: each of these is 2 to 4 bytes long. */
	check(s, "\"\\u00e9\\u00e8\\u00ea\"", 1);
	check(s, "\"\\u65e5\\u672c\"", 1);
	check(s, "\"\\ud83d\\ude00\\ud83d\\ude01\"", 1);
	check(s, "\"\\ud83d\\ude00\"", 0);
	check(s, "\"\\u00e9\\u00e8\\u00ea\\u00eb\"", 0);
	/* 2 bytes, 1 code point: bytes alone must not pass minLength. */
	check(s, "\"\\u00e9\"", 0);
	check(s, "\"\\u00e9\\u00e8\"", 1);
	check_msg("{\"maxLength\":1}", "\"ab\"",
	    "arguments: must be at most 1 character long");
	check("{\"minLength\":5}", "12345", 1);
	check("{\"maxLength\":1e30,\"minLength\":2.0}", "\"abc\"", 1);
}

static void
t_enum_const(void)
{
	const char	*e = "{\"enum\":[\"red\",\"green\",1,null,[1,2]]}";

	check(e, "\"red\"", 1);
	check(e, "null", 1);
	check(e, "1.0", 1);
	check(e, "[1.0,2]", 1);
	check(e, "\"blue\"", 0);
	check(e, "[2,1]", 0);
	check_msg(e, "\"blue\"",
	    "arguments: must be one of \"red\", \"green\", 1, null, [1,2]");
	check("{\"const\":{\"a\":1,\"b\":[true]}}",
	    "{\"b\":[true],\"a\":1.0}", 1);
	check("{\"const\":{\"a\":1}}", "{\"a\":1,\"b\":2}", 0);
	check("{\"const\":null}", "null", 1);
	check("{\"const\":null}", "0", 0);
	check("{\"const\":false}", "true", 0);
	check_msg("{\"const\":\"x\"}", "\"y\"",
	    "arguments: must be equal to \"x\"");
	check("{\"enum\":[]}", "1", 0);
	check_msg("{\"const\":{\"a\":[1.0,\"x\",false],\"b\":{}}}", "2",
	    "arguments: must be equal to {\"a\":[1.0,\"x\",false],\"b\":{}}");
}

static void
t_arrays(void)
{
	const char	*a = "{\"type\":\"object\",\"properties\":{\"items\":"
	    "{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	    "\"minItems\":1,\"maxItems\":3,\"uniqueItems\":true}}}";
	const char	*t = "{\"prefixItems\":[{\"type\":\"integer\"},"
	    "{\"type\":\"string\"}],\"items\":false}";
	const char	*t7 = "{\"items\":[{\"type\":\"integer\"}],"
	    "\"additionalItems\":{\"type\":\"boolean\"}}";

	check(a, "{\"items\":[\"a\",\"b\"]}", 1);
	check_msg(a, "{\"items\":[\"a\",\"b\",3]}",
	    "arguments.items[2]: expected string, got integer");
	check_msg(a, "{\"items\":[]}",
	    "arguments.items: must have at least 1 item");
	check_msg(a, "{\"items\":[\"a\",\"b\",\"c\",\"d\"]}",
	    "arguments.items: must have at most 3 items");
	check_msg(a, "{\"items\":[\"a\",\"b\",\"a\"]}",
	    "arguments.items: must not contain duplicates ([0] and [2] are "
	    "equal)");
	check("{\"uniqueItems\":true}", "[1,1.0]", 0);
	check("{\"uniqueItems\":true}", "[{\"a\":1},{\"a\":2}]", 1);
	check("{\"uniqueItems\":false}", "[1,1]", 1);
	check(t, "[1,\"x\"]", 1);
	check(t, "[1]", 1);
	check_msg(t, "[1,2]", "arguments[1]: expected string, got integer");
	check_msg(t, "[1,\"x\",3]", "arguments: must have at most 2 items");
	check(t7, "[1,true,false]", 1);
	check(t7, "[1,true,\"x\"]", 0);
	check(t7, "[\"x\"]", 0);
}

static void
t_objects(void)
{
	const char	*o = "{\"type\":\"object\",\"properties\":{\"text\":"
	    "{\"type\":\"string\"},\"n\":{\"type\":\"integer\"}},"
	    "\"required\":[\"text\"],\"additionalProperties\":false}";
	const char	*ap = "{\"properties\":{\"a\":{}},"
	    "\"additionalProperties\":{\"type\":\"integer\"}}";
	const char	*big = "{\"properties\":{\"p0\":{},\"p1\":{},\"p2\":{},"
	    "\"p3\":{},\"p4\":{},\"p5\":{},\"p6\":{},\"p7\":{},\"p8\":{},"
	    "\"p9\":{\"type\":\"string\"}},\"additionalProperties\":false}";

	check(o, "{\"text\":\"hi\"}", 1);
	check(o, "{\"text\":\"hi\",\"n\":2}", 1);
	check_msg(o, "{\"n\":2}",
	    "arguments: missing required property \"text\"");
	check_msg(o, "{\"text\":\"hi\",\"x\":1}",
	    "arguments: unexpected property \"x\"");
	check_msg(o, "{\"text\":\"hi\",\"a\\\"b\\n\":1}",
	    "arguments: unexpected property \"a\\\"b\\u000a\"");
	check_msg(o, "{\"text\":7}",
	    "arguments.text: expected string, got integer");
	check(ap, "{\"a\":\"s\",\"b\":1}", 1);
	check_msg(ap, "{\"a\":\"s\",\"my key\":\"s\"}",
	    "arguments[\"my key\"]: expected integer, got string");
	check(big, "{\"p0\":1,\"p9\":\"s\"}", 1);
	check_msg(big, "{\"p9\":1}",
	    "arguments.p9: expected string, got integer");
	check_msg(big, "{\"p10\":1}", "arguments: unexpected property \"p10\"");
	check("{\"minProperties\":1,\"maxProperties\":2}", "{\"a\":1}", 1);
	check_msg("{\"minProperties\":1}", "{}",
	    "arguments: must have at least 1 property");
	check_msg("{\"maxProperties\":1}", "{\"a\":1,\"b\":2}",
	    "arguments: must have at most 1 property");
	/* Non-objects pass the object keywords. */
	check("{\"required\":[\"a\"],\"additionalProperties\":false}", "5",
	    1);
	/* A property matched by patternProperties is not additional. */
	check("{\"patternProperties\":{\"^x\":{}},"
	    "\"additionalProperties\":false}", "{\"xa\":1}", 1);
	check_msg("{\"properties\":{\"a\":{\"properties\":{\"b\":"
	    "{\"items\":{\"required\":[\"c\"]}}}}}}",
	    "{\"a\":{\"b\":[{\"c\":1},{}]}}",
	    "arguments.a.b[1]: missing required property \"c\"");
}

static void
t_combinators(void)
{
	const char	*any = "{\"anyOf\":[{\"type\":\"string\"},"
	    "{\"type\":\"integer\",\"minimum\":10}]}";
	const char	*one = "{\"oneOf\":[{\"type\":\"integer\"},"
	    "{\"minimum\":5}]}";
	const char	*all = "{\"allOf\":[{\"type\":\"integer\"},"
	    "{\"maximum\":3}]}";

	check(any, "\"x\"", 1);
	check(any, "12", 1);
	check_msg(any, "5",
	    "arguments: must match at least one schema in anyOf");
	check(one, "3", 1);
	check(one, "6.5", 1);
	check_msg(one, "7", "arguments: must match exactly one schema in "
	    "oneOf, but matches [0] and [1]");
	check_msg(one, "2.5", "arguments: must match exactly one schema in "
	    "oneOf, but matches none");
	check(all, "2", 1);
	check_msg(all, "4", "arguments: must be <= 3");
	check(all, "2.5", 0);
	check("{\"not\":{\"type\":\"string\"}}", "1", 1);
	check_msg("{\"not\":{\"type\":\"string\"}}", "\"s\"",
	    "arguments: must not match the schema in not");
	/* A failing branch of anyOf must not leave its message behind. */
	check_msg("{\"properties\":{\"a\":{\"anyOf\":[{\"type\":\"null\"},"
	    "{\"type\":\"string\"}]},\"b\":{\"type\":\"string\"}}}",
	    "{\"a\":null,\"b\":1}",
	    "arguments.b: expected string, got integer");
}

static void
t_boolean(void)
{
	check("true", "{\"anything\":[1]}", 1);
	check("false", "null", 0);
	check_msg("false", "1", "arguments: no value is allowed here");
	check_msg("{\"properties\":{\"x\":false}}", "{\"x\":1}",
	    "arguments.x: no value is allowed here");
	check("{\"properties\":{\"x\":true}}", "{\"x\":1}", 1);
	check("{\"items\":true}", "[1,\"a\"]", 1);
	check("{\"allOf\":[true,{\"not\":false}]}", "1", 1);
}

static void
t_ref(void)
{
	const char	*tree = "{\"type\":\"object\",\"properties\":{\"v\":"
	    "{\"type\":\"integer\"},\"kids\":{\"type\":\"array\",\"items\":"
	    "{\"$ref\":\"#\"}}},\"required\":[\"v\"]}";
	const char	*defs = "{\"definitions\":{\"pos\":"
	    "{\"type\":\"integer\","
	    "\"minimum\":1},\"a~b/c\":{\"type\":\"string\"}},\"properties\":"
	    "{\"n\":{\"$ref\":\"#/definitions/pos\"},\"s\":{\"$ref\":"
	    "\"#/definitions/a~0b~1c\"},\"t\":{\"$ref\":"
	    "\"#/properties/n\"}}}";
	const char	*loop = "{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},"
	    "\"b\":{\"$ref\":\"#/$defs/a\"}},\"$ref\":\"#/$defs/a\"}";
	const char	*exp = "{\"anyOf\":[{\"$ref\":\"#\"},"
	    "{\"$ref\":\"#\"}]}";
	const char	*list = "{\"$defs\":{\"node\":{\"type\":[\"object\","
	    "\"null\"],\"properties\":{\"next\":{\"$ref\":\"#/$defs/node\"}}}}"
	    ",\"$ref\":\"#/$defs/node\"}";
	char		 inst[2048];
	size_t		 i;
	size_t		 len;

	check(tree, "{\"v\":1,\"kids\":[{\"v\":2,\"kids\":[{\"v\":3}]}]}", 1);
	check_msg(tree, "{\"v\":1,\"kids\":[{\"v\":2,\"kids\":[{}]}]}",
	    "arguments.kids[0].kids[0]: missing required property \"v\"");
	check(defs, "{\"n\":1,\"s\":\"x\",\"t\":2}", 1);
	check_msg(defs, "{\"n\":0}", "arguments.n: must be >= 1");
	check_msg(defs, "{\"s\":0}",
	    "arguments.s: expected string, got integer");
	check_msg(defs, "{\"t\":0}", "arguments.t: must be >= 1");
	/* Cycles compile, and validation stops at the $ref cap. */
	check_msg(loop, "1",
	    "arguments: schema $ref nesting exceeds 64 levels");
	check_msg(exp, "1", "arguments: schema $ref nesting exceeds 64 levels");
	/* A linked list 10 deep is fine; 70 deep hits the cap. */
	len = 0;
	for (i = 0; i < 10; i++)
		len += (size_t)snprintf(inst + len, sizeof(inst) - len,
		    "{\"next\":");
	len += (size_t)snprintf(inst + len, sizeof(inst) - len, "null");
	for (i = 0; i < 10; i++)
		len += (size_t)snprintf(inst + len, sizeof(inst) - len, "}");
	check(list, inst, 1);
	len = 0;
	for (i = 0; i < 70; i++)
		len += (size_t)snprintf(inst + len, sizeof(inst) - len,
		    "{\"next\":");
	len += (size_t)snprintf(inst + len, sizeof(inst) - len, "null");
	for (i = 0; i < 70; i++)
		len += (size_t)snprintf(inst + len, sizeof(inst) - len, "}");
	check(list, inst, 0);
	ok(strstr(err, "$ref nesting exceeds 64") != NULL, "deep list: %s",
	    err);
}

static void
t_compile_errors(void)
{
	check_bad("[]", 0, "must be an object or a boolean");
	check_bad("5", 1, "must be a JSON object");
	check_bad("true", 1, "must be a JSON object");
	check_bad("{\"properties\":{}}", 1, "no \"type\"");
	check_bad("{\"type\":\"array\"}", 1, "must be \"object\"");
	check_bad("{\"type\":[\"object\"]}", 1, "must be \"object\"");
	check_bad("{\"type\":\"foo\"}", 0, "#/type: unknown type \"foo\"");
	check_bad("{\"type\":[]}", 0, "#/type: must be a string");
	check_bad("{\"type\":\"object\",\"properties\":{\"ms\":{\"minimum\":"
	    "\"x\"}}}", 1, "#/properties/ms/minimum: must be a number");
	check_bad("{\"type\":\"object\",\"required\":5}", 1,
	    "#/required: must be an array of strings");
	check_bad("{\"required\":[\"a\",1]}", 0, "must be an array of strings");
	check_bad("{\"maxLength\":-1}", 0,
	    "#/maxLength: must be a non-negative integer");
	check_bad("{\"minItems\":1.5}", 0, "must be a non-negative integer");
	check_bad("{\"multipleOf\":0}", 0, "must be greater than 0");
	check_bad("{\"enum\":\"a\"}", 0, "#/enum: must be an array");
	check_bad("{\"uniqueItems\":1}", 0, "must be a boolean");
	check_bad("{\"exclusiveMinimum\":\"1\"}", 0, "must be a number");
	check_bad("{\"anyOf\":[]}", 0, "#/anyOf: must be a non-empty array");
	check_bad("{\"allOf\":[{},3]}", 0,
	    "#/allOf/1: a schema must be an object or a boolean, not integer");
	check_bad("{\"properties\":[]}", 0, "#/properties: must be an object");
	check_bad("{\"properties\":{\"a/b\":{\"type\":1}}}", 0,
	    "#/properties/a~1b/type: must be a string");
	check_bad("{\"additionalProperties\":\"no\"}", 0,
	    "#/additionalProperties: a schema must be");
	check_bad("{\"not\":null}", 0, "#/not: a schema must be");
	check_bad("{\"$ref\":\"#/$defs/nope\"}", 0,
	    "cannot resolve \"#/$defs/nope\"");
	check_bad("{\"$ref\":\"http://example.com/s.json\"}", 0,
	    "only local references");
	check_bad("{\"$ref\":3}", 0, "#/$ref: must be a string");
	check_bad("{\"$defs\":{\"x\":{\"maximum\":[]}}}", 0,
	    "#/$defs/x/maximum: must be a number");
	check_bad("{\"properties\":{\"a\":{\"$ref\":\"#/$defs/x\"}},\"$defs\":"
	    "{\"x\":{\"minLength\":\"2\"}}}", 0, "/minLength: must be a "
	    "non-negative integer");
	ok(mcp__schema_compile(NULL, 0, err, sizeof(err)) == NULL,
	    "NULL schema is rejected");
	/* A tiny buffer still gets a terminated (truncated) message. */
	{
		json_t			*v;
		char			 small[8];
		struct mcp__schema	*s;

		v = json_loads("{\"type\":\"foo\"}", 0, NULL);
		memset(small, 'x', sizeof(small));
		s = mcp__schema_compile(v, 0, small, sizeof(small));
		ok(s == NULL && strlen(small) == 7, "truncated reason \"%s\"",
		    small);
		json_decref(v);
	}
}

/* The conformance suite's json_schema_2020_12_tool. */
static void
t_conformance(void)
{
	const char	*schema = "{\"$schema\":\"https://json-schema.org/"
	    "draft/2020-12/schema\",\"type\":\"object\",\"$defs\":{\"address\":"
	    "{\"type\":\"object\",\"properties\":{\"street\":{\"type\":"
	    "\"string\"},\"city\":{\"type\":\"string\"}}}},\"properties\":"
	    "{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":"
	    "\"#/$defs/address\"}},\"additionalProperties\":false}";
	struct mcp__schema	*s;

	s = comp(schema, 1);
	if (!ok(s != NULL, "2020-12 tool schema compiles"))
		diag("  %s", err);
	if (s == NULL)
		return;
	is_int(val(s, "{}"), 0, "empty arguments");
	is_int(val(s, "{\"name\":\"Ann\",\"address\":{\"street\":\"Main\","
	    "\"city\":\"Paris\"}}"), 0, "full arguments");
	is_int(val(s, "{\"address\":{\"city\":5}}"), -1, "bad city");
	is_str(err, "arguments.address.city: expected string, got integer",
	    "bad city message");
	is_int(val(s, "{\"name\":\"Ann\",\"age\":3}"), -1, "extra property");
	is_str(err, "arguments: unexpected property \"age\"",
	    "extra property message");
	is_int(val(s, "[]"), -1, "array arguments");
	is_str(err, "arguments: expected object, got array",
	    "array arguments message");
	mcp__schema_free(s);
}

/* The compiled schema must not depend on the caller's json_t. */
static void
t_lifetime(void)
{
	struct mcp__schema	*s;
	json_t			*v;
	json_t			*inst;
	char			 tiny[12];

	v = json_loads("{\"type\":\"object\",\"required\":[\"a\"],"
	    "\"properties\":{\"a\":{\"enum\":[\"x\"]}}}", 0, NULL);
	s = mcp__schema_compile(v, 1, err, sizeof(err));
	json_object_clear(v);
	json_decref(v);
	ok(s != NULL, "compiles");
	inst = json_pack("{s:s}", "a", "x");
	is_int(mcp__schema_validate(s, inst, "arguments", err, sizeof(err)),
	    0, "valid after the source is gone");
	is_int(mcp__schema_validate(s, inst, "arguments", NULL, 0), 0,
	    "NULL err buffer");
	json_object_set_new(inst, "a", json_string("y"));
	is_int(mcp__schema_validate(s, inst, "arguments", NULL, 0), -1,
	    "invalid with NULL err buffer");
	is_int(mcp__schema_validate(s, inst, "structuredContent", err,
	    sizeof(err)), -1, "invalid");
	is_str(err, "structuredContent.a: must be one of \"x\"",
	    "root name is the caller's");
	/* Truncation keeps the message valid UTF-8: 11 bytes hold 5.5 e. */
	is_int(mcp__schema_validate(s, inst, "\xc3\xa9\xc3\xa9\xc3\xa9"
	    "\xc3\xa9\xc3\xa9\xc3\xa9", tiny, sizeof(tiny)), -1,
	    "invalid, tiny buffer");
	is_str(tiny, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
	    "cut at a character boundary");
	is_int(mcp__schema_validate(s, NULL, "arguments", err, sizeof(err)),
	    -1, "NULL instance");
	json_decref(inst);
	mcp__schema_free(s);
	mcp__schema_free(NULL);
	ok(1, "free(NULL) is a no-op");
}

/* Validates the string VALUE (any bytes, LEN of them) against S. */
static int
val_str(const struct mcp__schema *s, const char *value, size_t len)
{
	json_t	*v;
	int	 r;

	v = json_stringn(value, len);
	if (v == NULL) {
		snprintf(err, sizeof(err), "bad test string");
		return -2;
	}
	r = mcp__schema_validate(s, v, "arguments", err, sizeof(err));
	json_decref(v);
	return r;
}

/* Compiles {KW: ARG} (a string, C escapes only) and checks VALUE. */
static void
check_kw(const char *kw, const char *arg, const char *value, int valid)
{
	struct mcp__schema	*s;
	json_t			*js;
	int			 r;

	js = json_pack("{s:s}", kw, arg);
	s = mcp__schema_compile(js, 0, err, sizeof(err));
	json_decref(js);
	if (s == NULL) {
		ok(0, "compile %s %s", kw, arg);
		diag("  %s", err);
		return;
	}
	r = val_str(s, value, strlen(value));
	if (!ok(r == (valid ? 0 : -1), "\"%s\" %s %s \"%s\"", value,
	    valid ? "matches" : "does not match", kw, arg))
		diag("  validate returned %d: %s", r, err);
	mcp__schema_free(s);
}

#define check_pattern(p, v, valid)	check_kw("pattern", (p), (v), (valid))
#define check_format(f, v, valid)	check_kw("format", (f), (v), (valid))

static double
now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* valgrind runs this program too (test/valgrind.sh), 20 to 50 times slower. */
static int
slow_run(void)
{
	const char	*pre = getenv("LD_PRELOAD");

	return pre != NULL && strstr(pre, "vgpreload") != NULL;
}

static void
t_pattern(void)
{
	const char		*code = "{\"type\":\"object\",\"properties\":"
	    "{\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}$\"}}}";
	struct mcp__schema	*s;

	check(code, "{\"code\":\"ABC\"}", 1);
	check_msg(code, "{\"code\":\"ab\"}",
	    "arguments.code: \"ab\" does not match pattern \"^[A-Z]{3}$\"");
	/* Patterns search: no implicit anchors. */
	check_pattern("b", "abc", 1);
	check_pattern("b", "xyz", 0);
	check_pattern("^a", "ba", 0);
	check_pattern("[0-9]{2}", "x12y", 1);
	/* \d is ASCII, as in JavaScript: not ARABIC-INDIC DIGIT ONE. */
	check_pattern("^\\d+$", "0123456789", 1);
	check_pattern("^\\d+$", "12a", 0);
	check_pattern("^\\d$", "\xd9\xa1", 0);
	check_pattern("^\\w+$", "abc_1", 1);
	/* JavaScript's escapes, not PCRE2's \U and \x{...}. */
	check_pattern("^\\u0041$", "A", 1);
	check_pattern("^\\u00e9$", "\xc3\xa9", 1);
	check_pattern("^\\u{1F600}$", "\xf0\x9f\x98\x80", 1);
	check_pattern("^\\x41$", "A", 1);
	check_pattern("^\\U$", "U", 1);
	/* $ is the very end, never before a final newline. */
	check_pattern("^abc$", "abc", 1);
	check_pattern("^abc$", "abc\n", 0);
	/* A character is a code point. */
	check_pattern("^.$", "\xc3\xa9", 1);
	check_pattern("^.$", "\xf0\x9f\x98\x80", 1);
	check_pattern("^..$", "\xc3\xa9", 0);
	check_pattern("^\\p{L}+$", "h\xc3\xa9llo", 1);
	check_pattern("^[^]$", "\n", 1);
	check_pattern("^.$", "\n", 0);
	/* An unset group's backreference matches the empty string. */
	check_pattern("^(a)?\\1b$", "b", 1);
	/* Only strings are checked. */
	check("{\"pattern\":\"^a$\"}", "5", 1);
	check("{\"pattern\":\"^a$\"}", "[\"b\"]", 1);
	check("{\"anyOf\":[{\"pattern\":\"^a\"},{\"pattern\":\"^b\"}]}",
	    "\"bc\"", 1);
	check("{\"not\":{\"pattern\":\"^a\"}}", "\"ab\"", 0);
	/* A long value is cut in the message; control characters escaped. */
	check_msg("{\"pattern\":\"^y\"}",
	    "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
	    "arguments: \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"... "
	    "does not match pattern \"^y\"");
	s = comp("{\"pattern\":\"^y\"}", 0);
	is_int(val_str(s, "a\0b\n", 4), -1, "a NUL and a newline: invalid");
	is_str(err, "arguments: \"a\\u0000b\\u000a\" does not match pattern "
	    "\"^y\"", "with both escaped in the message");
	mcp__schema_free(s);
	/* Together with the length keywords. */
	check("{\"minLength\":2,\"pattern\":\"^a\"}", "\"ab\"", 1);
	check_msg("{\"minLength\":3,\"pattern\":\"^a\"}", "\"ab\"",
	    "arguments: must be at least 3 characters long");
}

/* A catastrophic pattern fails fast, as invalid, wherever it is. */
static void
t_pattern_cost(void)
{
	const char	*schemas[] = {
		"{\"pattern\":\"^(a+)+$\"}",
		"{\"pattern\":\"(a|aa)+$\"}",
		"{\"not\":{\"pattern\":\"^(a+)+$\"}}",
		"{\"anyOf\":[{\"pattern\":\"^(a+)+$\"},{\"type\":\"string\"}]}",
	};
	struct mcp__schema	*s;
	json_t			*obj;
	char			*v;
	double			 t0, dt;
	size_t			 i, n = 30000;
	int			 r;

	v = malloc(n + 2);
	if (v == NULL)
		return;
	memset(v, 'a', n);
	v[n] = '!';
	v[n + 1] = '\0';
	for (i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
		s = comp(schemas[i], 0);
		if (!ok(s != NULL, "compile %s", schemas[i])) {
			diag("  %s", err);
			continue;
		}
		t0 = now();
		r = val_str(s, v, n + 1);
		dt = now() - t0;
		is_int(r, -1, "30000 a and ! against %s: invalid", schemas[i]);
		if (!ok(strstr(err, "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "\"... is too costly to match against pattern \"") != NULL,
		    "and too costly to match"))
			diag("  got \"%s\"", err);
		if (!ok(dt < 2.0 || slow_run(), "in %.3f s", dt))
			diag("  took %.3f s", dt);
		mcp__schema_free(s);
	}
	/* A property name, too. */
	s = comp("{\"patternProperties\":{\"^(a+)+$\":{}}}", 0);
	obj = json_object();
	json_object_set_new(obj, v, json_true());
	is_int(mcp__schema_validate(s, obj, "arguments", err, sizeof(err)), -1,
	    "a costly property name is invalid");
	ok(strncmp(err, "arguments: property name \"aaaa", 30) == 0 &&
	    strstr(err, "is too costly to match") != NULL, "%s", err);
	json_decref(obj);
	mcp__schema_free(s);
	/* Long values are fine when the pattern is: anchored or not. */
	for (i = 0; i < n; i++)
		v[i] = "ab"[i % 2];
	v[n] = '\0';
	s = comp("{\"pattern\":\"^[ab]*$\"}", 0);
	is_int(val_str(s, v, n), 0, "^[ab]*$ on 30000 characters");
	mcp__schema_free(s);
	s = comp("{\"pattern\":\"^(a|b)*$\"}", 0);
	is_int(val_str(s, v, n), 0, "^(a|b)*$ on 30000 characters");
	mcp__schema_free(s);
	s = comp("{\"pattern\":\"(ab)+$\"}", 0);
	is_int(val_str(s, v, 2000), 0, "(ab)+$ on 2000 characters");
	mcp__schema_free(s);
	v[n - 2] = 'b';
	v[n - 1] = 'c';
	s = comp("{\"pattern\":\"bc\"}", 0);
	is_int(val_str(s, v, n), 0, "a search finds bc at the end");
	mcp__schema_free(s);
	free(v);
}

static void
t_pattern_props(void)
{
	const char	*o = "{\"type\":\"object\",\"properties\":{\"id\":"
	    "{\"type\":\"integer\"}},\"patternProperties\":{\"^x-\":"
	    "{\"type\":\"string\"},\"n$\":{\"type\":\"integer\"}},"
	    "\"additionalProperties\":false}";
	const char	*both = "{\"properties\":{\"xa\":{\"type\":"
	    "\"string\"}},"
	    "\"patternProperties\":{\"^x\":{\"maxLength\":1}}}";
	const char	*addl = "{\"patternProperties\":{\"^s_\":{\"type\":"
	    "\"string\"}},\"additionalProperties\":{\"type\":\"integer\"}}";

	check(o, "{}", 1);
	check(o, "{\"id\":1,\"x-a\":\"s\",\"count_n\":3}", 1);
	check_msg(o, "{\"x-a\":1}",
	    "arguments[\"x-a\"]: expected string, got integer");
	check_msg(o, "{\"count_n\":\"3\"}",
	    "arguments.count_n: expected integer, got string");
	check_msg(o, "{\"id\":1,\"other\":1}",
	    "arguments: unexpected property \"other\"");
	check_msg(o, "{\"id\":\"1\"}",
	    "arguments.id: expected integer, got string");
	/* Every matching pattern applies. */
	check(o, "{\"x-n\":\"s\"}", 0);
	check(o, "{\"x-n\":5}", 0);
	/* properties and patternProperties both apply to a name. */
	check(both, "{\"xa\":\"s\"}", 1);
	check_msg(both, "{\"xa\":\"long\"}",
	    "arguments.xa: must be at most 1 character long");
	check_msg(both, "{\"xb\":\"long\"}",
	    "arguments.xb: must be at most 1 character long");
	/* additionalProperties: only names no pattern matched. */
	check(addl, "{\"s_a\":\"x\",\"b\":2}", 1);
	check_msg(addl, "{\"s_a\":\"x\",\"b\":\"x\"}",
	    "arguments.b: expected integer, got string");
	check_msg(addl, "{\"s_a\":2}",
	    "arguments.s_a: expected string, got integer");
	check("{\"patternProperties\":{\"^\\u00e9.$\":{\"type\":\"integer\"}},"
	    "\"additionalProperties\":false}", "{\"\\u00e9\\u00e8\":1}", 1);
	check("{\"patternProperties\":{\"^\\u00e9.$\":{\"type\":\"integer\"}},"
	    "\"additionalProperties\":false}", "{\"\\u00e9\\u00e8x\":1}", 0);
	/* Non-objects pass. */
	check(o, "\"x\"", 0);
	check("{\"patternProperties\":{\"^x\":false}}", "[1]", 1);
	check_msg("{\"patternProperties\":{\"^x\":false}}", "{\"xy\":1}",
	    "arguments.xy: no value is allowed here");
}

static void
t_formats(void)
{
	const char	*fp = "{\"format\":\"date\",\"pattern\":\"^2024\"}";
	size_t		 i;
	char		 buf[300];
	static const struct {
		const char	*fmt;
		const char	*value;
		int		 valid;
	} cases[] = {
		{ "date-time", "2024-02-29T12:00:00Z", 1 },
		{ "date-time", "1998-12-31T23:59:60Z", 1 },
		{ "date-time", "1998-12-31T15:59:60.123-08:00", 1 },
		{ "date-time", "2025-01-01t00:00:00.5+05:30", 1 },
		{ "date-time", "1963-06-19T08:30:06.283185z", 1 },
		{ "date-time", "2023-02-29T00:00:00Z", 0 },
		{ "date-time", "2024-01-01T00:00:00", 0 },
		{ "date-time", "2024-01-01 00:00:00Z", 0 },
		{ "date-time", "2024-01-01T24:00:00Z", 0 },
		{ "date-time", "2024-01-01T00:00:00+24:00", 0 },
		{ "date-time", "2024-13-01T00:00:00Z", 0 },
		{ "date-time", "1998-12-31T22:59:60Z", 0 },
		{ "date-time", "2024-01-01T00:00:00.Z", 0 },
		{ "date-time", "2024-01-01T00:00:00ZZ", 0 },
		{ "date-time", "2024-01-01", 0 },
		{ "date", "2024-02-29", 1 },
		{ "date", "2000-02-29", 1 },
		{ "date", "2023-12-31", 1 },
		{ "date", "0000-01-01", 1 },
		{ "date", "2023-02-29", 0 },
		{ "date", "1900-02-29", 0 },
		{ "date", "2023-04-31", 0 },
		{ "date", "2023-00-10", 0 },
		{ "date", "2023-01-00", 0 },
		{ "date", "2023-1-01", 0 },
		{ "date", "20230101", 0 },
		{ "date", "2023-01-01x", 0 },
		{ "date", "2023-01-01T00:00:00Z", 0 },
		{ "date", "\xd9\xa2" "023-01-01", 0 },
		{ "time", "23:59:60Z", 1 },
		{ "time", "15:59:60-08:00", 1 },
		{ "time", "01:29:60+01:30", 1 },
		{ "time", "08:30:06.283185+01:00", 1 },
		{ "time", "00:00:00z", 1 },
		{ "time", "23:59:60+01:00", 0 },
		{ "time", "23:58:60Z", 0 },
		{ "time", "08:30:06", 0 },
		{ "time", "8:30:06Z", 0 },
		{ "time", "08:60:00Z", 0 },
		{ "time", "08:30:61Z", 0 },
		{ "time", "08:30:06+01:60", 0 },
		{ "time", "08:30:06+0100", 0 },
		{ "email", "joe@example.com", 1 },
		{ "email", "a.b+c-d_e@sub.example.org", 1 },
		{ "email", "!#$%&'*+-/=?^_`{|}~@example.com", 1 },
		{ "email", "\"john doe\"@example.com", 1 },
		{ "email", "\"a@b\"@example.com", 1 },
		{ "email", "\"a\\\"b\"@example.com", 1 },
		{ "email", "user@[127.0.0.1]", 1 },
		{ "email", "user@[IPv6:2001:db8::1]", 1 },
		{ "email", "x@localhost", 1 },
		{ "email", "joe.example.com", 0 },
		{ "email", "a@b@example.com", 0 },
		{ "email", "@example.com", 0 },
		{ "email", ".a@example.com", 0 },
		{ "email", "a..b@example.com", 0 },
		{ "email", "a.@example.com", 0 },
		{ "email", "a@", 0 },
		{ "email", "a@-example.com", 0 },
		{ "email", "a b@example.com", 0 },
		{ "email", "a@exa_mple.com", 0 },
		{ "email", "\"\"@example.com", 0 },
		{ "email", "\"abc@example.com", 0 },
		{ "email", "user@[256.0.0.1]", 0 },
		{ "email", "user@[IPv6:1::2::3]", 0 },
		{ "email", "j\xc3\xb6@example.com", 0 },
		{ "hostname", "example.com", 1 },
		{ "hostname", "a-b.c1", 1 },
		{ "hostname", "localhost", 1 },
		{ "hostname", "xn--bcher-kva.example", 1 },
		{ "hostname", "1.2.3.4", 1 },
		{ "hostname", "-a.com", 0 },
		{ "hostname", "a-.com", 0 },
		{ "hostname", "a..b", 0 },
		{ "hostname", "", 0 },
		{ "hostname", ".", 0 },
		{ "hostname", "example.com.", 0 },
		{ "hostname", "a_b.com", 0 },
		{ "hostname", "b\xc3\xbc" "cher.example", 0 },
		{ "ipv4", "0.0.0.0", 1 },
		{ "ipv4", "255.255.255.255", 1 },
		{ "ipv4", "192.168.1.10", 1 },
		{ "ipv4", "256.1.1.1", 0 },
		{ "ipv4", "01.1.1.1", 0 },
		{ "ipv4", "1.2.3.00", 0 },
		{ "ipv4", "1.2.3", 0 },
		{ "ipv4", "1.2.3.4.5", 0 },
		{ "ipv4", "1.2.3.a", 0 },
		{ "ipv4", "1..2.3", 0 },
		{ "ipv4", " 1.2.3.4", 0 },
		{ "ipv4", "1.2.3.4\n", 0 },
		{ "ipv4", "1.2.3.1000", 0 },
		{ "ipv4", "0x7f.0.0.1", 0 },
		{ "ipv6", "::", 1 },
		{ "ipv6", "::1", 1 },
		{ "ipv6", "1::", 1 },
		{ "ipv6", "2001:db8::7", 1 },
		{ "ipv6", "::ffff:1.2.3.4", 1 },
		{ "ipv6", "1:2:3:4:5:6:7:8", 1 },
		{ "ipv6", "1:2:3:4:5:6:1.2.3.4", 1 },
		{ "ipv6", "1::2:3:4:5:6:7", 1 },
		{ "ipv6", "FE80::abcd:EF01", 1 },
		{ "ipv6", "1::2::3", 0 },
		{ "ipv6", "1:2:3:4:5:6:7:8:9", 0 },
		{ "ipv6", "1:2:3:4:5:6:7", 0 },
		{ "ipv6", "1::2:3:4:5:6:7:8", 0 },
		{ "ipv6", "12345::", 0 },
		{ "ipv6", ":1:2:3:4:5:6:7", 0 },
		{ "ipv6", "1:2:3:4:5:6:7:", 0 },
		{ "ipv6", "1:::2", 0 },
		{ "ipv6", "fe80::1%eth0", 0 },
		{ "ipv6", "::ffff:256.1.1.1", 0 },
		{ "ipv6", "::1.2.3.4:5", 0 },
		{ "ipv6", "1:2:3:4:5:6:7:1.2.3.4", 0 },
		{ "ipv6", "g::1", 0 },
		{ "ipv6", "", 0 },
		{ "ipv6", "1.2.3.4", 0 },
		{ "uri", "http://example.com/path?q=1#frag", 1 },
		{ "uri", "mailto:John.Doe@example.com", 1 },
		{ "uri", "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
		    1 },
		{ "uri", "ldap://[2001:db8::7]/c=GB?objectClass?one", 1 },
		{ "uri", "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
		    1 },
		{ "uri", "http://www.example.com/%E2%82%AC", 1 },
		{ "uri", "http://[v1.fe]:8080/", 1 },
		{ "uri", "tel:+1-816-555-1212", 1 },
		{ "uri", "foo+bar.baz-1:x", 1 },
		{ "uri", "file:///etc/hosts", 1 },
		{ "uri", "//example.com/path", 0 },
		{ "uri", "example.com", 0 },
		{ "uri", "/abs/path", 0 },
		{ "uri", "http://exa mple.com", 0 },
		{ "uri", "http://example.com/%G1", 0 },
		{ "uri", "http://example.com/%4", 0 },
		{ "uri", "1http://x", 0 },
		{ "uri", "http://[::1/", 0 },
		{ "uri", "http://[::g]/", 0 },
		{ "uri", "https://[@example.org/test.txt", 0 },
		{ "uri", "https://example.org/foobar\\.txt", 0 },
		{ "uri", "http://example.com/a#b#c", 0 },
		{ "uri", "http://example.com:80a/", 0 },
		{ "uri", "http://\xc3\xa9.com/", 0 },
		{ "uri", "bar,baz:foo", 0 },
		{ "uri", "", 0 },
		{ "uri-reference", "//example.com/path", 1 },
		{ "uri-reference", "/abs", 1 },
		{ "uri-reference", "rel/path?x=1", 1 },
		{ "uri-reference", "#frag", 1 },
		{ "uri-reference", "", 1 },
		{ "uri-reference", "http://x/y", 1 },
		{ "uri-reference", "./a:b", 1 },
		{ "uri-reference", "1a:b", 0 },
		{ "uri-reference", "\\\\WINDOWS\\fileshare", 0 },
		{ "uri-reference", "a b", 0 },
		{ "uri-reference", "%zz", 0 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d16380", 1 },
		{ "uuid", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", 1 },
		{ "uuid", "00000000-0000-0000-0000-000000000000", 1 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1638", 0 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d163800", 0 },
		{ "uuid", "2eb8aa0-8aa98-11ea-b4aa-73b441d16380", 0 },
		{ "uuid", "2eb8aa08aa9811eab4aa73b441d16380", 0 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa-73b441d1638g", 0 },
		{ "uuid", "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}", 0 },
		{ "uuid", "2eb8aa08-aa98-11ea-b4aa", 0 },
		/* Unknown formats are annotations. */
		{ "color", "zzz", 1 },
		{ "regex", "(", 1 },
	};

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_format(cases[i].fmt, cases[i].value, cases[i].valid);
	/* 64 bytes of local part are allowed, 65 are not. */
	memset(buf, 'a', 65);
	memcpy(buf + 65, "@example.com", 13);
	check_format("email", buf + 1, 1);
	check_format("email", buf, 0);
	/* A label of 63 bytes, not 64; a name of 253 bytes, not 254. */
	memset(buf, 'a', 64);
	buf[64] = '\0';
	check_format("hostname", buf + 1, 1);
	check_format("hostname", buf, 0);
	for (i = 0; i < 254; i++)
		buf[i] = i % 2 ? '.' : 'a';
	buf[253] = '\0';
	check_format("hostname", buf, 1);
	buf[253] = 'a';
	buf[254] = '\0';
	check_format("hostname", buf, 0);
	/* Only strings are checked; messages name the format. */
	check("{\"format\":\"date\"}", "5", 1);
	check("{\"format\":\"email\",\"type\":[\"string\",\"integer\"]}", "12",
	    1);
	check_msg("{\"type\":\"object\",\"properties\":{\"when\":{\"type\":"
	    "\"string\",\"format\":\"date\"}}}", "{\"when\":\"2023-02-29\"}",
	    "arguments.when: \"2023-02-29\" does not match format \"date\"");
	check_msg("{\"format\":\"ipv4\"}", "\"256.1.1.1\"",
	    "arguments: \"256.1.1.1\" does not match format \"ipv4\"");
	check(fp, "\"2024-02-29\"", 1);
	check(fp, "\"2025-02-28\"", 0);
	check(fp, "\"2024-02-30\"", 0);
}

static void
t_pattern_errors(void)
{
	check_bad("{\"pattern\":\"a(\"}", 0, "#/pattern: invalid regular "
	    "expression at offset 2: missing closing parenthesis");
	check_bad("{\"pattern\":\"[z-a]\"}", 0, "#/pattern: invalid regular "
	    "expression at offset 3: range out of order in character class");
	check_bad("{\"pattern\":\"\\\\C\"}", 0, "#/pattern: invalid regular "
	    "expression at offset 2");
	check_bad("{\"pattern\":5}", 0, "#/pattern: must be a string");
	check_bad("{\"properties\":{\"a\":{\"pattern\":\"(?<n\"}}}", 0,
	    "#/properties/a/pattern: invalid regular expression at offset");
	check_bad("{\"patternProperties\":{\"a[\":{}}}", 0,
	    "#/patternProperties/a[: invalid regular expression at offset 2: "
	    "missing terminating ] for character class");
	check_bad("{\"patternProperties\":{\"^a/(\":{}}}", 0,
	    "#/patternProperties/^a~1(: invalid regular expression");
	check_bad("{\"patternProperties\":{\"^x\":{\"type\":1}}}", 0,
	    "#/patternProperties/^x/type: must be a string");
	check_bad("{\"patternProperties\":[]}", 0,
	    "#/patternProperties: must be an object");
	check_bad("{\"format\":1}", 0, "#/format: must be a string");
	check_bad("{\"$defs\":{\"d\":{\"pattern\":\"+\"}}}", 0,
	    "#/$defs/d/pattern: invalid regular expression at offset 0: "
	    "quantifier does not follow a repeatable item");
}

/* Threads sharing one compiled schema, each with its own match state. */
#define NTHREADS	4
#define NROUNDS		500

static struct mcp__schema	*shared;

static void *
worker(void *arg)
{
	static const char	*vals[] = { "AB-12", "ab-12", "XY-99", "XY-9" };
	json_t			*inst;
	char			 e[256];
	long			 bad = 0;
	int			 i;
	int			 want;
	int			 r;

	(void)arg;
	for (i = 0; i < NROUNDS; i++) {
		inst = json_pack("{s:s,s:s,s:s}", "code", vals[i % 4], "x-n",
		    "s", "when", i % 3 ? "2024-02-29" : "2023-02-29");
		want = (i % 4 == 0 || i % 4 == 2) && i % 3 != 0 ? 0 : -1;
		r = mcp__schema_validate(shared, inst, "arguments", e,
		    sizeof(e));
		if (r != want)
			bad++;
		json_decref(inst);
	}
	return (void *)bad;
}

static void
t_threads(void)
{
	pthread_t	 th[NTHREADS];
	void		*res;
	long		 bad = 0;
	int		 i;
	int		 started = 0;

	shared = comp("{\"type\":\"object\",\"properties\":{\"code\":"
	    "{\"pattern\":\"^[A-Z]{2}-\\\\d{2}$\"},\"when\":"
	    "{\"format\":\"date\"}},"
	    "\"patternProperties\":{\"^x-\":{\"type\":\"string\"}},"
	    "\"additionalProperties\":false}", 1);
	if (!ok(shared != NULL, "shared schema compiles")) {
		diag("  %s", err);
		return;
	}
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&th[i], NULL, worker, NULL) == 0)
			started++;
		else
			break;
	for (i = 0; i < started; i++) {
		pthread_join(th[i], &res);
		bad += (long)res;
	}
	is_int(started, NTHREADS, "%d threads started", NTHREADS);
	is_int(bad, 0, "%d threads x %d validations, all as expected",
	    NTHREADS, NROUNDS);
	mcp__schema_free(shared);
}

/*
 * Arguments read in place (mcp__json_flat, mcp__schema_flat_ok) against
 * the general path (mcp__json_parse, mcp__schema_validate), for many
 * generated argument texts: what the fast path accepts must be valid, with
 * the same members in the same order and the same values; and for the
 * plain valid cases it must accept, or it is never taken.
 */
static const char *const flat_schemas[] = {
	"{\"type\":\"object\",\"required\":[\"text\"],\"properties\":"
	"{\"text\":{\"type\":\"string\"}},\"additionalProperties\":false}",
	"{\"type\":\"object\",\"required\":[\"a\"],\"properties\":{"
	"\"a\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10},"
	"\"b\":{\"type\":\"number\",\"exclusiveMaximum\":1.5,"
	"\"multipleOf\":0.5},"
	"\"s\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":4,"
	"\"pattern\":\"^[a-z\\u00e9]+$\"},"
	"\"d\":{\"type\":\"string\",\"format\":\"date\"},"
	"\"f\":{\"type\":\"boolean\"},\"any\":{\"description\":\"x\"},"
	"\"u\":{\"type\":[\"string\",\"integer\"]}}}",
};

/* Not flat: the general path only. */
static const char *const unflat_schemas[] = {
	"{\"type\":\"object\",\"properties\":{\"a\":{\"enum\":[1,2]}}}",
	"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\"}}}",
	"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":"
	"[\"string\",\"null\"]}}}",
	"{\"type\":\"object\",\"properties\":{\"a\":{\"anyOf\":"
	"[{\"type\":\"string\"}]}}}",
	"{\"type\":\"object\",\"minProperties\":1,\"properties\":"
	"{\"a\":{\"type\":\"string\"}}}",
	"{\"type\":\"object\",\"required\":[\"zz\"],\"properties\":"
	"{\"a\":{\"type\":\"string\"}}}",
	"{\"type\":\"object\",\"patternProperties\":{\"^a\":{}},"
	"\"properties\":{\"a\":{\"type\":\"string\"}}}",
};

static const char *const flat_keys[] = { "a", "b", "s", "d", "f", "any",
    "u", "text", "zz", "\\u0061", "te\\u0078t" };
static const char *const flat_values[] = { "\"h\\u00e9\"", "\"ab\"",
    "\"abcde\"", "\"a\\u00e9\"", "\"x\\u0000\"", "\"2024-02-29\"",
    "\"2023-02-29\"", "0", "-1", "10", "11", "3.0", "0.5", "1.5", "1e2",
    "true", "false", "null", "[]", "{}", "12345678901234567890", "-0",
    "\"\\ud83d\\ude00ok\"", "\"hello\"", "1.0e-1", "\"\"", "\"abc\"" };

static unsigned long	 flat_rng = 12345;

static unsigned
flat_rand(unsigned n)
{
	flat_rng = flat_rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((flat_rng >> 33) % n);
}

/* Checks TEXT both ways against S; returns 1 if the fast path took it. */
static int
flat_case(const struct mcp__schema *s, const char *text, size_t len,
    int *bad)
{
	const char	*why;
	int		 fast;

	if ((why = flat_differs(s, text, len, &fast)) != NULL) {
		diag("%s: %.*s", why, (int)len, text);
		(*bad)++;
	}
	return fast;
}

/*
 * Property names whose JSON is not their own bytes (a backslash, a
 * quote, a control byte, "\\u0041" spelt out): a raw key of the same
 * bytes names something else, and the fast path must not take it for
 * them (found by review: {"a\b":"v"} filled the property a\b).
 */
static void
t_flat_odd_names(int *bad)
{
	static const char *const args[] = {
		"{\"a\\b\":\"v\"}",		/* a, backspace: unknown */
		"{\"a\\\\b\":\"v\"}",		/* a\b: the property */
		"{\"q\\\"\":\"v\"}",		/* q": the property */
		"{\"\\u0041\":\"v\"}",		/* A: unknown */
		"{\"\\\\u0041\":\"v\"}",		/* \u0041: the property */
		"{\"t\\tb\":\"v\"}",		/* t, tab, b: the property */
	};
	struct mcp__schema	*o;
	const struct mcp__flat	*f;
	size_t			 i;
	int			 before = *bad;

	o = comp("{\"type\":\"object\",\"additionalProperties\":false,"
	    "\"properties\":{\"a\\\\b\":{\"type\":\"string\"},"
	    "\"q\\\"\":{\"type\":\"string\"},"
	    "\"\\\\u0041\":{\"type\":\"string\"},"
	    "\"t\\tb\":{\"type\":\"string\"}}}", 1);
	f = o != NULL ? mcp__schema_flat(o) : NULL;
	if (!ok(f != NULL && f->n == 4, "odd names: flat"))
		return;
	for (i = 0; i < 4; i++)
		ok(!f->plain[i], "odd name %zu is not taken in place", i);
	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++)
		flat_case(o, args[i], strlen(args[i]), bad);
	is_int(*bad - before, 0, "odd names: the fast path agrees");
	ok(!flat_case(o, args[0], strlen(args[0]), bad),
	    "{\"a\\b\":...} is not the property a\\b");
	mcp__schema_free(o);
}

static void
t_flat(void)
{
	static const struct { const char *args; int schema; } plain[] = {
		{ "{\"text\":\"hello\"}", 0 },
		{ " { \"text\" : \"h\\u00e9llo\\n\" } ", 0 },
		{ "{\"a\":3}", 1 },
		{ "{\"a\":0,\"b\":1,\"s\":\"h\\u00e9\",\"d\":\"2024-02-29\","
		  "\"f\":false,\"any\":-2.5,\"u\":7}", 1 },
		{ "{\"u\":\"x\",\"a\":10,\"b\":-1e3}", 1 },
	};
	struct mcp__schema	*s[2], *u;
	const struct mcp__flat	*f[2];
	char			 text[512], *t;
	size_t			 i, len, cut;
	unsigned		 m, nm;
	int			 bad = 0, took = 0, total = 0, r;

	for (i = 0; i < 2; i++) {
		s[i] = comp(flat_schemas[i], 1);
		f[i] = s[i] != NULL ? mcp__schema_flat(s[i]) : NULL;
		ok(f[i] != NULL, "flat schema %zu is flat", i);
		if (f[i] == NULL)
			return;
	}
	is_int((int)f[1]->n, 7, "its seven properties");
	for (i = 0; i < sizeof(unflat_schemas) / sizeof(unflat_schemas[0]);
	    i++) {
		u = comp(unflat_schemas[i], 1);
		ok(u != NULL && mcp__schema_flat(u) == NULL,
		    "not flat: %s", unflat_schemas[i]);
		mcp__schema_free(u);
	}
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		ok(flat_case(s[plain[i].schema], plain[i].args,
		    strlen(plain[i].args), &bad),
		    "read in place: %s", plain[i].args);
	/* An empty object, or none: valid when nothing is required. */
	ok(!flat_case(s[0], "{}", 2, &bad), "{} lacks text");
	t_flat_odd_names(&bad);
	for (i = 0; i < 40000; i++) {
		r = (int)(i & 1);
		t = text;
		*t++ = '{';
		nm = flat_rand(4);
		/* Mostly with what is required, so that some are valid. */
		if (flat_rand(4) != 0) {
			t += snprintf(t, (size_t)(text + sizeof(text) - t),
			    "\"%s\":%s", r ? "a" : "text", r ? "3" : "\"hi\"");
			if (nm == 0)
				nm = 1;
		}
		for (m = t > text + 1; m < nm; m++) {
			t += snprintf(t, (size_t)(text + sizeof(text) - t),
			    "%s\"%s\":%s", m ? "," : "",
			    flat_keys[flat_rand(sizeof(flat_keys) /
			    sizeof(flat_keys[0]))],
			    flat_values[flat_rand(sizeof(flat_values) /
			    sizeof(flat_values[0]))]);
		}
		*t++ = '}';
		len = (size_t)(t - text);
		/* Some cut short, or with a byte changed. */
		if (flat_rand(8) == 0)
			len = flat_rand((unsigned)len);
		else if (flat_rand(8) == 0) {
			cut = flat_rand((unsigned)len);
			text[cut] = "\",:{}[]\\ 0a\x01\xc3"[flat_rand(14)];
		}
		took += flat_case(s[r], text, len, &bad);
		total++;
	}
	is_int(bad, 0, "%d generated arguments: the fast path agrees with "
	    "the general one", total);
	ok(took > total / 20, "and it took %d of them", took);
	mcp__schema_free(s[0]);
	mcp__schema_free(s[1]);
}

int
main(void)
{
	t_type();
	t_numbers();
	t_strings();
	t_enum_const();
	t_arrays();
	t_objects();
	t_combinators();
	t_boolean();
	t_ref();
	t_compile_errors();
	t_conformance();
	t_lifetime();
	t_pattern();
	t_pattern_cost();
	t_pattern_props();
	t_pattern_errors();
	t_formats();
	t_threads();
	t_flat();
	return tap_done();
}
