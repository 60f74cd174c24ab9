#!/bin/sh
# conformance-fixtures.sh: the fixtures of the official MCP conformance
# suite (CONFORMANCE.md sections 4 and 5) as served by
# build/conformance-server (examples/conformance-server.c), checked with
# the official TypeScript SDK client on stdio (test/conformance-fixtures.mjs,
# Node 20). Prints TAP only; the exit status is the Node script's.
#
#   test/conformance-fixtures.sh	(run from anywhere)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "${CONFORMANCE_SERVER:-build/conformance-server}"
need_sdk

exec node test/conformance-fixtures.mjs "$@"
