#!/bin/sh
# client.sh: tools/mcp-call, the debug client, as people use it, against
# real servers over real pipes and sockets:
#  - our own: mcp-demo and examples/conformance-server, on stdio,
#    Streamable HTTP and legacy SSE, directly, through nginx (docs/
#    nginx.conf) and through nginx with TLS (a certificate made here);
#  - the official TypeScript SDK's McpServer (test/node/peer-server.mjs)
#    on stdio, Streamable HTTP (SSE bodies, JSON bodies, stateless) and
#    legacy SSE;
#  - a third-party server, @modelcontextprotocol/server-everything, on
#    stdio and its two HTTP transports;
#  - bad servers (test/node/quirk-server.mjs), each with a clear error and
#    no hang, and valgrind (AddressSanitizer in the sanitizer build)
#    finding no leak or error in mcp-call.
# The exit codes (0, 1 isError, 2 usage, 3 protocol or transport) and the
# output (text on stdout, progress and logs on stderr, -v traces) are
# checked throughout. Servers are stopped by PID, also on failure.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_sdk @modelcontextprotocol/server-everything
CALL=$MCP_BUILD/mcp-call
need_built "$CALL" "$MCP_DEMO" "$CONFORMANCE_SERVER"
command -v nginx >/dev/null 2>&1 || bail "nginx is installed"
command -v openssl >/dev/null 2>&1 || bail "openssl is installed"

tmp=$(mktemp -d) || exit 1
pids=
cleanup() {
	for _p in $pids; do
		kill -TERM "$_p" 2>/dev/null
	done
	for _p in $pids; do
		wait "$_p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# run NAME WANT_RC WANT_OUT CMD...: mcp-call's exit code is WANT_RC and its
# stdout holds WANT_OUT (a fixed string; "" for anything); stdout and
# stderr stay in $tmp/out and $tmp/err. At most 60 s: no hang.
run() {
	_name=$1
	_rc=$2
	_want=$3
	shift 3
	timeout -k 5 60 "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$_rc" ] && { [ -z "$_want" ] ||
	    grep -qF -- "$_want" "$tmp/out"; }; then
		ok 0 "$_name"
	else
		{
			echo "exit $got (want $_rc); want \"$_want\" on stdout"
			echo "-- stdout"; head -20 "$tmp/out"
			echo "-- stderr"; tail -20 "$tmp/err"
		} >"$tmp/why"
		ok 1 "$_name" "$tmp/why"
	fi
}

# err_has NAME TEXT: the last run's stderr holds TEXT.
err_has() {
	grep -qF -- "$2" "$tmp/err"
	ok $? "$1" "$tmp/err"
}

# memcheck NAME CMD...: CMD (an mcp-call run) found clean of memory errors
# and leaks: by valgrind on the plain build; in the sanitizer build
# (valgrind cannot run it) by AddressSanitizer itself, whose reports
# test/run.sh counts as failures.
memcheck() {
	_name=$1
	shift
	if [ -n "${MCP_SANITIZE-}" ]; then
		timeout -k 5 120 "$@" >"$tmp/vg.out" 2>"$tmp/vg.err"
		[ $? -lt 124 ] && ! grep -q 'ERROR: \(Address\|Leak\)Sanitizer' "$tmp/vg.err"
	else
		timeout -k 5 120 valgrind -q --leak-check=full \
		    --errors-for-leak-kinds=definite --error-exitcode=99 "$@" \
		    >"$tmp/vg.out" 2>"$tmp/vg.err"
		[ $? -ne 99 ] && ! grep -q '==[0-9]*==' "$tmp/vg.err"
	fi
	ok $? "$_name" "$tmp/vg.err"
}

free_port() {
	node -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# serve LOG CMD...: starts a server in the background, its stderr to LOG.
serve() {
	_log=$1
	shift
	# Emptied here, not by the background job's redirection, which may
	# come after peer_port has read the port of the server before.
	: >"$_log.out"
	: >"$_log"
	"$@" </dev/null >"$_log.out" 2>"$_log" &
	spid=$!
	pids="$pids $spid"
}

# peer_port LOG: the "PORT n" a node peer printed on stdout.
peer_port() {
	_i=0
	while [ $_i -lt 100 ]; do
		_p=$(sed -n 's/^PORT \([0-9]*\)$/\1/p' "$1.out" 2>/dev/null)
		[ -n "$_p" ] && { echo "$_p"; return 0; }
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# ---- usage ---------------------------------------------------------------

run "usage: no command" 2 "" "$CALL" -- "$MCP_DEMO"
err_has "usage: says what is wrong" "no command"
run "usage: an unknown command" 2 "" "$CALL" frobnicate -- "$MCP_DEMO"
run "usage: an unknown option" 2 "" "$CALL" --frob list -- "$MCP_DEMO"
run "usage: no server" 2 "" "$CALL" list
run "usage: call without a tool" 2 "" "$CALL" call -- "$MCP_DEMO"
run "usage: a bad KEY=VALUE" 2 "" "$CALL" call echo novalue -- "$MCP_DEMO"
run "usage: --args that is not an object" 2 "" "$CALL" --args '[1]' call echo -- "$MCP_DEMO"
run "usage: an unknown transport" 2 "" "$CALL" --transport carrier-pigeon --url http://127.0.0.1:1/mcp list
run "usage: --transport stdio with --url" 2 "" "$CALL" --transport stdio --url http://127.0.0.1:1/mcp list
run "--help: exit 0, on stdout" 0 "mcp-call [OPTIONS] COMMAND" "$CALL" --help

# ---- stdio, mcp-demo -----------------------------------------------------

run "stdio: list" 0 "tool      echo" "$CALL" list -- "$MCP_DEMO"
for want in "tool      add" "resource  demo://readme" "template  demo://greeting/{name}" "prompt    review"; do
	grep -qF "$want" "$tmp/out"
	ok $? "stdio: list shows \"$want\"" "$tmp/out"
done
[ ! -s "$tmp/err" ]
ok $? "stdio: list writes nothing on stderr" "$tmp/err"
run "stdio: tools, one a line, with descriptions" 0 "echo	Returns the text it is given." "$CALL" tools -- "$MCP_DEMO"
run "stdio: call echo text=hi" 0 "hi" "$CALL" call echo text=hi -- "$MCP_DEMO"
run "stdio: a VALUE that is not JSON is a string" 0 "{1" "$CALL" call echo 'text={1' -- "$MCP_DEMO"
run "stdio: --args" 0 "from args" "$CALL" --args '{"text":"from args"}' call echo -- "$MCP_DEMO"
run "stdio: call add --json gives structuredContent" 0 '"structuredContent"' "$CALL" --json call add a=2 b=3 -- "$MCP_DEMO"
grep -q '"sum": 5' "$tmp/out"
ok $? "stdio: the sum is 5" "$tmp/out"
run "stdio: a tool's isError exits 1" 1 "boom" "$CALL" call fail message=boom -- "$MCP_DEMO"
err_has "stdio: isError is said on stderr" "answered isError"
run "stdio: an unknown tool: the server's -32602, exit 3" 3 "" "$CALL" call nonesuch -- "$MCP_DEMO"
err_has "stdio: an unknown tool: says so" "unknown tool: nonesuch"
run "stdio: read" 0 "echo" "$CALL" read demo://readme -- "$MCP_DEMO"
run "stdio: read a template's resource" 0 "Ada" "$CALL" read demo://greeting/Ada -- "$MCP_DEMO"
run "stdio: an unknown resource: the server's error, exit 3" 3 "" "$CALL" --protocol 2025-11-25 read demo://nonesuch -- "$MCP_DEMO"
err_has "stdio: the server's error is shown with its code" "error -32002"
run "stdio: prompt" 0 "user: " "$CALL" prompt review language=c -- "$MCP_DEMO"
run "stdio: complete" 0 "" "$CALL" complete prompt:review language=p -- "$MCP_DEMO"
[ -s "$tmp/out" ]
ok $? "stdio: complete prints values" "$tmp/err"
run "stdio: ping" 0 "pong in" "$CALL" ping -- "$MCP_DEMO"
run "stdio: info" 0 '"name": "mcp-demo"' "$CALL" info -- "$MCP_DEMO"
run "stdio: --protocol 2024-11-05" 0 '"protocolVersion": "2024-11-05"' "$CALL" --protocol 2024-11-05 info -- "$MCP_DEMO"
run "stdio: -v traces both ways" 0 "hi" "$CALL" --protocol 2025-11-25 -v call echo text=hi -- "$MCP_DEMO"
grep -Eq '^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} -> \{"jsonrpc":"2.0","id":[0-9]+,"method":"tools/call"' "$tmp/err" &&
    grep -Eq '^[0-9:.]+ <- \{"jsonrpc":"2.0","id":[0-9]+,"result":\{"content"' "$tmp/err"
ok $? "stdio: -v shows every message with a timestamp and a direction" "$tmp/err"
run "stdio: progress as lines when stderr is no terminal" 0 "slept 450 ms" "$CALL" call sleep ms=450 -- "$MCP_DEMO"
grep -q '^progress 100/450$' "$tmp/err" && grep -q '^progress 400/450$' "$tmp/err"
ok $? "stdio: progress lines on stderr" "$tmp/err"
# On a terminal, progress is a bar that redraws itself (script(1) gives
# mcp-call a pseudo-terminal).
if command -v script >/dev/null 2>&1; then
	script -qec "$CALL call sleep ms=450 -- $MCP_DEMO" /dev/null >"$tmp/tty" 2>&1
	grep -q '\[######.*\] *[0-9]*%' "$tmp/tty" && grep -q 'slept 450 ms' "$tmp/tty"
	ok $? "stdio: progress is a bar on a terminal" "$tmp/tty"
fi
run "stdio: progress extends --timeout 0.3 over a 1 s call" 0 "slept 1000 ms" "$CALL" --timeout 0.3 call sleep ms=1000 -- "$MCP_DEMO"
start=$(date +%s)
run "stdio: --max-time 1 ends a 5 s call that sends progress" 3 "" "$CALL" --timeout 0.3 --max-time 1 call sleep ms=5000 -- "$MCP_DEMO"
[ $(( $(date +%s) - start )) -le 3 ]
ok $? "stdio: --max-time: within a second or two"
err_has "stdio: the timeout says so" "no answer in 1 s"
run "stdio: a server that cannot start" 3 "" "$CALL" list -- /nonexistent/server
err_has "stdio: and why" "/nonexistent/server"

# ---- stdio, the conformance server and the TypeScript SDK's server ---------

run "stdio: examples/conformance-server list" 0 "tool      test_simple_text" "$CALL" list -- "$CONFORMANCE_SERVER"
run "stdio: ts-sdk McpServer list" 0 "tool      slow" "$CALL" list -- node test/node/peer-server.mjs stdio
run "stdio: ts-sdk McpServer call" 0 "5" "$CALL" call add a=2 b=3 -- node test/node/peer-server.mjs stdio
run "stdio: ts-sdk log notifications go to stderr" 0 "logged" "$CALL" --log-level debug call log text=hello -- node test/node/peer-server.mjs stdio
err_has "stdio: as a log line" "log info"
run "stdio: ts-sdk paginated tools/list is followed to the end" 0 "t25" "$CALL" tools -- node test/node/peer-server.mjs stdio --page 10
[ "$(wc -l <"$tmp/out")" -eq 34 ]
ok $? "stdio: all 34 tools over 4 pages" "$tmp/out"
EVERYTHING=test/node/node_modules/.bin/mcp-server-everything
run "stdio: server-everything list" 0 "tool      echo" "$CALL" list -- "$EVERYTHING" stdio
run "stdio: server-everything call echo" 0 "Echo: hi" "$CALL" call echo message=hi -- "$EVERYTHING" stdio

# ---- stdio, bad servers ----------------------------------------------------

Q="node test/node/quirk-server.mjs stdio"
run "quirk junk: lines that are not JSON are skipped" 0 "ok" "$CALL" call q -- $Q junk
err_has "quirk junk: and logged" "not JSON"
run "quirk split: a reply split mid-JSON" 0 "ok" "$CALL" call q -- $Q split
run "quirk crlf: CR LF lines" 0 "ok" "$CALL" call q -- $Q crlf
run "quirk huge: an 8 MiB line over max-message: a clear error" 3 "" "$CALL" call q -- $Q huge
err_has "quirk huge: that names the limit" "4194304-byte limit"
run "quirk huge: taken with --max-message 16M" 0 "xxxxxxxx" "$CALL" --max-message 16M call q -- $Q huge
run "quirk wrongid: answers to ids never sent are dropped" 0 "ok" "$CALL" call q -- $Q wrongid
err_has "quirk wrongid: and logged" "not waiting for one"
run "quirk silent: a server that never answers: exit 3 in time" 3 "" "$CALL" --timeout 1 call q -- $Q silent
run "quirk die: a server that dies mid-call" 3 "" "$CALL" call q -- $Q die
err_has "quirk die: with its exit status" "exited with status 3"
run "quirk bom: output that starts with a byte order mark" 0 "ok" "$CALL" call q -- $Q bom
run "quirk bigask: a server request over max-message" 0 '"error":{"code":-32600' "$CALL" call q -- $Q bigask
grep -q '"id":"big1"' "$tmp/out"
ok $? "quirk bigask: is answered by its own id, with an error" "$tmp/out"
run "quirk request: ping answered, an unknown request -32601" 0 '"ping":{"jsonrpc":"2.0","id":"srv2","result":{}}' "$CALL" call q -- $Q request
grep -q '"unknown":{"jsonrpc":"2.0","id":"srv1","error":{"code":-32601' "$tmp/out"
ok $? "quirk request: nobody handles x/unknown: -32601" "$tmp/out"

# mcp-call itself checked for memory errors and leaks on the faults.
for q in junk huge wrongid die request silent; do
	memcheck "memcheck: mcp-call against quirk $q" "$CALL" --timeout 2 call q -- $Q $q
done

# ---- HTTP, mcp-demo: directly ----------------------------------------------

serve "$tmp/demo.log" "$MCP_DEMO" --http 127.0.0.1:0 --allow-host mcp.example.com
dpid=$spid
dport=$(logged_port "$tmp/demo.log" "$dpid") || bail "mcp-demo --http starts"
D=http://127.0.0.1:$dport
run "http: list" 0 "tool      echo" "$CALL" --url $D/mcp list
run "http: call" 0 "hi" "$CALL" --url $D/mcp call echo text=hi
run "http: info says Streamable HTTP" 0 '"transport": "http"' "$CALL" --url $D/mcp info
run "http: progress over an SSE body" 0 "slept 350 ms" "$CALL" --url $D/mcp call sleep ms=350
grep -q '^progress 300/350$' "$tmp/err"
ok $? "http: progress lines" "$tmp/err"
run "sse: --transport sse" 0 '"transport": "sse"' "$CALL" --transport sse --url $D/sse info
run "sse: call" 0 "hi" "$CALL" --transport sse --url $D/sse call echo text=hi
run "sse: fallback from POST to GET /sse on its own" 0 '"transport": "sse"' "$CALL" --url $D/sse info
run "http: a refused connection: exit 3 at once" 3 "" "$CALL" --url http://127.0.0.1:1/mcp list
err_has "http: and why" "onnect"
for t in http sse; do
	u=$D/mcp
	[ $t = sse ] && u=$D/sse
	memcheck "memcheck: mcp-call on $t" "$CALL" --transport $t --url $u call sleep ms=250
done

# Bearer auth, with the header's value from the environment.
echo "s3cret-token-for-the-test" >"$tmp/token"
serve "$tmp/auth.log" "$MCP_DEMO" --http 127.0.0.1:0 --auth-token-file "$tmp/token"
apid=$spid
aport=$(logged_port "$tmp/auth.log" "$apid") || bail "mcp-demo --auth-token-file starts"
TOKEN=s3cret-token-for-the-test run "auth: --header 'Authorization: Bearer \$TOKEN'" 0 "hi" \
    "$CALL" --header 'Authorization: Bearer $TOKEN' --url http://127.0.0.1:$aport/mcp call echo text=hi
run "auth: a wrong token: exit 3" 3 "" "$CALL" --header 'Authorization: Bearer nope' --url http://127.0.0.1:$aport/mcp list
err_has "auth: says 401, with WWW-Authenticate" "HTTP 401 (unauthorized); WWW-Authenticate: Bearer"

# ---- HTTP through nginx, plain and TLS ---------------------------------------

nport=$(free_port)
tport=$(free_port)
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/key.pem" \
    -out "$tmp/cert.pem" >"$tmp/openssl.log" 2>&1
ok $? "tls: a certificate for 127.0.0.1" "$tmp/openssl.log"
# start_nginx DIR UPSTREAM_PORT: nginx on docs/nginx.conf itself, with
# listen on $nport (plain) and $tport (TLS, the certificate above) and
# the upstream on UPSTREAM_PORT; every file it writes in DIR.
start_nginx() {
	mkdir -p "$1"
	sed -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$nport;\n\1listen 127.0.0.1:$tport ssl;\n\1ssl_certificate $tmp/cert.pem;\n\1ssl_certificate_key $tmp/key.pem;|" \
	    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$2;|" \
	    docs/nginx.conf >"$1/libmcp.conf"
	nginx_main "$1" "$1/libmcp.conf"
	nginx -p "$1/" -c "$1/nginx.conf" -e "$1/error.log" >"$1/nginx.out" 2>&1 &
	npid=$!
	pids="$pids $npid"
	_i=0
	while [ $_i -lt 50 ] && ! curl -s -o /dev/null http://127.0.0.1:$nport/; do
		sleep 0.1
		_i=$((_i + 1))
	done
}
start_nginx "$tmp/nginx1" "$dport"
N=http://127.0.0.1:$nport
S=https://127.0.0.1:$tport
run "nginx: http list" 0 "tool      echo" "$CALL" --url $N/mcp list
run "nginx: http call with progress" 0 "slept 250 ms" "$CALL" --url $N/mcp call sleep ms=250
grep -q '^progress 200/250$' "$tmp/err"
ok $? "nginx: progress comes through unbuffered" "$tmp/err"
run "nginx: sse call" 0 "hi" "$CALL" --transport sse --url $N/sse call echo text=hi
run "nginx: https with --cacert" 0 "hi" "$CALL" --cacert "$tmp/cert.pem" --url $S/mcp call echo text=hi
run "nginx: https sse with --cacert" 0 "hi" "$CALL" --cacert "$tmp/cert.pem" --transport sse --url $S/sse call echo text=hi
run "nginx: https, an unknown certificate: exit 3" 3 "" "$CALL" --url $S/mcp list
err_has "nginx: https, says it is the certificate" "certificate"
run "nginx: https --insecure" 0 "tool      echo" "$CALL" --insecure --url $S/mcp list

# ---- HTTP, the conformance server --------------------------------------------

serve "$tmp/conf.log" "$CONFORMANCE_SERVER" --http 127.0.0.1:0
cport=$(logged_port "$tmp/conf.log" "$spid") || bail "conformance-server --http starts"
run "conformance-server: http list" 0 "tool      test_simple_text" "$CALL" --url http://127.0.0.1:$cport/mcp list
run "conformance-server: sse list" 0 "tool      test_simple_text" "$CALL" --transport sse --url http://127.0.0.1:$cport/sse list
kill -TERM "$npid" 2>/dev/null
wait "$npid" 2>/dev/null
start_nginx "$tmp/nginx2" "$cport"
run "conformance-server through nginx: http call" 0 "This is a simple text response for testing." "$CALL" --url $N/mcp call test_simple_text
run "conformance-server through nginx: sse call" 0 "This is a simple text response for testing." "$CALL" --transport sse --url $N/sse call test_simple_text
run "conformance-server through nginx: https" 0 "tool      test_simple_text" "$CALL" --cacert "$tmp/cert.pem" --url $S/mcp list

# ---- HTTP, the TypeScript SDK's servers ----------------------------------------

for mode in "http" "http --json" "http --stateless" "sse"; do
	serve "$tmp/peer.log" node test/node/peer-server.mjs $mode
	pport=$(peer_port "$tmp/peer.log") || { ok 1 "ts-sdk $mode starts" "$tmp/peer.log"; continue; }
	path=/mcp
	[ "$mode" = sse ] && path=/sse
	run "ts-sdk $mode: list" 0 "prompt    greet" "$CALL" --url http://127.0.0.1:$pport$path list
	run "ts-sdk $mode: call with progress" 0 "done" "$CALL" --url http://127.0.0.1:$pport$path call slow ms=200 steps=2
	run "ts-sdk $mode: read" 0 "hello" "$CALL" --url http://127.0.0.1:$pport$path read peer://hello
	run "ts-sdk $mode: complete" 0 "albert" "$CALL" --url http://127.0.0.1:$pport$path complete prompt:greet name=al
	run "ts-sdk $mode: isError exits 1" 1 "it failed" "$CALL" --url http://127.0.0.1:$pport$path call fail
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
done

# ---- HTTP, server-everything ------------------------------------------------

eport=$(free_port)
PORT=$eport serve "$tmp/every.log" "$EVERYTHING" streamableHttp
i=0
while [ $i -lt 100 ] && ! curl -s -o /dev/null http://127.0.0.1:$eport/mcp; do
	sleep 0.1
	i=$((i + 1))
done
run "server-everything streamableHttp: list" 0 "tool      echo" "$CALL" --url http://127.0.0.1:$eport/mcp list
run "server-everything streamableHttp: call" 0 "Echo: hi" "$CALL" --url http://127.0.0.1:$eport/mcp call echo message=hi
kill -TERM "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
eport=$(free_port)
PORT=$eport serve "$tmp/every2.log" "$EVERYTHING" sse
i=0
while [ $i -lt 100 ]; do
	# A stream that stays open (curl's 28, its time limit) means it is up.
	curl -s -o /dev/null -m 0.5 http://127.0.0.1:$eport/sse
	[ $? -eq 28 ] && break
	sleep 0.1
	i=$((i + 1))
done
run "server-everything sse: call" 0 "Echo: hi" "$CALL" --transport sse --url http://127.0.0.1:$eport/sse call echo message=hi

# ---- HTTP, bad servers ------------------------------------------------------

for q in ok multidata drop legacy foreign silent wrongtype; do
	serve "$tmp/q.log" node test/node/quirk-server.mjs http $q
	qport=$(peer_port "$tmp/q.log") || { ok 1 "quirk $q starts" "$tmp/q.log"; continue; }
	U=http://127.0.0.1:$qport/mcp
	case $q in
	ok) run "quirk http ok" 0 "ok" "$CALL" --url $U call q ;;
	multidata) run "quirk multidata: CR LF and several data: lines" 0 "ok" "$CALL" --url $U call q ;;
	drop)
		run "quirk drop: the dropped SSE body is resumed" 0 "ok" "$CALL" --url $U call q
		curl -s http://127.0.0.1:$qport/debug >"$tmp/debug"
		grep -q '"e2"' "$tmp/debug"
		ok $? "quirk drop: with Last-Event-ID: e2" "$tmp/debug"
		;;
	legacy)
		run "quirk legacy: POST 405, then GET /sse" 0 '"transport": "sse"' "$CALL" --url $U info
		run "quirk legacy: calls" 0 "ok" "$CALL" --url $U call q
		;;
	silent) run "quirk silent http: exit 3 in time" 3 "" "$CALL" --timeout 1 --url $U call q ;;
	foreign)
		run "quirk foreign: an endpoint on another origin is refused" 3 "" "$CALL" --header 'Authorization: Bearer secret' --url $U call q
		err_has "quirk foreign: and says why" "another origin"
		;;
	gone) ;;
	wrongtype)
		run "quirk wrongtype: a text/html answer" 3 "" "$CALL" --url $U call q
		err_has "quirk wrongtype: says so" "non-JSON, non-SSE"
		;;
	esac
	# And mcp-call checked for memory errors on the same server.
	memcheck "memcheck: mcp-call against quirk http $q" "$CALL" --timeout 2 --url $U call q
	kill -TERM "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
done

tap_end
