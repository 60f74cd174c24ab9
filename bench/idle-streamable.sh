#!/usr/bin/env bash
#
# idle-streamable.sh: what idle Streamable HTTP sessions cost a server in
# memory, for build/mcp-demo --http and for the TypeScript peer
# test/node/bench-echo-streamable.mjs (stateful, one transport per
# session).  For each server and each count in COUNTS, a fresh server is
# started on 127.0.0.1:PORT, test/node/idle-streamable.mjs opens that many
# sessions (no GET stream), and the server's VmRSS is read before and a
# second after: the difference over the sessions is the memory per idle
# session.  Tables to bench/out/idle-streamable-STAMP.txt and stdout.
#
# Environment: COUNTS ("1000 10000"), PORT (18390), NODE (node).
#
set -u

cd "$(dirname "$0")/.." || exit 1

COUNTS=${COUNTS:-"1000 10000"}
PORT=${PORT:-18390}
NODE=${NODE:-node}
mkdir -p bench/out
out=bench/out/idle-streamable-$(date -u +%Y%m%d-%H%M%S).txt
ulimit -n "$(ulimit -Hn)" 2>/dev/null

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }

start() {	# start SERVER: its pid, once it answers
	case $1 in
	mcp-demo)
		build/mcp-demo --http "127.0.0.1:$PORT" --max-sessions 20000 \
		    2>/dev/null &
		;;
	ts)
		"$NODE" test/node/bench-echo-streamable.mjs "$PORT" \
		    >/dev/null 2>&1 &
		;;
	esac
	pid=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/mcp" && break
		sleep 0.1
	done
}

make -s build/mcp-demo >/dev/null || exit 1
{
	printf '%-10s %9s %9s %12s %12s %14s\n' server sessions opened \
	    'rss0 KiB' 'rss1 KiB' 'KiB/session'
	for s in mcp-demo ts; do
		for n in $COUNTS; do
			start "$s"
			r0=$(rss "$pid")
			got=$(timeout 300 "$NODE" test/node/idle-streamable.mjs \
			    "$PORT" "$n")
			sleep 1
			r1=$(rss "$pid")
			kill "$pid"
			wait "$pid" 2>/dev/null
			awk -v s="$s" -v n="$n" -v g="$got" -v a="$r0" \
			    -v b="$r1" 'BEGIN { printf "%-10s %9d %9d %12d %12d %14.1f\n", s, n, g, a, b, (b - a) / n }'
		done
	done
} | tee "$out"
