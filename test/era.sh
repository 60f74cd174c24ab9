#!/bin/sh
# era.sh: protocol 2026-07-28 (the stateless core) beside the versions of
# initialize, on stdio and Streamable HTTP, against build/mcp-demo and
# build/conformance-server (test/era.mjs: raw JSON lines and fetch, since
# no npm SDK speaks 2026-07-28 yet, and the TypeScript SDK 1.32.2 as the
# legacy client that must see nothing new). Prints TAP only; the exit
# status is the Node script's. About 5 s.
#
#   test/era.sh [GROUP ...]	only the groups whose names contain GROUP
#				(stdioDemo, stdioConformance, httpDemo, mixed,
#				shapes)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO" "$CONFORMANCE_SERVER" "$FEAT_SERVER" \
    "$MCP_BUILD/notes-server"
need_sdk
exec node test/era.mjs "$@"
