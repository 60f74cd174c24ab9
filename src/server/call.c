/*
 * call.c: the call context, which is the only code that runs on the
 * worker threads. mcp__call_run validates the arguments, runs the user's
 * callback (a tool's, or a resource's read, a prompt's get, the
 * completion), and serialises the whole JSON-RPC response, so the loop
 * thread only has to copy bytes. A call belongs to exactly one worker
 * while it runs; the only field others touch is the atomic cancel flag.
 * A callback may defer its call (mcp_call_defer): from its return on,
 * the call belongs to whichever thread of the user's holds it, one at a
 * time, and the answer is serialised on the thread that calls
 * mcp_call_finish, which hands the call back to the loop.
 */
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

_Thread_local struct mcp_call *mcp__loop_call;

/*
 * A call and its arguments read in place are made and freed once a
 * request: each thread keeps the last of each it freed for the next, a
 * pointer swap where glibc's malloc and free cost about 130
 * instructions a pair (a loop call: 5,389 -> 5,188). What a thread
 * keeps is freed as it exits (the key's destructor), and the loop's as
 * it frees its server (mcp__call_spares_free). The same goes for the
 * buffer an answer is made in: a new call's content starts in the last
 * answer's bytes (on a pool, the loop's: the worker fills it, the loop
 * frees it).
 */
struct spares {
	struct mcp_call		*call;
	struct mcp__flat_args	*flat;
	size_t			 flat_cap;	/* bytes of FLAT */
	char			*out;
	size_t			 out_cap;	/* bytes of OUT */
	int			 keyed;		/* the destructor knows it */
};

static _Thread_local struct spares spares;
static pthread_key_t	 spares_key;
static pthread_once_t	 spares_once = PTHREAD_ONCE_INIT;
static int		 spares_ok;

static void
spares_free(void *p)
{
	struct spares	*sp = p;

	free(sp->call);
	free(sp->flat);
	free(sp->out);
	sp->call = NULL;
	sp->flat = NULL;
	sp->out = NULL;
	sp->flat_cap = sp->out_cap = 0;
}

void
mcp__call_spares_free(void)
{
	spares_free(&spares);
}

static void
spares_init(void)
{
	spares_ok = pthread_key_create(&spares_key, spares_free) == 0;
}

/* Can this thread keep a spare? Once it has been made known. */
static int
spares_keyed(void)
{
	if (spares.keyed)
		return 1;
	pthread_once(&spares_once, spares_init);
	if (!spares_ok || pthread_setspecific(spares_key, &spares) != 0)
		return 0;
	spares.keyed = 1;
	return 1;
}

/* Frees F (CAP bytes), or keeps it as this thread's spare. */
static void
flat_put(struct mcp__flat_args *f, size_t cap)
{
	if (f == NULL)
		return;
	if (cap > spares.flat_cap && spares_keyed()) {
		free(spares.flat);
		spares.flat = f;
		spares.flat_cap = cap;
	} else
		free(f);
}

/*
 * Frees the buffer P of CAP bytes (0: malloc knows), or keeps it as this
 * thread's spare for the next call's content. One of the usual sizes
 * only: a big answer's buffer goes back to malloc.
 */
static void
out_put(char *p, size_t cap)
{
	if (p == NULL)
		return;
	if (spares.out == NULL && spares_keyed()) {
		if (cap == 0)
			cap = malloc_usable_size(p);
		if (cap >= 256 && cap <= 16384) {
			spares.out = p;
			spares.out_cap = cap;
			return;
		}
	}
	free(p);
}

/* An arguments block of at least CAP bytes; its size in *GOT. */
static struct mcp__flat_args *
flat_get(size_t cap, size_t *got)
{
	struct mcp__flat_args *f = spares.flat;

	if (f != NULL && spares.flat_cap >= cap) {
		*got = spares.flat_cap;
		spares.flat = NULL;
		spares.flat_cap = 0;
		return f;
	}
	*got = cap;
	return malloc(cap);
}

struct mcp_call *
mcp__call_new(void)
{
	static const struct mcp_call zero;
	struct mcp_call	*c;

	/*
	 * Not calloc (nor malloc and memset, which the compiler makes one):
	 * glibc's calloc passes by the thread's cache, and a call cost a
	 * trip to the arena both ways, about 350 instructions.
	 */
	if ((c = spares.call) != NULL)
		spares.call = NULL;
	else
		c = malloc(sizeof(*c));
	if (c != NULL) {
		memcpy(c, &zero, sizeof(*c));
		atomic_init(&c->cancelled, 0);
		atomic_init(&c->defer, CALL_DEFER_NONE);
		if (spares.out != NULL) {
			c->content.data = spares.out;
			c->content.cap = spares.out_cap;
			spares.out = NULL;
			spares.out_cap = 0;
		}
	}
	return c;
}

void
mcp__call_free(struct mcp_call *c)
{
	if (c == NULL)
		return;
	json_decref(c->id);
	if (c->ptext != NULL)
		free(c->ptext);
	json_decref(c->params);
	json_decref(c->meta);
	flat_put(c->flat, c->flat_cap);
	out_put(c->content.data, c->content.cap);
	json_decref(c->structured);
	mcp__mrtr_free(c->mrtr);
	mcp__tool_unref(c->tool);
	mcp__feat_unref(c->feat);
	mcp__identity_unref(c->ident);
	/* Most are NULL on a tools/call: free(NULL) is a PLT call each. */
	if (c->description != NULL || c->method != NULL ||
	    c->rpc_msg != NULL) {
		free(c->description);
		free(c->method);
		free(c->rpc_msg);
	}
	out_put(c->out, 0);
	if (spares.call == NULL && spares_keyed())
		spares.call = c;
	else
		free(c);
}

void *
mcp_call_udata(mcp_call *call)
{
	if (call->kind == CALL_TOOL)
		return call->tool->udata;
	if (call->kind == CALL_COMPLETE)
		return call->srv->feat.complete_udata;
	if (call->kind == CALL_ROOTS)
		return call->srv->feat.roots_udata;
	return call->feat->udata;
}

const char *
mcp_call_tool(mcp_call *call)
{
	return call->kind == CALL_TOOL ? call->tool->name : NULL;
}

json_t *
mcp__call_args(struct mcp_call *c)
{
	const struct mcp__flat	*f;
	const struct mcp__slot	*sl;
	json_t			*o, *v;
	size_t			 k;

	if (c->args != NULL || c->flat == NULL)
		return c->args;
	/* In the order the client wrote them, as a parse would have. */
	f = mcp__schema_flat(c->tool->in);
	if ((o = json_object()) == NULL)
		return NULL;
	for (k = 0; k < c->flat->nmembers; k++) {
		sl = &c->flat->slot[c->flat->order[k]];
		switch (sl->type) {
		case MCP__SLOT_STR:
			v = json_stringn_nocheck(sl->s, sl->len);
			break;
		case MCP__SLOT_INT:
			v = json_integer((json_int_t)sl->i);
			break;
		case MCP__SLOT_REAL:
			v = json_real(sl->d);
			break;
		default:
			v = json_boolean(sl->type == MCP__SLOT_TRUE);
			break;
		}
		if (json_object_set_new_nocheck(o, f->name[c->flat->order[k]],
		    v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	/* Freed with params, as the arguments parsed from a span are. */
	c->params = c->args = o;
	return o;
}

json_t *
mcp_call_args(mcp_call *call)
{
	return mcp__call_args(call);
}

/*
 * Who is calling. c->info is the session's struct mcp_session, complete
 * before the call was queued and unchanged since (session.c); c->ident
 * is the identity of the request that made the call. Both outlive the
 * call, so these read them without a lock.
 */
mcp_session *
mcp_call_session(mcp_call *call)
{
	return call->info;
}

void *
mcp_call_session_data(mcp_call *call)
{
	return call->info != NULL ? call->info->data : NULL;
}

const char *
mcp_call_identity(mcp_call *call)
{
	return call->ident != NULL ? call->ident->subject : NULL;
}

const json_t *
mcp_call_identity_claims(mcp_call *call)
{
	return call->ident != NULL ? call->ident->claims : NULL;
}

int
mcp_call_cancelled(const mcp_call *call)
{
	return atomic_load_explicit(&((struct mcp_call *)call)->cancelled,
	    memory_order_relaxed);
}

/*
 * Appending to a result is all or nothing: a block that fails half way
 * (out of memory) is taken back, so that the answer stays JSON whatever
 * the callback does after the error.
 */
void
mcp__content_mark(const mcp_call *call, struct content_mark *m)
{
	m->len = call->content.len;
	m->block_at = call->block_at;
	m->open_msg = call->open_msg;
	m->annotated = call->annotated;
	m->has_text = call->has_text;
}

int
mcp__content_undo(mcp_call *call, const struct content_mark *m, int rc)
{
	call->content.len = m->len;
	call->block_at = m->block_at;
	call->open_msg = m->open_msg;
	call->annotated = m->annotated;
	call->has_text = m->has_text;
	return rc;
}

/*
 * Starts a block in the content list: a comma after the first. In a
 * prompt, each block is the content of one message, which is closed
 * when the next one starts or when the answer is written. Inline: its
 * callers' HEAD is a literal, whose length the compiler knows.
 */
static inline __attribute__((always_inline)) int
open_block(mcp_call *call, const char *head)
{
	if (call->open_msg && mcp__buf_addc(&call->content, '}') != MCP_OK)
		return MCP_ENOMEM;
	call->open_msg = 0;
	if (call->content.len > 0 &&
	    mcp__buf_addc(&call->content, ',') != MCP_OK)
		return MCP_ENOMEM;
	if (call->kind == CALL_PROMPT) {
		if (mcp__buf_adds(&call->content, "{\"role\":\"") != MCP_OK ||
		    mcp__buf_adds(&call->content, call->role) != MCP_OK ||
		    mcp__buf_adds(&call->content, "\",\"content\":") != MCP_OK)
			return MCP_ENOMEM;
		call->open_msg = 1;
	}
	/* mcp_result_annotate reopens this block. */
	call->block_at = call->content.len;
	call->annotated = 0;
	if (mcp__buf_adds(&call->content, head) != MCP_OK)
		return MCP_ENOMEM;
	return MCP_OK;
}

static int	 add_block(mcp_call *, json_t *);

/* Content blocks go to tools and prompts only. */
#define BLOCKS_OK(call)	((call)->kind == CALL_TOOL || \
			    (call)->kind == CALL_PROMPT)

/*
 * resources/read: one contents item. URI NULL means the URI read and
 * MIME NULL the resource's type; exactly one of TEXT and B64 is set.
 */
static int
read_item(mcp_call *call, const char *uri, const char *mime,
    const char *text, size_t textlen, const char *b64)
{
	json_t	*o;

	if (uri == NULL)
		uri = call->uri;
	if (mime == NULL)
		mime = call->feat->mime;
	o = json_pack("{s:s}", "uri", uri);
	/* Out of memory, a member missing: the block is not added. */
	if (o != NULL && ((mime != NULL && json_object_set_new(o, "mimeType",
	    json_string(mime)) != 0) || json_object_set_new(o, text != NULL ?
	    "text" : "blob", text != NULL ? json_stringn(text, textlen) :
	    json_string(b64)) != 0)) {
		json_decref(o);
		o = NULL;
	}
	return add_block(call, o);
}

int
mcp_result_blob(mcp_call *call, const void *data, size_t len)
{
	char	*b64;
	int	 rc;

	if (call->kind != CALL_READ || (data == NULL && len > 0))
		return MCP_EINVAL;
	b64 = mcp__base64(data, len);
	if (b64 == NULL)
		return MCP_ENOMEM;
	rc = read_item(call, NULL, NULL, NULL, 0, b64);
	free(b64);
	return rc;
}

/* Appends a content block given as JSON, stealing B. */
static int
add_block(mcp_call *call, json_t *b)
{
	struct content_mark m;
	int		 rc;

	if (b == NULL)
		return MCP_ENOMEM;
	mcp__content_mark(call, &m);
	rc = open_block(call, "");
	if (rc == MCP_OK)
		rc = mcp__buf_addjson(&call->content, b);
	json_decref(b);
	return rc == MCP_OK ? rc : mcp__content_undo(call, &m, rc);
}

int
mcp_result_textn(mcp_call *call, const char *s, size_t len)
{
	struct content_mark m;

	if (s == NULL || call->kind == CALL_COMPLETE ||
	    call->kind == CALL_ROOTS)
		return MCP_EINVAL;
	if (call->kind == CALL_READ)
		return read_item(call, NULL, NULL, s, len, NULL);
	mcp__content_mark(call, &m);
	call->has_text = 1;
	if (open_block(call, "{\"type\":\"text\",\"text\":") != MCP_OK ||
	    mcp__buf_addstr(&call->content, s, len) != MCP_OK ||
	    mcp__buf_addc(&call->content, '}') != MCP_OK)
		return mcp__content_undo(call, &m, MCP_ENOMEM);
	return MCP_OK;
}

int
mcp_result_text(mcp_call *call, const char *s)
{
	return mcp_result_textn(call, s, s != NULL ? strlen(s) : 0);
}

static int
result_textv(mcp_call *call, const char *fmt, va_list ap)
{
	char	 small[256], *p;
	int	 n, rc;
	va_list	 ap2;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0) {
		va_end(ap2);
		return MCP_EINVAL;
	}
	if ((size_t)n < sizeof(small)) {
		va_end(ap2);
		return mcp_result_text(call, small);
	}
	p = malloc((size_t)n + 1);
	if (p == NULL) {
		va_end(ap2);
		return MCP_ENOMEM;
	}
	vsnprintf(p, (size_t)n + 1, fmt, ap2);
	va_end(ap2);
	rc = mcp_result_text(call, p);
	free(p);
	return rc;
}

int
mcp_result_textf(mcp_call *call, const char *fmt, ...)
{
	va_list	 ap;
	int	 rc;

	va_start(ap, fmt);
	rc = result_textv(call, fmt, ap);
	va_end(ap);
	return rc;
}

/* Image or audio; a session too old for audio gets a text note. */
static int
media(mcp_call *call, const char *type, const void *data, size_t len,
    const char *mime)
{
	struct content_mark m;
	char	*b64;
	int	 rc;

	if ((data == NULL && len > 0) || mime == NULL || !BLOCKS_OK(call))
		return MCP_EINVAL;
	if (strcmp(type, "audio") == 0 && call->version < MCP_V20250326)
		return mcp_result_textf(call, "[audio %s, %zu bytes: not "
		    "supported by protocol %s]", mime, len,
		    mcp__version_str(call->version));
	b64 = mcp__base64(data, len);
	if (b64 == NULL)
		return MCP_ENOMEM;
	mcp__content_mark(call, &m);
	rc = open_block(call, "{\"type\":\"");
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&call->content, type);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&call->content, "\",\"data\":\"");
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&call->content, b64);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&call->content, "\",\"mimeType\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addstr(&call->content, mime, strlen(mime));
	if (rc == MCP_OK)
		rc = mcp__buf_addc(&call->content, '}');
	free(b64);
	return rc == MCP_OK ? rc : mcp__content_undo(call, &m, rc);
}

int
mcp_result_image(mcp_call *call, const void *data, size_t len,
    const char *mime_type)
{
	return media(call, "image", data, len, mime_type);
}

int
mcp_result_audio(mcp_call *call, const void *data, size_t len,
    const char *mime_type)
{
	return media(call, "audio", data, len, mime_type);
}

/* Embedded resource; steals CONTENTS (uri, mimeType and text or blob). */
static int
resource(mcp_call *call, json_t *contents, const char *mime)
{
	if (contents == NULL)
		return MCP_ENOMEM;
	if (mime != NULL && json_object_set_new(contents, "mimeType",
	    json_string(mime)) != 0) {
		json_decref(contents);
		return MCP_ENOMEM;
	}
	return add_block(call, json_pack("{s:s, s:o}", "type", "resource",
	    "resource", contents));
}

int
mcp_result_resource_text(mcp_call *call, const char *uri,
    const char *mime_type, const char *text)
{
	if (call->kind == CALL_READ && text != NULL)
		return read_item(call, uri, mime_type, text, strlen(text), NULL);
	if (uri == NULL || text == NULL || !BLOCKS_OK(call))
		return MCP_EINVAL;
	return resource(call, json_pack("{s:s, s:s}", "uri", uri, "text",
	    text), mime_type);
}

int
mcp_result_resource_blob(mcp_call *call, const char *uri,
    const char *mime_type, const void *data, size_t len)
{
	char	*b64;
	int	 rc;

	if ((uri == NULL && call->kind != CALL_READ) ||
	    (data == NULL && len > 0) || call->kind == CALL_COMPLETE ||
	    call->kind == CALL_ROOTS)
		return MCP_EINVAL;
	b64 = mcp__base64(data, len);
	if (b64 == NULL)
		return MCP_ENOMEM;
	if (call->kind == CALL_READ) {
		rc = read_item(call, uri, mime_type, NULL, 0, b64);
		free(b64);
		return rc;
	}
	rc = resource(call, json_pack("{s:s, s:s}", "uri", uri, "blob", b64),
	    mime_type);
	free(b64);
	return rc;
}

int
mcp_result_resource_link(mcp_call *call, const char *uri, const char *name,
    const char *description, const char *mime_type)
{
	json_t	*o;

	if (uri == NULL || name == NULL || !BLOCKS_OK(call))
		return MCP_EINVAL;
	if (call->version < MCP_V20250618)
		return mcp_result_textf(call, "%s: %s", name, uri);
	o = json_pack("{s:s, s:s, s:s}", "type", "resource_link", "uri", uri,
	    "name", name);
	if (o != NULL && ((description != NULL && json_object_set_new(o,
	    "description", json_string(description)) != 0) ||
	    (mime_type != NULL && json_object_set_new(o, "mimeType",
	    json_string(mime_type)) != 0))) {
		json_decref(o);
		o = NULL;
	}
	return add_block(call, o);
}

int
mcp_result_json_new(mcp_call *call, json_t *v)
{
	/*
	 * json_pack's NULL (memory, or a format that does not fit its
	 * arguments) must not become an empty success: the call fails.
	 */
	if (v == NULL) {
		mcp_log(MCP_LOG_ERR, "mcp_result_json_new: no value (out of "
		    "memory, or json_pack failed)");
		mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR,
		    "the result could not be built");
		return MCP_ENOMEM;
	}
	if (!json_is_object(v) || call->kind != CALL_TOOL) {
		/* structuredContent is an object in every version. */
		json_decref(v);
		return MCP_EINVAL;
	}
	json_decref(call->structured);
	call->structured = v;
	return MCP_OK;
}

int
mcp_result_json(mcp_call *call, json_t *v)
{
	if (v == NULL)
		return MCP_EINVAL;
	/* A deep copy: the caller may go on changing V on any thread. */
	return mcp_result_json_new(call, json_deep_copy(v));
}

/*
 * Every block is a JSON object that ends the content buffer with its
 * closing brace (a prompt's message is closed only when the next one
 * opens), so annotating it is reopening that brace. The room is made
 * first, so that a failure leaves the block as it was.
 */
int
mcp_result_annotate(mcp_call *call, int audience, double priority,
    const char *last_modified)
{
	struct buf	 a = { 0 };
	json_t		*made, *sent;
	int		 rc;

	if (!BLOCKS_OK(call))
		return MCP_EINVAL;
	if (call->content.len <= call->block_at || call->annotated ||
	    call->content.data[call->content.len - 1] != '}')
		return MCP_ESTATE;
	rc = mcp__annotations_make(audience, priority, last_modified, &made);
	if (rc != MCP_OK)
		return rc;
	rc = mcp__annotations_for(made, call->version, &sent);
	json_decref(made);
	if (rc != MCP_OK || sent == NULL)
		return rc;		/* nothing this session knows */
	rc = mcp__buf_adds(&a, ",\"annotations\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addjson(&a, sent);
	if (rc == MCP_OK)
		rc = mcp__buf_addc(&a, '}');
	json_decref(sent);
	if (rc == MCP_OK)
		rc = mcp__buf_reserve(&call->content, a.len);
	if (rc == MCP_OK) {
		call->content.len--;
		rc = mcp__buf_add(&call->content, a.data, a.len);
		call->annotated = 1;
	}
	mcp__buf_free(&a);
	return rc;
}

int
mcp_result_error(mcp_call *call, const char *msg)
{
	/* Only a tool has isError; elsewhere an error is a JSON-RPC one. */
	if (call->kind != CALL_TOOL)
		return mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR, msg);
	call->is_error = 1;
	return mcp_result_text(call, msg != NULL ? msg : "error");
}

int
mcp_result_errorf(mcp_call *call, const char *fmt, ...)
{
	va_list	 ap;
	int	 rc;

	if (call->kind != CALL_TOOL) {
		char	 msg[512];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		return mcp_result_rpc_error(call, MCP_RPC_INTERNAL_ERROR, msg);
	}
	call->is_error = 1;
	va_start(ap, fmt);
	rc = result_textv(call, fmt, ap);
	va_end(ap);
	return rc;
}

int
mcp_result_rpc_error(mcp_call *call, int code, const char *msg)
{
	char	*p;

	p = strdup(msg != NULL ? msg : "error");
	if (p == NULL)
		return MCP_ENOMEM;
	free(call->rpc_msg);
	call->rpc_msg = p;
	call->rpc_code = code;
	return MCP_OK;
}

/*
 * A note N of CALL goes to the loop through the completion queue, ahead
 * of the call's answer; from a loop call's own callback, on the loop
 * thread, it is handled there and then, which keeps that order too.
 */
static void
hand_over(mcp_call *call, struct mcp_call *n)
{
	if (mcp__loop_call == call)
		mcp__protocol_note(n);
	else
		mcp__pool_post(call->pool, n);
}

/* Sends the message in B (taken) to the loop, ahead of the answer. */
static int
note(mcp_call *call, struct buf *b)
{
	struct mcp_call	*n;

	/* A task's call (its key is "T" and the task id): its notes say
	 * which task they belong to, in the params (B ends "}}"). */
	if (call->key[0] == 'T' && b->len >= 2) {
		b->len -= 2;
		if (mcp__buf_adds(b, ",\"_meta\":{\"io.modelcontextprotocol/"
		    "related-task\":{\"taskId\":\"") != MCP_OK ||
		    mcp__buf_adds(b, call->key + 1) != MCP_OK ||
		    mcp__buf_adds(b, "\"}}}}") != MCP_OK)
			return MCP_ENOMEM;
	}
	n = mcp__call_new();
	if (n == NULL)
		return MCP_ENOMEM;
	n->out = mcp__buf_steal(b, &n->outlen);
	if (n->out == NULL) {
		mcp__call_free(n);	/* and the spare its content holds */
		return MCP_ENOMEM;
	}
	n->note_of = call;
	hand_over(call, n);
	return MCP_OK;
}

int
mcp_call_close_stream(mcp_call *call)
{
	struct mcp_call	*n;

	if (call == NULL || call->pool == NULL)
		return MCP_EINVAL;
	n = mcp__call_new();
	if (n == NULL)
		return MCP_ENOMEM;
	n->close_stream = 1;
	n->note_of = call;
	hand_over(call, n);
	return MCP_OK;
}

int
mcp_call_progress(mcp_call *call, double progress, double total,
    const char *message)
{
	struct buf	 b = { 0 };
	int		 rc;

	if (call->progress_token == NULL || mcp_call_cancelled(call))
		return MCP_OK;		/* nobody asked, or nobody listens */
	if (!isfinite(progress) || !isfinite(total))
		return MCP_EINVAL;
	/* Progress only goes forward: anything else is dropped. */
	if (call->has_progress && progress <= call->last_progress)
		return MCP_OK;
	call->has_progress = 1;
	call->last_progress = progress;
	rc = mcp__buf_adds(&b, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/progress\",\"params\":{\"progressToken\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addjson(&b, call->progress_token);
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&b, ",\"progress\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addnum(&b, progress);
	if (rc == MCP_OK && total >= 0) {
		rc = mcp__buf_adds(&b, ",\"total\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addnum(&b, total);
	}
	/* A message only from 2025-03-26 on. */
	if (rc == MCP_OK && message != NULL &&
	    call->version >= MCP_V20250326) {
		rc = mcp__buf_adds(&b, ",\"message\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addstr(&b, message, strlen(message));
	}
	if (rc == MCP_OK)
		rc = mcp__buf_adds(&b, "}}");
	if (rc == MCP_OK)
		rc = note(call, &b);
	mcp__buf_free(&b);
	return rc;
}

const json_t *
mcp_call_progress_token(mcp_call *call)
{
	return call->progress_token;
}

int
mcp__log_note(struct buf *b, int sys, const char *logger, const char *text)
{
	int	 rc;

	rc = mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"method\":"
	    "\"notifications/message\",\"params\":{\"level\":\"");
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, mcp__level_name(sys));
	if (rc == MCP_OK && logger != NULL) {
		rc = mcp__buf_adds(b, "\",\"logger\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addstr(b, logger, strlen(logger));
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, ",\"data\":");
	} else if (rc == MCP_OK)
		rc = mcp__buf_adds(b, "\",\"data\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addstr(b, text, strlen(text));
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, "}}");
	return rc;
}

/* The log context of C, for the lines a thread writes about it. */
static void
lctx_set(struct mcp_call *c)
{
	mcp__lctx.id = c->id;
	mcp__lctx.sid = c->info != NULL ? c->info->id : NULL;
	mcp__lctx.rid = c->rid;
	mcp__lctx.tool = c->kind == CALL_TOOL ? c->tool->name : NULL;
}

int
mcp_call_log(mcp_call *call, int level, const char *logger,
    const char *fmt, ...)
{
	struct buf	 b = { 0 };
	struct log_ctx	 saved;
	char		 text[2048];
	va_list		 ap;
	int		 sys, rc;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* Tagged with the call also on a thread that is not its worker's
	 * (a deferred call). */
	saved = mcp__lctx;
	lctx_set(call);
	mcp_log(level, "%s%s%s", logger != NULL ? logger : "",
	    logger != NULL ? ": " : "", text);
	mcp__lctx = saved;
	sys = mcp__level_syslog(level);
	if (sys > call->log_level || mcp_call_cancelled(call))
		return MCP_OK;		/* below the session's level */
	rc = mcp__log_note(&b, sys, logger, text);
	if (rc == MCP_OK)
		rc = note(call, &b);
	mcp__buf_free(&b);
	return rc;
}

/*
 * The arguments hold a string with \u0000, which a plain "s" would hand
 * over cut short: walks FMT over V the way json_unpack does, taking the
 * same varargs from AP, and names the first string that "s" (not "s%",
 * which gives the length) would read. Returns 0 when there is none, or
 * when the format is one this walk does not follow (json_unpack then
 * judges it); *P moves past the value's format.
 */
static int
nul_target(const char **p, const json_t *v, va_list *ap, char *what,
    size_t len)
{
	const char	*key;
	json_t		*item;
	size_t		 i = 0;

	while (**p == ' ' || **p == ',' || **p == ':')
		(*p)++;
	switch (*(*p)++) {
	case 's':
		(void)va_arg(*ap, const char **);
		if (**p == '%') {
			(*p)++;
			(void)va_arg(*ap, size_t *);
			return 0;
		}
		if (json_is_string(v) && mcp__json_cstr(v) == NULL) {
			snprintf(what, len, "a string holds \\u0000, which "
			    "\"s\" would cut short (\"s%%\" gives its length)");
			return 1;
		}
		return 0;
	case 'n':
		return 0;
	case 'b':
	case 'i':
		(void)va_arg(*ap, int *);
		return 0;
	case 'I':
		(void)va_arg(*ap, json_int_t *);
		return 0;
	case 'f':
	case 'F':
		(void)va_arg(*ap, double *);
		return 0;
	case 'o':
	case 'O':
		(void)va_arg(*ap, json_t **);
		return 0;
	case '{':
		for (;;) {
			while (**p == ' ' || **p == ',' || **p == ':' ||
			    **p == '!' || **p == '*')
				(*p)++;
			if (**p == '}') {
				(*p)++;
				return 0;
			}
			if (**p != 's')
				return 0;	/* not followed (nor past its end) */
			(*p)++;
			key = va_arg(*ap, const char *);
			if (**p == '?')
				(*p)++;		/* optional: the same walk */
			item = key != NULL ? json_object_get(v, key) : NULL;
			if (nul_target(p, item, ap, what, len)) {
				/* Name the member: "text: a string ...". */
				size_t n = strlen(what);

				if (key != NULL && n + strlen(key) + 3 < len) {
					memmove(what + strlen(key) + 2, what,
					    n + 1);
					memcpy(what, key, strlen(key));
					memcpy(what + strlen(key), ": ", 2);
				}
				return 1;
			}
		}
	case '[':
		for (;;) {
			while (**p == ' ' || **p == ',' || **p == '!' ||
			    **p == '*')
				(*p)++;
			if (**p == ']') {
				(*p)++;
				return 0;
			}
			if (**p == '\0')
				return 0;
			if (nul_target(p, json_array_get(v, i++), ap, what,
			    len))
				return 1;
		}
	default:
		return 0;	/* not followed: json_unpack judges it */
	}
}

int
mcp_args_unpack(mcp_call *call, const char *fmt, ...)
{
	json_error_t	 e;
	va_list		 ap, walk;
	const char	*p = fmt;
	char		 what[200];
	int		 rc;

	va_start(ap, fmt);
	if (call->has_nul && fmt != NULL) {
		va_copy(walk, ap);
		rc = nul_target(&p, mcp__call_args(call), &walk, what,
		    sizeof(what));
		va_end(walk);
		if (rc) {
			va_end(ap);
			mcp_result_errorf(call, "invalid arguments: %s", what);
			return MCP_EINVAL;
		}
	}
	rc = json_vunpack_ex(mcp__call_args(call), &e, 0, fmt, ap);
	va_end(ap);
	if (rc == 0)
		return MCP_OK;
	mcp_result_errorf(call, "invalid arguments: %s", e.text);
	return MCP_EINVAL;
}

#define RESULT_HEAD1	"{\"jsonrpc\":\"2.0\",\"id\":"
#define RESULT_HEAD2	",\"result\":{\"content\":["

/*
 * Puts the head of a tools/call result, with the id ID (N bytes of
 * JSON), in front of the content blocks of C, with room left for the
 * usual tail (the list's end, isError, the closing braces and the NUL
 * mcp__buf_steal adds), so that a plain answer takes no second buffer.
 */
static int
head_in_place(struct mcp_call *c, const char *id, size_t n)
{
	struct buf	*b = &c->content;
	size_t		 h1 = sizeof(RESULT_HEAD1) - 1;
	size_t		 h = h1 + n + sizeof(RESULT_HEAD2) - 1;

	if (mcp__buf_reserve(b, h + sizeof("],\"isError\":true}}")) != MCP_OK)
		return MCP_ENOMEM;
	memmove(b->data + b->off + h, b->data + b->off, b->len - b->off);
	memcpy(b->data + b->off, RESULT_HEAD1, h1);
	memcpy(b->data + b->off + h1, id, n);
	memcpy(b->data + b->off + h1 + n, RESULT_HEAD2,
	    sizeof(RESULT_HEAD2) - 1);
	b->len += h;
	return MCP_OK;
}

/*
 * Writes the whole response for what the callback set. Structured content
 * is checked against the output schema and copied into a text block when
 * the tool gave none; structuredContent goes only to sessions that know
 * it (2025-06-18 on). The content blocks are already serialised.
 */
static int
write_result(struct mcp_call *c, struct buf *b)
{
	struct buf	 txt = { 0 };
	char		 err[256];
	int		 rc;

	if (c->structured != NULL && !c->is_error && c->tool->out != NULL &&
	    mcp__schema_validate(c->tool->out, c->structured,
	    "structuredContent", err, sizeof(err)) != 0) {
		mcp_log(MCP_LOG_ERR, "tool %s: %s", c->tool->name, err);
		mcp__buf_reset(&c->content);
		json_decref(c->structured);
		c->structured = NULL;
		mcp_result_errorf(c, "tool %s returned invalid structured "
		    "content: %s", c->tool->name, err);
	} else if (c->structured == NULL && !c->is_error &&
	    c->tool->out != NULL) {
		mcp_result_errorf(c, "tool %s returned no structured content "
		    "for its output schema", c->tool->name);
	}
	if (c->structured != NULL && !c->has_text) {
		/* The spec's advice: a text copy for clients that need one. */
		rc = mcp__buf_addjson(&txt, c->structured);
		if (rc == MCP_OK)
			rc = mcp__buf_addc(&txt, '\0');
		if (rc == MCP_OK)
			rc = mcp_result_text(c, txt.data);
		mcp__buf_free(&txt);
		if (rc != MCP_OK)
			return rc;
	}
	if (c->key[0] == 'i' && json_is_integer(c->id)) {
		/* An integer id, as the key spells it: the answer is made
		 * in the content's own buffer, the blocks moved up behind
		 * its head (B is empty), not copied into a second one. */
		rc = head_in_place(c, c->key + 1, strlen(c->key + 1));
		*b = c->content;
		c->content = (struct buf){ 0 };
	} else {
		rc = mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addid(b, c->id);
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, ",\"result\":{\"content\":[");
		if (rc == MCP_OK)
			rc = mcp__buf_add(b, c->content.data, c->content.len);
	}
	if (rc == MCP_OK)
		rc = mcp__buf_addc(b, ']');
	if (rc == MCP_OK && c->structured != NULL &&
	    c->version >= MCP_V20250618) {
		rc = mcp__buf_adds(b, ",\"structuredContent\":");
		if (rc == MCP_OK)
			rc = mcp__buf_addjson(b, c->structured);
	}
	if (rc == MCP_OK && c->is_error)
		rc = mcp__buf_adds(b, ",\"isError\":true");
	if (rc == MCP_OK)
		rc = mcp__buf_adds(b, "}}");
	return rc;
}

/*
 * Worker: serialises C's answer into c->out: the JSON-RPC error the
 * callback asked for, or the result WRITE builds from what it set.
 */
void
mcp__call_serialise(struct mcp_call *c,
    int (*write)(struct mcp_call *, struct buf *))
{
	struct buf	 b = { 0 };
	json_t		*data = NULL;
	int		 rc;

	if (c->rpc_code == MCP_RPC_MISSING_CAPABILITY && c->need_cap != NULL)
		data = json_pack("{s:{s:{}}}", "requiredCapabilities",
		    c->need_cap);
	/* 2026-07-28 retired -32002: a missing resource is -32602 there,
	 * whichever code the callback chose. */
	if (c->rpc_code == MCP_RPC_RESOURCE_NOT_FOUND &&
	    c->version == MCP_V20260728)
		c->rpc_code = MCP_RPC_INVALID_PARAMS;
	/* A request to the client is pending (2026-07-28): the answer is
	 * input_required, whatever the callback set meanwhile, unless a
	 * capability the client lacks makes it -32021. */
	if (mcp__mrtr_pending(c) && c->need_cap == NULL)
		rc = mcp__mrtr_write(c, &b);
	else if (c->rpc_code != 0)
		rc = mcp__rpc_error(&b, c->id, c->rpc_code, c->rpc_msg, data);
	else
		rc = write(c, &b);
	if (rc != MCP_OK) {
		mcp__buf_reset(&b);
		mcp__rpc_error(&b, c->id, MCP_RPC_INTERNAL_ERROR,
		    "out of memory", NULL);
	}
	json_decref(data);
	c->out = mcp__buf_steal(&b, &c->outlen);
	mcp__buf_free(&b);
}

/* ---- resources/read, prompts/get, completion/complete ------------------ */

const char *
mcp_call_uri(mcp_call *call)
{
	return call->uri;
}

const char *
mcp_call_prompt(mcp_call *call)
{
	return call->pname;
}

const char *
mcp_call_var(mcp_call *call, const char *name)
{
	if (name == NULL)
		return NULL;
	return json_string_value(json_object_get(mcp__call_args(call), name));
}

int
mcp_call_complete_arg(mcp_call *call, const char **name, const char **value)
{
	if (call->kind != CALL_COMPLETE)
		return MCP_EINVAL;
	if (name != NULL)
		*name = call->cname;
	if (value != NULL)
		*value = call->cvalue;
	return MCP_OK;
}

int
mcp_result_role(mcp_call *call, const char *role)
{
	if (call->kind != CALL_PROMPT || role == NULL)
		return MCP_EINVAL;
	if (strcmp(role, "user") == 0)
		call->role = "user";
	else if (strcmp(role, "assistant") == 0)
		call->role = "assistant";
	else
		return MCP_EINVAL;
	return MCP_OK;
}

int
mcp_result_description(mcp_call *call, const char *text)
{
	char	*p;

	if (call->kind != CALL_PROMPT || text == NULL)
		return MCP_EINVAL;
	p = strdup(text);
	if (p == NULL)
		return MCP_ENOMEM;
	free(call->description);
	call->description = p;
	return MCP_OK;
}

int
mcp_result_completion(mcp_call *call, const char *value)
{
	struct content_mark m;

	if (call->kind != CALL_COMPLETE || value == NULL)
		return MCP_EINVAL;
	/* The spec's limit: the rest is only counted, and hasMore says so. */
	if (call->nvalues++ >= 100) {
		call->has_more = 1;
		return MCP_OK;
	}
	mcp__content_mark(call, &m);
	if ((call->content.len > 0 &&
	    mcp__buf_addc(&call->content, ',') != MCP_OK) ||
	    mcp__buf_addstr(&call->content, value, strlen(value)) != MCP_OK) {
		call->nvalues--;
		return mcp__content_undo(call, &m, MCP_ENOMEM);
	}
	return MCP_OK;
}

int
mcp_result_completion_total(mcp_call *call, long long total, int has_more)
{
	if (call->kind != CALL_COMPLETE)
		return MCP_EINVAL;
	call->total = total < 0 ? -1 : total;
	if (has_more)
		call->has_more = 1;
	return MCP_OK;
}

/* The response of a read, get or complete call, from what was set. */
static int
write_feature(struct mcp_call *c, struct buf *b)
{
	char	 num[32];
	int	 rc;

	rc = mcp__buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (rc == MCP_OK)
		rc = mcp__buf_addid(b, c->id);
	if (rc != MCP_OK)
		return rc;
	switch (c->kind) {
	case CALL_READ:
		rc = mcp__buf_adds(b, ",\"result\":{\"contents\":[");
		if (rc == MCP_OK)
			rc = mcp__buf_add(b, c->content.data, c->content.len);
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, "]}}");
		break;
	case CALL_PROMPT:
		rc = mcp__buf_adds(b, ",\"result\":{");
		if (rc == MCP_OK && c->description != NULL) {
			rc = mcp__buf_adds(b, "\"description\":");
			if (rc == MCP_OK)
				rc = mcp__buf_addstr(b, c->description,
				    strlen(c->description));
			if (rc == MCP_OK)
				rc = mcp__buf_addc(b, ',');
		}
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, "\"messages\":[");
		if (rc == MCP_OK)
			rc = mcp__buf_add(b, c->content.data, c->content.len);
		if (rc == MCP_OK && c->open_msg)
			rc = mcp__buf_addc(b, '}');
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, "]}}");
		break;
	default:
		rc = mcp__buf_adds(b, ",\"result\":{\"completion\":{"
		    "\"values\":[");
		if (rc == MCP_OK)
			rc = mcp__buf_add(b, c->content.data, c->content.len);
		if (rc == MCP_OK)
			rc = mcp__buf_addc(b, ']');
		if (c->total < 0 && c->nvalues > 100)
			c->total = c->nvalues;
		if (rc == MCP_OK && c->total >= 0) {
			snprintf(num, sizeof(num), ",\"total\":%lld",
			    c->total);
			rc = mcp__buf_adds(b, num);
		}
		if (rc == MCP_OK)
			rc = mcp__buf_adds(b, c->has_more ?
			    ",\"hasMore\":true}}}" : ",\"hasMore\":false}}}");
		break;
	}
	return rc;
}

/*
 * Worker: builds the params and runs the callback. The loop has already
 * checked the name or URI and, for a prompt, the required arguments.
 */
static void
feature_run(struct mcp_call *c)
{
	struct json_perr e;
	json_t		*ref, *arg, *ctx;
	mcp_tool_fn	 fn;

	c->role = "user";
	c->total = -1;
	c->params = mcp__json_parse(c->ptext, c->ptextlen, &e);
	free(c->ptext);
	c->ptext = NULL;
	c->args = json_object();
	if (c->params == NULL || c->args == NULL) {
		mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
		return;
	}
	switch (c->kind) {
	case CALL_READ:
		c->uri = json_string_value(json_object_get(c->params, "uri"));
		/* It matched on the loop; only memory can fail it here, and
		 * the callback must not see a variable missing. */
		if (c->feat->kind == FEAT_TEMPLATE &&
		    !mcp__template_match(c->feat->key, c->uri, c->args)) {
			mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
			    "out of memory");
			return;
		}
		fn = c->feat->fn;
		break;
	case CALL_PROMPT:
		c->pname = c->feat->key;
		arg = json_object_get(c->params, "arguments");
		if (json_is_object(arg))
			json_object_update(c->args, arg);
		fn = c->feat->fn;
		break;
	default:
		ref = json_object_get(c->params, "ref");
		if (c->feat != NULL && c->feat->kind == FEAT_PROMPT)
			c->pname = c->feat->key;
		else
			c->uri = json_string_value(json_object_get(ref,
			    "uri"));
		arg = json_object_get(c->params, "argument");
		c->cname = json_string_value(json_object_get(arg, "name"));
		c->cvalue = json_string_value(json_object_get(arg, "value"));
		if (c->cvalue == NULL)
			c->cvalue = "";
		ctx = json_object_get(json_object_get(c->params, "context"),
		    "arguments");
		if (json_is_object(ctx))
			json_object_update(c->args, ctx);
		fn = c->srv->feat.complete_fn;
		break;
	}
	if (c->version == MCP_V20260728 && c->kind != CALL_COMPLETE &&
	    mcp__mrtr_begin(c, json_object_get(c->params, "requestState"),
	    json_object_get(c->params, "inputResponses")) != 0)
		return;
	fn(c);
}

/*
 * Worker: the client's roots changed. The callback asks what it needs
 * itself (mcp_call_roots); there is no answer to serialise, so it may
 * set no result and none is sent.
 */
static void
roots_run(struct mcp_call *c)
{
	c->args = json_object();
	if (c->args == NULL) {
		mcp_log(MCP_LOG_ERR, "roots/list_changed: out of memory");
		return;
	}
	c->srv->feat.roots_fn(c);
}

/*
 * Reads the arguments of C in place when its tool's schema is flat and
 * they are valid against it (core.h): 1, with c->flat set. 0 leaves
 * them to be built and judged by the general path, as are a tool's
 * with defaults to fill in.
 */
static int
args_in_place(struct mcp_call *c, const char *text)
{
	const struct mcp__flat	*f;
	const char		*a = "{}";
	size_t			 n = 2;

	if ((c->tool->decl & TOOL_DEFAULTS) ||
	    (f = mcp__schema_flat(c->tool->in)) == NULL)
		return 0;
	if (c->args_len > 0) {
		a = text + c->args_off;
		n = c->args_len;
	}
	c->flat = flat_get(sizeof(*c->flat) + n, &c->flat_cap);
	if (c->flat == NULL)
		return 0;
	if (mcp__json_flat(a, n, f, c->flat) &&
	    mcp__schema_flat_ok(c->tool->in, c->flat))
		return 1;
	flat_put(c->flat, c->flat_cap);
	c->flat = NULL;
	return 0;
}

/*
 * Worker, or the loop for a loop tool: builds the params from the LEN
 * bytes of TEXT, validates the arguments, runs the tool.
 */
static void
tool_run(struct mcp_call *c, const char *text, size_t len)
{
	struct json_perr e;
	json_t		*state = NULL, *resp = NULL;
	char		 err[256];
	int		 bad = 0;

	/* Built here, so the allocations and frees stay on this thread. */
	if (c->spans) {
		/* Only what the callback can see: the arguments (params
		 * then is that object) and the progress token's _meta. */
		memset(&e, 0, sizeof(e));
		if (!args_in_place(c, text)) {
			c->params = c->args_len > 0 ? mcp__json_parse(text +
			    c->args_off, c->args_len, &e) : json_object();
			c->has_nul = e.has_nul;
			c->args = c->params;
		}
		if (c->meta_len > 0 && (c->args != NULL || c->flat != NULL)) {
			c->meta = mcp__json_parse(text + c->meta_off,
			    c->meta_len, &e);
			if (c->meta == NULL) {
				c->args = NULL;
				flat_put(c->flat, c->flat_cap);
				c->flat = NULL;
			}
		}
		c->progress_token = c->meta == NULL ? NULL :
		    json_object_get(c->meta, "progressToken");
		if (!json_is_string(c->progress_token) &&
		    !json_is_integer(c->progress_token))
			c->progress_token = NULL;
		/* A 2026-07-28 retry's (mrtr.c); nothing else needs them. */
		if (c->state_len > 0 && c->version == MCP_V20260728) {
			state = mcp__json_parse(text + c->state_off,
			    c->state_len, &e);
			bad |= state == NULL;
		}
		if (c->resp_len > 0 && c->version == MCP_V20260728) {
			resp = mcp__json_parse(text + c->resp_off,
			    c->resp_len, &e);
			bad |= resp == NULL;
		}
		free(c->ptext);
		c->ptext = NULL;
	} else {
		c->params = mcp__json_parse(text, len, &e);
		c->has_nul = e.has_nul;
		free(c->ptext);
		c->ptext = NULL;
	}
	if (c->params != NULL && !c->spans) {
		/* A token is a string or an integer; anything else: none. */
		c->progress_token = json_object_get(json_object_get(c->params,
		    "_meta"), "progressToken");
		if (!json_is_string(c->progress_token) &&
		    !json_is_integer(c->progress_token))
			c->progress_token = NULL;
		c->args = json_object_get(c->params, "arguments");
		if (c->args == NULL) {
			/* set_new steals the object even when it fails. */
			c->args = json_object();
			if (c->args != NULL && json_object_set_new(c->params,
			    "arguments", c->args) != 0)
				c->args = NULL;
		}
	}
	if (!c->spans && c->params != NULL && c->version == MCP_V20260728) {
		state = json_incref(json_object_get(c->params,
		    "requestState"));
		resp = json_incref(json_object_get(c->params,
		    "inputResponses"));
	}
	/* Defaults first: the arguments the callback gets are validated.
	 * Those read in place were, and have neither \u0000 nor defaults. */
	if ((c->args == NULL && c->flat == NULL) || bad)
		mcp_result_rpc_error(c, MCP_RPC_INTERNAL_ERROR,
		    "out of memory");
	else if (c->flat == NULL && mcp__args_prepare(c) != 0)
		;
	else if (c->flat == NULL && mcp__schema_validate(c->tool->in,
	    c->args, "arguments", err, sizeof(err)) != 0)
		mcp_result_errorf(c, "invalid arguments: %s", err);
	else if (c->version != MCP_V20260728 ||
	    mcp__mrtr_begin(c, state, resp) == 0)
		c->tool->fn(c);
	json_decref(state);
	json_decref(resp);
}

/*
 * The callback is done with C (returned, or finished a deferred call):
 * serialises the answer, unless C was cancelled meanwhile, and frees
 * what was built for the callback, on this thread, not on the loop: the
 * worker's, or the thread that finished a deferred call, which owns C
 * then. The loop gets C with only the answer's bytes left.
 */
static void
call_end(struct mcp_call *c)
{
	if (c->kind == CALL_TOOL && !mcp_call_cancelled(c))
		mcp__call_serialise(c, write_result);
	else if (c->kind != CALL_ROOTS && !mcp_call_cancelled(c))
		mcp__call_serialise(c, write_feature);
	json_decref(c->params);
	if (c->kind != CALL_TOOL)
		json_decref(c->args);	/* the tool's is inside params */
	json_decref(c->meta);
	flat_put(c->flat, c->flat_cap);
	c->flat = NULL;
	c->params = c->args = c->meta = NULL;
	c->progress_token = NULL;
	c->uri = c->pname = c->cname = c->cvalue = NULL;
	json_decref(c->structured);
	c->structured = NULL;
	mcp__mrtr_free(c->mrtr);
	c->mrtr = NULL;
	if (c->description != NULL) {
		free(c->description);
		c->description = NULL;
	}
	out_put(c->content.data, c->content.cap);
	c->content = (struct buf){ 0 };
}

int
mcp__call_run(struct mcp_call *c)
{
	int	 state = CALL_DEFER_HELD;

	if (mcp_call_cancelled(c))
		return 0;	/* cancelled while queued: never run */
	lctx_set(c);
	if (c->kind == CALL_ROOTS)
		roots_run(c);
	else if (c->kind == CALL_TOOL)
		tool_run(c, c->ptext, c->ptextlen);
	else
		feature_run(c);
	if (atomic_load(&c->defer) == CALL_DEFER_NONE) {
		call_end(c);
		mcp__lctx = (struct log_ctx){ 0 };
		return 0;
	}
	mcp__lctx = (struct log_ctx){ 0 };
	/* Deferred: C is the user's from here on, unless it was finished
	 * already, in which case it is this thread's to post (and no one
	 * else touches it any more). */
	if (atomic_compare_exchange_strong(&c->defer, &state,
	    CALL_DEFER_AWAY))
		return 1;
	mcp__pool_post_deferred(c->pool, c);
	return 1;
}

/*
 * The same, for a loop tool, on the loop thread: its params are read
 * from the input itself when TEXT is given. Nothing a worker does is
 * left out (the validation, the serialised answer, a deferral); the
 * loop's own log context is put back afterwards, since the loop goes on
 * with the input it was handling.
 */
int
mcp__call_run_loop(struct mcp_call *c, const char *text, size_t len)
{
	struct log_ctx	 saved = mcp__lctx;
	int		 state = CALL_DEFER_HELD;

	lctx_set(c);
	mcp__loop_call = c;
	if (text != NULL)
		tool_run(c, text, len);
	else
		tool_run(c, c->ptext, c->ptextlen);
	mcp__loop_call = NULL;
	if (atomic_load(&c->defer) == CALL_DEFER_NONE) {
		call_end(c);
		mcp__lctx = saved;
		return 0;
	}
	mcp__lctx = saved;
	/* Deferred, as in mcp__call_run; finished already, it reaches the
	 * loop through the completion queue, as any finished call does. */
	if (atomic_compare_exchange_strong(&c->defer, &state,
	    CALL_DEFER_AWAY))
		return 1;
	mcp__pool_post_deferred(c->pool, c);
	return 1;
}

/* ---- calls finished later ---------------------------------------------- */

int
mcp_call_defer(mcp_call *call)
{
	int	 state = CALL_DEFER_NONE;

	if (call == NULL || call->pool == NULL)
		return MCP_EINVAL;
	if (atomic_compare_exchange_strong(&call->defer, &state,
	    CALL_DEFER_HELD)) {
		mcp__pool_defer(call->pool);
		return MCP_OK;
	}
	/* Twice in the callback is once; later, the call is no longer its. */
	return state == CALL_DEFER_HELD ? MCP_OK : MCP_ESTATE;
}

/*
 * Any thread that holds CALL. The answer is serialised here, as the
 * worker would have, and the call handed to the loop: now, if its
 * callback has returned, or by its worker when it does. From either
 * one, the loop gets it once, and drops the answer if the call was
 * cancelled, timed out or answered by the shutdown meanwhile.
 */
int
mcp_call_finish(mcp_call *call)
{
	struct log_ctx	 saved;
	int		 state;

	if (call == NULL)
		return MCP_EINVAL;
	state = atomic_load(&call->defer);
	if (state != CALL_DEFER_HELD && state != CALL_DEFER_AWAY)
		return MCP_ESTATE;	/* not deferred */
	saved = mcp__lctx;
	lctx_set(call);
	call_end(call);
	mcp__lctx = saved;
	for (;;) {
		if (state == CALL_DEFER_AWAY) {
			mcp__pool_post_deferred(call->pool, call);
			return MCP_OK;
		}
		/* Still in its callback: the worker posts it on return. */
		if (atomic_compare_exchange_strong(&call->defer, &state,
		    CALL_DEFER_DONE))
			return MCP_OK;
	}
}

const char *
mcp_call_session_id(mcp_call *call)
{
	/* The session's info, not the session: this runs off the loop. */
	if (call == NULL || call->info == NULL)
		return "";
	return mcp_session_id(call->info);
}
