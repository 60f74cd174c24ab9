/*
 * t_schema.c: unit tests for the JSON Schema validator in src/schema.c:
 * every supported keyword with valid and invalid instances, the exact
 * wording of error messages, compile failures, recursive $ref, boolean
 * schemas, Unicode lengths and integer-versus-real. Single-threaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/schema.h"
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
	/* pattern and format are ignored on purpose. */
	check("{\"pattern\":\"^a+$\",\"format\":\"email\"}", "\"zzz\"", 1);
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
	/* Ignored patternProperties must not turn into rejections. */
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
	return tap_done();
}
