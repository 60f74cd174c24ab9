#!/usr/bin/env bash
#
# run-metrics.sh: what --metrics costs, on stdio and on Streamable HTTP
# (/mcp), using mcp-bench(1), beside the TypeScript SDK in the same run.
#
# For ROUNDS rounds, on each transport, it runs the echo servers one
# after the other (the order rotates each round):
#   stdio:  demo (build/mcp-demo), demo-metrics (the same with
#           --metrics-listen 127.0.0.1:0, so that every call is counted),
#           ts (test/node/bench-echo-stdio.mjs);
#   /mcp:   demo (build/mcp-demo --http 127.0.0.1:0), demo-metrics (the
#           same with --metrics: every call and every HTTP response
#           counted), ts (test/node/bench-echo-streamable.mjs).
# Each with 1 request in flight (pinned, latency) and 64 (throughput), DUR
# seconds after a warm-up. Raw results go to bench/out/metrics-stdio-STAMP
# and bench/out/metrics-http-STAMP (.jsonl, .server.log, .txt), and the
# tables of medians to stdout: demo-metrics/demo req/s and server CPU per
# request at c=64 is the cost (target: within the run-to-run noise, or
# under 3%). Instructions per call, which do not depend on the machine's
# load, are in docs/PERFORMANCE.md (callgrind, metrics on and off).
#
# Environment: ROUNDS (5), DUR (3), WARM_STDIO (20000), WARM_HTTP (5000),
# WARM1_STDIO (3000), WARM1_HTTP (2000), CLIENT_CPU (0), SERVER_CPU (1),
# PIN64 (0), NODE (node), TRANSPORTS ("stdio http").
#
set -u

cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PIN64=${PIN64:-0}
NODE=${NODE:-node}
# shellcheck source=bench/lib.sh
. bench/lib.sh

build_one build/mcp-bench tools/mcp-bench.c "-pthread -lm"
make_demo

TRANSPORTS=${TRANSPORTS:-"stdio http"}

# ---- stdio -------------------------------------------------------------------

if [[ " $TRANSPORTS " == *" stdio "* ]]; then
WARM=${WARM_STDIO:-20000}
WARM1=${WARM1_STDIO:-3000}
SERVERS="demo demo-metrics ts"
bench_files metrics-stdio
unset CMD SOPTS
declare -A CMD SOPTS
server_cmd() {
	case $1 in
	demo) CMD[$1]="build/mcp-demo" ;;
	demo-metrics) CMD[$1]="build/mcp-demo --metrics-listen 127.0.0.1:0" ;;
	ts)
		if have_node @modelcontextprotocol/sdk; then
			CMD[$1]="$NODE test/node/bench-echo-stdio.mjs"
		else
			say "skipping ts: no SDK in test/node (npm ci --prefix test/node)"
			return 1
		fi ;;
	esac
}
pick_servers
pins
run_rounds "$(awk -v d="$DUR" 'BEGIN { printf "%d", d * 4 + 60 }')" \
    "-c 1 -w $WARM1 $pin1" "-c 64 -w $WARM $pin64"
median_table 0 \
    "demo-metrics/demo req/s   c=64|demo-metrics|demo|64|rps" \
    "demo-metrics/demo cpu/req c=64|demo-metrics|demo|64|server_cpu_us" \
    "demo-metrics/demo p50     c=1 |demo-metrics|demo|1|p50_us" \
    "demo-metrics/ts   req/s   c=64|demo-metrics|ts|64|rps"
fi

# ---- Streamable HTTP ---------------------------------------------------------

if [[ " $TRANSPORTS " == *" http "* ]]; then
WARM=${WARM_HTTP:-5000}
WARM1=${WARM1_HTTP:-2000}
SERVERS="demo demo-metrics ts"
bench_files metrics-http
unset CMD SOPTS
declare -A CMD SOPTS
server_cmd() {
	case $1 in
	demo) CMD[$1]="build/mcp-demo --http 127.0.0.1:0" ;;
	demo-metrics) CMD[$1]="build/mcp-demo --http 127.0.0.1:0 --metrics" ;;
	ts)
		if have_node @modelcontextprotocol/sdk express; then
			CMD[$1]="$NODE test/node/bench-echo-streamable.mjs"
		else
			say "skipping ts: no SDK or express in test/node"
			return 1
		fi ;;
	esac
}
pick_servers
pins
run_rounds \
    "$(awk -v d="$DUR" -v w="$WARM" 'BEGIN { printf "%d", d * 4 + w / 250 + 60 }')" \
    "-c 1 -k 1 -w $WARM1 $pin1" "-c 64 -k 64 -w $WARM $pin64" -m http://127.0.0.1:0/mcp
median_table 1 \
    "demo-metrics/demo req/s   c=64|demo-metrics|demo|64|rps" \
    "demo-metrics/demo cpu/req c=64|demo-metrics|demo|64|server_cpu_us" \
    "demo-metrics/demo p50     c=1 |demo-metrics|demo|1|p50_us" \
    "demo-metrics/ts   req/s   c=64|demo-metrics|ts|64|rps"
fi
bench_end
