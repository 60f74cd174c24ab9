#!/bin/sh
# defects.sh: the defects of the hardening issue over HTTP, as users met
# them (test/defects.mjs, Node 20, no npm packages): calls longer than
# --request-timeout, SIGTERM with stateless calls in flight, the drain
# after a whole body, a kept-alive connection after a stream, clients
# that leave (and 1,000 at once), bodies over --max-message as fetch
# sends them, template variables that are not UTF-8, cancelled POSTs,
# requests before notifications/initialized, the 401's details. Prints
# TAP only; the exit status is the Node script's.
#
#   test/defects.sh [NAME ...]	run only the groups whose names contain NAME
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO" "$FEAT_SERVER"
exec node test/defects.mjs "$@"
