# libmcp: a C framework for Model Context Protocol servers.
#
#   make          build the library, tools and tests into build/
#   make run      install missing build dependencies, build, start mcp-demo
#   make check    install missing dependencies, build, run every test
#   make install  PREFIX (default: configure's prefix) and DESTDIR honoured
#   make bench    the benchmarks beside their peers (bench/run-*.sh, idle-sse.sh)
#
# The Makefile configures itself: it runs autoconf and ./configure when
# config.mk is missing or older than configure.ac. GNU make.

ifneq ($(wildcard config.mk),)
include config.mk
endif
-include local.mk

PREFIX ?= $(if $(prefix),$(prefix),/usr/local)
VERSION ?= 0.0.0
SOVERSION = 0

CFLAGS ?= -O2 -g
# Quiet by default; make V=1 shows every command.
ifeq ($(V),1)
Q =
say = @:
else
Q = @
say = @printf '  %-6s %s\n'
endif
STD = -std=c11 -D_POSIX_C_SOURCE=200809L
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes
DEPS_CFLAGS = $(JANSSON_CFLAGS) $(EV_CFLAGS) $(MHD_CFLAGS)
DEPS_LIBS = $(JANSSON_LIBS) $(MHD_LIBS) $(EV_LIBS) -pthread -lm
LIB_CFLAGS = $(STD) $(WARN) $(CFLAGS) -Iinclude -Isrc -DMCP_BUILDING \
	-fvisibility=hidden -pthread $(DEPS_CFLAGS)
APP_CFLAGS = $(STD) $(WARN) $(CFLAGS) -Iinclude -pthread $(DEPS_CFLAGS)
TEST_CFLAGS = $(STD) $(WARN) $(CFLAGS) -Iinclude -Isrc -Itest -pthread \
	$(DEPS_CFLAGS)

SRCS = src/buf.c src/base64.c src/log.c src/version.c src/jsonrpc.c \
	src/json.c src/schema.c src/table.c src/registry.c src/features.c src/pool.c src/call.c src/session.c \
	src/protocol.c src/clientreq.c src/transport_stdio.c src/http.c src/transport_sse.c src/transport_streamable.c src/options.c \
	src/server.c src/cli.c
OBJS = $(SRCS:src/%.c=build/obj/%.o)
PICS = $(SRCS:src/%.c=build/pic/%.o)

TOOLS = build/mcp-demo build/mcp-bench build/floor-stdio build/floor-http \
	build/progress-server build/conformance-server
UNIT_TESTS = build/t_schema build/t_jsonrpc build/t_registry build/t_pool \
	build/t_template

.PHONY: all build run check deps deps-test install install-files uninstall clean \
	distclean bench

all: config.mk
	@$(MAKE) --no-print-directory build

config.mk: configure config.mk.in
	@echo "  configuring (./configure)"
	$(Q)./configure --quiet

configure: configure.ac include/mcp.h
	$(Q)autoconf
	@touch configure

build: build/libmcp.a build/libmcp.so $(TOOLS) $(UNIT_TESTS) build/feat-server

build/obj/%.o: src/%.c src/mcp-int.h src/http-int.h src/schema.h include/mcp.h
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

build/pic/%.o: src/%.c src/mcp-int.h src/http-int.h src/schema.h include/mcp.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

build/libmcp.a: $(OBJS)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)ar rcs $@ $(OBJS)

build/libmcp.so.$(VERSION): $(PICS) src/mcp.sym
	$(say) LD $@
	$(Q)$(CC) -shared -o $@ $(PICS) -Wl,-soname,libmcp.so.$(SOVERSION) \
		-Wl,--version-script=src/mcp.sym $(DEPS_LIBS)

build/libmcp.so: build/libmcp.so.$(VERSION)
	$(Q)ln -sf libmcp.so.$(VERSION) build/libmcp.so.$(SOVERSION)
	$(Q)ln -sf libmcp.so.$(VERSION) $@

build/mcp-demo: tools/mcp-demo.c build/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< build/libmcp.a $(DEPS_LIBS)

build/mcp-bench: tools/mcp-bench.c
	$(say) LD $@
	$(Q)$(CC) $(STD) -D_GNU_SOURCE $(WARN) $(CFLAGS) -o $@ $< -pthread -lm

build/floor-stdio: bench/floor-stdio.c
	$(say) LD $@
	$(Q)$(CC) $(STD) -D_GNU_SOURCE $(WARN) $(CFLAGS) -o $@ $<

build/floor-http: bench/floor-http.c
	$(say) LD $@
	$(Q)$(CC) $(STD) -D_GNU_SOURCE $(WARN) $(CFLAGS) -o $@ $<

# The libmcp server of bench/run-progress.sh: built, never installed.
build/progress-server: bench/progress-server.c build/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< build/libmcp.a $(DEPS_LIBS)

# The conformance fixtures (examples/conformance-server.c): built, never
# installed.
build/conformance-server: examples/conformance-server.c build/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< build/libmcp.a $(DEPS_LIBS)

# The server of test/features2.mjs: built, never installed.
build/feat-server: test/feat-server.c build/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< build/libmcp.a $(DEPS_LIBS)

build/t_%: test/t_%.c test/tap.h build/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< build/libmcp.a $(DEPS_LIBS)

# Bootstrap: install what is missing (tools/bootstrap.sh says what).
deps:
	@sh tools/bootstrap.sh build

deps-test:
	@sh tools/bootstrap.sh test

RUN_ADDR ?= 127.0.0.1:8080

run: deps
	@$(MAKE) --no-print-directory all
	@echo "mcp-demo: serving MCP on http://$(RUN_ADDR) (Ctrl-C stops it)." >&2
	@echo "  Streamable HTTP (what agents speak) at http://$(RUN_ADDR)/mcp; open a session:" >&2
	@echo "  curl -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}' -i http://$(RUN_ADDR)/mcp" >&2
	@echo "  Legacy SSE: curl -N http://$(RUN_ADDR)/sse, then POST JSON-RPC to the endpoint it names, e.g." >&2
	@echo "  curl -H 'Content-Type: application/json' -d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}' 'http://$(RUN_ADDR)/messages?sessionId=ID'" >&2
	@echo "  For an agent (stdio): command $(CURDIR)/build/mcp-demo" >&2
	@exec build/mcp-demo --http $(RUN_ADDR)

check: deps-test
	@mkdir -p test/out
	@$(MAKE) --no-print-directory all >test/out/build.log 2>&1 || \
		{ cat test/out/build.log; exit 1; }
	@sh test/run.sh

bench: all
	@bench/run-stdio.sh
	@bench/run-progress.sh
	@bench/run-sse.sh
	@bench/run-streamable.sh
	@bench/idle-sse.sh
	@bench/idle-streamable.sh

install: config.mk
	@$(MAKE) --no-print-directory build/libmcp.a build/libmcp.so \
		build/mcp-demo build/mcp-bench
	@$(MAKE) --no-print-directory install-files

install-files:
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 build/libmcp.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 build/libmcp.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libmcp.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmcp.so.$(SOVERSION)
	ln -sf libmcp.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmcp.so
	install -m 644 include/mcp.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' mcp.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/mcp.pc
	install -m 755 build/mcp-demo build/mcp-bench $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	@sh tools/mlinks.sh $(DESTDIR)$(PREFIX)/share/man/man3 man/*.3

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libmcp.* \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/mcp.pc \
		$(DESTDIR)$(PREFIX)/include/mcp.h \
		$(DESTDIR)$(PREFIX)/bin/mcp-demo $(DESTDIR)$(PREFIX)/bin/mcp-bench \
		$(DESTDIR)$(PREFIX)/share/man/man1/mcp-*.1 \
		$(DESTDIR)$(PREFIX)/share/man/man3/mcp_*.3 \
		$(DESTDIR)$(PREFIX)/share/man/man7/mcp.7

clean:
	rm -rf build test/out

distclean: clean
	rm -rf config.mk config.log config.status configure autom4te.cache
