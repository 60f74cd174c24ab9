/*
 * conformance-server.c: every fixture of the official MCP conformance
 * suite (see CONFORMANCE.md sections 4 and 5): the test_* tools, the
 * json_schema_2020_12_tool, the test:// resources and template, and the
 * test_* prompts with completion of arg1. Uses the public API only and
 * mcp_server_main for the standard command line. Built by the Makefile
 * as build/conformance-server; exercised by test/conformance-fixtures.sh.
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
static const char schema_2020_12[] =
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
    "\"type\":\"object\",\"$defs\":{\"address\":{\"type\":\"object\","
    "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":"
    "{\"type\":\"string\"}}}},\"properties\":{\"name\":{\"type\":"
    "\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"}},"
    "\"additionalProperties\":false}";

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

static int
setup(mcp_server *srv)
{
	size_t	i;
	int	rc = MCP_OK;

	for (i = 0; rc == MCP_OK && i < sizeof(tools) / sizeof(tools[0]); i++)
		rc = mcp_tool_register(srv, tools[i].name,
		    tools[i].description, tools[i].schema, tools[i].fn, NULL,
		    NULL);
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
