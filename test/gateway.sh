#!/bin/sh
# gateway.sh: tools/mcp-gateway. So far its remote-to-stdio half
# (--url): test/node/gateway-remote.mjs drives it with the official
# TypeScript SDK's stdio client in front of the SDK's own Streamable HTTP
# and legacy SSE servers and of mcp-demo with a token; then a scripted
# conversation against mcp-demo runs under valgrind (AddressSanitizer in
# the sanitizer build): no memory error, no leak. Prints TAP only.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_sdk
GW=$MCP_BUILD/mcp-gateway
need_built "$GW" "$MCP_DEMO"

tmp=$(mktemp -d) || exit 1
# The Node script's TAP, without its plan: the count goes on below.
node test/node/gateway-remote.mjs "$GW" "$MCP_DEMO" >"$tmp/node.tap" 2>"$tmp/node.err"
rc=$?
grep -v '^1\.\.' "$tmp/node.tap"
n=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/node.tap")
failed=$(grep -c '^not ok ' "$tmp/node.tap")
trap 'kill $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
"$MCP_DEMO" --http 127.0.0.1:0 </dev/null >/dev/null 2>"$tmp/demo.log" &
dpid=$!
port=$(logged_port "$tmp/demo.log" "$dpid") || bail "mcp-demo --http starts"
{
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"vg","version":"1"}}}'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300},"_meta":{"progressToken":7}}}'
	echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":5000}}}'
	echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}'
	echo 'not json'
	echo '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
} >"$tmp/in.txt"
# The input, then stdin held open until the last answer is out (20 s at
# most), then EOF: the gateway ends the session and exits.
feed() {
	cat "$tmp/in.txt"
	_i=0
	while [ $_i -lt 100 ] && ! grep -q '"id":2,"result"' "$tmp/out" 2>/dev/null; do
		sleep 0.2
		_i=$((_i + 1))
	done
	sleep 0.5
}
if [ -n "${MCP_SANITIZE-}" ]; then
	feed | timeout 60 "$GW" --url "http://127.0.0.1:$port/mcp" \
	    >"$tmp/out" 2>"$tmp/err"
	r=$?
	grep -q 'ERROR: \(Address\|Leak\)Sanitizer' "$tmp/err" && r=99
else
	feed | timeout 60 valgrind -q --leak-check=full \
	    --errors-for-leak-kinds=definite --error-exitcode=99 \
	    "$GW" --url "http://127.0.0.1:$port/mcp" >"$tmp/out" 2>"$tmp/err"
	r=$?
fi
[ $r -eq 0 ]
ok $? "memcheck: mcp-gateway --url through a conversation with a cancel and a bad line" "$tmp/err"
grep -q '"id":2,"result"' "$tmp/out" && grep -q '"progressToken":7' "$tmp/out" &&
    grep -q '"id":4,"result"' "$tmp/out" && grep -q '"code":-32700' "$tmp/out" &&
    ! grep -q '"id":3,"result"' "$tmp/out"
ok $? "memcheck: the conversation's answers (progress, a parse error, no answer to the cancelled call)" "$tmp/out"
[ "$rc" -eq 0 ]
ok $? "the Node script ends with status 0" "$tmp/node.err"
tap_end
