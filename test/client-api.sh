#!/bin/sh
# client-api.sh: runs build/client-api (test/client-api.c), the C client
# API against real servers: mcp-demo on stdio, Streamable HTTP and SSE,
# the TypeScript SDK's McpServer (test/node/peer-server.mjs) on each of
# its transports, and the quirk servers (test/node/quirk-server.mjs),
# once the Node peers are installed. Prints TAP only.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_sdk
need_built "$MCP_BUILD/client-api" "$MCP_DEMO"
exec "$MCP_BUILD/client-api"
