#!/bin/sh
# interop-streamable.sh: the Streamable HTTP transport (/mcp) of
# build/mcp-demo and build/conformance-server against the official MCP
# TypeScript SDK's StreamableHTTPClientTransport
# (test/node/streamable-interop.mjs): first directly, then through a real
# nginx running docs/nginx.conf itself, once per server, with three
# changes made here as test/nginx.sh does (nginx's own loopback port for
# "listen", the server's port for "server", a 5 s proxy_read_timeout
# against the servers' 2 s keepalive) and the upstream renamed per copy.
# Through nginx the SDK's standalone stream and a silent call both
# outlive the read timeout. Prints TAP only (the Node script's assertions
# renumbered into this one); nginx and the servers are stopped by PID,
# also on failure. nginx missing is a failure: tools/bootstrap.sh test
# installs it.
#
#   test/interop-streamable.sh	(run from anywhere)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node skip
need_sdk
need_built "$MCP_DEMO" "$CONFORMANCE_SERVER"

conf_src=docs/nginx.conf
keepalive=2		# the servers' --keepalive behind nginx
read_timeout=5s		# nginx's proxy_read_timeout here
idle=6			# seconds the SDK's standalone stream stays idle: > 5 s
tmp=
npid=
dpid=
cpid=
jpid=

cleanup() {
	for p in $jpid $npid $dpid $cpid; do
		kill -KILL "$p" 2>/dev/null
	done
	jpid= npid= dpid= cpid=
	[ -n "$tmp" ] && rm -rf "$tmp"
	tmp=
}
trap cleanup EXIT
trap 'cleanup; exit 1' INT TERM HUP

diag_file() {	# diag_file LABEL FILE [LINES]
	[ -s "$2" ] || return 0
	echo "# ---- $1 (last ${3:-30} lines) ----"
	tail -n "${3:-30}" "$2" | sed 's/^/# /'
}

# run_node LABEL ARGS...: test/node/streamable-interop.mjs, its TAP
# renumbered into this one. In the background, so that a signal to this
# script is handled (by the trap) while it runs.
run_node() {
	_label=$1
	shift
	node test/node/streamable-interop.mjs "$@" >"$tmp/node.tap" 2>"$tmp/node.err" &
	jpid=$!
	wait "$jpid"
	_rc=$?
	jpid=
	_f0=$failed
	while IFS= read -r line; do
		case $line in
		"ok "[0-9]*)
			rest=${line#ok }
			ok 0 "${rest#* - }" ;;
		"not ok "[0-9]*)
			rest=${line#not ok }
			ok 1 "${rest#* - }" ;;
		1..[0-9]*|"# failed "*) ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <"$tmp/node.tap"
	if [ "$_rc" -ne 0 ] && [ "$failed" -eq "$_f0" ]; then
		ok 1 "${_label}test/node/streamable-interop.mjs exited $_rc without a failed assertion"
		diag_file "its stderr" "$tmp/node.err"
	fi
}

finish() {
	if [ "$failed" -gt 0 ] && [ -n "$tmp" ]; then
		diag_file "mcp-demo stderr" "$tmp/demo.log"
		diag_file "conformance-server stderr" "$tmp/conf.log"
		[ -f "$tmp/error.log" ] && grep -v '\[info\]' "$tmp/error.log" >"$tmp/error.short"
		diag_file "nginx error.log, less [info]" "$tmp/error.short"
		diag_file "nginx access.log" "$tmp/access.log" 15
	fi
	[ -n "$npid" ] && stop "$npid"
	[ -n "$dpid" ] && stop "$dpid"
	[ -n "$cpid" ] && stop "$cpid"
	npid= dpid= cpid=
	tap_end
	exit
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libmcp-streamable.XXXXXX") || exit 1

# ---- directly ------------------------------------------------------------------

run_node '' --keepalive 1

# ---- through nginx -------------------------------------------------------------

nginx=$(command -v nginx 2>/dev/null)
[ -n "$nginx" ] || for p in /usr/sbin/nginx /usr/local/sbin/nginx /usr/local/nginx/sbin/nginx; do
	[ -x "$p" ] && nginx=$p && break
done
if [ -z "$nginx" ]; then
	ok 1 "nginx is installed (tools/bootstrap.sh test, run by make check, installs nginx-light)"
	finish
fi
command -v curl >/dev/null 2>&1 || { ok 1 "curl is installed"; finish; }

# start_server PROG LOG: its PID in $spid, its port in $sport.
start_server() {
	"$1" --http 127.0.0.1:0 --keepalive "$keepalive" --sse-retry 300 \
	    </dev/null >/dev/null 2>"$2" &
	spid=$!
	sport=
	i=0
	while [ $i -lt 50 ]; do
		sport=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$2" | head -n 1)
		[ -n "$sport" ] && return 0
		kill -0 "$spid" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
start_server "$MCP_DEMO" "$tmp/demo.log"
dpid=$spid dport=$sport
start_server "$CONFORMANCE_SERVER" "$tmp/conf.log"
cpid=$spid cport=$sport
[ -n "$dport" ] && [ -n "$cport" ]
ok $? "build/mcp-demo and build/conformance-server listen (--keepalive $keepalive; ports ${dport:-none}, ${cport:-none})"
[ -n "$dport" ] && [ -n "$cport" ] || finish

free_port() {
	node -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# gen_one NAME NGINX_PORT SERVER_PORT: docs/nginx.conf for one server.
gen_one() {
	sed -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$2;|" \
	    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$3;|" \
	    -e "s|^\([[:space:]]*\)proxy_read_timeout [0-9]*[a-z]*;|\1proxy_read_timeout $read_timeout;|" \
	    -e "s|^upstream libmcp {|upstream libmcp_$1 {|" \
	    -e "s|proxy_pass http://libmcp;|proxy_pass http://libmcp_$1;|" \
	    "$conf_src" >"$tmp/$1.conf"
}

gen_conf() {
	gen_one demo "$ndport" "$dport"
	gen_one conf "$ncport" "$cport"
	nginx_main "$tmp" "$tmp/demo.conf" "$tmp/conf.conf"
}

# The changes took: a rewrite that stopped matching docs/nginx.conf would
# leave nginx on port 80, on the 120 s read timeout, or without /mcp.
subst_ok() {	# subst_ok NAME NGINX_PORT SERVER_PORT
	f=$tmp/$1.conf
	[ "$(grep -c "^[[:space:]]*listen 127\.0\.0\.1:$2;" "$f")" -eq 1 ] &&
	[ "$(grep -c "^[[:space:]]*server 127\.0\.0\.1:$3;" "$f")" -eq 1 ] &&
	[ "$(grep -c "^[[:space:]]*proxy_read_timeout" "$f")" -eq 1 ] &&
	[ "$(grep -c "^[[:space:]]*proxy_read_timeout $read_timeout;" "$f")" -eq 1 ] &&
	[ "$(grep -c "^upstream libmcp_$1 {" "$f")" -eq 1 ] &&
	! grep -q "proxy_pass http://libmcp;" "$f" &&
	grep -q "^[[:space:]]*location = /mcp {" "$f" &&
	! grep -q "^[[:space:]]*listen [0-9]*;" "$f"
}

start_nginx() {
	"$nginx" -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" \
	    </dev/null >"$tmp/nginx.out" 2>&1 &
	npid=$!
	i=0
	while [ $i -lt 50 ]; do
		a=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$ndport/healthz" 2>/dev/null)
		b=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "http://127.0.0.1:$ncport/healthz" 2>/dev/null)
		[ "$a" = 200 ] && [ "$b" = 200 ] && return 0
		kill -0 "$npid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	stop "$npid"
	npid=
	return 1
}

ndport=$(free_port)
ncport=$(free_port)
gen_conf
subst_ok demo "$ndport" "$dport" && subst_ok conf "$ncport" "$cport"
ok $? "nginx config: $conf_src twice (upstreams libmcp_demo, libmcp_conf), each with its listen port, upstream port, location = /mcp and proxy_read_timeout $read_timeout"
"$nginx" -t -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" >"$tmp/nginx-t.log" 2>&1
rc=$?
ok $rc "nginx -t accepts it ($("$nginx" -v 2>&1 | sed 's/.*: //'))" "$tmp/nginx-t.log"
[ $rc -eq 0 ] || finish
tries=0
until start_nginx; do
	tries=$((tries + 1))
	if [ $tries -ge 3 ] || ! grep -q 'Address already in use' "$tmp/error.log" "$tmp/nginx.out" 2>/dev/null; then
		ok 1 "nginx starts and GET /healthz through it answers 200 for both servers" "$tmp/nginx.out"
		finish
	fi
	ndport=$(free_port)
	ncport=$(free_port)
	gen_conf
done
ok 0 "nginx (pid $npid) on 127.0.0.1:$ndport (mcp-demo) and 127.0.0.1:$ncport (conformance-server): /healthz answers 200"

# A stream through nginx in its first second: the priming event of a
# 2025-11-25 session's GET /mcp (curl gives up at 1 s, status 28). Gzip
# would hold it back: --compressed asks for it as browsers do.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
curl -s -D "$tmp/init.h" -o "$tmp/init.b" --max-time 3 -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' --data-binary "$init" "http://127.0.0.1:$ndport/mcp"
sid=$(tr -d '\r' <"$tmp/init.h" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: \([0-9a-f]\{32\}\)$/\1/p')
[ -n "$sid" ] && grep -q '"protocolVersion":"2025-11-25"' "$tmp/init.b"
ok $? "POST /mcp initialize through nginx: the Mcp-Session-Id header and the result come back" "$tmp/init.h"
: >"$tmp/get.b"
curl -s -N --compressed -o "$tmp/get.b" --max-time 1 -H "Mcp-Session-Id: $sid" \
    -H 'Accept: text/event-stream' "http://127.0.0.1:$ndport/mcp"
[ "$(head -n 2 "$tmp/get.b" | tr -d '\r' | tr '\n' ' ')" = "id: 0-0 retry: 300 " ]
ok $? "GET /mcp through nginx: the priming event arrives within 1 s (not buffered)" "$tmp/get.b"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -X DELETE -H "Mcp-Session-Id: $sid" \
    "http://127.0.0.1:$ndport/mcp")
[ "$code" = 200 ]
ok $? "DELETE /mcp through nginx: 200 (got $code)"

run_node 'nginx: ' --demo "http://127.0.0.1:$ndport" --conf "http://127.0.0.1:$ncport" \
    --keepalive "$keepalive" --idle "$idle" --label 'nginx: '

! grep -q 'upstream timed out' "$tmp/error.log"
ok $? "nginx error.log: no \"upstream timed out\" (no stream cut by proxy_read_timeout $read_timeout)"
awk '$9 ~ /^5/' "$tmp/access.log" >"$tmp/5xx"
[ ! -s "$tmp/5xx" ]
ok $? "nginx access.log: no 5xx among its $(wc -l <"$tmp/access.log" | tr -d ' ') requests" "$tmp/5xx"

stop "$npid"
npid=
[ "$status" = 0 ]
ok $? "nginx stops on SIGTERM (status $status)"
stop "$dpid"
dpid=
[ "$status" = 0 ]
ok $? "build/mcp-demo exits 0 on SIGTERM (status $status)"
stop "$cpid"
cpid=
[ "$status" = 0 ]
ok $? "build/conformance-server exits 0 on SIGTERM (status $status)"
finish
