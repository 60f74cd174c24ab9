#!/bin/sh
# readme.sh: the examples a new user copies first compile and work: the
# server of README.md ("A server in 20 lines") and the one of mcp(7)
# EXAMPLES, each built against the library under test with -Werror and
# called through mcp-call: the declared arguments are validated (a
# missing one and a string for a number are refused), and the sum comes
# back. Prints TAP.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

CALL=$MCP_BUILD/mcp-call
[ -f "$MCP_BUILD/libmcp.a" ] || bail "$MCP_BUILD/libmcp.a is built"
need_built "$CALL"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-readme.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

# The first C block after the heading "## A server in".
awk '/^## A server in/ { on = 1; next }
    on && /^```c$/ { c = 1; next }
    c && /^```$/ { exit }
    c { print }' README.md > "$tmp/readme.c"
# The block after "A complete server" in mcp(7), unescaped.
awk '/^A complete server/ { on = 1; next }
    on && /^\.Bd -literal/ { c = 1; next }
    c && /^\.Ed$/ { exit }
    c { print }' man/mcp.7 | sed 's/\\e/\\/g' > "$tmp/mcp7.c"

# Flags as a user's build has them, plus -Werror.
cflags="-std=c11 -Wall -Wextra -Werror -Iinclude $(pkg-config --cflags jansson)"
libs="$MCP_BUILD/libmcp.a $(sed -n 's/^\(JANSSON\|MHD\|EV\|CURL\|PCRE2\|HIREDIS\)_LIBS *= *//p' config.mk | tr '\n' ' ') -pthread -lm"
[ -n "${MCP_SANITIZE-}" ] && cflags="$cflags -fsanitize=address,undefined"
case $MCP_BUILD in *san) cflags="$cflags -fsanitize=address,undefined" ;; esac

for ex in readme mcp7; do
	src=$tmp/$ex.c
	[ "$(wc -l < "$src")" -gt 10 ]
	ok $? "$ex: the example was found" "$src"
	# shellcheck disable=SC2086
	cc $cflags -o "$tmp/$ex" "$src" $libs > "$tmp/cc.log" 2>&1
	ok $? "$ex: it compiles without a warning" "$tmp/cc.log"
	"$CALL" --json call add a=2 b=3.5 -- "$tmp/$ex" > "$tmp/out" 2>&1
	tr -d ' \n' < "$tmp/out" | grep -q '"structuredContent":{"sum":5.5}'
	ok $? "$ex: add a=2 b=3.5 gives the sum 5.5" "$tmp/out"
	"$CALL" --json call add a=2 -- "$tmp/$ex" > "$tmp/out" 2>&1
	grep -q '"isError": true' "$tmp/out" &&
	    grep -q 'missing required property \\"b\\"' "$tmp/out"
	ok $? "$ex: add without b is refused by the declaration" "$tmp/out"
	"$CALL" --json call add a=2 b=x -- "$tmp/$ex" > "$tmp/out" 2>&1
	grep -q '"isError": true' "$tmp/out" &&
	    grep -q 'arguments.b: expected number, got string' "$tmp/out"
	ok $? "$ex: add with b a string is refused, naming arguments.b" "$tmp/out"
done
tap_end
