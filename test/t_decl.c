/*
 * t_decl.c: argument declarations (src/core/decl.c, mcp_args(7)). Each
 * declaration must give exactly the schema written beside it in JSON;
 * each mistake must be refused with its line, column and reason; and
 * the defaults must be filled in where members are missing, at depth,
 * without touching what the client sent.
 */
#include <stdlib.h>
#include <string.h>

#include "core/schema.h"
#include "tap.h"

/* DECL on one line, for a test's name. */
static const char *
oneline(const char *decl)
{
	static char	 b[160];
	size_t		 i;

	for (i = 0; decl[i] != '\0' && i < sizeof(b) - 1; i++)
		b[i] = decl[i] == '\n' ? '/' : decl[i];
	b[i] = '\0';
	return b;
}

/* DECL must stand for the schema JSON. */
static void
gives(const char *decl, const char *json)
{
	json_t		*got, *want;
	json_error_t	 e;
	char		 err[200], *g;
	int		 dflt;

	want = json_loads(json, 0, &e);
	if (want == NULL) {
		ok(0, "test bug: %s: %s", json, e.text);
		return;
	}
	got = mcp__decl_parse(decl, &dflt, err, sizeof(err));
	if (!ok(got != NULL && json_equal(got, want), "%s", oneline(decl))) {
		g = got ? json_dumps(got, JSON_COMPACT) : NULL;
		diag("  got  %s", g ? g : err);
		diag("  want %s", json);
		free(g);
	}
	json_decref(got);
	json_decref(want);
}

/* DECL must be refused with a message containing WHY. */
static void
refuses(const char *decl, const char *why)
{
	json_t	*got;
	char	 err[200];

	got = mcp__decl_parse(decl, NULL, err, sizeof(err));
	if (!ok(got == NULL && strstr(err, why) != NULL, "refused: %s",
	    oneline(decl)))
		diag("  got \"%s\", want it to say \"%s\"",
		    got ? "accepted" : err, why);
	json_decref(got);
}

/* DECL's defaults fill ARGS into WANT. */
static void
fills(const char *decl, const char *args, const char *want)
{
	json_t	*s, *a, *w;
	int	 dflt = 0;

	s = mcp__decl_parse(decl, &dflt, NULL, 0);
	a = json_loads(args, 0, NULL);
	w = json_loads(want, 0, NULL);
	ok(s != NULL && a != NULL && w != NULL && dflt &&
	    mcp__decl_defaults(s, a) == 0 && json_equal(a, w),
	    "defaults of %s into %s", decl, args);
	json_decref(s);
	json_decref(a);
	json_decref(w);
}

#define OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props "}" \
	req ",\"additionalProperties\":false}"

int
main(void)
{
	json_t	*s;
	int	 dflt = 1;

	/* Types and their words. */
	gives("", OBJ("", ""));
	gives("a string", OBJ("\"a\":{\"type\":\"string\"}",
	    ",\"required\":[\"a\"]"));
	gives("a: integer, b: int; c number\nd boolean, e bool",
	    OBJ("\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"},"
	    "\"c\":{\"type\":\"number\"},\"d\":{\"type\":\"boolean\"},"
	    "\"e\":{\"type\":\"boolean\"}",
	    ",\"required\":[\"a\",\"b\",\"c\",\"d\",\"e\"]"));
	gives("x? any, o? object", OBJ("\"x\":{},\"o\":{\"type\":\"object\"}",
	    ""));
	gives("w? date-time, d? date, t? time, e? email, u? uri, i? uuid, "
	    "v4? ipv4, v6? ipv6, h? hostname",
	    OBJ("\"w\":{\"type\":\"string\",\"format\":\"date-time\"},"
	    "\"d\":{\"type\":\"string\",\"format\":\"date\"},"
	    "\"t\":{\"type\":\"string\",\"format\":\"time\"},"
	    "\"e\":{\"type\":\"string\",\"format\":\"email\"},"
	    "\"u\":{\"type\":\"string\",\"format\":\"uri\"},"
	    "\"i\":{\"type\":\"string\",\"format\":\"uuid\"},"
	    "\"v4\":{\"type\":\"string\",\"format\":\"ipv4\"},"
	    "\"v6\":{\"type\":\"string\",\"format\":\"ipv6\"},"
	    "\"h\":{\"type\":\"string\",\"format\":\"hostname\"}", ""));

	/* Descriptions: both quotes, doubled quotes, '#' to the line's end. */
	gives("title string 'The note''s title'",
	    OBJ("\"title\":{\"type\":\"string\","
	    "\"description\":\"The note's title\"}", ",\"required\":[\"title\"]"));
	gives("t string \"say \"\"hi\"\", it's\"",
	    OBJ("\"t\":{\"type\":\"string\",\"description\":"
	    "\"say \\\"hi\\\", it's\"}", ",\"required\":[\"t\"]"));
	gives("a string  # the first, with a comma\n b? integer # and: 2 \n",
	    OBJ("\"a\":{\"type\":\"string\",\"description\":"
	    "\"the first, with a comma\"},\"b\":{\"type\":\"integer\","
	    "\"description\":\"and: 2\"}", ",\"required\":[\"a\"]"));

	/* Ranges: lengths, counts, values, exclusive bounds, exact. */
	gives("s string(1..200), t? string(..5), u? string(3), "
	    "n? number(>0, <=1.5), i? integer(-3..), k? integer(<10)",
	    OBJ("\"s\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200},"
	    "\"t\":{\"type\":\"string\",\"maxLength\":5},"
	    "\"u\":{\"type\":\"string\",\"minLength\":3,\"maxLength\":3},"
	    "\"n\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"maximum\":1.5},"
	    "\"i\":{\"type\":\"integer\",\"minimum\":-3},"
	    "\"k\":{\"type\":\"integer\",\"exclusiveMaximum\":10}",
	    ",\"required\":[\"s\"]"));
	gives("code string(/^[A-Z]{3}\\/x$/, 3..3)",
	    OBJ("\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}\\\\/x$\","
	    "\"minLength\":3,\"maxLength\":3}", ",\"required\":[\"code\"]"));

	/* Enums, arrays, nested objects, open objects. */
	gives("color? enum(red, green, 'light blue') = red",
	    OBJ("\"color\":{\"enum\":[\"red\",\"green\",\"light blue\"],"
	    "\"type\":\"string\",\"default\":\"red\"}", ""));
	gives("n enum(1, 2, 3), m enum(1, 2.5), x enum(a, 1)",
	    OBJ("\"n\":{\"enum\":[1,2,3],\"type\":\"integer\"},"
	    "\"m\":{\"enum\":[1,2.5],\"type\":\"number\"},"
	    "\"x\":{\"enum\":[\"a\",1]}", ",\"required\":[\"n\",\"m\",\"x\"]"));
	gives("tags? [string(1..20)](..10, unique) 'Labels'",
	    OBJ("\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
	    "\"minLength\":1,\"maxLength\":20},\"maxItems\":10,"
	    "\"uniqueItems\":true,\"description\":\"Labels\"}", ""));
	gives("at { street string, zip? string(5) } 'Where'",
	    OBJ("\"at\":{\"type\":\"object\",\"properties\":{"
	    "\"street\":{\"type\":\"string\"},\"zip\":{\"type\":\"string\","
	    "\"minLength\":5,\"maxLength\":5}},\"required\":[\"street\"],"
	    "\"additionalProperties\":false,\"description\":\"Where\"}",
	    ",\"required\":[\"at\"]"));
	gives("rows [{ id integer, ... }]",
	    OBJ("\"rows\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	    "\"properties\":{\"id\":{\"type\":\"integer\"}},"
	    "\"required\":[\"id\"]}}", ",\"required\":[\"rows\"]"));
	gives("a string, ...", "{\"type\":\"object\",\"properties\":"
	    "{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"]}");
	gives("'odd name' string", OBJ("\"odd name\":{\"type\":\"string\"}",
	    ",\"required\":[\"odd name\"]"));

	/* Defaults make a field optional, and must fit it. */
	gives("n integer(1..5) = 3, b bool = false, s string = 'x y', "
	    "l [integer] = [1, 2]",
	    OBJ("\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":5,"
	    "\"default\":3},\"b\":{\"type\":\"boolean\",\"default\":false},"
	    "\"s\":{\"type\":\"string\",\"default\":\"x y\"},"
	    "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},"
	    "\"default\":[1,2]}", ""));
	s = mcp__decl_parse("a string", &dflt, NULL, 0);
	is_int(dflt, 0, "no default: *has_defaults is 0");
	json_decref(s);

	/* Mistakes, each with where and why. */
	refuses("title strng", "line 1, column 7: unknown type \"strng\"");
	refuses("a string,\n  b integer(5..1)", "line 2, column 12: the "
	    "range is empty");
	refuses("a string, a integer", "column 11: \"a\" declared twice");
	refuses("a integer = 'x'", "expected integer, got string");
	refuses("a integer(1..5) = 9", "default: must be <= 5");
	refuses("a string 'open", "unterminated '");
	refuses("a boolean(1..2)", "a range fits strings");
	refuses("a integer(/x/)", "a pattern fits strings only");
	refuses("a string(>1)", "'<' and '>' fit numbers only");
	refuses("a string(-1..)", "a whole number of at least 0");
	refuses("a [string(unique)]", "\"unique\" fits arrays only");
	refuses("a string(1..2", "expected ',' or ')'");
	refuses("a { b string", "expected '}'");
	refuses("a [string", "expected ']'");
	refuses("a string b", "expected ',' or a new line");
	refuses("a enum(x, x)", "a value listed twice");
	refuses("a enum x", "expected '(' after enum");
	refuses("a", "expected a type");
	refuses("1a string", "expected a name");
	refuses("a string(/x)", "unterminated /pattern/");
	refuses("a string(wide)", "unknown modifier");
	refuses("a [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[string]]]]]]]]]]]]]]]]]]]"
	    "]]]]]]]]]]]]]]]", "nested too deep");
	refuses("a number = 1e999", "bad number");
	refuses("a integer = 99999999999999999999", "bad number");
	refuses("a integer(99999999999999999999..)", "bad number");
	refuses("a number(>5, <3)", "the range is empty");
	refuses("a number(>=5, <5)", "the range is empty");
	refuses("a number(>5, <=5)", "the range is empty");
	refuses("a [string](3..1)", "the range is empty");
	refuses("a object(5..1)", "the range is empty");
	refuses("a string(1..5, 10..20)", "\"minLength\" given twice");
	refuses("a [string](unique, unique)", "\"uniqueItems\" given twice");
	refuses("a string(/x/, /y/)", "two patterns");
	gives("region string(header Region, 1..20), n? int(header Row-N), "
	    "f? bool(header X_1)",
	    OBJ("\"region\":{\"type\":\"string\",\"x-mcp-header\":"
	    "\"Region\",\"minLength\":1,\"maxLength\":20},\"n\":{\"type\":"
	    "\"integer\",\"x-mcp-header\":\"Row-N\"},\"f\":{\"type\":"
	    "\"boolean\",\"x-mcp-header\":\"X_1\"}",
	    ",\"required\":[\"region\"]"));
	refuses("a number(header A)", "\"header\" fits strings, integers "
	    "and booleans only");
	refuses("a [string](header A)", "\"header\" fits strings");
	refuses("a string(header)", "\"header\" needs a name");
	refuses("a string(header \"A\")", "\"header\" needs a name");
	refuses("a string(header A, header B)", "two headers");
	gives("n number(-1.5e2..2E+1), m? integer(-0..)",
	    OBJ("\"n\":{\"type\":\"number\",\"minimum\":-150.0,"
	    "\"maximum\":20.0},\"m\":{\"type\":\"integer\",\"minimum\":0}",
	    ",\"required\":[\"n\"]"));
	gives("n number(>=0, <1)", OBJ("\"n\":{\"type\":\"number\","
	    "\"minimum\":0,\"exclusiveMaximum\":1}", ",\"required\":[\"n\"]"));

	/* Defaults are filled at depth, and what was sent is left alone. */
	fills("n integer = 3, s? string", "{}", "{\"n\":3}");
	fills("n integer = 3", "{\"n\":7}", "{\"n\":7}");
	fills("o? { k bool = true, m? string }", "{\"o\":{}}",
	    "{\"o\":{\"k\":true}}");
	fills("o? { k bool = true }", "{}", "{}");
	fills("r [{ k integer = 1 }]", "{\"r\":[{}, {\"k\":2}]}",
	    "{\"r\":[{\"k\":1}, {\"k\":2}]}");
	fills("l [string] = [a, b]", "{}", "{\"l\":[\"a\",\"b\"]}");
	return tap_done();
}
