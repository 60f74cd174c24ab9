/*
 * registry.c: the tools. They live in a table (table.c), which keeps
 * their registration order, for tools/list and its cursors, and finds
 * them by name. Any thread may register or remove tools, so the table
 * has a mutex; a tool is reference-counted, so a call already running
 * keeps its tool alive after it is removed. Schemas are parsed and
 * compiled once, here.
 */
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

int
mcp__registry_new(struct registry *r)
{
	memset(r, 0, sizeof(*r));
	mcp__table_init(&r->tools);
	if (pthread_mutex_init(&r->lock, NULL) != 0)
		return MCP_ESYS;
	return MCP_OK;
}

static void
tool_free(struct tool *t)
{
	if (t->udata_free != NULL)
		t->udata_free(t->udata);
	free(t->name);
	free(t->title);
	free(t->description);
	json_decref(t->input_schema);
	json_decref(t->output_schema);
	json_decref(t->annotations);
	json_decref(t->icons);
	mcp__schema_free(t->in);
	mcp__schema_free(t->out);
	mcp__xheader_free(t->xh, t->nxh);
	free(t->stats);
	free(t);
}

void
mcp__tool_unref(struct tool *t)
{
	if (t != NULL && atomic_fetch_sub(&t->refs, 1) == 1)
		tool_free(t);
}

/* The entry is the tool's first member, so the two pointers are one. */
static void
tool_drop(struct entry *e)
{
	mcp__tool_unref((struct tool *)e);
}

void
mcp__registry_free(struct registry *r)
{
	mcp__table_clear(&r->tools, tool_drop);
	pthread_mutex_destroy(&r->lock);
}

/* Lock held. */
static struct tool *
lookup(struct registry *r, const char *name)
{
	return (struct tool *)mcp__table_find(&r->tools, name);
}

struct tool *
mcp__registry_get(struct registry *r, const char *name)
{
	struct tool	*t;

	pthread_mutex_lock(&r->lock);
	t = lookup(r, name);
	if (t != NULL)
		atomic_fetch_add(&t->refs, 1);
	pthread_mutex_unlock(&r->lock);
	return t;
}

/*
 * Parses TEXT, JSON text of an object schema or a declaration
 * (mcp_args(7)): JSON when it opens with '{'. Compiles it. Returns the
 * schema (a new reference) and the compiled form, and in *DECL (when
 * not NULL) TOOL_DECLARED, or'ed with TOOL_DEFAULTS when it declares
 * defaults to be filled in; or NULL after logging why.
 */
static json_t *
parse_schema(const char *tool, const char *what, const char *text,
    struct mcp__schema **out, int *decl)
{
	json_t		*j;
	json_error_t	 e;
	char		 err[200];
	int		 dflt = 0, how = 0;

	if (text[strspn(text, " \t\r\n")] == '{') {
		j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
		if (j == NULL) {
			mcp_log(MCP_LOG_ERR, "tool %s: %s is not JSON: %s",
			    tool, what, e.text);
			return NULL;
		}
	} else if ((j = mcp__decl_parse(text, &dflt, err,
	    sizeof(err))) == NULL) {
		mcp_log(MCP_LOG_ERR, "tool %s: bad %s declaration: %s", tool,
		    what, err);
		return NULL;
	} else
		how = TOOL_DECLARED | (dflt ? TOOL_DEFAULTS : 0);
	*out = mcp__schema_compile(j, 1, err, sizeof(err));
	if (*out == NULL) {
		mcp_log(MCP_LOG_ERR, "tool %s: bad %s: %s", tool, what, err);
		json_decref(j);
		return NULL;
	}
	if (decl != NULL)
		*decl = how;
	return j;
}

static int
valid_name(const char *name)
{
	size_t	 n = strlen(name);

	/* 2025-11-25 tool-name guidance: 1-128 of [A-Za-z0-9_.-]. */
	if (n == 0 || n > 128)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVW"
	    "XYZ0123456789_-.") == n;
}

static int
tool_add(mcp_server *srv, const char *name, const char *description,
    const char *input_schema, mcp_tool_fn fn, void *udata,
    void (*udata_free)(void *))
{
	struct tool	*t;
	char		 err[240];
	int		 rc = MCP_ENOMEM;

	if (srv == NULL)
		goto fail;
	rc = MCP_EINVAL;
	if (name == NULL || fn == NULL || !valid_name(name)) {
		mcp_log(MCP_LOG_ERR, "mcp_tool_register: bad name or callback");
		goto fail;
	}
	rc = MCP_ENOMEM;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto fail;
	atomic_init(&t->refs, 1);
	atomic_init(&t->flags, 0);
	t->fn = fn;
	t->name = strdup(name);
	t->description = description ? strdup(description) : NULL;
	if (t->name == NULL || (description != NULL && t->description == NULL))
		goto fail_tool;
	t->input_schema = parse_schema(name, "input schema",
	    input_schema ? input_schema : "{\"type\":\"object\"}", &t->in,
	    &t->decl);
	if (t->input_schema == NULL) {
		rc = MCP_EINVAL;
		goto fail_tool;
	}
	rc = mcp__xheader_scan(t->input_schema, &t->xh, &t->nxh, err,
	    sizeof(err));
	if (rc != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "tool %s: bad input schema: %s", name,
		    err);
		goto fail_tool;
	}
	t->e.key = t->name;
	/*
	 * The tool owns the user data from here on; if the name is taken
	 * it gives it back, so that fail frees it once.
	 */
	t->udata = udata;
	t->udata_free = udata_free;
	pthread_mutex_lock(&srv->reg.lock);
	rc = mcp__table_add(&srv->reg.tools, &t->e);
	if (rc == MCP_OK)
		srv->reg.count++;
	pthread_mutex_unlock(&srv->reg.lock);
	if (rc != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "mcp_tool_register: %s exists", name);
		t->udata_free = NULL;
		goto fail_tool;
	}
	mcp__notify_changed(srv, MCP_CHANGED_TOOLS);
	return MCP_OK;

fail_tool:
	tool_free(t);
fail:
	if (udata_free != NULL)
		udata_free(udata);
	return rc;
}

static int
tool_remove(mcp_server *srv, const char *name)
{
	struct tool	*t;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (name == NULL)
		return MCP_EINVAL;
	pthread_mutex_lock(&srv->reg.lock);
	t = (struct tool *)mcp__table_remove(&srv->reg.tools, name);
	if (t != NULL)
		srv->reg.count--;
	pthread_mutex_unlock(&srv->reg.lock);
	if (t == NULL)
		return MCP_ENOENT;
	mcp__tool_unref(t);
	mcp__notify_changed(srv, MCP_CHANGED_TOOLS);
	return MCP_OK;
}

/* Applies SET to the named tool under the lock. */
static int
tool_update(mcp_server *srv, const char *name,
    int (*set)(struct tool *, const char *), const char *arg)
{
	struct tool	*t;
	int		 rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (name == NULL)
		return MCP_EINVAL;
	pthread_mutex_lock(&srv->reg.lock);
	t = lookup(&srv->reg, name);
	rc = t == NULL ? MCP_ENOENT : set(t, arg);
	pthread_mutex_unlock(&srv->reg.lock);
	return rc;
}

static int
set_title(struct tool *t, const char *s)
{
	char	*p = NULL;

	if (s != NULL && (p = strdup(s)) == NULL)
		return MCP_ENOMEM;
	free(t->title);
	t->title = p;
	return MCP_OK;
}

static int
set_output_schema(struct tool *t, const char *s)
{
	struct mcp__schema	*c = NULL;
	json_t			*j = NULL;

	if (s != NULL) {
		j = parse_schema(t->name, "output schema", s, &c, NULL);
		if (j == NULL)
			return MCP_EINVAL;
	}
	/*
	 * A worker may be validating against the old schema right now, so
	 * the old one is kept until the tool goes; output schemas are set
	 * once at setup in practice, so this costs nothing real.
	 */
	if (t->out != NULL) {
		mcp__schema_free(c);
		json_decref(j);
		mcp_log(MCP_LOG_ERR, "tool %s: output schema already set",
		    t->name);
		return MCP_ESTATE;
	}
	t->out = c;
	t->output_schema = j;
	return MCP_OK;
}

static int
set_annotations(struct tool *t, const char *s)
{
	json_t		*j = NULL;
	json_error_t	 e;

	if (s != NULL) {
		j = json_loads(s, JSON_REJECT_DUPLICATES, &e);
		if (!json_is_object(j)) {
			json_decref(j);
			mcp_log(MCP_LOG_ERR, "tool %s: annotations must be "
			    "a JSON object", t->name);
			return MCP_EINVAL;
		}
	}
	json_decref(t->annotations);
	t->annotations = j;
	return MCP_OK;
}

static int
set_icons(struct tool *t, const char *s)
{
	json_t	*j = NULL;

	if (s != NULL && (j = mcp__icons_parse(s, t->name)) == NULL)
		return MCP_EINVAL;
	json_decref(t->icons);
	t->icons = j;
	return MCP_OK;
}

static int
tool_timeout(mcp_server *srv, const char *name, int ms)
{
	struct tool	*t;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (name == NULL || ms < 0)
		return MCP_EINVAL;
	pthread_mutex_lock(&srv->reg.lock);
	t = lookup(&srv->reg, name);
	if (t != NULL)
		atomic_store(&t->timeout_ms, ms);
	pthread_mutex_unlock(&srv->reg.lock);
	return t != NULL ? MCP_OK : MCP_ENOENT;
}

/*
 * The flags are read once per call, on the loop, when the call starts:
 * a call already running goes on where it started.
 */
static int
tool_flags(mcp_server *srv, const char *name, unsigned flags)
{
	struct tool	*t;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (name == NULL || (flags & ~(unsigned)(MCP_TOOL_LOOP |
	    MCP_TOOL_TASK_OPTIONAL | MCP_TOOL_TASK_REQUIRED |
	    MCP_TOOL_INPUT_FIRST)) != 0 ||
	    (flags & MCP_TOOL_TASKS) == MCP_TOOL_TASKS ||
	    ((flags & MCP_TOOL_INPUT_FIRST) && !(flags & MCP_TOOL_TASKS)))
		return MCP_EINVAL;
	pthread_mutex_lock(&srv->reg.lock);
	t = lookup(&srv->reg, name);
	if (t != NULL)
		atomic_store(&t->flags, flags);
	pthread_mutex_unlock(&srv->reg.lock);
	return t != NULL ? MCP_OK : MCP_ENOENT;
}


/* The Tool object as the negotiated VERSION knows it. Lock held. */
static json_t *
tool_json(const struct entry *e, int version)
{
	const struct tool	*t = (const struct tool *)e;
	json_t			*o;
	unsigned		 tasks;
	int			 tasks_on = version & REG_TASKS_ON;

	version &= ~REG_TASKS_ON;

	o = json_pack("{s:s, s:O}", "name", t->name, "inputSchema",
	    t->input_schema);
	if (o == NULL)
		return NULL;
	if (t->title != NULL && version >= MCP_V20250618)
		json_object_set_new(o, "title", json_string(t->title));
	if (t->description != NULL)
		json_object_set_new(o, "description",
		    json_string(t->description));
	if (t->output_schema != NULL && version >= MCP_V20250618)
		json_object_set(o, "outputSchema", t->output_schema);
	if (t->annotations != NULL && version >= MCP_V20250326)
		json_object_set(o, "annotations", t->annotations);
	if (t->icons != NULL && version >= MCP_V20251125)
		json_object_set(o, "icons", t->icons);
	tasks = atomic_load_explicit(&t->flags, memory_order_relaxed) &
	    MCP_TOOL_TASKS;
	/* Only where the session has the tasks capability: a client that
	 * sees "required" without it cannot call the tool at all. */
	if (tasks != 0 && tasks_on)
		json_object_set_new(o, "execution", json_pack("{s:s}",
		    "taskSupport", tasks == MCP_TOOL_TASK_REQUIRED ?
		    "required" : "optional"));
	return o;
}

/* Does any tool allow tasks (MCP_TOOL_TASK_*)? Any thread. */
int
mcp__registry_tasks(struct registry *r)
{
	struct entry	*e;
	int		 any = 0;

	pthread_mutex_lock(&r->lock);
	for (e = r->tools.head; e != NULL && !any; e = e->next)
		any = (atomic_load(&((struct tool *)e)->flags) &
		    MCP_TOOL_TASKS) != 0;
	pthread_mutex_unlock(&r->lock);
	return any;
}

/* tools/list; the cursors are table.c's. */
json_t *
mcp__registry_list(struct registry *r, const char *cursor, int limit,
    int version, int *bad)
{
	json_t	*res;

	pthread_mutex_lock(&r->lock);
	res = mcp__table_list(&r->tools, "tools", cursor, limit, version,
	    tool_json, bad);
	pthread_mutex_unlock(&r->lock);
	return res;
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp__setup_keep(mcp_server *srv, const char *fn, const char *what, int rc)
{
	int	 none = MCP_OK;

	if (rc == MCP_OK || srv == NULL || atomic_load(&srv->setup_over))
		return rc;
	/* Unregistering what is not there leaves nothing wrong behind. */
	if (rc == MCP_ENOENT && strstr(fn, "_unregister") != NULL)
		return rc;
	mcp_log(MCP_LOG_ERR, "%s%s%s%s: %s: the server will not start", fn,
	    what != NULL ? "(\"" : "", what != NULL ? what : "",
	    what != NULL ? "\")" : "", mcp_strerror(rc));
	atomic_fetch_add(&srv->setup_fails, 1);
	if (atomic_compare_exchange_strong(&srv->setup_rc, &none, rc))
		atomic_store(&srv->setup_fn, fn);
	return rc;
}

int
mcp__setup_check(mcp_server *srv, const char *who)
{
	const char	*fn;
	int		 rc, n;

	atomic_store(&srv->setup_over, 1);
	if ((rc = atomic_load(&srv->setup_rc)) == MCP_OK)
		return MCP_OK;
	n = atomic_load(&srv->setup_fails);
	fn = atomic_load(&srv->setup_fn);	/* stored just after rc */
	mcp_log(MCP_LOG_ERR, "%s: not starting: %d setup call%s failed, the "
	    "first %s: %s", who, n, n == 1 ? "" : "s",
	    fn != NULL ? fn : "one", mcp_strerror(rc));
	return rc;
}

int
mcp_server_clear_error(mcp_server *srv)
{
	int	 rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	rc = atomic_exchange(&srv->setup_rc, MCP_OK);
	atomic_store(&srv->setup_fails, 0);
	atomic_store(&srv->setup_fn, NULL);
	return rc;
}

int
mcp_tool_register(mcp_server *srv, const char *name, const char *description,
    const char *input_schema, mcp_tool_fn fn, void *udata,
    void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, name, tool_add(srv, name,
	    description, input_schema, fn, udata, udata_free));
}

int
mcp_tool_unregister(mcp_server *srv, const char *name)
{
	return mcp__setup_keep(srv, __func__, name, tool_remove(srv, name));
}

int
mcp_tool_set_timeout(mcp_server *srv, const char *name, int ms)
{
	return mcp__setup_keep(srv, __func__, name,
	    tool_timeout(srv, name, ms));
}

int
mcp_tool_set_flags(mcp_server *srv, const char *name, unsigned flags)
{
	return mcp__setup_keep(srv, __func__, name,
	    tool_flags(srv, name, flags));
}

int
mcp_tool_set_title(mcp_server *srv, const char *name, const char *title)
{
	return mcp__setup_keep(srv, __func__, name,
	    tool_update(srv, name, set_title, title));
}

int
mcp_tool_set_output_schema(mcp_server *srv, const char *name,
    const char *schema)
{
	return mcp__setup_keep(srv, __func__, name,
	    tool_update(srv, name, set_output_schema, schema));
}

int
mcp_tool_set_annotations(mcp_server *srv, const char *name,
    const char *annotations)
{
	return mcp__setup_keep(srv, __func__, name,
	    tool_update(srv, name, set_annotations, annotations));
}

int
mcp_tool_set_icons(mcp_server *srv, const char *name, const char *icons)
{
	return mcp__setup_keep(srv, __func__, name,
	    tool_update(srv, name, set_icons, icons));
}
