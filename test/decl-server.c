/*
 * decl-server.c: tools whose arguments and results are declared
 * (mcp_args(7)), for test/decl.mjs. Each tool answers with what its
 * callback read through mcp_arg_*, as structured content, so the test
 * sees exactly what a callback sees.
 *
 *	--broken N	registers mistake N (1-4) among good registrations,
 *			none of them checked: mcp_server_main must refuse to
 *			start; 5: a failure handled and cleared, and an
 *			unregister of nothing: it must start
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp.h>

/* note: every kind of field, read back. */
static void
note(mcp_call *call)
{
	json_t	*tags = json_array();
	size_t	 i, n = mcp_arg_len(call, "tags");
	char	 path[32];

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "tags[%zu]", i);
		json_array_append_new(tags,
		    json_string(mcp_arg_str(call, path)));
	}
	mcp_result_json_new(call, json_pack("{s:s, s:I, s:f, s:b, s:s, s:o,"
	    " s:I, s:s?, s:b, s:s?, s:I, s:I, s:O?}",
	    "title", mcp_arg_str(call, "title"),
	    "pri", mcp_arg_int(call, "pri"),
	    "weight", mcp_arg_num(call, "weight"),
	    "urgent", mcp_arg_bool(call, "urgent"),
	    "color", mcp_arg_str(call, "color"),
	    "tags", tags,
	    "ntags", (json_int_t)n,
	    "city", mcp_arg_str(call, "at.city"),
	    "has_due", mcp_arg_has(call, "due"),
	    "due", mcp_arg_str(call, "due"),
	    "zip_len", (json_int_t)mcp_arg_len(call, "at.zip"),
	    "first_row_k", mcp_arg_int(call, "rows[0].k"),
	    "args", mcp_call_args(call)));
}

/* misread: reads a string as an integer and a missing one as a string. */
static void
misread(mcp_call *call)
{
	mcp_result_json_new(call, json_pack("{s:I, s:s, s:b}",
	    "as_int", mcp_arg_int(call, "s"),
	    "as_str", mcp_arg_str(call, "n"),
	    "missing_null", mcp_arg_str(call, "nope") == NULL));
}

/*
 * reread: its declaration is flat, so its arguments are read in place;
 * the accessors are read before mcp_call_args builds the object and
 * after (they read it then), and must agree.
 */
static json_t *
read_all(mcp_call *call)
{
	return json_pack("{s:s?, s:I, s:I, s:f, s:b, s:b, s:b, s:I}",
	    "s", mcp_arg_str(call, "s"),
	    "s_len", (json_int_t)mcp_arg_len(call, "s"),
	    "i", mcp_arg_int(call, "i"),
	    "r", mcp_arg_num(call, "r"),
	    "b", mcp_arg_bool(call, "b"),
	    "has_i", mcp_arg_has(call, "i"),
	    "dot_s", mcp_arg_has(call, ".s"),	/* a path: member s */
	    "r_as_int", mcp_arg_int(call, "r"));
}

static void
reread(mcp_call *call)
{
	json_t	*before, *args, *after;

	/* In this order: a call's arguments are evaluated in any. */
	before = read_all(call);
	args = mcp_call_args(call);
	after = read_all(call);
	mcp_result_json_new(call, json_pack("{s:o, s:O, s:o}",
	    "before", before, "args", args, "after", after));
}

/* count: its output is declared; it returns N as asked, in or out of
 * the declared range. */
static void
count(mcp_call *call)
{
	mcp_result_json_new(call, json_pack("{s:I}", "n",
	    mcp_arg_int(call, "n")));
}

static const char note_decl[] =
    "title  string(1..20)          'The note''s title'\n"
    "pri    integer(1..5) = 3      # how urgent, 1 to 5\n"
    "weight number(>0) = 1.5\n"
    "urgent bool = false\n"
    "color  enum(red, green, 'light blue') = green\n"
    "tags?  [string(1..8)](..4, unique)\n"
    "due?   date\n"
    "code?  string(/^[A-Z]{3}$/)\n"
    "mail?  email\n"
    "at?    { city string = Paris, zip? string(5) }\n"
    "rows?  [{ k integer = 7, ... }]\n";

/* The mistakes --broken N makes, each among good registrations. */
static const char *const broken[] = {
	"title strng",			/* 1: unknown type */
	"n integer(5..1)",		/* 2: empty range */
	"n integer = 'x'",		/* 3: a default of another type */
	"code string(/[/)",		/* 4: a pattern that does not compile */
};

int
main(int argc, char *argv[])
{
	mcp_server	*srv = mcp_server_new("decl-server", "1.0.0");
	long long	 b = 0;
	int		 i, rc;

	/* Before mcp_server_main, so read by hand. */
	for (i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--broken") == 0)
			b = atoll(argv[i + 1]);
	mcp_server_add_flag(srv, "broken", MCP_FLAG_INT, "0",
	    "register mistake N (1-4) and expect not to start");
	mcp_tool_register(srv, "note", "Reads every kind of argument back.",
	    note_decl, note, NULL, NULL);
	mcp_tool_register(srv, "misread", "Reads arguments as the wrong type.",
	    "s string, n? integer", misread, NULL, NULL);
	mcp_tool_register(srv, "reread", "Reads flat arguments twice.",
	    "s string, i? integer, r? number, b? bool", reread, NULL, NULL);
	mcp_tool_register(srv, "count", "Answers n, declared 0 to 10 out.",
	    "n integer", count, NULL, NULL);
	mcp_tool_set_output_schema(srv, "count", "n integer(0..10) 'The n'");
	mcp_tool_register(srv, "none", "Takes no arguments.", "", count,
	    NULL, NULL);
	if (b >= 1 && b <= (long long)(sizeof(broken) / sizeof(broken[0]))) {
		mcp_tool_register(srv, "bad", "A mistake.", broken[b - 1],
		    count, NULL, NULL);
		/* And a second failure: only the first is returned. */
		mcp_tool_set_title(srv, "no-such-tool", "x");
		mcp_tool_register(srv, "after", "Fine.", "x string", count,
		    NULL, NULL);
	}
	if (b == 5) {
		/* A failure handled: a fallback, and the failure forgotten. */
		if (mcp_tool_register(srv, "count", "Taken.", NULL, count, NULL,
		    NULL) == MCP_EEXIST && mcp_server_clear_error(srv) ==
		    MCP_EEXIST && mcp_server_clear_error(srv) == MCP_OK)
			mcp_tool_register(srv, "count2", "The fallback.", "n int",
			    count, NULL, NULL);
		/* Not kept at all. */
		mcp_tool_unregister(srv, "never-was");
	}
	rc = mcp_server_main(srv, argc, argv);
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
