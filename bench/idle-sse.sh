#!/usr/bin/env bash
#
# idle-sse.sh: what idle HTTP+SSE sessions cost a server, in memory and in
# CPU time, for build/mcp-demo --http and for the TypeScript peer
# test/node/bench-echo-sse.mjs, using mcp-bench(1) -u -i.
#
# Memory: for each server and each count in COUNTS (1,000 and 10,000), a
# fresh server is started on 127.0.0.1 port 0, mcp-bench opens that many
# SSE sessions (GET /sse, then initialize and notifications/initialized
# POSTed over 16 connections, which are closed afterwards), waits a
# second, and reads the server's VmRSS before and after: the difference
# over the sessions is the memory per idle session (target for mcp-demo:
# <= 16 KiB).  The TypeScript peer stops at TS_MAX sessions.
#
# CPU: a fresh server with HOLD_N (1,000) sessions, kept open for HOLD (30)
# seconds: the server's CPU time over that time, and the SSE comment
# lines that came down the streams (mcp-demo runs with --keepalive 15,
# so 2 per stream; the SDK's SSE transport sends none).  Expected: only
# the keepalive writes, near zero.
#
# mcp-bench stops each server with SIGTERM (SIGKILL after 5 s) and the
# time it took is reported as "stop s".  Raw results go to
# bench/out/idle-STAMP.jsonl, the servers' logs to
# bench/out/idle-STAMP.server.log, the tables to bench/out/idle-STAMP.txt
# and stdout.  Everything stays on loopback and every run is bounded by
# timeout(1).  The descriptor limit is raised to the hard limit, which
# must allow 10,000 sessions and a little more.
#
# Environment: COUNTS ("1000 10000"), TS_MAX (10000), HOLD (30), HOLD_N
# (1000), KEEPALIVE (15), SERVERS ("mcp-demo ts"), NODE (node), RAW (0:
# set 1 to add sessions left uninitialized, -R), DEMO_ARGS (extra mcp-demo
# options).
#
set -u

cd "$(dirname "$0")/.." || exit 1

COUNTS=${COUNTS:-"1000 10000"}
TS_MAX=${TS_MAX:-10000}
HOLD=${HOLD:-30}
HOLD_N=${HOLD_N:-1000}
KEEPALIVE=${KEEPALIVE:-15}
SERVERS=${SERVERS:-"mcp-demo ts"}
NODE=${NODE:-node}
RAW=${RAW:-0}
DEMO_ARGS=${DEMO_ARGS:-}
URL=http://127.0.0.1:0/sse
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files idle

build_one build/mcp-bench tools/mcp-bench.c "-pthread -lm"

# Both the server and mcp-bench hold one descriptor per session.
max=0
for n in $COUNTS $HOLD_N; do
	[ "$n" -gt "$max" ] && max=$n
done
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ]; then
	ulimit -n "$hard" || exit 1
	if [ "$hard" -lt $((max + 200)) ]; then
		say "the descriptor limit ($hard) is too low for $max sessions"
		exit 1
	fi
elif ! ulimit -n $((max + 200)); then
	exit 1
fi

# The per-address connection limit would refuse a benchmark from one
# address; --max-sessions stays at its default, 10,000.
demo="build/mcp-demo --http 127.0.0.1:0 --max-per-ip $((max + 200)) --keepalive $KEEPALIVE $DEMO_ARGS"

# server_cmd NAME: CMD[NAME], if NAME can run here.
server_cmd() {
	case $1 in
	mcp-demo)
		if demo_http; then
			CMD[$1]=$demo
		else
			say "skipping mcp-demo: build/mcp-demo without --http"
			return 1
		fi ;;
	ts)
		if have_node express; then
			CMD[$1]="$NODE test/node/bench-echo-sse.mjs"
		else
			say "skipping ts: no node, or no SDK or express in" \
			    "test/node (npm ci --prefix test/node)"
			return 1
		fi ;;
	*)
		say "unknown server $1"
		return 1 ;;
	esac
}
pick_servers

# run SERVER LABEL N HOLD [mcp-bench options]: one mcp-bench -i run, its
# JSON line appended to the raw results.
run() {
	local s=$1 label=$2 n=$3 hold=$4 limit line rc
	shift 4
	# Setup of the slowest server: about 400 sessions a second.
	limit=$((n / 200 + ${hold%.*} + 90))
	say "$label: $n sessions, hold $hold s"
	# shellcheck disable=SC2086
	line=$(timeout -k 5 "$limit" build/mcp-bench -j -T 20 -u "$URL" \
	    -i "$n" -d "$hold" -l "$label" -E "$SLOG" "$@" -- ${CMD[$s]})
	rc=$?
	if [ $rc -ne 0 ]; then
		nfail=$((nfail + 1))
		say "$label with $n sessions failed (exit $rc)"
	fi
	[ -n "$line" ] || line="{\"label\":\"$label\",\"sessions\":$n}"
	printf '{"rc":%d,"hold":%s,%s\n' "$rc" "$hold" "${line#\{}" >>"$RESULTS"
}

for s in "${SV[@]}"; do
	for n in $COUNTS; do
		if [ "$s" = ts ] && [ "$n" -gt "$TS_MAX" ]; then
			say "ts: skipping $n sessions (TS_MAX=$TS_MAX)"
			continue
		fi
		run "$s" "$s" "$n" 0.001
		if [ "$RAW" = 1 ]; then
			run "$s" "$s-raw" "$n" 0.001 -R
		fi
	done
done
for s in "${SV[@]}"; do
	run "$s" "$s" "$HOLD_N" "$HOLD"
done

awk -v ka="$KEEPALIVE" -v missing=- "$AWK_JSON"'
{
	if (num($0, "hold") < 1)
		mem[++nm] = $0
	else
		cpu[++nc] = $0
}
END {
	print "memory per idle session (initialized, RSS 1 s after setup)"
	printf "%-13s %9s %8s %11s %11s %12s %8s %4s\n", "server",
	    "sessions", "setup s", "before KiB", "after KiB", "KiB/session",
	    "stop s", "ok"
	for (i = 1; i <= nm; i++) {
		l = mem[i]
		label = str(l, "label")
		printf "%-13s %9s %8.2f %11s %11s %12.1f %7.2f%s %4s\n",
		    label, num(l, "sessions"), num(l, "setup_s"),
		    num(l, "rss_before_kib"), num(l, "rss_after_kib"),
		    num(l, "rss_per_session_kib"), num(l, "stop_s"),
		    (index(l, "\"killed\":true") ? "*" : " "),
		    (num(l, "rc") == 0 ? "yes" : "NO")
		if (index(l, "\"killed\":true"))
			killed = 1
		if (label == "mcp-demo")
			demo_per = num(l, "rss_per_session_kib")
	}
	print ""
	print "CPU time with the sessions open and idle"
	printf "%-13s %9s %7s %9s %8s %11s %7s %9s %4s\n", "server",
	    "sessions", "hold s", "cpu ms", "cpu %", "keepalives", "closed",
	    "end KiB", "ok"
	for (i = 1; i <= nc; i++) {
		l = cpu[i]
		ms = num(l, "server_cpu_ms")
		h = num(l, "hold_s")
		printf "%-13s %9s %7.1f %9.1f %8.3f %11s %7s %9s %4s\n",
		    str(l, "label"), num(l, "sessions"), h, ms,
		    (h > 0 ? ms / (h * 10) : 0), num(l, "keepalives"),
		    num(l, "closed"), num(l, "rss_end_kib"),
		    (num(l, "rc") == 0 ? "yes" : "NO")
	}
	print ""
	if (killed)
		print "* did not exit within 5 s of SIGTERM: killed."
	print "mcp-demo runs with --keepalive " ka "; the TypeScript SDK sends no keepalive."
	if (demo_per != "")
		printf "mcp-demo KiB/session at the largest count: %.1f " \
		    "(target <= 16: %s)\n", demo_per,
		    (demo_per <= 16 ? "met" : "NOT met")
}
' "$RESULTS" | tee "$TABLE"

bench_end
