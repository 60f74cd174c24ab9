#!/usr/bin/env bash
#
# run-client.sh: the client's cost, beside the official TypeScript SDK's
# client, in the same run, against the same server (build/mcp-demo).
#
# 1. calls/s and client CPU per call at CONC (64) in flight, on stdio,
#    Streamable HTTP and legacy SSE: build/client-bench (libmcp's client,
#    asynchronous, one thread) and test/node/bench-client-ts.mjs (the SDK
#    Client), each making CALLS tools/call of echo, for ROUNDS rounds with
#    the order swapped each round. The HTTP server is one mcp-demo for the
#    whole run.
# 2. start + list: build/mcp-call list against mcp-demo on stdio, beside
#    the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli) doing
#    tools/list on the same server, RUNS times each, wall time.
#
# Raw results go to bench/out/client-STAMP.jsonl, the table of medians and
# ratios to bench/out/client-STAMP.txt and stdout. Every run is bounded by
# timeout(1). Environment: ROUNDS (5), CALLS (20000 for libmcp, TS_CALLS
# 3000 for the SDK: it is slower, and a run of seconds is enough),
# CONC (64), RUNS (10), TRANSPORTS ("stdio http sse"), NODE (node).
#
set -u
cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
CALLS=${CALLS:-20000}
TS_CALLS=${TS_CALLS:-3000}
CONC=${CONC:-64}
RUNS=${RUNS:-10}
TRANSPORTS=${TRANSPORTS:-"stdio http sse"}
NODE=${NODE:-node}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files client

make_demo
[ -x build/client-bench ] && [ -x build/mcp-call ] || { say "run make first"; exit 1; }
have_node @modelcontextprotocol/sdk || { say "no node or no SDK in test/node"; exit 1; }

build/mcp-demo --http 127.0.0.1:0 </dev/null >/dev/null 2>"$SLOG" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null' EXIT
port=
for _ in $(seq 50); do
	port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$SLOG" | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { say "mcp-demo --http did not start"; exit 1; }

# one CLIENT TRANSPORT: one run, its JSON line appended to RESULTS.
one() {
	local who=$1 t=$2 line args
	case $t in
	stdio) args=(--transport stdio) ;;
	http) args=(--transport http --url "http://127.0.0.1:$port/mcp") ;;
	sse) args=(--transport sse --url "http://127.0.0.1:$port/sse") ;;
	esac
	if [ "$who" = libmcp ]; then
		args+=(--concurrency "$CONC" --calls "$CALLS")
		[ "$t" = stdio ] && args+=(-- build/mcp-demo)
		line=$(timeout 120 build/client-bench "${args[@]}" 2>>"$SLOG")
	else
		args+=(--concurrency "$CONC" --calls "$TS_CALLS")
		[ "$t" = stdio ] && args+=(-- build/mcp-demo)
		# The SDK's SSE client warns of its own listener leak by the
		# thousand: stderr is not kept.
		line=$(timeout 300 "$NODE" test/node/bench-client-ts.mjs "${args[@]}" 2>/dev/null)
		line=${line/\{/\{\"client\":\"ts\",}
	fi
	if [ -z "$line" ] || ! printf '%s' "$line" | grep -q calls_per_s || printf '%s' "$line" | grep -q '"errors"'; then
		say "run failed: $who $t: $line"
		nfail=$((nfail + 1))
		return
	fi
	printf '%s\n' "$line" >>"$RESULTS"
}

for r in $(seq "$ROUNDS"); do
	for t in $TRANSPORTS; do
		if [ $((r % 2)) -eq 1 ]; then
			one libmcp "$t"; one ts "$t"
		else
			one ts "$t"; one libmcp "$t"
		fi
	done
	say "round $r/$ROUNDS done"
done

# Start + list, wall time in ms: mcp-call and the Inspector's CLI.
ms() {	# ms CMD...: the wall time of CMD in ms, or nothing if it failed
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || return 1
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
inspector=test/node/node_modules/@modelcontextprotocol/inspector-cli/build/index.js
demo=$PWD/build/mcp-demo
for r in $(seq "$RUNS"); do
	v=$(ms timeout 30 build/mcp-call list -- build/mcp-demo) &&
	    echo "{\"client\":\"mcp-call\",\"transport\":\"start+list\",\"ms\":$v}" >>"$RESULTS"
	if [ -f "$inspector" ]; then
		# It only starts from inside node_modules (upstream
		# modelcontextprotocol/inspector#839): run it from there.
		v=$(cd test/node/node_modules && ms timeout 60 "$NODE" \
		    @modelcontextprotocol/inspector-cli/build/index.js "$demo" --method tools/list) &&
		    echo "{\"client\":\"inspector-cli\",\"transport\":\"start+list\",\"ms\":$v}" >>"$RESULTS"
	fi
done

# median CLIENT TRANSPORT FIELD
median() {
	grep "\"client\":\"$1\"" "$RESULTS" | grep "\"transport\":\"$2\"" |
	    sed -n "s/.*\"$3\":\([0-9.]*\).*/\1/p" | sort -n |
	    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.1f", a / b }'; }

{
	echo "client cost against build/mcp-demo, c=$CONC, medians of $ROUNDS rounds ($(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg))"
	printf '%-6s %14s %14s %7s %14s %14s %7s\n' transport "libmcp calls/s" "ts calls/s" ratio "libmcp us/call" "ts us/call" ratio
	for t in $TRANSPORTS; do
		lr=$(median libmcp "$t" calls_per_s); tr=$(median ts "$t" calls_per_s)
		lc=$(median libmcp "$t" cpu_us_per_call); tc=$(median ts "$t" cpu_us_per_call)
		printf '%-6s %14s %14s %7s %14s %14s %7s\n' "$t" "$lr" "$tr" "$(ratio "$lr" "$tr")x" "$lc" "$tc" "$(ratio "$tc" "$lc")x"
	done
	mc=$(median mcp-call start+list ms); ic=$(median inspector-cli start+list ms)
	echo "start + list on stdio, medians of $RUNS runs: mcp-call $mc ms, inspector-cli $ic ms: $(ratio "$ic" "$mc")x"
} | tee "$TABLE"
bench_end
