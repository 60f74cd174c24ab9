#!/bin/sh
# redis-tasks.sh: MCP Tasks shared across instances (--redis, issue 13).
# A real redis-server, three mcp-demo --redis instances (--metrics, to
# see their workers) behind a real nginx (round-robin, no stickiness);
# test/node/redis-tasks.mjs sends each request to the instance it names:
#   - 2025-11-25: initialize declares the tasks capability with --redis;
#     a task made on instance 1 is working, then completed, on 2; its
#     tasks/result on 3 waits, then gives the CallToolResult with _meta
#     related-task; tasks/list on 1 and 2 lists the session's tasks;
#   - tasks/cancel on 2 of a task running on 1: the Task, cancelled; the
#     sleep on 1 stops (its worker is free, its log says so); tasks/get
#     on every instance: cancelled; a tasks/result waiting for it on 3
#     gets an error; a cancel of a completed task: -32602;
#   - another session: tasks/get, tasks/result, tasks/cancel of the
#     first's task -32602 on every instance, tasks/list without them;
#   - a ttl of 1.5 s: after it, -32602 on every instance, and the key
#     <prefix>task:<id> is gone;
#   - DELETE of a session on another instance: no <prefix>task:<id> of its
#     tasks and no <prefix>stasks:<sid> left (SCAN), even once its running
#     call would have ended;
#   - the official TypeScript SDK (its experimental tasks API) through
#     nginx: callToolStream twice (its polls land on several instances:
#     nginx's log), getTask, listTasks, cancelTask;
#   - 2026-07-28's extension io.modelcontextprotocol/tasks: a task made on
#     1, working then completed (the result inline) on 2 and 3; cancelled
#     on 3 while it runs on 1: cancelled on 2 and 1, the sleep on 1 stops;
#     a taskId that does not exist: -32602 on every instance;
#   - instance 1 stopped with SIGTERM (exit 0): its completed task and its
#     result are still answered on instance 2 (they live in Redis);
#   - instance 3 killed (-9) running a task: within seconds tasks/get on
#     instance 2 says failed (the lost instance named), and tasks/result
#     gives -32603, to one asked since the kill too; a task made there
#     just before the kill (before its instance's next heartbeat) fails
#     too;
#   - 2026-07-28, two conformance-server instances: a task asking the
#     client (input_required, its inputRequests seen on the other
#     instance), answered by tasks/update there, runs again and
#     completes; two requests answered one at a time on either instance;
#     MCP_TOOL_INPUT_FIRST: input_required first, the retry on the other
#     instance the task;
#   - Redis stopped (SIGSTOP) while a task ends on instance 2: its record
#     says completed once Redis is back (written again on reconnect);
#   - SIGTERM: the instances left exit 0; no sanitizer report in the logs.
# Prints TAP; everything it starts is stopped by PID. About 25 s (a
# minute under the sanitizers: MCP_BUILD=build/san stretches the bounds).
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_built "$MCP_DEMO"
need_built "$CONFORMANCE_SERVER"
need_node
need_sdk
command -v redis-server >/dev/null 2>&1 ||
	bail "redis-server is installed (tools/bootstrap.sh test)"
command -v redis-cli >/dev/null 2>&1 || bail "redis-cli is installed"
need_nginx

case $MCP_BUILD in
*san)
	: "${MCP_TIME_SCALE:=3}"
	export MCP_TIME_SCALE
	;;
esac

prefix=rtk$$:
redis_test redis-tasks

# start_srv I: mcp-demo instance I, its port in port_I, its pid in pid_I.
start_srv() {
	: >"$tmp/srv$1.log"
	"$MCP_DEMO" --http 127.0.0.1:0 --session-timeout 60 --metrics \
	    --redis "unix://$sock" --redis-prefix "$prefix" \
	    --log-level info 2>"$tmp/srv$1.log" &
	eval "pid_$1=$!"
	pids="$pids $!"
	eval "port_$1=\$(logged_port \"\$tmp/srv\$1.log\" $!)"
}
start_srv 1
start_srv 2
start_srv 3
[ -n "$port_1" ] && [ -n "$port_2" ] && [ -n "$port_3" ]
ok $? "three mcp-demo instances with --redis listen" "$tmp/srv1.log"
redis_up 3 "$tmp"/srv*.log

nport=$(free_port)
cat >"$tmp/mcp.conf" <<EOF
log_format libmcp_up '\$request_method \$upstream_addr \$status';
upstream libmcp_rtasks {
    server 127.0.0.1:$port_1;
    server 127.0.0.1:$port_2;
    server 127.0.0.1:$port_3;
}
server {
    listen 127.0.0.1:$nport;
    access_log $tmp/up.log libmcp_up;
    proxy_http_version 1.1;
    proxy_set_header Connection '';
    proxy_set_header Host \$host;
    proxy_buffering off;
    proxy_read_timeout 30s;
    location = /mcp {
        proxy_pass http://libmcp_rtasks;
    }
}
EOF
url=http://127.0.0.1:$nport/mcp
start_nginx "$tmp/mcp.conf" "$url"
ok $? "nginx round-robin over the three on 127.0.0.1:$nport" "$tmp/error.log"
: >"$tmp/up.log"

# node_phase PHASE [ARGS...]: test/node/redis-tasks.mjs's TAP, counted
# here; then whether it ran to its end.
node_phase() {
	_ph=$1
	shift
	node test/node/redis-tasks.mjs "$_ph" --ports "$port_1,$port_2,$port_3" \
	    --logs "$tmp/srv1.log,$tmp/srv2.log,$tmp/srv3.log" --sock "$sock" \
	    --prefix "$prefix" --url "$url" --state "$tmp/state.json" "$@" \
	    >"$tmp/node-$_ph.tap" 2>"$tmp/node-$_ph.err"
	_rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) ok 0 "${line#ok * - }" ;;
		"not ok "*) ok 1 "${line#not ok * - }" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done <"$tmp/node-$_ph.tap"
	[ $_rc -eq 0 ] && grep -q '^1\.\.' "$tmp/node-$_ph.tap"
	ok $? "test/node/redis-tasks.mjs $_ph ran to its end (exit $_rc)" "$tmp/node-$_ph.err"
}

node_phase a
# The SDK's requests went through nginx, to each of the three instances.
nup=$(sed -n 's/^POST \(127\.0\.0\.1:[0-9]*\) .*/\1/p' "$tmp/up.log" | sort -u | wc -l)
npost=$(grep -c '^POST ' "$tmp/up.log")
[ "$nup" -eq 3 ] && [ "$npost" -ge 9 ]
ok $? "the SDK's POSTs ($npost) reached all three instances through nginx ($nup)" "$tmp/up.log"
! grep -q '^POST .* 5[0-9][0-9]$' "$tmp/up.log"
ok $? "none of them got a 5xx from nginx or an instance" "$tmp/up.log"

# Instance 1 stopped as a rolling restart would: it runs nothing.
stop "$pid_1"
pids=$(echo "$pids" | sed "s/ $pid_1//")
ok $([ "$status" = 0 ]; echo $?) "instance 1 exits 0 on SIGTERM (got $status)" "$tmp/srv1.log"
# Instance 3, running a task, lost.
kill -KILL "$pid_3"
killed=$(node -e 'console.log(Date.now())')
wait "$pid_3" 2>/dev/null
pids=$(echo "$pids" | sed "s/ $pid_3//")
node_phase b --killed "$killed"
n_lost=$(grep -c "instance [0-9a-f]* lost" "$tmp/srv2.log")
[ "$n_lost" -ge 1 ]
ok $? "instance 2 logged the lost instance ($n_lost lines)" "$tmp/srv2.log"

# Two conformance-server instances (its Tasks fixtures, one state key):
# a task asking the client, answered through the other instance.
key=$tmp/state.key
printf 'redis-tasks-shared-state-key-0123456789\n' >"$key"
for c in 1 2; do
	: >"$tmp/conf$c.log"
	CONFORMANCE_TASKS=1 "$CONFORMANCE_SERVER" --http 127.0.0.1:0 \
	    --redis "unix://$sock" --redis-prefix "$prefix" \
	    --state-key-file "$key" --log-level info 2>"$tmp/conf$c.log" &
	eval "cpid_$c=$!"
	pids="$pids $!"
	eval "cport_$c=\$(logged_port \"\$tmp/conf\$c.log\" $!)"
done
node_phase c --cports "$cport_1,$cport_2"

# Redis away while a task ends on instance 2: Redis stopped (SIGSTOP)
# 0.3 s into a 3 s task, so that instance 2 takes its connection down (2
# s without an answer) before the task ends, and cannot write its end;
# continued 4.5 s in. The end is written once Redis is back, not lost.
hdr='-H Content-Type:application/json -H Accept:application/json,text/event-stream'
sid2=$(curl -s -D - -o /dev/null $hdr "http://127.0.0.1:$port_2/mcp" -d \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"away","version":"1"}}}' |
    tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
s2="-H Mcp-Session-Id:$sid2 -H MCP-Protocol-Version:2025-11-25"
curl -s -o /dev/null $hdr $s2 "http://127.0.0.1:$port_2/mcp" -d \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}'
tid=$(curl -s $hdr $s2 "http://127.0.0.1:$port_2/mcp" -d \
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":3000},"task":{"ttl":60000}}}' |
    sed -n 's/.*"taskId":"\([0-9a-f]*\)".*/\1/p' | head -n 1)
sleep 0.3
before=$(rcli get "${prefix}task:$tid" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p')
kill -STOP "$rpid"
sleep 4.2
kill -CONT "$rpid"
i=0
while [ $i -lt 100 ]; do
	after=$(rcli get "${prefix}task:$tid" | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p')
	[ "$after" = completed ] && break
	sleep 0.1
	i=$((i + 1))
done
[ -n "$tid" ] && [ "$before" = working ] && [ "$after" = completed ]
ok $? "a task ending on instance 2 while Redis is stopped: its record says completed once Redis is back (working before: $before; after: $after)" "$tmp/srv2.log"

stop "$pid_2"
pids=$(echo "$pids" | sed "s/ $pid_2//")
ok $([ "$status" = 0 ]; echo $?) "instance 2 exits 0 on SIGTERM (got $status)" "$tmp/srv2.log"
grep -h 'ERROR\|AddressSanitizer\|runtime error' "$tmp"/srv*.log >"$tmp/errs"
ok $([ ! -s "$tmp/errs" ]; echo $?) "no errors in the instances' logs" "$tmp/errs"
tap_end
