/*
 * conformance-server.c: every fixture of the official MCP conformance
 * suite (see CONFORMANCE.md sections 4 and 5): the test_* tools, the
 * json_schema_2020_12_tool, the test:// resources and template, and the
 * test_* prompts with completion of arg1. Uses the public API only and
 * mcp_server_main for the standard command line. Built by the Makefile
 * as build/conformance-server; exercised by test/conformance-fixtures.sh
 * and test/conformance.sh (the suite's legacy scenarios).
 *
 * The suite's 2026-07-28 scenarios (test/conformance26.sh) want more,
 * grouped below after the legacy tools: the test_input_required_result_*
 * tools and prompt, whose callbacks ask the client as any callback does
 * (mcp_call_elicit and its kin; in 2026-07-28 the library turns that
 * into an input_required result and the retry), the diagnostic tools
 * of its server-stateless scenario, two tools that change the tool and
 * prompt lists (for subscriptions/listen), and a tool whose arguments
 * are mirrored in Mcp-Param-* headers (x-mcp-header). Legacy clients
 * may call them too: there the requests to the client are the usual
 * ones, on the session's stream. With CONFORMANCE_TASKS set in the
 * environment the server also has the Tasks extension scenarios' tools
 * (greet, slow_compute and the rest), which may or must run as tasks;
 * without it no tool is task-capable, so that legacy clients see no
 * "tasks" capability.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcp.h>

/* PNG_B64 decoded: a 1x1 PNG, 70 bytes. */
static const unsigned char png[] = {
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d,
	0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00,
	0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82
};

/* WAV_B64 decoded: a 44-byte WAV header with 2 data bytes. */
static const unsigned char wav[] = {
	'R', 'I', 'F', 'F', 0x26, 0x00, 0x00, 0x00, 'W', 'A', 'V', 'E',
	'f', 'm', 't', ' ', 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
	0x40, 0x1f, 0x00, 0x00, 0x00, 0x7d, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00,
	'd', 'a', 't', 'a', 0x02, 0x00, 0x00, 0x00
};

static const char empty_schema[] = "{\"type\":\"object\",\"properties\":{}}";
static const char sampling_schema[] =
    "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\","
    "\"description\":\"The prompt to send to the LLM\"}},"
    "\"required\":[\"prompt\"]}";
static const char elicitation_schema[] =
    "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
    "\"description\":\"The message to show the user\"}},"
    "\"required\":[\"message\"]}";
/* Keywords of every kind a 2020-12 schema has, for the suite to see kept:
 * $schema, $defs with an $anchor, $ref, allOf with a nested anyOf,
 * if/then/else; what they say holds for any arguments. */
static const char schema_2020_12[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
    "\"type\":\"object\",\"$defs\":{\"address\":{\"$anchor\":\"address\","
    "\"type\":\"object\","
    "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":"
    "{\"type\":\"string\"}}}},\"properties\":{\"name\":{\"type\":"
    "\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"}},"
    "\"allOf\":[{\"anyOf\":[{\"required\":[\"name\"]},"
    "{\"not\":{\"required\":[\"name\"]}}]}],"
    "\"if\":{\"required\":[\"name\"]},"
    "\"then\":{\"properties\":{\"name\":{\"type\":\"string\"}}},"
    "\"else\":{\"properties\":{\"address\":{\"type\":\"object\"}}},"
    "\"additionalProperties\":false}";

/* x-mcp-header: a client mirrors each annotated argument in an
 * Mcp-Param-NAME header (a string, an integer and a boolean here). */
static const char custom_headers_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"region\":{\"type\":\"string\",\"description\":\"A region\","
    "\"x-mcp-header\":\"Region\"},"
    "\"priority\":{\"type\":\"integer\",\"description\":\"A priority\","
    "\"x-mcp-header\":\"Priority\"},"
    "\"verbose\":{\"type\":\"boolean\",\"description\":\"Verbose output\","
    "\"x-mcp-header\":\"Verbose\"}}}";

static const char name_schema[] =
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}";
static const char seconds_schema[] =
    "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":"
    "\"integer\",\"minimum\":0,\"maximum\":60}}}";

static const char sep1034_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"User name\","
    "\"default\":\"John Doe\"},"
    "\"age\":{\"type\":\"integer\",\"description\":\"User age\","
    "\"default\":30},"
    "\"score\":{\"type\":\"number\",\"description\":\"User score\","
    "\"default\":95.5},"
    "\"status\":{\"type\":\"string\",\"description\":\"User status\","
    "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
    "\"verified\":{\"type\":\"boolean\",\"description\":"
    "\"Verification status\",\"default\":true}},\"required\":[]}";
static const char sep1330_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"untitledSingle\":{\"type\":\"string\",\"description\":"
    "\"Select one option\",\"enum\":[\"option1\",\"option2\","
    "\"option3\"]},"
    "\"titledSingle\":{\"type\":\"string\",\"description\":"
    "\"Select one option with titles\",\"oneOf\":["
    "{\"const\":\"value1\",\"title\":\"First Option\"},"
    "{\"const\":\"value2\",\"title\":\"Second Option\"},"
    "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
    "\"legacyEnum\":{\"type\":\"string\",\"description\":"
    "\"Select one option (legacy)\",\"enum\":[\"opt1\",\"opt2\","
    "\"opt3\"],\"enumNames\":[\"Option One\",\"Option Two\","
    "\"Option Three\"]},"
    "\"untitledMulti\":{\"type\":\"array\",\"description\":"
    "\"Select multiple options\",\"minItems\":1,\"maxItems\":3,"
    "\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\","
    "\"option3\"]}},"
    "\"titledMulti\":{\"type\":\"array\",\"description\":"
    "\"Select multiple options with titles\",\"minItems\":1,"
    "\"maxItems\":3,\"items\":{\"anyOf\":["
    "{\"const\":\"value1\",\"title\":\"First Choice\"},"
    "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}},"
    "\"required\":[]}";

static void
pause_ms(long ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	nanosleep(&ts, NULL);
}

/* V as compact JSON, "{}" for NULL, into a new string. */
static char *
compact(const json_t *v)
{
	if (v == NULL)
		return strdup("{}");
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* ---- tools ------------------------------------------------------------ */

static void
simple_text(mcp_call *call)
{
	mcp_result_text(call, "This is a simple text response for testing.");
}

static void
image_content(mcp_call *call)
{
	mcp_result_image(call, png, sizeof(png), "image/png");
}

static void
audio_content(mcp_call *call)
{
	mcp_result_audio(call, wav, sizeof(wav), "audio/wav");
}

static void
embedded_resource(mcp_call *call)
{
	mcp_result_resource_text(call, "test://embedded-resource",
	    "text/plain", "This is an embedded resource content.");
}

static void
multiple_content(mcp_call *call)
{
	mcp_result_text(call, "Multiple content types test:");
	mcp_result_image(call, png, sizeof(png), "image/png");
	mcp_result_resource_text(call, "test://mixed-content-resource",
	    "application/json", "{\"test\":\"data\",\"value\":123}");
}

static void
with_logging(mcp_call *call)
{
	mcp_call_log(call, MCP_LOG_INFO, NULL, "Tool execution started");
	pause_ms(50);
	mcp_call_log(call, MCP_LOG_INFO, NULL, "Tool processing data");
	pause_ms(50);
	mcp_call_log(call, MCP_LOG_INFO, NULL, "Tool execution completed");
	mcp_result_text(call, "Tool with logging executed successfully");
}

/*
 * Three progress notifications 50 ms apart (0, 50, 100 of 100), sent by
 * the library only when the request carried a progressToken, then the
 * text CONFORMANCE.md gives: the token as String(token) shows it ("1"
 * for the integer 1 the suite's client puts there). Without a token the
 * delays still run, nothing is sent, and the text says so. The library
 * writes all three before the result; the pause after the last one is
 * for the TypeScript SDK client, which handles a notification a
 * microtask later than a response read in the same chunk, so a last
 * notification right before the result reaches it after the progress
 * handler is gone.
 */
static void
with_progress(mcp_call *call)
{
	const json_t	*token;
	char		 msg[64];
	int		 i;

	for (i = 0; i <= 2; i++) {
		snprintf(msg, sizeof(msg), "Completed step %d of 100", i * 50);
		mcp_call_progress(call, i * 50, 100, msg);
		pause_ms(50);
	}
	token = mcp_call_progress_token(call);
	if (json_is_string(token))
		mcp_result_text(call, json_string_value(token));
	else if (json_is_integer(token))
		mcp_result_textf(call, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(token));
	else
		mcp_result_text(call, "Progress test completed (no "
		    "progressToken)");
}

/* SEP-1699: the stream closes mid-call; the answer comes on resumption. */
static void
reconnection(mcp_call *call)
{
	mcp_call_close_stream(call);
	pause_ms(100);
	mcp_result_text(call, "Reconnection test completed successfully. If "
	    "you received this, the client properly reconnected after stream "
	    "closure.");
}

static void
error_handling(mcp_call *call)
{
	mcp_result_error(call, "This tool intentionally returns an error "
	    "for testing");
}

/* Failure of a request to the client: an isError result. */
static void
request_failed(mcp_call *call, const char *what, int rc, json_t *res)
{
	json_t	*msg = json_object_get(res, "message");

	if (rc == MCP_ECLIENT && json_is_string(msg))
		mcp_result_errorf(call, "%s failed: %s: %s", what,
		    mcp_strerror(rc), json_string_value(msg));
	else
		mcp_result_errorf(call, "%s failed: %s", what,
		    mcp_strerror(rc));
}

static void
sampling(mcp_call *call)
{
	const char	*prompt, *text;
	json_t		*params, *res = NULL;
	int		 rc;

	if (mcp_args_unpack(call, "{s:s}", "prompt", &prompt) != MCP_OK)
		return;
	params = json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages",
	    "role", "user", "content", "type", "text", "text", prompt,
	    "maxTokens", 100);
	rc = mcp_call_sample(call, params, 0, &res);
	if (rc != MCP_OK)
		request_failed(call, "sampling", rc, res);
	else {
		text = json_string_value(json_object_get(json_object_get(res,
		    "content"), "text"));
		mcp_result_textf(call, "LLM response: %s", text != NULL ?
		    text : "");
	}
	json_decref(res);
}

/* Sends elicitation/create with PARAMS (stolen); the result text is
 * PREFIX "action=<action>, content=<compact JSON>". */
static void
elicit(mcp_call *call, json_t *params, const char *prefix)
{
	const char	*action;
	json_t		*res = NULL;
	char		*content;
	int		 rc;

	if (params == NULL) {
		mcp_result_error(call, "out of memory");
		return;
	}
	rc = mcp_call_elicit(call, params, 0, &res);
	if (rc != MCP_OK)
		request_failed(call, "elicitation", rc, res);
	else {
		action = json_string_value(json_object_get(res, "action"));
		content = compact(json_object_get(res, "content"));
		mcp_result_textf(call, "%saction=%s, content=%s", prefix,
		    action != NULL ? action : "", content != NULL ? content :
		    "{}");
		free(content);
	}
	json_decref(res);
}

static void
elicitation(mcp_call *call)
{
	const char	*message;

	if (mcp_args_unpack(call, "{s:s}", "message", &message) != MCP_OK)
		return;
	elicit(call, json_pack("{s:s, s:{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}},"
	    " s:[s, s]}}", "message", message, "requestedSchema", "type",
	    "object", "properties", "username", "type", "string",
	    "description", "User's username", "email", "type", "string",
	    "description", "User's email address", "required", "username",
	    "email"), "User response: ");
}

/* An elicitation whose requestedSchema is the JSON text SCHEMA. */
static void
elicit_schema(mcp_call *call, const char *message, const char *schema)
{
	json_t	*req;

	req = json_loads(schema, 0, NULL);
	if (req == NULL) {
		mcp_result_error(call, "bad schema");
		return;
	}
	elicit(call, json_pack("{s:s, s:o}", "message", message,
	    "requestedSchema", req), "Elicitation completed: ");
}

static void
sep1034_defaults(mcp_call *call)
{
	elicit_schema(call, "Please review and update the form fields with "
	    "defaults", sep1034_schema);
}

static void
sep1330_enums(mcp_call *call)
{
	elicit_schema(call, "Please select options from the enum fields",
	    sep1330_schema);
}

static void
schema_tool(mcp_call *call)
{
	char	*args = compact(mcp_call_args(call));

	mcp_result_textf(call, "JSON Schema 2020-12 tool called with: %s",
	    args != NULL ? args : "{}");
	free(args);
}

/* ---- tools of the 2026-07-28 scenarios: input_required --------------- */

/*
 * Each asks the client through the library as a legacy callback would;
 * in 2026-07-28 the first run answers input_required with the requests
 * and a signed requestState, and the client's retry runs the callback
 * again with the answers (mcp_call_sample(3)). A request the client has
 * no capability for is refused by the library with -32021.
 */

/* An elicitation of the one string field FIELD. */
static json_t *
ask_form(const char *message, const char *field)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}, s:[s]}}", "mode",
	    "form", "message", message, "requestedSchema", "type", "object",
	    "properties", field, "type", "string", "required", field);
}

static json_t *
ask_llm(const char *text)
{
	return json_pack("{s:[{s:s, s:{s:s, s:s}}], s:i}", "messages", "role",
	    "user", "content", "type", "text", "text", text, "maxTokens", 100);
}

/* The string FIELD of an elicitation's content, or "". */
static const char *
field_of(const json_t *res, const char *field)
{
	const char	*v;

	v = json_string_value(json_object_get(json_object_get(res, "content"),
	    field));
	return v != NULL ? v : "";
}

/* The suite answers under the key it expects: user_name. */
static void
ir_elicitation(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	mcp_call_input_key(call, "user_name");
	rc = mcp_call_elicit(call, ask_form("What is your name?", "name"), 0,
	    &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "Hello, %s!", field_of(res, "name"));
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, res);
	json_decref(res);
}

static void
ir_sampling(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_sample(call, ask_llm("What is the capital of France?"),
	    0, &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "LLM response: %s",
		    json_string_value(json_object_get(json_object_get(res,
		    "content"), "text")) != NULL ? json_string_value(
		    json_object_get(json_object_get(res, "content"), "text")) :
		    "");
	else if (rc != MCP_EINPUT)
		request_failed(call, "sampling", rc, res);
	json_decref(res);
}

static void
ir_list_roots(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_roots(call, 0, &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "The client has %zu roots",
		    json_array_size(json_object_get(res, "roots")));
	else if (rc != MCP_EINPUT)
		request_failed(call, "roots/list", rc, res);
	json_decref(res);
}

/* A yes/no confirmation: the tool of the requestState scenarios (the
 * state is the library's, signed; a tampered one never reaches here). */
static void
ir_confirm(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}}}",
	    "mode", "form", "message", "Proceed?", "requestedSchema", "type",
	    "object", "properties", "ok", "type", "boolean"), 0, &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "Confirmed: action=%s",
		    json_string_value(json_object_get(res, "action")) != NULL ?
		    json_string_value(json_object_get(res, "action")) : "");
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, res);
	json_decref(res);
}

/* All three kinds in one round: it asks each before looking at any
 * return code, so the first input_required carries them all. */
static void
ir_multiple(mcp_call *call)
{
	json_t	*e = NULL, *m = NULL, *r = NULL;
	int	 erc, mrc, rrc;

	erc = mcp_call_elicit(call, ask_form("What is your name?", "name"), 0,
	    &e);
	mrc = mcp_call_sample(call, ask_llm("Say hello"), 0, &m);
	rrc = mcp_call_roots(call, 0, &r);
	if (erc == MCP_OK && mrc == MCP_OK && rrc == MCP_OK)
		mcp_result_textf(call, "name=%s, roots=%zu",
		    field_of(e, "name"), json_array_size(json_object_get(r,
		    "roots")));
	else if (erc != MCP_EINPUT && mrc != MCP_EINPUT && rrc != MCP_EINPUT)
		mcp_result_errorf(call, "a request to the client failed: %s",
		    mcp_strerror(erc != MCP_OK ? erc : mrc != MCP_OK ? mrc :
		    rrc));
	json_decref(e);
	json_decref(m);
	json_decref(r);
}

/* Two rounds: the second question is asked once the first is answered,
 * so the client sees two input_required results, then the answer. */
static void
ir_multi_round(mcp_call *call)
{
	json_t	*name = NULL, *color = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, ask_form("What is your name?", "name"), 0,
	    &name);
	if (rc == MCP_OK)
		rc = mcp_call_elicit(call, ask_form("Your favourite colour?",
		    "color"), 0, &color);
	if (rc == MCP_OK)
		mcp_result_textf(call, "%s likes %s", field_of(name, "name"),
		    field_of(color, "color"));
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, color != NULL ? color :
		    name);
	json_decref(name);
	json_decref(color);
}

/* The client declares sampling only: the tool asks for sampling alone
 * (an elicitation would be refused with -32021 by the library, so an
 * inputRequests of an undeclared capability cannot come out). */
static void
ir_capabilities(mcp_call *call)
{
	ir_sampling(call);
}

/* ---- tools of the 2026-07-28 scenarios: diagnostics ------------------ */

/* Needs sampling, which the suite's client leaves out of its
 * capabilities: the library answers -32021 (400 on HTTP), naming it. */
static void
missing_capability(mcp_call *call)
{
	ir_sampling(call);
}

/* An elicitation during a call: in 2026-07-28 it rides in the
 * input_required result, never as a request of its own on the stream. */
static void
streaming_elicitation(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, ask_form("Your name?", "name"), 0, &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "Hello, %s!", field_of(res, "name"));
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, res);
	json_decref(res);
}

/* Logs at info: the library sends notifications/message only to a
 * request that set a logLevel in its _meta (or a session's setLevel). */
static void
logging_tool(mcp_call *call)
{
	mcp_call_log(call, MCP_LOG_INFO, NULL, "test_logging_tool ran");
	mcp_result_text(call, "Logged one info message");
}

static void
dynamic_tool(mcp_call *call)
{
	mcp_result_text(call, "This tool comes and goes");
}

static void dynamic_prompt(mcp_call *);

/* Adds test_dynamic_tool, or removes it when it is there: either way
 * the tool list changes, and the library tells every listener. */
static void
trigger_tool_change(mcp_call *call)
{
	mcp_server	*srv = mcp_call_udata(call);
	int		 rc;

	rc = mcp_tool_unregister(srv, "test_dynamic_tool");
	if (rc == MCP_ENOENT)
		rc = mcp_tool_register(srv, "test_dynamic_tool", "A tool that "
		    "test_trigger_tool_change adds and removes", NULL,
		    dynamic_tool, NULL, NULL);
	if (rc == MCP_OK)
		mcp_result_text(call, "The tool list changed");
	else
		mcp_result_errorf(call, "the tool list did not change: %s",
		    mcp_strerror(rc));
}

/* The same with test_dynamic_prompt and the prompt list. */
static void
trigger_prompt_change(mcp_call *call)
{
	mcp_server	*srv = mcp_call_udata(call);
	int		 rc;

	rc = mcp_prompt_unregister(srv, "test_dynamic_prompt");
	if (rc == MCP_ENOENT)
		rc = mcp_prompt_register(srv, "test_dynamic_prompt", "A prompt "
		    "that test_trigger_prompt_change adds and removes",
		    dynamic_prompt, NULL, NULL);
	if (rc == MCP_OK)
		mcp_result_text(call, "The prompt list changed");
	else
		mcp_result_errorf(call, "the prompt list did not change: %s",
		    mcp_strerror(rc));
}

/* x-mcp-header: the transport has checked each Mcp-Param-* header
 * against the arguments before this runs (-32020 when they differ). */
static void
custom_headers(mcp_call *call)
{
	char	*args = compact(mcp_call_args(call));

	mcp_result_textf(call, "Custom headers matched: %s", args != NULL ?
	    args : "{}");
	free(args);
}

/* ---- tools of the 2026-07-28 scenarios: the Tasks extension -------- */

/*
 * A tool flagged MCP_TOOL_TASK_OPTIONAL or _REQUIRED may run as a task
 * (io.modelcontextprotocol/tasks; a 2025-11-25 client's tasks too): the
 * library answers the call with the task, runs the callback, and keeps
 * its result for tasks/get. The callback is written as for any call.
 */

static void
greet(mcp_call *call)
{
	const char	*name = "world";

	if (json_object_get(mcp_call_args(call), "name") != NULL &&
	    mcp_args_unpack(call, "{s:s}", "name", &name) != MCP_OK)
		return;
	mcp_result_textf(call, "Hello, %s!", name);
}

/* Sleeps SECONDS (0 to 60) in steps of 10 ms, stopping when cancelled. */
static void
slow_compute(mcp_call *call)
{
	json_int_t	 secs = 0, i;

	if (json_object_get(mcp_call_args(call), "seconds") != NULL &&
	    mcp_args_unpack(call, "{s:I}", "seconds", &secs) != MCP_OK)
		return;
	if (secs < 0 || secs > 60) {
		mcp_result_error(call, "seconds must be 0 to 60");
		return;
	}
	for (i = 0; i < secs * 100 && !mcp_call_cancelled(call); i++)
		pause_ms(10);
	mcp_result_textf(call, "Computed in %" JSON_INTEGER_FORMAT
	    " seconds", secs);
}

/* A tool error (isError): the task completes, with that result. */
static void
failing_job(mcp_call *call)
{
	pause_ms(1000);
	mcp_result_error(call, "failing_job failed, as it always does");
}

/* A JSON-RPC error instead of a result: the task fails. */
static void
protocol_error_job(mcp_call *call)
{
	mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR, "protocol_error_job "
	    "broke, as it always does");
}

static void
confirm_delete(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, json_pack("{s:s, s:s, s:{s:s, s:{s:{s:s}}}}",
	    "mode", "form", "message", "Delete it?", "requestedSchema", "type",
	    "object", "properties", "confirm", "type", "boolean"), 0, &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "Delete: action=%s",
		    json_string_value(json_object_get(res, "action")) != NULL ?
		    json_string_value(json_object_get(res, "action")) : "");
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, res);
	json_decref(res);
}

/* Asks again, under the same key, unless the first answer confirms:
 * a second round asking for what the first was answered under. */
static void
confirm_twice(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc, again = 0;

	mcp_call_input_key(call, "sure");
	rc = mcp_call_elicit(call, ask_form("Sure?", "confirm"), 0, &res);
	if (rc == MCP_OK && strcmp(field_of(res, "confirm"), "yes") != 0) {
		json_decref(res);
		res = NULL;
		again = 1;
		mcp_call_input_key(call, "sure");
		rc = mcp_call_elicit(call, ask_form("Really sure?", "confirm"),
		    0, &res);
	}
	if (rc == MCP_OK)
		mcp_result_textf(call, "confirm=%s%s", field_of(res,
		    "confirm"), again ? " (asked twice)" : "");
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, res);
	json_decref(res);
}

/* Two elicitations at once, so that two requests are pending. */
static void
multi_input(mcp_call *call)
{
	json_t	*a = NULL, *b = NULL;
	int	 arc, brc;

	arc = mcp_call_elicit(call, ask_form("First name?", "name"), 0, &a);
	brc = mcp_call_elicit(call, ask_form("Second name?", "name"), 0, &b);
	if (arc == MCP_OK && brc == MCP_OK)
		mcp_result_textf(call, "Got %s and %s", field_of(a, "name"),
		    field_of(b, "name"));
	else if (arc != MCP_EINPUT && brc != MCP_EINPUT)
		request_failed(call, "elicitation", arc != MCP_OK ? arc : brc,
		    arc != MCP_OK ? a : b);
	json_decref(a);
	json_decref(b);
}

/* Asks the user's name (user_name), then answers as a task. */
static void
tool_with_task(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	mcp_call_input_key(call, "user_name");
	rc = mcp_call_elicit(call, ask_form("What is your name?", "name"), 0,
	    &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "Hello from the task, %s!",
		    field_of(res, "name"));
	else if (rc != MCP_EINPUT)
		request_failed(call, "elicitation", rc, res);
	json_decref(res);
}

/* ---- resources -------------------------------------------------------- */

static void
static_text(mcp_call *call)
{
	mcp_result_text(call, "This is the content of the static text "
	    "resource.");
}

static void
static_binary(mcp_call *call)
{
	mcp_result_blob(call, png, sizeof(png));
}

static void
watched(mcp_call *call)
{
	mcp_result_text(call, "Watched resource content");
}

static void
embedded(mcp_call *call)
{
	mcp_result_text(call, "This is an embedded resource content.");
}

static void
template_read(mcp_call *call)
{
	const char	*id = mcp_call_var(call, "id");
	json_t		*v;
	char		*s;

	v = json_pack("{s:s, s:b, s:s+}", "id", id, "templateTest", 1,
	    "data", "Data for ID: ", id);
	s = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER) :
	    NULL;
	if (s == NULL)
		mcp_result_rpc_error(call, -32603, "out of memory");
	else
		mcp_result_text(call, s);
	free(s);
	json_decref(v);
}

/* ---- prompts ---------------------------------------------------------- */

static void
simple_prompt(mcp_call *call)
{
	mcp_result_text(call, "This is a simple prompt for testing.");
}

static void
args_prompt(mcp_call *call)
{
	const char	*a1 = mcp_call_var(call, "arg1");
	const char	*a2 = mcp_call_var(call, "arg2");

	mcp_result_textf(call, "Prompt with arguments: arg1='%s', arg2='%s'",
	    a1 != NULL ? a1 : "", a2 != NULL ? a2 : "");
}

static void
resource_prompt(mcp_call *call)
{
	const char	*uri = mcp_call_var(call, "resourceUri");

	mcp_result_resource_text(call, uri != NULL ? uri :
	    "test://example-resource", "text/plain",
	    "Embedded resource content for testing.");
	mcp_result_text(call, "Please process the embedded resource above.");
}

static void
image_prompt(mcp_call *call)
{
	mcp_result_image(call, png, sizeof(png), "image/png");
	mcp_result_text(call, "Please analyze the image above.");
}

/* 2026-07-28: a prompt that asks the client first (input_required). */
static void
ir_prompt(mcp_call *call)
{
	json_t	*res = NULL;
	int	 rc;

	rc = mcp_call_elicit(call, ask_form("Which context?", "context"), 0,
	    &res);
	if (rc == MCP_OK)
		mcp_result_textf(call, "Answer with this context in mind: %s",
		    field_of(res, "context"));
	else if (rc != MCP_EINPUT)
		mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR,
		    mcp_strerror(rc));
	json_decref(res);
}

static void
dynamic_prompt(mcp_call *call)
{
	mcp_result_text(call, "This prompt comes and goes.");
}

/* completion/complete: arg1 of test_prompt_with_arguments offers the
 * values of a small list that start with what was typed; everything
 * else gets the empty completion. */
static void
complete(mcp_call *call)
{
	static const char *const values[] = { "testValue1", "testValue2",
	    "paris", "london" };
	const char	*arg, *typed;
	const char	*prompt = mcp_call_prompt(call);
	size_t		 i;

	if (mcp_call_complete_arg(call, &arg, &typed) != MCP_OK)
		return;
	if (prompt == NULL || strcmp(prompt, "test_prompt_with_arguments")
	    != 0 || strcmp(arg, "arg1") != 0)
		return;
	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (strncmp(values[i], typed, strlen(typed)) == 0)
			mcp_result_completion(call, values[i]);
}

/* ---- setup ------------------------------------------------------------ */

static const struct tool {
	const char	*name, *description, *schema;
	void		(*fn)(mcp_call *);
} tools[] = {
	{ "test_simple_text", "Tests simple text content response",
	    empty_schema, simple_text },
	{ "test_image_content", "Tests image content response", empty_schema,
	    image_content },
	{ "test_audio_content", "Tests audio content response", empty_schema,
	    audio_content },
	{ "test_embedded_resource", "Tests embedded resource content "
	    "response", empty_schema, embedded_resource },
	{ "test_multiple_content_types", "Tests response with multiple "
	    "content types (text, image, resource)", empty_schema,
	    multiple_content },
	{ "test_tool_with_logging", "Tests tool that emits log messages "
	    "during execution", empty_schema, with_logging },
	{ "test_tool_with_progress", "Tests tool that reports progress "
	    "notifications", empty_schema, with_progress },
	{ "test_error_handling", "Tests error response handling",
	    empty_schema, error_handling },
	{ "test_reconnection", "Tests SSE stream disconnection and client "
	    "reconnection (SEP-1699). Server will close the stream mid-call "
	    "and send the result after client reconnects.", empty_schema,
	    reconnection },
	{ "test_sampling", "Tests server-initiated sampling (LLM completion "
	    "request)", sampling_schema, sampling },
	{ "test_elicitation", "Tests server-initiated elicitation (user "
	    "input request)", elicitation_schema, elicitation },
	{ "test_elicitation_sep1034_defaults", "Tests elicitation with "
	    "default values per SEP-1034", empty_schema, sep1034_defaults },
	{ "test_elicitation_sep1330_enums", "Tests elicitation with enum "
	    "schema improvements per SEP-1330", empty_schema, sep1330_enums },
	{ "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features "
	    "for conformance testing (SEP-1613)", schema_2020_12,
	    schema_tool },
};

/* The 2026-07-28 scenarios' tools; each gets the server as its udata
 * (the trigger tools change its lists). */
static const struct tool tools26[] = {
	{ "test_input_required_result_elicitation", "Asks the user's name "
	    "(input_required, key user_name)", empty_schema, ir_elicitation },
	{ "test_input_required_result_sampling", "Asks the client's LLM "
	    "(input_required)", empty_schema, ir_sampling },
	{ "test_input_required_result_list_roots", "Asks the client's roots "
	    "(input_required)", empty_schema, ir_list_roots },
	{ "test_input_required_result_request_state", "Asks a confirmation; "
	    "the retry brings the requestState back", empty_schema,
	    ir_confirm },
	{ "test_input_required_result_tampered_state", "Asks a confirmation; "
	    "a retry with an altered requestState is refused", empty_schema,
	    ir_confirm },
	{ "test_input_required_result_multiple_inputs", "Asks an elicitation, "
	    "a sampling and the roots in one round", empty_schema,
	    ir_multiple },
	{ "test_input_required_result_multi_round", "Asks two questions, one "
	    "round each", empty_schema, ir_multi_round },
	{ "test_input_required_result_capabilities", "Asks only what the "
	    "client declared it can answer (sampling)", empty_schema,
	    ir_capabilities },
	{ "test_missing_capability", "Needs the sampling capability; without "
	    "it the call is refused", empty_schema,
	    missing_capability },
	{ "test_streaming_elicitation", "Elicits during the call "
	    "(input_required, no request on the stream)", empty_schema,
	    streaming_elicitation },
	{ "test_logging_tool", "Logs one message, sent only to a request "
	    "that set a logLevel", empty_schema, logging_tool },
	{ "test_trigger_tool_change", "Adds or removes test_dynamic_tool "
	    "(tools/list_changed)", empty_schema, trigger_tool_change },
	{ "test_trigger_prompt_change", "Adds or removes test_dynamic_prompt "
	    "(prompts/list_changed)", empty_schema, trigger_prompt_change },
	{ "test_custom_headers", "Arguments mirrored in Mcp-Param-* headers", custom_headers_schema, custom_headers },
};

/* The Tasks extension scenarios' tools, with their task support. */
static const struct task_tool {
	const char	*name, *description, *schema;
	void		(*fn)(mcp_call *);
	unsigned	 flags;
} task_tools[] = {
	{ "greet", "Greets NAME (never a task)", name_schema, greet, 0 },
	{ "slow_compute", "Sleeps SECONDS, then answers (may be a task)",
	    seconds_schema, slow_compute, MCP_TOOL_TASK_OPTIONAL },
	{ "failing_job", "A tool error after a second (must be a task)",
	    empty_schema, failing_job, MCP_TOOL_TASK_REQUIRED },
	{ "protocol_error_job", "A JSON-RPC error (may be a task)",
	    empty_schema, protocol_error_job, MCP_TOOL_TASK_OPTIONAL },
	{ "confirm_delete", "Asks a confirmation (may be a task)",
	    empty_schema, confirm_delete, MCP_TOOL_TASK_OPTIONAL },
	{ "multi_input", "Asks two questions at once (may be a task)",
	    empty_schema, multi_input, MCP_TOOL_TASK_OPTIONAL },
	{ "test_tool_with_task", "Asks the user's name, then runs as a task "
	    "(must be a task)", empty_schema, tool_with_task,
	    MCP_TOOL_TASK_REQUIRED | MCP_TOOL_INPUT_FIRST },
	{ "confirm_twice", "Asks again, under the same key, unless \"yes\" "
	    "(may be a task)", empty_schema, confirm_twice,
	    MCP_TOOL_TASK_OPTIONAL },
};

static int
setup(mcp_server *srv)
{
	size_t	i;
	int	rc = MCP_OK;

	for (i = 0; rc == MCP_OK && i < sizeof(tools) / sizeof(tools[0]); i++)
		rc = mcp_tool_register(srv, tools[i].name,
		    tools[i].description, tools[i].schema, tools[i].fn, NULL,
		    NULL);
	for (i = 0; rc == MCP_OK && i < sizeof(tools26) / sizeof(tools26[0]);
	    i++)
		rc = mcp_tool_register(srv, tools26[i].name,
		    tools26[i].description, tools26[i].schema, tools26[i].fn,
		    srv, NULL);
	for (i = 0; rc == MCP_OK && getenv("CONFORMANCE_TASKS") != NULL &&
	    i < sizeof(task_tools) / sizeof(task_tools[0]); i++) {
		rc = mcp_tool_register(srv, task_tools[i].name,
		    task_tools[i].description, task_tools[i].schema,
		    task_tools[i].fn, NULL, NULL);
		if (rc == MCP_OK)
			rc = mcp_tool_set_flags(srv, task_tools[i].name,
			    task_tools[i].flags);
	}
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "test://static-text",
		    "static-text", "A static text resource for testing",
		    "text/plain", static_text, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_set_title(srv, "test://static-text",
		    "Static Text Resource");
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "test://static-binary",
		    "static-binary", "A static binary resource (image) for "
		    "testing", "image/png", static_binary, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_set_title(srv, "test://static-binary",
		    "Static Binary Resource");
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "test://watched-resource",
		    "watched-resource", "A resource that auto-updates every 3 "
		    "seconds", "text/plain", watched, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_set_title(srv, "test://watched-resource",
		    "Watched Resource");
	if (rc == MCP_OK)
		rc = mcp_resource_register(srv, "test://embedded-resource",
		    "embedded-resource", "The resource embedded by "
		    "test_embedded_resource", "text/plain", embedded, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_template_register(srv,
		    "test://template/{id}/data", "template", "A resource "
		    "template with parameter substitution", "application/json",
		    template_read, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_resource_template_set_title(srv,
		    "test://template/{id}/data", "Resource Template");
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_simple_prompt",
		    "A simple prompt without arguments", simple_prompt, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_set_title(srv, "test_simple_prompt",
		    "Simple Test Prompt");
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_prompt_with_arguments",
		    "A prompt with required arguments", args_prompt, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_set_title(srv, "test_prompt_with_arguments",
		    "Prompt With Arguments");
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "test_prompt_with_arguments",
		    "arg1", "First test argument", 1);
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv, "test_prompt_with_arguments",
		    "arg2", "Second test argument", 1);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv,
		    "test_prompt_with_embedded_resource", "A prompt that "
		    "includes an embedded resource", resource_prompt, NULL,
		    NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_set_title(srv,
		    "test_prompt_with_embedded_resource",
		    "Prompt With Embedded Resource");
	if (rc == MCP_OK)
		rc = mcp_prompt_add_argument(srv,
		    "test_prompt_with_embedded_resource", "resourceUri",
		    "URI of the resource to embed", 1);
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_prompt_with_image",
		    "A prompt that includes image content", image_prompt,
		    NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_prompt_set_title(srv, "test_prompt_with_image",
		    "Prompt With Image");
	if (rc == MCP_OK)
		rc = mcp_prompt_register(srv, "test_input_required_result_prompt",
		    "Asks the client for context first (input_required)",
		    ir_prompt, NULL, NULL);
	if (rc == MCP_OK)
		rc = mcp_completion_set(srv, complete, NULL, NULL);
	return rc;
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv;
	int		 rc;

	srv = mcp_server_new("mcp-conformance-test-server", "1.0.0");
	if (srv == NULL) {
		mcp_log(MCP_LOG_ERR, "setup: out of memory");
		return 1;
	}
	rc = setup(srv);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	else
		mcp_log(MCP_LOG_ERR, "setup: %s", mcp_strerror(rc));
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
