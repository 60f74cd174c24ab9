/*
 * features.c: resources, resource templates, prompts and completion. The
 * three lists are tables (table.c), as the tools are (registry.c):
 * registration order for the lists and their cursors, a hash by key,
 * reference counts so that a call keeps its entry alive after it is
 * removed, and one mutex for all three, because any thread may add or
 * remove entries while the server runs. List changes and
 * resources/updated requests may come from any thread too: they are
 * queued under a second mutex and sent by notify_cb on the loop thread,
 * which alone knows the sessions. So are the messages sent outside any
 * call (mcp_server_log(3)), to every session or to one named by its id:
 * the loop lists the initialized sessions by id under that mutex, so
 * that another thread can tell a session that is gone (MCP_ENOENT)
 * without touching one. The read, get and complete callbacks run on the
 * workers, in call.c, which builds the whole response there.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static const char *const kind_words[FEAT_NKINDS] = {
	"resource", "resource template", "prompt"
};

/* ---- RFC 6570 level 1 ------------------------------------------------- */

static int
var_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/*
 * Level 1 only: literals and {name}, names of [A-Za-z0-9_.], and a
 * literal between two variables (else the split is ambiguous).
 */
int
mcp__template_valid(const char *t)
{
	const char	*p;
	int		 after_var = 0;

	if (t == NULL || *t == '\0')
		return 0;
	for (p = t; *p != '\0'; p++) {
		if (*p == '}')
			return 0;
		if (*p != '{') {
			after_var = 0;
			continue;
		}
		if (after_var)
			return 0;
		p++;
		if (!var_char(*p))
			return 0;
		while (var_char(*p))
			p++;
		if (*p != '}')
			return 0;
		after_var = 1;
	}
	return 1;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The value of one variable, URI bytes [S, S+N): it may not be empty nor
 * hold '/', '?' or '#' (a level-1 expansion encodes them); %XX is
 * decoded, and a bad escape, an encoded NUL or a value that is not UTF-8
 * once decoded fails the match, so that a callback never sees a
 * variable it cannot read. Adds it to VARS as NAME (NAMELEN bytes) when
 * VARS is not NULL.
 */
static int
take_var(const char *name, size_t namelen, const char *s, size_t n,
    json_t *vars)
{
	char	*v, key[128];
	size_t	 i, j;
	int	 hi, lo, ok = 1;

	if (n == 0 || namelen >= sizeof(key))
		return 0;
	v = malloc(n + 1);
	if (v == NULL)
		return 0;
	for (i = j = 0; i < n && ok; i++) {
		if (s[i] == '/' || s[i] == '?' || s[i] == '#') {
			ok = 0;
		} else if (s[i] != '%') {
			v[j++] = s[i];
		} else if (i + 2 >= n) {
			ok = 0;		/* a truncated escape */
		} else {
			hi = hexval(s[i + 1]);
			lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				ok = 0;
			v[j++] = (char)(hi * 16 + lo);
			i += 2;
		}
	}
	v[j] = '\0';
	if (ok && !mcp__utf8_valid(v, j))
		ok = 0;
	if (ok && vars != NULL) {
		memcpy(key, name, namelen);
		key[namelen] = '\0';
		if (json_object_set_new(vars, key, json_string(v)) != 0)
			ok = 0;
	}
	free(v);
	return ok;
}

int
mcp__template_match(const char *t, const char *uri, json_t *vars)
{
	const char	*name, *u = uri, *end;
	size_t		 namelen;

	while (*t != '\0') {
		if (*t != '{') {
			if (*t++ != *u++)
				return 0;
			continue;
		}
		name = ++t;
		while (*t != '}')
			t++;
		namelen = (size_t)(t - name);
		t++;
		/* The value runs to the next literal character, or the end. */
		if (*t == '\0')
			end = u + strlen(u);
		else if ((end = strchr(u, *t)) == NULL)
			return 0;
		if (!take_var(name, namelen, u, (size_t)(end - u), vars))
			return 0;
		u = end;
	}
	return *u == '\0';
}

/* ---- the tables ------------------------------------------------------- */

int
mcp__features_new(struct mcp_server *srv)
{
	struct features	*fs = &srv->feat;
	int		 i;

	memset(fs, 0, sizeof(*fs));
	for (i = 0; i < FEAT_NKINDS; i++)
		mcp__table_init(&fs->lists[i]);
	mcp__table_init(&fs->addrs);
	atomic_init(&fs->live, 0);
	if (pthread_mutex_init(&fs->lock, NULL) != 0)
		return MCP_ESYS;
	if (pthread_mutex_init(&fs->nlock, NULL) != 0) {
		pthread_mutex_destroy(&fs->lock);
		return MCP_ESYS;
	}
	return MCP_OK;
}

static void
feat_free(struct feat *f)
{
	if (f->udata_free != NULL)
		f->udata_free(f->udata);
	free(f->key);
	free(f->name);
	free(f->title);
	free(f->description);
	free(f->mime);
	json_decref(f->args);
	json_decref(f->annotations);
	json_decref(f->icons);
	free(f);
}

void
mcp__feat_unref(struct feat *f)
{
	if (f != NULL && atomic_fetch_sub(&f->refs, 1) == 1)
		feat_free(f);
}

/* The entry is the feat's first member, so the two pointers are one. */
static void
feat_drop(struct entry *e)
{
	mcp__feat_unref((struct feat *)e);
}

static void
notice_free(struct notice *n)
{
	free(n->sid);
	free(n->text);
	free(n);
}

/* NOTICES, and what is coalesced, never sent: the loop has stopped. */
static void
notices_clear(struct features *fs)
{
	struct upd	*u, *unext;
	struct notice	*n, *nnext;

	for (u = fs->uhead; u != NULL; u = unext) {
		unext = u->next;
		free(u);
	}
	fs->uhead = NULL;
	for (n = fs->nhead; n != NULL; n = nnext) {
		nnext = n->next;
		notice_free(n);
	}
	fs->nhead = fs->ntail = NULL;
	fs->nnotices = 0;
	fs->changed = 0;
}

void
mcp__features_free(struct mcp_server *srv)
{
	struct features	*fs = &srv->feat;
	int		 i;

	for (i = 0; i < FEAT_NKINDS; i++)
		mcp__table_clear(&fs->lists[i], feat_drop);
	notices_clear(fs);
	if (fs->complete_free != NULL)
		fs->complete_free(fs->complete_udata);
	if (fs->roots_free != NULL)
		fs->roots_free(fs->roots_udata);
	pthread_mutex_destroy(&fs->lock);
	pthread_mutex_destroy(&fs->nlock);
}

/* Lock held. */
static struct feat *
lookup(struct mcp_server *srv, enum feat_kind kind, const char *key)
{
	return (struct feat *)mcp__table_find(&srv->feat.lists[kind], key);
}

struct feat *
mcp__feat_get(struct mcp_server *srv, enum feat_kind kind, const char *key)
{
	struct feat	*f;

	pthread_mutex_lock(&srv->feat.lock);
	f = lookup(srv, kind, key);
	if (f != NULL)
		atomic_fetch_add(&f->refs, 1);
	pthread_mutex_unlock(&srv->feat.lock);
	return f;
}

struct feat *
mcp__feat_resolve(struct mcp_server *srv, const char *uri)
{
	struct feat	*f;
	struct entry	*e;

	pthread_mutex_lock(&srv->feat.lock);
	f = lookup(srv, FEAT_RESOURCE, uri);
	for (e = srv->feat.lists[FEAT_TEMPLATE].head; f == NULL && e != NULL;
	    e = e->next)
		if (mcp__template_match(e->key, uri, NULL))
			f = (struct feat *)e;
	if (f != NULL)
		atomic_fetch_add(&f->refs, 1);
	pthread_mutex_unlock(&srv->feat.lock);
	return f;
}

static char *
dup_or_null(const char *s, int *oom)
{
	char	*p;

	if (s == NULL)
		return NULL;
	p = strdup(s);
	if (p == NULL)
		*oom = 1;
	return p;
}

/*
 * Adds an entry of KIND under KEY. The strings are copied; UDATA is the
 * entry's from here on, and is freed at once if this fails. Any thread.
 */
static int
feat_add(mcp_server *srv, enum feat_kind kind, const char *key,
    const char *name, const char *description, const char *mime,
    mcp_tool_fn fn, void *udata, void (*udata_free)(void *))
{
	struct feat	*f;
	int		 rc = MCP_ENOMEM, oom = 0;

	if (srv == NULL)
		goto fail;
	rc = MCP_EINVAL;
	if (key == NULL || *key == '\0' || name == NULL || *name == '\0' ||
	    fn == NULL || (kind == FEAT_TEMPLATE &&
	    !mcp__template_valid(key))) {
		mcp_log(MCP_LOG_ERR, "%s register: bad %s, name or callback",
		    kind_words[kind], kind == FEAT_PROMPT ? "name" : "uri");
		goto fail;
	}
	rc = MCP_ENOMEM;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		goto fail;
	atomic_init(&f->refs, 1);
	f->kind = kind;
	f->fn = fn;
	f->size = -1;
	f->key = dup_or_null(key, &oom);
	f->name = dup_or_null(name, &oom);
	f->description = dup_or_null(description, &oom);
	f->mime = dup_or_null(mime, &oom);
	if (kind == FEAT_PROMPT && (f->args = json_array()) == NULL)
		oom = 1;
	if (oom)
		goto fail_feat;
	f->e.key = f->key;
	/*
	 * The entry owns the user data from here on; if the key is taken it
	 * gives it back, so that fail frees it once.
	 */
	f->udata = udata;
	f->udata_free = udata_free;
	pthread_mutex_lock(&srv->feat.lock);
	rc = mcp__table_add(&srv->feat.lists[kind], &f->e);
	pthread_mutex_unlock(&srv->feat.lock);
	if (rc != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "%s register: %s exists",
		    kind_words[kind], key);
		f->udata_free = NULL;
		goto fail_feat;
	}
	mcp__notify_changed(srv, kind == FEAT_PROMPT ? MCP_CHANGED_PROMPTS :
	    MCP_CHANGED_RESOURCES);
	return MCP_OK;

fail_feat:
	feat_free(f);
fail:
	if (udata_free != NULL)
		udata_free(udata);
	return rc;
}

static int
feat_remove(mcp_server *srv, enum feat_kind kind, const char *key)
{
	struct feat	*f;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (key == NULL)
		return MCP_EINVAL;
	pthread_mutex_lock(&srv->feat.lock);
	f = (struct feat *)mcp__table_remove(&srv->feat.lists[kind], key);
	pthread_mutex_unlock(&srv->feat.lock);
	if (f == NULL)
		return MCP_ENOENT;
	mcp__feat_unref(f);
	mcp__notify_changed(srv, kind == FEAT_PROMPT ? MCP_CHANGED_PROMPTS :
	    MCP_CHANGED_RESOURCES);
	return MCP_OK;
}

/* Sets or removes (TITLE NULL) the title, under the lock. */
static int
feat_set_title(mcp_server *srv, enum feat_kind kind, const char *key,
    const char *title)
{
	struct feat	*f;
	char		*p = NULL;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (key == NULL)
		return MCP_EINVAL;
	if (title != NULL && (p = strdup(title)) == NULL)
		return MCP_ENOMEM;
	pthread_mutex_lock(&srv->feat.lock);
	f = lookup(srv, kind, key);
	if (f != NULL) {
		free(f->title);
		f->title = p;
	}
	pthread_mutex_unlock(&srv->feat.lock);
	if (f == NULL) {
		free(p);
		return MCP_ENOENT;
	}
	return MCP_OK;
}

/*
 * Replaces (or with V NULL removes) the annotations or the icons of the
 * entry, taking V, under the lock; a list being built holds its own
 * reference to the old value.
 */
static int
feat_set_json(mcp_server *srv, enum feat_kind kind, const char *key,
    int icons, json_t *v)
{
	struct feat	*f;
	json_t		**slot;

	pthread_mutex_lock(&srv->feat.lock);
	f = lookup(srv, kind, key);
	if (f != NULL) {
		slot = icons ? &f->icons : &f->annotations;
		json_decref(*slot);
		*slot = v;
		v = NULL;
	}
	pthread_mutex_unlock(&srv->feat.lock);
	json_decref(v);
	return f != NULL ? MCP_OK : MCP_ENOENT;
}

static int
feat_set_annotations(mcp_server *srv, enum feat_kind kind, const char *key,
    int audience, double priority, const char *last_modified)
{
	json_t	*a;
	int	 rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (key == NULL)
		return MCP_EINVAL;
	rc = mcp__annotations_make(audience, priority, last_modified, &a);
	if (rc != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "%s %s: bad annotations",
		    kind_words[kind], key);
		return rc;
	}
	return feat_set_json(srv, kind, key, 0, a);
}

static int
feat_set_icons(mcp_server *srv, enum feat_kind kind, const char *key,
    const char *icons)
{
	json_t	*v = NULL;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (key == NULL)
		return MCP_EINVAL;
	if (icons != NULL && (v = mcp__icons_parse(icons, key)) == NULL)
		return MCP_EINVAL;
	return feat_set_json(srv, kind, key, 1, v);
}

/* ---- annotations and icons, shared with registry.c and call.c ------- */

/* N digits at S as a number, or -1. */
static int
digits(const char *s, int n)
{
	int	 v = 0;

	while (n-- > 0) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s++ - '0');
	}
	return v;
}

/*
 * An RFC 3339 date-time, "2025-01-12T15:00:58Z": the ISO 8601 form the
 * schema's example shows and the one clients check (the TypeScript SDK
 * refuses a result whose lastModified is a bare date, or has no zone).
 * Seconds and their fraction are optional; the zone is Z or +hh:mm.
 */
static int
iso8601(const char *s)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30,
	    31, 30, 31 };
	int	 y, m, d;

	/* Each test reads only past characters the one before accepted. */
	y = digits(s, 4);
	if (y < 0 || s[4] != '-')
		return 0;
	m = digits(s + 5, 2);
	if (m < 1 || m > 12 || s[7] != '-')
		return 0;
	d = digits(s + 8, 2);
	if (d < 1 || d > mdays[m - 1] || (m == 2 && d == 29 &&
	    (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0))))
		return 0;
	if (s[10] != 'T' || digits(s + 11, 2) < 0 ||
	    digits(s + 11, 2) > 23 || s[13] != ':' ||
	    digits(s + 14, 2) < 0 || digits(s + 14, 2) > 59)
		return 0;
	s += 16;
	if (*s == ':') {
		if (digits(s + 1, 2) < 0 || digits(s + 1, 2) > 59)
			return 0;
		s += 3;
		if (*s == '.') {
			if (digits(++s, 1) < 0)
				return 0;
			while (*s >= '0' && *s <= '9')
				s++;
		}
	}
	if (*s == 'Z')
		return s[1] == '\0';
	return (*s == '+' || *s == '-') && digits(s + 1, 2) >= 0 &&
	    s[3] == ':' && digits(s + 4, 2) >= 0 && s[6] == '\0';
}

int
mcp__annotations_make(int audience, double priority,
    const char *last_modified, json_t **out)
{
	json_t	*a, *who;

	*out = NULL;
	if ((audience & ~(MCP_AUDIENCE_USER | MCP_AUDIENCE_ASSISTANT)) != 0 ||
	    isnan(priority) || priority > 1 ||
	    (last_modified != NULL && !iso8601(last_modified)))
		return MCP_EINVAL;
	if (audience == 0 && priority < 0 && last_modified == NULL)
		return MCP_OK;
	a = json_object();
	if (a == NULL)
		return MCP_ENOMEM;
	if (audience != 0) {
		who = json_array();
		if (who == NULL || json_object_set_new(a, "audience", who) != 0)
			goto fail;
		if ((audience & MCP_AUDIENCE_USER) &&
		    json_array_append_new(who, json_string("user")) != 0)
			goto fail;
		if ((audience & MCP_AUDIENCE_ASSISTANT) &&
		    json_array_append_new(who, json_string("assistant")) != 0)
			goto fail;
	}
	if (priority >= 0 &&
	    json_object_set_new(a, "priority", json_real(priority)) != 0)
		goto fail;
	if (last_modified != NULL && json_object_set_new(a, "lastModified",
	    json_string(last_modified)) != 0)
		goto fail;
	*out = a;
	return MCP_OK;
fail:
	json_decref(a);
	return MCP_ENOMEM;
}

/*
 * audience and priority are in every version we speak (2024-11-05 calls
 * them Annotated); lastModified came with 2025-06-18, and an older
 * client validating strictly would refuse it.
 */
int
mcp__annotations_for(const json_t *a, int version, json_t **out)
{
	json_t	*c;

	*out = NULL;
	if (a == NULL)
		return MCP_OK;
	if (version >= MCP_V20250618 ||
	    json_object_get(a, "lastModified") == NULL) {
		*out = json_incref((json_t *)a);
		return MCP_OK;
	}
	c = json_copy((json_t *)a);
	if (c == NULL)
		return MCP_ENOMEM;
	json_object_del(c, "lastModified");
	if (json_object_size(c) == 0)
		json_decref(c);
	else
		*out = c;
	return MCP_OK;
}

/* One Icon: src, and optionally mimeType, sizes and theme; no more. */
static int
icon_ok(json_t *icon)
{
	const char	*k, *theme;
	json_t		*v, *e;
	size_t		 i;

	if (!json_is_object(icon))
		return 0;
	if (json_string_length(json_object_get(icon, "src")) == 0)
		return 0;
	json_object_foreach(icon, k, v) {
		if (strcmp(k, "src") == 0 || strcmp(k, "mimeType") == 0) {
			if (!json_is_string(v))
				return 0;
		} else if (strcmp(k, "sizes") == 0) {
			if (!json_is_array(v))
				return 0;
			json_array_foreach(v, i, e)
				if (!json_is_string(e))
					return 0;
		} else if (strcmp(k, "theme") == 0) {
			theme = json_string_value(v);
			if (theme == NULL || (strcmp(theme, "light") != 0 &&
			    strcmp(theme, "dark") != 0))
				return 0;
		} else
			return 0;	/* a field no version knows */
	}
	return 1;
}

json_t *
mcp__icons_parse(const char *text, const char *who)
{
	json_t		*v, *e;
	json_error_t	 err;
	size_t		 i;

	v = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	if (!json_is_array(v)) {
		mcp_log(MCP_LOG_ERR, "%s: icons must be a JSON array%s%s", who,
		    v == NULL ? ": " : "", v == NULL ? err.text : "");
		json_decref(v);
		return NULL;
	}
	json_array_foreach(v, i, e)
		if (!icon_ok(e)) {
			mcp_log(MCP_LOG_ERR, "%s: icon %zu is not an Icon "
			    "{src, mimeType?, sizes?, theme?}", who, i);
			json_decref(v);
			return NULL;
		}
	return v;
}

/* ---- public registration ---------------------------------------------- */

int
mcp_resource_register(mcp_server *srv, const char *uri, const char *name,
    const char *description, const char *mime_type, mcp_read_fn fn,
    void *udata, void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, uri,
	    feat_add(srv, FEAT_RESOURCE, uri, name, description, mime_type, fn,
	    udata, udata_free));
}

int
mcp_resource_unregister(mcp_server *srv, const char *uri)
{
	return mcp__setup_keep(srv, __func__, uri,
	    feat_remove(srv, FEAT_RESOURCE, uri));
}

int
mcp_resource_set_title(mcp_server *srv, const char *uri, const char *title)
{
	return mcp__setup_keep(srv, __func__, uri,
	    feat_set_title(srv, FEAT_RESOURCE, uri, title));
}

static int
resource_size(mcp_server *srv, const char *uri, long long size)
{
	struct feat	*f;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (uri == NULL)
		return MCP_EINVAL;
	pthread_mutex_lock(&srv->feat.lock);
	f = lookup(srv, FEAT_RESOURCE, uri);
	if (f != NULL)
		f->size = size < 0 ? -1 : size;
	pthread_mutex_unlock(&srv->feat.lock);
	return f != NULL ? MCP_OK : MCP_ENOENT;
}

int
mcp_resource_set_annotations(mcp_server *srv, const char *uri, int audience,
    double priority, const char *last_modified)
{
	return mcp__setup_keep(srv, __func__, uri,
	    feat_set_annotations(srv, FEAT_RESOURCE, uri, audience, priority,
	    last_modified));
}

int
mcp_resource_set_icons(mcp_server *srv, const char *uri, const char *icons)
{
	return mcp__setup_keep(srv, __func__, uri,
	    feat_set_icons(srv, FEAT_RESOURCE, uri, icons));
}

int
mcp_resource_template_register(mcp_server *srv, const char *uri_template,
    const char *name, const char *description, const char *mime_type,
    mcp_read_fn fn, void *udata, void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, uri_template,
	    feat_add(srv, FEAT_TEMPLATE, uri_template, name, description,
	    mime_type, fn, udata, udata_free));
}

int
mcp_resource_template_unregister(mcp_server *srv, const char *uri_template)
{
	return mcp__setup_keep(srv, __func__, uri_template,
	    feat_remove(srv, FEAT_TEMPLATE, uri_template));
}

int
mcp_resource_template_set_title(mcp_server *srv, const char *uri_template,
    const char *title)
{
	return mcp__setup_keep(srv, __func__, uri_template,
	    feat_set_title(srv, FEAT_TEMPLATE, uri_template, title));
}

int
mcp_resource_template_set_annotations(mcp_server *srv,
    const char *uri_template, int audience, double priority,
    const char *last_modified)
{
	return mcp__setup_keep(srv, __func__, uri_template,
	    feat_set_annotations(srv, FEAT_TEMPLATE, uri_template, audience,
	    priority, last_modified));
}

int
mcp_resource_template_set_icons(mcp_server *srv, const char *uri_template,
    const char *icons)
{
	return mcp__setup_keep(srv, __func__, uri_template,
	    feat_set_icons(srv, FEAT_TEMPLATE, uri_template, icons));
}

int
mcp_prompt_register(mcp_server *srv, const char *name,
    const char *description, mcp_prompt_fn fn, void *udata,
    void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, name,
	    feat_add(srv, FEAT_PROMPT, name, name, description, NULL, fn,
	    udata, udata_free));
}

int
mcp_prompt_unregister(mcp_server *srv, const char *name)
{
	return mcp__setup_keep(srv, __func__, name,
	    feat_remove(srv, FEAT_PROMPT, name));
}

int
mcp_prompt_set_title(mcp_server *srv, const char *name, const char *title)
{
	return mcp__setup_keep(srv, __func__, name,
	    feat_set_title(srv, FEAT_PROMPT, name, title));
}

int
mcp_prompt_set_icons(mcp_server *srv, const char *name, const char *icons)
{
	return mcp__setup_keep(srv, __func__, name,
	    feat_set_icons(srv, FEAT_PROMPT, name, icons));
}

static int
prompt_argument(mcp_server *srv, const char *prompt,
    const char *name, const char *description, int required)
{
	struct feat	*f;
	json_t		*a, *e;
	size_t		 i;
	int		 rc = MCP_OK;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (prompt == NULL || name == NULL || *name == '\0')
		return MCP_EINVAL;
	a = json_pack("{s:s}", "name", name);
	if (a == NULL)
		return MCP_ENOMEM;
	if (description != NULL)
		json_object_set_new(a, "description", json_string(description));
	if (required)
		json_object_set_new(a, "required", json_true());
	pthread_mutex_lock(&srv->feat.lock);
	f = lookup(srv, FEAT_PROMPT, prompt);
	if (f == NULL)
		rc = MCP_ENOENT;
	json_array_foreach(f != NULL ? f->args : NULL, i, e)
		if (strcmp(json_string_value(json_object_get(e, "name")),
		    name) == 0)
			rc = MCP_EEXIST;
	if (rc == MCP_OK && json_array_append(f->args, a) != 0)
		rc = MCP_ENOMEM;
	pthread_mutex_unlock(&srv->feat.lock);
	json_decref(a);
	if (rc == MCP_OK)
		mcp__notify_changed(srv, MCP_CHANGED_PROMPTS);
	return rc;
}

static int
completion(mcp_server *srv, mcp_complete_fn fn, void *udata,
    void (*udata_free)(void *))
{
	struct features	*fs;

	if (srv == NULL) {
		if (udata_free != NULL)
			udata_free(udata);
		return MCP_ENOMEM;
	}
	fs = &srv->feat;
	if (srv->running) {
		mcp_log(MCP_LOG_ERR, "mcp_completion_set: server running");
		if (udata_free != NULL)
			udata_free(udata);
		return MCP_ESTATE;
	}
	if (fs->complete_free != NULL)
		fs->complete_free(fs->complete_udata);
	fs->complete_fn = fn;
	fs->complete_udata = fn != NULL ? udata : NULL;
	fs->complete_free = fn != NULL ? udata_free : NULL;
	if (fn == NULL && udata_free != NULL)
		udata_free(udata);
	return MCP_OK;
}

int
mcp__prompt_check(struct mcp_server *srv, struct feat *p, const json_t *args,
    char *missing, size_t len)
{
	const char	*name;
	json_t		*e;
	size_t		 i;
	int		 rc = MCP_OK;

	pthread_mutex_lock(&srv->feat.lock);
	json_array_foreach(p->args, i, e) {
		name = json_string_value(json_object_get(e, "name"));
		if (!json_is_true(json_object_get(e, "required")) ||
		    json_is_string(json_object_get(args, name)))
			continue;
		snprintf(missing, len, "%s", name);
		rc = MCP_EINVAL;
		break;
	}
	pthread_mutex_unlock(&srv->feat.lock);
	return rc;
}

/* ---- lists ------------------------------------------------------------ */

/* The entry as the negotiated VERSION knows it. Lock held. */
static json_t *
feat_json(const struct entry *e, int version)
{
	const struct feat	*f = (const struct feat *)e;
	json_t			*o, *args, *a;
	size_t			 i;

	if (f->kind == FEAT_PROMPT)
		o = json_pack("{s:s}", "name", f->name);
	else
		o = json_pack("{s:s, s:s}", f->kind == FEAT_RESOURCE ? "uri" :
		    "uriTemplate", f->key, "name", f->name);
	if (o == NULL)
		return NULL;
	if (f->title != NULL && version >= MCP_V20250618)
		json_object_set_new(o, "title", json_string(f->title));
	if (f->description != NULL)
		json_object_set_new(o, "description",
		    json_string(f->description));
	if (f->mime != NULL)
		json_object_set_new(o, "mimeType", json_string(f->mime));
	if (f->kind == FEAT_RESOURCE && f->size >= 0)
		json_object_set_new(o, "size", json_integer(f->size));
	if (f->kind == FEAT_PROMPT && json_array_size(f->args) > 0) {
		args = json_array();
		json_array_foreach(f->args, i, a)
			json_array_append_new(args, json_copy(a));
		json_object_set_new(o, "arguments", args);
	}
	if (mcp__annotations_for(f->annotations, version, &a) != MCP_OK ||
	    (a != NULL && json_object_set_new(o, "annotations", a) != 0)) {
		json_decref(o);
		return NULL;
	}
	if (f->icons != NULL && version >= MCP_V20251125)
		json_object_set(o, "icons", f->icons);
	return o;
}

json_t *
mcp__feat_list(struct mcp_server *srv, enum feat_kind kind,
    const char *cursor, int limit, int version, int *bad)
{
	static const char *const member[FEAT_NKINDS] = {
		"resources", "resourceTemplates", "prompts"
	};
	json_t	*res;

	pthread_mutex_lock(&srv->feat.lock);
	res = mcp__table_list(&srv->feat.lists[kind], member[kind], cursor,
	    limit, version, feat_json, bad);
	pthread_mutex_unlock(&srv->feat.lock);
	return res;
}

/* ---- notifications, from any thread to the loop ---------------------- */

void
mcp__notify_changed(struct mcp_server *srv, int what)
{
	if (!atomic_load(&srv->feat.live))
		return;		/* no session yet, or none any more */
	pthread_mutex_lock(&srv->feat.nlock);
	srv->feat.changed |= what;
	pthread_mutex_unlock(&srv->feat.nlock);
	ev_async_send(srv->loop, &srv->feat.notify);
}

int
mcp_resource_notify_updated(mcp_server *srv, const char *uri)
{
	struct upd	*u, **p;
	size_t		 n;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (uri == NULL)
		return MCP_EINVAL;
	if (!atomic_load(&srv->feat.live))
		return MCP_OK;
	n = strlen(uri);
	u = malloc(sizeof(*u) + n + 1);
	if (u == NULL)
		return MCP_ENOMEM;
	u->next = NULL;
	memcpy(u->uri, uri, n + 1);
	pthread_mutex_lock(&srv->feat.nlock);
	for (p = &srv->feat.uhead; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->uri, uri) == 0)
			break;
	if (*p == NULL) {
		*p = u;
		u = NULL;
	}
	pthread_mutex_unlock(&srv->feat.nlock);
	free(u);		/* already queued: one notification is enough */
	ev_async_send(srv->loop, &srv->feat.notify);
	return MCP_OK;
}

static void
send_note(struct session *s, const char *method, const char *uri)
{
	struct buf	 b = { 0 };
	json_t		*params = NULL;

	if (uri != NULL && (params = json_pack("{s:s}", "uri", uri)) == NULL)
		return;
	if (mcp__rpc_notification(&b, method, params) == MCP_OK)
		mcp__session_sendbuf(s, &b);
	mcp__buf_free(&b);
	json_decref(params);
}

static void
send_changed(struct session *s, int changed)
{
	if (changed & MCP_CHANGED_TOOLS)
		send_note(s, "notifications/tools/list_changed", NULL);
	if (changed & MCP_CHANGED_RESOURCES)
		send_note(s, "notifications/resources/list_changed", NULL);
	if (changed & MCP_CHANGED_PROMPTS)
		send_note(s, "notifications/prompts/list_changed", NULL);
}

/* Loop: N to S, if S may hear it: a log message at or above the level
 * S set (logging/setLevel), resources/updated only if S subscribed. */
static void
deliver(struct session *s, const struct notice *n)
{
	if (s->closed || !s->initialized)
		return;
	switch (n->kind) {
	case NOTICE_LOG:
		if (n->level <= s->log_level)
			mcp__session_send(s, n->text, n->len);
		break;
	case NOTICE_CHANGED:
		send_changed(s, n->lists);
		break;
	case NOTICE_UPDATED:
		if (json_object_get(s->subs, n->text) != NULL)
			send_note(s, "notifications/resources/updated",
			    n->text);
		break;
	}
}

#define SESSION_OF(e)	((struct session *)(void *)((char *)(e) - \
			    offsetof(struct session, addr)))

/* Loop: sends what was queued to the sessions that should hear it. */
static void
notify_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	struct mcp_server	*srv = w->data;
	struct features		*fs = &srv->feat;
	struct session		*s;
	struct upd		*uhead, *u;
	struct notice		*nhead, *n;
	struct entry		*e;
	int			 changed;

	(void)loop;
	(void)revents;
	pthread_mutex_lock(&fs->nlock);
	changed = fs->changed;
	fs->changed = 0;
	uhead = fs->uhead;
	fs->uhead = NULL;
	nhead = fs->nhead;
	fs->nhead = fs->ntail = NULL;
	fs->nnotices = 0;
	pthread_mutex_unlock(&fs->nlock);
	/* 2026-07-28: to the subscriptions/listen that asked (listen.c). */
	if (srv->listens != NULL) {
		if (changed != 0)
			mcp__listen_changed(srv, changed);
		for (u = uhead; u != NULL; u = u->next)
			mcp__listen_updated(srv, u->uri);
	}
	for (s = srv->sessions; s != NULL; s = s->snext) {
		if (s->closed || !s->initialized)
			continue;
		send_changed(s, changed);
		for (u = uhead; u != NULL; u = u->next)
			if (json_object_get(s->subs, u->uri) != NULL)
				send_note(s, "notifications/resources/updated",
				    u->uri);
	}
	while ((u = uhead) != NULL) {
		uhead = u->next;
		free(u);
	}
	while ((n = nhead) != NULL) {
		nhead = n->next;
		if (n->sid == NULL) {
			for (s = srv->sessions; s != NULL; s = s->snext)
				deliver(s, n);
		} else {
			/* Only the loop adds or removes: no lock to read. */
			e = mcp__table_find(&fs->addrs, n->sid);
			if (e != NULL)
				deliver(SESSION_OF(e), n);
			else
				MCP_LOG(MCP_LOG_DEBUG, "session %.40s ended "
				    "before its message could be sent",
				    n->sid);
		}
		notice_free(n);
	}
}

void
mcp__features_start(struct mcp_server *srv)
{
	ev_async_init(&srv->feat.notify, notify_cb);
	srv->feat.notify.data = srv;
	ev_async_start(srv->loop, &srv->feat.notify);
	atomic_store(&srv->feat.live, 1);
}

/* What is still queued is dropped: there are no sessions any more. */
void
mcp__features_stop(struct mcp_server *srv)
{
	pthread_mutex_lock(&srv->feat.nlock);
	atomic_store(&srv->feat.live, 0);
	notices_clear(&srv->feat);
	pthread_mutex_unlock(&srv->feat.nlock);
	ev_async_stop(srv->loop, &srv->feat.notify);
}

/* ---- sessions by id, and messages outside any call ---------------------- */

_Static_assert(MCP_LIST_TOOLS == MCP_CHANGED_TOOLS &&
    MCP_LIST_RESOURCES == MCP_CHANGED_RESOURCES &&
    MCP_LIST_PROMPTS == MCP_CHANGED_PROMPTS, "MCP_LIST_* are MCP_CHANGED_*");

void
mcp__notify_listen(struct session *s)
{
	struct features	*fs = &s->srv->feat;

	if (s->listed || s->implicit)
		return;
	s->addr.key = mcp__session_addr(s);
	pthread_mutex_lock(&fs->nlock);
	s->listed = mcp__table_add(&fs->addrs, &s->addr) == MCP_OK;
	pthread_mutex_unlock(&fs->nlock);
	if (!s->listed)
		mcp_log(MCP_LOG_WARN, "session id %.40s is taken: messages "
		    "sent to it go to the other session", s->addr.key);
}

void
mcp__notify_forget(struct session *s)
{
	struct features	*fs = &s->srv->feat;

	if (!s->listed)
		return;
	pthread_mutex_lock(&fs->nlock);
	(void)mcp__table_remove(&fs->addrs, s->addr.key);
	pthread_mutex_unlock(&fs->nlock);
	s->listed = 0;
}

/*
 * Any thread: queues N (taken) for the loop. MCP_ENOENT when N names a
 * session that is not listed (never was, or has ended; none while the
 * server is not running); a message to every session while the server
 * is not running is MCP_OK and goes nowhere. The wake-up is sent under
 * the lock, so that it never reaches a watcher mcp__features_stop has
 * stopped.
 */
static int
queue(struct mcp_server *srv, struct notice *n)
{
	struct features	*fs = &srv->feat;
	int		 rc = MCP_OK;

	pthread_mutex_lock(&fs->nlock);
	if (n->sid != NULL && mcp__table_find(&fs->addrs, n->sid) == NULL)
		rc = MCP_ENOENT;
	else if (!atomic_load(&fs->live))
		rc = MCP_OK;		/* nobody to tell */
	else if (fs->nnotices >= MCP_MAX_NOTICES)
		rc = MCP_ESTATE;
	else {
		if (fs->ntail != NULL)
			fs->ntail->next = n;
		else
			fs->nhead = n;
		fs->ntail = n;
		fs->nnotices++;
		ev_async_send(srv->loop, &fs->notify);
		n = NULL;
	}
	pthread_mutex_unlock(&fs->nlock);
	if (n != NULL)
		notice_free(n);
	if (rc == MCP_ESTATE)
		MCP_LOG(MCP_LOG_WARN, "notification dropped: %d are waiting "
		    "for the loop already", MCP_MAX_NOTICES);
	return rc;
}

/* A new notice of KIND for SID (copied; NULL: every session). */
static struct notice *
notice_new(enum notice_kind kind, const char *sid)
{
	struct notice	*n;

	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->kind = kind;
	if (sid != NULL && (n->sid = strdup(sid)) == NULL) {
		free(n);
		return NULL;
	}
	return n;
}

static int
server_logv(mcp_server *srv, const char *sid, int level, const char *logger,
    const char *fmt, va_list ap)
{
	struct buf	 b = { 0 };
	struct notice	*n;
	char		 text[2048];
	int		 sys, rc;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (fmt == NULL)
		return MCP_EINVAL;
	vsnprintf(text, sizeof(text), fmt, ap);
	mcp_log(level, "%s%s%s", logger != NULL ? logger : "",
	    logger != NULL ? ": " : "", text);
	sys = mcp__level_syslog(level);
	n = notice_new(NOTICE_LOG, sid);
	rc = n != NULL ? mcp__log_note(&b, sys, logger, text) : MCP_ENOMEM;
	if (rc == MCP_OK && (n->text = mcp__buf_steal(&b, &n->len)) == NULL)
		rc = MCP_ENOMEM;
	mcp__buf_free(&b);
	if (rc != MCP_OK) {
		if (n != NULL)
			notice_free(n);
		return rc;
	}
	n->level = sys;
	return queue(srv, n);
}

int
mcp_server_log(mcp_server *srv, int level, const char *logger,
    const char *fmt, ...)
{
	va_list	 ap;
	int	 rc;

	va_start(ap, fmt);
	rc = server_logv(srv, NULL, level, logger, fmt, ap);
	va_end(ap);
	return rc;
}

int
mcp_server_log_to(mcp_server *srv, const char *session_id, int level,
    const char *logger, const char *fmt, ...)
{
	va_list	 ap;
	int	 rc;

	if (srv != NULL && session_id == NULL)
		return MCP_EINVAL;
	va_start(ap, fmt);
	rc = server_logv(srv, session_id, level, logger, fmt, ap);
	va_end(ap);
	return rc;
}

int
mcp_server_notify_list_changed(mcp_server *srv, int lists)
{
	if (srv == NULL)
		return MCP_ENOMEM;
	if (lists == 0 || (lists & ~(MCP_LIST_TOOLS | MCP_LIST_RESOURCES |
	    MCP_LIST_PROMPTS)) != 0)
		return MCP_EINVAL;
	mcp__notify_changed(srv, lists);
	return MCP_OK;
}

int
mcp_server_notify_list_changed_to(mcp_server *srv, const char *session_id,
    int lists)
{
	struct notice	*n;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (session_id == NULL || lists == 0 || (lists & ~(MCP_LIST_TOOLS |
	    MCP_LIST_RESOURCES | MCP_LIST_PROMPTS)) != 0)
		return MCP_EINVAL;
	n = notice_new(NOTICE_CHANGED, session_id);
	if (n == NULL)
		return MCP_ENOMEM;
	n->lists = lists;
	return queue(srv, n);
}

int
mcp_resource_notify_updated_to(mcp_server *srv, const char *session_id,
    const char *uri)
{
	struct notice	*n;

	if (srv == NULL)
		return MCP_ENOMEM;
	if (session_id == NULL || uri == NULL)
		return MCP_EINVAL;
	n = notice_new(NOTICE_UPDATED, session_id);
	if (n == NULL)
		return MCP_ENOMEM;
	if ((n->text = strdup(uri)) == NULL) {
		notice_free(n);
		return MCP_ENOMEM;
	}
	return queue(srv, n);
}

/* ---- the setup calls: a failure before the server runs is kept and
 * reported by mcp_server_run and mcp_server_main (mcp__setup_keep) -- */

int
mcp_resource_set_size(mcp_server *srv, const char *uri, long long size)
{
	return mcp__setup_keep(srv, __func__, uri,
	    resource_size(srv, uri, size));
}

int
mcp_prompt_add_argument(mcp_server *srv, const char *prompt,
    const char *name, const char *description, int required)
{
	return mcp__setup_keep(srv, __func__, prompt,
	    prompt_argument(srv, prompt, name, description, required));
}

int
mcp_completion_set(mcp_server *srv, mcp_complete_fn fn, void *udata,
    void (*udata_free)(void *))
{
	return mcp__setup_keep(srv, __func__, NULL,
	    completion(srv, fn, udata, udata_free));
}
