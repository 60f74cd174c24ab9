/*
 * table.c: the one table behind tools (registry.c) and resources,
 * templates and prompts (features.c). An entry keeps its registration
 * order, which is what the lists and their "c<hex seq>" cursors walk,
 * and is found by key through a small hash. The entry is a header
 * (struct entry) at the start of the owner's own struct; the owner
 * keeps the key string, the reference count and the lock, so that one
 * lock may cover several tables (features.c) and freeing stays typed.
 * Every function here expects that lock held.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define TABLE_BUCKETS	64

uint32_t
mcp__hash(const char *s)
{
	uint32_t	 h = 2166136261u;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

void
mcp__table_init(struct table *t)
{
	memset(t, 0, sizeof(*t));
	t->next_seq = 1;
}

/* The entry under KEY, and in *SLOTP the hash link that points at it
 * (or at the NULL ending its chain). */
static struct entry *
lookup(struct table *t, const char *key, struct entry ***slotp)
{
	struct entry	**slot;

	slot = &t->buckets[mcp__hash(key) % TABLE_BUCKETS];
	while (*slot != NULL && strcmp((*slot)->key, key) != 0)
		slot = &(*slot)->hnext;
	if (slotp != NULL)
		*slotp = slot;
	return *slot;
}

struct entry *
mcp__table_find(struct table *t, const char *key)
{
	return lookup(t, key, NULL);
}

int
mcp__table_add(struct table *t, struct entry *e)
{
	struct entry	**slot;

	if (lookup(t, e->key, &slot) != NULL)
		return MCP_EEXIST;
	e->next = e->hnext = NULL;
	e->seq = t->next_seq++;
	*slot = e;
	if (t->tail != NULL)
		t->tail->next = e;
	else
		t->head = e;
	t->tail = e;
	return MCP_OK;
}

struct entry *
mcp__table_remove(struct table *t, const char *key)
{
	struct entry	*e, **slot, *p, *prev = NULL;

	e = lookup(t, key, &slot);
	if (e == NULL)
		return NULL;
	*slot = e->hnext;
	/* Removal is rare and lists are short: a walk beats a back link. */
	for (p = t->head; p != e; p = p->next)
		prev = p;
	if (prev != NULL)
		prev->next = e->next;
	else
		t->head = e->next;
	if (t->tail == e)
		t->tail = prev;
	return e;
}

void
mcp__table_clear(struct table *t, void (*drop)(struct entry *))
{
	struct entry	*e, *next;

	for (e = t->head; e != NULL; e = next) {
		next = e->next;
		drop(e);
	}
	mcp__table_init(t);
}

/*
 * The cursor is the registration number of the next entry, in hex. It
 * survives entries being added or removed between pages: nothing is
 * skipped or repeated except what really changed.
 */
json_t *
mcp__table_list(struct table *t, const char *member, const char *cursor,
    int limit, int version, json_t *(*to_json)(const struct entry *, int),
    int *bad)
{
	json_t		*res, *arr, *o;
	struct entry	*e;
	uint64_t	 from = 0;
	char		 next[24], *end;
	int		 n = 0;

	*bad = 0;
	if (cursor != NULL) {
		/* Exactly what we hand out: "c" and 1-16 lower-case hex
		 * digits; strtoull alone would take " 1", "+1", "-1", "0x1". */
		if (cursor[0] != 'c' || strlen(cursor) > 17 ||
		    cursor[1] == '\0' || strspn(cursor + 1,
		    "0123456789abcdef") != strlen(cursor + 1)) {
			*bad = 1;
			return NULL;
		}
		from = strtoull(cursor + 1, &end, 16);
		if (*end != '\0') {
			*bad = 1;
			return NULL;
		}
	}
	arr = json_array();
	res = json_pack("{s:o}", member, arr);
	if (res == NULL)
		return NULL;
	for (e = t->head; e != NULL; e = e->next) {
		if (e->seq < from)
			continue;
		if (limit > 0 && n == limit) {
			snprintf(next, sizeof(next), "c%" PRIx64, e->seq);
			json_object_set_new(res, "nextCursor",
			    json_string(next));
			break;
		}
		o = to_json(e, version);
		if (o == NULL || json_array_append_new(arr, o) != 0) {
			json_decref(res);
			return NULL;
		}
		n++;
	}
	return res;
}
