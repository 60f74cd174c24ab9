#!/bin/sh
# streamable.sh: the Streamable HTTP transport at /mcp over raw HTTP
# (test/streamable.mjs, Node 20, no npm packages): every status of POST,
# GET and DELETE, the framing of whole and streamed answers, priming
# events and keepalives, --json-response, --stateless, the standalone
# stream, replays after Last-Event-ID (build/conformance-server's
# test_reconnection, build/feat-server's list_changed), --event-log, a
# session flood, DELETE, --session-timeout, Host/Origin/bearer checks and
# SIGTERM. Prints TAP only; the exit status is the Node script's.
#
#   test/streamable.sh [NAME ...]	run only the groups whose names contain NAME
#
# STREAMABLE_TIMES=1 in the environment adds the time of each group.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO" "$CONFORMANCE_SERVER" "$FEAT_SERVER"
exec node test/streamable.mjs "$@"
