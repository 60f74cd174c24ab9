#!/bin/sh
# notes.sh: examples/notes-server.c (build/notes-server) with the official
# MCP TypeScript SDK client (test/notes.mjs, Node 20, from
# test/node/node_modules), on stdio, Streamable HTTP and the legacy
# HTTP+SSE transport: the declared schemas, a round trip, refused
# arguments, 40 concurrent add_note, the resources, completion and the
# prompt. Prints TAP only; the exit status is the Node script's.
#
#   test/notes.sh [stdio|http|sse] ...
#
# With MCP_BUILD=build/san (make SANITIZE=1) the sanitizers' reports go
# to a directory of their own, and any report fails the run.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
NOTES_SERVER=${NOTES_SERVER:-$MCP_BUILD/notes-server}
export NOTES_SERVER
need_built "$NOTES_SERVER"
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

node test/notes.mjs "$@"
