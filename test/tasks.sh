#!/bin/sh
# tasks.sh: the 2025-11-25 Tasks utility (task-augmented tools/call and
# tasks/*), against build/task-server (test/task-server.c) on stdio and
# on Streamable HTTP, with the official MCP TypeScript SDK client
# (test/tasks.mjs, Node 20, from test/node/node_modules). Prints TAP
# only; the exit status is the Node script's.
#
#   test/tasks.sh [stdio|http] [basic|wait|cancel|rules|ttl|limits|timeout|legacy|drop|term] ...
#
# With MCP_BUILD=build/san (make SANITIZE=1) the time bounds are
# stretched for the slower build; test/run.sh counts the sanitizers'
# reports.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
TASK_SERVER=${TASK_SERVER:-$MCP_BUILD/task-server}
export TASK_SERVER
need_built "$TASK_SERVER"
need_sdk

case $MCP_BUILD in
*san)
	: "${MCP_TIME_SCALE:=3}"
	export MCP_TIME_SCALE
	;;
esac

node test/tasks.mjs "$@"
