#!/bin/sh
# who.sh: "who is calling" (mcp_call_session(3), mcp_server_set_auth(3))
# against build/who-server, with real signed tokens: an RSA key made now
# for this run (openssl genpkey), and JWTs (RS256) made and signed here
# with openssl dgst -sign, which the server's hook verifies with OpenSSL.
# test/who.mjs drives the server with the official TypeScript SDK over
# stdio, Streamable HTTP and SSE, and with raw HTTP; the stdio session is
# also run under valgrind (the session data freed, nothing lost). Prints
# TAP.
#
#   test/who.sh [GROUP...]	(test/who.mjs's groups; default all)
#
# WHO_SERVER names another server binary (make SANITIZE=1 builds
# build/san/who-server: MCP_BUILD=build/san sh test/who.sh runs it).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

: "${WHO_SERVER:=$MCP_BUILD/who-server}"
if [ ! -x "$WHO_SERVER" ]; then
	echo "1..0 # SKIP $WHO_SERVER is not built (it needs libcrypto:" \
	    "apt-get install libssl-dev, then ./configure)"
	exit 0
fi
command -v openssl >/dev/null 2>&1 || {
	echo "1..0 # SKIP openssl not found"
	exit 0
}
need_node
need_sdk

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-who.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# The keys: the server's, and another one for a forged signature.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
    -out "$tmp/key.pem" 2>"$tmp/openssl.err" &&
    openssl pkey -in "$tmp/key.pem" -pubout -out "$tmp/pub.pem" \
    2>>"$tmp/openssl.err" &&
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
    -out "$tmp/other.pem" 2>>"$tmp/openssl.err"
ok $? "openssl made a key pair for this run, and another key" \
    "$tmp/openssl.err"

b64url() {
	openssl base64 -A | tr '+/' '-_' | tr -d '='
}

# jwt PAYLOAD [KEY] [HEADER]: a JWT of PAYLOAD (JSON) signed RS256 with
# KEY (default the server's).
jwt() {
	_hdr=${3-}
	[ -n "$_hdr" ] || _hdr='{"alg":"RS256","typ":"JWT"}'
	_h=$(printf '%s' "$_hdr" | b64url)
	_p=$(printf '%s' "$1" | b64url)
	_s=$(printf '%s' "$_h.$_p" |
	    openssl dgst -sha256 -sign "${2:-$tmp/key.pem}" | b64url)
	printf '%s.%s.%s' "$_h" "$_p" "$_s"
}

now=$(date +%s)
later=$((now + 600))
claims() {	# claims SUB SCOPE EXP [AUD] [N]
	printf '{"sub":"%s","aud":"%s","scope":"%s","iat":%d,"exp":%d,"n":%d}' \
	    "$1" "${4:-who-test}" "$2" "$now" "$3" "${5:-1}"
}
alice=$(jwt "$(claims alice "read mcp:tools" "$later")")
alice2=$(jwt "$(claims alice "mcp:tools" "$later" who-test 2)")
bob=$(jwt "$(claims bob "mcp:tools" "$later")")
expired=$(jwt "$(claims alice "mcp:tools" $((now - 60)))")
noscope=$(jwt "$(claims alice "read" "$later")")
badsig=$(jwt "$(claims alice "mcp:tools" "$later")" "$tmp/other.pem")
badaud=$(jwt "$(claims alice "mcp:tools" "$later" someone-else)")
# alg "none" with no signature: the classic forgery.
algnone="$(printf '%s' '{"alg":"none","typ":"JWT"}' | b64url).$(claims \
    alice "mcp:tools" "$later" | b64url)."
cat > "$tmp/tokens.json" <<EOF
{"alice":"$alice","alice2":"$alice2","bob":"$bob","expired":"$expired",
 "noscope":"$noscope","badsig":"$badsig","badaud":"$badaud",
 "algnone":"$algnone","garbage":"not-a-jwt"}
EOF
# A signed token is three base64url parts; the signature is 256 bytes.
sig=${alice##*.}
[ "$(printf '%s' "$alice" | tr -cd . | wc -c)" -eq 2 ] &&
    [ "${#sig}" -eq 342 ]
ok $? "the tokens are JWTs signed with RS256 (2048-bit key)"

# The stdio session under valgrind: its data is freed when it closes.
if command -v valgrind >/dev/null 2>&1 &&
    [ "$MCP_BUILD" = build ] && [ "$WHO_SERVER" = build/who-server ]; then
	printf '%s\n' \
	    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"vg","version":"1"}}}' \
	    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami"}}' \
	    '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"who://me"}}' \
	    '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}' \
	    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami"}}' |
	    valgrind -q --leak-check=full --show-leak-kinds=definite \
	    --errors-for-leak-kinds=definite --error-exitcode=99 \
	    "$WHO_SERVER" --stdio > "$tmp/vg.out" 2> "$tmp/vg.err"
	rc=$?
	[ "$rc" -eq 0 ] && grep -q 'who: opens=1 closes=1' "$tmp/vg.err" &&
	    [ "$(grep -c '"result"' "$tmp/vg.out")" -eq 4 ]
	ok $? "stdio under valgrind: 4 answers, opened and closed once, no \
leak, no error (exit $rc)" "$tmp/vg.err"
	grep -q '\\"kind\\":\\"tool\\".*\\"clientInfo\\":{\\"name\\":\\"vg\\",\\"version\\":\\"1\\"}' \
	    "$tmp/vg.out"
	ok $? "stdio under valgrind: the tool saw the session's clientInfo" \
	    "$tmp/vg.out"
fi

WHO_SERVER=$WHO_SERVER WHO_KEY="$tmp/pub.pem" WHO_TOKENS="$tmp/tokens.json" \
    node test/who.mjs "$@" > "$tmp/node.tap"
rc=$?
# The Node script's TAP, numbered after ours.
awk -v n="$n" '
	/^(not )?ok [0-9]+/ {
		bad = /^not /
		sub(/^(not )?ok [0-9]+/, "")
		print (bad ? "not ok " : "ok ") ++n $0
		next
	}
	/^1\.\./ { next }
	{ print }' "$tmp/node.tap"
n=$((n + $(grep -c '^\(not \)\{0,1\}ok [0-9]' "$tmp/node.tap")))
failed=$((failed + $(grep -c '^not ok [0-9]' "$tmp/node.tap")))
[ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] ||
    ok 1 "test/who.mjs exits 0 (exit $rc)"
tap_end
