#!/bin/sh
# long.sh: calls of 30 s and 3 min on every transport, directly and
# through a real nginx (test/node/long.mjs, with the official TypeScript
# SDK): stdio; the legacy /sse; /mcp with SSE bodies, with JSON bodies
# (--json-response) and stateless (--stateless). nginx runs
# docs/nginx.conf itself, one server block per mcp-demo, with
# proxy_read_timeout cut to 20 s: a call outlives it many times over on
# the server's keepalives (--keepalive 5), which is what keeps any proxy
# from cutting a long call. test/run.sh runs this one beside the others
# (it mostly waits). Prints TAP only.
#
# Environment: LONG_SHORT_MS (30000), LONG_MS (180000).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_sdk
need_built "$MCP_DEMO"
nginx=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
[ -x "$nginx" ] || bail "nginx is installed (tools/bootstrap.sh test)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libmcp-long.XXXXXX") || exit 1
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
public=mcp.example.com

# start NAME FLAGS...: an mcp-demo on a free port; sets $port.
start() {
	name=$1
	shift
	"$MCP_DEMO" --http 127.0.0.1:0 --keepalive 5 --allow-host "$public" \
	    "$@" </dev/null >/dev/null 2>"$tmp/$name.log" &
	pids="$pids $!"
	port=$(logged_port "$tmp/$name.log" $!) || bail "mcp-demo $* starts"
}
start sse
psse=$port
start json --json-response --metrics --access-log
pjson=$port
start stateless --stateless
pstateless=$port

free_port() {
	node -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# One server block of docs/nginx.conf per server, each its own upstream.
: >"$tmp/blocks.conf"
for b in sse:$psse json:$pjson stateless:$pstateless; do
	name=${b%%:*}
	sport=${b#*:}
	np=$(free_port)
	eval "n_$name=$np"
	sed -e "s|upstream libmcp |upstream libmcp_$name |" \
	    -e "s|proxy_pass http://libmcp;|proxy_pass http://libmcp_$name;|" \
	    -e "s|^\([[:space:]]*\)listen 80;|\1listen 127.0.0.1:$np;|" \
	    -e "s|^\([[:space:]]*\)server 127\.0\.0\.1:8080;|\1server 127.0.0.1:$sport;|" \
	    -e "s|^\([[:space:]]*\)proxy_read_timeout [0-9]*[a-z]*;|\1proxy_read_timeout 20s;|" \
	    docs/nginx.conf >>"$tmp/blocks.conf"
done
grep -q "libmcp_stateless" "$tmp/blocks.conf" ||
    bail "docs/nginx.conf has the upstream and proxy_pass lines this test rewrites"
nginx_main "$tmp" "$tmp/blocks.conf"
"$nginx" -p "$tmp" -c "$tmp/nginx.conf" 2>"$tmp/nginx.err" &
pids="$pids $!"
i=0
while ! grep -q . "$tmp/nginx.pid" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep -q . "$tmp/nginx.pid" 2>/dev/null || bail "nginx starts" "$tmp/nginx.err"

d=http://127.0.0.1
ng="http://$public"
timeout 600 node test/node/long.mjs --stdio "$MCP_DEMO" \
    --short "${LONG_SHORT_MS:-30000}" --long "${LONG_MS:-180000}" \
    --sse "/sse=$d:$psse/sse" \
    --mcp "/mcp=$d:$psse/mcp" \
    --mcp "/mcp --json-response=$d:$pjson/mcp" \
    --mcp "/mcp --stateless=$d:$pstateless/mcp" \
    --sse "nginx /sse=$d:$n_sse/sse" \
    --mcp "nginx /mcp=$d:$n_sse/mcp" \
    --mcp "nginx /mcp --json-response=$d:$n_json/mcp" \
    --mcp "nginx /mcp --stateless=$d:$n_stateless/mcp" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -v '^1\.\.' "$tmp/out"
n=$(grep -c '^ok \|^not ok ' "$tmp/out")
failed=$(grep -c '^not ok ' "$tmp/out")
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	n=$((n + 1))
	failed=1
	echo "not ok $n - long.mjs ran to its end (exit $rc)"
	sed 's/^/# /' "$tmp/err" | tail -20
fi

# The JSON server also counted its calls and logged its requests: four
# sleeps (30 s and the long one, direct and through nginx), in the
# histogram's buckets by their length, and access lines as long, with
# the bytes of the held-open body (its blank keepalives).
curl -s "http://127.0.0.1:$pjson/metrics" >"$tmp/metrics"
metric() {	# metric NAME{LABELS}: its value, or -1
	awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print -1 }' "$tmp/metrics"
}
# bucket MS: the histogram bucket a call of MS milliseconds falls in.
bucket() {
	awk -v s="$(( $1 / 1000 ))" 'BEGIN { split("0.001 0.005 0.01 0.05 0.1 0.5 1 5 10 30 60 300", b, " ");
	    for (i = 1; i <= 12; i++) if (s < b[i]) { print b[i]; exit } print "+Inf" }'
}
le_short=$(bucket "${LONG_SHORT_MS:-30000}")
le_long=$(bucket "${LONG_MS:-180000}")
calls=$(metric 'mcp_tool_calls_total{tool="sleep",outcome="ok"}')
inf=$(metric 'mcp_tool_call_duration_seconds_bucket{tool="sleep",le="+Inf"}')
inshort=$(metric "mcp_tool_call_duration_seconds_bucket{tool=\"sleep\",le=\"$le_short\"}")
inlong=$(metric "mcp_tool_call_duration_seconds_bucket{tool=\"sleep\",le=\"$le_long\"}")
[ "$calls" = 4 ] && [ "$inf" = 4 ] && [ "$inshort" = 2 ] && [ "$inlong" = 4 ]
ok $? "--json-response server: /metrics counts its 4 sleep calls, 2 within le=$le_short, 4 within le=$le_long (calls $calls, le=$le_short $inshort, le=$le_long $inlong, +Inf $inf)" "$tmp/metrics"
min_ms=$(( ${LONG_MS:-180000} - 1000 ))
nlong=$(awk -v m="$min_ms" '/POST \/mcp 200 duration_ms=/ { split($0, a, "duration_ms="); split(a[2], d, " ");
    split($0, o, "bytes_out="); if (d[1] + 0 >= m && o[2] + 0 > 0) n++ } END { print n + 0 }' "$tmp/json.log")
[ "$nlong" -eq 2 ]
ok $? "--json-response server: two access lines of the long call, each at least ${min_ms} ms with its body bytes (found $nlong)" "$tmp/json.log"
if [ "$failed" -gt 0 ]; then
	grep -h -v '\[info\]' "$tmp/error.log" 2>/dev/null | tail -10 | sed 's/^/# nginx: /'
	tail -5 "$tmp"/*.log 2>/dev/null | sed 's/^/# /'
fi
tap_end
