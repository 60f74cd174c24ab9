#!/bin/sh
# flags.sh: the command line of a server with flags of its own
# (build/flags-server, test/flags-server.c: --db, required, --port, an
# integer, --readonly and --cache, booleans, --token, whose variable is
# FLAGS_API_TOKEN, --quiet-sql, which has none), run as a process: --help
# lists them beside the standard ones; flag beats environment beats
# default, as a tool reads them on a worker thread (through mcp-call);
# a missing required flag or a bad value exits 2 naming it; and the
# standard options from the environment: MCP_HTTP really listens,
# MCP_LOG_LEVEL sets the level, MCP_MAX_MESSAGE the size limit, the
# command line winning over each; mcp-gateway configured by MCP_HTTP does
# not hand it to its child. Prints TAP.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

S=$MCP_BUILD/flags-server
CALL=$MCP_BUILD/mcp-call
need_built "$S" "$CALL"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-flags.XXXXXX") || exit 1
pid=
trap 'stop "$pid"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# Variables of the caller's that would change what is tested.
unset FLAGS_TEST_DB FLAGS_TEST_PORT FLAGS_TEST_READONLY FLAGS_TEST_CACHE \
    FLAGS_API_TOKEN FLAGS_TEST_TOKEN FLAGS_TEST_QUIET_SQL \
    FLAGS_SERVER_PREFIX ALT_DB MCP_HTTP MCP_LOG_LEVEL MCP_MAX_MESSAGE \
    MCP_STDIO MCP_WORKERS

# has FILE TEXT: FILE holds the fixed string TEXT.
has() {
	grep -qF -- "$2" "$1"
}

# exits WANT CMD...: runs CMD with stdin on /dev/null, stdout into
# $tmp/out and stderr into $tmp/err, its status after both; true when it
# is WANT.
exits() {
	_want=$1
	shift
	"$@" < /dev/null > "$tmp/out" 2> "$tmp/err"
	_rc=$?
	echo "exit $_rc" >> "$tmp/err"
	[ "$_rc" -eq "$_want" ]
}

# ---- --help ----------------------------------------------------------------

exits 0 "$S" --help
ok $? "--help exits 0 without the required --db" "$tmp/err"
cp "$tmp/out" "$tmp/help"
head -n 1 "$tmp/help" | grep -q '^usage: flags-server --db VALUE \[--stdio\]'
ok $? "its usage line names the required --db" "$tmp/help"
has "$tmp/help" "Options of flags-server:"
ok $? "a section for the server's own flags" "$tmp/help"
for line in \
    "  --db VALUE              the database file (required; env FLAGS_TEST_DB)" \
    "  --port N                the database server's port (default: 5432;" \
    "                          env FLAGS_TEST_PORT)" \
    "  --readonly              refuse every write (env FLAGS_TEST_READONLY)" \
    "  --token VALUE           the API token (env FLAGS_API_TOKEN)" \
    "  --quiet-sql             log no SQL"; do
	grep -qxF -- "$line" "$tmp/help"
	ok $? "--help: \"$line\"" "$tmp/help"
done
# The long help wraps before column 80, continued at column 26.
grep -q '^  --cache                 keep query results in memory' \
    "$tmp/help" &&
    grep -q '^                          .*(default: true; env FLAGS_TEST_CACHE)$' \
    "$tmp/help"
ok $? "--cache: its long help wrapped, its default and variable last" \
    "$tmp/help"
awk 'length > 79 { bad = 1; print } END { exit bad }' "$tmp/help" \
    > "$tmp/long"
ok $? "no line of --help is longer than 79" "$tmp/long"
sed -n '/^Standard options:/,$p' "$tmp/help" > "$tmp/std"
has "$tmp/std" "  --http ADDR:PORT" && has "$tmp/std" "  --max-message BYTES"
ok $? "then the standard options, --http and --max-message among them" \
    "$tmp/help"
has "$tmp/std" "MCP_ and its name in capitals" && has "$tmp/std" "MCP_HTTP"
ok $? "and how to set them from the environment" "$tmp/std"

# ---- usage errors ------------------------------------------------------------

exits 2 "$S"
ok $? "no --db: exit 2" "$tmp/err"
has "$tmp/err" "flags-server: --db is required (or FLAGS_TEST_DB in the environment)"
ok $? "the message names --db and FLAGS_TEST_DB" "$tmp/err"
has "$tmp/err" "usage: flags-server --db VALUE"
ok $? "then the usage line" "$tmp/err"
[ ! -s "$tmp/out" ]
ok $? "and nothing on stdout" "$tmp/out"

exits 2 "$S" --db x --port 12ab
ok $? "--port 12ab: exit 2" "$tmp/err"
has "$tmp/err" 'flags-server: --port: expected an integer, not "12ab"'
ok $? "the message names --port" "$tmp/err"

FLAGS_TEST_PORT=twelve exits 2 "$S" --db x
ok $? "FLAGS_TEST_PORT=twelve: exit 2" "$tmp/err"
has "$tmp/err" 'FLAGS_TEST_PORT (--port): expected an integer, not "twelve"'
ok $? "the message names the variable and --port" "$tmp/err"

exits 2 "$S" --db x --readonly=perhaps
ok $? "--readonly=perhaps: exit 2" "$tmp/err"
has "$tmp/err" "--readonly: expected true or false"
ok $? "the message names --readonly" "$tmp/err"

MCP_WORKERS=many exits 2 "$S" --db x
ok $? "MCP_WORKERS=many: exit 2" "$tmp/err"
has "$tmp/err" 'MCP_WORKERS (--workers): bad value "many"'
ok $? "the message names MCP_WORKERS" "$tmp/err"

# ---- flag, then environment, then default ---------------------------------

# values NAME CMD...: the flags tool's answer, through mcp-call, into
# $tmp/NAME.
values() {
	_n=$1
	shift
	timeout 20 "$CALL" call flags -- "$@" > "$tmp/$_n" 2> "$tmp/$_n.err"
}

values defaults "$S" --db cli.db
ok $? "mcp-call call flags -- flags-server --db cli.db" "$tmp/defaults.err"
for kv in db=cli.db port=5432 port-text=5432 readonly=0 cache=1 \
    token='(none)' quiet-sql=0; do
	grep -qxF "$kv" "$tmp/defaults"
	ok $? "no variables: $kv" "$tmp/defaults"
done

FLAGS_TEST_DB=env.db FLAGS_TEST_PORT=7 FLAGS_TEST_READONLY=yes \
    FLAGS_TEST_CACHE=no FLAGS_API_TOKEN=s3cret FLAGS_TEST_TOKEN=wrong \
    FLAGS_TEST_QUIET_SQL=1 values env "$S" --port 9 --readonly=false
ok $? "with every variable set, and --port 9 --readonly=false" \
    "$tmp/env.err"
for kv in db=env.db port=9 readonly=0 cache=0 token=s3cret quiet-sql=0; do
	grep -qxF "$kv" "$tmp/env"
	ok $? "environment and flags: $kv" "$tmp/env"
done

FLAGS_TEST_DB=env.db FLAGS_TEST_CACHE=no values cli "$S" --db=cli.db \
    --cache --token=t
ok $? "with FLAGS_TEST_DB, FLAGS_TEST_CACHE, and --db=cli.db --cache" \
    "$tmp/cli.err"
for kv in db=cli.db cache=1 token=t; do
	grep -qxF "$kv" "$tmp/cli"
	ok $? "the flag over the variable: $kv" "$tmp/cli"
done

FLAGS_SERVER_PREFIX=ALT ALT_DB=alt.db FLAGS_TEST_DB=no.db values alt "$S"
ok $? "mcp_server_set_env_prefix(srv, \"ALT\"), ALT_DB set" "$tmp/alt.err"
grep -qxF db=alt.db "$tmp/alt"
ok $? "db from ALT_DB" "$tmp/alt"

# ---- the standard options from the environment ------------------------------

MCP_HTTP=127.0.0.1:0 "$S" --db http.db < /dev/null > "$tmp/http.out" \
    2> "$tmp/http.err" &
pid=$!
port=$(logged_port "$tmp/http.err" "$pid")
[ -n "$port" ]
ok $? "MCP_HTTP=127.0.0.1:0: it logs the port it listens on ($port)" \
    "$tmp/http.err"
timeout 20 "$CALL" --url "http://127.0.0.1:${port:-1}/mcp" call flags \
    > "$tmp/url" 2> "$tmp/url.err"
ok $? "mcp-call --url http://127.0.0.1:$port/mcp call flags" "$tmp/url.err"
grep -qxF db=http.db "$tmp/url"
ok $? "that port is the server's: db=http.db" "$tmp/url"
grep -qxF 'MCP_HTTP=(unset)' "$tmp/url"
ok $? "MCP_HTTP is out of its environment once read (its children's)" \
    "$tmp/url"
stop "$pid"
pid=
[ "$status" = 0 ]
ok $? "SIGTERM: it exits 0 (status $status)" "$tmp/http.err"
[ ! -s "$tmp/http.out" ]
ok $? "nothing on stdout: HTTP only, no stdio" "$tmp/http.out"

# mcp-gateway configured the same way: its child, a libmcp server on
# stdio, must not take the gateway's MCP_HTTP for its own.
GW=$MCP_BUILD/mcp-gateway
if [ -x "$GW" ]; then
	MCP_HTTP=127.0.0.1:0 "$GW" -- "$S" --db child.db < /dev/null \
	    > "$tmp/gw.out" 2> "$tmp/gw.err" &
	pid=$!
	port=$(logged_port "$tmp/gw.err" "$pid")
	timeout 20 "$CALL" --url "http://127.0.0.1:${port:-1}/mcp" call flags \
	    > "$tmp/gw" 2> "$tmp/gw.call"
	ok $? "MCP_HTTP=127.0.0.1:0 mcp-gateway -- flags-server: a call" \
	    "$tmp/gw.call"
	grep -qxF db=child.db "$tmp/gw" && grep -qxF 'MCP_HTTP=(unset)' "$tmp/gw"
	ok $? "answered by the child, on stdio, without MCP_HTTP" "$tmp/gw"
	stop "$pid"
	pid=
else
	echo "ok $((n + 1)) - # SKIP $GW not built"
	n=$((n + 1))
fi

exits 0 "$S" --db x
! has "$tmp/err" "info: "
ok $? "by default no info lines" "$tmp/err"
MCP_LOG_LEVEL=info exits 0 "$S" --db x
has "$tmp/err" "info: flags-test 1.0.0 on stdio"
ok $? "MCP_LOG_LEVEL=info: info lines" "$tmp/err"
MCP_LOG_LEVEL=info exits 0 "$S" --db x --log-level warn
! has "$tmp/err" "info: "
ok $? "MCP_LOG_LEVEL=info --log-level warn: none" "$tmp/err"
MCP_LOG_LEVEL=chatty exits 2 "$S" --db x
ok $? "MCP_LOG_LEVEL=chatty: exit 2" "$tmp/err"
has "$tmp/err" 'MCP_LOG_LEVEL (--log-level): unknown level "chatty"'
ok $? "the message names MCP_LOG_LEVEL" "$tmp/err"

# A ping of about 300 bytes, under a 200-byte limit, then a 4096-byte one.
pad=$(printf '%0300d' 0)
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
init=$init'{"protocolVersion":"2025-06-18","capabilities":{},'
init=$init'"clientInfo":{"name":"flags.sh","version":"1"}}}'
ping='{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"'$pad'"}}'
printf '%s\n' "$init" "$ping" | MCP_MAX_MESSAGE=200 timeout 20 "$S" \
    --db x > "$tmp/max" 2> "$tmp/max.err"
grep '"id":2' "$tmp/max" | grep -q '"code":-32600'
ok $? "MCP_MAX_MESSAGE=200: the 300-byte ping is refused (-32600)" \
    "$tmp/max"
printf '%s\n' "$init" "$ping" | MCP_MAX_MESSAGE=200 timeout 20 "$S" \
    --db x --max-message 4096 > "$tmp/max" 2> "$tmp/max.err"
grep '"id":2' "$tmp/max" | grep -q '"result":{}'
ok $? "MCP_MAX_MESSAGE=200 --max-message 4096: it is answered" "$tmp/max"

tap_end
