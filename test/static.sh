#!/bin/sh
# static.sh: TAP checks on the source tree, no server run. (a) the shared
# library exports exactly the functions mcp.h declares, all mcp_*; (b)
# nothing in src/ writes to stdout except main/cli.c's print_stdout, used
# for --help and --version; (c) no banned function anywhere; (d) every man
# page is clean under mandoc -Tlint -Werror; (e) the library, tools and
# tests compile with the Makefile's own flags plus -Werror; (f) every
# function in mcp.h is named in the NAME section of a man3 page; (g) the
# systemd units in docs/; (h) the layers of src/: a folder each, every
# #include naming its own layer or one below, no object using a symbol
# of a layer above.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-static.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# strip_c FILE: FILE with comments blanked and string literals emptied,
# line numbers kept, so greps see only code. Character literals stay.
strip_c() {
	perl -0777 -pe '
	    s{ (/\*.*?\*/ | //[^\n]*)
	     | ("(?:\\.|[^"\\\n])*")
	     | (\x27(?:\\.|[^\x27\\\n])*\x27) }
	     { defined $1 ? " " . ("\n" x ($1 =~ tr/\n//)) :
	       defined $2 ? "\"\"" : $3 }gsex' "$1"
}

# hits FILE ERE: "FILE:LINE:FUNCTION" for each code line of FILE matching
# ERE, FUNCTION being the definition it is in (KNF: the name starts a
# line).
hits() {
	strip_c "$1" | awk -v f="$1" -v re="$2" '
		/^[A-Za-z_][A-Za-z0-9_]*\(/ { fn = $0; sub(/\(.*/, "", fn) }
		$0 ~ re { print f ":" FNR ":" (fn != "" ? fn : "(top)") }'
}

# ---- (a) exported symbols ---------------------------------------------

# The functions mcp.h declares: every prototype, and those with MCP_EXTERN.
strip_c include/mcp.h | grep -v '^[[:space:]]*#' |
    perl -0777 -ne 's/extern\s*""\s*\{//g; s/^\}\s*$//mg;
	for (split /;/) { next if /\btypedef\b/; next unless /\(/;
	    next if /^\s*[\w\s]*\*?\s*\(\s*\*\s*\w+\s*\)\s*\(/s;	# a member
	    s/__attribute__\s*\(\(.*?\)\)//gs; print "$1\n" if /(\w+)\s*\(/ }' |
    sort -u > "$tmp/declared"
perl -0777 -ne 'while (/^MCP_EXTERN\b([^;]*);/mg) {
	print "$1\n" if $1 =~ /(\w+)\s*\(/ }' include/mcp.h |
    sort -u > "$tmp/extern"
[ -s "$tmp/extern" ]
ok $? "mcp.h declares functions with MCP_EXTERN ($(wc -l < "$tmp/extern"))"
comm -23 "$tmp/declared" "$tmp/extern" > "$tmp/noextern"
[ ! -s "$tmp/noextern" ]
ok $? "every prototype in mcp.h carries MCP_EXTERN" "$tmp/noextern"

if [ -f "$MCP_BUILD/libmcp.so" ]; then
	nm -D --defined-only "$MCP_BUILD/libmcp.so" | awk 'NF >= 3 { print $3 }' |
	    sed 's/@.*//' | sort -u > "$tmp/exported"
else
	: > "$tmp/exported"
fi
[ -s "$tmp/exported" ]
ok $? "$MCP_BUILD/libmcp.so has a dynamic symbol table"
grep -v '^mcp_' "$tmp/exported" > "$tmp/foreign"
grep '^mcp__' "$tmp/exported" >> "$tmp/foreign"
[ ! -s "$tmp/foreign" ]
ok $? "libmcp.so exports only mcp_* names, no mcp__ internals" "$tmp/foreign"
comm -23 "$tmp/extern" "$tmp/exported" > "$tmp/missing"
[ ! -s "$tmp/missing" ]
ok $? "every MCP_EXTERN function is exported" "$tmp/missing"
comm -13 "$tmp/extern" "$tmp/exported" > "$tmp/extra"
[ ! -s "$tmp/extra" ]
ok $? "every exported symbol is declared in mcp.h" "$tmp/extra"

# ---- (b) nothing writes to stdout --------------------------------------

b='(^|[^A-Za-z0-9_])'
sp='[[:space:]]*'
out_re="$b(printf|vprintf|puts|putchar|putchar_unlocked|putc)$sp[(]"
out_re="$out_re|${b}stdout([^A-Za-z0-9_]|\$)"
out_re="$out_re|$b(write|dprintf|vdprintf)$sp[(]$sp(STDOUT_FILENO|1)$sp,"
: > "$tmp/stdout"
for f in src/*/*.c src/*/*.h; do
	hits "$f" "$out_re" >> "$tmp/stdout"
done
grep -v '^src/main/cli\.c:[0-9]*:print_stdout$' "$tmp/stdout" > "$tmp/stdout.bad"
[ ! -s "$tmp/stdout.bad" ]
ok $? "src/ writes nothing to stdout outside main/cli.c's print_stdout" \
    "$tmp/stdout.bad"
grep -q '^src/main/cli\.c:[0-9]*:print_stdout$' "$tmp/stdout"
ok $? "the one exception, print_stdout, is where it is expected"
# print_stdout is static, and only --help and --version call it.
strip_c src/main/cli.c | awk '/^print_stdout\(/ { print prev } { prev = $0 }' \
    > "$tmp/ps.type"
[ "$(cat "$tmp/ps.type")" = "static void" ]
ok $? "print_stdout is a static function"
strip_c src/main/cli.c | awk '
	/^[A-Za-z_][A-Za-z0-9_]*\(/ { fn = $0; sub(/\(.*/, "", fn) }
	/^[[:space:]]*case / { label = $2 }
	/print_stdout[[:space:]]*\(/ && !/^print_stdout\(/ {
		print fn " " label
	}' \
    > "$tmp/ps.calls"
[ "$(sort -u "$tmp/ps.calls" | tr '\n' ' ')" = \
    "mcp_server_main 'V': mcp_server_main 'h': " ]
ok $? "print_stdout is called only for -h/--help and -V/--version" \
    "$tmp/ps.calls"

# ---- (c) banned functions ----------------------------------------------

for fn in sprintf vsprintf strcpy strcat strtok atoi gets; do
	: > "$tmp/banned"
	for f in src/*/*.c src/*/*.h tools/*.c test/*.c test/*.h bench/*.c \
	    examples/*.c; do
		[ -f "$f" ] || continue
		hits "$f" "(^|[^A-Za-z0-9_])$fn[[:space:]]*[(]" >> "$tmp/banned"
	done
	[ ! -s "$tmp/banned" ]
	ok $? "no $fn() in src/ tools/ test/ bench/ examples/" "$tmp/banned"
done

# ---- (d) man pages ------------------------------------------------------

if command -v mandoc >/dev/null 2>&1; then
	for page in man/*.[1-9]; do
		mandoc -Tlint -Werror "$page" > "$tmp/lint" 2>&1
		rc=$?
		[ "$rc" -eq 0 ] && [ ! -s "$tmp/lint" ]
		ok $? "mandoc -Tlint -Werror $page" "$tmp/lint"
	done
else
	echo "ok $((n + 1)) - # SKIP mandoc not installed"
	n=$((n + 1))
fi

# ---- (e) warning-free with -Werror -------------------------------------

# The compiler command make would run for TARGET after SOURCE changed,
# without running it; config.mk is a goal too, so -n stops make from
# re-running configure to remake it.
make_cmd() {
	make -n -W "$1" config.mk "$2" 2>/dev/null |
	    grep -E "^[^ ]*(cc|gcc|clang)[^ ]* .* -o $2 " | tail -1
}

mkdir -p "$tmp/o" "$tmp/j"
cmd=$(make_cmd src/core/buf.c "$MCP_BUILD/obj/core/buf.o")
flags=${cmd%% -c -o "$MCP_BUILD"/obj/core/buf.o*}
[ -n "$cmd" ] && [ "$flags" != "$cmd" ]
ok $? "library compile flags found with make -n"

# The compiles run two at a time (one a core), each into files of its
# own; their TAP lines follow in order once all have ended.
jobs=0
# job NAME FUNCTION ARG...: runs FUNCTION ARG... beside one other job.
job() {
	jobs=$((jobs + 1))
	echo "$1" > "$tmp/j/$jobs.name"
	shift
	( "$@" > "$tmp/j/$jobs.out" 2>&1; echo $? > "$tmp/j/$jobs.rc" ) &
	[ $((jobs % 2)) -ne 0 ] || wait
}
# compile_lib SRC: SRC with the library's flags.
compile_lib() {
	b=$(echo "${1#src/}" | tr / _)
	# shellcheck disable=SC2086
	$flags -Werror -c -o "$tmp/o/${b%.c}.o" "$1"
}
# compile_app SRC TARGET: SRC with the flags make uses for TARGET.
compile_app() {
	cmd=$(make_cmd "$1" "$2")
	aflags=${cmd%% -o $2 *}
	if [ -z "$cmd" ] || [ "$aflags" = "$cmd" ]; then
		echo "no command from make -n for $2"
		return 1
	fi
	# shellcheck disable=SC2086
	$aflags -Werror -c -o "$tmp/o/$(basename "$2").o" "$1"
}
app() {
	job "$1 compiles with -Werror" compile_app "$1" "$2"
}
for f in src/*/*.c; do
	job "$f compiles with -Werror" compile_lib "$f"
done
app tools/mcp-demo.c "$MCP_BUILD/mcp-demo"
app tools/mcp-call.c "$MCP_BUILD/mcp-call"
for f in tools/gateway/*.c; do
	app "$f" "$MCP_BUILD/mcp-gateway"
done
app bench/client-bench.c "$MCP_BUILD/client-bench"
app test/client-api.c "$MCP_BUILD/client-api"
app tools/mcp-bench.c "$MCP_BUILD/mcp-bench"
app bench/floor-stdio.c "$MCP_BUILD/floor-stdio"
app bench/progress-server.c "$MCP_BUILD/progress-server"
app examples/conformance-server.c "$MCP_BUILD/conformance-server"
app examples/deferred-server.c "$MCP_BUILD/deferred-server"
app examples/notes-server.c "$MCP_BUILD/notes-server"
app test/sdrun.c "$MCP_BUILD/sdrun"
app test/flags-server.c "$MCP_BUILD/flags-server"
# Built only where libcrypto is (configure).
if [ -x "$MCP_BUILD/who-server" ]; then
	app test/who-server.c "$MCP_BUILD/who-server"
fi
for f in test/t_*.c; do
	app "$f" "$MCP_BUILD/$(basename "$f" .c)"
done
wait
i=0
while [ "$i" -lt "$jobs" ]; do
	i=$((i + 1))
	[ "$(cat "$tmp/j/$i.rc" 2>/dev/null)" = 0 ]
	ok $? "$(cat "$tmp/j/$i.name")" "$tmp/j/$i.out"
done

# ---- (f) every function has a man page ---------------------------------

for page in man/*.3; do
	sed -n '/^\.Sh NAME/,/^\.Sh /p' "$page" |
	    awk '/^\.Nm/ { sub(/,$/, "", $2); print $2 }'
done | sort -u > "$tmp/named"
while read -r fn; do
	grep -qx "$fn" "$tmp/named"
	ok $? "$fn is in the NAME section of a man3 page"
done < "$tmp/declared"
comm -13 "$tmp/declared" "$tmp/named" > "$tmp/stale"
[ ! -s "$tmp/stale" ]
ok $? "every name in a man3 NAME section is a function of mcp.h" "$tmp/stale"

# ---- (g) the systemd units in docs/ -------------------------------------

unit=docs/mcp-demo.service
for d in Type=notify DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict \
    PrivateTmp=yes 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' \
    'MemoryMax=' 'ExecReload=/bin/kill -HUP $MAINPID' 'Requires=mcp-demo.socket'; do
	grep -q "^$d" "$unit"
	ok $? "$unit sets $d"
done
grep -q '^ListenStream=127\.0\.0\.1:' docs/mcp-demo.socket &&
    grep -q '^FileDescriptorName=http$' docs/mcp-demo.socket
ok $? "docs/mcp-demo.socket listens on loopback, naming its socket http"
# Every flag ExecStart gives is one the server takes (its --help lists it).
sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | grep -o -- '--[a-z-]*' | sort -u > "$tmp/flags"
"$MCP_DEMO" --help > "$tmp/help" 2>&1
: > "$tmp/unknown"
while read -r fl; do
	grep -q -- "$fl " "$tmp/help" || echo "$fl" >> "$tmp/unknown"
done < "$tmp/flags"
[ -s "$tmp/flags" ] && [ ! -s "$tmp/unknown" ]
ok $? "ExecStart's flags ($(wc -l < "$tmp/flags")) are all in mcp-demo --help" "$tmp/unknown"
grep -q -- '--http systemd' "$unit"
ok $? "ExecStart takes the socket from systemd (--http systemd)"

# ---- (h) the layers of src/ ---------------------------------------------

# One line a layer, lowest first: its folder under src/, a colon, and
# the folders below it that it may include besides its own. A layer may
# name only layers above its line, so the order has no cycle; one beside
# another (client beside server) names neither. A lower layer reaches an
# upper one only through the callbacks or ops tables the upper one
# registers (docs/ARCHITECTURE.md), never by a header or a symbol. A new
# folder needs its line here: client/ (core and rpc only) is ready, and
# nothing in src/ but main/ may include it (tools/ are programs, not
# layers).
layers='core:
rpc: core
server: core rpc
client: core rpc
transport: core rpc server
main: core rpc server client transport'

# may LAYER: the folders LAYER may include, itself first; empty for a
# folder that is no layer.
may() {
	echo "$layers" | awk -F: -v l="$1" '$1 == l {
		n = split($2, d, " "); s = l
		for (i = 1; i <= n; i++) s = s " " d[i]
		print s }'
}

echo "$layers" | awk -F: '
	{ for (i = split($2, d, " "); i > 0; i--)
		if (!(d[i] in seen))
			print $1 " may include " d[i] ", not a layer below it"
	  seen[$1] = 1 }' > "$tmp/order"
[ ! -s "$tmp/order" ]
ok $? "the layer table lists each layer after every layer it includes" \
    "$tmp/order"

ls src/*.c src/*.h 2>/dev/null > "$tmp/top"
[ ! -s "$tmp/top" ]
ok $? "no source or header stays at the top of src/: each is in its layer" \
    "$tmp/top"

: > "$tmp/unknown"
for d in src/*/; do
	l=$(basename "$d")
	[ -n "$(may "$l")" ] || echo "src/$l/ is in no line of the table" \
	    >> "$tmp/unknown"
done
[ ! -s "$tmp/unknown" ]
ok $? "every folder of src/ is a layer of the table" "$tmp/unknown"

for l in $(echo "$layers" | cut -d: -f1); do
	[ -d "src/$l" ] || continue
	allowed=$(may "$l")
	: > "$tmp/inc"
	for f in "src/$l"/*.[ch]; do
		[ -f "$f" ] || continue
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		    sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' |
		    while read -r line inc; do
			case $inc in
			mcp.h) continue ;;	# the public header
			*/*) ;;
			*) echo "$f:$line: #include \"$inc\" names no layer"
			   continue ;;
			esac
			case " $allowed " in
			*" ${inc%%/*} "*) ;;
			*) echo "$f:$line: #include \"$inc\": $l/ may include" \
			       "only $allowed" ;;
			esac
		done >> "$tmp/inc"
	done
	[ ! -s "$tmp/inc" ]
	ok $? "src/$l/ includes only $(echo "$allowed" |
	    sed 's| |/, |g')/ and mcp.h" "$tmp/inc"
done

# The same rule on what was built: a symbol an object of src/L/ uses and
# another object defines must be defined in a layer L may include. This
# catches a prototype written out by hand, which no #include shows.
if ls "$MCP_BUILD"/obj/*/*.o > /dev/null 2>&1; then
	# objects SRC_OF names the source of: a stale one is skipped.
	src_of() {
		echo "src/${1#"$MCP_BUILD"/obj/}" | sed 's/\.o$/.c/'
	}
	for o in "$MCP_BUILD"/obj/*/*.o; do
		[ -f "$(src_of "$o")" ] || continue
		l=$(basename "$(dirname "$o")")
		nm --defined-only "$o" |
		    awk -v l="$l" '$2 ~ /^[TDBRC]$/ { print $3 " " l }'
	done | LC_ALL=C sort -u > "$tmp/defined"
	for l in $(echo "$layers" | cut -d: -f1); do
		[ -d "$MCP_BUILD/obj/$l" ] || continue
		allowed=$(may "$l")
		: > "$tmp/sym"
		for o in "$MCP_BUILD/obj/$l"/*.o; do
			[ -f "$(src_of "$o")" ] || continue
			nm -u "$o" | awk '{ print $NF }' | LC_ALL=C sort -u |
			    LC_ALL=C join - "$tmp/defined" |
			    while read -r sym at; do
				case " $allowed " in
				*" $at "*) ;;
				*) echo "$(src_of "$o") uses $sym, from $at/" ;;
				esac
			done >> "$tmp/sym"
		done
		[ ! -s "$tmp/sym" ]
		ok $? "objects of src/$l/ use no symbol of a layer above it" \
		    "$tmp/sym"
	done
else
	echo "ok $((n + 1)) - # SKIP no objects in $MCP_BUILD/obj/"
	n=$((n + 1))
fi

tap_end
