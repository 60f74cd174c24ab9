/*
 * rpc.h: the JSON-RPC 2.0 layer, src/rpc/, which both sides of the wire
 * share (the server, and a client beside it): sorting an incoming
 * message out, building outgoing ones, the keys that tell ids apart,
 * and the scan that finds the id of a message too large to parse. Pure:
 * no I/O, no globals, any thread. Includes core/ only.
 */
#ifndef MCP_RPC_H
#define MCP_RPC_H

#include "core/core.h"

/* ---- The protocol's versions (jsonrpc.c), which both sides speak ----- */

/* As yyyymmdd, so features gate with >=. */
#define MCP_V20241105	20241105
#define MCP_V20250326	20250326
#define MCP_V20250618	20250618
#define MCP_V20251125	20251125
#define MCP_V_LATEST	MCP_V20251125
/* The stateless core (era.c): never negotiated by initialize, so
 * mcp__version_of does not know it; each request names it in _meta. */
#define MCP_V20260728	20260728

/* The version named NAME ("2025-06-18"), or 0 when we do not speak it. */
int	 mcp__version_of(const char *name) MCP_HIDDEN;
/* VERSION's name; the latest's for one we do not speak. */
const char *mcp__version_str(int version) MCP_HIDDEN;

/* ---- jsonrpc.c: the envelope, pure ------------------------------------ */

enum rpc_kind {
	RPC_REQUEST,
	RPC_NOTIFICATION,
	RPC_RESPONSE,
	RPC_INVALID
};

struct rpc_msg {
	enum rpc_kind	 kind;
	const char	*method;	/* requests and notifications */
	size_t		 method_len;
	json_t		*id;		/* from the fields; NULL when unusable */
	const char	*why;		/* RPC_INVALID: the reason */
};

void	 mcp__rpc_classify(struct rpc_fields *f, struct rpc_msg *m)
	    MCP_HIDDEN;
/* Fills F from a parsed object (a batch element); MCP_EINVAL if MSG is
 * not an object. */
int	 mcp__rpc_fields_from_json(json_t *msg, struct rpc_fields *f)
	    MCP_HIDDEN;
void	 mcp__rpc_fields_clear(struct rpc_fields *f) MCP_HIDDEN;
int	 mcp__rpc_result(struct buf *b, const json_t *id,
	    const json_t *result) MCP_HIDDEN;
int	 mcp__rpc_error(struct buf *b, const json_t *id, int code,
	    const char *msg, const json_t *data) MCP_HIDDEN;
int	 mcp__rpc_request(struct buf *b, const json_t *id, long long nid,
	    const char *method, const json_t *params, int progress)
	    MCP_HIDDEN;
int	 mcp__rpc_notification(struct buf *b, const char *method,
	    const json_t *params) MCP_HIDDEN;
/* A key that tells ids apart by value and JSON type ("i42", "s42"). */
int	 mcp__rpc_id_key(const json_t *id, char *key, size_t keylen)
	    MCP_HIDDEN;

/* The id of a message too large to parse, found by a streaming scan of
 * its top-level members (jsonrpc.c). */
struct idscan {
	int	 state;
	int	 depth;
	int	 instr;
	int	 esc;
	int	 which;		/* the key just read: 1 id, 2 method */
	char	 key[8];
	size_t	 klen;
	char	 val[64];	/* the id's value so far */
	size_t	 vlen;
	int	 vover;		/* too long to be an id */
	char	 id[64];
	size_t	 idlen;
	int	 has_id;
	int	 has_method;
	int	 complete;	/* the whole object was seen */
};

void	 mcp__idscan_init(struct idscan *sc) MCP_HIDDEN;
void	 mcp__idscan_feed(struct idscan *sc, const char *data, size_t len)
	    MCP_HIDDEN;
/* A new reference to the id found, or NULL. */
json_t	*mcp__idscan_id(const struct idscan *sc) MCP_HIDDEN;

#endif /* MCP_RPC_H */
