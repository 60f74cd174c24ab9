#!/bin/sh
# http.sh: build/mcp-demo over the legacy HTTP+SSE transport, against
# docs/HTTP.md (test/http.mjs, Node 20, no npm packages): the stream and
# its headers, a session over raw HTTP, every status, isolation, floods,
# 1000 sessions, the limits, slowloris, Host/Origin checks, bearer auth,
# IPv6 and SIGTERM. Prints TAP only; the exit status is the Node script's.
#
#   test/http.sh [NAME ...]	run only the groups whose names contain NAME
#
# HTTP_TIMES=1 in the environment adds the time of each group as comments.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$MCP_DEMO"
# 1000 streams at once need about 1100 descriptors in the server and as
# many in Node (the server inherits this limit): raise the soft limit to
# 8192, or to the hard limit when that is lower.
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 8192 ]; then
	ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || :
fi
exec node test/http.mjs "$@"
