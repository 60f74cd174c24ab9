#!/bin/sh
# gateway-serve.sh: tools/mcp-gateway's stdio-to-network half
# (mcp-gateway --http ... -- CMD): the reference stdio server
# @modelcontextprotocol/server-everything runs behind two gateways, one
# with a child per session (the default) and one --shared, each reached
# directly and through a real nginx (docs/nginx.conf, buffering off, its
# 120 s read timeout); test/node/gateway-serve.mjs drives them with the
# official TypeScript SDK's Streamable HTTP and legacy SSE clients. Then
# SIGTERM: each gateway exits with status 0 and leaves no child behind.
# Prints TAP only; everything started here is stopped by PID.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_sdk @modelcontextprotocol/server-everything
GW=$MCP_BUILD/mcp-gateway
need_built "$GW"
EV=test/node/node_modules/@modelcontextprotocol/server-everything/dist
[ -f "$EV/index.js" ] && [ -d "$EV/docs" ] ||
    bail "server-everything's dist/index.js and dist/docs are there"
nginx=$(command -v nginx 2>/dev/null)
[ -n "$nginx" ] || for p in /usr/sbin/nginx /usr/local/sbin/nginx; do
	[ -x "$p" ] && nginx=$p && break
done
[ -n "$nginx" ] || bail "nginx is installed (tools/bootstrap.sh test installs it)"
command -v curl >/dev/null 2>&1 || bail "curl is installed"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/libmcp-gwserve.XXXXXX") || exit 1
dpid=
spid=
npid=
tpid=
# kids PID: the processes PID has started, still there.
kids() {
	cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | sort -n
}
# On the way out, whatever is still running: nginx, the gateways, and
# their children (a gateway killed with SIGKILL cannot end them).
cleanup() {
	# timeout passes SIGTERM on to node.
	[ -n "$tpid" ] && kill -TERM "$tpid" 2>/dev/null
	_left=$(for _p in $dpid $spid; do kids "$_p"; done)
	for _p in $npid $dpid $spid $_left; do
		kill -KILL "$_p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# The gateways. A generous --init-timeout: node starting server-everything
# on a loaded machine may take seconds.
"$GW" --http 127.0.0.1:0 --init-timeout 60 -- node "$EV/index.js" stdio \
    </dev/null >/dev/null 2>"$tmp/direct.log" &
dpid=$!
"$GW" --http 127.0.0.1:0 --init-timeout 60 --shared -- node "$EV/index.js" stdio \
    </dev/null >/dev/null 2>"$tmp/shared.log" &
spid=$!
dport=$(logged_port "$tmp/direct.log" "$dpid" 300) || bail "mcp-gateway -- server-everything starts"
sport=$(logged_port "$tmp/shared.log" "$spid" 300) || bail "mcp-gateway --shared -- server-everything starts"

# nginx in front of both: docs/nginx.conf twice, its upstream renamed in
# the second, on ports of its own.
free_port() {
	node -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}
nport=$(free_port)
nsport=$(free_port)
mkdir -p "$tmp/nginx"
sed -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$nport;|" \
    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$dport;|" \
    docs/nginx.conf >"$tmp/nginx/direct.conf"
sed -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$nsport;|" \
    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$sport;|" \
    -e 's|upstream libmcp |upstream libmcp_shared |' -e 's|http://libmcp;|http://libmcp_shared;|' \
    -e 's|server_name mcp\.example\.com;|server_name shared.example.com;|' \
    docs/nginx.conf >"$tmp/nginx/shared.conf"
nginx_main "$tmp/nginx" "$tmp/nginx/direct.conf" "$tmp/nginx/shared.conf"
"$nginx" -p "$tmp/nginx/" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" \
    >"$tmp/nginx/nginx.out" 2>&1 &
npid=$!
# Up when both ports answer /healthz through to their gateways.
i=0
while [ $i -lt 300 ] && kill -0 "$npid" 2>/dev/null && ! {
	curl -sf -o /dev/null "http://127.0.0.1:$nport/healthz" &&
	    curl -sf -o /dev/null "http://127.0.0.1:$nsport/healthz"; }; do
	sleep 0.1
	i=$((i + 1))
done
curl -sf -o /dev/null "http://127.0.0.1:$nport/healthz" &&
    curl -sf -o /dev/null "http://127.0.0.1:$nsport/healthz"
ok $? "nginx proxies to both gateways (/healthz)" "$tmp/nginx/nginx.out"

# The Node script's TAP, numbered on from here, without its plan.
# (In the background, waited for: a signal to this script is acted on at
# once, not once node has ended.)
timeout -k 5 540 node test/node/gateway-serve.mjs "$EV/docs" "$dport" "$dpid" \
    "$sport" "$spid" "$nport" "$nsport" >"$tmp/node.tap" 2>"$tmp/node.err" &
tpid=$!
wait "$tpid"
rc=$?
tpid=
awk -v off="$n" '
/^(not )?ok [0-9]+/ {
	pre = /^not / ? "not ok " : "ok "
	rest = substr($0, length(pre) + 1)
	num = rest + 0
	sub(/^[0-9]+/, "", rest)
	print pre (num + off) rest
	next
}
!/^1\.\./' "$tmp/node.tap"
n=$((n + $(grep -c '^\(not \)\{0,1\}ok ' "$tmp/node.tap")))
failed=$((failed + $(grep -c '^not ok ' "$tmp/node.tap")))
[ "$rc" -eq 0 ]
ok $? "the Node script ends with status 0 (status $rc)" "$tmp/node.err"

stop "$npid"
npid=

# SIGTERM: status 0, and the children gone with the gateway (the shared
# one still runs its child; the default one has none left, its sessions
# over).
kids "$spid" >"$tmp/kids.shared"
kids "$dpid" >"$tmp/kids.direct"
[ "$(wc -l <"$tmp/kids.shared")" -eq 1 ]
ok $? "--shared: one child before SIGTERM ($(cat "$tmp/kids.shared" | tr '\n' ' '))"
[ ! -s "$tmp/kids.direct" ]
ok $? "a child per session: none left once the sessions have ended ($(cat "$tmp/kids.direct" | tr '\n' ' '))"
for g in direct shared; do
	if [ $g = direct ]; then p=$dpid; else p=$spid; fi
	stop "$p"
	[ "$status" = 0 ]
	ok $? "$g: SIGTERM: the gateway exits with status 0 (status $status)" "$tmp/$g.log"
	left=
	i=0
	while [ $i -lt 100 ]; do
		left=
		for k in $(cat "$tmp/kids.$g"); do
			kill -0 "$k" 2>/dev/null && left="$left $k"
		done
		[ -z "$left" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	[ -z "$left" ]
	ok $? "$g: no child of the gateway's outlives it${left:+ (left:$left)}" "$tmp/$g.log"
	if [ $g = direct ]; then dpid=; else spid=; fi
done
if [ "$failed" -gt 0 ]; then
	for g in direct shared; do
		echo "# ---- gateway $g stderr (last 30 lines) ----"
		tail -n 30 "$tmp/$g.log" | sed 's/^/#   /'
	done
	echo "# ---- node stderr ----"
	tail -n 30 "$tmp/node.err" | sed 's/^/#   /'
fi
tap_end
