/*
 * t_template.c: unit tests for the RFC 6570 level-1 matcher of resource
 * templates (mcp__template_match, mcp__template_valid in
 * src/features.c), plus the feature tables through the public calls:
 * registration, lookup by URI, list pages and cursors, prompt argument
 * checks, and the user-data destructor. Single-threaded; never runs the
 * server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/server.h"
#include "tap.h"

static int	 nfreed;

static void
count_free(void *p)
{
	(void)p;
	nfreed++;
}

static void
nop(mcp_call *call)
{
	(void)call;
}

/* Matches URI against T; returns the variables as compact JSON text in
 * OUT, or "-" when it does not match. */
static const char *
match(const char *t, const char *uri, char *out, size_t len)
{
	json_t	*vars;
	char	*s;

	vars = json_object();
	if (!mcp__template_match(t, uri, vars)) {
		json_decref(vars);
		snprintf(out, len, "-");
		return out;
	}
	/* Without VARS, the answer must be the same. */
	if (!mcp__template_match(t, uri, NULL))
		snprintf(out, len, "match only with vars");
	else {
		s = json_dumps(vars, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(out, len, "%s", s != NULL ? s : "(oom)");
		free(s);
	}
	json_decref(vars);
	return out;
}

static void
test_match(void)
{
	char	 b[256];

	is_str(match("test://static", "test://static", b, sizeof(b)), "{}",
	    "literal template matches itself");
	is_str(match("test://static", "test://static2", b, sizeof(b)), "-",
	    "literal: longer URI does not match");
	is_str(match("test://static", "test://stati", b, sizeof(b)), "-",
	    "literal: shorter URI does not match");
	is_str(match("test://template/{id}/data", "test://template/123/data",
	    b, sizeof(b)), "{\"id\":\"123\"}", "one variable in the middle");
	is_str(match("test://template/{id}/data", "test://template//data",
	    b, sizeof(b)), "-", "an empty variable does not match");
	is_str(match("test://template/{id}/data", "test://template/1/2/data",
	    b, sizeof(b)), "-", "a variable does not span a slash");
	is_str(match("test://template/{id}/data", "test://template/123/dat",
	    b, sizeof(b)), "-", "a different literal tail does not match");
	is_str(match("db://{table}/{row}", "db://users/42", b, sizeof(b)),
	    "{\"row\":\"42\",\"table\":\"users\"}", "two variables, the "
	    "second at the end");
	is_str(match("x://{a}-{b}.{c}", "x://one-two.txt", b, sizeof(b)),
	    "{\"a\":\"one\",\"b\":\"two\",\"c\":\"txt\"}",
	    "three variables split by literals");
	is_str(match("file:///logs/{day}", "file:///logs/2026-11-30", b,
	    sizeof(b)), "{\"day\":\"2026-11-30\"}", "variable at the end");
	is_str(match("file:///logs/{day}", "file:///logs/a/b", b, sizeof(b)),
	    "-", "variable at the end: no slash");
	is_str(match("file:///logs/{day}", "file:///other/x", b, sizeof(b)),
	    "-", "a different prefix does not match");
	is_str(match("file:///{name}", "file:///a%20b%2Fc", b, sizeof(b)),
	    "{\"name\":\"a b/c\"}", "percent-encoded characters are decoded");
	is_str(match("file:///{name}", "file:///caf%C3%A9", b, sizeof(b)),
	    "{\"name\":\"caf\xc3\xa9\"}", "encoded UTF-8 is decoded");
	is_str(match("file:///{name}", "file:///a%2", b, sizeof(b)), "-",
	    "a truncated escape does not match");
	is_str(match("x://{a}/y", "x://v%2/y", b, sizeof(b)), "-",
	    "a truncated escape before a literal does not match");
	is_str(match("x://{a}/y", "x://v%41/y", b, sizeof(b)),
	    "{\"a\":\"vA\"}", "an escape before a literal is decoded");
	is_str(match("file:///{name}", "file:///a%zz", b, sizeof(b)), "-",
	    "a bad escape does not match");
	is_str(match("file:///{name}", "file:///a%00b", b, sizeof(b)), "-",
	    "an encoded NUL does not match");
	is_str(match("file:///{name}", "file:///a?x=1", b, sizeof(b)), "-",
	    "a query does not match a level-1 variable");
	is_str(match("q://{a}?x", "q://v?x", b, sizeof(b)), "{\"a\":\"v\"}",
	    "a literal question mark after a variable");
}

static void
test_valid(void)
{
	ok(mcp__template_valid("a://{x}/{y}"), "valid: two variables");
	ok(mcp__template_valid("a://static"), "valid: no variable");
	ok(!mcp__template_valid("a://{x}{y}"), "invalid: adjacent variables");
	ok(!mcp__template_valid("a://{+x}"), "invalid: level-2 operator");
	ok(!mcp__template_valid("a://{x"), "invalid: unclosed brace");
	ok(!mcp__template_valid("a://x}"), "invalid: stray close brace");
	ok(!mcp__template_valid("a://{}"), "invalid: empty name");
	ok(!mcp__template_valid(""), "invalid: empty");
}

static void
test_tables(void)
{
	mcp_server	*srv;
	struct feat	*f;
	json_t		*page, *args;
	const char	*cur;
	char		 miss[64];
	int		 bad, rc;

	srv = mcp_server_new("t", "1");
	rc = mcp_resource_register(srv, "test://a", "a", "A", "text/plain",
	    nop, &nfreed, count_free);
	is_int(rc, MCP_OK, "resource registered");
	rc = mcp_resource_register(srv, "test://a", "a2", NULL, NULL, nop,
	    &nfreed, count_free);
	is_int(rc, MCP_EEXIST, "same URI twice: EEXIST");
	is_int(nfreed, 1, "user data freed when registration fails");
	rc = mcp_resource_template_register(srv, "test://{x}{y}", "bad",
	    NULL, NULL, nop, &nfreed, count_free);
	is_int(rc, MCP_EINVAL, "a bad template: EINVAL");
	is_int(nfreed, 2, "and its user data freed");
	rc = mcp_resource_template_register(srv, "test://t/{id}", "t", NULL,
	    "application/json", nop, NULL, NULL);
	is_int(rc, MCP_OK, "template registered");
	rc = mcp_resource_register(srv, "test://b", "b", NULL, NULL, nop,
	    NULL, NULL);
	is_int(mcp_resource_set_size(srv, "test://b", 42), MCP_OK,
	    "size set");
	is_int(mcp_resource_set_title(srv, "test://nope", "x"), MCP_ENOENT,
	    "title of an unknown resource: ENOENT");

	f = mcp__feat_resolve(srv, "test://a");
	ok(f != NULL && f->kind == FEAT_RESOURCE, "static URI resolves");
	mcp__feat_unref(f);
	f = mcp__feat_resolve(srv, "test://t/9");
	ok(f != NULL && f->kind == FEAT_TEMPLATE, "templated URI resolves");
	mcp__feat_unref(f);
	ok(mcp__feat_resolve(srv, "test://zzz") == NULL,
	    "unknown URI does not resolve");

	page = mcp__feat_list(srv, FEAT_RESOURCE, NULL, 1, MCP_V_LATEST,
	    &bad);
	is_int(json_array_size(json_object_get(page, "resources")), 1,
	    "page of one resource");
	cur = json_string_value(json_object_get(page, "nextCursor"));
	ok(cur != NULL, "with a nextCursor");
	args = mcp__feat_list(srv, FEAT_RESOURCE, cur, 1, MCP_V_LATEST, &bad);
	is_str(json_string_value(json_object_get(json_array_get(
	    json_object_get(args, "resources"), 0), "uri")), "test://b",
	    "the cursor gives the next resource");
	is_int(json_integer_value(json_object_get(json_array_get(
	    json_object_get(args, "resources"), 0), "size")), 42,
	    "with its size");
	json_decref(args);
	json_decref(page);
	page = mcp__feat_list(srv, FEAT_RESOURCE, "zz", 1, MCP_V_LATEST,
	    &bad);
	ok(page == NULL && bad, "a bad cursor is refused");

	rc = mcp_prompt_register(srv, "p", "a prompt", nop, &nfreed,
	    count_free);
	is_int(rc, MCP_OK, "prompt registered");
	is_int(mcp_prompt_add_argument(srv, "p", "lang", "a language", 1),
	    MCP_OK, "required argument added");
	is_int(mcp_prompt_add_argument(srv, "p", "style", NULL, 0), MCP_OK,
	    "optional argument added");
	is_int(mcp_prompt_add_argument(srv, "p", "lang", NULL, 0), MCP_EEXIST,
	    "the same argument twice: EEXIST");
	mcp_prompt_set_title(srv, "p", "The P");
	page = mcp__feat_list(srv, FEAT_PROMPT, NULL, 0, MCP_V20250326,
	    &bad);
	ok(json_object_get(json_array_get(json_object_get(page, "prompts"),
	    0), "title") == NULL, "no title for 2025-03-26");
	json_decref(page);
	page = mcp__feat_list(srv, FEAT_PROMPT, NULL, 0, MCP_V20250618,
	    &bad);
	is_str(json_string_value(json_object_get(json_array_get(
	    json_object_get(page, "prompts"), 0), "title")), "The P",
	    "a title for 2025-06-18");
	json_decref(page);
	f = mcp__feat_get(srv, FEAT_PROMPT, "p");
	args = json_pack("{s:s}", "style", "terse");
	is_int(mcp__prompt_check(srv, f, args, miss, sizeof(miss)),
	    MCP_EINVAL, "missing required argument found");
	is_str(miss, "lang", "and named");
	json_object_set_new(args, "lang", json_string("c"));
	is_int(mcp__prompt_check(srv, f, args, miss, sizeof(miss)), MCP_OK,
	    "all required arguments present");
	json_decref(args);
	is_int(mcp_prompt_unregister(srv, "p"), MCP_OK, "prompt removed");
	is_int(nfreed, 2, "user data kept while a call holds the prompt");
	mcp__feat_unref(f);
	is_int(nfreed, 3, "and freed with the last reference");
	is_int(mcp_prompt_unregister(srv, "p"), MCP_ENOENT,
	    "removed twice: ENOENT");
	mcp_server_free(srv);
	is_int(nfreed, 4, "mcp_server_free frees the rest, once");
}

int
main(void)
{
	test_match();
	test_valid();
	test_tables();
	return tap_done();
}
