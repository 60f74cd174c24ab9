# libmcp: a C framework for Model Context Protocol servers.
#
#   make          build the library, tools and tests into build/
#   make run      install missing build dependencies, build, start mcp-demo
#   make check    install missing dependencies, build, run every test
#   make check SANITIZE=1
#                 the same tests against an AddressSanitizer and
#                 UndefinedBehaviorSanitizer build (build/san/)
#   make fuzz     run each libFuzzer harness for FUZZ_SECONDS (60)
#   make install  PREFIX (default: configure's prefix) and DESTDIR honoured
#   make bench    the benchmarks beside their peers (bench/run-*.sh, idle-sse.sh)
#
# SANITIZE=1 builds into build/san/, SANITIZE=thread (ThreadSanitizer,
# test/tsan.sh) into build/tsan/; the fuzzers (clang) go to build/fuzz/.
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
# The build directory: one per flavour, so that they never mix.
ifeq ($(SANITIZE),1)
B = build/san
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
B = build/tsan
SAN = -fsanitize=thread
else
B = build
SAN =
endif
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
DEPS_CFLAGS = $(JANSSON_CFLAGS) $(EV_CFLAGS) $(MHD_CFLAGS) $(CURL_CFLAGS) \
	$(PCRE2_CFLAGS) $(HIREDIS_CFLAGS)
DEPS_LIBS = $(JANSSON_LIBS) $(MHD_LIBS) $(EV_LIBS) $(CURL_LIBS) $(PCRE2_LIBS) \
	$(HIREDIS_LIBS) -pthread -lm
LIB_CFLAGS = $(STD) $(WARN) $(CFLAGS) $(SAN) -Iinclude -Isrc -DMCP_BUILDING \
	-fvisibility=hidden -pthread $(DEPS_CFLAGS)
APP_CFLAGS = $(STD) $(WARN) $(CFLAGS) $(SAN) -Iinclude -pthread $(DEPS_CFLAGS)
TEST_CFLAGS = $(STD) $(WARN) $(CFLAGS) $(SAN) -Iinclude -Isrc -Itest -pthread \
	$(DEPS_CFLAGS)

# The library, a folder per layer, lowest first (docs/ARCHITECTURE.md;
# test/static.sh checks what each may include). Objects go to
# $(B)/obj/<layer>/ and $(B)/pic/<layer>/.
CORE_SRCS = src/core/buf.c src/core/base64.c src/core/log.c \
	src/core/version.c src/core/json.c src/core/schema.c src/core/decl.c \
	src/core/table.c src/core/random.c src/core/sha256.c \
	src/core/systemd.c src/core/xheader.c
RPC_SRCS = src/rpc/jsonrpc.c src/rpc/frame.c
SERVER_SRCS = src/server/registry.c src/server/features.c \
	src/server/pool.c src/server/call.c src/server/session.c \
	src/server/protocol.c src/server/clientreq.c src/server/metrics.c \
	src/server/relay.c src/server/args.c src/server/era.c \
	src/server/tasks.c src/server/taskshare.c src/server/listen.c \
	src/server/mrtr.c
CLIENT_SRCS = src/client/client.c src/client/stdio.c src/client/http.c
TRANSPORT_SRCS = src/transport/transport_stdio.c src/transport/http.c \
	src/transport/transport_sse.c src/transport/transport_streamable.c \
	src/transport/redis.c
MAIN_SRCS = src/main/server.c src/main/cli.c src/main/options.c \
	src/main/flags.c
SRCS = $(CORE_SRCS) $(RPC_SRCS) $(SERVER_SRCS) $(CLIENT_SRCS) \
	$(TRANSPORT_SRCS) $(MAIN_SRCS)
# The internal headers, one (or two) a layer; any change rebuilds all.
HDRS = src/core/core.h src/core/schema.h src/rpc/rpc.h src/rpc/frame.h \
	src/client/client-int.h \
	src/server/server.h src/transport/transport.h src/transport/http.h \
	src/main/main.h include/mcp.h
OBJS = $(SRCS:src/%.c=$(B)/obj/%.o)
PICS = $(SRCS:src/%.c=$(B)/pic/%.o)

TOOLS = $(B)/mcp-demo $(B)/mcp-call $(B)/mcp-gateway $(B)/mcp-bench $(B)/floor-stdio $(B)/floor-http \
	$(B)/progress-server $(B)/conformance-server $(B)/deferred-server \
	$(B)/notes-server $(B)/client-bench
UNIT_TESTS = $(B)/t_schema $(B)/t_jsonrpc $(B)/t_registry $(B)/t_pool \
	$(B)/t_template $(B)/t_faults $(B)/t_flags $(B)/t_decl $(B)/t_sha256

# The libFuzzer harnesses (test/fuzz/NAME.c), built with clang.
FUZZERS = json dispatch stdio schema template http client decl record
FUZZ_CC = clang
FUZZ_SAN = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 60

.PHONY: all build run check deps deps-test install install-files uninstall clean \
	distclean bench fuzz fuzz-build

all: config.mk
	@$(MAKE) --no-print-directory build

config.mk: configure config.mk.in
	@echo "  configuring (./configure)"
	$(Q)./configure --quiet

configure: configure.ac include/mcp.h
	$(Q)autoconf
	@touch configure

# test/who-server.c needs OpenSSL's libcrypto (configure looks for it):
# without it, test/who.sh skips.
WHO_SERVER = $(if $(CRYPTO_LIBS),$(B)/who-server)

build: $(B)/libmcp.a $(B)/libmcp.so $(TOOLS) $(UNIT_TESTS) $(B)/feat-server $(B)/sdrun \
	$(B)/client-api $(B)/client-era $(B)/flags-server $(B)/decl-server \
	$(B)/loop-server $(B)/task-server $(B)/mrtr-server $(WHO_SERVER)

$(B)/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/pic/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -fPIC -c -o $@ $<

$(B)/libmcp.a: $(OBJS)
	$(say) AR $@
	$(Q)rm -f $@
	$(Q)ar rcs $@ $(OBJS)

$(B)/libmcp.so.$(VERSION): $(PICS) src/mcp.sym
	$(say) LD $@
	$(Q)$(CC) $(SAN) -shared -o $@ $(PICS) -Wl,-soname,libmcp.so.$(SOVERSION) \
		-Wl,--version-script=src/mcp.sym $(DEPS_LIBS)

$(B)/libmcp.so: $(B)/libmcp.so.$(VERSION)
	$(Q)ln -sf libmcp.so.$(VERSION) $(B)/libmcp.so.$(SOVERSION)
	$(Q)ln -sf libmcp.so.$(VERSION) $@

$(B)/mcp-demo: tools/mcp-demo.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

$(B)/mcp-call: tools/mcp-call.c tools/expand.h $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

GATEWAY_SRCS = tools/gateway/main.c tools/gateway/serve.c \
	tools/gateway/remote.c
$(B)/mcp-gateway: $(GATEWAY_SRCS) tools/gateway/gateway.h tools/expand.h \
	    $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $(GATEWAY_SRCS) $(B)/libmcp.a $(DEPS_LIBS)

$(B)/mcp-bench: tools/mcp-bench.c
	$(say) LD $@
	$(Q)$(CC) $(STD) -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN) -o $@ $< -pthread -lm

$(B)/floor-stdio: bench/floor-stdio.c
	$(say) LD $@
	$(Q)$(CC) $(STD) -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN) -o $@ $<

$(B)/floor-http: bench/floor-http.c
	$(say) LD $@
	$(Q)$(CC) $(STD) -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN) -o $@ $<

# The libmcp server of bench/run-progress.sh: built, never installed.
$(B)/progress-server: bench/progress-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The client of bench/run-client.sh: built, never installed.
$(B)/client-bench: bench/client-bench.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The conformance fixtures (examples/conformance-server.c): built, never
# installed.
$(B)/conformance-server: examples/conformance-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The example of calls finished later (examples/deferred-server.c, run by
# test/deferred.sh): built, never installed.
$(B)/deferred-server: examples/deferred-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The notes server (examples/notes-server.c, run by test/notes.sh):
# built, never installed.
$(B)/notes-server: examples/notes-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/features2.mjs: built, never installed.
$(B)/feat-server: test/feat-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/flags.sh, a flag of each type: built, never
# installed.
$(B)/flags-server: test/flags-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/decl.sh, declared arguments read back: built, never
# installed.
$(B)/decl-server: test/decl-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/loop.sh, loop tools (MCP_TOOL_LOOP): built, never
# installed.
$(B)/loop-server: test/loop-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/mrtr.sh, callbacks that ask the client: built,
# never installed.
$(B)/mrtr-server: test/mrtr-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/tasks.sh, tools run as tasks: built, never
# installed.
$(B)/task-server: test/task-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The server of test/who.sh: the only program linked with OpenSSL.
$(B)/who-server: test/who-server.c $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) $(CRYPTO_CFLAGS) -o $@ $< $(B)/libmcp.a \
		$(DEPS_LIBS) $(CRYPTO_LIBS)

# The client API's test against real servers (test/client-api.sh runs it
# once the Node peers are installed): the public header only.
$(B)/client-api: test/client-api.c test/tap.h $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -Itest -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# The client in each protocol era against one server (test/client-era.sh).
$(B)/client-era: test/client-era.c test/tap.h $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(APP_CFLAGS) -Itest -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# systemd's part in test/service.mjs: a passed socket, a notify socket.
$(B)/sdrun: test/sdrun.c
	$(say) LD $@
	$(Q)$(CC) $(STD) $(WARN) $(CFLAGS) $(SAN) -o $@ $<

$(B)/t_%: test/t_%.c test/tap.h test/driver.h test/tools.h test/flat.h \
    $(HDRS) $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(B)/libmcp.a $(DEPS_LIBS)

# Fault injection: every allocation, and read and write, of the library
# goes through the test's wrappers (ld --wrap), which fail on demand.
FAULT_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup \
	-Wl,--wrap=strndup,--wrap=free,--wrap=read,--wrap=write \
	-Wl,--wrap=MHD_queue_response
$(B)/t_faults: test/t_faults.c test/tap.h test/driver.h test/tools.h \
    $(HDRS) $(B)/libmcp.a
	$(say) LD $@
	$(Q)$(CC) $(TEST_CFLAGS) -o $@ $< $(B)/libmcp.a $(FAULT_WRAP) \
		$(DEPS_LIBS)

# ---- fuzzing ---------------------------------------------------------------

# The library built once with coverage and the sanitizers, and a harness
# per target (test/fuzz/NAME.c) linked against it with libFuzzer.
FUZZ_OBJS = $(SRCS:src/%.c=build/fuzz/obj/%.o)
FUZZ_BINS = $(FUZZERS:%=build/fuzz/fuzz_%)
FUZZ_FLAGS = $(STD) -D_GNU_SOURCE -g -O1 -Iinclude -Isrc -Itest \
	-DMCP_BUILDING -pthread $(DEPS_CFLAGS)

fuzz-build: config.mk
	@$(MAKE) --no-print-directory $(FUZZ_BINS)

build/fuzz/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(say) CC $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) \
		-fsanitize=fuzzer-no-link,address,undefined \
		-fno-sanitize-recover=undefined -c -o $@ $<

build/fuzz/fuzz_%: test/fuzz/%.c test/fuzz/fuzz.h test/driver.h test/tools.h \
    test/flat.h $(HDRS) $(FUZZ_OBJS)
	$(say) FUZZ $@
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_SAN) -o $@ $< $(FUZZ_OBJS) \
		$(DEPS_LIBS)

# Each harness for FUZZ_SECONDS, from its seeds (test/fuzz/corpus/NAME,
# read only) into build/fuzz/NAME/, where new inputs and crashes go.
fuzz: fuzz-build
	@for f in $(FUZZERS); do \
		mkdir -p build/fuzz/$$f/corpus; \
		echo "fuzz_$$f: $(FUZZ_SECONDS) s"; \
		build/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) \
		    -print_final_stats=1 -artifact_prefix=build/fuzz/$$f/ \
		    -dict=test/fuzz/$$f.dict build/fuzz/$$f/corpus \
		    test/fuzz/corpus/$$f 2>&1 | grep -E '^(#[0-9]+.*DONE|stat::|==|SUMMARY)' ; \
	done

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
	@MCP_BUILD=$(B) MCP_SANITIZE=$(SANITIZE) sh test/run.sh

bench: all
	@bench/run-stdio.sh
	@bench/run-progress.sh
	@bench/run-sse.sh
	@bench/run-streamable.sh
	@bench/run-metrics.sh
	@bench/run-client.sh
	@bench/run-gateway.sh
	@bench/run-redis.sh
	@bench/idle-sse.sh
	@bench/idle-streamable.sh

install: config.mk
	@$(MAKE) --no-print-directory $(B)/libmcp.a $(B)/libmcp.so \
		$(B)/mcp-demo $(B)/mcp-call $(B)/mcp-gateway $(B)/mcp-bench
	@$(MAKE) --no-print-directory install-files

# A program built with pkg-config against a prefix the dynamic linker
# does not search must still start when an agent launches it, with no
# LD_LIBRARY_PATH: mcp.pc then gives it an rpath (a DT_RUNPATH) to the
# install. /usr and /usr/local are searched (ldconfig runs after a real
# install there, as root), and get none.
PC_RPATH = $(if $(filter /usr /usr/ /usr/local /usr/local/,$(PREFIX)),,-Wl$(COMMA)-rpath$(COMMA)$${libdir})
COMMA = ,

install-files:
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3 \
		$(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 $(B)/libmcp.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libmcp.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libmcp.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmcp.so.$(SOVERSION)
	ln -sf libmcp.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libmcp.so
	install -m 644 include/mcp.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' \
		-e 's|@RPATH@|$(PC_RPATH)|' -e 's/  */ /g' mcp.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/mcp.pc
	@if [ -z "$(DESTDIR)" ] && [ -z "$(PC_RPATH)" ] && \
	    [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
		echo "  LDCONFIG"; ldconfig; fi
	install -m 755 $(B)/mcp-demo $(B)/mcp-call $(B)/mcp-gateway \
		$(B)/mcp-bench $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 644 man/*.7 $(DESTDIR)$(PREFIX)/share/man/man7/
	@sh tools/mlinks.sh $(DESTDIR)$(PREFIX)/share/man/man3 man/*.3

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libmcp.* \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/mcp.pc \
		$(DESTDIR)$(PREFIX)/include/mcp.h \
		$(DESTDIR)$(PREFIX)/bin/mcp-demo $(DESTDIR)$(PREFIX)/bin/mcp-call \
		$(DESTDIR)$(PREFIX)/bin/mcp-gateway $(DESTDIR)$(PREFIX)/bin/mcp-bench \
		$(DESTDIR)$(PREFIX)/share/man/man1/mcp-*.1 \
		$(DESTDIR)$(PREFIX)/share/man/man3/mcp_*.3 \
		$(DESTDIR)$(PREFIX)/share/man/man7/mcp.7 \
		$(DESTDIR)$(PREFIX)/share/man/man7/mcp_*.7

clean:
	rm -rf build test/out

distclean: clean
	rm -rf config.mk config.log config.status configure autom4te.cache
