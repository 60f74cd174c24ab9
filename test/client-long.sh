#!/bin/sh
# client-long.sh: mcp-call through calls of minutes and a SIGTERM in the
# middle of one. Calls of LONG_MS (3 min) to mcp-demo's sleep, all at
# once: on stdio, on /mcp and /sse directly, and through a real nginx on
# docs/nginx.conf with proxy_read_timeout cut to 20 s, so that only the
# server's keepalives (--keepalive 5) keep the streams alive. Those run
# with --no-progress and --timeout past the call: nothing but the
# keepalives moves for minutes. One more through nginx keeps progress on
# with the default 30 s timeout, which progress restarts for minutes.
# Then SIGTERM mid-call: mcp-call exits 143 at once, its stdio child is
# gone, and over HTTP the server counts the call cancelled and the
# session deleted. test/run.sh runs this one beside the others (it mostly
# waits). And the same calls through mcp-gateway in front of mcp-demo
# over stdio (a child per session): /mcp and /sse with keepalives only,
# directly and through the same nginx, and /mcp with progress. Prints
# TAP only.
#
# Environment: LONG_MS (180000).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

CALL=$MCP_BUILD/mcp-call
need_built "$CALL" "$MCP_DEMO"
need_node
nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
[ -x "$nginx" ] || bail "nginx is installed (tools/bootstrap.sh test)"
LONG_MS=${LONG_MS:-180000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libmcp-clong.XXXXXX") || exit 1
pids=
cleanup() {
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null
	done
	sleep 0.5
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT HUP INT TERM

"$MCP_DEMO" --http 127.0.0.1:0 --keepalive 5 --metrics </dev/null >/dev/null \
    2>"$tmp/demo.log" &
dpid=$!
pids="$pids $dpid"
port=$(logged_port "$tmp/demo.log" "$dpid") || bail "mcp-demo --http starts"
nport=$(node -e 'const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
sed -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$nport;|" \
    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$port;|" \
    -e "s|^\([[:space:]]*\)proxy_read_timeout [0-9]*[a-z]*;|\1proxy_read_timeout 20s;|" \
    docs/nginx.conf >"$tmp/libmcp.conf"
grep -q "proxy_read_timeout 20s;" "$tmp/libmcp.conf" ||
    bail "docs/nginx.conf has the proxy_read_timeout line this test rewrites"
"$MCP_BUILD/mcp-gateway" --http 127.0.0.1:0 --keepalive 5 -- "$MCP_DEMO" \
    </dev/null >/dev/null 2>"$tmp/gw.log" &
gpid=$!
pids="$pids $gpid"
gport=$(logged_port "$tmp/gw.log" "$gpid") || bail "mcp-gateway --http starts"
gnport=$(node -e 'const s = require("net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')
# The same site in front of the gateway, under an upstream of its own.
sed -e "s|^\([[:space:]]*\)listen 127\.0\.0\.1:$nport;|\1listen 127.0.0.1:$gnport;|" \
    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:$port;|\1server 127.0.0.1:$gport;|" \
    -e "s|upstream libmcp |upstream libmcpgw |" \
    -e "s|proxy_pass http://libmcp;|proxy_pass http://libmcpgw;|" \
    "$tmp/libmcp.conf" >"$tmp/gw.conf"
grep -q "server 127.0.0.1:$gport;" "$tmp/gw.conf" &&
    grep -q "listen 127.0.0.1:$gnport;" "$tmp/gw.conf" &&
    ! grep -q "proxy_pass http://libmcp;" "$tmp/gw.conf" ||
    bail "the gateway's copy of the nginx site points at the gateway"
nginx_main "$tmp" "$tmp/libmcp.conf" "$tmp/gw.conf"
"$nginx" -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" 2>"$tmp/nginx.err" &
pids="$pids $!"
i=0
while ! curl -s -o /dev/null "http://127.0.0.1:$nport/" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done

# The calls of minutes, side by side.
secs=$(( LONG_MS / 1000 + 120 ))
D=http://127.0.0.1:$port
N=http://127.0.0.1:$nport
G=http://127.0.0.1:$gport
GN=http://127.0.0.1:$gnport
long() {	# long NAME ARGS...: one mcp-call in the background
	_n=$1
	shift
	timeout -k 5 $((secs + 60)) "$CALL" "$@" >"$tmp/$_n.out" 2>"$tmp/$_n.err" &
	eval "pid_$_n=$!"
}
long stdio --no-progress --timeout $secs call sleep ms=$LONG_MS -- "$MCP_DEMO"
long mcp --no-progress --timeout $secs --url $D/mcp call sleep ms=$LONG_MS
long sse --no-progress --timeout $secs --transport sse --url $D/sse call sleep ms=$LONG_MS
long nmcp --no-progress --timeout $secs --url $N/mcp call sleep ms=$LONG_MS
long nsse --no-progress --timeout $secs --transport sse --url $N/sse call sleep ms=$LONG_MS
long nprog --url $N/mcp call sleep ms=$LONG_MS
long gmcp --no-progress --timeout $secs --url $G/mcp call sleep ms=$LONG_MS
long gsse --no-progress --timeout $secs --transport sse --url $G/sse call sleep ms=$LONG_MS
long gprog --url $G/mcp call sleep ms=$LONG_MS
long gnmcp --no-progress --timeout $secs --url $GN/mcp call sleep ms=$LONG_MS
long gnsse --no-progress --timeout $secs --transport sse --url $GN/sse call sleep ms=$LONG_MS

# Meanwhile, SIGTERM in the middle of a call. On stdio: the child
# (a shell that gives its pid, then becomes mcp-demo) is gone after.
cat >"$tmp/server.sh" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/child.pid"
exec "$PWD/$MCP_DEMO"
EOF
chmod +x "$tmp/server.sh"
"$CALL" call sleep ms=60000 -- "$tmp/server.sh" >/dev/null 2>"$tmp/term1.err" &
cpid=$!
sleep 1.5
kill -TERM "$cpid"
t0=$(date +%s)
wait "$cpid"
rc=$?
[ "$rc" -eq 143 ] && [ $(( $(date +%s) - t0 )) -le 3 ]
ok $? "SIGTERM mid-call on stdio: mcp-call exits 143 at once (exit $rc)" "$tmp/term1.err"
child=$(cat "$tmp/child.pid" 2>/dev/null)
sleep 0.5
[ -n "$child" ] && ! kill -0 "$child" 2>/dev/null
ok $? "SIGTERM mid-call on stdio: the server it started is gone (pid $child)"

# Over HTTP: the server hears of it, the call cancelled, and in a
# legacy session the session deleted.
metric() {	# metric NAME{LABELS}: its value, or 0
	curl -s "$D/metrics" | awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}
c0=$(metric 'mcp_requests_total{method="tools/call",outcome="cancelled"}')
d0=$(metric 'mcp_sessions_ended_total{transport="streamable_http",reason="deleted"}')
"$CALL" --protocol 2025-11-25 --url $D/mcp call sleep ms=60000 >/dev/null \
    2>"$tmp/term2.err" &
cpid=$!
sleep 1.5
kill -TERM "$cpid"
wait "$cpid"
rc=$?
sleep 0.5
c1=$(metric 'mcp_requests_total{method="tools/call",outcome="cancelled"}')
d1=$(metric 'mcp_sessions_ended_total{transport="streamable_http",reason="deleted"}')
[ "$rc" -eq 143 ] && [ "$c1" = $((c0 + 1)) ] && [ "$d1" = $((d0 + 1)) ]
ok $? "SIGTERM mid-call over HTTP (2025-11-25): exit 143, the server counts the call cancelled ($c0 -> $c1) and the session deleted ($d0 -> $d1)" "$tmp/term2.err"
# In 2026-07-28 (mcp-call's choice against mcp-demo) there is no session:
# the closed response stream is the cancel.
"$CALL" --url $D/mcp call sleep ms=60000 >/dev/null 2>"$tmp/term3.err" &
cpid=$!
sleep 1.5
kill -TERM "$cpid"
wait "$cpid"
rc=$?
sleep 0.5
c2=$(metric 'mcp_requests_total{method="tools/call",outcome="cancelled"}')
d2=$(metric 'mcp_sessions_ended_total{transport="streamable_http",reason="deleted"}')
[ "$rc" -eq 143 ] && [ "$c2" = $((c1 + 1)) ] && [ "$d2" = "$d1" ]
ok $? "SIGTERM mid-call over HTTP (2026-07-28): exit 143, the closed stream cancels the call ($c1 -> $c2), no session to delete ($d1 -> $d2)" "$tmp/term3.err"

for t in stdio mcp sse nmcp nsse nprog gmcp gsse gprog gnmcp gnsse; do
	eval "wait \$pid_$t"
	rc=$?
	grep -qx "slept $LONG_MS ms" "$tmp/$t.out"
	[ $? -eq 0 ] && [ "$rc" -eq 0 ]
	ok $? "a call of $((LONG_MS / 1000)) s: $t (exit $rc)" "$tmp/$t.err"
done
tap_end
