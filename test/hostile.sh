#!/bin/sh
# hostile.sh: build/mcp-demo against a hostile or careless stdio client
# (test/hostile.mjs, Node 20, no npm packages). Prints TAP only; the exit
# status is the Node script's (0 when every assertion passed).
#
#   test/hostile.sh [NAME ...]	run only the groups whose names contain NAME
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO"
exec node test/hostile.mjs "$@"
