#!/bin/sh
# features2.sh: resources, resource templates, prompts, completion and
# list_changed, against build/feat-server (test/feat-server.c) and the
# additions to build/mcp-demo, on stdio and on the legacy HTTP+SSE
# transport (test/features2.mjs, Node 20, with the official MCP
# TypeScript SDK from test/node/node_modules). Prints TAP only; the exit
# status is the Node script's (0 when every assertion passed).
#
#   test/features2.sh [stdio|sse]	(run from anywhere; arguments pick
#					 transports, default both)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "${FEAT_SERVER:-build/feat-server}" "${MCP_DEMO:-build/mcp-demo}"
need_sdk

exec node test/features2.mjs "$@"
