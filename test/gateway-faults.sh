#!/bin/sh
# gateway-faults.sh: mcp-gateway serving stdio servers that fail
# (test/node/gateway-faults.mjs): a child killed mid-call, SIGTERM mid-call,
# junk on a child's stdout, a child that never answers initialize, one
# that ignores SIGTERM and EOF (its stderr in the log), --max-children,
# --shared with a child that dies, --stateless, and 200 sessions each with
# its own child, all closed at once, twice: no zombie, no fd left, memory
# back. Then the shorter rounds again with the gateway under valgrind
# (AddressSanitizer in the sanitizer build). Prints TAP only.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
GW=$MCP_BUILD/mcp-gateway
need_built "$GW" "$MCP_DEMO"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# run NAME [memcheck]: the script's TAP without its plan, numbered on.
run() {
	node test/node/gateway-faults.mjs "$GW" "$MCP_DEMO" \
	    test/node/quirk-server.mjs "$@" >"$tmp/tap" 2>"$tmp/err"
	_rc=$?
	grep '^\(not \)\{0,1\}ok \|^#' "$tmp/tap" |
	    sed "s/^\(\(not \)\{0,1\}ok\) [0-9]* - /\1 - ${1:+$1: }/"
	if ! grep -q '^1\.\.' "$tmp/tap"; then
		echo "not ok - gateway-faults.mjs $* finished (exit $_rc)"
		sed 's/^/#   /' "$tmp/err" | tail -20
	fi
}
{
	run
	if [ -z "${MCP_SANITIZE-}" ]; then
		run memcheck
	fi
} >"$tmp/all"
cat "$tmp/all"
echo "1..$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/all")"
