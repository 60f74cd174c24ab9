#!/bin/sh
# client-era.sh: the client in both protocol eras. build/client-era
# (test/client-era.c) against build/mcp-demo and build/conformance-server
# on stdio and Streamable HTTP: auto picks 2026-07-28 against these
# dual-era servers, a forced 2026-07-28 too, a forced 2025-11-25 gives a
# legacy session; tools, resources (a non-ASCII URI: Mcp-Name in
# base64), prompts, progress, log messages at a level, a cancel, and
# every result's resultType and serverInfo. Against the official
# TypeScript SDK's legacy-only server (test/node/peer-server.mjs) on
# stdio, stateful and stateless HTTP, auto falls back to initialize, and
# a forced 2026-07-28 fails saying why. mcp-call's --protocol both ways.
# The multi round-trip requests: sampling and elicitation answered by the
# same handlers in 2026-07-28 (conformance-server's input_required), and
# build/mrtr-server's requests of several rounds, two requests in a
# round, the roots, a prompt and a resource. Prints TAP only; servers are
# stopped by PID.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_sdk
ERA=$MCP_BUILD/client-era
CALL=$MCP_BUILD/mcp-call
need_built "$ERA" "$CALL" "$MCP_DEMO" "$CONFORMANCE_SERVER" \
    "${MRTR_SERVER:-$MCP_BUILD/mrtr-server}"
CONF_NAME=mcp-conformance-test-server
M=2026-07-28
L=2025-11-25

tmp=$(mktemp -d) || exit 1
pids=
cleanup() {
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	pids=
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

# era LABEL ARGS...: build/client-era ARGS, its TAP renumbered into this
# one with LABEL before each name; its diagnostics follow a failure.
era() {
	_label=$1
	shift
	"$ERA" "$@" >"$tmp/era.tap" 2>"$tmp/era.err"
	_rc=$?
	_f0=$failed
	_seen=0
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*)
			_seen=1
			rest=${line#ok }
			ok 0 "$_label: ${rest#* - }" ;;
		"not ok "[0-9]*)
			_seen=1
			rest=${line#not ok }
			ok 1 "$_label: ${rest#* - }" ;;
		1..[0-9]*) ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <"$tmp/era.tap"
	if [ "$_rc" -ne 0 ] && [ "$failed" -eq "$_f0" ]; then
		ok 1 "$_label: client-era exited $_rc without a failed assertion" "$tmp/era.err"
	elif [ "$_seen" -eq 0 ]; then
		ok 1 "$_label: client-era said nothing" "$tmp/era.err"
	fi
}

# serve VAR LOG CMD...: CMD in the background, its port (logged as
# "listening on http://127.0.0.1:N" on stderr, or "PORT N" on stdout by
# the Node peer) into VAR.
serve() {
	_var=$1
	_log=$2
	shift 2
	: >"$_log"
	"$@" >"$_log" 2>&1 &
	_pid=$!
	pids="$pids $_pid"
	_i=0
	_port=
	while [ $_i -lt 100 ] && [ -z "$_port" ]; do
		_port=$(sed -n -e 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
		    -e 's|^PORT \([0-9][0-9]*\)$|\1|p' "$_log" | head -n 1)
		[ -n "$_port" ] && break
		kill -0 "$_pid" 2>/dev/null || break
		sleep 0.1
		_i=$((_i + 1))
	done
	eval "$_var=\$_port"
	[ -n "$_port" ]
}

# metric PORT PREFIX: the value of the Prometheus sample PREFIX (0 when
# absent), from the server's /metrics.
metric() {
	curl -s "http://127.0.0.1:$1/metrics" | awk -v p="$2" \
	    'index($0, p) == 1 { v = $2 } END { print v + 0 }'
}

serve dport "$tmp/demo.log" "$MCP_DEMO" --http 127.0.0.1:0 --metrics ||
    bail "mcp-demo --http started"
serve cport "$tmp/conf.log" "$CONFORMANCE_SERVER" --http 127.0.0.1:0 ||
    bail "conformance-server --http started"
serve sport "$tmp/sdk.log" node test/node/peer-server.mjs http ||
    bail "the SDK's server (peer-server.mjs http) started"
serve tport "$tmp/sdkl.log" node test/node/peer-server.mjs http --stateless ||
    bail "the SDK's stateless server started"
DURL=http://127.0.0.1:$dport/mcp
CURL_=http://127.0.0.1:$cport/mcp
SURL=http://127.0.0.1:$sport/mcp
TURL=http://127.0.0.1:$tport/mcp
SDK_STDIO="node test/node/peer-server.mjs stdio"

# ---- mcp-demo ------------------------------------------------------------
era "demo stdio auto" -e $M -- "$MCP_DEMO"
era "demo stdio $M" -p $M -e $M -- "$MCP_DEMO"
era "demo stdio $L" -p $L -e $L -- "$MCP_DEMO"
cancelled='mcp_requests_total{method="tools/call",outcome="cancelled"}'
deleted='mcp_sessions_ended_total{transport="streamable_http",reason="deleted"}'
c0=$(metric "$dport" "$cancelled")
d0=$(metric "$dport" "$deleted")
era "demo http auto" -e $M -u "$DURL"
c1=$(metric "$dport" "$cancelled")
d1=$(metric "$dport" "$deleted")
[ "$c1" -eq $((c0 + 1)) ]
ok $? "demo http $M: the cancel closed the call's stream and the server cancelled it ($c0 -> $c1)"
[ "$d1" -eq "$d0" ]
ok $? "demo http $M: no session, so no DELETE ($d0 -> $d1)"
era "demo http $L" -p $L -e $L -u "$DURL"
d2=$(metric "$dport" "$deleted")
c2=$(metric "$dport" "$cancelled")
[ "$d2" -eq $((d1 + 1)) ] && [ "$c2" -eq $((c1 + 1)) ]
ok $? "demo http $L: a legacy session, DELETEd at the end; its cancel too ($d1 -> $d2, $c1 -> $c2)"

# ---- conformance-server --------------------------------------------------
era "conformance stdio auto" -k conformance -n $CONF_NAME -e $M -- "$CONFORMANCE_SERVER"
era "conformance stdio $L" -k conformance -n $CONF_NAME -p $L -e $L -- "$CONFORMANCE_SERVER"
era "conformance http auto" -k conformance -n $CONF_NAME -e $M -u "$CURL_"
era "conformance http $L" -k conformance -n $CONF_NAME -p $L -e $L -u "$CURL_"

# ---- A legacy-only server: the TypeScript SDK's --------------------------
# shellcheck disable=SC2086
era "sdk stdio auto: falls back" -k sdk -n peer-server -e $L -- $SDK_STDIO
era "sdk http auto: falls back (400 without a modern error)" -k sdk -n peer-server -e $L -u "$SURL"
era "sdk stateless http auto: falls back (-32601 in a 200)" -k sdk-stateless -n peer-server -e $L -u "$TURL"
# shellcheck disable=SC2086
era "sdk stdio $M" -k fail -p $M -s "does not speak $M" -- $SDK_STDIO
era "sdk http $M" -k fail -p $M -s "does not speak $M" -u "$SURL"

# A legacy server that ignores whatever comes before initialize: the
# probe times out (probe-timeout), and auto falls back.
QUIRK="node test/node/quirk-server.mjs stdio preinit"
# shellcheck disable=SC2086
era "quirk preinit stdio auto: the probe times out, falls back" -k quirk -n quirk -e $L -t 1 -- $QUIRK
# shellcheck disable=SC2086
era "quirk preinit stdio $M" -k fail -p $M -t 1 -s "does not speak $M" -- $QUIRK

# ---- feat-server: x-mcp-header (Mcp-Param-*) and subscriptions ------------
# routed's region, opts.n and opts.flag go into Mcp-Param-* headers over
# HTTP in 2026-07-28 (the server answers -32020 to a missing or wrong one;
# a call before any listing gets it, lists and retries once); resources/
# updated and tools/list_changed through subscriptions/listen in
# 2026-07-28, resources/subscribe in the legacy era; nothing after
# unsubscribe.
FEAT=$MCP_BUILD/feat-server
need_built "$FEAT"
serve fport "$tmp/feat.log" "$FEAT" --http 127.0.0.1:0 --metrics ||
    bail "feat-server --http started"
FURL=http://127.0.0.1:$fport/mcp
era "feat http $M" -k feat-http -n feat-server -p $M -e $M -u "$FURL"
era "feat stdio $M" -k feat -n feat-server -p $M -e $M -- "$FEAT"
era "feat http $L" -k feat-http -n feat-server -p $L -e $L -u "$FURL"
era "feat stdio $L" -k feat -n feat-server -p $L -e $L -- "$FEAT"
ml0=$(metric "$fport" mcp_listens)
era "feat http $M again" -k feat-http -n feat-server -p $M -e $M -u "$FURL"
_i=0
while [ "$(metric "$fport" mcp_listens)" -ne 0 ] && [ $_i -lt 50 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
ml1=$(metric "$fport" mcp_listens)
[ "$ml1" -eq 0 ]
ok $? "feat http: every listen closed with its client (mcp_listens $ml0, $ml1)"

# Tool definitions whose x-mcp-header breaks the rules are left out of
# the client's lists, each with a warning.
QBAD="node test/node/quirk-server.mjs stdio badxh"
# shellcheck disable=SC2086
era "quirk badxh stdio $M" -k badxh -n quirk -p $M -e $M -- $QBAD
for t in bad-name bad-type bad-dup; do
	grep -q "warn: client: tools/list: tool $t left out: its x-mcp-header breaks the rules" "$tmp/era.err"
	ok $? "quirk badxh: the warning names $t" "$tmp/era.err"
done
grep -q "does not declare resources.subscribe" "$tmp/era.err"
ok $? "quirk badxh: subscribe warns that the server declares no resources.subscribe" "$tmp/era.err"

# ---- mcp-call ------------------------------------------------------------
# run NAME STATUS PATTERN CMD...: CMD exits STATUS with PATTERN (a fixed
# string) in its stdout, or its stderr when PATTERN starts with "2:".
run() {
	_name=$1 _want=$2 _pat=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	_rc=$?
	case $_pat in
	2:*) _f=$tmp/err _pat=${_pat#2:} ;;
	*) _f=$tmp/out ;;
	esac
	[ "$_rc" -eq "$_want" ] && grep -qF -- "$_pat" "$_f"
	_r=$?
	[ $_r -eq 0 ] || cat "$tmp/out" >>"$tmp/err"
	ok $_r "$_name (exit $_rc)" "$tmp/err"
}
run "mcp-call stdio --protocol $M info" 0 "\"protocolVersion\": \"$M\"" \
    "$CALL" --protocol $M info -- "$MCP_DEMO"
run "mcp-call stdio --protocol $L info" 0 "\"protocolVersion\": \"$L\"" \
    "$CALL" --protocol $L info -- "$MCP_DEMO"
run "mcp-call stdio auto -v says the protocol" 0 "2:mcp-call: protocol $M (stdio)" \
    "$CALL" -v call echo text=hi -- "$MCP_DEMO"
run "mcp-call http --protocol $M call" 0 "hi" \
    "$CALL" --protocol $M --url "$DURL" call echo text=hi
grep -q '"resultType":"complete"' "$tmp/err" || true
run "mcp-call http --protocol $M --json: resultType and serverInfo" 0 '"resultType": "complete"' \
    "$CALL" --protocol $M --json --url "$DURL" call echo text=hi
grep -qF '"io.modelcontextprotocol/serverInfo"' "$tmp/out"
ok $? "mcp-call http --protocol $M --json: _meta serverInfo" "$tmp/out"
run "mcp-call http --protocol $L info" 0 "\"protocolVersion\": \"$L\"" \
    "$CALL" --protocol $L --url "$DURL" info
run "mcp-call http --protocol $M ping" 0 "pong in" \
    "$CALL" --protocol $M --url "$DURL" ping
run "mcp-call http --protocol $M --log-level info: the server's log message" 0 \
    "2:Tool execution completed" \
    "$CALL" --protocol $M --log-level info --url "$CURL_" call test_tool_with_logging
run "mcp-call stdio --protocol $M read, non-ASCII URI" 0 "Zoë" \
    "$CALL" --protocol $M read "demo://greeting/Zoë" -- "$MCP_DEMO"
run "mcp-call http --protocol $M read, non-ASCII URI" 0 "Zoë" \
    "$CALL" --protocol $M --url "$DURL" read "demo://greeting/Zoë"
run "mcp-call http auto against the SDK: legacy" 0 "\"protocolVersion\": \"$L\"" \
    "$CALL" --url "$SURL" info
# shellcheck disable=SC2086
run "mcp-call stdio --protocol $M against the SDK: exit 3, says why" 3 \
    "2:does not speak $M" "$CALL" --protocol $M info -- $SDK_STDIO
run "mcp-call --protocol nonsense: a usage error" 2 "2:unknown protocol version" \
    "$CALL" --protocol 1999-01-01 info -- "$MCP_DEMO"

# ---- Multi round-trip requests -------------------------------------------
# conformance-server's test_sampling and test_elicitation, and
# mrtr-server's rounds, answered by the same handlers in both eras.
MRTR_SERVER=${MRTR_SERVER:-$MCP_BUILD/mrtr-server}
serve mport "$tmp/mrtr.log" "$CONFORMANCE_SERVER" --http 127.0.0.1:0 ||
    bail "$CONFORMANCE_SERVER --http started"
era "mrtr stdio $M" -m -k conformance -n $CONF_NAME -p $M -e $M -- "$CONFORMANCE_SERVER"
era "mrtr http $M" -m -k conformance -n $CONF_NAME -p $M -e $M \
    -u "http://127.0.0.1:$mport/mcp"
era "mrtr stdio $L" -m -k conformance -n $CONF_NAME -p $L -e $L -- "$CONFORMANCE_SERVER"
serve rport "$tmp/mrtrs.log" "$MRTR_SERVER" --http 127.0.0.1:0 ||
    bail "$MRTR_SERVER --http started"
era "mrtr-server stdio auto" -k mrtr -n mrtr-server -e $M -- "$MRTR_SERVER"
era "mrtr-server http auto" -k mrtr -n mrtr-server -e $M \
    -u "http://127.0.0.1:$rport/mcp"
era "mrtr-server http $L" -k mrtr -n mrtr-server -p $L -e $L \
    -u "http://127.0.0.1:$rport/mcp"

tap_end
