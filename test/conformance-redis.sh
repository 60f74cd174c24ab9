#!/bin/sh
# conformance-redis.sh: the official conformance suite (test/conformance.sh,
# @modelcontextprotocol/conformance 0.1.16, the active suite and --suite
# all) through a real nginx, round-robin with no stickiness, over three
# build/conformance-server instances sharing their sessions through a
# real redis-server (--redis). Every request of a scenario may reach
# another instance than the one that opened its session: the session's
# record, its event log (the SSE polling scenario resumes with
# Last-Event-ID), the answers to sampling and elicitation requests and
# the live notifications all cross through Redis. The totals must be
# those of the suite run directly: 40 of 40 active, 47 of 47 all. Prints
# TAP; everything it starts is stopped by PID.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_built "$CONFORMANCE_SERVER"
need_node
command -v redis-server >/dev/null 2>&1 ||
	bail "redis-server is installed (tools/bootstrap.sh test)"
command -v redis-cli >/dev/null 2>&1 || bail "redis-cli is installed"
need_nginx

prefix=cr$$:
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-confredis.XXXXXX") || exit 1
sock=$tmp/redis.sock
rpid=
npid=
pids=
cleanup() {
	for p in $npid $pids $rpid; do
		kill -KILL "$p" 2>/dev/null
	done
	# The instances' logs stay, for a failure's story.
	for k in 1 2 3; do
		cp "$tmp/srv$k.log" "test/out/conformance-redis-srv$k.log" \
		    2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

start_redis
ok $? "redis-server on $sock" "$tmp/redis.log"

# (k, not n: n is test/lib.sh's count of assertions.)
for k in 1 2 3; do
	: >"$tmp/srv$k.log"
	"$CONFORMANCE_SERVER" --http 127.0.0.1:0 --redis "unix://$sock" \
	    --redis-prefix "$prefix" --access-log </dev/null \
	    2>"$tmp/srv$k.log" &
	pids="$pids $!"
	eval "port_$k=\$(logged_port \"\$tmp/srv$k.log\" $!)"
done
[ -n "$port_1" ] && [ -n "$port_2" ] && [ -n "$port_3" ]
ok $? "three conformance-server instances with --redis listen" "$tmp/srv1.log"
redis_up 3 "$tmp"/srv*.log

nport=$(free_port)
cat >"$tmp/mcp.conf" <<EOF
upstream libmcp_conf {
    server 127.0.0.1:$port_1;
    server 127.0.0.1:$port_2;
    server 127.0.0.1:$port_3;
}
server {
    listen 127.0.0.1:$nport;
    proxy_http_version 1.1;
    proxy_set_header Connection '';
    proxy_set_header Host \$host;
    proxy_buffering off;
    proxy_read_timeout 60s;
    location = /mcp {
        proxy_pass http://libmcp_conf;
    }
}
EOF
url=http://127.0.0.1:$nport/mcp
start_nginx "$tmp/mcp.conf" "$url"
ok $? "nginx round-robin over the three instances on 127.0.0.1:$nport" \
    "$tmp/error.log"

# The suite's own TAP, numbered on from here.
CONFORMANCE_URL=$url CONFORMANCE_NAME=conformance-redis \
    sh test/conformance.sh >"$tmp/suite" 2>&1
while IFS= read -r line; do
	case $line in
	"ok "*" - "*) ok 0 "through nginx and Redis: ${line#* - }" ;;
	"not ok "*" - "*)
		ok 1 "through nginx and Redis: ${line#* - }"
		;;
	"#"*) [ "$failed" -gt 0 ] && echo "$line" ;;
	esac
done <"$tmp/suite"
grep -q '^ok .*active: total 40 passed, 0 failed' "$tmp/suite" &&
    grep -q '^ok .*all: total 47 passed, 0 failed' "$tmp/suite"
ok $? "the totals are the direct run's: 40 of 40 active, 47 of 47 all" \
    "$tmp/suite"

# Each instance took part: the balancer spread the sessions' requests.
for k in 1 2 3; do
	grep -q 'POST /mcp' "$tmp/srv$k.log"
	ok $? "instance $k served requests of the suite" "$tmp/srv$k.log"
done
for p in $pids; do
	kill -0 "$p" 2>/dev/null
	ok $? "instance (pid $p) still runs after both suites"
done

tap_end
