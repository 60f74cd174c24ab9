#!/bin/sh
# features.sh: progress notifications, logging/setLevel, tool timeouts and
# a few hostile inputs against build/mcp-demo, on stdio and on the legacy
# HTTP+SSE transport (test/features.mjs, Node 20, with the official MCP
# TypeScript SDK from test/node/node_modules). Prints TAP only; the exit
# status is the Node script's (0 when every assertion passed).
#
#   test/features.sh [stdio|sse] [sdk|raw|timeout] ...
#			(run from anywhere; arguments pick transports and
#			 groups, default all)
set -u
cd "$(dirname "$0")/.." || exit 1

if ! command -v node >/dev/null 2>&1; then
	echo "not ok 1 - node (20 or later) is installed"
	echo "1..1"
	exit 1
fi
if [ ! -x "${MCP_DEMO:-build/mcp-demo}" ]; then
	echo "not ok 1 - ${MCP_DEMO:-build/mcp-demo} is built"
	echo "1..1"
	exit 1
fi

# The SDK client lives in test/node/node_modules; install it from the
# lock file if it is missing.
if [ ! -d test/node/node_modules/@modelcontextprotocol/sdk ]; then
	log=$(mktemp) || exit 1
	if ! npm ci --no-audit --no-fund --loglevel=error --prefix test/node \
	    >"$log" 2>&1; then
		echo "not ok 1 - npm ci in test/node (installs the MCP SDK)"
		sed 's/^/# /' "$log"
		echo "1..1"
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
fi

exec node test/features.mjs "$@"
