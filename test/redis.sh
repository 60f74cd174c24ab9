#!/bin/sh
# redis.sh: Streamable HTTP sessions shared through Redis (--redis). A real
# redis-server (on a unix socket in a temporary folder), three mcp-demo
# instances with --redis (one taking it from MCP_REDIS, one answering
# with JSON bodies, the others SSE) behind a real nginx balancing
# round-robin with no stickiness:
#   - the TypeScript SDK client through nginx (test/node/redis-client.mjs):
#     initialize, tools/list, echo and sleep calls, the key and its TTL,
#     its renewal, DELETE; then each instance served some of the calls
#     (its /metrics), each answers the deleted session 404, and each
#     adopted it from Redis (its log);
#   - an idle session ends for all: its key is deleted, not left to expire;
#   - GET and DELETE on instances that do not hold the session; a bad
#     record in Redis is not adopted; a record bound to a subject is 403
#     to a request of another identity; a record written by hand serves;
#   - Redis stopped: an initialize gets 503 with the reason, a session held
#     locally is still answered, one held elsewhere gets 503; the state
#     changes are logged once, not at every retry; Redis back: new sessions
#     again, served across the instances; a Redis that hangs (SIGSTOP):
#     a request waiting on it gets 503 within seconds;
#   - kill -9 of the instance that opened a session: the session goes on
#     through nginx on the others;
#   - redis://host:port/db with --redis-password-file, and a wrong password;
#   - no key is left once the sessions have ended (SCAN), and the live
#     instances exit 0 on SIGTERM.
# Prints TAP; everything it starts is stopped by PID.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_built "$MCP_DEMO"
need_node
command -v redis-server >/dev/null 2>&1 ||
	bail "redis-server is installed (tools/bootstrap.sh test)"
command -v redis-cli >/dev/null 2>&1 || bail "redis-cli is installed"
need_nginx
need_sdk

timeout=6		# --session-timeout: the key's TTL is 9 s
prefix=rt$$:		# --redis-prefix
redis_test redis

# start_demo I [ARGS...]: instance I, its port in port_I, its pid in pid_I.
start_demo() {
	_n=$1
	shift
	: >"$tmp/demo$_n.log"
	"$MCP_DEMO" --http 127.0.0.1:0 --session-timeout $timeout \
	    --redis-prefix "$prefix" --metrics --log-level info "$@" \
	    2>"$tmp/demo$_n.log" &
	eval "pid_$_n=$!"
	pids="$pids $!"
	eval "port_$_n=\$(logged_port \"\$tmp/demo\$_n.log\" $!)"
}
start_demo 1 --redis "unix://$sock"
MCP_REDIS="unix://$sock" start_demo 2
start_demo 3 --redis "unix://$sock" --json-response
[ -n "$port_1" ] && [ -n "$port_2" ] && [ -n "$port_3" ]
ok $? "three instances of $MCP_DEMO with --redis (the second from MCP_REDIS, the third --json-response) listen (ports $port_1 $port_2 $port_3)" \
    "$tmp/demo1.log"
redis_up 3 "$tmp"/demo*.log
[ "$(cat "$tmp"/demo*.log | grep -c 'redis: connection to .* up')" -eq 3 ]
ok $? "each logs once that its connection to Redis is up" "$tmp/demo2.log"

nport=$(free_port)
cat >"$tmp/mcp.conf" <<EOF
upstream libmcp_redis {
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
    location = /mcp {
        proxy_pass http://libmcp_redis;
        gzip off;
    }
}
EOF
url=http://127.0.0.1:$nport/mcp
start_nginx "$tmp/mcp.conf" "$url"
ok $? "nginx (round-robin over the three, no stickiness) on 127.0.0.1:$nport" \
    "$tmp/error.log"

H1='Content-Type: application/json'
H2='Accept: application/json, text/event-stream'
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
ping='{"jsonrpc":"2.0","id":2,"method":"ping"}'
echo_call='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'

# post URL BODY [SID]: the status in $code, the body in $tmp/resp, the
# session id it gave in $got_sid.
post() {
	code=$(curl -s -D "$tmp/head" -o "$tmp/resp" -w '%{http_code}' \
	    --max-time 10 -H "$H1" -H "$H2" ${3:+-H "Mcp-Session-Id: $3"} \
	    ${3:+-H "MCP-Protocol-Version: 2025-06-18"} --data-binary "$2" "$1")
	got_sid=$(tr -d '\r' <"$tmp/head" |
	    sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([0-9a-f]\{32\}\)$/\1/p')
}

# open URL: a new session there (initialize, initialized) in $sid.
open_session() {
	post "$1" "$init"
	sid=$got_sid
	[ "$code" = 200 ] && [ -n "$sid" ] || return 1
	post "$1" "$inited" "$sid"
	[ "$code" = 202 ]
}

# An idle session, opened now on instance 1 alone, checked at the end.
open_session "http://127.0.0.1:$port_1/mcp"
ok $? "a session opened on instance 1 directly, to be left idle" "$tmp/resp"
idle_sid=$sid
idle_at=$(date +%s)

# ---- the SDK client through nginx ------------------------------------------

node test/node/redis-client.mjs --url "$url" --sock "$sock" --prefix "$prefix" \
    --timeout $timeout >"$tmp/node.tap" 2>"$tmp/node.err"
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
ok $? "test/node/redis-client.mjs ran to its end (exit $node_rc)" "$tmp/node.err"
sdk_sid=$(sed -n 's/^# sid \([0-9a-f]\{32\}\)$/\1/p' "$tmp/node.tap")

for k in 1 2 3; do
	eval "p=\$port_$k"
	calls=$(curl -s --max-time 2 "http://127.0.0.1:$p/metrics" |
	    sed -n 's/^mcp_tool_calls_total{tool="echo"[^}]*} \([0-9]*\).*/\1/p' |
	    awk '{ s += $1 } END { print s + 0 }')
	[ "$calls" -gt 0 ]
	ok $? "instance $k served some of the SDK's echo calls ($calls, its /metrics)"
	[ -n "$sdk_sid" ] && grep -q "session ${sdk_sid%????????????????????????} \(adopted from Redis\|opened\)" "$tmp/demo$k.log"
	ok $? "instance $k opened or adopted the SDK's session (its log)" "$tmp/demo$k.log"
	post "http://127.0.0.1:$p/mcp" "$ping" "$sdk_sid"
	[ "$code" = 404 ]
	ok $? "after the DELETE, instance $k answers the session 404 (got $code)" "$tmp/resp"
done

# ---- GET and DELETE where the session is not held; a bad record ----------

open_session "http://127.0.0.1:$port_1/mcp"
ok $? "a session opened on instance 1 directly" "$tmp/resp"
x_sid=$sid
code=$(curl -s -o "$tmp/get" -w '%{http_code}' --max-time 1 -H "Mcp-Session-Id: $x_sid" \
    -H 'Accept: text/event-stream' "http://127.0.0.1:$port_2/mcp")
[ "$code" = 200 ] && grep -q "session ${x_sid%????????????????????????} adopted from Redis" "$tmp/demo2.log"
ok $? "GET /mcp on instance 2, which did not hold it: adopted from Redis, the stream opens (got $code)" \
    "$tmp/demo2.log"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X DELETE \
    -H "Mcp-Session-Id: $x_sid" "http://127.0.0.1:$port_3/mcp")
[ "$code" = 200 ]
ok $? "DELETE on instance 3, which did not hold it either: 200 (got $code)"
good=0
for p in $port_1 $port_2 $port_3; do
	post "http://127.0.0.1:$p/mcp" "$ping" "$x_sid"
	[ "$code" = 404 ] && good=$((good + 1))
done
[ $good -eq 3 ] && [ "$(rcli exists "${prefix}session:$x_sid")" = 0 ]
ok $? "then all three answer it 404 (those holding it were told on ${prefix}ended) and its key is gone ($good)" \
    "$tmp/demo1.log"
bad_sid=0123456789abcdef0123456789abcdef
rcli set "${prefix}session:$bad_sid" '{"v":1,"id":"'$bad_sid'","version":"1999-01-01","caps":[]}' >/dev/null
post "http://127.0.0.1:$port_1/mcp" "$ping" "$bad_sid"
[ "$code" = 404 ] && grep -q "session ${bad_sid%????????????????????????}: not a valid record in Redis" "$tmp/demo1.log"
ok $? "a record in Redis that is not one (its version, its capabilities): 404 and a warning, not adopted (got $code)" \
    "$tmp/demo1.log"
rcli del "${prefix}session:$bad_sid" >/dev/null
# Records written by hand: one bound to the subject "alice", which a
# request without her token may not take over; one bound to nobody.
rec() {	# rec ID [SUBJECT]
	printf '{"v":1,"id":"%s","version":"2025-06-18","caps":{},"info":{"name":"hand","version":"1"},"level":7,"ready":true,"subs":[],"at":1,"by":"test"%s}' \
	    "$1" "${2:+,\"sub\":\"$2\"}"
}
alice_sid=0123456789abcdef0123456789abcde1
rcli set "${prefix}session:$alice_sid" "$(rec $alice_sid alice)" EX 60 >/dev/null
post "http://127.0.0.1:$port_2/mcp" "$ping" "$alice_sid"
[ "$code" = 403 ]
ok $? "a record bound to the subject alice: a request without her identity gets 403 (got $code)" \
    "$tmp/resp"
hand_sid=0123456789abcdef0123456789abcde2
rcli set "${prefix}session:$hand_sid" "$(rec $hand_sid)" EX 60 >/dev/null
post "http://127.0.0.1:$port_2/mcp" "$echo_call" "$hand_sid"
[ "$code" = 200 ] && grep -q '"text":"hello"' "$tmp/resp"
ok $? "a valid record written by hand is adopted and served (got $code)" "$tmp/resp"
rcli del "${prefix}session:$alice_sid" >/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X DELETE \
    -H "Mcp-Session-Id: $hand_sid" "http://127.0.0.1:$port_2/mcp")
post "http://127.0.0.1:$port_1/mcp" "$ping" "not-an-id-of-ours"
[ "$code" = 404 ]
ok $? "an Mcp-Session-Id that is not 32 hex digits: 404 without asking Redis (got $code)"

# ---- Redis stopped, and back ---------------------------------------------

open_session "http://127.0.0.1:$port_1/mcp"
ok $? "a session opened on instance 1 directly" "$tmp/resp"
local_sid=$sid
[ "$(rcli exists "${prefix}session:$local_sid")" = 1 ]
ok $? "its key is in Redis as soon as its initialize is answered"
kill -TERM "$rpid"
wait "$rpid" 2>/dev/null
rpid=
i=0
while [ $i -lt 30 ] && [ "$(cat "$tmp"/demo*.log | grep -c 'redis: connection to .* lost')" -lt 3 ]; do
	sleep 0.1
	i=$((i + 1))
done
post "$url" "$init"
[ "$code" = 503 ] && grep -q 'session store unavailable: Redis' "$tmp/resp"
ok $? "Redis stopped: an initialize through nginx gets 503 with the reason (got $code: $(head -c 160 "$tmp/resp"))" \
    "$tmp/resp"
post "http://127.0.0.1:$port_1/mcp" "$echo_call" "$local_sid"
[ "$code" = 200 ] && grep -q '"text":"hello"' "$tmp/resp"
ok $? "Redis stopped: the session held by instance 1 is still answered (tools/call echo, $code)" \
    "$tmp/resp"
post "http://127.0.0.1:$port_2/mcp" "$ping" "$local_sid"
[ "$code" = 503 ]
ok $? "Redis stopped: instance 2, which does not hold it, answers 503 rather than 404 (got $code)" \
    "$tmp/resp"
sleep 1.5	# retries meanwhile: 0.1, 0.2, 0.4, 0.8 s
start_redis
ok $? "redis-server started again" "$tmp/redis.log"
i=0
while [ $i -lt 40 ]; do
	post "$url" "$init"
	[ "$code" = 200 ] && break
	sleep 0.1
	i=$((i + 1))
done
[ "$code" = 200 ] && [ -n "$got_sid" ]
ok $? "Redis back: an initialize through nginx opens a session again (after $i tries)" \
    "$tmp/resp"
new_sid=$got_sid
post "$url" "$inited" "$new_sid"
good=0
for k in 1 2 3 4 5 6; do
	post "$url" "$echo_call" "$new_sid"
	[ "$code" = 200 ] && grep -q '"text":"hello"' "$tmp/resp" &&
		good=$((good + 1))
done
[ $good -eq 6 ]
ok $? "Redis back: 6 calls of that session through nginx, all answered ($good)" \
    "$tmp/resp"
bad=0
for k in 1 2 3; do
	l=$(grep -c 'redis: connection to .* lost' "$tmp/demo$k.log")
	c=$(grep -c 'redis: cannot connect' "$tmp/demo$k.log")
	u=$(grep -c 'redis: connection to .* up again' "$tmp/demo$k.log")
	[ "$l" -eq 1 ] && [ "$c" -eq 0 ] && [ "$u" -eq 1 ] || bad=$((bad + 1))
done
[ $bad -eq 0 ]
ok $? "each instance logged the loss once and the return once, not each retry" \
    "$tmp/demo1.log"

# A Redis that hangs (SIGSTOP): a request waiting on it is not held
# forever; the server reconnects once it answers again.
open_session "http://127.0.0.1:$port_1/mcp"
ok $? "a session opened on instance 1 directly" "$tmp/resp"
hang_sid=$sid
kill -STOP "$rpid"
t0=$(date +%s)
post "http://127.0.0.1:$port_3/mcp" "$ping" "$hang_sid"
took=$(( $(date +%s) - t0 ))
kill -CONT "$rpid"
[ "$code" = 503 ] && grep -q 'no answer' "$tmp/resp" && [ $took -le 4 ] &&
    [ "$(grep -c 'redis: no answer from' "$tmp/demo3.log")" -eq 1 ]
ok $? "Redis stopped (SIGSTOP) while instance 3 asks it for a session: 503 within ${took} s, not a request held forever (got $code)" \
    "$tmp/resp"
i=0
while [ $i -lt 40 ]; do
	post "http://127.0.0.1:$port_3/mcp" "$ping" "$hang_sid"
	[ "$code" = 200 ] && break
	sleep 0.1
	i=$((i + 1))
done
[ "$code" = 200 ]
ok $? "Redis going on (SIGCONT): instance 3 reconnects and adopts the session (got $code)" \
    "$tmp/demo3.log"

# An initialize is answered only once Redis holds its session: with
# Redis hung it is never streamed out early (at --stream-after-ms), but
# refused when the store gives up on it.
kill -STOP "$rpid"
t0=$(date +%s)
post "http://127.0.0.1:$port_1/mcp" "$init"
took=$(( $(date +%s) - t0 ))
kill -CONT "$rpid"
[ "$code" = 503 ] && [ -z "$got_sid" ] && [ $took -le 5 ]
ok $? "Redis stopped (SIGSTOP) during an initialize: 503 after ${took} s and no Mcp-Session-Id, not a session Redis never took (got $code)" \
    "$tmp/resp"
i=0
while [ $i -lt 40 ]; do
	open_session "http://127.0.0.1:$port_1/mcp" && break
	sleep 0.1
	i=$((i + 1))
done
[ "$code" = 202 ]
ok $? "Redis going on: instance 1 opens sessions again (after $i tries)" \
    "$tmp/demo1.log"
back_sid=$sid

# A record larger than an instance reads back is refused at initialize
# (400), not stored to make the session 503 everywhere else.
big=$(head -c 300000 /dev/zero | tr '\0' x)
printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"experimental":{"x":{"pad":"%s"}}},"clientInfo":{"name":"curl","version":"1"}}}' \
    "$big" >"$tmp/big.json"
code=$(curl -s -D "$tmp/head" -o "$tmp/resp" -w '%{http_code}' --max-time 10 \
    -H "$H1" -H "$H2" --data-binary @"$tmp/big.json" "http://127.0.0.1:$port_1/mcp")
[ "$code" = 400 ] && ! grep -qi '^mcp-session-id' "$tmp/head"
ok $? "an initialize whose record would pass 256 KiB (300 KB of capabilities): 400, no session (got $code)" \
    "$tmp/resp"

# A bad --redis URL is refused without printing what may be a password.
"$MCP_DEMO" --http 127.0.0.1:0 --redis 'rediss://:hunter2@127.0.0.1:1' \
    </dev/null >/dev/null 2>"$tmp/badurl.err"
rc=$?
[ $rc -ne 0 ] && [ -s "$tmp/badurl.err" ] && ! grep -q hunter2 "$tmp/badurl.err"
ok $? "--redis rediss://:PASSWORD@...: refused (exit $rc), the password not in the log" "$tmp/badurl.err"

# ---- an instance killed ---------------------------------------------------

open_session "http://127.0.0.1:$port_2/mcp"
ok $? "a session opened on instance 2 directly" "$tmp/resp"
lost_sid=$sid
kill -KILL "$pid_2"
wait "$pid_2" 2>/dev/null
pids=$(echo "$pids" | sed "s/ $pid_2//")
good=0
for k in 1 2 3 4 5 6; do
	post "$url" "$echo_call" "$lost_sid"
	[ "$code" = 200 ] && grep -q '"text":"hello"' "$tmp/resp" &&
		good=$((good + 1))
done
[ $good -eq 6 ]
ok $? "instance 2 killed (-9): its session goes on through nginx, 6 calls answered ($good)" \
    "$tmp/resp"

# ---- TCP, a database number, a password -----------------------------------

aport=$(free_port)
printf 'sesame\n' >"$tmp/pass"
printf 'wrong\n' >"$tmp/wrong"
redis-server --port "$aport" --bind 127.0.0.1 --requirepass sesame --save '' \
    --appendonly no --dir "$tmp" >"$tmp/redis-auth.log" 2>&1 &
apid=$!
pids="$pids $apid"
i=0
while [ $i -lt 50 ] && [ "$(redis-cli -p "$aport" -a sesame --no-auth-warning ping 2>/dev/null)" != PONG ]; do
	sleep 0.1
	i=$((i + 1))
done
start_demo 4 --redis "redis://127.0.0.1:$aport/2" --redis-password-file "$tmp/pass"
start_demo 5 --redis "redis://127.0.0.1:$aport/2" --redis-password-file "$tmp/wrong"
open_session "http://127.0.0.1:$port_4/mcp"
[ $? -eq 0 ] && [ "$(redis-cli -p "$aport" -a sesame --no-auth-warning -n 2 exists "${prefix}session:$sid")" = 1 ]
ok $? "redis://127.0.0.1:$aport/2 with --redis-password-file: a session opens, its key in database 2" \
    "$tmp/demo4.log"
sleep 0.5
post "http://127.0.0.1:$port_5/mcp" "$init"
[ "$code" = 503 ] && grep -q 'AUTH refused: WRONGPASS' "$tmp/resp" &&
    [ "$(grep -c 'redis: AUTH refused (connection)' "$tmp/demo5.log")" -eq 1 ]
ok $? "a wrong password: an initialize gets 503 naming the refusal, which is logged once however often it retries (got $code)" \
    "$tmp/demo5.log"
post "http://127.0.0.1:$port_4/mcp" "$ping" "$sid"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X DELETE \
    -H "Mcp-Session-Id: $sid" "http://127.0.0.1:$port_4/mcp")
[ "$code" = 200 ] && [ -z "$(redis-cli -p "$aport" -a sesame --no-auth-warning -n 2 --scan)" ]
ok $? "that session deleted: no key left in database 2 (DELETE $code)"
for p in $pid_4 $pid_5 $apid; do
	stop "$p"
	pids=$(echo "$pids" | sed "s/ $p//")
done

# ---- the idle session, and what is left -----------------------------------

while [ $(( $(date +%s) - idle_at )) -lt $((timeout + 2)) ]; do
	sleep 0.2
done
[ "$(rcli exists "${prefix}session:$idle_sid")" = 0 ] &&
    grep -q "session ${idle_sid%????????????????????????} idle" "$tmp/demo1.log"
ok $? "the session left idle ended after --session-timeout $timeout s, its key deleted (not left to its 9 s TTL)" \
    "$tmp/demo1.log"
for s in "$local_sid" "$new_sid" "$lost_sid" "$hang_sid" "$back_sid"; do
	curl -s -o /dev/null --max-time 5 -X DELETE -H "Mcp-Session-Id: $s" "$url"
done
i=0
while [ $i -lt 20 ] && [ -n "$(rcli --scan --pattern "${prefix}*")" ]; do
	sleep 0.1
	i=$((i + 1))
done
rcli --scan --pattern "${prefix}*" >"$tmp/keys"
[ ! -s "$tmp/keys" ]
ok $? "every session ended: SCAN finds no key of ${prefix} left" "$tmp/keys"
bad=
for p in $pids; do
	stop "$p"
	[ "$status" = 0 ] || bad="$bad $p:$status"
done
pids=
[ -z "$bad" ]
ok $? "the two live instances exit 0 on SIGTERM${bad:+ (not:$bad)}" "$tmp/demo1.log"
stop "$npid"
npid=
stop "$rpid"
rpid=
tap_end
