/* notes-server.c: notes in memory, served over MCP (test/notes.sh runs it) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcp.h>

#define NOTE	"id integer, title string, body string, tags [string]"
#define ID	"id integer(1..) 'The note''s id'"

static mcp_server	*srv;
static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static json_t		*notes;		/* "id": {NOTE}, oldest first; locked */
static json_int_t	 last;		/* the last id given; locked */

static void
add_note(mcp_call *call)
{
	json_t		*n = json_deep_copy(mcp_call_args(call)); /* + its id */
	char		 key[24];
	json_int_t	 id;

	pthread_mutex_lock(&lock);
	snprintf(key, sizeof(key), "%lld", (long long)(id = last + 1));
	if (json_object_set_new(n, "id", json_integer(id)) == 0 &&
	    json_object_set_new(notes, key, json_incref(n)) == 0) {
		last = id;	/* only now: the ids stay dense */
		mcp_result_json_new(call, json_pack("{s:I}", "id", id));
	} else
		mcp_result_error(call, "out of memory");
	pthread_mutex_unlock(&lock);
	json_decref(n);
	mcp_resource_notify_updated(srv, "notes://all");
}

static void
one_note(mcp_call *call)
{
	int	 del = strcmp(mcp_call_tool(call), "delete_note") == 0;
	char	 uri[32] = "notes://";
	json_t	*n;

	snprintf(uri + 8, 24, "%lld", mcp_arg_int(call, "id"));
	pthread_mutex_lock(&lock);
	n = json_object_get(notes, uri + 8);
	if ((n = del ? json_incref(n) : json_deep_copy(n)) != NULL && del) {
		json_object_del(notes, uri + 8);
		mcp_resource_notify_updated(srv, uri);	/* queued: cheap */
		mcp_resource_notify_updated(srv, "notes://all");
	}
	pthread_mutex_unlock(&lock);
	if (n == NULL)
		mcp_result_errorf(call, "id: no note %s", uri + 8);
	else
		mcp_result_json_new(call, n);
}

static void
list_notes(mcp_call *call)
{
	const char	*tag = mcp_arg_str(call, "tag"), *id;
	json_t		*l = json_array(), *n, *tags, *t;
	json_int_t	 total = 0, max = mcp_arg_int(call, "limit");
	size_t		 i;

	pthread_mutex_lock(&lock);
	json_object_foreach(notes, id, n) {
		json_array_foreach((tags = json_object_get(n, "tags")), i, t)
			if (tag != NULL &&
			    strcmp(json_string_value(t), tag) == 0)
				break;
		if ((tag == NULL || i < json_array_size(tags)) && total++ < max)
			json_array_append_new(l, json_deep_copy(n));
	}
	pthread_mutex_unlock(&lock);
	mcp_result_json_new(call, json_pack("{s:o, s:I}", "notes", l, "total",
	    total));
}

/* notes://all, notes://{id}: JSON text; summarize_notes: a request. */
static void
dump(mcp_call *call)
{
	const char	*id = mcp_call_var(call, "id");
	const char	*style = mcp_call_var(call, "style");
	char		*s;

	pthread_mutex_lock(&lock);
	s = json_dumps(id != NULL ? json_object_get(notes, id) : notes, 0);
	pthread_mutex_unlock(&lock);
	if (s == NULL)
		mcp_result_rpc_error(call, MCP_RPC_RESOURCE_NOT_FOUND,
		    "no such note");
	else if (mcp_call_prompt(call) != NULL)
		mcp_result_textf(call, "Summarize these notes, %s: %s",
		    style != NULL ? style : "briefly", s);
	else
		mcp_result_text(call, s);
	free(s);
}

static void
complete_id(mcp_call *call)
{
	const char	*arg, *typed, *id;
	json_t		*n;

	mcp_call_complete_arg(call, &arg, &typed);
	pthread_mutex_lock(&lock);
	json_object_foreach(notes, id, n)	/* the ids that start so */
		if (strcmp(arg, "id") == 0 && strstr(id, typed) == id)
			mcp_result_completion(call, id);
	pthread_mutex_unlock(&lock);
}

int
main(int argc, char *argv[])
{
	int	 rc;

	notes = json_object();	/* NULL: each add_note is out of memory */
	srv = mcp_server_new("notes-server", "1.0.0");
	mcp_tool_register(srv, "add_note", "A new note.", "title string(1..200)"
	    " 'The title', body string 'The text', tags [string(1..32)](..10,"
	    " unique) = [] 'Words to find it by'", add_note, NULL, NULL);
	mcp_tool_set_output_schema(srv, "add_note", "id integer");
	mcp_tool_register(srv, "get_note", "A note.", ID, one_note, NULL, NULL);
	mcp_tool_set_output_schema(srv, "get_note", NOTE);
	mcp_tool_register(srv, "list_notes", "Lists notes, oldest first.",
	    "tag? string(1..32) 'Only those with this tag', limit "
	    "integer(1..100) = 20 'At most this many'", list_notes, NULL, NULL);
	mcp_tool_set_output_schema(srv, "list_notes",
	    "notes [{" NOTE "}], total integer 'How many match'");
	mcp_tool_register(srv, "delete_note", "Deletes a note; gives it.", ID,
	    one_note, NULL, NULL);
	mcp_tool_set_output_schema(srv, "delete_note", NOTE);
	mcp_resource_register(srv, "notes://all", "notes", "Every note.",
	    "application/json", dump, NULL, NULL);
	mcp_resource_template_register(srv, "notes://{id}", "note", "A note.",
	    "application/json", dump, NULL, NULL);
	mcp_completion_set(srv, complete_id, NULL, NULL);
	mcp_prompt_register(srv, "summarize_notes", "Asks for a summary.",
	    dump, NULL, NULL);
	mcp_prompt_add_argument(srv, "summarize_notes", "style", "Tone", 0);
	rc = mcp_server_main(srv, argc, argv);
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
