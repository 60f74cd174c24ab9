#!/bin/sh
# rpc.sh: conversation tests of build/mcp-demo over stdio. Each
# test/rpc/NNN-name.in is piped through the server (with the flags in
# NNN-name.args, if there is one) and its standard output is compared
# with NNN-name.out, line order ignored: both sides are sorted, since
# calls run concurrently and responses may come back in any order. A
# batch's answer is one line whose members come in completion order, so
# a batch in a pair holds at most one tools/call (answered last, after
# the members answered at once).
#
# "@VERSION@" in a .out file stands for the server's version (from
# mcp-demo --version), so a release does not touch the expected outputs.
# The detail after "parse error: " in a -32700 message (the parser's own
# words and byte offset) is not compared, only that there is one: the
# rule is the code and the missing id.
#
# One TAP assertion per pair; it also fails if the server exits non-zero
# or takes over 30 s. A failure prints the diff (expected, got) and the
# server's stderr as TAP comments.
#
#   test/rpc.sh [NNN ...]	run every pair, or those whose names start so
set -u
cd "$(dirname "$0")/.." || exit 1

server=${MCP_DEMO:-build/mcp-demo}
dir=test/rpc
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT HUP INT TERM

# -32700 messages: keep "parse error: " and that something follows.
norm='s/("code":-32700,"message":"parse error: )([^"\\]|\\.)+"/\1..."/'
n=0
failed=0
if [ ! -x "$server" ]; then
	echo "not ok 1 - $server is built"
	echo "1..1"
	exit 1
fi
version=$("$server" --version | sed -n 's/^mcp-demo \([^ ]*\).*/\1/p')
if [ -z "$version" ]; then
	echo "not ok 1 - $server --version prints a version"
	echo "1..1"
	exit 1
fi

for in in "$dir"/*.in; do
	name=$(basename "$in" .in)
	if [ $# -gt 0 ]; then
		want=
		for p in "$@"; do
			case $name in "$p"*) want=1 ;; esac
		done
		[ -n "$want" ] || continue
	fi
	n=$((n + 1))
	base=${in%.in}
	args=
	[ -f "$base.args" ] && args=$(cat "$base.args")
	if [ ! -f "$base.out" ]; then
		echo "not ok $n - $name (no $name.out)"
		failed=$((failed + 1))
		continue
	fi
	# shellcheck disable=SC2086	# the flags are split on purpose
	timeout -k 5 30 "$server" $args <"$in" >"$tmp/got" 2>"$tmp/err"
	rc=$?
	sed -E "s/@VERSION@/$version/g; $norm" "$base.out" |
	    LC_ALL=C sort >"$tmp/want.s"
	sed -E "$norm" "$tmp/got" | LC_ALL=C sort >"$tmp/got.s"
	if [ "$rc" -eq 0 ] && cmp -s "$tmp/want.s" "$tmp/got.s"; then
		echo "ok $n - $name"
		continue
	fi
	failed=$((failed + 1))
	echo "not ok $n - $name"
	[ "$rc" -eq 0 ] || echo "# server exited with status $rc"
	echo "# diff (- expected, + got; sorted):"
	diff -u "$tmp/want.s" "$tmp/got.s" | sed '1,2d; s/^/#   /' | cut -c1-2000
	if [ -s "$tmp/err" ]; then
		echo "# stderr:"
		sed 's/^/#   /' "$tmp/err" | head -20
	fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
