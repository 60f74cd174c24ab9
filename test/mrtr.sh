#!/bin/sh
# mrtr.sh: multi round-trip requests of protocol 2026-07-28
# (input_required, inputResponses, requestState) on stdio and Streamable
# HTTP, against build/mrtr-server, build/feat-server and
# build/conformance-server (test/mrtr.mjs, raw JSON lines and fetch: no
# npm SDK speaks 2026-07-28 yet); and that a legacy session still gets
# real requests from the server. Prints TAP only; the exit status is the
# Node script's. About 5 s.
#
#   test/mrtr.sh [GROUP ...]	only the groups whose names contain GROUP
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

: "${MRTR_SERVER:=$MCP_BUILD/mrtr-server}"
export MRTR_SERVER
need_node
need_built "$MRTR_SERVER" "$FEAT_SERVER" "$CONFORMANCE_SERVER"
exec node test/mrtr.mjs "$@"
