#!/bin/sh
# loop.sh: loop tools (mcp_tool_set_flags(3), MCP_TOOL_LOOP), against
# build/loop-server (test/loop-server.c), on stdio and on Streamable
# HTTP with curl: a loop tool runs on the loop thread (and on a worker
# once its flag is cleared); its arguments are validated and its
# structured result checked against its output schema; answers go
# out while the loop is still busy with the rest of a read, and the
# rest is dropped once a write finds the client gone; sampling,
# elicitation and roots give MCP_ESTATE at once; its progress and log
# notes come before its answer; a deferred loop call finished from
# another thread is answered, with that thread's progress; a cancelled
# one and one past its time limit are dropped and answered as a pool
# call's are; in a JSON-RPC batch (2025-03-26) every answer comes in one
# array; a SIGTERM with a deferred loop call outstanding answers it
# within the grace period and exits 0. Prints TAP.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

S=${LOOP_SERVER:-$MCP_BUILD/loop-server}
need_built "$S"
command -v jq >/dev/null 2>&1 || { echo "1..0 # SKIP jq not found"; exit 0; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-loop.XXXXXX") || exit 1
pid=
trap 'stop "$pid"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{},"roots":{}},"clientInfo":{"name":"loop.sh","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'

# call ID TOOL ARGS [META]: a tools/call line.
call() {
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s%s}}\n' \
	    "$1" "$2" "$3" "${4:+,\"_meta\":$4}"
}

# answer FILE ID: the answer to ID in FILE (JSON lines), compact.
answer() {
	jq -c "select(.id == $2)" "$1"
}

# text FILE ID: its first text block.
text() {
	jq -r "select(.id == $2 and .result != null) | .result.content[0].text" "$1"
}

# line_of FILE JQ-FILTER: the number of the first line matching it.
line_of() {
	jq -c "$2" "$1" | grep -n true | head -n 1 | cut -d: -f1
}

# ---- stdio ---------------------------------------------------------------

{
	echo "$INIT"
	echo "$INITED"
	call 1 where '{}'
	call 2 echo '{"text":"hi"}'
	call 3 echo '{"text":5}'
	call 4 shape '{"ok":true}'
	call 5 shape '{"ok":false}'
	call 6 ask '{}'
	call 7 notes '{}' '{"progressToken":"p7"}'
	call 8 handoff '{"text":"later"}' '{"progressToken":8}'
	call 9 hold '{}'
	echo '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}'
	call 10 hold-300 '{}'
	call 11 echo '{"text":"after"}'
	call 12 echo '{}'
	# The same id again while 8 is deferred: refused, 8 unharmed.
	call 8 echo '{"text":"dup"}'
	sleep 1
} | timeout 20 "$S" >"$tmp/out" 2>"$tmp/err"
ok $? "stdio: the server exits 0 at the end of input" "$tmp/err"

test "$(text "$tmp/out" 1)" = loop
ok $? "stdio: a loop tool runs on the loop thread" "$tmp/out"
test "$(text "$tmp/out" 2)" = hi
ok $? "stdio: a loop tool answers" "$tmp/out"
answer "$tmp/out" 3 | grep -q '"isError":true' &&
    text "$tmp/out" 3 | grep -q 'invalid arguments: arguments.text'
ok $? "stdio: its arguments are validated against its input schema" "$tmp/out"
text "$tmp/out" 12 | grep -q 'invalid arguments: .*text'
ok $? "stdio: a required argument missing is an isError result" "$tmp/out"
answer "$tmp/out" 4 | grep -qF '"structuredContent":{"n":1}'
ok $? "stdio: valid structured content is sent" "$tmp/out"
answer "$tmp/out" 5 | grep -q '"isError":true' &&
    text "$tmp/out" 5 | grep -q 'invalid structured content' &&
    ! answer "$tmp/out" 5 | grep -q "\"structuredContent\":"
ok $? "stdio: structured content is validated against the output schema" "$tmp/out"
test "$(text "$tmp/out" 6)" = "sample=$(printf 'not allowed in this state') elicit=not allowed in this state roots=not allowed in this state"
ok $? "stdio: sample, elicit and roots return MCP_ESTATE at once" "$tmp/out"
! grep -q '"method":"sampling\|"method":"elicitation\|"method":"roots' "$tmp/out"
ok $? "stdio: ... and send nothing to the client" "$tmp/out"
p1=$(line_of "$tmp/out" '.method == "notifications/progress" and .params.progressToken == "p7" and .params.progress == 1')
p2=$(line_of "$tmp/out" '.method == "notifications/progress" and .params.progressToken == "p7" and .params.progress == 2')
lg=$(line_of "$tmp/out" '.method == "notifications/message" and .params.data == "a note from the loop"')
a7=$(line_of "$tmp/out" '.id == 7')
[ -n "$p1" ] && [ -n "$p2" ] && [ -n "$lg" ] && [ -n "$a7" ] &&
    [ "$p1" -lt "$p2" ] && [ "$p2" -lt "$lg" ] && [ "$lg" -lt "$a7" ]
ok $? "stdio: its progress and log notes come in order, before its answer" "$tmp/out"
test "$(text "$tmp/out" 8)" = later
ok $? "stdio: a deferred loop call, finished by another thread, is answered" "$tmp/out"
pt=$(line_of "$tmp/out" '.method == "notifications/progress" and .params.progressToken == 8')
a8=$(line_of "$tmp/out" '.id == 8 and .result != null')
[ -n "$pt" ] && [ -n "$a8" ] && [ "$pt" -lt "$a8" ]
ok $? "stdio: ... with that thread's progress before the answer" "$tmp/out"
a11=$(line_of "$tmp/out" '.id == 11')
[ -n "$a11" ] && [ -n "$a8" ] && [ "$a11" -lt "$a8" ]
ok $? "stdio: the loop goes on with the next calls while it is deferred" "$tmp/out"
answer "$tmp/out" 8 | grep -q 'already in flight'
ok $? "stdio: its id stays in flight until it is answered" "$tmp/out"
test -z "$(answer "$tmp/out" 9)"
ok $? "stdio: a cancelled deferred loop call is not answered" "$tmp/out"
text "$tmp/out" 10 | grep -q 'timed out after 300 ms'
ok $? "stdio: a deferred loop call past its time limit gets the timeout's isError" "$tmp/out"
test "$(answer "$tmp/out" 10 | wc -l)" -eq 1
ok $? "stdio: ... and nothing more" "$tmp/out"
! grep -q 'too late' "$tmp/out"
ok $? "stdio: the late answers of cancelled calls are dropped" "$tmp/out"

# Answers go out while the loop is still busy with the rest of what
# it read: twenty echoes and a call that holds the loop 600 ms, in one
# write (under PIPE_BUF, so one read), each answer stamped as it comes.
{
	echo "$INIT"
	echo "$INITED"
	i=31
	while [ "$i" -le 50 ]; do call "$i" echo '{"text":"early"}'; i=$((i + 1)); done
	call 51 busy '{"ms":600}'
} >"$tmp/pin"
[ "$(wc -c <"$tmp/pin")" -lt 4096 ] || bail "loop.sh: the input must fit one pipe write"
{ cat "$tmp/pin"; sleep 1.2; } | timeout 20 "$S" 2>"$tmp/pierr" |
    while IFS= read -r l; do printf '%s %s\n' "$(date +%s%3N)" "$l"; done >"$tmp/pout"
t31=$(grep '"id":31,' "$tmp/pout" | cut -d' ' -f1)
t51=$(grep '"id":51,' "$tmp/pout" | cut -d' ' -f1)
[ -n "$t31" ] && [ -n "$t51" ] && [ $((t51 - t31)) -ge 400 ]
ok $? "stdio: the first answers of a read go out before the loop is done with the rest ($(( ${t51:-0} - ${t31:-0} )) ms before)" "$tmp/pout"
[ "$(grep -c '"text":"early"' "$tmp/pout")" -eq 20 ] && grep -q '"id":51,.*"done"' "$tmp/pout"
ok $? "stdio: ... and every answer comes" "$tmp/pout"

# A client that leaves while a read's lines are being handled: once a
# write fails, the rest of them are dropped, not run (the four 300 ms
# calls after the one during which the reader left would take 1.2 s).
{
	echo "$INIT"
	echo "$INITED"
	i=61
	while [ "$i" -le 70 ]; do call "$i" echo '{"text":"gone"}'; i=$((i + 1)); done
	# Each busy call's answer big enough to be written at once, even
	# while the loop has lines of the read left (1024 bytes, stdio).
	i=81
	while [ "$i" -le 85 ]; do
		call "$i" busy '{"ms":300,"pad":1100}'
		i=$((i + 1))
	done
} >"$tmp/gin"
[ "$(wc -c <"$tmp/gin")" -lt 4096 ] || bail "loop.sh: the input must fit one pipe write"
{ cat "$tmp/gin"; sleep 3; } | {
	t0=$(date +%s%3N)
	timeout 20 "$S" 2>"$tmp/gerr"
	echo $(($(date +%s%3N) - t0)) >"$tmp/gms"
} | head -c 300 >/dev/null
ms=$(cat "$tmp/gms")
grep -q 'output closed' "$tmp/gerr" && [ "$ms" -lt 900 ]
ok $? "stdio: a client gone mid-read: the rest of the read is dropped, not run ($ms ms)" "$tmp/gerr"

# Cleared again (--pool-tools), the same tools run on a worker.
{ echo "$INIT"; echo "$INITED"; call 1 where '{}'; } |
    timeout 20 "$S" --pool-tools >"$tmp/pout" 2>"$tmp/perr"
test "$(text "$tmp/pout" 1)" = worker
ok $? "stdio: with the flag cleared, the tool runs on a worker" "$tmp/pout"

# A batch (2025-03-26): loop calls and a deferred one, one array.
{
	echo "$INIT" | sed 's/2025-11-25/2025-03-26/'
	echo "$INITED"
	printf '[%s,%s,%s,{"jsonrpc":"2.0","id":24,"method":"ping"}]\n' \
	    "$(call 21 echo '{"text":"b1"}')" "$(call 22 handoff '{"text":"b2"}')" \
	    "$(call 23 echo '{"text":7}')"
	sleep 0.5
} | timeout 20 "$S" >"$tmp/bout" 2>"$tmp/berr"
jq -c 'select(type == "array") | map(.id) | sort' "$tmp/bout" >"$tmp/bids"
test "$(cat "$tmp/bids")" = "[21,22,23,24]" &&
    jq -r 'select(type == "array") | .[] | select(.id == 22) | .result.content[0].text' "$tmp/bout" | grep -qx b2 &&
    jq -r 'select(type == "array") | .[] | select(.id == 23) | .result.isError' "$tmp/bout" | grep -qx true
ok $? "stdio: a batch of loop calls, one deferred, is answered in one array" "$tmp/bout"

# SIGTERM with a deferred loop call held: answered within the grace
# period, exit 0.
mkfifo "$tmp/in"
"$S" --grace-ms 300 <"$tmp/in" >"$tmp/tout" 2>"$tmp/terr" &
pid=$!
exec 3>"$tmp/in"
echo "$INIT" >&3
echo "$INITED" >&3
call 31 hold '{}' >&3
i=0
while [ $i -lt 50 ] && ! grep -q '"id":0' "$tmp/tout"; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.2
kill -TERM "$pid"
i=0
while [ $i -lt 50 ] && kill -0 "$pid" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
exec 3>&-
stop "$pid"
pid=
test "$status" = 0
ok $? "stdio: SIGTERM with a deferred loop call held: exit 0 (got $status)" "$tmp/terr"
text "$tmp/tout" 31 >/dev/null && answer "$tmp/tout" 31 | grep -q 'grace period'
ok $? "stdio: ... its caller answered when the grace period ends" "$tmp/tout"

# ---- Streamable HTTP --------------------------------------------------------

"$S" --http 127.0.0.1:0 -v >"$tmp/hout" 2>"$tmp/herr" &
pid=$!
port=$(logged_port "$tmp/herr" "$pid") || bail "loop-server --http starts"
URL=http://127.0.0.1:$port/mcp

# post BODY: POSTs it with the session's headers; the body to $tmp/body,
# the headers to $tmp/head.
post() {
	curl -s -D "$tmp/head" -o "$tmp/body" -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    ${sid:+-H "Mcp-Session-Id: $sid"} \
	    ${sid:+-H "MCP-Protocol-Version: 2025-11-25"} \
	    --max-time 10 -d "$1" "$URL"
}

# data: the JSON messages of $tmp/body, SSE or not, one a line.
data() {
	if grep -q '^data: ' "$tmp/body"; then
		sed -n 's/^data: //p' "$tmp/body" | grep -v '^$'
	else
		cat "$tmp/body"
	fi
}

sid=
post "$INIT"
sid=$(tr -d '\r' <"$tmp/head" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$sid" ]
ok $? "http: initialize gives a session" "$tmp/head"
post "$INITED"
post "$(call 1 where '{}')"
data >"$tmp/h1"
test "$(text "$tmp/h1" 1)" = loop
ok $? "http: a loop tool runs on the loop thread" "$tmp/h1"
post "$(call 2 echo '{"text":"over http"}')"
data >"$tmp/h2"
test "$(text "$tmp/h2" 2)" = "over http"
ok $? "http: a loop tool answers on its POST" "$tmp/h2"
post "$(call 3 shape '{"ok":false}')"
data >"$tmp/h3"
text "$tmp/h3" 3 | grep -q 'invalid structured content'
ok $? "http: its structured content is validated" "$tmp/h3"
post "$(call 4 notes '{}' '{"progressToken":"h4"}')"
data >"$tmp/h4"
p1=$(line_of "$tmp/h4" '.method == "notifications/progress"')
a4=$(line_of "$tmp/h4" '.id == 4')
[ -n "$p1" ] && [ -n "$a4" ] && [ "$p1" -lt "$a4" ]
ok $? "http: its progress goes on its POST's stream, before the answer" "$tmp/h4"
post "$(call 5 handoff '{"text":"from a thread"}')"
data >"$tmp/h5"
test "$(text "$tmp/h5" 5)" = "from a thread"
ok $? "http: a deferred loop call is answered on its POST" "$tmp/h5"
post "$(call 6 hold-300 '{}')"
data >"$tmp/h6"
text "$tmp/h6" 6 | grep -q 'timed out after 300 ms'
ok $? "http: a deferred loop call past its time limit gets the timeout's isError" "$tmp/h6"
post "$(call 7 ask '{}')"
data >"$tmp/h7"
text "$tmp/h7" 7 | grep -q '^sample=not allowed in this state elicit=not allowed in this state roots=not allowed in this state$'
ok $? "http: sample, elicit and roots return MCP_ESTATE at once" "$tmp/h7"
stop "$pid"
pid=
test "$status" = 0
ok $? "http: SIGTERM: exit 0 (got $status)" "$tmp/herr"

tap_end
