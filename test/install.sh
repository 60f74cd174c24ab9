#!/bin/sh
# install.sh: TAP checks on "make install". A staged install
# (PREFIX=/usr DESTDIR=tmp) must lay out the library with its SONAME
# link, the header, the pkg-config file, the programs and every man page
# with its MLINKS. A second install into PREFIX=tmp/prefix is then used
# the way a user would: a one-tool server is built with pkg-config
# against it (shared, and static through Libs.private), linked to the
# installed libmcp.so.0, and driven over stdin. Finally "make uninstall"
# must leave nothing behind. Everything happens under one temporary
# directory, removed at the end.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh
OK_TAIL=20	# ok(): a failure shows the last 20 lines of its FILE

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

version=$(sed -n 's/^#define MCP_VERSION[[:space:]]*"\(.*\)"/\1/p' \
    include/mcp.h)
# Under make check SANITIZE=1 the sanitizer build is installed: a program
# linked against it needs the sanitizer runtimes too.
san=
[ "${MCP_SANITIZE-}" = 1 ] && san="-fsanitize=address,undefined"
[ "${MCP_SANITIZE-}" = thread ] && san="-fsanitize=thread"

# ---- a staged install ---------------------------------------------------

stage=$tmp/stage
root=$stage/usr
make install PREFIX=/usr DESTDIR="$stage" > "$tmp/make.log" 2>&1
ok $? "make install PREFIX=/usr DESTDIR=\$tmp/stage" "$tmp/make.log"

ls -A "$stage" > "$tmp/top"
[ "$(cat "$tmp/top")" = usr ]
ok $? "nothing installed outside DESTDIR/PREFIX" "$tmp/top"
[ -f "$root/lib/libmcp.a" ]
ok $? "lib/libmcp.a"
[ -f "$root/lib/libmcp.so.$version" ] &&
    [ ! -L "$root/lib/libmcp.so.$version" ]
ok $? "lib/libmcp.so.$version is the real file"
[ -L "$root/lib/libmcp.so.0" ] &&
    [ "$(readlink "$root/lib/libmcp.so.0")" = "libmcp.so.$version" ]
ok $? "lib/libmcp.so.0 -> libmcp.so.$version (relative)"
[ -L "$root/lib/libmcp.so" ] && [ -e "$root/lib/libmcp.so" ]
ok $? "lib/libmcp.so is a link that resolves"
readelf -d "$root/lib/libmcp.so.0" > "$tmp/dyn" 2>&1
grep -q 'SONAME.*\[libmcp\.so\.0\]' "$tmp/dyn"
ok $? "SONAME is libmcp.so.0" "$tmp/dyn"
cmp -s include/mcp.h "$root/include/mcp.h"
ok $? "include/mcp.h installed unchanged"
pc=$root/lib/pkgconfig/mcp.pc
[ -f "$pc" ] && grep -qx 'prefix=/usr' "$pc" &&
    grep -qx "Version: $version" "$pc"
ok $? "lib/pkgconfig/mcp.pc with prefix=/usr and Version $version" "$pc"
grep -qx 'Libs: -L${libdir} -lmcp' "$pc"
ok $? "mcp.pc for /usr gives no rpath (the dynamic linker searches /usr/lib)" "$pc"
! grep -q '@[A-Z]*@' "$pc"
ok $? "mcp.pc has no unsubstituted @VARIABLE@" "$pc"
[ -x "$root/bin/mcp-demo" ] && [ -x "$root/bin/mcp-bench" ]
ok $? "bin/mcp-demo and bin/mcp-bench"
"$root/bin/mcp-demo" --version > "$tmp/ver" 2>&1
grep -q "libmcp $version" "$tmp/ver"
ok $? "the installed mcp-demo runs (--version)" "$tmp/ver"

# Man pages: every page, then one .so link per extra name in a NAME.
missing=
for page in man/*.[1-9]; do
	sec=${page##*.}
	[ -f "$root/share/man/man$sec/$(basename "$page")" ] ||
	    missing="$missing $page"
done
[ -z "$missing" ]
ok $? "every man page installed${missing:+ (missing:$missing)}"
: > "$tmp/mlinks"
nlinks=0
for page in man/*.3; do
	base=$(basename "$page" .3)
	for name in $(sed -n '/^\.Sh NAME/,/^\.Sh /p' "$page" |
	    awk '/^\.Nm/ { sub(/,$/, "", $2); print $2 }'); do
		[ "$name" = "$base" ] && continue
		nlinks=$((nlinks + 1))
		link=$root/share/man/man3/$name.3
		[ "$(cat "$link" 2>/dev/null)" = ".so man3/$base.3" ] ||
		    echo "$name.3: not .so man3/$base.3" >> "$tmp/mlinks"
	done
done
[ "$nlinks" -gt 0 ] && [ ! -s "$tmp/mlinks" ]
ok $? "all $nlinks MLINKS are .so links to their page" "$tmp/mlinks"
[ "$(cat "$root/share/man/man3/mcp_server_free.3" 2>/dev/null)" = \
    ".so man3/mcp_server_new.3" ]
ok $? "share/man/man3/mcp_server_free.3 is .so man3/mcp_server_new.3"
if command -v mandoc >/dev/null 2>&1; then
	(cd "$root/share/man" && mandoc -Tascii man3/mcp_server_free.3) \
	    > "$tmp/render" 2>&1
	grep -q 'mcp_server_free' "$tmp/render" &&
	    grep -q 'mcp_server_new' "$tmp/render"
	ok $? "the mcp_server_free.3 link renders the page" "$tmp/render"
else
	n=$((n + 1))
	echo "ok $n - # SKIP mandoc not installed"
fi

# ---- a program built against an install --------------------------------

prefix=$tmp/prefix
make install PREFIX="$prefix" > "$tmp/make2.log" 2>&1
ok $? "make install PREFIX=\$tmp/prefix" "$tmp/make2.log"

cat > "$tmp/greet.c" <<'EOF'
/* greet: a one-tool MCP server, built against the installed libmcp. */
#include <stdlib.h>
#include <string.h>

#include <mcp.h>

static const char schema[] =
    "{\"type\":\"object\",\"required\":[\"name\"],"
    "\"properties\":{\"name\":{\"type\":\"string\"}}}";

static void
greet(mcp_call *call)
{
	const char	*name;

	if (mcp_args_unpack(call, "{s:s}", "name", &name) != MCP_OK)
		return;
	mcp_result_textf(call, "%s, %s", (const char *)mcp_call_udata(call),
	    name);
}

int
main(int argc, char *argv[])
{
	mcp_server	*srv;
	char		*hello;
	int		 rc;

	if (mcp_version_num() != MCP_VERSION_NUM)
		return 1;
	srv = mcp_server_new("greeter", "1.2.3");
	hello = malloc(6);
	if (hello != NULL)
		memcpy(hello, "hello", 6);
	rc = mcp_tool_register(srv, "greet", "Greets NAME.", schema, greet,
	    hello, free);
	if (rc == MCP_OK)
		rc = mcp_server_main(srv, argc, argv);
	mcp_server_free(srv);
	return rc == MCP_OK ? 0 : rc == MCP_EUSAGE ? 2 : 1;
}
EOF

PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
[ "$(pkg-config --modversion mcp 2>&1)" = "$version" ]
ok $? "pkg-config finds the installed mcp $version"
cflags=$(pkg-config --cflags mcp)
libs=$(pkg-config --libs mcp)
case " $cflags $libs " in
*" -I$prefix/include "*" -L$prefix/lib "*) rc=0 ;;
*) rc=1 ;;
esac
echo "$cflags $libs" > "$tmp/pc"
ok $rc "pkg-config gives -I and -L into the install" "$tmp/pc"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/greet" "$tmp/greet.c" \
    $cflags $libs > "$tmp/cc.log" 2>&1
ok $? "a server builds with pkg-config --cflags --libs mcp" "$tmp/cc.log"
readelf -d "$tmp/greet" > "$tmp/dyn" 2>&1
grep -q 'NEEDED.*\[libmcp\.so\.0\]' "$tmp/dyn"
ok $? "it needs libmcp.so.0" "$tmp/dyn"
grep -q "RUNPATH.*\[$prefix/lib\]" "$tmp/dyn"
ok $? "its RUNPATH is the install's lib (from mcp.pc's Libs)" "$tmp/dyn"
# As an agent launches it: no LD_LIBRARY_PATH, a bare environment.
env -i PATH=/usr/bin:/bin ldd "$tmp/greet" > "$tmp/ldd" 2>&1
grep -q "libmcp\.so\.0 => $prefix/lib/libmcp\.so\.0 " "$tmp/ldd"
ok $? "without LD_LIBRARY_PATH, libmcp.so.0 resolves to the installed copy" "$tmp/ldd"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":'
init=$init'{"protocolVersion":"2025-06-18","capabilities":{},'
init=$init'"clientInfo":{"name":"install.sh","version":"1"}}}'
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":'
call=$call'{"name":"greet","arguments":{"name":"world"}}}'
bad='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":'
bad=$bad'{"name":"greet","arguments":{"name":7}}}'
note='{"jsonrpc":"2.0","method":"notifications/initialized"}'
printf '%s\n' "$init" "$note" "$call" "$bad" |
    env -i PATH=/usr/bin:/bin ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
    ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} timeout 20 "$tmp/greet" \
    > "$tmp/out" 2> "$tmp/err"
ok $? "the server answers on stdin, launched with a bare environment, and exits 0 at EOF" "$tmp/err"
[ "$(wc -l < "$tmp/out")" -eq 3 ]
ok $? "three answers, one per request" "$tmp/out"
# answer ID JQ-TEST: the one response with ID passes the jq test (without
# jq, only that there is a response with ID).
answer() {
	if command -v jq >/dev/null 2>&1; then
		jq -e -s "map(select(.id == $1)) | length == 1 and
		    (.[0] | $2)" "$tmp/out" > /dev/null 2>&1
	else
		grep -q "\"id\":$1[,}]" "$tmp/out"
	fi
}
answer 1 '.result.serverInfo.name == "greeter" and
    .result.serverInfo.version == "1.2.3" and
    .result.protocolVersion == "2025-06-18" and
    (.result.capabilities | has("tools"))'
ok $? "initialize: serverInfo greeter 1.2.3, protocol 2025-06-18" "$tmp/out"
answer 2 '.result.content == [{"type":"text","text":"hello, world"}] and
    (.result.isError | not)'
ok $? "tools/call: \"hello, world\", with the tool's user data" "$tmp/out"
answer 3 '.result.isError == true and
    (.result.content[0].text | test("name"))'
ok $? "tools/call with a bad argument: an isError result" "$tmp/out"
env -i PATH=/usr/bin:/bin ${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} \
    ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} "$tmp/greet" --version \
    > "$tmp/ver" 2>&1
grep -q "greeter 1.2.3 (libmcp $version)" "$tmp/ver"
ok $? "greet --version" "$tmp/ver"
# The skeleton's exit status: 2 for a bad command line, as mcp(7) says.
"$tmp/greet" --no-such-flag < /dev/null > "$tmp/usage" 2>&1
rc=$?
echo "exit $rc" >> "$tmp/usage"
[ "$rc" -eq 2 ] && grep -q 'usage: greet' "$tmp/usage"
ok $? "greet --no-such-flag: the usage on stderr, exit 2" "$tmp/usage"

# Static: the archive plus Libs.private must be enough.
libs_static=$(pkg-config --static --libs mcp |
    sed 's/ -lmcp / /; s/^-lmcp //')
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/greet-static" \
    "$tmp/greet.c" $cflags "$prefix/lib/libmcp.a" $libs_static \
    > "$tmp/cc.log" 2>&1
ok $? "a server links statically with pkg-config --static" "$tmp/cc.log"
readelf -d "$tmp/greet-static" > "$tmp/dyn" 2>&1
! grep -q 'NEEDED.*libmcp' "$tmp/dyn"
ok $? "the static one does not need libmcp.so" "$tmp/dyn"
printf '%s\n' "$init" "$call" | timeout 20 "$tmp/greet-static" \
    > "$tmp/out" 2> "$tmp/err"
grep -q '"hello, world"' "$tmp/out"
ok $? "and answers the same" "$tmp/out"

# ---- uninstall ------------------------------------------------------------

make uninstall PREFIX="$prefix" > "$tmp/make3.log" 2>&1
ok $? "make uninstall PREFIX=\$tmp/prefix" "$tmp/make3.log"
find "$prefix" ! -type d > "$tmp/left"
[ ! -s "$tmp/left" ]
ok $? "uninstall leaves no file behind" "$tmp/left"

tap_end
