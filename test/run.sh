#!/bin/sh
# run.sh: runs every test of libmcp and ends with one line
# "N passed, N failed", counting TAP assertions. Each test is a program
# ($MCP_BUILD/t_*) or a script (test/*.sh) that prints TAP; a test that dies
# without a plan, or exits non-zero without a failed assertion, counts as
# one failure. Logs go to test/out/NAME.log; only failures are shown.
# test/lib.sh is no test: the scripts source it.
cd "$(dirname "$0")/.." || exit 1
mkdir -p test/out
passed=0
failed=0
limit=${TEST_TIMEOUT:-600}

# The build under test (make check SANITIZE=1: build/san); the scripts
# find its programs through these.
B=${MCP_BUILD:-build}
MCP_DEMO=$B/mcp-demo
FEAT_SERVER=$B/feat-server
CONFORMANCE_SERVER=$B/conformance-server
export MCP_BUILD=$B MCP_DEMO FEAT_SERVER CONFORMANCE_SERVER
# Sanitizer builds report into test/out/san/, whichever process found
# what (servers a test started, killed or not); any report is a failure.
san=test/out/san
if [ -n "${MCP_SANITIZE-}" ]; then
	rm -rf "$san"
	mkdir -p "$san"
	export ASAN_OPTIONS="log_path=$PWD/$san/asan:detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS-}"
	export UBSAN_OPTIONS="log_path=$PWD/$san/ubsan:print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS-}"
	export TSAN_OPTIONS="log_path=$PWD/$san/tsan:halt_on_error=0:${TSAN_OPTIONS-}"
fi

# Tests that mostly wait (calls of minutes) run beside the others: started
# first, counted last.
background="test/long.sh test/client-long.sh"
for t in $background; do
	name=$(basename "$t" .sh)
	rm -f "test/out/$name.rc"
	(
		start=$(date +%s)
		timeout -k 10 "$limit" sh "$t" >"test/out/$name.log" \
		    2>"test/out/$name.log.err"
		echo "$? $(( $(date +%s) - start ))" >"test/out/$name.rc"
	) &
done

# result T RC SECS: counts T's TAP log and prints its line.
result() {
	t=$1
	rc=$2
	secs=$3
	name=$(basename "$t" .sh)
	log=test/out/$name.log
	p=$(grep -c '^ok ' "$log")
	# TAP: a "not ok ... # TODO" is a known gap, said, not a failure;
	# its count is printed with the test's line.
	f=$(grep '^not ok ' "$log" | grep -vc '# TODO')
	todo=$(grep -c '^not ok .*# TODO' "$log")
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
	if [ "$f" -eq 0 ] && [ "$todo" -gt 0 ]; then
		printf '%-24s ok   %4d assertions  %3ds  (%d todo)\n' "$name" \
		    "$p" "$secs" "$todo"
	elif [ "$f" -eq 0 ]; then
		printf '%-24s ok   %4d assertions  %3ds\n' "$name" "$p" "$secs"
	else
		printf '%-24s FAIL %4d failed%s\n' "$name" "$f" "$extra"
		grep -v '# TODO' "$log" | grep -A3 '^not ok ' | head -40 |
		    sed 's/^/    /'
		tail -5 "$log.err" | sed 's/^/    stderr: /'
	fi
}

# Tests that build and run their own sanitizer builds whatever the build
# under test is (tsan.sh: build/tsan; fuzz.sh: the libFuzzer harnesses
# under ASan and UBSan; chaos.sh: build/san's conformance-server): the
# same work in either pass, so the plain pass runs them and the sanitizer
# pass (make check SANITIZE=1) says so.
own_build="test/tsan.sh test/fuzz.sh test/chaos.sh"

# Foreground tests run $jobs at a time (most of their time is waiting on
# servers, sleeps and timeouts); those that keep both cores busy on their
# own run alone. Results print in the order of the list, as they end.
jobs=${TEST_JOBS:-2}
alone="test/tsan.sh test/fuzz.sh test/chaos.sh test/static.sh"
alone="$alone test/valgrind.sh test/install.sh"
queue=
for t in "$B"/t_* test/*.sh; do
	case $t in test/run.sh | test/lib.sh) continue ;; esac
	case " $background " in *" $t "*) continue ;; esac
	[ -x "$t" ] || [ "${t%.sh}" != "$t" ] || continue
	queue="$queue $t"
done

# start T: runs T in the background; its exit status and seconds go to
# test/out/NAME.rc.
start() {
	name=$(basename "$1" .sh)
	rm -f "test/out/$name.rc"
	(
		s=$(date +%s)
		case $1 in
		*.sh) timeout -k 10 "$limit" sh "$1" >"test/out/$name.log" \
		    2>"test/out/$name.log.err" ;;
		*) timeout -k 10 "$limit" "$1" >"test/out/$name.log" \
		    2>"test/out/$name.log.err" ;;
		esac
		echo "$? $(( $(date +%s) - s ))" >"test/out/$name.rc.tmp"
		mv "test/out/$name.rc.tmp" "test/out/$name.rc"
	) &
}

# running: how many started tests have not ended. (result sets t, name,
# rc and others: the loop below keeps its test in cur.)
running() {
	n=0
	for r in $started; do
		[ -f "test/out/$(basename "$r" .sh).rc" ] || n=$((n + 1))
	done
	echo $n
}

# report: prints, in order, the results of the started tests that have
# ended, up to the first that has not.
report() {
	while [ -n "$started" ]; do
		r=${started%% *}
		rcf=test/out/$(basename "$r" .sh).rc
		[ -f "$rcf" ] || return 0
		read -r rc secs <"$rcf" || { rc=1; secs=0; }
		result "$r" "$rc" "$secs"
		started=${started#"$r"}
		started=${started# }
	done
}

started=
for cur in $queue; do
	if [ -n "${MCP_SANITIZE-}" ] && case " $own_build " in *" $cur "*) true ;; *) false ;; esac; then
		# Its line comes in its turn, after those started before it.
		while [ "$(running)" -gt 0 ]; do report; sleep 0.2; done
		report
		printf '%-24s --   its own sanitizer build: run by the plain pass\n' \
		    "$(basename "$cur" .sh)"
		continue
	fi
	case " $alone " in
	*" $cur "*) max=0 ;;
	*) max=$((jobs - 1)) ;;
	esac
	while [ "$(running)" -gt "$max" ]; do report; sleep 0.2; done
	start "$cur"
	started="${started:+$started }$cur"
	case " $alone " in
	*" $cur "*) while [ "$(running)" -gt 0 ]; do report; sleep 0.2; done ;;
	esac
	report
done
while [ -n "$started" ]; do report; sleep 0.2; done
wait
for t in $background; do
	name=$(basename "$t" .sh)
	read -r rc secs <"test/out/$name.rc" || { rc=1; secs=0; }
	result "$t" "$rc" "$secs"
done
if [ -n "${MCP_SANITIZE-}" ]; then
	reports=$(ls "$san" 2>/dev/null | wc -l)
	if [ "$reports" -eq 0 ]; then
		printf '%-24s ok   %4d assertions\n' "sanitizer reports" 1
		passed=$((passed + 1))
	else
		printf '%-24s FAIL %4d reports in %s\n' "sanitizer reports" \
		    "$reports" "$san"
		for r in "$san"/*; do
			grep -m3 -E 'ERROR|runtime error|WARNING' "$r" |
			    sed "s|^|    $(basename "$r"): |"
		done | head -40
		failed=$((failed + reports))
	fi
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
