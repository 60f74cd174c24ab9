#!/bin/sh
# features.sh: progress notifications, logging/setLevel, tool timeouts and
# a few hostile inputs against build/mcp-demo, on stdio and on the legacy
# HTTP+SSE transport (test/features.mjs, Node 20, with the official MCP
# TypeScript SDK from test/node/node_modules). Prints TAP only; the exit
# status is the Node script's (0 when every assertion passed).
#
#   test/features.sh [stdio|sse] [sdk|raw|timeout] ...
#			(run from anywhere; arguments pick transports and
#			 groups, default all)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "${MCP_DEMO:-build/mcp-demo}"
need_sdk

exec node test/features.mjs "$@"
