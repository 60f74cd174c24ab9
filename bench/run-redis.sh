#!/bin/sh
#
# run-redis.sh: Streamable HTTP `tools/call echo` at c=64 through nginx,
# in one run, ROUNDS rounds alternating three setups:
#   one      one mcp-demo, no Redis;
#   one-r    one mcp-demo with --redis;
#   three-r  three mcp-demo with --redis, nginx round-robin, no stickiness.
# mcp-bench -m opens one session (initialize through nginx, so it may land
# on any instance) and keeps 64 calls in flight for DUR seconds.
# For each run it reports req/s, the CPU every process of the setup spent
# per call (the instances, nginx and redis-server, from /proc: the figure
# that carries to larger machines, since this one has 2 cores) and the
# Redis commands per call (INFO commandstats, before and after).
# The medians go to stdout and bench/out/redis-STAMP.txt. Loopback only;
# every process it starts it stops.
#
# Environment: ROUNDS (5), DUR (3), KEEP_TMP (set: the temporary folder,
# with the logs and nginx.conf, is left for a look).
#
set -u
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
nginx=$(command -v nginx || echo /usr/sbin/nginx)
for p in build/mcp-demo build/mcp-bench "$nginx"; do
	[ -x "$p" ] || { echo "run-redis.sh: $p is missing (make; tools/bootstrap.sh test)" >&2; exit 1; }
done
command -v redis-server >/dev/null || { echo "run-redis.sh: no redis-server" >&2; exit 1; }
. test/lib.sh >/dev/null
mkdir -p bench/out
stamp=$(date -u +%Y%m%d-%H%M%S)
out=bench/out/redis-$stamp.txt
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-rb.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
[ -n "${KEEP_TMP-}" ] && trap "for p in \$pids; do kill \$p 2>/dev/null; done" EXIT

sock=$tmp/redis.sock
start_redis || { echo "redis-server did not start" >&2; exit 1; }
pids="$pids $rpid"

# demo N ARGS...: an instance; its port in port_N, its pid in pid_N.
demo() {
	n=$1
	shift
	: >"$tmp/demo$n.log"
	build/mcp-demo --http 127.0.0.1:0 "$@" \
	    2>"$tmp/demo$n.log" &
	eval "pid_$n=$!"
	pids="$pids $!"
	eval "port_$n=\$(logged_port \"\$tmp/demo\$n.log\" $!)"
}
demo 0
demo 1 --redis "unix://$sock"
demo 2 --redis "unix://$sock"
demo 3 --redis "unix://$sock"

p_one=$(free_port)
p_oner=$(free_port)
p_three=$(free_port)
{
	for x in "one $p_one $port_0" "oner $p_oner $port_1" \
	    "three $p_three $port_1 $port_2 $port_3"; do
		set -- $x
		echo "upstream $1 {"
		name=$1
		lport=$2
		shift 2
		for p in "$@"; do echo "    server 127.0.0.1:$p;"; done
		echo "    keepalive 64;"
		echo "}"
		cat <<EOF
server {
    listen 127.0.0.1:$lport;
    proxy_http_version 1.1;
    proxy_set_header Connection '';
    proxy_set_header Host \$host;
    proxy_buffering off;
    access_log off;
    location = /mcp { proxy_pass http://$name; }
}
EOF
	done
} >"$tmp/mcp.conf"
nginx_main "$tmp" "$tmp/mcp.conf"
"$nginx" -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" \
    </dev/null >"$tmp/nginx.out" 2>&1 &
npid=$!
pids="$pids $npid"
sleep 0.5

# ticks PID...: their user+system clock ticks, summed.
ticks() {
	for p in "$@"; do
		awk '{ print $14 + $15 }' "/proc/$p/stat"
	done | awk '{ t += $1 } END { print t }'
}
cmds() {
	redis-cli -s "$sock" INFO commandstats |
	    awk -F'[=,:]' '/^cmdstat_/ && !/cmdstat_info/ { t += $3 } END { print t + 0 }'
}
hz=$(getconf CLK_TCK)

: >"$tmp/runs"
r=0
while [ $r -lt "$ROUNDS" ]; do
	r=$((r + 1))
	for setup in one one-r three-r; do
		case $setup in
		one) port=$p_one; procs="$pid_0 $npid" ;;
		one-r) port=$p_oner; procs="$pid_1 $npid $rpid" ;;
		three-r) port=$p_three; procs="$pid_1 $pid_2 $pid_3 $npid $rpid" ;;
		esac
		t0=$(ticks $procs)
		g0=$(ticks $npid)
		c0=$(cmds)
		line=$(timeout 60 build/mcp-bench -m "http://127.0.0.1:$port/mcp" \
		    -c 64 -k 64 -d "$DUR" -w 2000 -l "$setup" 2>&1 | grep " req/s" | tail -1)
		t1=$(ticks $procs)
		g1=$(ticks $npid)
		c1=$(cmds)
		n=$(echo "$line" | sed -n 's/.* n=\([0-9]*\):.*/\1/p')
		rps=$(echo "$line" | sed -n 's/.*: \([0-9]*\) req\/s.*/\1/p')
		[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "$setup: $line" >&2; exit 1; }
		# CPU over the whole run (warm-up included) over its calls.
		echo "$setup $rps $t0 $t1 $c0 $c1 $n $g0 $g1" >>"$tmp/runs"
		echo "round $r $setup: $line" >&2
	done
done

# The warm-up's calls count too (2000 of them) in CPU and Redis figures.
awk -v hz="$hz" '
{
	calls = $7 + 2000
	rps[$1, ++k[$1]] = $2
	cpu[$1, k[$1]] = ($4 - $3) / hz * 1e6 / calls
	rt[$1, k[$1]] = ($6 - $5) / calls
	ng[$1, k[$1]] = ($9 - $8) / hz * 1e6 / calls
}
function median(a, s, n,    i, j, v, t) {
	for (i = 1; i <= n; i++) v[i] = a[s, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END {
	printf "%-8s %9s %14s %14s %16s\n", "setup", "req/s", "cpu us/call", "of it nginx", "redis cmds/call"
	split("one one-r three-r", order, " ")
	for (o = 1; o <= 3; o++) {
		s = order[o]
		m[s] = median(cpu, s, k[s])
		printf "%-8s %9d %14.2f %14.2f %16.3f\n", s, median(rps, s, k[s]), m[s], median(ng, s, k[s]), median(rt, s, k[s])
	}
	printf "\ncpu per call, one-r/one: %.2f; three-r/one: %.2f (target <= 1.5)\n",
	    m["one-r"] / m["one"], m["three-r"] / m["one"]
	print "cpu: every process of the setup (instances, nginx, redis-server), medians of the rounds"
}' "$tmp/runs" | tee "$out"
