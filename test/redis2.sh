#!/bin/sh
# redis2.sh: event logs in Redis Streams and live events across instances
# (--redis, issue 12's second slice). A real redis-server, three mcp-demo
# instances with --redis behind a real nginx (round-robin, no
# stickiness), two notes-server instances with --redis:
#   - a sleep call with progress, its POST stream dropped mid-call on
#     instance 1, resumed with Last-Event-ID on instance 2: the missed
#     progress and the answer, in order, no duplicates, the stream ends;
#     the same through nginx; the entries in <prefix>events:<sid>, with
#     a TTL;
#   - a Last-Event-ID that is garbage: 400 malformed; one of another
#     session, or forged: 400 unknown; a forged message on the session's
#     channel and a forged entry in its stream are dropped with a log line;
#   - a GET stream on notes-server B hears the resources/updated that a
#     call on notes-server A caused (A holds no stream: relayed);
#   - a sampling request of a call on conformance-server A answered
#     through B reaches the call; a notifications/cancelled POSTed to
#     mcp-demo 2 stops a call on mcp-demo 1; forged relayed messages are
#     dropped with a log line; notifications/initialized given A while
#     B reads the session's record (Redis held by DEBUG SLEEP): B's call
#     still asks the client at once;
#   - a Last-Event-ID whose route has leading zeros names that route; a
#     300 KB answer to a sampling request is relayed whole; a route of
#     4201 entries replays its newest (its answer and end); a lost
#     instance's call its log answers already is not answered again;
#   - DELETE: no key of the session is left (SCAN);
#   - kill -9 of an instance running a streamed call: another instance
#     (one: a lock) writes an error answer into the call's event log, so
#     that a resumption gets it, not silence;
#   - the official TypeScript SDK's own resumption (a resumption token,
#     a new connection, a GET with Last-Event-ID) through nginx, 3 times;
#   - kill -9 of the instance holding a client's resumed stream while the
#     call runs on another: resumed again, the rest and the answer, and
#     the session goes on;
#   - Redis stopped: a resumption on another instance gets 503 with the
#     reason; Redis back: it works again.
# Prints TAP; everything it starts is stopped by PID.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

: "${NOTES_SERVER:=$MCP_BUILD/notes-server}"
need_built "$MCP_DEMO"
need_built "$NOTES_SERVER"
need_built "$CONFORMANCE_SERVER"
need_node
command -v redis-server >/dev/null 2>&1 ||
	bail "redis-server is installed (tools/bootstrap.sh test)"
command -v redis-cli >/dev/null 2>&1 || bail "redis-cli is installed"
need_nginx

timeout=20
prefix=rt2$$:
redis_test redis2

# start_srv I BINARY [ARGS...]: instance I, its port in port_I.
start_srv() {
	_n=$1
	_b=$2
	shift 2
	: >"$tmp/srv$_n.log"
	"$_b" --http 127.0.0.1:0 --session-timeout $timeout \
	    --redis "unix://$sock" --redis-prefix "$prefix" \
	    --log-level info "$@" 2>"$tmp/srv$_n.log" &
	eval "pid_$_n=$!"
	pids="$pids $!"
	eval "port_$_n=\$(logged_port \"\$tmp/srv\$_n.log\" $!)"
}
start_srv 1 "$MCP_DEMO"
start_srv 2 "$MCP_DEMO"
start_srv 3 "$MCP_DEMO"
start_srv 4 "$NOTES_SERVER"
start_srv 5 "$NOTES_SERVER"
start_srv 6 "$CONFORMANCE_SERVER"
start_srv 7 "$CONFORMANCE_SERVER"
[ -n "$port_1" ] && [ -n "$port_2" ] && [ -n "$port_3" ] &&
    [ -n "$port_4" ] && [ -n "$port_5" ] && [ -n "$port_6" ] && [ -n "$port_7" ]
ok $? "three mcp-demo, two notes-server and two conformance-server instances with --redis listen" \
    "$tmp/srv1.log"
redis_up 7 "$tmp"/srv*.log

nport=$(free_port)
cat >"$tmp/mcp.conf" <<EOF
upstream libmcp_redis2 {
    server 127.0.0.1:$port_1;
    server 127.0.0.1:$port_2;
    server 127.0.0.1:$port_3;
}
upstream libmcp_redis2_conf {
    server 127.0.0.1:$port_6;
    server 127.0.0.1:$port_7;
}
server {
    listen 127.0.0.1:$nport;
    proxy_http_version 1.1;
    proxy_set_header Connection '';
    proxy_set_header Host \$host;
    proxy_buffering off;
    proxy_read_timeout 30s;
    location = /mcp {
        proxy_pass http://libmcp_redis2;
    }
    location = /c/mcp {
        proxy_pass http://libmcp_redis2_conf/mcp;
    }
}
EOF
url=http://127.0.0.1:$nport/mcp
start_nginx "$tmp/mcp.conf" "$url"
ok $? "nginx round-robin over the three mcp-demo on 127.0.0.1:$nport" \
    "$tmp/error.log"

V=2025-11-25
H1='Content-Type: application/json'
H2='Accept: application/json, text/event-stream'
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$V'","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
ping='{"jsonrpc":"2.0","id":2,"method":"ping"}'

post() {	# post URL BODY [SID]: $code, $tmp/resp, $got_sid
	code=$(curl -s -D "$tmp/head" -o "$tmp/resp" -w '%{http_code}' \
	    --max-time 10 -H "$H1" -H "$H2" ${3:+-H "Mcp-Session-Id: $3"} \
	    ${3:+-H "MCP-Protocol-Version: $V"} --data-binary "$2" "$1")
	got_sid=$(tr -d '\r' <"$tmp/head" |
	    sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([0-9a-f]\{32\}\)$/\1/p')
}
open_session() {	# open_session URL: $sid
	post "$1" "$init"
	sid=$got_sid
	[ "$code" = 200 ] && [ -n "$sid" ] || return 1
	post "$1" "$inited" "$sid"
	[ "$code" = 202 ]
}
sleep_call() {	# sleep_call ID MS
	echo '{"jsonrpc":"2.0","id":'$1',"method":"tools/call","params":{"name":"sleep","arguments":{"ms":'$2'},"_meta":{"progressToken":"p'$1'"}}}'
}
# cut_post URL SID ID MS SECS OUT: the call's POST stream, dropped after
# SECS; the last event id it got in $last.
cut_post() {
	curl -sN --max-time "$5" -H "$H1" -H "$H2" -H "Mcp-Session-Id: $2" \
	    -H "MCP-Protocol-Version: $V" --data-binary "$(sleep_call "$3" "$4")" \
	    "$1" >"$6" 2>/dev/null
	last=$(tr -d '\r' <"$6" | sed -n 's/^id: //p' | tail -n 1)
}
# resume URL SID LAST OUT [SECS]: a GET with Last-Event-ID; $code.
resume() {
	code=$(curl -sN -o "$4" -w '%{http_code}' --max-time "${5:-10}" \
	    -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $2" \
	    -H "MCP-Protocol-Version: $V" -H "Last-Event-ID: $3" "$1")
}
# check_resumed CUT GOT MS: the progress seen on CUT and GOT make 100,
# 200, ... MS-100 once each, in order, and GOT ends with the answer.
check_resumed() {
	cat "$1" "$2" | tr -d '\r' | sed -n 's/^data: //p' |
	    sed -n 's/.*"progress":\([0-9]*\).*/\1/p' >"$tmp/seen"
	_want=100
	: >"$tmp/want"
	while [ $_want -lt "$3" ]; do
		echo $_want >>"$tmp/want"
		_want=$((_want + 100))
	done
	cmp -s "$tmp/seen" "$tmp/want" &&
	    tr -d '\r' <"$2" | sed -n 's/^data: //p' | tail -n 1 |
	    grep -q "slept $3 ms"
}

# ---- a call's stream dropped on instance 1, resumed on instance 2 -------

open_session "http://127.0.0.1:$port_1/mcp"
ok $? "a session ($V) opened on instance 1" "$tmp/resp"
s1=$sid
cut_post "http://127.0.0.1:$port_1/mcp" "$s1" 10 1500 0.7 "$tmp/cut1"
r1=$(echo "$last" | sed 's/-[0-9]*$//')
case $last in
[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9]*-[0-9]*) r=0 ;;
*) r=1 ;;
esac
grep -q '"progress":' "$tmp/cut1"
ok $((r + $?)) "the POST stream of a sleep of 1.5 s, dropped at 0.7 s: some progress, and event ids <instance>-<route>-<seq> (last $last)" \
    "$tmp/cut1"
resume "http://127.0.0.1:$port_2/mcp" "$s1" "$last" "$tmp/got1"
[ "$code" = 200 ] && check_resumed "$tmp/cut1" "$tmp/got1" 1500
ok $? "GET with Last-Event-ID on instance 2: the missed progress and the answer, in order, once each; the stream ends (got $code)" \
    "$tmp/got1"
grep -q "stream $(echo "$last" | sed 's/-[0-9]*$//') resumed from Redis's log" "$tmp/srv2.log"
ok $? "instance 2 read it from Redis's log (its log)" "$tmp/srv2.log"
ids=$(tr -d '\r' <"$tmp/got1" | sed -n 's/^id: //p')
[ -n "$ids" ] && [ "$(echo "$ids" | sort -u | wc -l)" -eq "$(echo "$ids" | wc -l)" ] &&
    [ "$(echo "$ids" | sed 's/-[0-9]*$//' | sort -u)" = "$(echo "$last" | sed 's/-[0-9]*$//')" ]
ok $? "the replayed events keep their ids (instance 1's route), no id twice" "$tmp/got1"
n_ev=$(rcli xlen "${prefix}events:$s1")
t_ev=$(rcli ttl "${prefix}events:$s1")
[ "$n_ev" -gt 10 ] && [ "$t_ev" -gt 0 ] && [ "$t_ev" -le $((timeout + timeout / 2)) ]
ok $? "${prefix}events:<sid> holds the events ($n_ev entries) and a TTL ($t_ev s)"
mid=$(tr -d '\r' <"$tmp/got1" | sed -n 's/^id: //p' | head -n 3 | tail -n 1)
resume "http://127.0.0.1:$port_3/mcp" "$s1" "$mid" "$tmp/got1b"
[ "$code" = 200 ] && check_resumed "$tmp/got1" "$tmp/got1b" 1500 2>/dev/null
tr -d '\r' <"$tmp/got1b" | sed -n 's/^data: //p' | tail -n 1 | grep -q 'slept 1500 ms'
ok $? "resumed again on instance 3 from an id instance 2 gave: the rest, then the answer (got $code)" \
    "$tmp/got1b"
resume "http://127.0.0.1:$port_1/mcp" "$s1" "$last" "$tmp/got1c"
[ "$code" = 200 ] && check_resumed "$tmp/cut1" "$tmp/got1c" 1500
ok $? "and on instance 1, which holds the route: the same events (got $code)" "$tmp/got1c"

# ---- the same through nginx ------------------------------------------------

open_session "$url"
ok $? "a session opened through nginx" "$tmp/resp"
s2=$sid
cut_post "$url" "$s2" 11 1200 0.6 "$tmp/cut2"
resume "$url" "$s2" "$last" "$tmp/got2"
[ "$code" = 200 ] && check_resumed "$tmp/cut2" "$tmp/got2" 1200
ok $? "through nginx: dropped at 0.6 s, resumed with Last-Event-ID ($last): the rest and the answer (got $code)" \
    "$tmp/got2"

# ---- bad Last-Event-IDs ----------------------------------------------------

for bad in 'garbage' '12345678-1' 'zzzzzzzz-1-1' "$(printf 'a%.0s' $(seq 60))" '00000000-x-1'; do
	resume "http://127.0.0.1:$port_2/mcp" "$s1" "$bad" "$tmp/bad"
	[ "$code" = 400 ] && grep -q 'malformed Last-Event-ID' "$tmp/bad" || break
done
ok $? "a garbage Last-Event-ID ($bad): 400 malformed (got $code)" "$tmp/bad"
resume "http://127.0.0.1:$port_3/mcp" "$s2" "$r1-1" "$tmp/bad"
c1=$code
resume "http://127.0.0.1:$port_3/mcp" "$s1" "deadbeef-7-1" "$tmp/bad2"
[ "$c1" = 400 ] && [ "$code" = 400 ] && grep -q 'unknown Last-Event-ID' "$tmp/bad2"
ok $? "an id of another session's route, one forged: 400 unknown Last-Event-ID ($c1 $code)" \
    "$tmp/bad2"
resume "http://127.0.0.1:$port_2/mcp" "$s1" "$r1-1" "$tmp/ok1"
[ "$code" = 200 ]
ok $? "session 1's own route is still found (got $code)" "$tmp/ok1"
# The route's number with leading zeros (at most 40 bytes): the same
# route, where it is held and where it is replayed (the digits are not
# copied as they came: they overflowed a 24-byte buffer).
lz="${r1%%-*}-0000000000000000000${r1#*-}-1"
resume "http://127.0.0.1:$port_1/mcp" "$s1" "$lz" "$tmp/lz1"
c1=$code
resume "http://127.0.0.1:$port_3/mcp" "$s1" "$lz" "$tmp/lz3"
[ "$c1" = 200 ] && [ "$code" = 200 ] &&
    tr -d '\r' <"$tmp/lz3" | sed -n 's/^data: //p' | tail -n 1 |
    grep -q 'slept 1500 ms'
ok $? "a Last-Event-ID with leading zeros in its route ($lz): the route, held (got $c1) or replayed (got $code)" \
    "$tmp/lz3"
# Forged entries: in the stream, and on the session's channel.
rcli xadd "${prefix}events:$s1" '*' m "m $r1 99 not json" >/dev/null
rcli xadd "${prefix}events:$s1" '*' m "m $r1 98 {\"a\":1}
data: {}" >/dev/null
resume "http://127.0.0.1:$port_3/mcp" "$s1" "$r1-1" "$tmp/forged"
[ "$code" = 200 ] && ! grep -q 'not json' "$tmp/forged" &&
    ! grep -q '"a":1' "$tmp/forged" &&
    grep -q "an event log entry not of ours in Redis: dropped" "$tmp/srv3.log"
ok $? "forged entries in the stream (not JSON, a newline) are dropped with a log line (got $code)" \
    "$tmp/srv3.log"

# ---- the standalone stream hears another instance ------------------------

N4=http://127.0.0.1:$port_4/mcp
N5=http://127.0.0.1:$port_5/mcp
open_session "$N4"
ok $? "a session opened on notes-server A" "$tmp/resp"
s3=$sid
post "$N4" '{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"notes://all"}}' "$s3"
ok $([ "$code" = 200 ]; echo $?) "resources/subscribe notes://all on A (got $code)" "$tmp/resp"
curl -sN --max-time 4 -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $s3" \
    -H "MCP-Protocol-Version: $V" "$N5" >"$tmp/get5" 2>/dev/null &
gpid=$!
sleep 0.5
post "$N4" '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add_note","arguments":{"title":"t","body":"b","tags":[]}}}' "$s3"
c=$code
post "$N4" "$inited" "$s3"
wait $gpid
[ "$c" = 200 ] && grep -q 'notifications/resources/updated' "$tmp/get5" &&
    grep -q 'notes://all' "$tmp/get5"
ok $? "a GET stream on notes-server B hears the resources/updated of a call on A (got $c)" \
    "$tmp/get5"
ids=$(tr -d '\r' <"$tmp/get5" | sed -n 's/^id: //p' | tail -n 1)
resume "$N4" "$s3" "$(echo "$ids" | sed 's/-[0-9]*$//')-0" "$tmp/get4" 2
[ "$code" = 200 ] && grep -q 'notes://all' "$tmp/get4"
ok $? "B's standalone stream ($ids) resumed on A from its start: the relayed event, from Redis's log (got $code)" \
    "$tmp/get4"
rcli publish "${prefix}ev:$s3" "g 00000000-0 0 {bad" >/dev/null
rcli publish "${prefix}ev:$s3" "zzz" >/dev/null
sleep 0.3
grep -q "a message on its Redis channel not of ours" "$tmp/srv4.log" ||
    grep -q "a message on its Redis channel not of ours" "$tmp/srv5.log"
ok $? "forged messages on the session's channel: dropped with a log line"

# ---- requests to the client, and cancels, through another instance -------

C6=http://127.0.0.1:$port_6/mcp
C7=http://127.0.0.1:$port_7/mcp
post "$C6" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$V'","capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"curl","version":"1"}}}'
s6=$got_sid
post "$C6" "$inited" "$s6"
ok $([ "$code" = 202 ] && [ -n "$s6" ]; echo $?) "a session with sampling opened on conformance-server A" "$tmp/resp"
curl -sN --max-time 10 -H "$H1" -H "$H2" -H "Mcp-Session-Id: $s6" \
    -H "MCP-Protocol-Version: $V" --data-binary \
    '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}' \
    "$C6" >"$tmp/samp" 2>/dev/null &
spid=$!
i=0
while [ $i -lt 50 ] && ! grep -q 'sampling/createMessage' "$tmp/samp"; do
	sleep 0.1
	i=$((i + 1))
done
rid=$(sed -n 's/.*"id":"\(s[0-9]*-[0-9a-f]*\)".*/\1/p' "$tmp/samp" | head -n 1)
case $rid in
s[0-9]*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) r=0 ;;
*) r=1 ;;
esac
ok $r "its call's sampling/createMessage has an id naming the instance ($rid)" "$tmp/samp"
post "$C7" '{"jsonrpc":"2.0","id":"s999-'"${rid#*-}"'","result":{"role":"assistant","content":{"type":"text","text":"stray"},"model":"m"}}' "$s6"
post "$C7" '{"jsonrpc":"2.0","id":"'"$rid"'","result":{"role":"assistant","content":{"type":"text","text":"relayed"},"model":"m"}}' "$s6"
c=$code
wait $spid
[ "$c" = 202 ] && grep -q 'LLM response: relayed' "$tmp/samp" &&
    ! grep -q stray "$tmp/samp"
ok $? "its answer POSTed to instance B (202) reaches the call on A, a stray one does not (got $c)" \
    "$tmp/samp"
grep -q "a response relayed to ${rid#*-}" "$tmp/srv7.log"
ok $? "B logged the relay to A's channel" "$tmp/srv7.log"
# An answer of 300 KB (a client may send up to --max-message, 4 MiB):
# relayed whole, not dropped as over the 256 KiB of a session record.
curl -sN --max-time 10 -H "$H1" -H "$H2" -H "Mcp-Session-Id: $s6" \
    -H "MCP-Protocol-Version: $V" --data-binary \
    '{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}' \
    "$C6" >"$tmp/samp2" 2>/dev/null &
spid=$!
i=0
while [ $i -lt 50 ] && ! grep -q 'sampling/createMessage' "$tmp/samp2"; do
	sleep 0.1
	i=$((i + 1))
done
rid2=$(sed -n 's/.*"id":"\(s[0-9]*-[0-9a-f]*\)".*/\1/p' "$tmp/samp2" | head -n 1)
{
	printf '{"jsonrpc":"2.0","id":"%s","result":{"role":"assistant","content":{"type":"text","text":"big' "$rid2"
	head -c 300000 /dev/zero | tr '\0' x
	printf '"},"model":"m"}}'
} >"$tmp/big.json"
post "$C7" "@$tmp/big.json" "$s6"
c=$code
wait $spid
[ "$c" = 202 ] && grep -q 'LLM response: bigxxxx' "$tmp/samp2"
ok $? "an answer of 300 KB POSTed to instance B reaches the call on A too (got $c)" \
    "$tmp/srv6.log"
rcli publish "${prefix}inst:${rid#*-}" "r $s6 {\"jsonrpc\":\"2.0\"" >/dev/null
rcli publish "${prefix}inst:all" "c $s6 {\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":1}" >/dev/null
rcli publish "${prefix}inst:all" "c nosession" >/dev/null
sleep 0.3
[ "$(grep -c 'relayed message not of ours' "$tmp/srv6.log")" -ge 2 ] &&
    grep -q 'relayed message not of ours' "$tmp/srv7.log"
ok $? "forged relayed messages (not JSON, not a cancel, no session) are dropped with a log line" \
    "$tmp/srv6.log"

# notifications/initialized given A while B reads the session's record
# (Redis held still by DEBUG SLEEP: B's GET runs first, then A's write
# and its message): B heard it, and the call's sampling request is not
# held for an initialized B never saw (it was, until its timeout, when
# the message came while B was still reading the record). Three times:
# which of B's two connections it reads first is up to its loop.
k=1
while [ $k -le 3 ]; do
	post "$C6" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$V'","capabilities":{"sampling":{}},"clientInfo":{"name":"curl","version":"1"}}}'
	s8=$got_sid
	rcli debug sleep 0.6 >/dev/null &
	dpid=$!
	sleep 0.1
	curl -sN --max-time 10 -H "$H1" -H "$H2" -H "Mcp-Session-Id: $s8" \
	    -H "MCP-Protocol-Version: $V" --data-binary \
	    '{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}' \
	    "$C7" >"$tmp/samp3" 2>/dev/null &
	spid=$!
	sleep 0.2
	post "$C6" "$inited" "$s8"
	c=$code
	wait $dpid
	i=0
	while [ $i -lt 50 ] && ! grep -q 'sampling/createMessage' "$tmp/samp3"; do
		sleep 0.1
		i=$((i + 1))
	done
	rid3=$(sed -n 's/.*"id":"\(s[0-9]*-[0-9a-f]*\)".*/\1/p' "$tmp/samp3" | head -n 1)
	[ -n "$rid3" ] && post "$C7" '{"jsonrpc":"2.0","id":"'"$rid3"'","result":{"role":"assistant","content":{"type":"text","text":"round '$k'"},"model":"m"}}' "$s8"
	wait $spid
	[ "$c" = 202 ] && [ -n "$s8" ] && [ -n "$rid3" ] &&
	    grep -q "LLM response: round $k" "$tmp/samp3"
	ok $? "round $k: initialized on A (202) while B read the record: B's call asks the client within 5 s ($rid3) and gets its answer" \
	    "$tmp/samp3"
	k=$((k + 1))
done

# The SDK through nginx over the two conformance-servers.
node test/node/redis2-client.mjs --url "http://127.0.0.1:$nport/c/mcp" \
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
ok $? "test/node/redis2-client.mjs ran to its end (exit $node_rc)" "$tmp/node.err"
i=0
while [ $i -lt 30 ] && [ "$(cat "$tmp/srv6.log" "$tmp/srv7.log" | grep -c 'cancelled by the client')" -lt 4 ]; do
	sleep 0.1
	i=$((i + 1))
done
nrel=$(cat "$tmp/srv6.log" "$tmp/srv7.log" | grep -c 'a response relayed to')
ncan=$(cat "$tmp/srv6.log" "$tmp/srv7.log" | grep -c 'cancelled by the client')
ncanx=$(cat "$tmp/srv6.log" "$tmp/srv7.log" | grep -c 'cancelled by the client (through another instance)')
[ "$nrel" -ge 2 ] && [ "$ncan" -eq 4 ] && [ "$ncanx" -ge 1 ]
ok $? "the SDK's answers went through the other instance at times ($((nrel - 1)) relayed), and each of its 4 cancels stopped its call where it ran ($ncanx through the other instance)" \
    "$tmp/srv6.log"

open_session "http://127.0.0.1:$port_1/mcp"
s7=$sid
t0=$(date +%s)
curl -sN --max-time 10 -H "$H1" -H "$H2" -H "Mcp-Session-Id: $s7" \
    -H "MCP-Protocol-Version: $V" --data-binary "$(sleep_call 40 4000)" \
    "http://127.0.0.1:$port_1/mcp" >"$tmp/cancel" 2>/dev/null &
cpid=$!
sleep 0.6
post "http://127.0.0.1:$port_2/mcp" '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":40,"reason":"test"}}' "$s7"
c=$code
wait $cpid
t1=$(date +%s)
[ "$c" = 202 ] && [ $((t1 - t0)) -lt 3 ] && ! grep -q 'slept' "$tmp/cancel" &&
    grep -q 'cancelled by the client (through another instance)' "$tmp/srv1.log"
ok $? "notifications/cancelled POSTed to instance 2 stops the sleep running on instance 1 ($c, $((t1 - t0)) s)" \
    "$tmp/srv1.log"

# ---- a route longer than a replay ------------------------------------------

# A route of 4200 progress notes and its answer in a session's log (one
# long call, --event-log's 4096 entries and the few more that XADD's ~
# keeps): a replay gets its newest 4096, so the answer and the end, not
# its oldest (then it waited for an end already gone by).
open_session "http://127.0.0.1:$port_1/mcp"
s9=$sid
rcli eval "for i = 1, 4200 do redis.call('XADD', KEYS[1], '*', 'm', 'm ' .. ARGV[1] .. ' ' .. i .. ' {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":' .. i .. '}}') end redis.call('XADD', KEYS[1], '*', 'm', 'm ' .. ARGV[1] .. ' 4201 {\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}') redis.call('XADD', KEYS[1], '*', 'm', 'e ' .. ARGV[1] .. ' 4201') redis.call('EXPIRE', KEYS[1], 60) return 1" \
    1 "${prefix}events:$s9" facefeed-1 >/dev/null
curl -sN -o "$tmp/long" --max-time 5 -H 'Accept: text/event-stream' \
    -H "Mcp-Session-Id: $s9" -H "MCP-Protocol-Version: $V" \
    -H "Last-Event-ID: facefeed-1-4150" "http://127.0.0.1:$port_2/mcp"
c=$?
tr -d '\r' <"$tmp/long" | sed -n 's/^data: //p' | tail -n 1 | grep -q '"id":99,"result"' &&
    [ "$(tr -d '\r' <"$tmp/long" | sed -n 's/^id: //p' | head -n 1)" = facefeed-1-4151 ]
ok $? "a route of 4201 events resumed at 4150 from Redis's log: 4151 on, its answer, and the stream ends (curl $c)" \
    "$tmp/long"
[ "$c" = 0 ]
ok $? "... at once, not waiting for an end it missed (curl $c)" "$tmp/srv2.log"

# ---- a lost instance's record a second old --------------------------------

# A lost instance (never up: its tag is made up) whose record names calls
# 1 and 2 of a route, and whose log answers 1 already (it finished after
# the last heartbeat): the sweep answers 2 only, never 1 twice.
ft=feedf00d
rcli xadd "${prefix}events:$s1" '*' m "s $ft-1 0" >/dev/null
rcli xadd "${prefix}events:$s1" '*' m "m $ft-1 1 {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}" >/dev/null
rcli set "${prefix}calls:$ft" "[[\"$s1\",\"$ft-1\",[1,2]]]" ex 60 >/dev/null
rcli sadd "${prefix}instances" "$ft" >/dev/null
i=0
while [ $i -lt 40 ] && [ "$(rcli exists "${prefix}calls:$ft")" = 1 ]; do
	sleep 0.1
	i=$((i + 1))
done
rcli xrange "${prefix}events:$s1" - + | grep "^m $ft-1 " >"$tmp/swept"
grep -c 'was lost' "$tmp/swept" >"$tmp/nlost"
[ "$(cat "$tmp/nlost")" = 1 ] && grep -q '"id":2,"error"' "$tmp/swept" &&
    ! grep -q '"id":1,"error"' "$tmp/swept" &&
    [ "$(rcli xrange "${prefix}events:$s1" - + | grep -c "^e $ft-1 ")" = 1 ]
ok $? "a lost instance's call its log answers already is not answered again, the other is ($(cat "$tmp/nlost") error answers)" \
    "$tmp/swept"

# ---- DELETE: nothing left -------------------------------------------------

for s in "$s1" "$s2" "$s3"; do
	case $s in "$s3") u=$N5 ;; *) u=$url ;; esac
	curl -s -o /dev/null --max-time 5 -X DELETE -H "Mcp-Session-Id: $s" \
	    -H "MCP-Protocol-Version: $V" "$u"
done
sleep 0.3
rcli --scan --pattern "${prefix}*" >"$tmp/keys"
left=$(grep -c -e "${s1:-none}" -e "${s2:-none}" -e "${s3:-none}" "$tmp/keys")
[ -n "$s1" ] && [ -n "$s2" ] && [ -n "$s3" ] && [ "$left" -eq 0 ]
ok $? "after DELETE no key of the three sessions is left, events: too ($left, SCAN)" "$tmp/keys"

# ---- the SDK's own resumption through nginx --------------------------------

from_log() {	# how many streams instances 1 to 3 resumed from Redis's log
	cat "$tmp/srv1.log" "$tmp/srv2.log" "$tmp/srv3.log" |
	    grep -c "resumed from Redis's log"
}
r0=$(from_log)
node test/node/redis-resume.mjs --url "$url" >"$tmp/resume.tap" \
    2>"$tmp/resume.err"
node_rc=$?
r1=$(from_log)
while IFS= read -r line; do
	case $line in
	"ok "*) ok 0 "SDK resumption: ${line#ok * - }" ;;
	"not ok "*) ok 1 "SDK resumption: ${line#not ok * - }" ;;
	"1.."*) ;;
	*) echo "$line" ;;
	esac
done <"$tmp/resume.tap"
[ $node_rc -eq 0 ] && grep -q '^1\.\.' "$tmp/resume.tap"
ok $? "test/node/redis-resume.mjs ran to its end (exit $node_rc)" "$tmp/resume.err"
[ $((r1 - r0)) -ge 1 ]
ok $? "at least one of those GETs reached another instance than the call's, which replayed from Redis ($((r1 - r0)) of 3)"

# ---- Redis stopped, and back -------------------------------------------------

open_session "http://127.0.0.1:$port_1/mcp"
s4=$sid
cut_post "http://127.0.0.1:$port_1/mcp" "$s4" 12 1000 0.5 "$tmp/cut4"
kill -STOP "$rpid"
kill -KILL "$rpid"
kill -CONT "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
sleep 0.3
resume "http://127.0.0.1:$port_2/mcp" "$s4" "$last" "$tmp/down"
[ "$code" = 503 ] && grep -q 'Redis' "$tmp/down"
ok $? "Redis stopped: a resumption on another instance gets 503 with the reason (got $code)" \
    "$tmp/down"
start_redis
ok $? "redis-server again (empty)" "$tmp/redis.log"
i=0
while [ $i -lt 60 ] && [ "$(grep -c 'redis: subscriber to .* up again' "$tmp/srv2.log")" -lt 1 ]; do
	sleep 0.1
	i=$((i + 1))
done
open_session "http://127.0.0.1:$port_1/mcp"
s5=$sid
cut_post "http://127.0.0.1:$port_1/mcp" "$s5" 13 1000 0.5 "$tmp/cut5"
resume "http://127.0.0.1:$port_2/mcp" "$s5" "$last" "$tmp/back"
[ "$code" = 200 ] && check_resumed "$tmp/cut5" "$tmp/back" 1000
ok $? "Redis back: a new session's call resumed on another instance again (got $code)" \
    "$tmp/back"

# ---- a lost instance -------------------------------------------------------

open_session "http://127.0.0.1:$port_1/mcp"
s8=$sid
cut_post "http://127.0.0.1:$port_1/mcp" "$s8" 50 8000 0.6 "$tmp/cut8"
sleep 1.5
[ "$(rcli exists "${prefix}alive:${last%%-*}")" = 1 ] &&
    rcli get "${prefix}calls:${last%%-*}" | grep -q "$s8"
ok $? "instance 1, running a streamed call, beats (${prefix}alive:<tag>) and records it (${prefix}calls:<tag>)"
nottl=
nkeys=0
for key in $(rcli --scan --pattern "${prefix}*"); do
	nkeys=$((nkeys + 1))
	t=$(rcli ttl "$key")
	[ "$t" -gt 0 ] || [ "$t" = -2 ] || nottl="$nottl $key($t)"
done
[ "$nkeys" -ge 4 ] && [ -z "$nottl" ]
ok $? "every key of ${prefix} in Redis has a TTL ($nkeys keys; none:$nottl)"
kill -KILL "$pid_1"
wait "$pid_1" 2>/dev/null
pids=$(echo "$pids" | sed "s/ $pid_1//")
t0=$(date +%s)
resume "http://127.0.0.1:$port_2/mcp" "$s8" "$last" "$tmp/lost" 12
t1=$(date +%s)
tr -d '\r' <"$tmp/lost" | sed -n 's/^data: //p' | tail -n 1 >"$tmp/lost.last"
[ "$code" = 200 ] && grep -q '"id":50,"error":{"code":-32603' "$tmp/lost.last" &&
    grep -q 'was lost' "$tmp/lost.last" && [ $((t1 - t0)) -lt 10 ]
ok $? "kill -9 of instance 1 mid-call: a resumption on instance 2 gets the events up to then, then an error answer for the call, and ends ($((t1 - t0)) s)" \
    "$tmp/lost"
n_lost=$(cat "$tmp/srv2.log" "$tmp/srv3.log" "$tmp/srv4.log" "$tmp/srv5.log" \
    "$tmp/srv6.log" "$tmp/srv7.log" | grep -c "instance ${last%%-*} lost")
[ "$n_lost" -eq 1 ]
ok $? "exactly one other instance answered for it (SET NX lock; $n_lost logged it)"
sleep 1.2
[ "$(rcli exists "${prefix}calls:${last%%-*}")" = 0 ] &&
    [ "$(rcli sismember "${prefix}instances" "${last%%-*}")" = 0 ]
ok $? "the lost instance's record is gone from Redis"
resume "http://127.0.0.1:$port_3/mcp" "$s8" "$last" "$tmp/lost2" 5
tr -d '\r' <"$tmp/lost2" | sed -n 's/^data: //p' | tail -n 1 | grep -q 'was lost'
ok $? "resumed later on instance 3: the same error answer, from the log (got $code)" "$tmp/lost2"

# ---- the instance holding a resumed stream lost, the call elsewhere -------

open_session "http://127.0.0.1:$port_2/mcp"
s9=$sid
cut_post "http://127.0.0.1:$port_2/mcp" "$s9" 60 3000 0.5 "$tmp/cut9"
curl -sN -o "$tmp/got9" --max-time 6 -H 'Accept: text/event-stream' \
    -H "Mcp-Session-Id: $s9" -H "MCP-Protocol-Version: $V" \
    -H "Last-Event-ID: $last" "http://127.0.0.1:$port_3/mcp" &
cpid=$!
sleep 1.2
kill -KILL "$pid_3"
wait "$pid_3" 2>/dev/null
wait "$cpid" 2>/dev/null
pids=$(echo "$pids" | sed "s/ $pid_3//")
last9=$(tr -d '\r' <"$tmp/got9" | sed -n 's/^id: //p' | tail -n 1)
grep -q '"progress":' "$tmp/got9" && [ -n "$last9" ]
ok $? "a call on instance 2, its stream resumed on instance 3, which is then killed (-9) mid-stream: it had followed the call there (last id $last9)" \
    "$tmp/got9"
cat "$tmp/cut9" "$tmp/got9" >"$tmp/seen9"
resume "http://127.0.0.1:$port_2/mcp" "$s9" "${last9:-$last}" "$tmp/got9b"
[ "$code" = 200 ] && check_resumed "$tmp/seen9" "$tmp/got9b" 3000
ok $? "resumed again on instance 2 from the id instance 3 gave last: the rest and the answer, once each, in order (got $code)" \
    "$tmp/got9b"
post "http://127.0.0.1:$port_2/mcp" "$ping" "$s9"
[ "$code" = 200 ] && grep -q '"result":{}' "$tmp/resp"
ok $? "the session goes on: a ping answered (got $code)" "$tmp/resp"

for k in 2 4 5 6 7; do
	eval "p=\$pid_$k"
	stop "$p"
	[ "$status" = 0 ] || break
done
ok $([ "$status" = 0 ]; echo $?) "every instance exits 0 on SIGTERM (the last: $status)" "$tmp/srv$k.log"
grep -h 'ERROR\|AddressSanitizer\|runtime error' "$tmp"/srv*.log >"$tmp/errs"
ok $([ ! -s "$tmp/errs" ]; echo $?) "no errors in the servers' logs" "$tmp/errs"
tap_end
