#!/bin/sh
# tasks-ext.sh: the Tasks extension io.modelcontextprotocol/tasks of
# protocol 2026-07-28, on stdio and Streamable HTTP, against
# build/task-server (test/tasks-ext.mjs: raw requests, since no npm SDK
# speaks 2026-07-28): CreateTaskResult, tasks/get, tasks/update,
# tasks/cancel, -32021, the routing header, the subject a task is bound
# to, the limits and the drain. test/tasks.sh covers 2025-11-25. Prints
# TAP only; the exit status is the Node script's. About 10 s.
#
#   test/tasks-ext.sh [GROUP ...]	only the groups whose names contain
#					GROUP (stdioTasks, httpTasks, httpAuth)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
TASK_SERVER=${TASK_SERVER:-$MCP_BUILD/task-server}
export TASK_SERVER
need_built "$TASK_SERVER"

case $MCP_BUILD in
*san)
	: "${MCP_TIME_SCALE:=3}"
	export MCP_TIME_SCALE
	;;
esac

exec node test/tasks-ext.mjs "$@"
