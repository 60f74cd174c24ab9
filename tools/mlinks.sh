#!/bin/sh
# mlinks.sh DIR PAGE...: for every function a man3 page documents in its
# NAME section, write DIR/<function>.3 as a ".so" link to that page, so
# "man mcp_server_free" finds mcp_server_new(3).
set -e
dir=$1
shift
for page in "$@"; do
	base=$(basename "$page" .3)
	sed -n '/^\.Sh NAME/,/^\.Sh /p' "$page" | awk '/^\.Nm/ { print $2 }' |
	while read -r name; do
		name=${name%,}
		[ "$name" = "$base" ] && continue
		printf '.so man3/%s.3\n' "$base" > "$dir/$name.3"
	done
done
