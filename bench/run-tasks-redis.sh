#!/bin/sh
#
# run-tasks-redis.sh: what sharing tasks through Redis costs, in one run,
# ROUNDS rounds alternating three setups (bench/tasks-redis.mjs: N tasks
# of sleep 0, each made, then its tasks/result and tasks/get asked, one
# request at a time over keep-alive HTTP):
#   local    one mcp-demo, no Redis: made and asked there;
#   local-r  one mcp-demo with --redis: made and asked there;
#   remote   two mcp-demo with --redis: made on one, asked on the other
#            (the record read from Redis, tasks/result polling it).
# It reports the median microseconds of each request per setup, their
# medians over the rounds, and the Redis commands the instances sent per
# task (MONITOR, in an untimed pass, a script counted once). The
# TypeScript SDK has no peer figure: its task store is in memory, one
# process's. The medians go to stdout and bench/out/tasks-redis-STAMP.txt.
# Loopback only; every process it starts it stops.
#
# Environment: ROUNDS (5), N (300).
#
set -u
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${ROUNDS:-5}
N=${N:-300}
export N
[ -x build/mcp-demo ] || { echo "run-tasks-redis.sh: build/mcp-demo is missing (make)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "run-tasks-redis.sh: no redis-server" >&2; exit 1; }
. test/lib.sh >/dev/null
mkdir -p bench/out
out=bench/out/tasks-redis-$(date -u +%Y%m%d-%H%M%S).txt
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-tr.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
sock=$tmp/redis.sock
start_redis || { echo "redis-server did not start" >&2; exit 1; }
pids="$pids $rpid"
demo() {
	n=$1
	shift
	build/mcp-demo --http 127.0.0.1:0 --log-level notice \
	    --max-session-tasks 100000 --max-tasks 100000 "$@" \
	    2>"$tmp/demo$n.log" &
	pids="$pids $!"
	eval "port_$n=\$(logged_port \"\$tmp/demo\$n.log\" $!)"
}
demo 0
demo 1 --redis "unix://$sock"
demo 2 --redis "unix://$sock"
sleep 0.5
setups="local $port_0,$port_0 local-r $port_1,$port_1 remote $port_1,$port_2"
: >"$tmp/all"
for r in $(seq "$ROUNDS"); do
	set -- $setups
	while [ $# -ge 2 ]; do
		node bench/tasks-redis.mjs "$1=$2" >>"$tmp/all" || exit 1
		shift 2
	done
done
# The commands the instances send (MONITOR's lines but a script's own,
# "[0 lua]"), heartbeats included, in an untimed pass of N tasks each.
set -- $setups
while [ $# -ge 2 ]; do
	redis-cli -s "$sock" monitor >"$tmp/mon" 2>&1 &
	mpid=$!
	sleep 0.3
	node bench/tasks-redis.mjs "$1=$2" >/dev/null || exit 1
	kill "$mpid"
	wait "$mpid" 2>/dev/null
	c=$(grep -v 'lua\]' "$tmp/mon" | grep -c '^[0-9]')
	echo "{\"cmds\":\"$1 $c\"}" >>"$tmp/all"
	shift 2
done
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const n = Number(process.argv[2]);
for (const name of ["local", "local-r", "remote"]) {
	const rs = lines.filter((l) => l.name === name);
	const cmds = lines.filter((l) => l.cmds && l.cmds.startsWith(name + " ")).map((l) => Number(l.cmds.split(" ")[1]));
	const bad = rs.reduce((s, l) => s + l.bad, 0);
	console.log(`${name.padEnd(8)} tools/call ${med(rs.map((l) => l.create_us)).toFixed(0)} us, tasks/result ` +
	    `${med(rs.map((l) => l.result_us)).toFixed(0)} us, tasks/get ${med(rs.map((l) => l.get_us)).toFixed(0)} us ` +
	    `(medians of ${rs.length} rounds of ${n}); Redis commands per task ${(med(cmds) / n).toFixed(2)}; ` +
	    `wrong answers ${bad}`);
}' "$tmp/all" "$N" | tee "$out"
