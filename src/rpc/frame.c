/*
 * frame.c: JSON lines, server-sent events and the pending table: the
 * framing and correlation that the server and the client share. No I/O
 * and no globals: each reader or table belongs to one connection, on
 * the thread that owns that connection (the loop).
 */
#include <stdlib.h>
#include <string.h>

#include "rpc/frame.h"

/* ---- JSON lines ------------------------------------------------------ */

void
mcp__jsonl_init(struct jsonl *j, size_t max)
{
	memset(j, 0, sizeof(*j));
	j->max = max;
}

void
mcp__jsonl_free(struct jsonl *j)
{
	mcp__buf_free(&j->in);
}

int
mcp__jsonl_reserve(struct jsonl *j, size_t n)
{
	return mcp__buf_reserve(&j->in, n);
}

/* A line has ended: taken, or reported as over the cap. */
static int
take(struct jsonl *j, const char *p, size_t n, jsonl_line_fn line,
    jsonl_over_fn over, void *arg)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;		/* CR LF framing: the CR is not data */
	if (j->bom) {
		j->bom = 0;
		if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
			p += 3;
			n -= 3;
		}
	}
	if (j->skipping) {
		mcp__idscan_feed(&j->scan, p, n);
		j->skipping = 0;
		over(arg, &j->scan);
		return 0;
	}
	if (n > j->max) {
		mcp__idscan_init(&j->scan);
		mcp__idscan_feed(&j->scan, p, n);
		over(arg, &j->scan);
		return 0;
	}
	while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\r')) {
		p++;
		n--;
	}
	if (n == 0)
		return 0;	/* blank lines are not messages */
	return line(arg, p, n);
}

/*
 * Bytes of an oversized line are thrown away as they come, so the
 * buffer never holds more than max plus one read; SCANNED keeps a long
 * line from being searched again on every read.
 */
int
mcp__jsonl_split(struct jsonl *j, size_t n, jsonl_line_fn line,
    jsonl_over_fn over, void *arg)
{
	char	*p, *from, *nl, *end;
	size_t	 held;
	int	 stopped = 0;

	j->in.len += n;
	p = j->in.data + j->in.off;
	end = j->in.data + j->in.len;
	from = p + j->scanned;
	for (;;) {
		nl = memchr(from, '\n', (size_t)(end - from));
		if (nl == NULL)
			break;
		if (take(j, p, (size_t)(nl - p), line, over, arg) < 0) {
			stopped = 1;
			break;
		}
		p = from = nl + 1;
	}
	held = (size_t)(end - p);
	if (!stopped && !j->skipping && held > j->max + 1) {
		/* Too long already: let it stream past, scanned for its id. */
		mcp__idscan_init(&j->scan);
		j->skipping = 1;
		j->bom = 0;
	}
	if (!stopped && j->skipping) {
		mcp__idscan_feed(&j->scan, p, held);
		p = end;
		held = 0;
	}
	mcp__buf_consume(&j->in, (size_t)(p - (j->in.data + j->in.off)));
	j->scanned = stopped ? 0 : held;
	return stopped;
}

void
mcp__jsonl_end(struct jsonl *j, jsonl_line_fn line, jsonl_over_fn over,
    void *arg)
{
	if (j->skipping || j->in.len > j->in.off)
		(void)take(j, j->in.data + j->in.off, j->in.len - j->in.off,
		    line, over, arg);
	mcp__buf_reset(&j->in);
	j->scanned = 0;
	j->skipping = 0;
}

/* ---- Server-sent events ---------------------------------------------- */

void
mcp__sse_parser_init(struct sse_parser *p, size_t max)
{
	memset(p, 0, sizeof(*p));
	p->max = max;
	p->retry_ms = -1;
	p->bom = 1;
}

void
mcp__sse_parser_free(struct sse_parser *p)
{
	mcp__buf_free(&p->line);
	mcp__buf_free(&p->data);
}

static void
dispatch(struct sse_parser *p, sse_event_fn ev, sse_over_fn over, void *arg)
{
	const char	*type;

	if (p->over) {
		over(arg, &p->scan);
	} else if (p->data.len > 0) {
		/* The data ends with the LF of its last line: not data. */
		p->data.len--;
		p->data.data[p->data.len] = '\0';
		type = p->event[0] != '\0' ? p->event : "message";
		ev(arg, type, p->data.data, p->data.len, p->last_id);
	}
	mcp__buf_reset(&p->data);
	p->event[0] = '\0';
	p->has_id = 0;
	p->over = 0;
}

/* Appends a data line (and its LF) to the event, within the cap. */
static int
add_data(struct sse_parser *p, const char *v, size_t n)
{
	if (p->over) {
		mcp__idscan_feed(&p->scan, "\n", 1);
		mcp__idscan_feed(&p->scan, v, n);
		return MCP_OK;
	}
	if (p->data.len + n + 1 > p->max) {
		mcp__idscan_init(&p->scan);
		mcp__idscan_feed(&p->scan, p->data.data, p->data.len);
		mcp__idscan_feed(&p->scan, v, n);
		mcp__buf_free(&p->data);
		p->over = 1;
		return MCP_OK;
	}
	if (mcp__buf_add(&p->data, v, n) != MCP_OK ||
	    mcp__buf_addc(&p->data, '\n') != MCP_OK)
		return MCP_ENOMEM;
	return MCP_OK;
}

/* One line of the stream, without its end. */
static int
field(struct sse_parser *p, const char *s, size_t n, sse_event_fn ev,
    sse_over_fn over, void *arg)
{
	const char	*colon, *v;
	size_t		 klen, vlen;
	long		 r;

	if (n == 0) {
		dispatch(p, ev, over, arg);
		return MCP_OK;
	}
	if (s[0] == ':')
		return MCP_OK;		/* a comment: keepalives */
	colon = memchr(s, ':', n);
	klen = colon != NULL ? (size_t)(colon - s) : n;
	v = colon != NULL ? colon + 1 : s + n;
	vlen = (size_t)(s + n - v);
	if (vlen > 0 && *v == ' ') {
		v++;
		vlen--;
	}
	if (klen == 4 && memcmp(s, "data", 4) == 0)
		return add_data(p, v, vlen);
	if (klen == 5 && memcmp(s, "event", 5) == 0) {
		if (vlen >= sizeof(p->event))
			vlen = sizeof(p->event) - 1;
		memcpy(p->event, v, vlen);
		p->event[vlen] = '\0';
	} else if (klen == 2 && memcmp(s, "id", 2) == 0) {
		/* An id holding NUL is ignored, as the spec says. */
		if (memchr(v, '\0', vlen) == NULL &&
		    vlen < sizeof(p->last_id)) {
			memcpy(p->last_id, v, vlen);
			p->last_id[vlen] = '\0';
			p->has_id = 1;
		}
	} else if (klen == 5 && memcmp(s, "retry", 5) == 0) {
		r = 0;
		while (vlen > 0 && *v >= '0' && *v <= '9' && r < 100000000) {
			r = r * 10 + (*v - '0');
			v++;
			vlen--;
		}
		if (vlen == 0)
			p->retry_ms = r;
	}
	return MCP_OK;
}

/* Is the line made of what P holds and the N bytes at S a data line? */
static int
is_data(const struct sse_parser *p, const char *s, size_t n)
{
	char	 pre[5];
	size_t	 have = p->line.len < 5 ? p->line.len : 5;

	if (have > 0)
		memcpy(pre, p->line.data, have);
	if (have < 5 && n > 0)
		memcpy(pre + have, s, n < 5 - have ? n : 5 - have);
	if (have + n < 5)
		return 0;
	return memcmp(pre, "data:", 5) == 0;
}

/*
 * Lines longer than the cap (plus some room for the field name) are
 * not kept whole: a data line's bytes go to the scan instead, so that a
 * huge event costs no memory.
 */
int
mcp__sse_feed(struct sse_parser *p, const char *s, size_t n,
    sse_event_fn ev, sse_over_fn over, void *arg)
{
	const char	*end = s + n, *eol;
	size_t		 take;

	if (p->bom && n > 0) {
		if (n >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0) {
			s += 3;
			n -= 3;
		}
		p->bom = 0;
	}
	while (s < end) {
		if (p->cr) {
			p->cr = 0;
			if (*s == '\n') {
				s++;
				continue;
			}
		}
		eol = s;
		while (eol < end && *eol != '\n' && *eol != '\r')
			eol++;
		take = (size_t)(eol - s);
		if (p->skipline) {
			if (p->over)
				mcp__idscan_feed(&p->scan, s, take);
		} else if (p->line.len + take > p->max + 64) {
			/* A line too long to hold: only data may be, scanned. */
			if (is_data(p, s, take) && !p->over) {
				mcp__idscan_init(&p->scan);
				mcp__idscan_feed(&p->scan, p->data.data,
				    p->data.len);
				if (p->line.len >= 5) {
					mcp__idscan_feed(&p->scan,
					    p->line.data + 5, p->line.len - 5);
					mcp__idscan_feed(&p->scan, s, take);
				} else {
					mcp__idscan_feed(&p->scan,
					    s + (5 - p->line.len),
					    take - (5 - p->line.len));
				}
				p->over = 1;
				mcp__buf_free(&p->data);
			} else if (p->over) {
				mcp__idscan_feed(&p->scan, s, take);
			}
			mcp__buf_reset(&p->line);
			p->skipline = 1;
		} else if (take > 0 &&
		    mcp__buf_add(&p->line, s, take) != MCP_OK) {
			return MCP_ENOMEM;
		}
		s = eol;
		if (s == end)
			break;
		if (*s == '\r')
			p->cr = 1;
		s++;
		if (p->skipline)
			p->skipline = 0;
		else if (field(p, p->line.data != NULL ? p->line.data : "",
		    p->line.len, ev, over, arg) != MCP_OK)
			return MCP_ENOMEM;
		mcp__buf_reset(&p->line);
	}
	return MCP_OK;
}

/* ---- The pending table ----------------------------------------------- */

static size_t
slot_of(const struct pending *t, long long id)
{
	unsigned long long	h = (unsigned long long)id;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (t->nslots - 1);
}

static int
grow(struct pending *t)
{
	struct pending_entry	**slots, *e, *next;
	size_t			  n, i, old = t->nslots;

	n = old == 0 ? 64 : old * 2;
	slots = calloc(n, sizeof(*slots));
	if (slots == NULL)
		return MCP_ENOMEM;
	t->nslots = n;
	for (i = 0; i < old; i++) {
		for (e = t->slots[i]; e != NULL; e = next) {
			next = e->next;
			e->next = slots[slot_of(t, e->id)];
			slots[slot_of(t, e->id)] = e;
		}
	}
	free(t->slots);
	t->slots = slots;
	return MCP_OK;
}

int
mcp__pending_add(struct pending *t, struct pending_entry *e)
{
	size_t	 i;

	if (t->count >= t->nslots && grow(t) != MCP_OK)
		return MCP_ENOMEM;
	i = slot_of(t, e->id);
	e->next = t->slots[i];
	t->slots[i] = e;
	t->count++;
	return MCP_OK;
}

struct pending_entry *
mcp__pending_find(struct pending *t, long long id)
{
	struct pending_entry	*e;

	if (t->nslots == 0)
		return NULL;
	for (e = t->slots[slot_of(t, id)]; e != NULL; e = e->next)
		if (e->id == id)
			return e;
	return NULL;
}

struct pending_entry *
mcp__pending_take(struct pending *t, long long id)
{
	struct pending_entry	**pp, *e;

	if (t->nslots == 0)
		return NULL;
	for (pp = &t->slots[slot_of(t, id)]; *pp != NULL; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			e = *pp;
			*pp = e->next;
			t->count--;
			return e;
		}
	}
	return NULL;
}

struct pending_entry *
mcp__pending_take_if(struct pending *t,
    int (*match)(struct pending_entry *e, void *arg), void *arg)
{
	struct pending_entry	**pp, *e, *out = NULL;
	size_t			  i;

	for (i = 0; i < t->nslots; i++) {
		for (pp = &t->slots[i]; *pp != NULL;) {
			e = *pp;
			if (!match(e, arg)) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			t->count--;
			e->next = out;
			out = e;
		}
	}
	return out;
}

struct pending_entry *
mcp__pending_pop(struct pending *t)
{
	size_t	 i;

	for (i = 0; i < t->nslots && t->count > 0; i++)
		if (t->slots[i] != NULL)
			return mcp__pending_take(t, t->slots[i]->id);
	return NULL;
}

void
mcp__pending_free(struct pending *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

long long
mcp__pending_id_of(const json_t *id)
{
	json_int_t	 v;

	if (!json_is_integer(id))
		return -1;
	v = json_integer_value(id);
	return v < 0 ? -1 : (long long)v;
}
