#!/usr/bin/env bash
#
# run-streamable.sh: compare libmcp's Streamable HTTP transport (/mcp)
# with the official TypeScript SDK and with the floor, using mcp-bench(1)
# -m.
#
# For ROUNDS rounds it runs five echo servers one after the other (the
# order rotates each round, so slow drift on a shared machine hits them
# all alike), each listening on 127.0.0.1 port 0, mcp-bench reading the
# port from its "listening on http://..." log line:
#   demo-sse        build/mcp-demo --http: stateful, each answer in an SSE
#                   body (the default);
#   demo-json       the same with --json-response: application/json bodies;
#   demo-stateless  the same with --stateless: no initialize and no
#                   session, mcp-bench -s POSTs only tools/call;
#   demo-loop       demo-sse with --loop-tools: echo runs on the loop
#                   thread while its POST is handled, so the answer is
#                   the POST's whole body (no suspension, no worker);
#   ts              test/node/bench-echo-streamable.mjs, the official
#                   TypeScript SDK's StreamableHTTPServerTransport on
#                   Express, stateful, one transport per session;
#   floor           build/floor-http, which answers each POST /mcp with a
#                   canned application/json body over keep-alive: the
#                   fastest Streamable HTTP server possible.
# The stateful ones get initialize, the session id and
# notifications/initialized first; then mcp-bench POSTs tools/call
# requests over keep-alive connections (as many as the window, up to CONNS
# when set), each answer coming back in its POST's response.  Each server
# is measured with 1 request in flight (client and server pinned to
# different CPUs: round-trip latency, wake-ups included) and with 64 in
# flight (unpinned by default: throughput).  Each run lasts DUR seconds
# after a warm-up.  Raw results go to bench/out/streamable-STAMP.jsonl, one
# JSON object per run, the servers' logs to
# bench/out/streamable-STAMP.server.log, and the table of medians to
# bench/out/streamable-STAMP.txt and stdout, with the ratios and their
# targets: demo-sse/ts req/s at c=64 (>= 25), demo-sse/floor p50 at c=1
# (<= 1.5), demo-stateless/demo-sse req/s at c=64 (>= 1).  Everything
# stays on loopback; every run is bounded by mcp-bench's own timeout and
# by timeout(1), and mcp-bench kills the server it started, so the script
# always ends; it exits 1 if any run failed.
#
# Environment: ROUNDS (5), DUR (3 s, measured phase of each run), WARM
# (5000 requests at c=64), WARM1 (2000 at c=1), CONNS (connections at
# c=64, default 64), CLIENT_CPU (0), SERVER_CPU (1), PIN64 (0: set 1 to
# pin the c=64 runs too), SERVERS ("demo-sse demo-json demo-stateless
# demo-loop ts floor"), NODE (node), DEMO_ARGS (extra mcp-demo options).
#
set -u

cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
WARM=${WARM:-5000}
WARM1=${WARM1:-2000}
CONNS=${CONNS:-64}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PIN64=${PIN64:-0}
SERVERS=${SERVERS:-"demo-sse demo-json demo-stateless demo-loop ts floor"}
NODE=${NODE:-node}
DEMO_ARGS=${DEMO_ARGS:-}
URL=http://127.0.0.1:0/mcp
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files streamable

build_one build/mcp-bench tools/mcp-bench.c "-pthread -lm"
build_one build/floor-http bench/floor-http.c
make_demo

# demo_streamable: whether build/mcp-demo serves Streamable HTTP (it has
# --stateless and --json-response).
demo_streamable() {
	demo_http && build/mcp-demo --help 2>&1 | grep -q -- --stateless &&
	    build/mcp-demo --help 2>&1 | grep -q -- --json-response
}

# server_cmd NAME: CMD[NAME] and SOPTS[NAME], if NAME can run here.
server_cmd() {
	case $1 in
	demo-sse | demo-json | demo-stateless | demo-loop)
		if ! demo_streamable; then
			say "skipping $1: build/mcp-demo without Streamable" \
			    "HTTP (--stateless, --json-response)"
			return 1
		fi
		CMD[$1]="build/mcp-demo --http 127.0.0.1:0 $DEMO_ARGS"
		case $1 in
		demo-json) CMD[$1]="${CMD[$1]} --json-response" ;;
		demo-loop) CMD[$1]="${CMD[$1]} --loop-tools" ;;
		demo-stateless)
			CMD[$1]="${CMD[$1]} --stateless"
			# shellcheck disable=SC2034
			SOPTS[$1]="-s" ;;
		esac ;;
	ts)
		if have_node @modelcontextprotocol/sdk express; then
			CMD[$1]="$NODE test/node/bench-echo-streamable.mjs"
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

# The warm-up of the slowest server (the TypeScript SDK, under 1,000
# req/s here) counts too.
run_rounds \
    "$(awk -v d="$DUR" -v w="$WARM" 'BEGIN { printf "%d", d * 4 + w / 250 + 60 }')" \
    "-c 1 -k 1 -w $WARM1 $pin1" "-c 64 -k $CONNS -w $WARM $pin64" -m "$URL"

median_table 1 \
    "demo-sse/ts             req/s   c=64|demo-sse|ts|64|rps|>= 25" \
    "demo-json/ts            req/s   c=64|demo-json|ts|64|rps" \
    "demo-sse/floor          p50     c=1 |demo-sse|floor|1|p50_us|<= 1.5" \
    "demo-json/floor         p50     c=1 |demo-json|floor|1|p50_us" \
    "demo-stateless/floor    p50     c=1 |demo-stateless|floor|1|p50_us" \
    "demo-stateless/demo-sse req/s   c=64|demo-stateless|demo-sse|64|rps|>= 1" \
    "demo-stateless/demo-sse req/s   c=1 |demo-stateless|demo-sse|1|rps" \
    "demo-json/demo-sse      req/s   c=64|demo-json|demo-sse|64|rps" \
    "demo-sse/floor          req/s   c=64|demo-sse|floor|64|rps|>= 0.6" \
    "demo-loop/floor         req/s   c=64|demo-loop|floor|64|rps|>= 0.6" \
    "demo-loop/demo-sse      req/s   c=64|demo-loop|demo-sse|64|rps" \
    "demo-loop/floor         p50     c=1 |demo-loop|floor|1|p50_us" \
    "demo-sse/ts             cpu/req c=64|demo-sse|ts|64|server_cpu_us"
bench_end
