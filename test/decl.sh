#!/bin/sh
# decl.sh: declared arguments and results (mcp_args(7)) with the official
# MCP TypeScript SDK client on stdio, against build/decl-server
# (test/decl-server.c): the schemas sent, the defaults filled in, the
# mistakes refused before the callback, the declared output enforced, a
# bad declaration stopping the server from starting (test/decl.mjs).
# Prints TAP only; the exit status is the Node script's.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
DECL_SERVER=${DECL_SERVER:-$MCP_BUILD/decl-server}
export DECL_SERVER
need_built "$DECL_SERVER"
need_sdk
node test/decl.mjs "$@"
