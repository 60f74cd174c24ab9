#!/bin/sh
# run.sh: runs every test of libmcp and ends with one line
# "N passed, N failed", counting TAP assertions. Each test is a program
# (build/t_*) or a script (test/*.sh) that prints TAP; a test that dies
# without a plan, or exits non-zero without a failed assertion, counts as
# one failure. Logs go to test/out/NAME.log; only failures are shown.
# test/lib.sh is no test: the scripts source it.
cd "$(dirname "$0")/.." || exit 1
mkdir -p test/out
passed=0
failed=0
limit=${TEST_TIMEOUT:-600}

for t in build/t_* test/*.sh; do
	case $t in test/run.sh | test/lib.sh) continue ;; esac
	[ -x "$t" ] || [ "${t%.sh}" != "$t" ] || continue
	name=$(basename "$t" .sh)
	log=test/out/$name.log
	start=$(date +%s)
	case $t in
	*.sh) timeout -k 10 "$limit" sh "$t" >"$log" 2>"$log.err" ;;
	*) timeout -k 10 "$limit" "$t" >"$log" 2>"$log.err" ;;
	esac
	rc=$?
	secs=$(( $(date +%s) - start ))
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	plan=$(grep -c '^1\.\.[0-9]' "$log")
	extra=
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		extra=" (exit $rc)"
	elif [ "$plan" -eq 0 ]; then
		f=$((f + 1))
		extra=" (no plan: died early?)"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$f" -eq 0 ]; then
		printf '%-24s ok   %4d assertions  %3ds\n' "$name" "$p" "$secs"
	else
		printf '%-24s FAIL %4d failed%s\n' "$name" "$f" "$extra"
		grep -A3 '^not ok ' "$log" | head -40 | sed 's/^/    /'
		tail -5 "$log.err" | sed 's/^/    stderr: /'
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
