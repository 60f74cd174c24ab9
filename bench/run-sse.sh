#!/usr/bin/env bash
#
# run-sse.sh: compare libmcp's legacy HTTP+SSE transport with the official
# TypeScript SDK and with the floor, using mcp-bench(1) -u.
#
# For ROUNDS rounds it runs three echo servers one after the other (the
# order rotates each round, so slow drift on a shared machine hits them
# all alike): build/mcp-demo --http, the TypeScript peer
# test/node/bench-echo-sse.mjs (SSEServerTransport on Express), and
# build/floor-http, the fastest HTTP+SSE server possible.  Each listens on
# 127.0.0.1 port 0; mcp-bench starts it, reads the port from its
# "listening on http://..." log line, opens GET /sse, initializes, and
# POSTs tools/call requests over keep-alive connections (as many as the
# window, up to CONNS when set), the answers coming down the stream.  Each
# is measured with 1 request in flight (client and server pinned to
# different CPUs: round-trip latency, wake-ups included) and with 64 in
# flight (unpinned by default: throughput).  Each run lasts DUR seconds
# after a warm-up.  Raw results go to bench/out/sse-STAMP.jsonl, one JSON
# object per run, the servers' logs to bench/out/sse-STAMP.server.log,
# and the table of medians to bench/out/sse-STAMP.txt and stdout, with the
# ratios: mcp-demo/ts req/s at c=64 (target >= 15) and mcp-demo/floor p50
# at c=1 (target <= 1.5).  Everything stays on loopback; every run is
# bounded by mcp-bench's own timeout and by timeout(1), and mcp-bench
# kills the server it started, so the script always ends; it exits 1 if
# any run failed.
#
# Environment: ROUNDS (5), DUR (3 s, measured phase of each run), WARM
# (10000 requests at c=64), WARM1 (2000 at c=1), CONNS (connections at
# c=64, default 64), CLIENT_CPU (0), SERVER_CPU (1), PIN64 (0: set 1 to
# pin the c=64 runs too), SERVERS ("mcp-demo ts floor"), NODE (node),
# DEMO_ARGS (extra mcp-demo options).
#
set -u

cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
WARM=${WARM:-10000}
WARM1=${WARM1:-2000}
CONNS=${CONNS:-64}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PIN64=${PIN64:-0}
SERVERS=${SERVERS:-"mcp-demo ts floor"}
NODE=${NODE:-node}
DEMO_ARGS=${DEMO_ARGS:-}
URL=http://127.0.0.1:0/sse
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files sse

build_one build/mcp-bench tools/mcp-bench.c "-pthread -lm"
build_one build/floor-http bench/floor-http.c
make_demo

# server_cmd NAME: CMD[NAME], if NAME can run here.
server_cmd() {
	case $1 in
	mcp-demo)
		if demo_http; then
			CMD[$1]="build/mcp-demo --http 127.0.0.1:0 $DEMO_ARGS"
		else
			say "skipping mcp-demo: build/mcp-demo without --http"
			return 1
		fi ;;
	ts)
		if have_node @modelcontextprotocol/sdk express; then
			CMD[$1]="$NODE test/node/bench-echo-sse.mjs"
		else
			say "skipping ts: no node, or no SDK or express in" \
			    "test/node (npm ci --prefix test/node)"
			return 1
		fi ;;
	floor)
		CMD[$1]="build/floor-http 127.0.0.1:0" ;;
	*)
		say "unknown server $1"
		return 1 ;;
	esac
}
pick_servers
pins

# The warm-up of the slowest server at c=64 (about 2,500 req/s) counts too.
run_rounds \
    "$(awk -v d="$DUR" -v w="$WARM" 'BEGIN { printf "%d", d * 4 + w / 500 + 60 }')" \
    "-c 1 -k 1 -w $WARM1 $pin1" "-c 64 -k $CONNS -w $WARM $pin64" -u "$URL"

median_table 1 \
    "mcp-demo/ts    req/s  c=64|mcp-demo|ts|64|rps|>= 15" \
    "mcp-demo/floor p50    c=1 |mcp-demo|floor|1|p50_us|<= 1.5" \
    "mcp-demo/floor req/s  c=64|mcp-demo|floor|64|rps" \
    "mcp-demo/ts    cpu/req c=64|mcp-demo|ts|64|server_cpu_us"
bench_end
