#!/bin/sh
# features4.sh: annotations and icons, gated by the negotiated protocol
# version: annotated content blocks of every type (mcp_result_annotate),
# annotated resources and templates, icons of tools, resources,
# templates and prompts; against build/feat-server (test/feat-server.c)
# on stdio and on the legacy HTTP+SSE transport (test/features4.mjs,
# Node 20, with the official MCP TypeScript SDK from test/node/node_modules,
# and raw JSON-RPC at each protocol version). Prints TAP only; the exit
# status is the Node script's.
#
#   test/features4.sh [stdio|sse] [sdk|raw] ...
#			(run from anywhere; arguments pick transports and
#			 groups, default all)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "${FEAT_SERVER:-build/feat-server}"
need_sdk

exec node test/features4.mjs "$@"
