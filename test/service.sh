#!/bin/sh
# service.sh: a libmcp server run as a service (test/service.mjs, Node
# 20, no npm packages): /metrics read by a strict Prometheus parser and
# matched to scripted traffic, --metrics-listen beside stdio, JSON logs by
# request id behind a real nginx, socket activation and the notify socket
# the way systemd does them (build/sdrun), and SIGHUP's token rotation and
# log reopening. Prints TAP only; the exit status is the Node script's.
#
#   test/service.sh [NAME ...]	run only the groups whose names contain NAME
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO" "${MCP_BUILD:-build}/sdrun"
exec node test/service.mjs "$@"
