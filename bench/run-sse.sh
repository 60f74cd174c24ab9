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
CFLAGS_BENCH="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes"

OUT=bench/out
mkdir -p "$OUT" build || exit 1
STAMP=$(date +%Y%m%d-%H%M%S)
RAW=$OUT/sse-$STAMP.jsonl
TABLE=$OUT/sse-$STAMP.txt
SLOG=$OUT/sse-$STAMP.server.log
: >"$RAW"

say() {
	printf '%s\n' "$*" >&2
}

# The two standalone programs need only a C compiler: build them if make
# has not.
build_one() {
	local bin=$1 src=$2 libs=${3:-}
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		say "building $bin"
		# shellcheck disable=SC2086
		${CC:-cc} $CFLAGS_BENCH -o "$bin" "$src" $libs || exit 1
	fi
}
build_one build/mcp-bench tools/mcp-bench.c "-pthread -lm"
build_one build/floor-http bench/floor-http.c
if [ ! -x build/mcp-demo ] && [ -f Makefile ]; then
	say "build/mcp-demo missing: running make"
	make >/dev/null || say "make failed"
fi

# Which servers can run here.
declare -A CMD
avail=""
for s in $SERVERS; do
	case $s in
	mcp-demo)
		if [ -x build/mcp-demo ] &&
		    build/mcp-demo --help 2>&1 | grep -q -- --http; then
			CMD[$s]="build/mcp-demo --http 127.0.0.1:0 $DEMO_ARGS"
		else
			say "skipping mcp-demo: build/mcp-demo without --http"
			continue
		fi ;;
	ts)
		if command -v "$NODE" >/dev/null 2>&1 &&
		    [ -d test/node/node_modules/@modelcontextprotocol/sdk ] &&
		    [ -d test/node/node_modules/express ]; then
			CMD[$s]="$NODE test/node/bench-echo-sse.mjs"
		else
			say "skipping ts: no node, or no SDK or express in" \
			    "test/node (npm ci --prefix test/node)"
			continue
		fi ;;
	floor)
		CMD[$s]="build/floor-http 127.0.0.1:0" ;;
	*)
		say "unknown server $s"
		continue ;;
	esac
	avail="$avail $s"
done
read -r -a SV <<<"$avail"
if [ ${#SV[@]} -eq 0 ]; then
	say "no server to run"
	exit 1
fi

# Pinning needs two CPUs we may use.
pin1="-p $CLIENT_CPU -P $SERVER_CPU"
if [ "$(nproc)" -lt 2 ]; then
	say "fewer than 2 CPUs: not pinning"
	pin1=""
fi
pin64=""
[ "$PIN64" = 1 ] && pin64=$pin1

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
# The warm-up of the slowest server at c=64 (about 2,500 req/s) counts too.
limit=$(awk -v d="$DUR" -v w="$WARM" 'BEGIN { printf "%d", d * 4 + w / 500 + 60 }')
say "rounds $ROUNDS, $DUR s per run, servers:${avail}; raw results in $RAW"

nfail=0
for ((r = 1; r <= ROUNDS; r++)); do
	for c in 1 64; do
		if [ "$c" = 1 ]; then
			opts="-c 1 -k 1 -w $WARM1 $pin1"
		else
			opts="-c 64 -k $CONNS -w $WARM $pin64"
		fi
		n=${#SV[@]}
		for ((i = 0; i < n; i++)); do
			s=${SV[$(((i + r) % n))]}
			# shellcheck disable=SC2086
			line=$(timeout -k 5 "$limit" build/mcp-bench -j -T 10 \
			    -u "$URL" -d "$DUR" $opts -l "$s" -E "$SLOG" \
			    -- ${CMD[$s]})
			rc=$?
			if [ $rc -ne 0 ]; then
				nfail=$((nfail + 1))
				say "round $r: $s c=$c failed (exit $rc)"
			fi
			# A run that died early still gets a line, so the
			# table shows it failed.
			[ -n "$line" ] ||
			    line="{\"label\":\"$s\",\"c\":$c}"
			printf '{"round":%d,"rc":%d,%s\n' "$r" "$rc" \
			    "${line#\{}" >>"$RAW"
		done
	done
done

# Medians over the successful runs, per server and concurrency.
awk -v order="${SV[*]}" -v load="$LOAD0 at start, $(cut -d' ' -f1-3 /proc/loadavg) at end" '
function num(line, key,    m) {
	if (match(line, "\"" key "\":-?[0-9.]+") == 0)
		return ""
	m = substr(line, RSTART, RLENGTH)
	sub(/^[^:]*:/, "", m)
	return m + 0
}
function str(line, key,    m) {
	if (match(line, "\"" key "\":\"[^\"]*\"") == 0)
		return ""
	m = substr(line, RSTART, RLENGTH)
	sub(/^[^:]*:"/, "", m)
	sub(/"$/, "", m)
	return m
}
function spread(k, f,    i, lo, hi, m) {
	lo = hi = val[k, f, 1]
	for (i = 2; i <= cnt[k]; i++) {
		if (val[k, f, i] < lo)
			lo = val[k, f, i]
		if (val[k, f, i] > hi)
			hi = val[k, f, i]
	}
	m = med[S[si], c, f]
	return m > 0 ? 50 * (hi - lo) / m : 0
}
function median(k, f,    n, i, j, t, v) {
	n = cnt[k]
	if (n == 0)
		return -1
	for (i = 1; i <= n; i++)
		v[i] = val[k, f, i]
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
BEGIN {
	nf = split("rps p50_us p99_us server_cpu_us client_cpu_us " \
	    "idle_rss_kib peak_rss_kib", F, " ")
}
{
	k = str($0, "label") SUBSEP num($0, "c")
	tot[k]++
	if (num($0, "rc") != 0)
		next
	cnt[k]++
	for (i = 1; i <= nf; i++)
		val[k, F[i], cnt[k]] = num($0, F[i])
}
END {
	printf "%-9s %4s %10s %6s %9s %9s %11s %10s %9s %9s %6s\n", "server",
	    "c", "req/s", "+-%", "p50 us", "p99 us", "cpu us/req",
	    "client us", "idle KiB", "peak KiB", "ok"
	ns = split(order, S, " ")
	for (c = 1; c <= 64; c += 63)
		for (si = 1; si <= ns; si++) {
			k = S[si] SUBSEP c
			if (!(k in tot))
				continue
			if (cnt[k] == 0) {
				printf "%-9s %4d %10s %6s %9s %9s %11s %10s " \
				    "%9s %9s %3d/%d\n", S[si], c, "-", "-",
				    "-", "-", "-", "-", "-", "-", 0, tot[k]
				continue
			}
			for (j = 1; j <= nf; j++)
				med[S[si], c, F[j]] = median(k, F[j])
			printf "%-9s %4d %10.0f %6.0f %9.1f %9.1f %11.2f " \
			    "%10.2f %9d %9d %3d/%d\n", S[si], c,
			    med[S[si], c, "rps"], spread(k, "rps"),
			    med[S[si], c, "p50_us"], med[S[si], c, "p99_us"],
			    med[S[si], c, "server_cpu_us"],
			    med[S[si], c, "client_cpu_us"],
			    med[S[si], c, "idle_rss_kib"],
			    med[S[si], c, "peak_rss_kib"], cnt[k], tot[k]
		}
	print ""
	print "+-% is half the range of req/s over the runs, relative to the median."
	print "client us is mcp-bench'"'"'s own CPU per request."
	print "load average: " load
	print ""
	ratio("mcp-demo/ts    req/s  c=64", "mcp-demo", "ts", 64, "rps",
	    ">= 15")
	ratio("mcp-demo/floor p50    c=1 ", "mcp-demo", "floor", 1, "p50_us",
	    "<= 1.5")
	ratio("mcp-demo/floor req/s  c=64", "mcp-demo", "floor", 64, "rps", "")
	ratio("mcp-demo/ts    cpu/req c=64", "mcp-demo", "ts", 64,
	    "server_cpu_us", "")
}
function ratio(name, a, b, c, f, target,    v) {
	if (((a, c, f) in med) && ((b, c, f) in med) && med[b, c, f] > 0) {
		v = med[a, c, f] / med[b, c, f]
		printf "%s: %.3f", name, v
		if (target != "")
			printf " (target %s: %s)", target, \
			    (substr(target, 1, 1) == ">" ? v >= substr(target, 4) + 0 : \
			    v <= substr(target, 4) + 0) ? "met" : "NOT met"
		printf "\n"
	} else
		printf "%s: n/a\n", name
}
' "$RAW" | tee "$TABLE"

say "table in $TABLE"
[ "$nfail" -eq 0 ] || { say "$nfail run(s) failed"; exit 1; }
exit 0
