#!/bin/sh
# shutdown.sh: how build/mcp-demo ends: end of input with calls in
# flight, SIGTERM and SIGINT with and without calls that outlive the
# grace period, a second signal, and a reader that closes its end
# (test/shutdown.mjs, Node 20, no npm packages). Prints TAP only; the
# exit status is the Node script's.
#
#   test/shutdown.sh [NAME ...]	run only the cases whose names contain NAME
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO"
exec node test/shutdown.mjs "$@"
