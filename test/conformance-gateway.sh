#!/bin/sh
# conformance-gateway.sh: the official conformance suite through
# mcp-gateway, which serves build/conformance-server over stdio on
# Streamable HTTP, first with a child per session, then with one child
# for every session (--shared). Every scenario that passes directly
# (test/conformance.sh) passes through the gateway too: the same 40
# checks of the active suite, and 46 of the 47 of --suite all. The one
# left is server-sse-polling's disconnect-resume, which the suite reports
# as information, not failure, when the stream is not closed mid-call:
# the fixture closes it with mcp_call_close_stream, and over its stdio
# there is no stream to close. Its files are test/out/conformance-gw*.
cd "$(dirname "$0")/.." || exit 1
B=${MCP_BUILD:-build}
child=${CONFORMANCE_SERVER:-$B/conformance-server}

# run NAME [GATEWAY OPTION...]: the suite's TAP, without its plan.
run() {
	_name=$1
	shift
	CONFORMANCE_SERVER=$B/mcp-gateway CONFORMANCE_ARGS="$* -- $child" \
	CONFORMANCE_NAME=$_name CONFORMANCE_WANT_ALL=46 \
	    sh test/conformance.sh | grep -v '^1\.\.' |
	    sed "s/^\(\(not \)\{0,1\}ok\) [0-9]* - /\1 - $_name: /"
}
run conformance-gw >"${TMPDIR:-/tmp}/cgw.$$"
run conformance-gw-shared --shared >>"${TMPDIR:-/tmp}/cgw.$$"
cat "${TMPDIR:-/tmp}/cgw.$$"
echo "1..$(grep -c '^\(not \)\{0,1\}ok ' "${TMPDIR:-/tmp}/cgw.$$")"
rm -f "${TMPDIR:-/tmp}/cgw.$$"
