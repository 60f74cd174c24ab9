#!/bin/sh
# interop-stdio.sh: the reference server (build/mcp-demo) against the
# official MCP TypeScript SDK client over stdio. Prints TAP only; the exit
# status is the Node script's (0 when every assertion passed).
#
#   test/interop-stdio.sh [server]	(run from anywhere; paths are
#					 relative to the repo root)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

server=${1:-$MCP_DEMO}

need_node skip
need_sdk

exec node test/node/stdio-interop.mjs "$server"
