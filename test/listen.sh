#!/bin/sh
# listen.sh: subscriptions/listen (protocol 2026-07-28) on Streamable
# HTTP and stdio, against build/feat-server (test/listen.mjs: raw
# requests, since no npm SDK speaks 2026-07-28): the acknowledgment, the
# notifications asked for and only those, tagged with the subscription
# id, keepalives, the end by a closed stream, by notifications/cancelled
# and by SIGTERM (a complete answer), the limits and bad params. Prints
# TAP only; the exit status is the Node script's. About 10 s.
#
#   test/listen.sh [GROUP ...]	only the groups whose names contain GROUP
#				(httpListen, httpLimits, httpMemory, stdioListen,
#				stdioEof, stdioGone)
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
need_built "$FEAT_SERVER"
exec node test/listen.mjs "$@"
