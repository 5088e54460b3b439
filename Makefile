# SPDX-License-Identifier: GPL-2.0
# vmexit: everything is built under $(OUTPUT). `make V=1` shows the full commands,
# `make DEBUG=1` builds at -O0, `make SAN=1` adds ASan/UBSan to userspace code.
# `make ARCH=arm64` cross-builds a static arm64 vmexit and guest under .output/arm64.

HOST_ARCH := $(shell uname -m | \
	sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/')
ARCH ?= $(HOST_ARCH)
# An ARCH in the environment (some build systems set one) must not make `make` a cross build.
ifeq ($(origin ARCH),environment)
ARCH := $(HOST_ARCH)
endif

CLANG ?= clang
BPFTOOL ?= bpftool
PKG_CONFIG ?= pkg-config
PREFIX ?= /usr/local
DESTDIR ?=
# systemd looks in /usr/local/lib/systemd/system too.
SYSTEMD_UNITDIR ?= $(PREFIX)/lib/systemd/system

ifeq ($(ARCH),$(HOST_ARCH))
OUTPUT ?= .output
ifeq ($(origin CC),default)
CC := gcc
endif
PKG_ENV :=
PKG_STATIC :=
HTTP ?= 1
# report -i trace.dat needs libtracecmd (make deps installs it); without it the build says so.
TRACECMD ?= $(shell $(PKG_CONFIG) --exists libtracecmd 2>/dev/null && echo 1 || echo 0)
else ifeq ($(ARCH),arm64)
# Cross build: the target's libraries come from Debian's :arm64 -dev packages (make deps), and
# the binaries are static so that a bare arm64 initramfs (tests/vm) or host runs them as they are.
OUTPUT ?= .output/arm64
CROSS_COMPILE ?= aarch64-linux-gnu-
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
PKG_CONFIG_LIBDIR ?= /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
PKG_ENV := PKG_CONFIG_LIBDIR=$(PKG_CONFIG_LIBDIR)
PKG_STATIC := --static
LDFLAGS += -static
# Debian's static libmicrohttpd needs GnuTLS, and GnuTLS needs p11-kit, which has no static
# library: the static build has no HTTP exporter (`serve` says so).
HTTP ?= 0
# No static libtracecmd in Debian: the static build reads no trace.dat (report says so).
TRACECMD ?= 0
else
$(error ARCH=$(ARCH): cross builds are for arm64 only (native: $(HOST_ARCH)))
endif

LIBBPF_CFLAGS := $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
PKG_LIBS = $(shell $(PKG_ENV) $(PKG_CONFIG) $(PKG_STATIC) --libs $(1) 2>/dev/null || echo $(2))
LIBBPF_LIBS := $(call PKG_LIBS,libbpf,-lbpf)
NCURSES_LIBS := $(call PKG_LIBS,ncursesw,-lncursesw)
ifeq ($(HTTP),1)
MHD_CFLAGS := $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags libmicrohttpd 2>/dev/null)
MHD_LIBS := $(call PKG_LIBS,libmicrohttpd,-lmicrohttpd)
endif
ifeq ($(TRACECMD),1)
TRACECMD_CFLAGS := $(shell $(PKG_ENV) $(PKG_CONFIG) --cflags libtracecmd 2>/dev/null)
TRACECMD_LIBS := $(call PKG_LIBS,libtracecmd,-ltracecmd -ltracefs -ltraceevent)
endif
LIBS := $(LIBBPF_LIBS) -lelf -lz $(NCURSES_LIBS) $(MHD_LIBS) $(TRACECMD_LIBS) -lpthread -lm

OPT := -O2
ifeq ($(DEBUG),1)
OPT := -O0
endif
SAN_FLAGS :=
ifeq ($(SAN),1)
# float-cast-overflow is not in UBSan's default set: a double past an integer's range (a time
# read from a file) converts to anything.
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
endif

# src/ is in folders by layer (docs/design.md); includes name headers without their folder. Each
# folder compiles with only itself and the folders below it on the include path (tools/layers.mk,
# and those their headers include in turn), so an include that points up fails to compile; `make`
# runs tools/check-layers.sh first, which names the file and line. Tests, benchmarks and fuzzers
# see every folder.
include tools/layers.mk
LAYER_DIRS := commands serve live options kernel output output/rules capture model lib
SRC_DIRS := src $(addprefix src/,$(LAYER_DIRS))
SRC_INC := $(addprefix -I,$(SRC_DIRS))
# The folders below $(1), each with those below it in turn (the layers are a DAG).
layer_below = $(foreach d,$(LAYER_$(1)),$(d) $(call layer_below,$(d)))
layer_inc = $(addprefix -Isrc/,$(sort $(1) $(call layer_below,$(1))))
# The generated skeletons are the kernel layer's: on the path of the folders above it only.
layer_skel = $(if $(filter kernel,$(1) $(call layer_below,$(1))),-I$(OUTPUT))

WARN := -Wall -Wextra -Werror
CFLAGS ?= -g $(OPT)
ALL_CFLAGS := $(CFLAGS) $(WARN) $(SAN_FLAGS) -std=gnu11 -D_GNU_SOURCE -MMD -MP \
	-Iinclude $(LIBBPF_CFLAGS) $(MHD_CFLAGS)
# What a userspace object of src/ sees: its folder's layer (set per folder below); the rest of
# the tree (tests, benchmarks) every folder.
LAYER_INC = $(SRC_INC) -I$(OUTPUT)
ALL_LDFLAGS := $(LDFLAGS) $(SAN_FLAGS)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) -Wno-unused-function -Wno-unused-parameter \
	-Ivmlinux -Iinclude -Ibpf -MMD -MP

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# stat --wake's programs, one set per architecture, each built as wake.bpf.o (src/kernel/
# wake_progs.c loads the one skeleton): x86's APIC hooks, arm64's vGIC and arch timer hooks.
WAKE_BPF_SRC_x86 := bpf/wake.bpf.c
WAKE_BPF_SRC_arm64 := bpf/wake_arm64.bpf.c
BPF_SRCS := $(filter-out bpf/wake_arm64.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))

# HTTP=0 builds the exporter's HTTP side as a stub that refuses to serve (no libmicrohttpd).
ALL_SRCS := $(wildcard $(addsuffix /*.c,$(SRC_DIRS)))
ifeq ($(HTTP),1)
SRCS := $(filter-out src/serve/metrics_http_none.c,$(ALL_SRCS))
else
SRCS := $(filter-out src/serve/metrics_http.c,$(ALL_SRCS))
endif
# TRACECMD=0 builds the trace.dat readers (host capture, guest trace) as stubs that refuse the
# file, with the fix, and leaves every perf.data to perf script: the readers that need
# libtraceevent, and their stubs.
TEP_SRCS := src/capture/import_tracedat.c src/capture/guest_tracedat.c \
	src/capture/import_perfdata.c src/capture/tep_field.c src/capture/tracedat_guard.c \
	src/capture/event_format_parse.c
TEP_NONE_SRCS := src/capture/import_tracedat_none.c src/capture/import_perfdata_none.c
ifeq ($(TRACECMD),1)
SRCS := $(filter-out $(TEP_NONE_SRCS),$(SRCS))
else
SRCS := $(filter-out $(TEP_SRCS),$(SRCS))
endif
OBJS := $(patsubst src/%.c,$(OUTPUT)/src/%.o,$(SRCS))
# The stamp of the last layer check that passed (check-layers below).
LAYERS_OK := $(OUTPUT)/.layers-ok
objs_in = $(foreach o,$(OBJS),$(if $(filter $(OUTPUT)/src/$(1)/,$(dir $(o))),$(o)))
$(foreach d,$(LAYER_DIRS),$(eval $(call objs_in,$(d)): \
	LAYER_INC = $(call layer_inc,$(d)) $(call layer_skel,$(d))))
LIB_OBJS := $(filter-out $(OUTPUT)/src/main.o,$(OBJS))
LIB := $(OUTPUT)/libvmexit.a

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
ifneq ($(HTTP),1)
UNIT_SRCS := $(filter-out tests/unit/test_metrics_http.c,$(UNIT_SRCS))
endif
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))
# Tests of the allocator's behaviour, which ASan replaces: also built and run without it
# (tests/run-all.sh, PLAIN_UNITS).
PLAIN_UNIT_BINS := $(OUTPUT)/tests/test_startup_heap
BPFTEST_SRCS := $(wildcard tests/bpf/test_*.c)
BPFTEST_BINS := $(patsubst tests/bpf/%.c,$(OUTPUT)/tests/%,$(BPFTEST_SRCS))
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCH_BINS := $(patsubst bench/%.c,$(OUTPUT)/bench/%,$(BENCH_SRCS))
# Not a benchmark: the empty programs the benchmarks compare vmexit with (bench/floor_progs.c).
FLOOR_BIN := $(OUTPUT)/bench/floor_progs
# The trace.dat and perf.data fuzzers link the real readers (libtracecmd): built with it only.
FUZZ_TEP_SRCS := tests/fuzz/fuzz_tracedat.c tests/fuzz/fuzz_perfdata.c
FUZZ_SRCS := $(filter-out $(FUZZ_TEP_SRCS),$(wildcard tests/fuzz/fuzz_*.c))
ifeq ($(TRACECMD),1)
FUZZ_SRCS += $(FUZZ_TEP_SRCS)
endif
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_SRCS))
# The bundled guest workloads are per ISA: x86 (tools/vmexit-guest.c) and arm64.
ifeq ($(ARCH),arm64)
TOOL_BINS := $(OUTPUT)/vmexit-guest-arm64
else
TOOL_BINS := $(OUTPUT)/vmexit-guest
endif

.PHONY: all clean install check test test-matrix tests bench bench-bed bench-bed-user fuzz \
	fuzz-build demo deps check-layers
.DELETE_ON_ERROR:
# Skeletons and BPF objects are intermediates of the pattern rules: without this make deletes
# them after each build and the next `make` rebuilds every userspace object.
.SECONDARY: $(BPF_OBJS) $(SKELS)

all: $(OUTPUT)/vmexit $(TOOL_BINS)
ifeq ($(ARCH),$(HOST_ARCH))
	$(Q)ln -sf $(OUTPUT)/vmexit vmexit
endif

$(OUTPUT) $(OUTPUT)/src $(OUTPUT)/tests $(OUTPUT)/bench $(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $(@:.o=.d) -c $< -o $@

$(OUTPUT)/wake.bpf.o: $(WAKE_BPF_SRC_$(ARCH)) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $(@:.o=.d) -c $< -o $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@

# Every userspace object may include any skeleton: generate them first.
$(OUTPUT)/src/%.o: src/%.c $(SKELS) | $(OUTPUT)/src $(LAYERS_OK)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) -c $< -o $@

# The libtraceevent readers alone see libtracecmd's headers, ahead of ours: trace-cmd.h includes
# "tracefs.h", which is also the name of src/kernel/tracefs.h.
$(patsubst src/%.c,$(OUTPUT)/src/%.o,$(TEP_SRCS)): ALL_CFLAGS := $(TRACECMD_CFLAGS) $(ALL_CFLAGS)

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUTPUT)/vmexit: $(OUTPUT)/src/main.o $(LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LIBS) -o $@

# The bundled guest workload is static so the nested test bed can run it as is.
$(OUTPUT)/vmexit-guest: tools/vmexit-guest.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP -Iinclude -static -pthread \
		$< -o $@

$(OUTPUT)/vmexit-guest-arm64: tools/vmexit-guest-arm64.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP -Iinclude -static -pthread \
		$< -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(LIB) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) $< $(LIB) $(ALL_LDFLAGS) $(LIBS) -o $@

# uftrace's tracee: -pg, not sanitized (libmcount and ASan would both want to come first).
$(OUTPUT)/tests/uftrace_tiny: tests/host/progs/uftrace_tiny.c | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) -pg -O0 -g $< -o $@

# serve's exporter over synthesized cells, for the serve tests that need no KVM.
$(OUTPUT)/tests/serve_synth: tests/host/progs/serve_synth.c $(LIB) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) $< $(LIB) $(ALL_LDFLAGS) $(LIBS) -o $@

$(OUTPUT)/tests/%: tests/bpf/%.c $(LIB) $(SKELS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) $< $(LIB) $(ALL_LDFLAGS) $(LIBS) -o $@

$(OUTPUT)/bench/%: bench/%.c $(LIB) $(SKELS) | $(OUTPUT)/bench
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LAYER_INC) $< $(LIB) $(ALL_LDFLAGS) $(LIBS) -o $@

# libFuzzer targets: clang, with the library sources compiled in (not the gcc archive). These
# take the libtraceevent stubs (one compiler run: libtracecmd's headers need an include order of
# their own, see above); the trace.dat and perf.data fuzzers below link the real readers.
FUZZ_LIB_SRCS := $(filter-out src/main.c $(TEP_SRCS) $(TEP_NONE_SRCS),$(SRCS)) $(TEP_NONE_SRCS)
# fuzz_stat_json stops at the first UBSan report (the others print it and go on: not yet checked
# that their corpora are clean without recovery).
$(OUTPUT)/fuzz/fuzz_stat_json: FUZZ_RECOVER := -fno-sanitize-recover=all
$(OUTPUT)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRCS) $(SKELS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined,float-cast-overflow $(FUZZ_RECOVER) -std=gnu11 \
		-D_GNU_SOURCE -Iinclude $(SRC_INC) -I$(OUTPUT) $(LIBBPF_CFLAGS) $(filter %.c,$^) \
		$(LIBS) -o $@

# The capture readers' fuzzers: the library compiled file by file (the libtraceevent readers see
# libtracecmd's headers first, as above), with the real readers in place of their stubs.
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer-no-link,address,undefined,float-cast-overflow -std=gnu11 -D_GNU_SOURCE \
	-Iinclude $(SRC_INC) -I$(OUTPUT) $(LIBBPF_CFLAGS)
FUZZ_TEP_OBJS := $(patsubst src/%.c,$(OUTPUT)/fuzz/obj/%.o,$(filter-out src/main.c,$(SRCS)))
$(OUTPUT)/fuzz/obj/%.o: src/%.c $(SKELS) | $(OUTPUT)/fuzz
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -c $< -o $@
$(patsubst src/%.c,$(OUTPUT)/fuzz/obj/%.o,$(TEP_SRCS)): FUZZ_CFLAGS := $(TRACECMD_CFLAGS) \
	$(FUZZ_CFLAGS)
$(patsubst tests/fuzz/%.c,$(OUTPUT)/fuzz/%,$(FUZZ_TEP_SRCS)): $(OUTPUT)/fuzz/%: tests/fuzz/%.c \
		tests/fuzz/capture_fuzz.h $(FUZZ_TEP_OBJS)
	$(call msg,FUZZ-CC,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(filter %.c %.o,$^) $(LIBS) -o $@

# Every #include in src/ points down the layers (docs/design.md): a file names the first one
# that does not. Every build checks first (1 s), again only when a source or the layers change.
check-layers:
	$(Q)tools/check-layers.sh

$(LAYERS_OK): $(wildcard $(addsuffix /*.[ch],$(SRC_DIRS))) tools/layers.mk tools/check-layers.sh
	$(call msg,LAYERS,src/)
	$(Q)mkdir -p $(@D)
	$(Q)tools/check-layers.sh
	$(Q)touch $@

tests: $(OUTPUT)/vmexit $(TOOL_BINS) $(UNIT_BINS) $(BPFTEST_BINS) $(OUTPUT)/tests/uftrace_tiny \
	$(OUTPUT)/tests/serve_synth

bench: $(OUTPUT)/vmexit $(TOOL_BINS) $(BENCH_BINS) $(FLOOR_BIN)
	$(Q)bench/run.sh $(OUTPUT)

# The per-exit cost of vmexit, bpftrace and empty programs (the floor) on real kvm_exit, in a
# nested bed (tests/vm): a boot of its own (~5 min on svm, ~25 min on vmx), so not part of
# `make bench`.
# BED=svm|vmx, KERNEL=6.1|6.12.
bench-bed: $(OUTPUT)/vmexit $(TOOL_BINS) $(FLOOR_BIN)
	$(Q)bench/bed_overhead.sh --bed $(or $(BED),svm) --kernel $(or $(KERNEL),6.1) $(OUTPUT)

# bench_user_exits (`make bench`'s user-exit figures) in a nested bed, for a host without
# /dev/kvm: a boot of its own (~30-40 min on vmx with other beds running). BED=vmx|svm,
# KERNEL=6.12|6.1 (default vmx, 6.12: Bochs counts instructions, so the figures hold under load).
bench-bed-user: $(OUTPUT)/vmexit $(TOOL_BINS) $(FLOOR_BIN) $(OUTPUT)/bench/bench_user_exits
	$(Q)bench/bed_user_exits.sh --bed $(or $(BED),vmx) --kernel $(or $(KERNEL),6.12) $(OUTPUT)

# The fuzzers built (make test runs their short, fixed sets: tests/fuzz/run-*.sh).
fuzz-build: $(FUZZ_BINS)

# The longer run: each fuzzer for FUZZ_SECONDS (300) from its seeds (tests/fuzz/long-run.sh).
fuzz: fuzz-build
	$(Q)tests/fuzz/long-run.sh $(OUTPUT)

# Installs build dependencies on Debian/Ubuntu (used by `make demo`, `make test` and CI).
deps:
	$(Q)tools/install-deps.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh $(OUTPUT)

# The quick tier (README, "Tests"): the layer check, the unit and BPF tests (ASan/UBSan build),
# the fuzz smoke runs and the shipped integration files; no guests, no beds.
check: check-layers
	$(Q)$(MAKE) --no-print-directory SAN=1 OUTPUT=$(OUTPUT)/san tests
	$(Q)$(MAKE) --no-print-directory all fuzz-build $(PLAIN_UNIT_BINS)
	$(Q)VMEXIT_TEST_ONLY=check tests/run-all.sh $(OUTPUT)

# Everything: the quick tier first (a broken unit stops the run in minutes, not after the
# beds), then the host tests and the beds. Unit tests run under ASan/UBSan; the same build runs
# the kernel tests; the arm64 bed runs the static arm64 build.
test: deps
	$(Q)$(MAKE) --no-print-directory check
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(OUTPUT)/arm64 all
	$(Q)VMEXIT_TEST_ONLY=rest tests/run-all.sh $(OUTPUT)

# Only the nested beds, each on both kernels (make test runs VMX on one: tests/run-all.sh).
test-matrix: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)VMEXIT_TEST_ONLY=vm VMEXIT_TEST_SVM_KERNELS="6.1 6.12" VMEXIT_TEST_VMX_KERNELS="6.1 6.12" \
		tests/run-all.sh $(OUTPUT)

install: $(OUTPUT)/vmexit
	install -D -m 0755 $(OUTPUT)/vmexit $(DESTDIR)$(PREFIX)/sbin/vmexit
	install -D -m 0644 docs/vmexit.8 $(DESTDIR)$(PREFIX)/share/man/man8/vmexit.8
	install -d $(DESTDIR)$(SYSTEMD_UNITDIR)
	sed 's|@SBINDIR@|$(PREFIX)/sbin|' contrib/vmexit.service >$(DESTDIR)$(SYSTEMD_UNITDIR)/vmexit.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNITDIR)/vmexit.service

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) vmexit

# A BPF object's dependencies only while its source exists: a removed bpf/X.bpf.c must not
# leave a rule that asks for it.
-include $(filter-out $(OUTPUT)/%.bpf.d,$(wildcard $(OUTPUT)/*.d)) $(wildcard $(BPF_OBJS:.o=.d))
-include $(wildcard $(patsubst %,$(OUTPUT)/%/*.d,$(SRC_DIRS)) $(OUTPUT)/tests/*.d $(OUTPUT)/bench/*.d)
