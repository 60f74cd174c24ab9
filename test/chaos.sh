#!/bin/sh
# chaos.sh: examples/conformance-server built with AddressSanitizer and
# UndefinedBehaviorSanitizer (build/san/) under 12 s of
# random Streamable HTTP traffic from 30 clients (test/chaos.mjs: every
# tool, requests to the client answered or not, streams dropped and
# resumed, made-up Last-Event-IDs, cancellations, garbage, DELETEs, aborts
# at random moments), then SIGTERM. Asserts: the sanitizers report
# nothing (leaks included), the server exits 0 on SIGTERM within its
# grace period, no request got a 5xx, and the traffic really flowed.
# Prints TAP only.
#
# Each seed of CHAOS_SEEDS ("1 2 3") is a run of its own, of
# CHAOS_SECONDS (12) each.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

need_node
[ -f config.mk ] || bail "config.mk exists (make has run ./configure)"
secs=${CHAOS_SECONDS:-12}
seeds=${CHAOS_SEEDS:-1 2 3}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# The sanitizer build of the server (make SANITIZE=1: build/san/, which
# make check SANITIZE=1 tests as a whole).
server=build/san/conformance-server
if ! make --no-print-directory SANITIZE=1 "$server" >"$tmp/cc.log" 2>&1; then
	sed 's/^/# /' "$tmp/cc.log"
	bail "$server builds"
fi

# run SEED: one server, one client run, SIGTERM; its assertions.
run() {
	seed=$1
	# Emptied first: the shell truncates it in the child, after the
	# fork, and logged_port would read the last seed's port meanwhile.
	: >"$tmp/server.log"
	ASAN_OPTIONS=detect_leaks=1:exitcode=99 \
	    UBSAN_OPTIONS=print_stacktrace=1 \
	    "$server" --http 127.0.0.1:0 --grace-ms 3000 \
	    2>"$tmp/server.log" &
	pid=$!
	port=$(logged_port "$tmp/server.log" "$pid")
	if [ -z "$port" ]; then
		sed 's/^/# /' "$tmp/server.log"
		ok 1 "seed $seed: the server starts"
		return
	fi
	timeout $((secs + 90)) node test/chaos.mjs "$port" "$secs" "$seed" \
	    >"$tmp/stats" 2>"$tmp/client.log"
	crc=$?
	kill -TERM "$pid"
	t0=$(date +%s)
	wait "$pid"
	rc=$?
	t1=$(date +%s)
	stats=$(cat "$tmp/stats")

	[ "$crc" -eq 0 ]
	ok $? "seed $seed: the chaos client ran to its end (exit $crc)" \
	    "$tmp/client.log"
	[ "$rc" -eq 0 ] && [ $((t1 - t0)) -le 8 ]
	ok $? "seed $seed: SIGTERM: the server exits 0 within its grace period (exit $rc after $((t1 - t0)) s)"
	if grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' \
	    "$tmp/server.log"; then
		ok 1 "seed $seed: the sanitizers reported nothing"
		grep -A30 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' \
		    "$tmp/server.log" | head -60 | sed 's/^/#   /'
	else
		ok 0 "seed $seed: the sanitizers reported nothing"
	fi
	echo "$stats" | grep -q '"5[0-9][0-9]"'
	[ $? -ne 0 ]
	ok $? "seed $seed: no request got a 5xx: $stats"
	total=$(echo "$stats" | sed -n 's/.*"req":\([0-9]*\).*/\1/p')
	c200=$(echo "$stats" | sed -n 's/.*"200":\([0-9]*\).*/\1/p')
	c202=$(echo "$stats" | sed -n 's/.*"202":\([0-9]*\).*/\1/p')
	[ "${total:-0}" -ge 200 ] && [ "${c200:-0}" -ge 60 ] && [ "${c202:-0}" -ge 30 ]
	ok $? "seed $seed: the traffic flowed: ${total:-0} requests, ${c200:-0} answered 200, ${c202:-0} accepted 202"
}

for seed in $seeds; do
	run "$seed"
done
tap_end
