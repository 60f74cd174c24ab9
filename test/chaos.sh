#!/bin/sh
# chaos.sh: examples/conformance-server built with AddressSanitizer and
# UndefinedBehaviorSanitizer (build/asan/, by this script) under 20 s of
# random Streamable HTTP traffic from 30 clients (test/chaos.mjs: every
# tool, requests to the client answered or not, streams dropped and
# resumed, made-up Last-Event-IDs, cancellations, garbage, DELETEs, aborts
# at random moments), then SIGTERM. Asserts: the sanitizers report
# nothing (leaks included), the server exits 0 on SIGTERM within its
# grace period, no request got a 5xx, and the traffic really flowed.
# Prints TAP only.
#
# Environment: CHAOS_SECONDS (20), CHAOS_SEED (1).
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
[ -f config.mk ] || bail "config.mk exists (make has run ./configure)"
secs=${CHAOS_SECONDS:-20}
seed=${CHAOS_SEED:-1}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# The flags come from config.mk, as the Makefile's.
eval "$(sed -n 's/^\([A-Z_]*\) = \(.*\)$/\1="\2"/p' config.mk)"
mkdir -p build/asan
# shellcheck disable=SC2086
if ! ${CC:-cc} -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=undefined -D_GNU_SOURCE -Iinclude -Isrc \
    $JANSSON_CFLAGS $MHD_CFLAGS $EV_CFLAGS src/*.c examples/conformance-server.c \
    -o build/asan/conformance-server $JANSSON_LIBS $MHD_LIBS $EV_LIBS \
    -lpthread -lm >"$tmp/cc.log" 2>&1; then
	sed 's/^/# /' "$tmp/cc.log"
	bail "build/asan/conformance-server builds"
fi

ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1 \
    build/asan/conformance-server --http 127.0.0.1:0 --grace-ms 3000 \
    2>"$tmp/server.log" &
pid=$!
port=
i=0
while [ -z "$port" ] && [ $i -lt 100 ]; do
	port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' \
	    "$tmp/server.log" 2>/dev/null | head -1)
	sleep 0.1
	i=$((i + 1))
done
[ -n "$port" ] || { sed 's/^/# /' "$tmp/server.log"; bail "the server starts"; }

timeout $((secs + 90)) node test/chaos.mjs "$port" "$secs" "$seed" >"$tmp/stats" 2>"$tmp/client.log"
crc=$?
kill -TERM "$pid"
t0=$(date +%s)
wait "$pid"
rc=$?
t1=$(date +%s)
stats=$(cat "$tmp/stats")

[ "$crc" -eq 0 ]
ok $? "the chaos client ran to its end (exit $crc)"
[ "$rc" -eq 0 ] && [ $((t1 - t0)) -le 8 ]
ok $? "SIGTERM: the server exits 0 within its grace period (exit $rc after $((t1 - t0)) s)"
if grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$tmp/server.log"; then
	ok 1 "the sanitizers reported nothing"
	grep -A30 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' \
	    "$tmp/server.log" | head -60 | sed 's/^/#   /'
else
	ok 0 "the sanitizers reported nothing"
fi
echo "$stats" | grep -q '"5[0-9][0-9]"'
[ $? -ne 0 ]
ok $? "no request got a 5xx: $stats"
total=$(echo "$stats" | sed -n 's/.*"req":\([0-9]*\).*/\1/p')
c200=$(echo "$stats" | sed -n 's/.*"200":\([0-9]*\).*/\1/p')
c202=$(echo "$stats" | sed -n 's/.*"202":\([0-9]*\).*/\1/p')
[ "${total:-0}" -ge 300 ] && [ "${c200:-0}" -ge 100 ] && [ "${c202:-0}" -ge 50 ]
ok $? "the traffic flowed: ${total:-0} requests, ${c200:-0} answered 200, ${c202:-0} accepted 202"
tap_end
