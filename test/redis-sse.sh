#!/bin/sh
# redis-sse.sh: the legacy HTTP+SSE transport across instances (--redis,
# issue 12's "Legacy SSE"). A real redis-server, three mcp-demo
# instances with --redis behind a real nginx (round-robin, no
# stickiness):
#   - the TypeScript SDK's SSEClientTransport through nginx, several
#     clients: the POSTs land on other instances than the stream's, and
#     every answer comes down the stream (test/node/redis-sse-client.mjs);
#   - direct: a POST /messages to an instance not holding the stream is
#     202 and its answer comes down the stream on the other; an unknown
#     session 404; a garbage body the same answer as on the instance
#     holding it; forged relayed messages dropped with a log line;
#   - the stream closed: its key <prefix>sse:<sid> is gone; every key
#     has a TTL;
#   - Redis stopped: 503 with the reason; back: relayed again;
#   - kill -9 of the instance holding a stream: 503 while its key lives,
#     404 once it expired.
# Prints TAP; everything it starts is stopped by PID.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_built "$MCP_DEMO"
need_node
command -v redis-server >/dev/null 2>&1 ||
	bail "redis-server is installed (tools/bootstrap.sh test)"
command -v redis-cli >/dev/null 2>&1 || bail "redis-cli is installed"
need_nginx

prefix=rts$$:
redis_test redis-sse

start_srv() {	# start_srv I: instance I, its port in port_I
	: >"$tmp/srv$1.log"
	"$MCP_DEMO" --http 127.0.0.1:0 --keepalive 1 \
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
upstream libmcp_sse {
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
    proxy_read_timeout 30s;
    location / {
        proxy_pass http://libmcp_sse;
    }
}
EOF
base=http://127.0.0.1:$nport
start_nginx "$tmp/mcp.conf" "$base/mcp"
ok $? "nginx round-robin over the three instances on 127.0.0.1:$nport" \
    "$tmp/error.log"

# ---- the SDK through nginx -------------------------------------------------

node test/node/redis-sse-client.mjs --url "$base" --clients 4 \
    >"$tmp/node.tap" 2>"$tmp/node.err"
node_rc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "${line#ok * - }" ;;
	"not ok "*) ok 1 "${line#not ok * - }" ;;
	"1.."*) ;;
	*) echo "$line" ;;
	esac
done <"$tmp/node.tap"
[ $node_rc -eq 0 ] && grep -q '^1\.\.' "$tmp/node.tap"
ok $? "test/node/redis-sse-client.mjs ran to its end (exit $node_rc)" "$tmp/node.err"
nrel=$(cat "$tmp"/srv*.log | grep -c 'a message relayed from another instance')
nsent=$(cat "$tmp"/srv*.log | grep -c 'a message relayed to the instance holding its stream')
[ "$nrel" -ge 4 ] && [ "$nrel" -eq "$nsent" ]
ok $? "the SDK's POSTs reached other instances than their stream's ($nsent relayed, $nrel handled there)"

# ---- direct, to the instances ---------------------------------------------

V=2024-11-05
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$V'","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
# open_stream I OUT: GET /sse on instance I, in the background; $sid,
# $spid.
open_stream() {
	eval "_p=\$port_$1"
	curl -sN --max-time 60 -H 'Accept: text/event-stream' \
	    "http://127.0.0.1:$_p/sse" >"$2" 2>/dev/null &
	spid=$!
	cpids="$cpids $spid"
	sid=
	_i=0
	while [ $_i -lt 50 ] && [ -z "$sid" ]; do
		sleep 0.1
		sid=$(sed -n 's/^data: .*sessionId=\([0-9a-f]\{32\}\).*/\1/p' "$2" |
		    head -n 1)
		_i=$((_i + 1))
	done
	[ -n "$sid" ]
}
# msg I SID BODY: POST /messages on instance I; $code, $tmp/resp.
msg() {
	eval "_p=\$port_$1"
	code=$(curl -s -o "$tmp/resp" -w '%{http_code}' --max-time 10 \
	    -H 'Content-Type: application/json' --data-binary "$3" \
	    "http://127.0.0.1:$_p/messages?sessionId=$2")
}
# wait_for FILE PATTERN: up to 5 s for PATTERN in FILE.
wait_for() {
	_i=0
	while [ $_i -lt 50 ] && ! grep -q "$2" "$1"; do
		sleep 0.1
		_i=$((_i + 1))
	done
	grep -q "$2" "$1"
}
tag_of() {	# tag_of I: instance I's tag, from its event ids or its key
	sed -n 's/.*inst:\([0-9a-f]\{8\}\).*/\1/p' "$tmp/srv$1.log" | head -n 1
}

open_stream 1 "$tmp/s1"
ok $? "GET /sse on instance 1: an endpoint event with a session ($sid)" "$tmp/s1"
s1=$sid
p1=$spid
v=$(rcli get "${prefix}sse:$s1")
t=$(rcli ttl "${prefix}sse:$s1")
tag1=${v%% *}
case $tag1 in
[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) r=0 ;;
*) r=1 ;;
esac
[ $r = 0 ] && [ "$t" -gt 0 ] && [ "$t" -le 15 ]
ok $? "instance 1 records it: ${prefix}sse:<sid> = \"$v\", TTL $t s"
msg 2 "$s1" "$init"
c=$code
wait_for "$tmp/s1" '"id":1,"result":{.*"protocolVersion":"2024-11-05"'
ok $([ $? = 0 ] && [ "$c" = 202 ]; echo $?) \
    "initialize POSTed to instance 2: 202, and its answer comes down the stream on instance 1 (got $c)" \
    "$tmp/s1"
msg 3 "$s1" "$inited"
c=$code
msg 3 "$s1" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"across"}}}'
wait_for "$tmp/s1" '"id":2,"result":.*across'
ok $([ $? = 0 ] && [ "$c" = 202 ] && [ "$code" = 202 ]; echo $?) \
    "notifications/initialized and an echo call POSTed to instance 3: 202, 202, the echo's answer down the stream ($c $code)" \
    "$tmp/s1"
grep -q "session ${s1%${s1#????????}}: a message relayed from another instance" "$tmp/srv1.log"
ok $? "instance 1 logged the relayed messages" "$tmp/srv1.log"
msg 2 "$s1" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":500},"_meta":{"progressToken":"t3"}}}'
c=$code
wait_for "$tmp/s1" '"id":3,"result":.*slept 500 ms'
r=$?
np=$(grep -c '"progressToken":"t3"' "$tmp/s1")
ok $([ $r = 0 ] && [ "$c" = 202 ] && [ "$np" -ge 3 ]; echo $?) \
    "a sleep with progress POSTed to instance 2: its $np progress notes and answer down the stream (got $c)" \
    "$tmp/s1"

msg 2 0123456789abcdef0123456789abcdef "$init"
c1=$code
msg 2 not-a-session "$init"
ok $([ "$c1" = 404 ] && [ "$code" = 404 ] && grep -q 'session not found' "$tmp/resp"; echo $?) \
    "an unknown session id, and one not ours, on instance 2: 404 ($c1 $code)" "$tmp/resp"

# Garbage: the same answer on the instance holding the stream and on another.
r=0
for body in 'not json' '{"jsonrpc":"2.0","id":' '[1,2' ''; do
	msg 1 "$s1" "$body"
	cl=$code
	cp "$tmp/resp" "$tmp/resp.l"
	msg 2 "$s1" "$body"
	cp "$tmp/resp" "$tmp/resp.r"
	[ "$cl" = 400 ] && [ "$code" = "$cl" ] && grep -q '"code":-32700' "$tmp/resp.r" &&
	    cmp -s "$tmp/resp.l" "$tmp/resp.r" || { r=1; break; }
done
ok $r "a garbage body ('$body') on instance 2: the same as on instance 1 ($cl $code)" "$tmp/resp.r"
r=0
for body in '{"jsonrpc":"2.0","id":7}' '{"jsonrpc":"2.0","id":8,"method":"no/such"}' '[]'; do
	msg 1 "$s1" "$body"
	cl=$code
	msg 2 "$s1" "$body"
	[ "$cl" = "$code" ] || { r=1; break; }
done
ok $r "a message that is not a request ('$body'): the same status on both ($cl $code)" "$tmp/resp"
wait_for "$tmp/s1" '"id":8,"error":{"code":-32601'
n8=$(grep -c '"id":8,"error":{"code":-32601' "$tmp/s1")
ok $([ "$n8" = 2 ]; echo $?) "an unknown method, POSTed on both: its error down the stream twice ($n8)" "$tmp/s1"

# Forged relayed messages on instance 1's channel.
rcli publish "${prefix}inst:$tag1" "p $s1 not json" >/dev/null
rcli publish "${prefix}inst:$tag1" "p 0123456789abcdef0123456789abcdef {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}" >/dev/null
rcli publish "${prefix}inst:$tag1" "p short" >/dev/null
rcli publish "${prefix}inst:$tag1" "p $s1 {\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"}" >/dev/null
wait_for "$tmp/s1" '"id":10,"result"'
r=$?
grep -q 'not json\|"id":9' "$tmp/s1"
f=$?
grep -q "a relayed message not of ours (.*not a message): dropped" "$tmp/srv1.log" &&
    grep -q "a relayed message for a stream not held here" "$tmp/srv1.log" &&
    grep -q "redis: a relayed message not of ours" "$tmp/srv1.log"
ok $([ $? = 0 ] && [ $f = 1 ] && [ $r = 0 ]; echo $?) \
    "forged relayed messages (not JSON, another session, too short) are dropped with a log line; a well-formed one is handled" \
    "$tmp/srv1.log"

# ---- the stream closed: its key goes ----------------------------------------

nottl=
nkeys=0
for key in $(rcli --scan --pattern "${prefix}*"); do
	nkeys=$((nkeys + 1))
	t=$(rcli ttl "$key")
	[ "$t" -gt 0 ] || [ "$t" = -2 ] || nottl="$nottl $key($t)"
done
[ "$nkeys" -ge 1 ] && [ -z "$nottl" ]
ok $? "every key of ${prefix} in Redis has a TTL ($nkeys keys; none:$nottl)"
kill -KILL "$p1"
wait "$p1" 2>/dev/null
i=0
while [ $i -lt 30 ] && [ "$(rcli exists "${prefix}sse:$s1")" = 1 ]; do
	sleep 0.1
	i=$((i + 1))
done
left=$(rcli --scan --pattern "${prefix}sse:*" | wc -l)
[ "$(rcli exists "${prefix}sse:$s1")" = 0 ] && [ "$left" -eq 0 ]
ok $? "the client closed its stream: its key is gone, and no ${prefix}sse:* is left ($left, SCAN; the SDK's too)"
msg 2 "$s1" '{"jsonrpc":"2.0","id":11,"method":"ping"}'
ok $([ "$code" = 404 ]; echo $?) "a POST for it on instance 2 now: 404 (got $code)" "$tmp/resp"

# ---- Redis stopped, and back -----------------------------------------------

open_stream 1 "$tmp/s2"
s2=$sid
msg 2 "$s2" "$init"
ok $([ "$code" = 202 ]; echo $?) "a second stream on instance 1, initialized through instance 2 (got $code)"
kill -KILL "$rpid"
wait "$rpid" 2>/dev/null
i=0
while [ $i -lt 30 ]; do
	msg 2 "$s2" '{"jsonrpc":"2.0","id":20,"method":"ping"}'
	[ "$code" = 503 ] && break
	sleep 0.1
	i=$((i + 1))
done
ok $([ "$code" = 503 ] && grep -q 'Redis' "$tmp/resp"; echo $?) \
    "Redis stopped: a POST for it on instance 2 gets 503 with the reason (got $code)" "$tmp/resp"
msg 1 "$s2" '{"jsonrpc":"2.0","id":21,"method":"ping"}'
c=$code
wait_for "$tmp/s2" '"id":21,"result"'
ok $([ $? = 0 ] && [ "$c" = 202 ]; echo $?) "on instance 1, which holds it: still 202 and answered (got $c)" "$tmp/s2"
start_redis
ok $? "redis-server again (empty)" "$tmp/redis.log"
i=0
while [ $i -lt 80 ]; do
	msg 3 "$s2" '{"jsonrpc":"2.0","id":22,"method":"ping"}'
	[ "$code" = 202 ] && break
	sleep 0.1
	i=$((i + 1))
done
c=$code
wait_for "$tmp/s2" '"id":22,"result"'
ok $([ $? = 0 ] && [ "$c" = 202 ]; echo $?) \
    "Redis back (empty): instance 1 records its stream again, and a POST on instance 3 is relayed (got $c after $i tries)" \
    "$tmp/s2"

# ---- the instance holding a stream lost ----------------------------------

open_stream 3 "$tmp/s3"
s3=$sid
msg 1 "$s3" "$init"
c=$code
wait_for "$tmp/s3" '"id":1,"result"'
ok $([ $? = 0 ] && [ "$c" = 202 ]; echo $?) "a stream on instance 3, initialized through instance 1 (got $c)"
kill -KILL "$pid_3"
wait "$pid_3" 2>/dev/null
pids=$(echo "$pids" | sed "s/ $pid_3//")
t0=$(date +%s)
sleep 0.3
msg 1 "$s3" '{"jsonrpc":"2.0","id":30,"method":"ping"}'
c=$code
ok $([ "$c" = 503 ]; echo $?) "kill -9 of instance 3: a POST for its stream, while its key lives, 503 (nobody listening; got $c)" "$tmp/resp"
i=0
while [ $i -lt 200 ]; do
	msg 2 "$s3" '{"jsonrpc":"2.0","id":31,"method":"ping"}'
	[ "$code" = 404 ] && break
	sleep 0.1
	i=$((i + 1))
done
t1=$(date +%s)
ok $([ "$code" = 404 ] && [ $((t1 - t0)) -le 17 ]; echo $?) \
    "once its key expired (TTL 15 s): 404 ($code after $((t1 - t0)) s)" "$tmp/resp"

for p in $cpids; do
	kill -TERM "$p" 2>/dev/null
done
cpids=
sleep 0.3
for k in 1 2; do
	eval "p=\$pid_$k"
	stop "$p"
	[ "$status" = 0 ] || break
done
ok $([ "$status" = 0 ]; echo $?) "instances 1 and 2 exit 0 on SIGTERM (the last: $status)" "$tmp/srv$k.log"
grep -h 'ERROR\|AddressSanitizer\|runtime error' "$tmp"/srv*.log >"$tmp/errs"
ok $([ ! -s "$tmp/errs" ]; echo $?) "no errors in the servers' logs" "$tmp/errs"
tap_end
