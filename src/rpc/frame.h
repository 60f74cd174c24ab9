/*
 * frame.h: the framings that carry JSON-RPC messages, shared by the
 * server and the client: JSON lines (stdio) and server-sent events
 * (HTTP). Pure byte splitting, no I/O; each reader belongs to one
 * connection and so to the thread that owns it.
 */
#ifndef MCP_RPC_FRAME_H
#define MCP_RPC_FRAME_H

#include "rpc/rpc.h"

/* ---- JSON lines ------------------------------------------------------ */

/*
 * A line reader with a size cap. Bytes of a line over MAX are not kept:
 * they stream past a struct idscan, so that the sender of a message too
 * large to take can still be answered by its id.
 */
struct jsonl {
	struct buf	 in;
	size_t		 max;		/* longest line taken */
	size_t		 scanned;	/* bytes after in.off with no newline */
	int		 skipping;	/* in a line over max */
	int		 bom;		/* a UTF-8 BOM may start the input */
	struct idscan	 scan;
};

/* One whole line, without its newline and CR; blank lines are skipped.
 * Returns < 0 to stop before this line (it stays for the next split). */
typedef int	(*jsonl_line_fn)(void *arg, const char *p, size_t n);
/* A line over the cap has ended; SC scanned it for an id. */
typedef void	(*jsonl_over_fn)(void *arg, const struct idscan *sc);

void	 mcp__jsonl_init(struct jsonl *j, size_t max) MCP_HIDDEN;
void	 mcp__jsonl_free(struct jsonl *j) MCP_HIDDEN;
/* Room for N more bytes at in.data + in.len; MCP_ENOMEM. */
int	 mcp__jsonl_reserve(struct jsonl *j, size_t n) MCP_HIDDEN;
/* After N bytes were read into the reserved room: every whole line goes
 * to LINE. Returns 1 when LINE stopped the split, else 0. */
int	 mcp__jsonl_split(struct jsonl *j, size_t n, jsonl_line_fn line,
	    jsonl_over_fn over, void *arg) MCP_HIDDEN;
/* The input ended: a last line without its newline counts. */
void	 mcp__jsonl_end(struct jsonl *j, jsonl_line_fn line,
	    jsonl_over_fn over, void *arg) MCP_HIDDEN;

/* ---- Server-sent events ---------------------------------------------- */

/*
 * An event-stream parser (the WHATWG rules): LF, CR LF or CR end lines;
 * "data:" lines join with LF; "id:" sets the last event id, which lasts
 * across events; "retry:" the reconnection delay; comments and unknown
 * fields are skipped. An event whose data grows past MAX is dropped as
 * it comes, scanned for a JSON-RPC id.
 */
struct sse_parser {
	struct buf	 line;		/* the line so far */
	struct buf	 data;
	char		 event[64];
	char		 last_id[256];	/* the stream's last event id */
	int		 has_id;	/* this event set one */
	long		 retry_ms;	/* -1: none given */
	int		 cr;		/* the last byte was a CR */
	int		 bom;		/* a BOM may still start the stream */
	size_t		 max;
	int		 over;		/* this event's data is over max */
	int		 skipline;	/* in a line too long to keep */
	struct idscan	 scan;
};

/* An event: its type ("message" when none), data (NUL-terminated), and
 * the stream's last event id ("" when none). */
typedef void	(*sse_event_fn)(void *arg, const char *event,
		    const char *data, size_t len, const char *id);
/* An event over the cap was dropped; SC scanned its data for an id. */
typedef void	(*sse_over_fn)(void *arg, const struct idscan *sc);

void	 mcp__sse_parser_init(struct sse_parser *p, size_t max) MCP_HIDDEN;
void	 mcp__sse_parser_free(struct sse_parser *p) MCP_HIDDEN;
/* Feeds N bytes; MCP_ENOMEM when a line could not be kept. */
int	 mcp__sse_feed(struct sse_parser *p, const char *s, size_t n,
	    sse_event_fn ev, sse_over_fn over, void *arg) MCP_HIDDEN;

/* ---- The pending table ----------------------------------------------- */

/*
 * Requests waiting for their answer, by the integer id this side gave
 * them: ids are local correlation tokens, unique for the table's life.
 * Intrusive: the entry sits inside the caller's own struct, so adding
 * allocates nothing but the occasional growth of the slots.
 */
struct pending_entry {
	struct pending_entry	*next;
	long long		 id;
};

struct pending {
	struct pending_entry	**slots;
	size_t			 nslots;	/* a power of two, or 0 */
	size_t			 count;
};

/* Adds E under E->id (set by the caller); MCP_ENOMEM. */
int	 mcp__pending_add(struct pending *t, struct pending_entry *e)
	    MCP_HIDDEN;
/* Removes and returns the entry of ID, or NULL. */
struct pending_entry *mcp__pending_take(struct pending *t, long long id)
	    MCP_HIDDEN;
struct pending_entry *mcp__pending_find(struct pending *t, long long id)
	    MCP_HIDDEN;
/* Removes every entry MATCH says yes to and returns them as a list
 * linked by next (in no order). MATCH must not touch the table. */
struct pending_entry *mcp__pending_take_if(struct pending *t,
	    int (*match)(struct pending_entry *e, void *arg), void *arg)
	    MCP_HIDDEN;
/* Removes and returns any one entry, or NULL when empty: for draining. */
struct pending_entry *mcp__pending_pop(struct pending *t) MCP_HIDDEN;
void	 mcp__pending_free(struct pending *t) MCP_HIDDEN;
/* A response's id as this side's integer id (ids are integers this side
 * chose); -1 for anything else, a string included. */
long long mcp__pending_id_of(const json_t *id) MCP_HIDDEN;

#endif /* MCP_RPC_FRAME_H */
