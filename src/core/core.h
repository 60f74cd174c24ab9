/*
 * core.h: the bottom layer, src/core/: byte buffers, the log, the
 * hot-path JSON parser and serialiser, base64, the ordered hash table,
 * systemd's sockets; and schema.h beside it, the JSON Schema validator.
 * Nothing here knows MCP's methods, a session or the loop: any layer may
 * include this, and this includes nothing of theirs. Any thread, except
 * where a function says otherwise.
 */
#ifndef MCP_CORE_H
#define MCP_CORE_H

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#include <jansson.h>

#include "mcp.h"

#define MCP_HIDDEN	__attribute__((visibility("hidden")))

#define MCP_RID_MAX	65	/* an HTTP request id, with its NUL */
#define MCP_LOG_FORCE	0x100	/* or'ed into a level: written at any level */

/* ---- buf.c: a growable byte buffer with a read offset ----------------- */

struct buf {
	char	*data;
	size_t	 off;	/* bytes before off are consumed */
	size_t	 len;	/* bytes in use, from 0 */
	size_t	 cap;
};

int	 mcp__buf_reserve(struct buf *b, size_t extra) MCP_HIDDEN;
/* mcp__buf_add when the bytes do not fit: grows, then appends. */
int	 mcp__buf_add_grow(struct buf *b, const void *p, size_t n) MCP_HIDDEN;
int	 mcp__buf_addjson(struct buf *b, const json_t *v) MCP_HIDDEN;
void	 mcp__buf_consume(struct buf *b, size_t n) MCP_HIDDEN;
void	 mcp__buf_reset(struct buf *b) MCP_HIDDEN;
char	*mcp__buf_steal(struct buf *b, size_t *lenp) MCP_HIDDEN;

/*
 * Appends N bytes at P. Inline, with the common case first: a response
 * is built from a dozen small pieces, and a call to a function that
 * calls memcpy cost each one about 40 instructions.
 */
static inline int
mcp__buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->cap - b->len >= n) {
		if (n > 0)
			memcpy(b->data + b->len, p, n);
		b->len += n;
		return MCP_OK;
	}
	return mcp__buf_add_grow(b, p, n);
}

static inline int
mcp__buf_addc(struct buf *b, char c)
{
	if (b->len == b->cap && mcp__buf_reserve(b, 1) != MCP_OK)
		return MCP_ENOMEM;
	b->data[b->len++] = c;
	return MCP_OK;
}

/*
 * Frees B's bytes and empties it. Inline: most buffers freed on a call's
 * way out were never used, and free(NULL) through the PLT cost each
 * about 14 instructions.
 */
static inline void
mcp__buf_free(struct buf *b)
{
	if (b->data != NULL)
		free(b->data);
	b->data = NULL;
	b->off = b->len = b->cap = 0;
}

/* A C string: inline, so that a literal's length is known when built. */
static inline int
mcp__buf_adds(struct buf *b, const char *s)
{
	return mcp__buf_add(b, s, strlen(s));
}

/* ---- log.c ------------------------------------------------------------ */

extern atomic_int mcp__log_level MCP_HIDDEN;
#define MCP_LOG(lvl, ...) do {						\
	if ((lvl) <= atomic_load_explicit(&mcp__log_level,		\
	    memory_order_relaxed))					\
		mcp_log((lvl), __VA_ARGS__);				\
} while (0)
/* What the request this thread serves puts on each of its log lines. */
struct log_ctx {
	const json_t	*id;	/* the JSON-RPC id */
	const char	*sid;	/* its session's id */
	const char	*rid;	/* the HTTP request id */
	const char	*tool;	/* the tool being called */
};
extern _Thread_local struct log_ctx mcp__lctx MCP_HIDDEN;
extern int	 mcp__log_json MCP_HIDDEN;	/* --log-format json */
extern int	 mcp__log_fd MCP_HIDDEN;

/* The figures of an event line: a call's end, an HTTP access. */
struct log_fields {
	const char	*outcome;	/* NULL: none */
	double		 duration_ms;	/* < 0: none */
	const char	*method;
	const char	*route;
	int		 status;	/* 0: none */
	long long	 bytes_in;	/* < 0: none */
	long long	 bytes_out;
};
void	 mcp__log_fields(int level, const struct log_fields *f,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)))
	    MCP_HIDDEN;
int	 mcp__log_open(const char *path) MCP_HIDDEN;
void	 mcp__log_reopen(void) MCP_HIDDEN;

/* ---- json.c: the hot-path parser and serialiser ---------------------- */

#define MCP_JSON_ESYNTAX	1	/* not JSON: -32700 */
#define MCP_JSON_ENOMEM		2
#define MCP_JSON_ERANGE		3	/* a number too big to keep exact */
#define MCP_JSON_EDEPTH		4	/* nested deeper than we accept */

struct json_perr {
	int	 code;
	size_t	 position;
	char	 text[80];
	int	 has_nul;	/* not an error: a string held \u0000 */
};

json_t	*mcp__json_parse(const char *data, size_t len, struct json_perr *err)
	    MCP_HIDDEN;
size_t	 mcp__fmt_int(char *out, long long v) MCP_HIDDEN;
/* How many elements the JSON array in DATA has, or -1: not an array. */
long	 mcp__json_array_count(const char *data, size_t len) MCP_HIDDEN;
/*
 * The members of one message object that JSON-RPC cares about, as the
 * envelope reader (mcp__json_parse_message) or mcp__rpc_fields_from_json
 * found them. The reader is here, in the parser, because it reads them
 * in place, without building the object, with the parser's own insides;
 * what they mean is rpc/'s (mcp__rpc_classify). ID and PARAMS are owned
 * references (a caller may steal them by setting them NULL); release the
 * rest with mcp__rpc_fields_clear.
 */
struct rpc_fields {
	int	 jsonrpc;	/* 0 absent, 1 "2.0", 2 anything else */
	int	 method;	/* 0 absent, 1 a usable string, 2 other */
	int	 has_id;
	json_t	*id;
	json_t	*params;	/* built only when needed (params_of) */
	/* A params object is left as text for the worker to build; the
	 * loop only needs tools/call's name and the type of arguments. */
	const char *praw;
	size_t	 prawlen;
	int	 tname_kind;	/* 0 absent, 1 a name, 2 not a string, 3 too long */
	int	 args_kind;	/* 0 absent, 1 an object, 2 other */
	int	 has_task;	/* a "task" member (tools/call as a task) */
	/* Where arguments and an object _meta lie in PRAW (their last
	 * occurrence; a length of 0: absent), so that a tool call builds
	 * only them. */
	size_t	 args_off, args_len;
	size_t	 meta_off, meta_len;
	/* The same for 2026-07-28's requestState and inputResponses. */
	size_t	 state_off, state_len;
	size_t	 resp_off, resp_len;
	int	 has_result;	/* a result or error member */
	json_t	*result;	/* a response's result, owned */
	json_t	*error;		/* or its error, owned */
	size_t	 mlen;		/* strlen(mname) */
	/* Last, for the parser clears only what comes before them (and
	 * makes them ""): 228 bytes a message not written twice. */
	char	 mname[96];	/* the method, when method == 1 */
	char	 tname[132];	/* tools/call's name, when tname_kind == 1 */
};

/* Parses one message: an object fills F without building it as a whole
 * (returns 1); anything else comes back in *WHOLE (returns 0); -1 on
 * error, with ERR set. */
int	 mcp__json_parse_message(const char *data, size_t len,
	    struct rpc_fields *f, json_t **whole, struct json_perr *err)
	    MCP_HIDDEN;
/* Are the N bytes at S UTF-8 (JSON's rules: no overlongs, surrogates)? */
int	 mcp__utf8_valid(const char *s, size_t n) MCP_HIDDEN;
/*
 * json_object_get(O, KEY), by walking an object of four members or
 * fewer (as tools' arguments mostly are) rather than hashing KEY: 114
 * instructions against 157 for a one-member object. NULL when O is not
 * an object.
 */
json_t	*mcp__json_get(const json_t *o, const char *key) MCP_HIDDEN;
/* V's string when V is a string without \u0000, else NULL: for the
 * protocol's names, uris and arguments, which are C strings. */
const char *mcp__json_cstr(const json_t *v) MCP_HIDDEN;
/* Appends S (N bytes) as a JSON string; invalid UTF-8 becomes U+FFFD. */
int	 mcp__buf_addstr(struct buf *b, const char *s, size_t n) MCP_HIDDEN;

/*
 * Arguments read in place. A tool whose input schema is flat (an object
 * of at most MCP__FLAT_MAX properties of scalar types: schema.c,
 * mcp__schema_flat) has its arguments scanned into one slot a property
 * instead of being built as jansson values; its callback reads the slots
 * (args.c), and a jansson object is built only if it asks for one.
 */
#define MCP__FLAT_MAX	16

struct mcp__flat {
	size_t		 n;
	const char	*name[MCP__FLAT_MAX];	/* the schema's own */
	size_t		 len[MCP__FLAT_MAX];
	/* 1: the name is written in JSON as its own bytes (no '"', '\\'
	 * or control byte), so an input key of those bytes is that name. */
	unsigned char	 plain[MCP__FLAT_MAX];
};

enum {
	MCP__SLOT_NONE,		/* absent */
	MCP__SLOT_STR,
	MCP__SLOT_INT,
	MCP__SLOT_REAL,
	MCP__SLOT_TRUE,
	MCP__SLOT_FALSE
};

struct mcp__slot {
	int		 type;
	const char	*s;	/* STR: NUL-terminated, LEN bytes */
	size_t		 len;
	long long	 i;	/* INT */
	double		 d;	/* REAL, and INT as a double */
};

/* The members of the arguments in text order: slot indexes. */
struct mcp__flat_args {
	size_t		 nmembers;
	unsigned char	 order[MCP__FLAT_MAX];
	struct mcp__slot slot[MCP__FLAT_MAX];
	char		 strings[];	/* the decoded strings */
};

/*
 * Scans the object in TEXT (LEN bytes) into A's slots, the names of F
 * being the only members it may have, each once; A's strings must have
 * room for LEN bytes (a decoded string is never longer than its text,
 * and its two quotes make room for its NUL). Returns 1, or 0 for
 * anything else (another member, a duplicate, null, an object, an
 * array, a string with \u0000, malformed text): such arguments take
 * the general path, which gives any error its message.
 */
int	 mcp__json_flat(const char *text, size_t len,
	    const struct mcp__flat *f, struct mcp__flat_args *a) MCP_HIDDEN;

/* Levels of notifications/message, syslog's numbers (debug 7). */
#define MCP_SYSLOG_DEBUG	7
int	 mcp__level_syslog(int mcp_log_level) MCP_HIDDEN;
const char *mcp__level_name(int syslog_level) MCP_HIDDEN;
int	 mcp__level_parse(const char *name) MCP_HIDDEN;
/* Appends a number: integral values without a fraction. */
int	 mcp__buf_addnum(struct buf *b, double d) MCP_HIDDEN;
/* An integral id written as a real ("2.0", "1e2"), kept as TEXT (behind
 * a 0xff byte, which no parsed string holds) so that it is echoed as
 * sent; mcp__buf_addid writes any id. */
json_t	*mcp__json_id_raw(const char *text, size_t len) MCP_HIDDEN;
int	 mcp__json_id_is_raw(const json_t *id) MCP_HIDDEN;
/* Is the number written as TEXT (LEN bytes) a finite integral value? */
int	 mcp__json_integral(const char *text, size_t len, double *out)
	    MCP_HIDDEN;
int	 mcp__buf_addid(struct buf *b, const json_t *id) MCP_HIDDEN;

/* ---- base64.c --------------------------------------------------------- */

char	*mcp__base64(const void *data, size_t len) MCP_HIDDEN;
/* Decodes the N bytes at S (padded base64) into a new NUL-terminated
 * buffer of *OUTLEN bytes; NULL when S is not base64 or out of memory. */
char	*mcp__base64_decode(const char *s, size_t n, size_t *outlen)
	    MCP_HIDDEN;

/* ---- table.c: entries in registration order, hashed by key ---------- */

/*
 * The header at the start of a tool or a feat. The owner keeps the key
 * string (key points into it), the reference count and the lock; every
 * mcp__table_ function runs with that lock held.
 */
struct entry {
	struct entry	*next;		/* registration order */
	struct entry	*hnext;		/* hash chain */
	uint64_t	 seq;		/* registration number, the cursor */
	const char	*key;		/* the owner's name or uri */
};

struct table {
	struct entry	*head;
	struct entry	*tail;
	struct entry	*buckets[64];
	uint64_t	 next_seq;
};

void	 mcp__table_init(struct table *t) MCP_HIDDEN;
/* The entry under KEY, or NULL. */
struct entry *mcp__table_find(struct table *t, const char *key) MCP_HIDDEN;
/* Appends E (its key set) with the next seq; MCP_EEXIST if the key is
 * taken, and E is then untouched. */
int	 mcp__table_add(struct table *t, struct entry *e) MCP_HIDDEN;
/* Unlinks and returns the entry under KEY (the caller drops it), or
 * NULL. */
struct entry *mcp__table_remove(struct table *t, const char *key)
	    MCP_HIDDEN;
/* Calls DROP on every entry, in order, and empties the table. */
void	 mcp__table_clear(struct table *t, void (*drop)(struct entry *))
	    MCP_HIDDEN;
/* A page of at most LIMIT entries (0: all) from CURSOR (NULL: the
 * start) as {MEMBER: [TO_JSON(e, VERSION)...], nextCursor?}. NULL on a
 * bad cursor (*bad set) or ENOMEM. */
json_t	*mcp__table_list(struct table *t, const char *member,
	    const char *cursor, int limit, int version,
	    json_t *(*to_json)(const struct entry *, int), int *bad)
	    MCP_HIDDEN;
/* FNV-1a; the sessions and streams hash their ids with it too. */
uint32_t mcp__hash(const char *s) MCP_HIDDEN;

/* ---- random.c ------------------------------------------------------- */

/* 128 bits from the CSPRNG as 32 hex digits, in OUT[33]: 0, or -1. */
int	 mcp__random_id(char *out) MCP_HIDDEN;
/* N bytes from the CSPRNG into OUT: 0, or -1 (errno set). */
int	 mcp__random_bytes(void *out, size_t n) MCP_HIDDEN;

/* ---- sha256.c: SHA-256 and HMAC-SHA256, for MRTR's requestState ----- */

struct sha256 {
	uint32_t	 h[8];
	uint64_t	 len;		/* bytes hashed */
	unsigned char	 buf[64];
	size_t		 used;		/* of buf */
};

void	 mcp__sha256_init(struct sha256 *s) MCP_HIDDEN;
void	 mcp__sha256_update(struct sha256 *s, const void *data, size_t len)
	    MCP_HIDDEN;
/* The digest into OUT; S is wiped and must be initialised again. */
void	 mcp__sha256_final(struct sha256 *s, unsigned char out[32])
	    MCP_HIDDEN;
void	 mcp__sha256(const void *data, size_t len, unsigned char out[32])
	    MCP_HIDDEN;
void	 mcp__hmac_sha256(const void *key, size_t klen, const void *data,
	    size_t len, unsigned char out[32]) MCP_HIDDEN;
/* 1 when the N bytes at A and B are equal, in time that does not depend
 * on where they differ; else 0. */
int	 mcp__ct_equal(const void *a, const void *b, size_t n) MCP_HIDDEN;

/* ---- systemd.c: socket activation and the notify socket ------------- */

/* A socket passed by systemd: named NAME, or the first (NULL); -1. */
int	 mcp__sd_listen_fd(const char *name, const char *who) MCP_HIDDEN;
/* STATE ("READY=1") to $NOTIFY_SOCKET: 1 sent, 0 none, -1 error. */
int	 mcp__sd_notify(const char *state) MCP_HIDDEN;
/* The WATCHDOG=1 interval in seconds, or 0 for none. */
double	 mcp__sd_watchdog(void) MCP_HIDDEN;

/* ---- xheader.c: x-mcp-header annotations (2026-07-28): the spec's
 * rules, for the server's registry and the client's tools/list ----- */

#define MCP_XHEADER_MAX		32	/* annotations in one inputSchema */
#define MCP_XHEADER_DEPTH	16	/* properties from the root */
#define MCP_XHEADER_NAME_MAX	64	/* bytes of NAME in Mcp-Param-NAME */

struct xheader;

/* The annotations of SCHEMA (*OUT, *NOUT; NULL and 0 for none), checked
 * against the spec's rules: MCP_OK, or MCP_EINVAL with WHY (which rule,
 * where), or MCP_ENOMEM. */
int	 mcp__xheader_scan(const json_t *schema, struct xheader **out,
	    int *nout, char *why, size_t whylen) MCP_HIDDEN;
void	 mcp__xheader_free(struct xheader *h, int n) MCP_HIDDEN;
/* The NAME of the I-th header, Mcp-Param-NAME. */
const char *mcp__xheader_name(const struct xheader *h, int i) MCP_HIDDEN;
/* The value the I-th header must carry for ARGS (the call's arguments):
 * 1 with *VAL and *LEN (in BUF, or in ARGS), 0 when ARGS has none there
 * (no header then), -1 when it is no string, integer or boolean. */
int	 mcp__xheader_value(const struct xheader *h, int i,
	    const json_t *args, char *buf, size_t buflen, const char **val,
	    size_t *len) MCP_HIDDEN;

#endif /* MCP_CORE_H */
