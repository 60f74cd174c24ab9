# lib.sh: what the sh test scripts share; sourced (". test/lib.sh") from
# the repository root, after the script's cd there. POSIX sh (run.sh runs
# the tests with sh, which may be dash).
#
# The TAP counters: ok() and tap_end() use them.
n=0
failed=0

# The build under test and its programs (test/run.sh sets them: make
# check SANITIZE=1 tests build/san); exported for the Node scripts.
: "${MCP_BUILD:=build}"
: "${MCP_DEMO:=$MCP_BUILD/mcp-demo}"
: "${FEAT_SERVER:=$MCP_BUILD/feat-server}"
: "${CONFORMANCE_SERVER:=$MCP_BUILD/conformance-server}"
export MCP_BUILD MCP_DEMO FEAT_SERVER CONFORMANCE_SERVER

# ok STATUS NAME [FILE]: one TAP line, STATUS 0 being a pass; on a
# failure, FILE's lines (its last $OK_TAIL lines when that is set) follow
# as TAP comments.
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		if [ -n "${3-}" ] && [ -f "$3" ]; then
			if [ -n "${OK_TAIL-}" ]; then
				tail -n "$OK_TAIL" "$3"
			else
				cat "$3"
			fi | sed 's/^/#   /'
		fi
	fi
	return 0
}

# tap_end: the plan; the status is 0 when no assertion failed (make it
# the script's last command).
tap_end() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

# bail NAME: a script that cannot run at all: one failed assertion, the
# plan, exit 1.
bail() {
	echo "not ok 1 - $1"
	echo "1..1"
	exit 1
}

# need_node [skip]: node must be installed; with "skip", a missing node
# skips the whole test (plan 1..0) instead of failing it.
need_node() {
	command -v node >/dev/null 2>&1 && return 0
	if [ "${1-}" = skip ]; then
		echo "1..0 # SKIP node not found"
		exit 0
	fi
	bail "node (20 or later) is installed"
}

# need_built PROGRAM...: each PROGRAM must be built (executable).
need_built() {
	for _prog in "$@"; do
		[ -x "$_prog" ] || bail "$_prog is built"
	done
}

# need_sdk [PACKAGE...]: the MCP TypeScript SDK client, and each PACKAGE
# (a path under node_modules, e.g. @modelcontextprotocol/conformance), live
# in test/node/node_modules; install them from the lock file (npm ci) if
# one is missing or the lock file is newer than the last install.
need_sdk() {
	_nm=test/node/node_modules
	need_sdk_fresh "$@" && return 0
	_log=$(mktemp) || exit 1
	# One install at a time: test/run.sh runs tests side by side (long.sh
	# in the background), and two npm ci in one folder break each other.
	# The second waits, then finds the first's install fresh.
	(
		flock 9
		need_sdk_fresh "$@" && exit 0
		npm ci --no-audit --no-fund --loglevel=error --prefix test/node \
		    >"$_log" 2>&1
	) 9>test/node/.install-lock
	if [ $? -ne 0 ]; then
		echo "not ok 1 - npm ci in test/node (installs the MCP SDK)"
		sed 's/^/# /' "$_log"
		echo "1..1"
		rm -f "$_log"
		exit 1
	fi
	rm -f "$_log"
}

# need_sdk_fresh [PACKAGE...]: are they all installed, from the current
# lock file?
need_sdk_fresh() {
	for _p in @modelcontextprotocol/sdk "$@"; do
		[ -e "test/node/node_modules/$_p" ] || return 1
	done
	[ -f test/node/node_modules/.package-lock.json ] || return 1
	[ -z "$(find test/node/package-lock.json -newer \
	    test/node/node_modules/.package-lock.json)" ]
}

# stop PID: SIGTERM, then SIGKILL after 5 s; sets $status to its exit
# status, or to "killed".
stop() {
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

# logged_port LOG [PID] [TENTHS]: the port a server started with
# --http 127.0.0.1:0 logged in LOG ("listening on http://127.0.0.1:PORT"),
# waiting TENTHS tenths of a second (default 100) and no longer than PID
# lives; empty if it did not come. A LOG used before must be emptied
# before the server starts (": >LOG"): the shell truncates a redirection
# in the child, after the fork, so the old port could be read first.
logged_port() {
	_i=0
	while [ "$_i" -lt "${3:-100}" ]; do
		_p=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' \
		    "$1" 2>/dev/null | head -n 1)
		[ -n "$_p" ] && { echo "$_p"; return 0; }
		[ -n "${2-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# The Redis tests' redis-server: on the unix socket $sock, its files and
# log in $tmp, no persistence. rcli ARGS...: redis-cli on it.
# start_redis: starts one (its pid in $rpid), 0 once it answers PING
# (5 s at most).
rcli() {
	redis-cli -s "$sock" "$@"
}

start_redis() {
	# (DEBUG SLEEP, from here only: a test holds Redis still with it.)
	redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
	    --enable-debug-command local --dir "$tmp" >>"$tmp/redis.log" 2>&1 &
	rpid=$!
	_i=0
	while [ $_i -lt 50 ]; do
		[ "$(rcli ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# redis_test NAME: what the Redis tests begin with: $tmp (a new
# directory, mcp-NAME.*), $sock in it, and redis-server started there (its
# check); at exit every process in $npid, $rpid, $pids and $cpids is
# killed and $tmp removed.
redis_test() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-$1.XXXXXX") || exit 1
	sock=$tmp/redis.sock
	rpid=
	npid=
	pids=
	cpids=
	trap redis_cleanup EXIT
	trap 'redis_cleanup; exit 1' INT TERM HUP
	OK_TAIL=30
	start_redis
	ok $? "redis-server $(redis-server --version |
	    sed 's/.* v=\([^ ]*\).*/\1/') on $sock" "$tmp/redis.log"
}

redis_cleanup() {
	for _p in $npid $rpid $pids $cpids; do
		kill -KILL "$_p" 2>/dev/null
	done
	rm -rf "$tmp"
}

# redis_up N FILE...: waits (5 s at most) for N lines "redis: connection
# to ... up" in the FILEs (the instances' logs): 0 once they are there.
redis_up() {
	_want=$1
	shift
	_i=0
	while [ $_i -lt 50 ] && [ "$(cat "$@" | grep -c 'redis: connection to .* up')" -lt "$_want" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ "$(cat "$@" | grep -c 'redis: connection to .* up')" -ge "$_want" ]
}

# need_nginx: $nginx, the nginx binary (on PATH or in an sbin), or bail.
need_nginx() {
	nginx=$(command -v nginx 2>/dev/null)
	[ -n "$nginx" ] || for _p in /usr/sbin/nginx /usr/local/sbin/nginx; do
		[ -x "$_p" ] && nginx=$_p && break
	done
	[ -n "$nginx" ] || bail "nginx is installed (tools/bootstrap.sh test)"
}

# free_port: a TCP port free on 127.0.0.1 just now.
free_port() {
	node -e 'const s = require("net").createServer();
	    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# start_nginx CONF URL: nginx in the background ($npid), one process with
# $tmp/nginx.conf (nginx_main) including CONF, its logs in $tmp; then
# waits up to 5 s for URL to answer: 0 once it does.
start_nginx() {
	nginx_main "$tmp" "$1"
	"$nginx" -p "$tmp/" -c "$tmp/nginx.conf" -e "$tmp/error.log" \
	    </dev/null >"$tmp/nginx.out" 2>&1 &
	npid=$!
	_i=0
	while [ $_i -lt 50 ] && ! curl -s -o /dev/null --max-time 1 "$2"; do
		sleep 0.1
		_i=$((_i + 1))
	done
	curl -s -o /dev/null --max-time 1 "$2"
}

# nginx_main DIR CONF...: DIR/nginx.conf, an nginx main config for one
# process in the foreground that keeps every file it writes in DIR and
# includes each server-block file CONF.
nginx_main() {
	_d=$1
	shift
	{
		cat <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $_d/nginx.pid;
error_log $_d/error.log info;
events {
    worker_connections 1024;
}
http {
    access_log $_d/access.log;
    client_body_temp_path $_d/body;
    proxy_temp_path $_d/proxy;
    fastcgi_temp_path $_d/fastcgi;
    uwsgi_temp_path $_d/uwsgi;
    scgi_temp_path $_d/scgi;
EOF
		for _c in "$@"; do
			echo "    include $_c;"
		done
		echo "}"
	} >"$_d/nginx.conf"
}
