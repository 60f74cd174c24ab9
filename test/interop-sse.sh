#!/bin/sh
# interop-sse.sh: the reference server (build/mcp-demo) over the legacy
# HTTP+SSE transport against the official MCP TypeScript SDK's
# SSEClientTransport, directly (test/nginx.sh runs the same script through
# nginx). Prints TAP only; the exit status is the Node script's (0 when
# every assertion passed).
#
#   test/interop-sse.sh [server]	(run from anywhere; paths are
#					 relative to the repo root)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

server=${1:-$MCP_DEMO}

need_node skip
need_sdk

# One keepalive a second and 3 s idle: the keepalive checks without a long
# wait (test/nginx.sh does the long idle through the proxy).
exec node test/node/sse-interop.mjs --keepalive 1 --idle 3 "$server"
