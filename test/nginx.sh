#!/bin/sh
# nginx.sh: build/mcp-demo's HTTP+SSE transport behind a real nginx
# running docs/nginx.conf itself, with three changes made here: nginx's
# own free loopback port for "listen", the server's port for "server", and
# a 5 s proxy_read_timeout against the server's 2 s keepalive. Through
# nginx it proves that the endpoint event comes at once (not buffered),
# that Host reaches the server, that client_max_body_size holds, and then
# runs test/node/sse-interop.mjs (the TypeScript SDK's SSEClientTransport)
# with a 16 s idle stream first: three read timeouts, survived on
# keepalives, then calls on the same stream, 20 at once, a cancel, ping.
# Prints TAP only; nginx and the server are stopped by PID, also on
# failure. nginx missing is a failure, not a skip: tools/bootstrap.sh test
# installs it.
#
#   test/nginx.sh [server]	(run from anywhere; paths are relative to
#				 the repo root)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh	# nginx_main; the TAP functions below are this script's own

server=${1:-$MCP_DEMO}
conf_src=docs/nginx.conf
keepalive=2		# the server's --keepalive
read_timeout=5s		# nginx's proxy_read_timeout here
idle=16			# seconds the SDK client stays idle: > 3 read timeouts
public=mcp.example.com	# the server_name in docs/nginx.conf

n=0
failed=0
tmp=
spid=
npid=
cpid=

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}

# check NAME CONDITION...: ok when the command succeeds.
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

diag_file() {	# diag_file LABEL FILE [LINES]
	[ -s "$2" ] || return 0
	diag "---- $1 (last ${3:-30} lines) ----"
	tail -n "${3:-30}" "$2" | sed 's/^/# /'
}

stop() {	# stop PID: SIGTERM, 5 s, SIGKILL; sets $status to its exit code
	status=
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1" 2>/dev/null
		status=killed
	fi
	wait "$1" 2>/dev/null
	rc=$?
	[ -n "$status" ] || status=$rc
}

cleanup() {
	[ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
	[ -n "$npid" ] && kill -KILL "$npid" 2>/dev/null
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	npid=
	spid=
	[ -n "$tmp" ] && rm -rf "$tmp"
	tmp=
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

finish() {
	if [ "$failed" -gt 0 ] && [ -n "$tmp" ]; then
		diag_file "server stderr" "$tmp/server.log"
		grep -v '\[info\]' "$tmp/error.log" >"$tmp/error.log.short"
		diag_file "nginx error.log, less [info]" "$tmp/error.log.short"
		diag_file "nginx access.log" "$tmp/access.log" 15
	fi
	[ -n "$npid" ] && stop "$npid"
	[ -n "$spid" ] && stop "$spid"
	npid=
	spid=
	echo "1..$n"
	[ "$failed" -gt 0 ] && diag "failed $failed of $n"
	[ "$failed" -eq 0 ]
	exit
}

bail() {
	not_ok "$1"
	shift
	[ $# -gt 0 ] && diag "$@"
	finish
}

# ---- what it needs -----------------------------------------------------------

nginx=$(command -v nginx 2>/dev/null)
[ -n "$nginx" ] || for p in /usr/sbin/nginx /usr/local/sbin/nginx /usr/local/nginx/sbin/nginx; do
	[ -x "$p" ] && nginx=$p && break
done
[ -n "$nginx" ] || bail "nginx is installed" \
    "nginx not found: tools/bootstrap.sh test (make check) installs nginx-light"
command -v node >/dev/null 2>&1 || bail "node is installed" \
    "node not found: tools/bootstrap.sh test (make check) installs it"
command -v curl >/dev/null 2>&1 || bail "curl is installed" \
    "curl not found: tools/bootstrap.sh test (make check) installs it"
if [ ! -d test/node/node_modules/@modelcontextprotocol/sdk ]; then
	log=$(mktemp) || exit 1
	if ! npm ci --no-audit --no-fund --loglevel=error --prefix test/node \
	    >"$log" 2>&1; then
		not_ok "npm ci in test/node (installs the MCP SDK)"
		sed 's/^/# /' "$log"
		rm -f "$log"
		finish
	fi
	rm -f "$log"
fi
[ -x "$server" ] || bail "$server is built"
timeout 5 "$server" --help 2>&1 | grep -q -- '--http' ||
    bail "$server supports --http" "its --help does not mention --http"
[ -r "$conf_src" ] || bail "$conf_src exists"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libmcp-nginx.XXXXXX") || bail "mktemp -d"

free_port() {
	node -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# ---- the server ----------------------------------------------------------------

"$server" --http 127.0.0.1:0 --keepalive "$keepalive" --allow-host "$public" \
    </dev/null >/dev/null 2>"$tmp/server.log" &
spid=$!
sport=
i=0
while [ $i -lt 50 ]; do
	sport=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
	    "$tmp/server.log" | head -n 1)
	[ -n "$sport" ] && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
[ -n "$sport" ] || bail "server: $server --http 127.0.0.1:0 --keepalive $keepalive --allow-host $public logs its port"
ok "server: $server --http 127.0.0.1:0 --keepalive $keepalive --allow-host $public listens on port $sport"

# ---- nginx on docs/nginx.conf --------------------------------------------------

# Its own main config around the documented server block: no daemon and one
# process (so $! is nginx), every file it writes in $tmp.
gen_conf() {	# gen_conf NGINX_PORT
	sed -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$1;|" \
	    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$sport;|" \
	    -e "s|^\([[:space:]]*\)proxy_read_timeout [0-9]*[a-z]*;|\1proxy_read_timeout $read_timeout;|" \
	    "$conf_src" >"$tmp/libmcp.conf"
	nginx_main "$tmp" "$tmp/libmcp.conf"
}

nport=$(free_port)
gen_conf "$nport"
# The three changes took: a rewrite that stopped matching docs/nginx.conf
# would leave nginx on port 80, or on a 120 s read timeout that the idle
# test could not tell from a working one.
subst_ok() {
	[ "$(grep -c "^[[:space:]]*listen 127\.0\.0\.1:$nport;" "$tmp/libmcp.conf")" -eq 1 ] &&
	[ "$(grep -c "^[[:space:]]*server 127\.0\.0\.1:$sport;" "$tmp/libmcp.conf")" -eq 1 ] &&
	[ "$(grep -c "^[[:space:]]*proxy_read_timeout $read_timeout;" "$tmp/libmcp.conf")" -eq 1 ] &&
	[ "$(grep -c "^[[:space:]]*proxy_read_timeout" "$tmp/libmcp.conf")" -eq 1 ] &&
	! grep -q "^[[:space:]]*listen [0-9]*;" "$tmp/libmcp.conf"
}
check "nginx config: $conf_src with listen 127.0.0.1:$nport, upstream port $sport, proxy_read_timeout $read_timeout" subst_ok ||
    diag "$(grep -n 'listen\|server 127\|proxy_read_timeout' "$tmp/libmcp.conf")"
if "$nginx" -t -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" >"$tmp/nginx-t.log" 2>&1; then
	ok "nginx -t accepts it ($("$nginx" -v 2>&1 | sed 's/.*: //'))"
else
	not_ok "nginx -t accepts it"
	diag_file "nginx -t" "$tmp/nginx-t.log"
	finish
fi

# Start nginx; should its port have been taken since free_port, try another.
start_nginx() {
	"$nginx" -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" \
	    </dev/null >"$tmp/nginx.out" 2>&1 &
	npid=$!
	i=0
	while [ $i -lt 50 ]; do
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 \
		    "http://127.0.0.1:$nport/healthz" 2>/dev/null)
		[ "$code" = 200 ] && return 0
		kill -0 "$npid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	stop "$npid"
	npid=
	return 1
}
tries=0
until start_nginx; do
	tries=$((tries + 1))
	if [ $tries -ge 3 ] || ! grep -q 'Address already in use' "$tmp/error.log" "$tmp/nginx.out" 2>/dev/null; then
		bail "nginx starts on 127.0.0.1:$nport and GET /healthz through it answers 200" \
		    "$(cat "$tmp/nginx.out" 2>/dev/null)"
	fi
	nport=$(free_port)
	gen_conf "$nport"
done
base=http://127.0.0.1:$nport
ok "nginx (pid $npid) on $base: GET /healthz through it answers 200"
body=$(curl -s --max-time 2 "$base/healthz")
check "GET /healthz through nginx: body \"ok\"" [ "$(printf '%s' "$body" | tr -d '\r\n')" = ok ]

# ---- raw HTTP through nginx ------------------------------------------------------

# What curl gets of GET /sse in its first second (curl gives up at 1 s with
# status 28, and -w still reports): the headers and the endpoint event, or
# else nginx held them back. --compressed: Accept-Encoding as a browser
# sends it, for gzip buffering is one way to hold events back.
: >"$tmp/sse.headers"
: >"$tmp/sse.body"
curl -s -N --compressed -D "$tmp/sse.headers" -o "$tmp/sse.body" -w '%{http_code}' \
    --max-time 1 "$base/sse" >"$tmp/sse.code" 2>/dev/null
code=$(cat "$tmp/sse.code")
check "GET /sse through nginx: 200 (got $code)" [ "$code" = 200 ]
hdr() {	# hdr name: that header's value, lower case, CR stripped
	tr -d '\r' <"$tmp/sse.headers" | tr '[:upper:]' '[:lower:]' | sed -n "s/^$1:[[:space:]]*//p" | head -n 1
}
is_sse() {
	case $(hdr content-type) in text/event-stream*) return 0 ;; esac
	return 1
}
is_chunked() {
	[ "$(hdr transfer-encoding)" = chunked ] && [ -z "$(hdr content-length)" ]
}
check "GET /sse through nginx: Content-Type text/event-stream ($(hdr content-type))" is_sse
check "GET /sse through nginx: chunked, no Content-Length (Transfer-Encoding: $(hdr transfer-encoding))" is_chunked
sid=$(tr -d '\r' <"$tmp/sse.body" | sed -n 's|^data: /messages?sessionId=\([0-9a-f]\{32\}\)$|\1|p' | head -n 1)
if [ "$(tr -d '\r' <"$tmp/sse.body" | head -n 1)" = "event: endpoint" ] && [ -n "$sid" ]; then
	ok "GET /sse through nginx: the endpoint event arrived within 1 s (not buffered)"
else
	not_ok "GET /sse through nginx: the endpoint event arrived within 1 s (not buffered)"
	diag "body in the first second:" "$(head -c 400 "$tmp/sse.body")"
fi

# Host: nginx passes the client's on ($host). The server allows the public
# name (--allow-host) and refuses others: 403 proves it saw the Host sent,
# not "libmcp" (nginx's default, the upstream's name).
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 -H "Host: $public" "$base/sse")
check "Host: $public (the --allow-host name) through nginx: GET /sse 200 (got $code)" [ "$code" = 200 ]
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 -H "Host: rebind.example.net" "$base/sse")
check "Host: rebind.example.net through nginx: GET /sse 403 from the server (got $code)" [ "$code" = 403 ]

# client_max_body_size 4m, the server's --max-message default: a 5 MiB body
# gets 413 from nginx; a 3 MiB one goes through to the server, which
# answers 404 for an unknown session.
{ printf '{"jsonrpc":"2.0","method":"notifications/initialized","params":{"pad":"'
  head -c 5242880 /dev/zero | tr '\0' 'a'
  printf '"}}'; } >"$tmp/big5.json"
{ printf '{"jsonrpc":"2.0","method":"notifications/initialized","params":{"pad":"'
  head -c 3145728 /dev/zero | tr '\0' 'a'
  printf '"}}'; } >"$tmp/big3.json"
nosuch=00000000000000000000000000000000
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
    --data-binary "@$tmp/big5.json" "$base/messages?sessionId=$nosuch")
check "POST /messages of 5 MiB through nginx: 413 (client_max_body_size 4m; got $code)" [ "$code" = 413 ]
code=$(curl -s -o "$tmp/post3.body" -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
    --data-binary "@$tmp/big3.json" "$base/messages?sessionId=$nosuch")
is_404_unknown() {
	[ "$code" = 404 ] && grep -q -- -32600 "$tmp/post3.body"
}
check "POST /messages of 3 MiB through nginx reaches the server: 404 session not found (got $code)" \
    is_404_unknown
rm -f "$tmp/big5.json" "$tmp/big3.json"

# ---- the TypeScript SDK through nginx ------------------------------------------

# Its TAP, renumbered into this one. In the background, so that a signal
# to this script is handled (by the trap) while it runs.
node test/node/sse-interop.mjs --url "$base" --keepalive "$keepalive" --idle "$idle" \
    --label 'nginx: ' >"$tmp/node.tap" 2>"$tmp/node.err" &
cpid=$!
wait "$cpid"
rc=$?
cpid=
nfail0=$failed
while IFS= read -r line; do
	case $line in
	"ok "[0-9]*)
		rest=${line#ok }
		ok "${rest#* - }" ;;
	"not ok "[0-9]*)
		rest=${line#not ok }
		not_ok "${rest#* - }" ;;
	1..[0-9]*|"# failed "*) ;;
	*) printf '%s\n' "$line" ;;
	esac
done <"$tmp/node.tap"
if [ "$rc" -ne 0 ] && [ "$failed" -eq "$nfail0" ]; then
	not_ok "test/node/sse-interop.mjs exited $rc without a failed assertion"
	diag_file "its stderr" "$tmp/node.err"
fi

# ---- what nginx saw ------------------------------------------------------------

if grep -q 'upstream timed out' "$tmp/error.log"; then
	not_ok "nginx error.log: no \"upstream timed out\" (no stream cut by proxy_read_timeout $read_timeout)"
	diag "$(grep 'upstream timed out' "$tmp/error.log" | head -n 5)"
else
	ok "nginx error.log: no \"upstream timed out\" (no stream cut by proxy_read_timeout $read_timeout)"
fi
bad=$(awk '$9 ~ /^5/' "$tmp/access.log")
if [ -z "$bad" ]; then
	ok "nginx access.log: no 5xx among its $(wc -l <"$tmp/access.log" | tr -d ' ') requests"
else
	not_ok "nginx access.log: no 5xx"
	diag "$bad"
fi

stop "$npid"
npid=
check "nginx stops on SIGTERM (status $status)" [ "$status" = 0 ]
stop "$spid"
spid=
check "the server exits 0 on SIGTERM (status $status)" [ "$status" = 0 ]
finish
