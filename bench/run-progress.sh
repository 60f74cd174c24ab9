#!/usr/bin/env bash
#
# run-progress.sh: the cost of progress notifications on stdio, libmcp
# against the official TypeScript SDK, using mcp-bench(1) -g.
#
# Two servers with the same two tools, each taking {"text"} and returning
# it: build/progress-server (bench/progress-server.c, libmcp's public API)
# and the TypeScript peer test/node/bench-progress-stdio.mjs.  "echo" just
# answers; "progress10" first sends notifications/progress 1..10 of 10.
# Every request carries params._meta.progressToken (mcp-bench -g), so the
# two tools differ only in the notifications, and mcp-bench checks that
# each echo call gets exactly 0 of them and each progress10 call exactly
# 10, before its response, with increasing values.  The four
# server-and-tool pairs run in one run, the order rotating each round, for
# ROUNDS rounds, with 1 request in flight (client and server pinned) and
# with 64 (unpinned, unless PIN64=1).  The table gives the medians, then,
# for each server and concurrency, the notifications per second and the
# server CPU per notification: (cpu/call of progress10 - cpu/call of
# echo) / 10.  libmcp's target is under 2 us at c=64.  Files as for
# run-stdio.sh: bench/out/progress-STAMP.{jsonl,txt,server.log}.  It
# exits 1 if any run failed.
#
# Environment: ROUNDS (5), DUR (1.5 s, measured phase of each run), WARM
# (3000 requests at c=64), WARM1 (300 at c=1), CLIENT_CPU (0), SERVER_CPU
# (1), PIN64 (0), TARGET (2, us per notification for libmcp at c=64),
# SERVERS ("mcp-echo mcp-prog ts-echo ts-prog"), NODE (node).
#
set -u

cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
DUR=${DUR:-1.5}
WARM=${WARM:-3000}
WARM1=${WARM1:-300}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
PIN64=${PIN64:-0}
TARGET=${TARGET:-2}
SERVERS=${SERVERS:-"mcp-echo mcp-prog ts-echo ts-prog"}
NODE=${NODE:-node}
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files progress

build_one build/mcp-bench tools/mcp-bench.c -lpthread
if [ ! -x build/progress-server ] ||
    [ bench/progress-server.c -nt build/progress-server ]; then
	say "build/progress-server missing or stale: running make"
	make >/dev/null || say "make failed"
fi

# server_cmd NAME: CMD[NAME] and SOPTS[NAME] (the tool, and how many
# notifications each call must get), if NAME can run here.
server_cmd() {
	case $1 in
	mcp-*)
		if [ ! -x build/progress-server ]; then
			say "skipping $1: build/progress-server not built"
			return 1
		fi
		CMD[$1]="build/progress-server" ;;
	ts-*)
		if ! have_node @modelcontextprotocol/sdk zod; then
			say "skipping $1: no node, or no SDK in test/node" \
			    "(npm ci --prefix test/node)"
			return 1
		fi
		CMD[$1]="$NODE test/node/bench-progress-stdio.mjs" ;;
	*)
		say "unknown server $1"
		return 1 ;;
	esac
	case $1 in
	*-echo)	SOPTS[$1]="-t echo -g 0" ;;
	*-prog)	SOPTS[$1]="-t progress10 -g 10" ;;
	*)
		say "unknown tool in $1"
		return 1 ;;
	esac
}
pick_servers
pins

run_rounds "$(awk -v d="$DUR" 'BEGIN { printf "%d", d * 4 + 60 }')" \
    "-c 1 -w $WARM1 $pin1" "-c 64 -w $WARM $pin64"

median_table 0 \
    "mcp-prog/ts-prog req/s   c=64|mcp-prog|ts-prog|64|rps" \
    "mcp-prog/ts-prog cpu/req c=64|mcp-prog|ts-prog|64|server_cpu_us"

# Per server and concurrency: the median notifications per second of
# progress10, and the server CPU per notification from the medians.
awk -v target="$TARGET" "$AWK_JSON"'
function median(k,    n, i, j, t, v) {
	n = cnt[k]
	for (i = 1; i <= n; i++)
		v[i] = val[k, i]
	for (i = 2; i <= n; i++) {
		t = v[i]
		for (j = i - 1; j >= 1 && v[j] > t; j--)
			v[j + 1] = v[j]
		v[j + 1] = t
	}
	if (n % 2)
		return v[(n + 1) / 2]
	return (v[n / 2] + v[n / 2 + 1]) / 2
}
{
	if (num($0, "rc") != 0)
		next
	k = str($0, "label") SUBSEP num($0, "c")
	cnt[k]++
	val[k, cnt[k]] = num($0, "server_cpu_us")
	k2 = k SUBSEP "nps"
	cnt[k2]++
	val[k2, cnt[k2]] = num($0, "progress_per_s")
}
END {
	print ""
	printf "%-6s %4s %12s %12s %12s %14s\n", "server", "c", "echo us",
	    "prog10 us", "notes/s", "us/notification"
	ns = split("mcp ts", S, " ")
	for (c = 1; c <= 64; c += 63)
		for (si = 1; si <= ns; si++) {
			e = S[si] "-echo" SUBSEP c
			p = S[si] "-prog" SUBSEP c
			if (!(e in cnt) || !(p in cnt))
				continue
			me = median(e)
			mp = median(p)
			nps = median(p SUBSEP "nps")
			per = (mp - me) / 10
			printf "%-6s %4d %12.2f %12.2f %12.0f %14.3f\n",
			    S[si], c, me, mp, nps, per
			res[S[si], c] = per
		}
	print ""
	print "us/notification = (cpu/call of progress10 - cpu/call of echo) / 10,"
	print "from the medians of server CPU per call; notes/s: progress10."
	if (("mcp", 64) in res) {
		printf "libmcp per notification c=64: %.3f us (target < %s us: %s)\n",
		    res["mcp", 64], target,
		    res["mcp", 64] < target + 0 ? "met" : "NOT met"
		if (("ts", 64) in res && res["mcp", 64] > 0)
			printf "ts/libmcp per notification c=64: %.1f\n",
			    res["ts", 64] / res["mcp", 64]
	} else
		print "libmcp per notification c=64: n/a"
}
' "$RESULTS" | tee -a "$TABLE"
bench_end
