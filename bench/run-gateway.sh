#!/usr/bin/env bash
#
# run-gateway.sh: build/mcp-gateway beside its two npm peers, in the same
# run, with build/mcp-demo as the stdio server behind every one of them.
#
# 1. serve (a stdio server on HTTP): mcp-gateway --http 127.0.0.1:0 --
#    build/mcp-demo, as "gw" (the default: a child per session) and as
#    "gw-shared" (--shared: one child for every session), beside
#    mcp-proxy (npm, test/node: one child for every session, its only
#    mode), each a fresh process per run. mcp-bench -m (Streamable HTTP,
#    /mcp) and -u (legacy SSE, GET /sse + POST /messages), tools/call
#    echo, 1 and 64 in flight, DUR s after WARM calls; -S PID makes
#    mcp-bench read the peer process's own CPU time (its CPU clock: user
#    + system of all its threads, what /proc/PID/stat counts, in ns)
#    before and after the measured phase, and its RSS. The children's CPU
#    is not counted: the same mcp-demo answers for all three.
# 2. idle: a fresh peer, SESSIONS sessions opened and left idle, on /mcp
#    (test/node/idle-streamable.mjs: initialize + initialized, the
#    connections closed after, no GET stream) and on /sse (mcp-bench -u
#    -i: the streams held open); the peer process's VmRSS before and a
#    second or two after, and apart from it the sum of its descendants'
#    (the mcp-demo children) VmRSS and PSS, and how many there are.
# 3. remote (a remote HTTP server on stdio): mcp-gateway --url beside
#    mcp-remote (npm), each started by mcp-bench on stdio, in front of one
#    build/mcp-demo --http for the whole part, on /mcp (mcp-remote
#    --transport http-only) and /sse (mcp-gateway --transport sse,
#    mcp-remote --transport sse-only); tools/call echo at 1 and 64
#    pipelined on stdin; the stdio process's CPU per call and its RSS.
#    mcp-remote runs with --silent (else it logs every message on stderr)
#    and MCP_REMOTE_CONFIG_DIR in a temporary directory.
#
# Every part runs ROUNDS rounds, the order of the peers rotating each
# round; the table gives medians and ratios (targets from the issue:
# gw/mcp-proxy req/s at c=64 >= 10, gateway process RSS <= 0.1 of
# mcp-proxy's). Nothing is pinned (a gateway, its child and mcp-bench
# share the 2 CPUs). Raw results go to bench/out/gateway-STAMP.jsonl, logs
# to bench/out/gateway-STAMP.server.log, the tables to
# bench/out/gateway-STAMP.txt and stdout. Loopback only; every run is
# bounded by timeout(1) and mcp-bench's own -T; peers are stopped by
# their PID. Exits 1 if any run failed.
#
# Environment: ROUNDS (5), DUR (3 s), WARM (500 calls), SESSIONS (50),
# BUILD (build: where mcp-gateway, mcp-demo and mcp-bench are),
# PARTS ("serve idle remote"), PEERS ("gw gw-shared mcp-proxy"),
# NODE (test/node's node 22 when installed, else node), GW_ARGS (extra
# mcp-gateway server options, e.g. "--json-response").
#
set -u
cd "$(dirname "$0")/.." || exit 1

ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
WARM=${WARM:-500}
SESSIONS=${SESSIONS:-50}
PARTS=${PARTS:-"serve idle remote"}
PEERS=${PEERS:-"gw gw-shared mcp-proxy"}
if [ -z "${NODE:-}" ]; then
	# mcp-proxy's dependencies ask for node >= 22; test/node brings it.
	NODE=node
	[ -x test/node/node_modules/.bin/node ] &&
	    NODE=$PWD/test/node/node_modules/.bin/node
fi
GW_ARGS=${GW_ARGS:-}
PROXY=test/node/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs
REMOTE=test/node/node_modules/mcp-remote/dist/proxy.js
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_files gateway

B=${BUILD:-build}
[ "$B" = build ] && make_demo
for b in "$B/mcp-demo" "$B/mcp-gateway" "$B/mcp-bench"; do
	[ -x "$b" ] || { say "$b missing: run make first"; exit 1; }
done
have_node mcp-proxy mcp-remote || {
	say "no node, or no mcp-proxy and mcp-remote in test/node (npm ci there)"
	exit 1
}
TMP=$(mktemp -d) || exit 1
export MCP_REMOTE_CONFIG_DIR=$TMP/mcp-auth
PID=
DPID=
# shellcheck disable=SC2317
cleanup() {
	stop_peer
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ulimit -n "$(ulimit -Hn)" 2>/dev/null

rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# descendants PID: the pids of PID's descendants, one a line.
descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
	{ pp[$1] = $2 }
	END {
		for (p in pp) {
			q = pp[p]
			for (i = 0; i < 64 && q != root && (q in pp); i++)
				q = pp[q]
			if (q == root)
				print p
		}
	}'
}

# kids PID: "COUNT RSS PSS" of PID's descendants, the sums in KiB (RSS
# counts the pages they share, libc's and mcp-demo's own text, in each;
# PSS splits them).
kids() {
	local n=0 s=0 ps=0 p r q
	for p in $(descendants "$1"); do
		r=$(rss "$p")
		[ -n "$r" ] || continue
		q=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null)
		n=$((n + 1))
		s=$((s + r))
		ps=$((ps + ${q:-0}))
	done
	echo "$n $s $ps"
}

free_port() {
	"$NODE" -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# start_peer NAME: a fresh peer serving build/mcp-demo on 127.0.0.1;
# sets PID (the peer process) and PORT once it takes connections.
start_peer() {
	local log=$TMP/peer.log i shared
	: >"$log"
	PORT=
	case $1 in
	gw|gw-shared)
		shared=
		[ "$1" = gw-shared ] && shared=1
		# shellcheck disable=SC2086
		"$B/mcp-gateway" --http 127.0.0.1:0 $GW_ARGS \
		    --max-children $((SESSIONS + 16)) \
		    ${shared:+--shared} -- "$B/mcp-demo" \
		    </dev/null >/dev/null 2>"$log" &
		PID=$!
		for i in $(seq 100); do
			PORT=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$log" | head -1)
			[ -n "$PORT" ] && break
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.1
		done
		;;
	mcp-proxy)
		PORT=$(free_port)
		"$NODE" "$PROXY" --host 127.0.0.1 --port "$PORT" -- \
		    "$B/mcp-demo" </dev/null >"$log" 2>&1 &
		PID=$!
		# It says "starting server" before it listens: connect.
		for i in $(seq 150); do
			(exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
			kill -0 "$PID" 2>/dev/null || { PORT=; break; }
			sleep 0.1
			[ "$i" = 150 ] && PORT=
		done
		;;
	esac
	cat "$log" >>"$SLOG"
	if [ -z "$PORT" ]; then
		say "$1 did not start"
		stop_peer
		return 1
	fi
}

# stop_peer: SIGTERM to PID, SIGKILL after 10 s; then any child it left
# behind (by pid, and only if it is still our mcp-demo).
stop_peer() {
	local k i st
	[ -n "$PID" ] || return 0
	k=$(descendants "$PID")
	kill "$PID" 2>/dev/null
	for i in $(seq 200); do
		st=$(sed 's/.*) //' "/proc/$PID/stat" 2>/dev/null | cut -c1)
		[ -z "$st" ] || [ "$st" = Z ] && break
		[ "$i" = 200 ] && kill -9 "$PID" 2>/dev/null
		sleep 0.05
	done
	wait "$PID" 2>/dev/null
	for i in $(seq 40); do
		st=
		for p in $k; do
			[ -d "/proc/$p" ] && st=1
		done
		[ -z "$st" ] && break
		sleep 0.05
	done
	for p in $k; do
		grep -qs mcp-demo "/proc/$p/cmdline" && kill "$p" 2>/dev/null
	done
	PID=
}

# record PART PEER TR C ROUND RC LINE: one JSON line to RESULTS.
record() {
	local line=$7
	[ -n "$line" ] || line="{\"label\":\"$2\"}"
	[ "$6" -eq 0 ] || { nfail=$((nfail + 1)); say "round $5: $1 $2 $3 c=$4 failed (exit $6)"; }
	printf '{"part":"%s","peer":"%s","tr":"%s","conc":%d,"round":%d,"rc":%d,%s\n' \
	    "$1" "$2" "$3" "$4" "$5" "$6" "${line#\{}" >>"$RESULTS"
}

# serve_one PEER TR C ROUND
serve_one() {
	local line rc url
	start_peer "$1" || { record serve "$1" "$2" "$3" "$4" 1 ""; return; }
	case $2 in
	mcp) url=(-m "http://127.0.0.1:$PORT/mcp") ;;
	sse) url=(-u "http://127.0.0.1:$PORT/sse") ;;
	esac
	line=$(timeout -k 5 300 "$B/mcp-bench" -j -T 10 -w "$WARM" \
	    -d "$DUR" -c "$3" -l "$1" "${url[@]}" -S "$PID" 2>>"$SLOG")
	rc=$?
	stop_peer
	record serve "$1" "$2" "$3" "$4" "$rc" "$line"
}

# idle_one PEER TR ROUND: SESSIONS idle sessions.
idle_one() {
	local r0 r1 k0 k1 got rc=0 out=$TMP/idle.json line
	start_peer "$1" || { record idle "$1" "$2" 0 "$3" 1 ""; return; }
	sleep 1
	r0=$(rss "$PID")
	k0=$(kids "$PID")
	if [ "$2" = mcp ]; then
		got=$(timeout 120 "$NODE" test/node/idle-streamable.mjs \
		    "$PORT" "$SESSIONS" 2>>"$SLOG") || rc=$?
		sleep 1
	else
		# The streams stay open for the hold (-d): read during it.
		timeout -k 5 120 "$B/mcp-bench" -j -T 10 -u \
		    "http://127.0.0.1:$PORT/sse" -i "$SESSIONS" -d 4 -S "$PID" \
		    -l "$1" >"$out" 2>>"$SLOG" &
		local bp=$!
		sleep 3
		r1=$(rss "$PID")
		k1=$(kids "$PID")
		wait "$bp" || rc=$?
		got=$(sed -n 's/.*"ready":\([0-9]*\).*/\1/p' "$out")
		# Past the hold's start? (setup, then a second to settle.)
		awk -v l="$(cat "$out")" "$AWK_JSON"'BEGIN { exit !(num(l, "setup_s") < 1.9) }' ||
		    { say "$1 sse: setup took over 1.9 s; RSS read too early"; rc=1; }
	fi
	if [ "$2" = mcp ]; then
		r1=$(rss "$PID")
		k1=$(kids "$PID")
	fi
	stop_peer
	[ "${got:-0}" = "$SESSIONS" ] || [ "$rc" -ne 0 ] || rc=1
	line=$(awk -v n="$SESSIONS" -v got="${got:-0}" -v r0="${r0:-0}" \
	    -v r1="${r1:-0}" -v k0="$k0" -v k1="$k1" 'BEGIN {
		split(k0, a, " "); split(k1, b, " ")
		per = kper = 0
		if (got > 0) {
			per = (r1 - r0) / got
			kper = (b[2] - a[2]) / got
		}
		printf "{\"sessions\":%d,\"opened\":%d,\"rss0_kib\":%d,\"rss1_kib\":%d,\"per_kib\":%.2f,\"kids0\":%d,\"kids1\":%d,\"kids_rss0_kib\":%d,\"kids_rss1_kib\":%d,\"kids_per_kib\":%.1f,\"kids_pss1_kib\":%d}",
		    n, got, r0, r1, per, a[1], b[1], a[2], b[2], kper, b[3]
	}')
	record idle "$1" "$2" 0 "$3" "$rc" "$line"
}

# remote_one PEER TR C ROUND: the stdio side, started by mcp-bench.
remote_one() {
	local line rc cmd
	case $1/$2 in
	gw-url/mcp) cmd=("$B/mcp-gateway" --url "http://127.0.0.1:$DPORT/mcp") ;;
	gw-url/sse) cmd=("$B/mcp-gateway" --url "http://127.0.0.1:$DPORT/sse" --transport sse) ;;
	mcp-remote/mcp) cmd=("$NODE" "$REMOTE" "http://127.0.0.1:$DPORT/mcp" --transport http-only --silent) ;;
	mcp-remote/sse) cmd=("$NODE" "$REMOTE" "http://127.0.0.1:$DPORT/sse" --transport sse-only --silent) ;;
	esac
	line=$(timeout -k 5 300 "$B/mcp-bench" -j -T 10 -w "$WARM" \
	    -d "$DUR" -c "$3" -l "$1" -E "$TMP/remote.err" -- "${cmd[@]}" \
	    2>>"$SLOG")
	rc=$?
	cat "$TMP/remote.err" >>"$SLOG" 2>/dev/null
	record remote "$1" "$2" "$3" "$4" "$rc" "$line"
}

read -r -a PV <<<"$PEERS"
RV=(gw-url mcp-remote)
say "rounds $ROUNDS, $DUR s a run after $WARM calls, $SESSIONS idle sessions; node $("$NODE" --version); raw results in $RESULTS"
LOAD0=$(loadavg)
for part in $PARTS; do
	if [ "$part" = remote ]; then
		"$B/mcp-demo" --http 127.0.0.1:0 </dev/null >/dev/null 2>"$TMP/demo.log" &
		DPID=$!
		DPORT=
		for _ in $(seq 50); do
			DPORT=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$TMP/demo.log" | head -1)
			[ -n "$DPORT" ] && break
			sleep 0.1
		done
		[ -n "$DPORT" ] || { say "mcp-demo --http did not start"; nfail=$((nfail + 1)); continue; }
	fi
	for r in $(seq "$ROUNDS"); do
		for t in mcp sse; do
			case $part in
			serve)
				for c in 1 64; do
					n=${#PV[@]}
					for ((i = 0; i < n; i++)); do
						serve_one "${PV[$(((i + r) % n))]}" "$t" "$c" "$r"
					done
				done ;;
			idle)
				n=${#PV[@]}
				for ((i = 0; i < n; i++)); do
					idle_one "${PV[$(((i + r) % n))]}" "$t" "$r"
				done ;;
			remote)
				for c in 1 64; do
					for ((i = 0; i < 2; i++)); do
						remote_one "${RV[$(((i + r) % 2))]}" "$t" "$c" "$r"
					done
				done ;;
			esac
		done
		say "$part: round $r/$ROUNDS done"
	done
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
		DPID=
	fi
done

awk -v peers="$PEERS" -v rounds="$ROUNDS" -v sessions="$SESSIONS" \
    -v node="$("$NODE" --version)" -v gwargs="$GW_ARGS" \
    -v load="$LOAD0 at start, $(loadavg) at end" \
    -v date="$(date -u '+%F %H:%M UTC')" "$AWK_JSON"'
function median(k,    n, i, j, t, v) {
	n = cnt[k]
	if (n == 0)
		return ""
	for (i = 1; i <= n; i++)
		v[i] = val[k, i]
	for (i = 2; i <= n; i++) {
		t = v[i]
		for (j = i - 1; j >= 1 && v[j] > t; j--)
			v[j + 1] = v[j]
		v[j + 1] = t
	}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function m(part, peer, tr, c, f,    k) {
	k = part SUBSEP peer SUBSEP tr SUBSEP c SUBSEP f
	if (!(k in med))
		med[k] = median(k)
	return med[k]
}
function ok(part, peer, tr, c) {
	return okn[part, peer, tr, c] + 0 "/" tot[part, peer, tr, c] + 0
}
function fmt(v, spec) {
	return v == "" ? "-" : sprintf(spec, v)
}
function ratio(name, a, b, target,    v) {
	if (a == "" || b == "" || b == 0) {
		printf "%s: n/a\n", name
		return
	}
	v = a / b
	printf "%s: %.2f", name, v
	if (target != "")
		printf " (target %s: %s)", target, \
		    (substr(target, 1, 1) == ">" ? v >= substr(target, 4) + 0 : \
		    v <= substr(target, 4) + 0) ? "met" : "NOT met"
	printf "\n"
}
{
	part = str($0, "part"); peer = str($0, "peer"); tr = str($0, "tr")
	c = num($0, "conc")
	tot[part, peer, tr, c]++
	if (num($0, "rc") != 0)
		next
	okn[part, peer, tr, c]++
	nf = split(part == "idle" ? "opened rss0_kib rss1_kib per_kib kids1 kids_rss1_kib kids_per_kib kids_pss1_kib" : \
	    "rps p50_us p99_us server_cpu_us idle_rss_kib peak_rss_kib", F, " ")
	for (i = 1; i <= nf; i++) {
		k = part SUBSEP peer SUBSEP tr SUBSEP c SUBSEP F[i]
		val[k, ++cnt[k]] = num($0, F[i])
	}
	seen[part] = 1
}
END {
	np = split(peers, P, " ")
	split("mcp sse", T, " ")
	name["mcp"] = "/mcp"; name["sse"] = "/sse"
	printf "mcp-gateway beside mcp-proxy and mcp-remote, build/mcp-demo behind each, medians of %d rounds (%s; node %s%s)\n", \
	    rounds, date, node, gwargs != "" ? "; gateway " gwargs : ""
	print "load average: " load
	if ("serve" in seen) {
		print ""
		print "serve: tools/call echo through the peer (mcp-bench -m /mcp, -u /sse); cpu = the peer process alone"
		printf "%-5s %3s %-10s %9s %9s %10s %12s %9s %9s %5s\n", "tr", "c", "peer", "req/s", "p50 us", \
		    "p99 us", "cpu us/call", "idle KiB", "peak KiB", "ok"
		for (ti = 1; ti <= 2; ti++)
			for (c = 1; c <= 64; c += 63)
				for (pi = 1; pi <= np; pi++) {
					p = P[pi]; t = T[ti]
					if (tot["serve", p, t, c] == 0)
						continue
					printf "%-5s %3d %-10s %9s %9s %10s %12s %9s %9s %5s\n", name[t], c, p,
					    fmt(m("serve", p, t, c, "rps"), "%.0f"),
					    fmt(m("serve", p, t, c, "p50_us"), "%.1f"),
					    fmt(m("serve", p, t, c, "p99_us"), "%.1f"),
					    fmt(m("serve", p, t, c, "server_cpu_us"), "%.1f"),
					    fmt(m("serve", p, t, c, "idle_rss_kib"), "%d"),
					    fmt(m("serve", p, t, c, "peak_rss_kib"), "%d"), ok("serve", p, t, c)
				}
		print ""
		for (ti = 1; ti <= 2; ti++)
			for (c = 64; c >= 1; c -= 63) {
				t = T[ti]
				ratio(sprintf("gw/mcp-proxy req/s %s c=%d", name[t], c), m("serve", "gw", t, c, "rps"),
				    m("serve", "mcp-proxy", t, c, "rps"), c == 64 ? ">= 10" : "")
				ratio(sprintf("gw-shared/mcp-proxy req/s %s c=%d", name[t], c),
				    m("serve", "gw-shared", t, c, "rps"), m("serve", "mcp-proxy", t, c, "rps"),
				    c == 64 ? ">= 10" : "")
				ratio(sprintf("mcp-proxy/gw cpu per call %s c=%d", name[t], c),
				    m("serve", "mcp-proxy", t, c, "server_cpu_us"), m("serve", "gw", t, c, "server_cpu_us"), "")
			}
	}
	if ("idle" in seen) {
		print ""
		printf "idle: %d sessions opened and left idle; the peer process, and apart its children (mcp-demo)\n", sessions
		printf "%-5s %-10s %7s %10s %10s %10s %6s %12s %12s %12s %5s\n", "tr", "peer", "opened", "rss0 KiB", \
		    "rss1 KiB", "KiB/sess", "kids", "kids KiB", "kids KiB/s", "kids PSS KiB", "ok"
		for (ti = 1; ti <= 2; ti++)
			for (pi = 1; pi <= np; pi++) {
				p = P[pi]; t = T[ti]
				if (tot["idle", p, t, 0] == 0)
					continue
				printf "%-5s %-10s %7s %10s %10s %10s %6s %12s %12s %12s %5s\n", name[t], p,
				    fmt(m("idle", p, t, 0, "opened"), "%d"),
				    fmt(m("idle", p, t, 0, "rss0_kib"), "%d"),
				    fmt(m("idle", p, t, 0, "rss1_kib"), "%d"),
				    fmt(m("idle", p, t, 0, "per_kib"), "%.1f"),
				    fmt(m("idle", p, t, 0, "kids1"), "%d"),
				    fmt(m("idle", p, t, 0, "kids_rss1_kib"), "%d"),
				    fmt(m("idle", p, t, 0, "kids_per_kib"), "%.1f"),
				    fmt(m("idle", p, t, 0, "kids_pss1_kib"), "%d"), ok("idle", p, t, 0)
			}
		print ""
		for (ti = 1; ti <= 2; ti++) {
			t = T[ti]
			ratio(sprintf("gw/mcp-proxy process RSS with %d sessions %s", sessions, name[t]),
			    m("idle", "gw", t, 0, "rss1_kib"), m("idle", "mcp-proxy", t, 0, "rss1_kib"), "<= 0.1")
			ratio(sprintf("gw-shared/mcp-proxy process RSS with %d sessions %s", sessions, name[t]),
			    m("idle", "gw-shared", t, 0, "rss1_kib"), m("idle", "mcp-proxy", t, 0, "rss1_kib"), "<= 0.1")
			ratio(sprintf("gw/mcp-proxy process RSS growth per session %s", name[t]),
			    m("idle", "gw", t, 0, "per_kib"), m("idle", "mcp-proxy", t, 0, "per_kib"), "")
		}
	}
	if ("remote" in seen) {
		print ""
		print "remote: the stdio side (mcp-bench on its stdin/stdout) in front of build/mcp-demo --http; cpu = that process alone"
		printf "%-5s %3s %-10s %9s %9s %10s %12s %9s %9s %5s\n", "tr", "c", "peer", "req/s", "p50 us", \
		    "p99 us", "cpu us/call", "idle KiB", "peak KiB", "ok"
		split("gw-url mcp-remote", RP, " ")
		for (ti = 1; ti <= 2; ti++)
			for (c = 1; c <= 64; c += 63)
				for (pi = 1; pi <= 2; pi++) {
					p = RP[pi]; t = T[ti]
					if (tot["remote", p, t, c] == 0)
						continue
					printf "%-5s %3d %-10s %9s %9s %10s %12s %9s %9s %5s\n", name[t], c, p,
					    fmt(m("remote", p, t, c, "rps"), "%.0f"),
					    fmt(m("remote", p, t, c, "p50_us"), "%.1f"),
					    fmt(m("remote", p, t, c, "p99_us"), "%.1f"),
					    fmt(m("remote", p, t, c, "server_cpu_us"), "%.1f"),
					    fmt(m("remote", p, t, c, "idle_rss_kib"), "%d"),
					    fmt(m("remote", p, t, c, "peak_rss_kib"), "%d"), ok("remote", p, t, c)
				}
		print ""
		for (ti = 1; ti <= 2; ti++)
			for (c = 1; c <= 64; c += 63) {
				t = T[ti]
				ratio(sprintf("gw-url/mcp-remote req/s %s c=%d", name[t], c),
				    m("remote", "gw-url", t, c, "rps"), m("remote", "mcp-remote", t, c, "rps"), "")
				ratio(sprintf("mcp-remote/gw-url cpu per call %s c=%d", name[t], c),
				    m("remote", "mcp-remote", t, c, "server_cpu_us"), m("remote", "gw-url", t, c, "server_cpu_us"), "")
				ratio(sprintf("gw-url/mcp-remote peak RSS %s c=%d", name[t], c),
				    m("remote", "gw-url", t, c, "peak_rss_kib"), m("remote", "mcp-remote", t, c, "peak_rss_kib"), "")
			}
	}
}' "$RESULTS" | tee "$TABLE"
bench_end
