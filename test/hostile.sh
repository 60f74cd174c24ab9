#!/bin/sh
# hostile.sh: build/mcp-demo against a hostile or careless stdio client
# (test/hostile.mjs, Node 20, no npm packages). Prints TAP only; the exit
# status is the Node script's (0 when every assertion passed).
#
#   test/hostile.sh [NAME ...]	run only the groups whose names contain NAME
set -u
cd "$(dirname "$0")/.." || exit 1

if ! command -v node >/dev/null 2>&1; then
	echo "not ok 1 - node (20 or later) is installed"
	echo "1..1"
	exit 1
fi
if [ ! -x build/mcp-demo ]; then
	echo "not ok 1 - build/mcp-demo is built"
	echo "1..1"
	exit 1
fi
exec node test/hostile.mjs "$@"
