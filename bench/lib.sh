# shellcheck shell=bash
#
# lib.sh: what bench/run-stdio.sh, bench/run-sse.sh, bench/run-progress.sh,
# bench/run-streamable.sh and bench/idle-sse.sh share.  Sourced by them, from the top of the tree, once they have read
# their environment; it does nothing on its own but set CFLAGS_BENCH and
# declare CMD.
#

CFLAGS_BENCH="-std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wshadow -Wstrict-prototypes"

# CMD[SERVER]: the command line that starts SERVER (see pick_servers);
# SOPTS[SERVER]: mcp-bench options for SERVER's runs alone, if any (say
# the tool to call), set by server_cmd too.
declare -A CMD SOPTS
# Runs that failed (see run_rounds and bench_end).
nfail=0

say() {
	printf '%s\n' "$*" >&2
}

# bench_files NAME: makes bench/out and build/, and names the files of this
# run bench/out/NAME-STAMP.*: RESULTS (.jsonl, the raw results, emptied),
# TABLE (.txt) and SLOG (.server.log, the servers' logs).
bench_files() {
	OUT=bench/out
	mkdir -p "$OUT" build || exit 1
	STAMP=$(date +%Y%m%d-%H%M%S)
	RESULTS=$OUT/$1-$STAMP.jsonl
	TABLE=$OUT/$1-$STAMP.txt
	SLOG=$OUT/$1-$STAMP.server.log
	: >"$RESULTS"
}

# build_one BIN SRC [LIBS]: the standalone programs need only a C compiler:
# builds BIN from SRC if make has not (or SRC is newer); exits on failure.
build_one() {
	local bin=$1 src=$2 libs=${3:-}
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		say "building $bin"
		# shellcheck disable=SC2086
		${CC:-cc} $CFLAGS_BENCH -o "$bin" "$src" $libs || exit 1
	fi
}

# make_demo: runs make if build/mcp-demo is missing.
make_demo() {
	if [ ! -x build/mcp-demo ] && [ -f Makefile ]; then
		say "build/mcp-demo missing: running make"
		make >/dev/null || say "make failed"
	fi
}

# demo_http: whether build/mcp-demo is built, with --http.
demo_http() {
	[ -x build/mcp-demo ] &&
	    build/mcp-demo --help 2>&1 | grep -q -- --http
}

# have_node MODULE...: whether $NODE runs and test/node/node_modules holds
# every MODULE.
have_node() {
	local m
	command -v "$NODE" >/dev/null 2>&1 || return 1
	for m in "$@"; do
		[ -d "test/node/node_modules/$m" ] || return 1
	done
}

# pick_servers: which servers of SERVERS can run here.  For each, the
# script's server_cmd NAME sets CMD[NAME] and succeeds, or says why not
# and fails.  Sets avail (" name" for each) and the array SV; exits if
# none can run.
pick_servers() {
	local s
	avail=""
	for s in $SERVERS; do
		server_cmd "$s" || continue
		avail="$avail $s"
	done
	read -r -a SV <<<"$avail"
	if [ ${#SV[@]} -eq 0 ]; then
		say "no server to run"
		exit 1
	fi
}

# pins: pin1, the mcp-bench options pinning client and server to
# CLIENT_CPU and SERVER_CPU (pinning needs two CPUs we may use, else
# empty), and pin64, the same when PIN64 is 1, else empty.
pins() {
	pin1="-p $CLIENT_CPU -P $SERVER_CPU"
	if [ "$(nproc)" -lt 2 ]; then
		say "fewer than 2 CPUs: not pinning"
		pin1=""
	fi
	pin64=""
	# shellcheck disable=SC2034,SC2153
	[ "$PIN64" = 1 ] && pin64=$pin1
	return 0
}

# loadavg: the three load averages.
loadavg() {
	cut -d' ' -f1-3 /proc/loadavg
}

# run_rounds LIMIT OPTS1 OPTS64 [MCP-BENCH OPTION...]: ROUNDS rounds of
# mcp-bench runs of DUR seconds, each bounded by timeout(1) at LIMIT
# seconds, with 1 and then 64 requests in flight (OPTS1 and OPTS64 being
# the mcp-bench options for each), every server of SV in each, the order
# rotating each round.  Each run's JSON line goes to RESULTS, with the
# round and exit status; failures are counted in nfail.  SOPTS[SERVER]
# adds options to that server's runs.  Sets LOAD0, the
# load average at the start.
run_rounds() {
	local limit=$1 o1=$2 o64=$3 r c n i s opts line rc
	shift 3
	LOAD0=$(loadavg)
	say "rounds $ROUNDS, $DUR s per run, servers:${avail}; raw results in $RESULTS"
	for ((r = 1; r <= ROUNDS; r++)); do
		for c in 1 64; do
			if [ "$c" = 1 ]; then
				opts=$o1
			else
				opts=$o64
			fi
			n=${#SV[@]}
			for ((i = 0; i < n; i++)); do
				s=${SV[$(((i + r) % n))]}
				# shellcheck disable=SC2086
				line=$(timeout -k 5 "$limit" build/mcp-bench -j \
				    -T 10 "$@" ${SOPTS[$s]:-} -d "$DUR" $opts \
				    -l "$s" -E "$SLOG" -- ${CMD[$s]})
				rc=$?
				if [ $rc -ne 0 ]; then
					nfail=$((nfail + 1))
					say "round $r: $s c=$c failed (exit $rc)"
				fi
				# A run that died early still gets a line, so
				# the table shows it failed.
				[ -n "$line" ] ||
				    line="{\"label\":\"$s\",\"c\":$c}"
				printf '{"round":%d,"rc":%d,%s\n' "$r" "$rc" \
				    "${line#\{}" >>"$RESULTS"
			done
		done
	done
}

# The awk functions num(LINE, KEY) and str(LINE, KEY): the number or string
# member KEY of the one-line JSON object LINE; when there is none, num
# returns the awk variable missing (empty unless set) and str "".
AWK_JSON='
function num(line, key,    m) {
	if (match(line, "\"" key "\":-?[0-9.]+") == 0)
		return missing ""
	m = substr(line, RSTART, RLENGTH)
	sub(/^[^:]*:/, "", m)
	return m + 0
}
function str(line, key,    m) {
	if (match(line, "\"" key "\":\"[^\"]*\"") == 0)
		return ""
	m = substr(line, RSTART, RLENGTH)
	sub(/^[^:]*:"/, "", m)
	sub(/"$/, "", m)
	return m
}
'

# median_table CLIENT RATIO...: the table of medians over the successful
# runs in RESULTS, per server (in the order of SV) and concurrency, to
# stdout and TABLE, with the load average (LOAD0 at the start) and then
# the RATIOs.  With CLIENT 1 it has a column for mcp-bench's own CPU per
# request.  Each RATIO is "NAME|A|B|C|FIELD|TARGET": the median FIELD of
# server A at concurrency C over that of B, with TARGET (">= X" or
# "<= X", or empty for none) met or not.
median_table() {
	local client=$1 ratios
	shift
	ratios=$(printf '%s;' "$@")
	awk -v order="${SV[*]}" -v client="$client" -v ratios="$ratios" \
	    -v load="$LOAD0 at start, $(loadavg) at end" "$AWK_JSON"'
function spread(k, f,    i, lo, hi, m) {
	lo = hi = val[k, f, 1]
	for (i = 2; i <= cnt[k]; i++) {
		if (val[k, f, i] < lo)
			lo = val[k, f, i]
		if (val[k, f, i] > hi)
			hi = val[k, f, i]
	}
	m = med[S[si], c, f]
	return m > 0 ? 50 * (hi - lo) / m : 0
}
function median(k, f,    n, i, j, t, v) {
	n = cnt[k]
	if (n == 0)
		return -1
	for (i = 1; i <= n; i++)
		v[i] = val[k, f, i]
	for (i = 2; i <= n; i++) {
		t = v[i]
		for (j = i - 1; j >= 1 && v[j] > t; j--)
			v[j + 1] = v[j]
		v[j + 1] = t
	}
	if (n % 2)
		return v[(n + 1) / 2]
	return (v[n / 2] + v[n / 2 + 1]) / 2
}
function ratio(name, a, b, c, f, target,    v) {
	if (((a, c, f) in med) && ((b, c, f) in med) && med[b, c, f] > 0) {
		v = med[a, c, f] / med[b, c, f]
		printf "%s: %.3f", name, v
		if (target != "")
			printf " (target %s: %s)", target, \
			    (substr(target, 1, 1) == ">" ? v >= substr(target, 4) + 0 : \
			    v <= substr(target, 4) + 0) ? "met" : "NOT met"
		printf "\n"
	} else
		printf "%s: n/a\n", name
}
BEGIN {
	nf = split("rps p50_us p99_us server_cpu_us " \
	    (client ? "client_cpu_us " : "") "idle_rss_kib peak_rss_kib",
	    F, " ")
}
{
	k = str($0, "label") SUBSEP num($0, "c")
	tot[k]++
	if (num($0, "rc") != 0)
		next
	cnt[k]++
	for (i = 1; i <= nf; i++)
		val[k, F[i], cnt[k]] = num($0, F[i])
}
END {
	ns = split(order, S, " ")
	# The server column fits the longest name, 9 at least.
	w = 9
	for (si = 1; si <= ns; si++)
		if (length(S[si]) > w)
			w = length(S[si])
	sfmt = "%-" w "s"
	printf sfmt " %4s %10s %6s %9s %9s %11s", "server", "c", "req/s",
	    "+-%", "p50 us", "p99 us", "cpu us/req"
	if (client)
		printf " %10s", "client us"
	printf " %9s %9s %6s\n", "idle KiB", "peak KiB", "ok"
	for (c = 1; c <= 64; c += 63)
		for (si = 1; si <= ns; si++) {
			k = S[si] SUBSEP c
			if (!(k in tot))
				continue
			if (cnt[k] == 0) {
				printf sfmt " %4d %10s %6s %9s %9s %11s",
				    S[si], c, "-", "-", "-", "-", "-"
				if (client)
					printf " %10s", "-"
				printf " %9s %9s %3d/%d\n", "-", "-", 0, tot[k]
				continue
			}
			for (j = 1; j <= nf; j++)
				med[S[si], c, F[j]] = median(k, F[j])
			printf sfmt " %4d %10.0f %6.0f %9.1f %9.1f %11.2f",
			    S[si], c, med[S[si], c, "rps"], spread(k, "rps"),
			    med[S[si], c, "p50_us"], med[S[si], c, "p99_us"],
			    med[S[si], c, "server_cpu_us"]
			if (client)
				printf " %10.2f", med[S[si], c, "client_cpu_us"]
			printf " %9d %9d %3d/%d\n", med[S[si], c, "idle_rss_kib"],
			    med[S[si], c, "peak_rss_kib"], cnt[k], tot[k]
		}
	print ""
	print "+-% is half the range of req/s over the runs, relative to the median."
	if (client)
		print "client us is mcp-bench\047s own CPU per request."
	print "load average: " load
	print ""
	nr = split(ratios, R, ";")
	for (ri = 1; ri <= nr; ri++)
		if (split(R[ri], P, "|") >= 5)
			ratio(P[1], P[2], P[3], P[4] + 0, P[5], P[6])
}
' "$RESULTS" | tee "$TABLE"
}

# bench_end: says where the table is, and exits 1 if any run failed.
bench_end() {
	say "table in $TABLE"
	[ "$nfail" -eq 0 ] || { say "$nfail run(s) failed"; exit 1; }
	exit 0
}
