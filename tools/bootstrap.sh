#!/bin/sh
# bootstrap.sh [build|test]: installs what libmcp needs and this machine
# lacks, on Debian or Ubuntu (apt-get, through sudo when not root). It says
# what it installs and is silent when nothing is missing.
#   build: compiler, make, autoconf, pkg-config, and the -dev packages of the
#          libraries (jansson, libev, libmicrohttpd, libcurl, PCRE2,
#          hiredis)
#   test:  build, plus what the tests use: node and npm, nginx, valgrind,
#          mandoc, curl, clang with its sanitizer and libFuzzer runtimes
#          (the fuzzers), OpenSSL's headers (test/who-server.c), and
#          redis-server (test/redis.sh)
set -e
what=${1:-build}

missing=
need_pkg() {	# need_pkg PACKAGE: a Debian package that must be installed
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $1"
}
need_cmd() {	# need_cmd COMMAND PACKAGE: a command, from PACKAGE if absent
	command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "bootstrap: not a Debian or Ubuntu system; install by hand:" >&2
	echo "  a C compiler, make, autoconf, pkg-config, jansson, libev," >&2
	echo "  libmicrohttpd, libcurl, PCRE2, hiredis (with headers); for" >&2
	echo "  tests: node, npm, nginx, valgrind, mandoc, curl, clang with" >&2
	echo "  libFuzzer, redis-server" >&2
	exit 0
fi

need_cmd cc gcc
need_cmd make make
need_cmd autoconf autoconf
need_cmd pkg-config pkg-config
need_pkg libjansson-dev
need_pkg libev-dev
need_pkg libmicrohttpd-dev
need_pkg libcurl4-openssl-dev
need_pkg libpcre2-dev
need_pkg libhiredis-dev
if [ "$what" = test ]; then
	need_cmd node nodejs
	need_cmd npm npm
	need_cmd nginx nginx-light
	need_cmd valgrind valgrind
	need_cmd mandoc mandoc
	need_cmd curl curl
	need_cmd clang clang
	# A real Redis for test/redis.sh (sessions shared by instances).
	need_cmd redis-server redis-server
	# libcrypto, for test/who-server.c alone (signed tokens).
	need_pkg libssl-dev
	# libFuzzer and clang's sanitizer runtimes, for the default clang.
	need_pkg libclang-rt-dev
fi

[ -z "$missing" ] && exit 0
echo "bootstrap: installing:$missing" >&2
sudo=
if [ "$(id -u)" != 0 ]; then
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "bootstrap: done" >&2
