# SPDX-License-Identifier: GPL-2.0
# The whole build of criu-like. Everything generated lands in build/.
#
#   make            build/criu-like
#   make test       install deps, build, run every test (unit, zdtm, integration, fuzz)
#   make fuzz       libFuzzer harnesses (clang, ASan, UBSan), 5 s each (Documentation/fuzzing.md)
#   make demo       install deps, build, checkpoint/restore a running program
#   make lint       clang-format check on every C file, cppcheck
#   make install    PREFIX=/usr/local (DESTDIR honoured): binary, man page, systemd units,
#                   the client library libcriu-like (.so, .a, header, pkg-config file)
#   make clean

PREFIX ?= /usr/local
B := build
V ?= 0
ifeq ($(V),0)
Q := @
E := @echo
else
Q :=
E := @true
endif

CC ?= gcc
LD ?= ld
OBJCOPY ?= objcopy
PROTOC_C ?= protoc-c
PKGS := libprotobuf-c libnl-3.0 libnl-route-3.0 libcap libbsd gnutls libnetfilter_queue libnetfilter_conntrack
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# GnuTLS: its headers only, the library is loaded at the first TLS connection (net/tls.c)
PKG_LIBS := $(shell pkg-config --libs $(filter-out gnutls,$(PKGS)) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wno-missing-field-initializers
CPPFLAGS := -D_GNU_SOURCE -Icriu-like/include -Icriu-like -Iarch/x86/include -Iparasite/include \
	-I$(B)/include -I$(B)/images $(PKG_CFLAGS)
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) -fno-strict-aliasing -MMD -MP
LDLIBS := $(PKG_LIBS) -lpthread
# The criu-like binary takes each library but glibc's from its static archive
# where the system ships one (libprotobuf-c, libnl, libcap, libbsd on Debian),
# the others shared, and the netfilter ones not at all: they are loaded at
# their first use (include/dl-lib.h). Every restored task is a fork of
# criu-like and its restorer unmaps what it inherited: each shared library's
# 4-6 mappings were copied at every fork and unmapped in every task
# (Documentation/restore.md, "The controller's heap and the forks"). A -lX
# with neither libX.a nor libX.so is a dependency of a shared library, which
# brings it. Unit tests link them all shared, as before.
DL_PKGS := libnetfilter_queue libnetfilter_conntrack
GLIBC_LIBS := c m dl rt pthread
lib_path = $(filter /%,$(shell $(CC) -print-file-name=lib$(1)))
link_lib = $(if $(filter $(GLIBC_LIBS),$(1)),-l$(1),$(if $(call lib_path,$(1).a),-l:lib$(1).a,$(if \
	$(call lib_path,$(1).so),-l$(1))))
TOOL_LDLIBS = $(foreach l,$(patsubst -l%,%,$(filter -l%,$(shell pkg-config --static --libs \
	$(filter-out gnutls $(DL_PKGS),$(PKGS)) 2>/dev/null))),$(call link_lib,$(l))) -lpthread

# ---- images: protobuf-c schemas --------------------------------------------
PROTOS := $(wildcard images/*.proto)
PB_C := $(patsubst images/%.proto,$(B)/images/%.pb-c.c,$(PROTOS))
PB_H := $(PB_C:.c=.h)
PB_OBJ := $(PB_C:.c=.o)

$(B)/images/%.pb-c.c $(B)/images/%.pb-c.h: images/%.proto
	$(E) "  PROTOC  $<"
	$(Q)mkdir -p $(B)/images
	$(Q)$(PROTOC_C) --proto_path=images --c_out=$(B)/images $<

$(B)/images/%.pb-c.o: $(B)/images/%.pb-c.c
	$(E) "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-unused-parameter -c -o $@ $<

# ---- parasite and restorer blobs (freestanding code run inside targets) ----
# Each blob NAME is built from parasite/NAME.c (plus parasite/NAME/*.c, linked
# into that blob alone), parasite/lib/*.c and the arch syscall stubs, linked
# as a PIE at 0 by parasite/blob.lds, checked for
# run-time relocations and undefined symbols, then turned into
# $(B)/include/NAME-blob.h (a byte array plus symbol offsets).
BLOBS := $(basename $(notdir $(wildcard parasite/*.c)))
BLOB_LIB_SRC := $(wildcard parasite/lib/*.c) $(wildcard arch/x86/parasite/*.c) \
	$(wildcard arch/x86/parasite/*.S)
BLOB_CFLAGS := -O2 -g0 -std=gnu11 $(WARN) -fpie -fno-stack-protector -nostdlib \
	-ffreestanding -fno-builtin -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-fno-jump-tables -fno-common -mgeneral-regs-only -fvisibility=hidden \
	-D_GNU_SOURCE -DCR_PARASITE -Iparasite/include -Iarch/x86/include -I$(B)/include -MMD -MP
BLOB_HDRS := $(patsubst %,$(B)/include/%-blob.h,$(BLOBS))

$(B)/parasite/%.o: parasite/%.c
	$(E) "  PIECC   $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BLOB_CFLAGS) -c -o $@ $<

$(B)/parasite/arch/%.o: arch/x86/parasite/%.c
	$(E) "  PIECC   $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BLOB_CFLAGS) -c -o $@ $<

$(B)/parasite/arch/%.o: arch/x86/parasite/%.S
	$(E) "  PIEAS   $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BLOB_CFLAGS) -D__ASSEMBLY__ -c -o $@ $<

BLOB_LIB_OBJ := $(patsubst parasite/lib/%.c,$(B)/parasite/lib/%.o,$(filter parasite/lib/%,$(BLOB_LIB_SRC))) \
	$(patsubst arch/x86/parasite/%,$(B)/parasite/arch/%,$(addsuffix .o,$(basename $(filter arch/x86/%,$(BLOB_LIB_SRC)))))

# A blob's own objects beyond parasite/NAME.o: those of parasite/NAME/*.c.
define blob_own_obj
$(B)/parasite/$(1).elf: BLOB_OWN_OBJ := $(patsubst %.c,$(B)/%.o,$(wildcard parasite/$(1)/*.c))
$(B)/parasite/$(1).elf: $(patsubst %.c,$(B)/%.o,$(wildcard parasite/$(1)/*.c))
endef
$(foreach b,$(BLOBS),$(eval $(call blob_own_obj,$(b))))

$(B)/parasite/%.elf: $(B)/parasite/%.o $(BLOB_LIB_OBJ) parasite/blob.lds
	$(E) "  PIELD   $@"
	$(Q)$(LD) -pie --no-dynamic-linker -z noexecstack --no-undefined --no-warn-rwx-segments \
		-e __export_entry \
		-T parasite/blob.lds -o $@ $< $(BLOB_OWN_OBJ) $(BLOB_LIB_OBJ)

$(B)/include/%-blob.h: $(B)/parasite/%.elf scripts/gen-blob.sh
	$(E) "  BLOB    $@"
	$(Q)mkdir -p $(B)/include
	$(Q)sh scripts/gen-blob.sh $* $< $@

# ---- the tool ----------------------------------------------------------------
TOOL_SRC := $(filter-out criu-like/cli/main.c,$(wildcard criu-like/*/*.c)) $(wildcard arch/x86/*.c)
O := $(B)/obj
TOOL_OBJ := $(patsubst %.c,$(O)/%.o,$(TOOL_SRC)) $(PB_OBJ)
# A .pb-c.c includes the headers of the protos it imports: all of them first.
$(PB_OBJ): | $(PB_H)
# The tool's objects, linked by the binary, the unit tests and the benchmarks
# (not the client library libcriu-like below).
LIB := $(B)/criu-like-tool.a
GEN_HDRS := $(PB_H) $(BLOB_HDRS)

$(O)/%.o: %.c | $(GEN_HDRS)
	$(E) "  CC      $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(TOOL_OBJ)
	$(E) "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

# -z now: every symbol bound once at startup, not lazily in each restored
# task (each one a fork of criu-like calling functions it never called before)
$(B)/criu-like: $(O)/criu-like/cli/main.o $(LIB)
	$(E) "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) -Wl,-z,now -o $@ $^ $(TOOL_LDLIBS)

# ---- the client library libcriu-like (lib/c/, Documentation/rpc.md) --------
# CRIU's libcriu API over the RPC: $(B)/lib/ holds the shared library (with
# its soname and symlinks), the static one, the headers as installed
# (include/criu-like/) and the pkg-config files: criu-like.pc for PREFIX, and
# criu-like-uninstalled.pc, which pkg-config prefers when PKG_CONFIG_PATH
# holds $(B)/lib/pkgconfig, for programs built against the build directory.
# Only the API is exported (-fvisibility=hidden); it links protobuf-c only.
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CLIB_VERSION := 1.0.0
CLIB_SONAME := libcriu-like.so.$(firstword $(subst ., ,$(CLIB_VERSION)))
CL := $(B)/lib
CLIB_SO := $(CL)/libcriu-like.so.$(CLIB_VERSION)
CLIB_A := $(CL)/libcriu-like.a
CLIB_HDRS := $(CL)/include/criu-like/criu.h $(CL)/include/criu-like/rpc.pb-c.h \
	$(CL)/include/criu-like/criu/criu.h
CLIB_PC := $(CL)/pkgconfig/criu-like.pc $(CL)/pkgconfig/criu-like-uninstalled.pc
CLIB_OBJ := $(patsubst lib/c/%.c,$(CL)/obj/%.o,$(wildcard lib/c/*.c)) $(CL)/obj/rpc.pb-c.o
PROTOBUF_CFLAGS := $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)
PROTOBUF_LIBS := $(shell pkg-config --libs libprotobuf-c 2>/dev/null)
CLIB_CFLAGS := -D_GNU_SOURCE -Ilib/c -I$(B)/images $(PROTOBUF_CFLAGS) $(CFLAGS) -fPIC \
	-fvisibility=hidden
CRIU_LIKE_VERSION = $(shell sed -n 's/.*define CRIU_LIKE_VERSION "\(.*\)"/\1/p' criu-like/include/cr.h)

$(CL)/obj/%.o: lib/c/%.c | $(B)/images/rpc.pb-c.h
	$(E) "  CC      $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CLIB_CFLAGS) -c -o $@ $<

$(CL)/obj/rpc.pb-c.o: $(B)/images/rpc.pb-c.c $(B)/images/rpc.pb-c.h
	$(E) "  CC      $< (libcriu-like)"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CLIB_CFLAGS) -Wno-unused-parameter -c -o $@ $<

$(CLIB_A): $(CLIB_OBJ)
	$(E) "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(CLIB_SO): $(CLIB_OBJ)
	$(E) "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,$(CLIB_SONAME) -Wl,--no-undefined -Wl,-z,defs \
		-o $@ $^ $(PROTOBUF_LIBS)
	$(Q)ln -sf $(notdir $@) $(CL)/$(CLIB_SONAME)
	$(Q)ln -sf $(CLIB_SONAME) $(CL)/libcriu-like.so

$(CL)/include/criu-like/criu.h: lib/c/criu.h
	$(Q)install -D -m 644 $< $@
$(CL)/include/criu-like/rpc.pb-c.h: $(B)/images/rpc.pb-c.h
	$(Q)install -D -m 644 $< $@
$(CL)/include/criu-like/criu/criu.h: lib/c/criu-compat.h
	$(Q)install -D -m 644 $< $@

# $(call clib_pc,OUT,PREFIX,LIBDIR,INCLUDEDIR): lib/c/criu-like.pc.in filled in
clib_pc = sed -e 's|@PREFIX@|$(2)|' -e 's|@LIBDIR@|$(3)|' -e 's|@INCLUDEDIR@|$(4)|' \
	-e 's|@VERSION@|$(CRIU_LIKE_VERSION)|' lib/c/criu-like.pc.in >$(1)

$(CL)/pkgconfig/criu-like.pc: lib/c/criu-like.pc.in criu-like/include/cr.h Makefile
	$(Q)mkdir -p $(dir $@)
	$(Q)$(call clib_pc,$@,$(PREFIX),$(LIBDIR),$(INCLUDEDIR))
$(CL)/pkgconfig/criu-like-uninstalled.pc: lib/c/criu-like.pc.in criu-like/include/cr.h Makefile
	$(Q)mkdir -p $(dir $@)
	$(Q)$(call clib_pc,$@,$(abspath $(CL)),$${prefix},$${prefix}/include)

clib: $(CLIB_SO) $(CLIB_A) $(CLIB_HDRS) $(CLIB_PC)

all: $(B)/criu-like clib tests-build
.DEFAULT_GOAL := all

# ---- tests -------------------------------------------------------------------
UNIT_SRC := $(wildcard test/unit/test-*.c)
UNIT_BIN := $(patsubst test/unit/%.c,$(B)/test/unit/%,$(UNIT_SRC))

# What the unit tests share (victims, log capture, dump steps): test/unit/lib/.
UNIT_LIB_SRC := $(wildcard test/unit/lib/*.c)
UNIT_LIB := $(B)/test/unit/libunit.a

$(UNIT_LIB): $(patsubst %.c,$(O)/%.o,$(UNIT_LIB_SRC))
	$(E) "  AR      $@"
	$(Q)mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/test/unit/%: $(O)/test/unit/%.o $(UNIT_LIB) $(LIB)
	$(E) "  LINK    $@"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

ZDTM_LIB_SRC := $(wildcard test/zdtm/lib/*.c)
ZDTM_LIB := $(B)/test/zdtm/libzdtm.a
ZDTM_SRC := $(wildcard test/zdtm/static/*.c)
ZDTM_BIN := $(patsubst %.c,$(B)/%,$(ZDTM_SRC))
ZDTM_RUNNER_SRC := $(wildcard test/zdtm/runner/*.c)
ZDTM_RUNNER := $(B)/test/zdtm/zdtm-run
ZDTM_CPPFLAGS := -D_GNU_SOURCE -Itest/zdtm/lib

$(B)/test/zdtm/%.o: test/zdtm/%.c
	$(E) "  CC      $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ZDTM_CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(ZDTM_LIB): $(patsubst test/zdtm/%.c,$(B)/test/zdtm/%.o,$(ZDTM_LIB_SRC))
	$(E) "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/test/zdtm/static/%: $(B)/test/zdtm/static/%.o $(ZDTM_LIB)
	$(E) "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^ -lpthread -lrt

$(ZDTM_RUNNER): $(patsubst test/zdtm/%.c,$(B)/test/zdtm/%.o,$(ZDTM_RUNNER_SRC))
	$(E) "  LINK    $@"
	$(Q)$(CC) $(CFLAGS) -o $@ $^

# Helper programs of the shell-driven integration tests (test/integration/*.sh).
INTEG_SRC := $(wildcard test/integration/*.c)
INTEG_BIN := $(patsubst %.c,$(B)/%,$(INTEG_SRC))

$(B)/test/integration/%: test/integration/%.c
	$(E) "  CC      $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< -lpthread -lrt

# The RPC test client speaks images/rpc.proto: protobuf-c and the generated code.
$(B)/test/integration/rpc-client: test/integration/rpc-client.c $(B)/images/rpc.pb-c.o
	$(E) "  CC      $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -D_GNU_SOURCE $(CFLAGS) -I$(B)/images $(PKG_CFLAGS) -o $@ $^ $(PKG_LIBS)

# The client library's tests: libcriu-test linked with the static library,
# libcriu-test-so and libcriu-compat (a program as written for CRIU's libcriu)
# built through pkg-config against the build directory, run from it (rpath).
CLIB_PKG := PKG_CONFIG_PATH=$(abspath $(CL))/pkgconfig pkg-config

$(B)/test/integration/libcriu-test: test/integration/libcriu-test.c $(CLIB_A) $(CLIB_HDRS)
	$(E) "  CC      $< (static)"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -D_GNU_SOURCE $(CFLAGS) -I$(CL)/include/criu-like $(PROTOBUF_CFLAGS) -o $@ $< \
		$(CLIB_A) $(PROTOBUF_LIBS)

$(B)/test/integration/libcriu-test-so: test/integration/libcriu-test.c $(CLIB_SO) $(CLIB_HDRS) \
		$(CLIB_PC)
	$(E) "  CC      $< (pkg-config)"
	$(Q)mkdir -p $(dir $@)
	$(Q)flags=$$($(CLIB_PKG) --cflags --libs criu-like) || exit 1; \
		$(CC) -D_GNU_SOURCE $(CFLAGS) -o $@ $< $$flags -Wl,-rpath,$(abspath $(CL))

$(B)/test/integration/libcriu-compat: test/integration/libcriu-compat.c $(CLIB_SO) $(CLIB_HDRS) \
		$(CLIB_PC)
	$(E) "  CC      $< (pkg-config)"
	$(Q)mkdir -p $(dir $@)
	$(Q)flags=$$($(CLIB_PKG) --cflags --libs criu-like) || exit 1; \
		$(CC) $(CFLAGS) -o $@ $< $$flags -Wl,-rpath,$(abspath $(CL))

tests-build: $(B)/test/integration/libcriu-test-so $(INTEG_BIN) $(UNIT_BIN) $(if $(ZDTM_LIB_SRC),$(ZDTM_LIB)) $(ZDTM_BIN) $(if $(ZDTM_RUNNER_SRC),$(ZDTM_RUNNER))

# ---- fuzzing (libFuzzer) -------------------------------------------------------
# `make fuzz`: the harnesses test/fuzz/fuzz-*.c, linked against the tool's
# sources, all compiled by clang with ASan, UBSan and libFuzzer's coverage
# into $(B)/fuzz (generated headers come from the normal build), then a
# short run of each (test/fuzz/run.sh; FUZZ_SECONDS each, default 5).
# `make fuzz-build` only builds. See Documentation/fuzzing.md.
FUZZ_CC ?= clang
FZ := $(B)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g -std=gnu11 $(WARN) -fno-strict-aliasing -MMD -MP $(FUZZ_SAN) \
	-fsanitize=fuzzer-no-link
FUZZ_SECONDS ?= 5
FUZZ_HARNESS := $(basename $(notdir $(filter-out test/fuzz/fuzz-common.c,$(wildcard test/fuzz/fuzz-*.c))))
FUZZ_BIN := $(patsubst %,$(FZ)/%,$(FUZZ_HARNESS))
FUZZ_LIB := $(FZ)/libcriu-like.a
FUZZ_LIB_OBJ := $(patsubst %.c,$(FZ)/obj/%.o,$(TOOL_SRC)) \
	$(patsubst $(B)/images/%.c,$(FZ)/obj/images/%.o,$(PB_C))

$(FZ)/obj/%.o: %.c | $(GEN_HDRS)
	$(E) "  FUZZCC  $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -Itest/fuzz $(FUZZ_CFLAGS) -c -o $@ $<

$(FZ)/obj/images/%.o: $(B)/images/%.c | $(GEN_HDRS)
	$(E) "  FUZZCC  $<"
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -Wno-unused-parameter -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	$(E) "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(FZ)/fuzz-%: $(FZ)/obj/test/fuzz/fuzz-%.o $(FZ)/obj/test/fuzz/fuzz-common.o $(FUZZ_LIB)
	$(E) "  LINK    $@"
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz-build: $(FUZZ_BIN)

fuzz: fuzz-build
	$(Q)B=$(B) sh test/fuzz/run.sh $(FUZZ_SECONDS)

.PHONY: fuzz fuzz-build

deps:
	$(Q)sh scripts/install-deps.sh

# `make test` is what CI runs: it must pass on a fresh clone, as root.
test: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh scripts/run-tests.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh scripts/demo.sh

# ---- lint, install, clean ----------------------------------------------------
C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find criu-like parasite arch test -name '*.[ch]')

lint:
	$(Q)clang-format --dry-run --Werror $(C_FILES)
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability --std=c11 \
		--suppress=missingIncludeSystem --inline-suppr -D__x86_64__ -D_GNU_SOURCE \
		-Icriu-like/include -Icriu-like -Iarch/x86/include -Iparasite/include \
		criu-like arch parasite test/zdtm/lib lib/c
	@echo "lint: ok"

# systemd's unit directory (criu-like.service, criu-like.socket: the RPC daemon)
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system

# CRIU_NAME=1: also a `criu` link to criu-like in PREFIX/sbin, the name runc,
# podman and go-criu look for in PATH (Documentation/runtimes.md)
CRIU_NAME ?=

install: $(B)/criu-like clib
	install -D -m 755 $(B)/criu-like $(DESTDIR)$(PREFIX)/sbin/criu-like
	$(if $(CRIU_NAME),ln -sf criu-like $(DESTDIR)$(PREFIX)/sbin/criu)
	install -D -m 755 $(CLIB_SO) $(DESTDIR)$(LIBDIR)/$(notdir $(CLIB_SO))
	ln -sf $(notdir $(CLIB_SO)) $(DESTDIR)$(LIBDIR)/$(CLIB_SONAME)
	ln -sf $(CLIB_SONAME) $(DESTDIR)$(LIBDIR)/libcriu-like.so
	install -D -m 644 $(CLIB_A) $(DESTDIR)$(LIBDIR)/libcriu-like.a
	install -D -m 644 lib/c/criu.h $(DESTDIR)$(INCLUDEDIR)/criu-like/criu.h
	install -D -m 644 $(B)/images/rpc.pb-c.h $(DESTDIR)$(INCLUDEDIR)/criu-like/rpc.pb-c.h
	install -D -m 644 lib/c/criu-compat.h $(DESTDIR)$(INCLUDEDIR)/criu-like/criu/criu.h
	mkdir -p $(DESTDIR)$(PKGCONFIGDIR)
	$(call clib_pc,$(DESTDIR)$(PKGCONFIGDIR)/criu-like.pc,$(PREFIX),$(LIBDIR),$(INCLUDEDIR))
	install -D -m 644 Documentation/criu-like.8 $(DESTDIR)$(PREFIX)/share/man/man8/criu-like.8
	install -D -m 644 scripts/systemd/criu-like.socket $(DESTDIR)$(SYSTEMD_UNIT_DIR)/criu-like.socket
	mkdir -p $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|' scripts/systemd/criu-like.service \
		>$(DESTDIR)$(SYSTEMD_UNIT_DIR)/criu-like.service
	chmod 644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/criu-like.service

clean:
	rm -rf $(B)

.PHONY: all test demo deps lint install clean tests-build clib
.SECONDARY:

-include $(shell find $(B) -path '$(B)/test/zdtm/out' -prune -o -name '*.d' -type f -print 2>/dev/null)
