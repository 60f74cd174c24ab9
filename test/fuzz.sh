#!/bin/sh
# fuzz.sh: replays every input kept for the libFuzzer harnesses (the
# seeds, and each crash a run has found, in test/fuzz/corpus/NAME) under
# AddressSanitizer and UndefinedBehaviorSanitizer, once each: make check
# does not fuzz (make fuzz does), it makes sure that nothing once found
# comes back. One assertion per harness: it builds, and it runs its
# inputs without a crash or a broken property. Prints TAP only.
set -u
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

command -v clang >/dev/null 2>&1 || bail "clang is installed (tools/bootstrap.sh test)"
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT HUP INT TERM
if ! make --no-print-directory fuzz-build >"$log" 2>&1; then
	sed 's/^/# /' "$log" | tail -30
	bail "the fuzzers build (make fuzz-build)"
fi
for f in $(sed -n 's/^FUZZERS = //p' Makefile); do
	count=$(ls test/fuzz/corpus/"$f" | wc -l)
	# Files as arguments: each runs once, no fuzzing.
	ASAN_OPTIONS=detect_leaks=1 timeout 300 build/fuzz/fuzz_"$f" \
	    test/fuzz/corpus/"$f"/* >"$log" 2>&1
	ok $? "fuzz_$f: its $count inputs run clean" "$log"
done
tap_end
