#!/usr/bin/env bash
#
# run-stdio.sh: compare libmcp's stdio transport with the official
# TypeScript SDK and with the floor, using mcp-bench(1).
#
# For ROUNDS rounds it runs four echo servers one after the other (the
# order rotates each round, so slow drift on a shared machine hits them
# all alike): build/mcp-demo (its echo on a worker), the same with
# --loop-tools (mcp-demo-loop: echo on the loop thread), the TypeScript
# peer
# test/node/bench-echo-stdio.mjs, and build/floor-stdio, the fastest stdio
# server possible.  Each is measured with 1 request in flight (client and
# server pinned to different CPUs: round-trip latency, wake-ups included) and
# with 64 in flight (unpinned by default: throughput).  Each run lasts DUR
# seconds after a warm-up, so a slow server gets fewer requests but as
# much time.  Raw results go to bench/out/stdio-STAMP.jsonl, one JSON
# object per run, the servers' stderr to bench/out/stdio-STAMP.server.log,
# and the table of medians (with the spread of req/s, and the load average,
# since a shared machine makes noise) to bench/out/stdio-STAMP.txt and
# stdout.  Every run is bounded by mcp-bench's own timeout and by
# timeout(1), so the script always ends; it exits 1 if any run failed.
#
# Environment: ROUNDS (5), DUR (3 s, measured phase of each run), WARM
# (20000 requests at c=64), WARM1 (3000 at c=1), CLIENT_CPU (0),
# SERVER_CPU (1), PIN64 (0: set 1 to pin the c=64 runs too), SERVERS
# ("mcp-demo mcp-demo-loop ts floor"), NODE (node), TEXT_BYTES (unset:
# mcp-bench's "hello world"; N: each call echoes a text of N bytes).
#
set -u

cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
WARM=${WARM:-20000}
WARM1=${WARM1:-3000}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PIN64=${PIN64:-0}
SERVERS=${SERVERS:-"mcp-demo mcp-demo-loop ts floor"}
NODE=${NODE:-node}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files stdio

build_one build/mcp-bench tools/mcp-bench.c -lpthread
build_one build/floor-stdio bench/floor-stdio.c
make_demo

# server_cmd NAME: CMD[NAME], if NAME can run here.
server_cmd() {
	case $1 in
	mcp-demo)
		if [ -x build/mcp-demo ]; then
			CMD[$1]="build/mcp-demo"
		else
			say "skipping mcp-demo: build/mcp-demo not built"
			return 1
		fi ;;
	mcp-demo-loop)
		if [ -x build/mcp-demo ]; then
			CMD[$1]="build/mcp-demo --loop-tools"
		else
			say "skipping mcp-demo-loop: build/mcp-demo not built"
			return 1
		fi ;;
	ts)
		if have_node @modelcontextprotocol/sdk; then
			CMD[$1]="$NODE test/node/bench-echo-stdio.mjs"
		else
			say "skipping ts: no node, or no SDK in test/node" \
			    "(npm ci --prefix test/node)"
			return 1
		fi ;;
	floor)
		CMD[$1]="build/floor-stdio" ;;
	*)
		say "unknown server $1"
		return 1 ;;
	esac
}
pick_servers
pins

extra=()
if [ -n "${TEXT_BYTES:-}" ]; then
	extra=(-a "{\"text\":\"$(head -c "$TEXT_BYTES" /dev/zero | tr '\0' x)\"}")
	say "each call echoes $TEXT_BYTES bytes"
fi
run_rounds "$(awk -v d="$DUR" 'BEGIN { printf "%d", d * 4 + 60 }')" \
    "-c 1 -w $WARM1 $pin1" "-c 64 -w $WARM $pin64" "${extra[@]}"

median_table 0 \
    "mcp-demo/ts    req/s  c=64|mcp-demo|ts|64|rps" \
    "mcp-demo/floor req/s  c=64|mcp-demo|floor|64|rps" \
    "mcp-demo/floor p50    c=1 |mcp-demo|floor|1|p50_us" \
    "mcp-demo/ts    cpu/req c=64|mcp-demo|ts|64|server_cpu_us" \
    "mcp-demo/floor req/s  c=64 (pool tools)|mcp-demo|floor|64|rps|>= 0.6" \
    "loop/floor     req/s  c=64 (loop tools)|mcp-demo-loop|floor|64|rps|>= 0.8" \
    "loop/floor     p50    c=1  (loop tools)|mcp-demo-loop|floor|1|p50_us|<= 1.1" \
    "loop/pool      req/s  c=64|mcp-demo-loop|mcp-demo|64|rps" \
    "loop/ts        req/s  c=64|mcp-demo-loop|ts|64|rps"
bench_end
