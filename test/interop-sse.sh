#!/bin/sh
# interop-sse.sh: the reference server (build/mcp-demo) over the legacy
# HTTP+SSE transport against the official MCP TypeScript SDK's
# SSEClientTransport, directly (test/nginx.sh runs the same script through
# nginx). Prints TAP only; the exit status is the Node script's (0 when
# every assertion passed).
#
#   test/interop-sse.sh [server]	(run from anywhere; paths are
#					 relative to the repo root)
set -u
cd "$(dirname "$0")/.." || exit 1

server=${1:-build/mcp-demo}

if ! command -v node >/dev/null 2>&1; then
	echo "1..0 # SKIP node not found"
	exit 0
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

# One keepalive a second and 3 s idle: the keepalive checks without a long
# wait (test/nginx.sh does the long idle through the proxy).
exec node test/node/sse-interop.mjs --keepalive 1 --idle 3 "$server"
