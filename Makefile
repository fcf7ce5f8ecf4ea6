# ncclwatch — top-level Makefile.
#
# Each part of the data's path has its own fragment (`<part>/part.mk`) that
# adds its targets to the lists below; this file holds what they share.
#
#   make            build everything into $(BUILD)
#   make test       install deps, build, run every test; ends "N passed, N failed"
#                   (T="WORD..." only the tests whose path contains a WORD)
#   make check T=x  build and run the tests T names, without make deps
#   make soak       the chaos tests tests/soak/soak-*.sh, NW_SOAK_ROUNDS=N times
#                   the CI size (default 1); figures, then "N passed, N failed"
#   make demo       a simulated 8-rank job that hangs and gets diagnosed
#   make bench      benchmarks (figures and ratios, never pass/fail on time)
#   make deps       install the Debian packages (root) or print the line
#                   (deps-build: only those the build and the demo need)
#   make install    PREFIX=/usr/local DESTDIR=
#   make schema     docs/diagnose.schema.json's verdict kinds from report/verdict_kinds.h
#   make test SAN=address,undefined   (or SAN=thread) sanitizer build+run

CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
DESTDIR   ?=
CC        ?= gcc
SAN       ?=

ifeq ($(SAN),)
BUILD ?= build
else
BUILD ?= build/san-$(subst $(comma),-,$(SAN))
endif
comma := ,

# nccl.h: the toolkit's, else the system's (a GPU machine with libnccl-dev),
# else NCCL_INCLUDE (e.g. the nvidia-nccl wheel's include/).
NCCL_INCLUDE ?= $(patsubst %/,%,$(dir $(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h))))
ifeq ($(wildcard $(NCCL_INCLUDE)/nccl.h),)
$(error nccl.h not found under CUDA_HOME=$(CUDA_HOME) or /usr/include (set CUDA_HOME to the CUDA toolkit with NCCL, or NCCL_INCLUDE))
endif
ifeq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
$(error cuda.h not found under CUDA_HOME=$(CUDA_HOME) (set CUDA_HOME to the CUDA toolkit))
endif

OPT      ?= -O2
CPPFLAGS += -Iinclude -isystem $(CUDA_HOME)/include -D_GNU_SOURCE
ifneq ($(NCCL_INCLUDE),/usr/include)
ifneq ($(NCCL_INCLUDE),$(CUDA_HOME)/include)
CPPFLAGS += -isystem $(NCCL_INCLUDE)
endif
endif
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror $(OPT) -g -pthread
LDFLAGS  += -pthread
ifneq ($(SAN),)
CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer
LDFLAGS += -fsanitize=$(SAN)
endif
# Flags for objects that go into shared libraries: a fragment adds them with
# a target-specific `$(OBJS): CFLAGS += $(LIB_CFLAGS)`. Only what a version
# script or an explicit visibility attribute marks is exported.
LIB_CFLAGS = -fPIC -fvisibility=hidden

# Lists the fragments append to: recursive (=), so that what a fragment
# appends may name another fragment's variables, whichever comes first.
LIBS         =
BINS         =
TEST_BINS    =
BENCHES      =
INSTALL_LIBS =
INSTALL_BINS =
# Other folders' objects and libraries the CLI links (attach/part.mk).
CLI_EXTRA_OBJS =
CLI_EXTRA_LIBS =

# The simulated CUDA driver and NCCL (tests/sim/): programs that run on
# them link against the sonames only (libcuda.so.1, libnccl.so.2); at run
# time LD_LIBRARY_PATH picks the real libraries or $(BUILD)/sim. They are
# linked against the simulated ones, so the simulation is built first
# (order-only prerequisite | $(SIM_SONAMES)).
SIM_SONAMES = $(BUILD)/sim/libcuda.so.1 $(BUILD)/sim/libnccl.so.2
SIM_LINK    = -L$(BUILD)/sim -l:libnccl.so.2 -l:libcuda.so.1
# A program that needs NCCL only: the real libnccl.so.2 loads the driver itself.
NCCL_LINK   = -L$(BUILD)/sim -l:libnccl.so.2

NW_SOAK_ROUNDS ?= 1

.PHONY: all test check soak demo bench deps deps-build install clean readme-verdicts schema
all:

# Prerequisites written $$(VAR) are expanded once every fragment is read.
.SECONDEXPANSION:

# The fragments, one per part. Any order gives the same build
# (tests/make/test-make-order.sh includes them shuffled): a fragment uses
# another's variables only where make expands them late, in recursive (=)
# variables, recipes and prerequisites written $$(VAR) (.SECONDEXPANSION,
# above); what several share is defined above.
PARTS := \
	tests/sim/cuda/part.mk tests/sim/nccl/part.mk \
	examples/part.mk capture/part.mk watchdog/part.mk attach/part.mk pystack/part.mk \
	report/part.mk interpose/part.mk \
	tests/interpose/part.mk tests/bench/part.mk tests/compat/part.mk tests/watchdog/part.mk \
	tests/capture/part.mk tests/hangs/part.mk tests/unit/part.mk tests/gen/part.mk \
	tests/cli/part.mk tests/analysis/part.mk tests/corpus/part.mk tests/hangfuzz/part.mk \
	tests/python/part.mk tests/gpu/part.mk
include $(PARTS)

all: $(LIBS) $(BINS) $(TEST_BINS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Packages the build and the tests need on Debian 12, and real NCCL
# libraries of other versions (PyPI wheels) for the compatibility tests.
# The launchers (torchrun from python3-torch, mpirun from openmpi-bin) are
# only for the tests; the demo needs the build packages alone. pdsh (its
# exec module) and util-linux's unshare/nsenter run the collection scripts
# on the namespaced hosts of tests/hosts/.
DEB_PKGS = build-essential libunwind-dev uthash-dev libjansson-dev python3-jsonschema valgrind strace procps psmisc time clang
LAUNCHER_PKGS = python3-torch openmpi-bin pdsh util-linux
# NCCLWATCH_PROM_DIR's tests: node_exporter's textfile collector scraped
# with curl, the alert rules checked with promtool (Debian: prometheus).
PROM_PKGS = prometheus-node-exporter prometheus curl
# Python programs (issue 12): libpython3.11 for bench-pystack, debootstrap
# for a Debian 13 CPython 3.13 (tests/python/fetch-py313.sh; kept in
# PY313_ROOT, skipped when present), python3-venv for the venv py-spy is
# installed in (tests/capture/install-pyspy.sh).
PY_PKGS = libpython3.11 debootstrap python3-venv
PY313_ROOT = /opt/ncclwatch-trixie
NCCL_WHEELS = $(CURDIR)/build/nccl-wheels
deps:
	@sh tests/deps.sh $(DEB_PKGS) $(LAUNCHER_PKGS) $(PY_PKGS) $(PROM_PKGS)
	@sh tests/compat/fetch-nccl.sh $(NCCL_WHEELS)
	@sh tests/capture/install-pyspy.sh $(CURDIR)/build/venv
	@sh tests/python/fetch-py313.sh $(PY313_ROOT)

deps-build:
	@sh tests/deps.sh $(DEB_PKGS)

RUN_TESTS = NW_BUILD=$(BUILD) NW_SAN=$(SAN) NW_NCCL_WHEELS=$(NCCL_WHEELS) CUDA_HOME=$(CUDA_HOME) sh tests/run.sh

test: deps
	@$(MAKE) --no-print-directory all
	@$(RUN_TESTS) $(T)

# The same run without `make deps`: for one test (T=test-cli-help) on a
# machine that has what it needs; a test whose tools are missing skips
# or fails, as under `make test` without them.
check: all
	@$(RUN_TESTS) $(T)

# Long chaos tests, bounded by a count (NW_SOAK_ROUNDS multiplies it).
soak: deps
	@$(MAKE) --no-print-directory all
	@NW_BUILD=$(BUILD) NW_SAN=$(SAN) NW_SOAK_ROUNDS=$(NW_SOAK_ROUNDS) CUDA_HOME=$(CUDA_HOME) sh tests/run.sh --soak $(T)

demo: deps-build
	@$(MAKE) --no-print-directory all
	@NW_BUILD=$(BUILD) sh examples/demo.sh

# The README's verdict gallery: real outputs of every verdict kind.
readme-verdicts: all
	@NW_BUILD=$(BUILD) sh tests/docs/gallery.sh > $(BUILD)/verdicts.md
	@awk -v g=$(BUILD)/verdicts.md '/^<!-- verdicts: end/ { while ((getline l < g) > 0) print l; skip = 0 } !skip { print } /^<!-- verdicts: begin/ { skip = 1 }' README.md > $(BUILD)/README.md.new
	@mv $(BUILD)/README.md.new README.md
	@echo "README.md: verdict gallery refreshed"

# The JSON schema's enum of verdict kinds (docs/diagnose.schema.json) from
# the kinds' table, report/verdict_kinds.h (tests/report/test-report-kinds.sh
# fails until this is run after a change to the table).
schema: $(VERDICT_KINDS)
	@$(VERDICT_KINDS) > $(BUILD)/verdict-kinds.tsv
	@sh tests/docs/schema-kinds.sh docs/diagnose.schema.json $(BUILD)/verdict-kinds.tsv > $(BUILD)/diagnose.schema.json.new
	@mv $(BUILD)/diagnose.schema.json.new docs/diagnose.schema.json
	@echo "docs/diagnose.schema.json: verdict kinds from report/verdict_kinds.h"

bench: all
	@NW_BUILD=$(BUILD) sh tests/bench/run.sh

# py-spy (make deps puts it in build/venv) goes to PREFIX/libexec/ncclwatch/,
# where the installed `ncclwatch attach` looks first; without it, one line
# says how attach gets Python stacks.
PYSPY ?= $(CURDIR)/build/venv/bin/py-spy
install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/ncclwatch \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0755 $(INSTALL_LIBS) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 include/ncclwatch/*.h $(DESTDIR)$(PREFIX)/include/ncclwatch/
	install -m 0644 $(CLI_MAN) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 $(CLI_COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/
	@if [ -x "$(PYSPY)" ]; then \
		install -d $(DESTDIR)$(PREFIX)/libexec/ncclwatch && \
		install -m 0755 "$(PYSPY)" $(DESTDIR)$(PREFIX)/libexec/ncclwatch/py-spy && \
		echo "install: $(PYSPY) -> $(DESTDIR)$(PREFIX)/libexec/ncclwatch/py-spy (ncclwatch attach's Python stacks)"; \
	else \
		echo "install: no py-spy at $(PYSPY) (make deps puts it there): ncclwatch attach takes native stacks only, unless py-spy is in PATH or NCCLWATCH_PYSPY names one (pip install py-spy)"; \
	fi

clean:
	rm -rf build
