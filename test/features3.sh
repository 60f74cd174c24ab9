#!/bin/sh
# features3.sh: requests from the server to the client, made from inside
# a tool callback (mcp_call_sample, mcp_call_elicit, mcp_call_roots):
# sampling/createMessage, elicitation/create (form and url mode) and
# roots/list, against build/feat-server (test/feat-server.c) on stdio and
# on the legacy HTTP+SSE transport (test/features3.mjs, Node 20, with the
# official MCP TypeScript SDK from test/node/node_modules, and raw
# JSON-RPC). Prints TAP only; the exit status is the Node script's (0
# when every assertion passed).
#
#   test/features3.sh [stdio|sse] [sdk|nocap|raw|modes|eof] ...
#			(run from anywhere; arguments pick transports and
#			 groups, default all)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "${FEAT_SERVER:-build/feat-server}"
need_sdk

exec node test/features3.mjs "$@"
