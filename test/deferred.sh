#!/bin/sh
# deferred.sh: calls finished later (mcp_call_defer(3)) and notifications
# outside a call (mcp_server_log(3)), against build/deferred-server
# (examples/deferred-server.c) and build/feat-server, on stdio and on
# Streamable HTTP, with the official MCP TypeScript SDK client
# (test/deferred.mjs, Node 20, from test/node/node_modules). Prints TAP
# only; the exit status is the Node script's.
#
#   test/deferred.sh [stdio|http] [free|cancel|timeout|term|logs|stress] ...
#
# With MCP_BUILD=build/san (make SANITIZE=1) the sanitizers' reports go
# to a directory of their own, and any report fails the run; the time
# bounds are stretched for the slower build.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
DEFERRED_SERVER=${DEFERRED_SERVER:-$MCP_BUILD/deferred-server}
export DEFERRED_SERVER
need_built "$DEFERRED_SERVER" "$FEAT_SERVER"
need_sdk

case $MCP_BUILD in
*san)
	: "${MCP_TIME_SCALE:=3}"
	export MCP_TIME_SCALE
	# test/run.sh sets the options for make check SANITIZE=1, and
	# counts the reports itself.
	if [ -z "${ASAN_OPTIONS-}" ]; then
		tmp=$(mktemp -d) || exit 1
		trap 'rm -rf "$tmp"' EXIT HUP INT TERM
		SAN_LOG_DIR=$tmp
		ASAN_OPTIONS="log_path=$tmp/asan:detect_leaks=1:abort_on_error=0"
		UBSAN_OPTIONS="log_path=$tmp/ubsan:print_stacktrace=1:halt_on_error=1"
		export SAN_LOG_DIR ASAN_OPTIONS UBSAN_OPTIONS
	fi
	;;
esac

node test/deferred.mjs "$@"
