/*
 * record.c: a shared task's record as another instance reads it from
 * Redis (src/server/taskshare.c, mcp__taskshare_load), on arbitrary
 * bytes: the record is attacker-controlled to whoever can write Redis.
 * Checked: a record taken for ours names the task asked for, has a
 * status and times a Task can show, an error with a code, open
 * requests only when it asks, and gives a Task in both eras and
 * an answer to tasks/result once it has ended; anything else is refused
 * whole (nothing leaks either way).
 */
#include "fuzz.h"

#define ID	"0123456789abcdef0123456789abcdef"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task	 t;
	struct buf	 b = { 0 };
	json_t		*hold, *o, *id;
	const char	*sid, *sub, *inst;
	int		 code;

	if (mcp__taskshare_load((const char *)data, size, ID, &t, &hold,
	    &sid, &sub, &inst) != 0)
		return 0;
	FUZZ_CHECK(strcmp(t.id, ID) == 0, "a record of another task taken");
	FUZZ_CHECK(t.status >= TASK_WORKING && t.status <= TASK_INPUT,
	    "a status out of range: %d", (int)t.status);
	FUZZ_CHECK(t.created >= 0 && t.created < 1e11 && t.updated >= 0 &&
	    t.updated < 1e11 && t.ttl_ms >= 0, "times out of range");
	FUZZ_CHECK(sid != NULL && inst != NULL && strlen(inst) == 8,
	    "a record with no session or instance");
	FUZZ_CHECK(t.error == NULL || json_integer_value(json_object_get(
	    t.error, "code")) != 0, "an error of code 0 taken (no error)");
	FUZZ_CHECK(t.inputs == NULL || (t.status == TASK_INPUT && t.era),
	    "open requests on a task that asks nothing");
	o = mcp__task_json(&t);
	FUZZ_CHECK(o != NULL, "no Task from a record taken");
	json_decref(o);
	o = mcp__task_json_era(&t, 1);
	FUZZ_CHECK(o != NULL, "no 2026-07-28 Task from a record taken");
	json_decref(o);
	if (mcp__task_terminal(&t)) {
		id = json_integer(7);
		FUZZ_CHECK(mcp__task_answer(&t, id, &b, &code) == MCP_OK &&
		    b.len > 0, "no tasks/result answer for an ended task");
		json_decref(id);
		mcp__buf_free(&b);
	}
	(void)sub;
	mcp__taskshare_unload(&t, hold);
	return 0;
}
