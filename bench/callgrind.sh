#!/bin/sh
# callgrind.sh [SERVER ARG...]: instructions a `tools/call echo` costs on
# stdio, counted by valgrind's callgrind (an exact count: it repeats
# whatever else the machine does, where seconds do not). SERVER
# (build/mcp-demo by default) runs twice with one worker, once for an
# initialize alone and once for the initialize and N pipelined calls
# (N=8000); every thread's total is summed, and the difference divided
# by N is the cost of a call without the process's start-up.
#   bench/callgrind.sh                        pool tools
#   bench/callgrind.sh build/mcp-demo --loop-tools
cd "$(dirname "$0")/.." || exit 1
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
[ $# -gt 0 ] || set -- build/mcp-demo
N=${N:-8000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-cg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cg","version":"1"}}}'
printf '%s\n%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    > "$tmp/0.in"
{
	cat "$tmp/0.in"
	i=1
	while [ "$i" -le "$N" ]; do
		printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}\n' "$i"
		i=$((i + 1))
	done
} > "$tmp/n.in"

# count INPUT: the instructions of every thread of one run.
count() {
	rm -f "$tmp"/cg.*
	valgrind --tool=callgrind --separate-threads=yes \
	    --callgrind-out-file="$tmp/cg.%p" "$@" --workers 1 \
	    --max-workers 1 --queue-size 100000 < "$in" > "$tmp/out" \
	    2> "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
	cat "$tmp"/cg.* | awk '/^summary:/ { t += $2 } END { print t }'
}
in=$tmp/0.in
a=$(count "$@")
in=$tmp/n.in
b=$(count "$@")
answers=$(grep -c '"result":{"content"' "$tmp/out")
[ "$answers" -eq "$N" ] || { echo "$answers answers to $N calls" >&2; exit 1; }
echo "$*: start-up $a, with $N calls $b: $(( (b - a) / N )) instructions a call"
