#!/bin/sh
# stages.sh: SIGTERM at every stage of a call (queued, running, answered
# but unread, streaming) on every transport: stdio, /sse, /mcp with SSE
# and JSON bodies, --stateless (test/stages.mjs, Node 20, no npm
# packages). Prints TAP only; the exit status is the Node script's.
#
#   test/stages.sh [NAME ...]	run only the cases whose names contain NAME
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO"
exec node test/stages.mjs "$@"
