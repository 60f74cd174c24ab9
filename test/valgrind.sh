#!/bin/sh
# valgrind.sh: build/mcp-demo and build/t_schema under valgrind (memcheck,
# definite and indirect leaks count as errors). Each server run is a
# conversation that walks one set of code paths; for each run the TAP
# assertions are: valgrind found no errors (exit status 0, not 99), no
# definite or indirect leaks in the summary, and the server wrote the
# answers the conversation asks for (so the paths really ran). Prints
# TAP only; valgrind's logs are shown on failure.
#
#   test/valgrind.sh [NAME ...]	run only the runs named (a b c d e f schema)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

# valgrind runs the plain build: it cannot run a sanitizer build's.
if [ -n "${MCP_SANITIZE-}" ]; then
	echo "1..0 # SKIP valgrind cannot run the sanitizer build; make check runs it"
	exit 0
fi
server=build/mcp-demo
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

want() {	# want NAME: is the run NAME selected on the command line?
	[ $# -eq 0 ] && return 0
	w=$1
	shift
	[ $# -eq 0 ] && return 0
	for a in "$@"; do
		[ "$a" = "$w" ] && return 0
	done
	return 1
}

command -v valgrind >/dev/null 2>&1 || bail "valgrind is installed"
if [ ! -x "$server" ] || [ ! -x build/t_schema ]; then
	bail "$server and build/t_schema are built"
fi

# test/valgrind.supp: the vector loads of PCRE2's JIT code, no one else's.
VG="valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99
    --track-fds=no --num-callers=30 --suppressions=test/valgrind.supp"

# check NAME RC: the valgrind assertions for a run whose log is
# $tmp/NAME.vg and whose exit status was RC.
check() {
	name=$1
	rc=$2
	log=$tmp/$name.vg
	[ "$rc" -eq 0 ]
	ok $? "$name: valgrind found no errors (exit status $rc)"
	bad=0
	if grep -Eq 'are (definitely|indirectly) lost|(definitely|indirectly) lost: [1-9]' "$log" ||
	    grep -q 'Invalid \|uninitialised\|Mismatched free\|invalid file' "$log"; then
		bad=1
	fi
	ok $bad "$name: no definite or indirect leaks, no invalid accesses in the log"
	if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
		sed 's/^/#   /' "$log" | head -80
	fi
}

# expect NAME COUNT PATTERN...: the server's output ($tmp/NAME.out) has
# COUNT lines and a line matching each extended regular expression.
expect() {
	name=$1
	count=$2
	shift 2
	out=$tmp/$name.out
	lines=$(wc -l <"$out" | tr -d ' ')
	miss=
	for p in "$@"; do
		grep -Eq -- "$p" "$out" || miss="$miss
$p"
	done
	[ "$lines" -eq "$count" ] && [ -z "$miss" ]
	ok $? "$name: the server wrote the $count answers expected"
	if [ "$lines" -ne "$count" ] || [ -n "$miss" ]; then
		echo "#   got $lines lines; missing:$miss" | sed '2,$s/^/#     /'
		sed 's/^/#   > /' "$out" | cut -c1-300 | head -60
	fi
}

init() {	# init VERSION ID
	printf '{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"valgrind","version":"1"}}}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n' "$2" "$1"
}
call() {	# call ID TOOL ARGUMENTS
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$1" "$2" "$3"
}
long=$(printf '%0300d' 0 | tr 0 q)	# an id too long to be kept whole

# a: 2025-11-25: every method, tool and error path on one session, an
# oversized line, a duplicate id, a cancelled sleep, EOF with a call in
# flight.
conv_a() {
	printf '%s\n' '{"jsonrpc":"2.0","id":"p0","method":"ping"}' \
	    '{"jsonrpc":"2.0","id":"early","method":"tools/list"}'
	init 2025-11-25 1
	cat <<'EOF'
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"c3"}}
{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"cursor":"bogus"}}
{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":5}}
EOF
	call 6 echo '{"text":"hello é😀"}'
	call 7 add '{"a":2,"b":3.5}'
	call 8 sleep '{"ms":10}'
	call 12 fail '{"message":"boom"}'
	call 13 nosuchtool '{}'
	call 14 echo '{"text":5}'
	call 15 add '{"a":1}'
	call 16 echo '{"text":"a","x":1}'
	call 17 sleep '{"ms":600001}'
	call 18 add '{"a":1e308,"b":1e308}'
	call 19 sleep '{"ms":2.0}'
	cat <<'EOF'
{"jsonrpc":"2.0","id":20,"method":"tools/call"}
{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"echo","arguments":[]}}
{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":5}}
{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"echo"}}
{"jsonrpc":"2.0","id":24,"method":"ping",
not json
{"jsonrpc":"1.0","id":25,"method":"ping"}
{"jsonrpc":"2.0","id":null,"method":"ping"}
{"jsonrpc":"2.0","id":1.5,"method":"ping"}
{"jsonrpc":"2.0","id":26,"method":5}
{"jsonrpc":"2.0","id":27,"method":"ping","params":"x"}
{"jsonrpc":"2.0","id":28,"method":"ping","params":[]}
{"jsonrpc":"2.0","id":29,"method":"no/such"}
{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}
{"jsonrpc":"2.0","id":"str","method":"ping"}
{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}
{"jsonrpc":"2.0","method":"notifications/unknown","params":{}}
{"jsonrpc":"2.0","method":5}
{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}
{"jsonrpc":"2.0","id":1,"result":{}}
[{"jsonrpc":"2.0","id":30,"method":"ping"}]
[]
5
{"jsonrpc":"2.0","id":31,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}
EOF
	printf '{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%02000d"}}}\n' 0
	printf '{"jsonrpc":"2.0","id":33,"method":"ping","params":{"bad":"\377"}}\n'
	cat <<'EOF'
{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\n\t\"\\\/\u00e9\ud83d\ude00\u001f\u2028 <>&'"}}}
{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"add","arguments":{"a":-0.5e-3,"b":1E2}}}
EOF
	# Nesting: 400 deep (a batch, refused in 2025-11-25), 600 deep and
	# 150 unclosed objects (refused by the parser).
	printf '%0400d' 0 | tr 0 '['
	printf '%0400d\n' 0 | tr 0 ']'
	printf '%0600d' 0 | tr 0 '['
	echo
	printf '%0150d\n' 0 | sed 's/0/{"a":/g'
	call 9 sleep '{"ms":1500}'
	call 9 echo '{"text":"dup"}'
	call 10 sleep '{"ms":60000}'
	call "\"$long\"" sleep '{"ms":60000}'
	sleep 2
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}' \
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"$long\"}}" \
	    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4242}}' \
	    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}'
	call 11 sleep '{"ms":500}'	# in flight at EOF
}
# Answers (48): p0 early 1 2-5 6-8 12-19 20-23, two parse
# errors, 25, id null, id 1.5, 26-29 (4), 900..993, "str", the overflow,
# the batch refusal, the empty batch, the non-object, 31, 32 (oversized,
# answered by its id),
# 33 (bad UTF-8), 34, 35, three nesting errors, 9 twice, 11. Not 10
# or the long id (cancelled).
count_a=48

# b: 2025-03-26 batches: mixed, invalid members, initialize inside,
# notifications only, empty, a batch whose call is cancelled, and EOF
# with a batch in flight.
conv_b() {
	init 2025-03-26 1
	cat <<'EOF'
[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":4,"method":"no/such"},{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}},1,{"jsonrpc":"2.0","id":null,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-03-26"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]
[{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/y"}]
[]
[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}},{"jsonrpc":"2.0","id":8,"method":"ping"}]
[{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}]
EOF
	sleep 2
	printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}' \
	    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}' \
	    '[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}},{"jsonrpc":"2.0","id":11,"method":"ping"}]'
}
# Answers: 1, the first batch (one line), the empty batch, [8], [10,11].
count_b=5

# c: SIGTERM during sleeps, one plain and one in a batch, with a short
# grace period: both get the shutdown error.
# d: the reader goes away (EPIPE) with a sleep in flight.


if want a "$@"; then
	conv_a | $VG --log-file="$tmp/a.vg" "$server" --max-message 1024 \
	    --page-size 2 >"$tmp/a.out" 2>"$tmp/a.err"
	rc=$?
	check a "$rc"
	expect a "$count_a" '"id":11,"result":\{"content":\[\{"type":"text","text":"slept 500 ms"' \
	    '"id":9,"error":\{"code":-32600' '"id":9,"result"' \
	    '^\{"jsonrpc":"2.0","id":32,"error":\{"code":-32600,"message":"message exceeds'
fi

if want b "$@"; then
	conv_b | $VG --log-file="$tmp/b.vg" "$server" >"$tmp/b.out" \
	    2>"$tmp/b.err"
	rc=$?
	check b "$rc"
	expect b "$count_b" '^\[\{"jsonrpc":"2.0","id":8,"result":\{\}\}\]$' \
	    '^\[.*"id":11,.*\]$' '^\[.*"id":10,.*"slept 300 ms".*\]$|^\[.*"slept 300 ms".*"id":11.*\]$'
fi

if want c "$@"; then
	mkfifo "$tmp/c.in"
	$VG --log-file="$tmp/c.vg" "$server" --grace-ms 300 <"$tmp/c.in" \
	    >"$tmp/c.out" 2>"$tmp/c.err" &
	pid=$!
	exec 3>"$tmp/c.in"
	init 2025-03-26 1 >&3
	call 2 sleep '{"ms":60000}' >&3
	printf '%s\n' '[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}},{"jsonrpc":"2.0","id":4,"method":"ping"}]' \
	    '{"jsonrpc":"2.0","id":5,"method":"ping"}' >&3
	# Once ping 5 is answered, the lines before it have been read and
	# the sleeps are in flight (valgrind can take seconds to start).
	i=0
	while ! grep -q '"id":5,' "$tmp/c.out" && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	exec 3>&-
	check c "$rc"
	expect c 4 '"id":5,"result":\{\}' \
	    '"id":2,"error":\{"code":-32603,"message":"server shutting down' \
	    '^\[.*"id":3,"error":\{"code":-32603,"message":"server shutting down.*\]$'
fi

if want d "$@"; then
	{
		init 2025-11-25 1
		call 2 sleep '{"ms":60000}'
		sleep 4
	} | {
		$VG --log-file="$tmp/d.vg" "$server" 2>"$tmp/d.err"
		echo $? >"$tmp/d.rc"
	} | true
	rc=$(cat "$tmp/d.rc")
	check d "$rc"
fi

# e: HTTP+SSE: a session that leaves with a call in flight, then one
# with a call in flight at SIGTERM (answered, streams ended, clean exit).
if want e "$@"; then
	$VG --log-file="$tmp/e.vg" "$server" --http 127.0.0.1:0 --keepalive 1 \
	    2>"$tmp/e.err" &
	pid=$!
	port=$(logged_port "$tmp/e.err" "$pid" 600)
	base=http://127.0.0.1:$port
	post() {	# post STREAMFILE BODY
		sid=$(sed -n 's/.*sessionId=\([0-9a-f]*\).*/\1/p' "$1" | head -1)
		curl -s -o /dev/null -H 'Content-Type: application/json' \
		    -d "$2" "$base/messages?sessionId=$sid"
	}
	waitfor() {	# waitfor FILE PATTERN
		i=0
		while ! grep -q "$2" "$1" && [ $i -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	}
	curl -sN "$base/sse" >"$tmp/e1.out" &
	c1=$!
	waitfor "$tmp/e1.out" sessionId
	post "$tmp/e1.out" "$(init 2025-06-18 1 | head -1)"
	post "$tmp/e1.out" "$(call 2 sleep '{"ms":3000}')"
	waitfor "$tmp/e1.out" '"id":1,'
	kill "$c1" 2>/dev/null
	wait "$c1" 2>/dev/null
	sleep 3
	curl -sN "$base/sse" >"$tmp/e.out" &
	c2=$!
	waitfor "$tmp/e.out" sessionId
	post "$tmp/e.out" "$(init 2025-06-18 1 | head -1)"
	post "$tmp/e.out" "$(call 2 echo '{"text":"over http"}')"
	post "$tmp/e.out" "$(call 3 sleep '{"ms":1500}')"
	waitfor "$tmp/e.out" '"id":2,'
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	wait "$c2" 2>/dev/null
	check e "$rc"
	grep '^data: {' "$tmp/e.out" | sed 's/^data: //' >"$tmp/e.tmp"
	mv "$tmp/e.tmp" "$tmp/e.out"
	expect e 3 '"id":1,"result"' '"text":"over http"' \
	    '"id":3,"result":\{"content":\[\{"type":"text","text":"slept 1500 ms"'
fi

# f: Streamable HTTP (/mcp) on build/conformance-server: a session's
# every kind of body (complete, live with notes, a stream closed mid-call
# and resumed with Last-Event-ID), the standalone stream, a sampling
# request left waiting when its client goes, the HTTP errors, DELETE,
# and SIGTERM with streams open.
if want f "$@"; then
	$VG --log-file="$tmp/f.vg" build/conformance-server \
	    --http 127.0.0.1:0 --keepalive 1 2>"$tmp/f.err" &
	pid=$!
	port=$(logged_port "$tmp/f.err" "$pid" 600)
	mcp=http://127.0.0.1:$port/mcp
	: >"$tmp/f.out"
	mpost() {	# mpost BODY [HEADER...]: appends status and body
		b=$1
		shift
		curl -s -m 20 -w '\nstatus %{http_code}\n' -H 'Content-Type: application/json' \
		    -H 'Accept: application/json, text/event-stream' \
		    -H "Mcp-Session-Id: $sid" "$@" -d "$b" "$mcp" |
		    grep -v '^$' >>"$tmp/f.out"
	}
	sid=
	curl -s -D "$tmp/f.hdr" -o /dev/null -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"vg","version":"1"}}}' "$mcp"
	sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([0-9a-f]*\).*/\1/p' "$tmp/f.hdr")
	mpost '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	curl -sN -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $sid" \
	    "$mcp" >"$tmp/f.get" &
	g=$!
	mpost '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}'
	mpost "$(call 2 test_simple_text '{}')"
	mpost '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":3}}}'
	mpost "$(call 4 test_reconnection '{}')" -H 'MCP-Protocol-Version: 2025-03-26'
	last=$(sed -n 's/^id: \([0-9]*-[0-9]*\)$/\1/p' "$tmp/f.out" | tail -1)
	curl -s -m 10 -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $sid" \
	    -H "Last-Event-ID: $last" "$mcp" >>"$tmp/f.out"
	mpost '{x' 
	mpost '{"jsonrpc":"2.0","id":5,"method":"ping"}' -H 'MCP-Protocol-Version: 1999-01-01'
	sid=nosuch mpost '{"jsonrpc":"2.0","id":6,"method":"ping"}'
	# A sampling request nobody answers: its client goes away.
	curl -s -m 1 -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H "Mcp-Session-Id: $sid" -d "$(call 7 test_sampling '{"prompt":"x"}')" \
	    "$mcp" >/dev/null
	curl -s -o /dev/null -w 'status %{http_code}\n' -X DELETE \
	    -H "Mcp-Session-Id: $sid" "$mcp" >>"$tmp/f.out"
	mpost '{"jsonrpc":"2.0","id":8,"method":"ping"}'
	# A second session, left open with its standalone stream for SIGTERM.
	curl -s -D "$tmp/f.hdr" -o /dev/null -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"vg","version":"1"}}}' "$mcp"
	sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([0-9a-f]*\).*/\1/p' "$tmp/f.hdr")
	curl -sN -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $sid" \
	    "$mcp" >/dev/null &
	g2=$!
	sleep 1.5
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	kill "$g" "$g2" 2>/dev/null
	wait "$g" "$g2" 2>/dev/null
	check f "$rc"
	grep -E '^(data: \{|status |\{)' "$tmp/f.out" | sed 's/^data: //' >"$tmp/f.tmp"
	mv "$tmp/f.tmp" "$tmp/f.out"
	expect f 21 '"id":1,"result":\{"tools"' '"id":2,"result"' \
	    '"progressToken":3,"progress":100' '"id":3,"result"' \
	    '"id":4,"result".*Reconnection test completed' '"code":-32700' \
	    'status 404' 'status 200'
fi

if want schema "$@"; then
	$VG --log-file="$tmp/t_schema.vg" build/t_schema >"$tmp/schema.out" 2>&1
	rc=$?
	check t_schema "$rc"
fi

tap_end
