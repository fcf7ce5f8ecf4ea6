# report: the segment reader library and the `ncclwatch` CLI, plus their
# tests (tests/unit/, tests/report/) and the reader's fuzz target.
#
#   $(BUILD)/lib/libncclwatch-report.a  reader + names + renderers; objects built
#                                       with LIB_CFLAGS so libncclwatch.so may link it
#                                       (the JSON ones need $(JSON_LIBS))
#   $(BUILD)/bin/ncclwatch              the CLI (one file per command in report/cli/)
#   $(BUILD)/tests/test-unit-layout     offsets and sizes of every segment field
#   $(BUILD)/tests/test-report-concurrent  reader vs. a concurrent ring writer
#   $(BUILD)/tests/progs/mkseg          test-only segment writer (valid and corrupted)
#   $(BUILD)/tests/progs/fuzz-segment-reader  libFuzzer target (only with clang)

# The engine in four layers, each a folder with one header as its contract
# (docs/ARCHITECTURE.md): sources/ (every input into the same facts),
# model/ (the facts the rules judge, the wait-for graph), decide/ (the
# rules, the root-cause pass, nw_analyze) and words/ (text, JSON, Chrome
# trace, status). JSON is built and escaped by jansson (libjansson-dev):
# whatever links the JSON renderers (json.c, trace.c) links $(JSON_LIBS).
# The engine uses pthreads (parallel reading) and uthash (uthash-dev).
RENDER_SRCS     := $(wildcard report/words/*.c)
JSON_LIBS       := -ljansson
READER_SRCS     := report/sources/segment_reader.c report/names.c report/escape.c
ANALYSIS_SRCS   := $(wildcard report/sources/*.c report/model/*.c report/decide/*.c)
ANALYSIS_SRCS   := $(filter-out report/sources/segment_reader.c,$(ANALYSIS_SRCS))
# Flight Recorder dumps (report/sources/fr/): a data-only pickle reader, the JSON
# form (jansson), the loader into the engine's model.
FR_SRCS         := $(wildcard report/sources/fr/*.c)
# The RAS client (report/sources/ras/: NCCL's RAS protocol, its JSON via jansson):
# only the CLI pulls it in (ras, diagnose of a saved report, attach).
RAS_SRCS        := $(wildcard report/sources/ras/*.c)
# Per-host summaries (report/sources/summary/): one compact file per host, another
# source of the engine's model (`ncclwatch summary`).
SUMMARY_SRCS    := $(wildcard report/sources/summary/*.c)
REPORT_LIB_SRCS := $(READER_SRCS) $(RENDER_SRCS) $(ANALYSIS_SRCS) $(FR_SRCS) $(RAS_SRCS) $(SUMMARY_SRCS)
REPORT_LIB_OBJS := $(REPORT_LIB_SRCS:%.c=$(BUILD)/%.o)
REPORT_LIB      := $(BUILD)/lib/libncclwatch-report.a

$(REPORT_LIB_OBJS): CFLAGS += $(LIB_CFLAGS)

$(REPORT_LIB): $(REPORT_LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(REPORT_LIB_OBJS)

# libncclwatch-engine.so: the report library in a shared object of its own,
# with one entry point (report/engine/engine.h) for libncclwatch.so's
# watchdog, which loads it (dlopen RTLD_LOCAL, from its own directory) only
# to print a cross-rank verdict: the preload itself links neither the
# engine nor jansson. Installed next to libncclwatch.so.
ENGINE_LIB := $(BUILD)/lib/libncclwatch-engine.so
ENGINE_OBJ := $(BUILD)/report/engine/verdict_entry.o $(BUILD)/report/engine/summary_entry.o
$(ENGINE_OBJ): CFLAGS += $(LIB_CFLAGS)

$(ENGINE_LIB): $(ENGINE_OBJ) $(REPORT_LIB) report/engine/libncclwatch-engine.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(ENGINE_OBJ) $(REPORT_LIB) -Wl,-soname,libncclwatch-engine.so \
		-Wl,--version-script=report/engine/libncclwatch-engine.map -Wl,--no-undefined -Wl,-z,now \
		$(LDFLAGS) -Wl,--as-needed $(JSON_LIBS) -Wl,--no-as-needed

LIBS         += $(ENGINE_LIB)
INSTALL_LIBS += $(ENGINE_LIB)

CLI_SRCS := $(wildcard report/cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
CLI      := $(BUILD)/bin/ncclwatch

# CLI_EXTRA_OBJS / CLI_EXTRA_LIBS: other folders' objects the CLI links
# (attach/part.mk).
$(CLI): $(CLI_OBJS) $(REPORT_LIB) $$(CLI_EXTRA_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(CLI_EXTRA_OBJS) $(REPORT_LIB) $(JSON_LIBS) $(CLI_EXTRA_LIBS)

LIBS         += $(REPORT_LIB)
BINS         += $(CLI)
INSTALL_BINS += $(CLI)

# The man page and the bash completion, generated from the CLI's --help
# texts (make install puts them under share/). ASAN_OPTIONS: a sanitizer
# build's CLI runs here too.
CLI_MAN        := $(BUILD)/share/man/man1/ncclwatch.1
CLI_COMPLETION := $(BUILD)/share/bash-completion/completions/ncclwatch
$(CLI_MAN): $(CLI) report/cli/gen-man.sh
	@mkdir -p $(dir $@)
	ASAN_OPTIONS=detect_leaks=0 sh report/cli/gen-man.sh $(CLI) > $@.tmp && mv $@.tmp $@
$(CLI_COMPLETION): $(CLI) report/cli/gen-completion.sh
	@mkdir -p $(dir $@)
	ASAN_OPTIONS=detect_leaks=0 sh report/cli/gen-completion.sh $(CLI) > $@.tmp && mv $@.tmp $@
BINS += $(CLI_MAN) $(CLI_COMPLETION)

# Tests. The segment writer is shared by mkseg and the concurrent test.
SEGWRITER_OBJ := $(BUILD)/tests/report/segwriter.o
MKSEG         := $(BUILD)/tests/progs/mkseg
LAYOUT_TEST   := $(BUILD)/tests/test-unit-layout
CONCURRENT_TEST := $(BUILD)/tests/test-report-concurrent

$(MKSEG): $(BUILD)/tests/report/mkseg.o $(SEGWRITER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

$(LAYOUT_TEST): $(BUILD)/tests/unit/test_layout.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^

$(CONCURRENT_TEST): $(BUILD)/tests/report/test_concurrent.o $(SEGWRITER_OBJ) $(REPORT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/tests/report/test_concurrent.o $(SEGWRITER_OBJ) $(REPORT_LIB)

# The kinds' table as compiled (tests/report/test-report-kinds.sh, `make schema`).
VERDICT_KINDS := $(BUILD)/tests/progs/verdict-kinds

$(VERDICT_KINDS): $(BUILD)/tests/report/verdict_kinds.o $(REPORT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/tests/report/verdict_kinds.o $(REPORT_LIB) $(JSON_LIBS)

TEST_BINS += $(MKSEG) $(LAYOUT_TEST) $(CONCURRENT_TEST) $(VERDICT_KINDS)

# The fuzz target needs clang's libFuzzer; without it, its test skips.
FUZZ_CC ?= clang
HAVE_LIBFUZZER := $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return (int)(d[0] & n & 0); }\n' \
	| $(FUZZ_CC) -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1 && echo yes)
FUZZ_TARGET := $(BUILD)/tests/progs/fuzz-segment-reader
FUZZ_SRCS   := tests/fuzz/fuzz_segment_reader.c $(READER_SRCS) report/cli/show_text.c
ifeq ($(HAVE_LIBFUZZER),yes)
$(FUZZ_TARGET): $(FUZZ_SRCS) $(wildcard report/*.h report/sources/segment_reader.h report/cli/*.h) include/ncclwatch/segment.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Werror -g -O1 \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ $(FUZZ_SRCS)
TEST_BINS += $(FUZZ_TARGET)
endif
# The Flight Recorder reader's fuzz target (tests/fr/test-fr-fuzz.sh), the
# same way: the reader, the loader and what they use of the engine (its
# interning and nw_proc_free, in util.c).
FR_FUZZ_TARGET := $(BUILD)/tests/progs/fuzz-fr-reader
FR_FUZZ_SRCS   := tests/fuzz/fuzz_fr_reader.c report/sources/fr/pickle.c report/sources/fr/fr_json.c report/sources/fr/load_fr.c \
                  report/sources/util.c report/sources/rankset.c report/names.c
ifeq ($(HAVE_LIBFUZZER),yes)
$(FR_FUZZ_TARGET): $(FR_FUZZ_SRCS) $(wildcard report/*.h report/sources/*.h report/sources/fr/*.h) include/ncclwatch/segment.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Werror -g -O1 -pthread \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ $(FR_FUZZ_SRCS) $(JSON_LIBS)
TEST_BINS += $(FR_FUZZ_TARGET)
endif
# The per-host summary reader's fuzz target (tests/summary/test-summary-fuzz.sh),
# the same way: the reader and writer and the engine's interning.
SUM_FUZZ_TARGET := $(BUILD)/tests/progs/fuzz-summary-reader
SUM_FUZZ_SRCS   := tests/fuzz/fuzz_summary_reader.c $(SUMMARY_SRCS) report/sources/util.c report/sources/open_groups.c \
                   report/sources/rankset.c report/names.c
ifeq ($(HAVE_LIBFUZZER),yes)
$(SUM_FUZZ_TARGET): $(SUM_FUZZ_SRCS) $(wildcard report/*.h report/sources/*.h report/sources/summary/*.h) include/ncclwatch/segment.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Werror -g -O1 -pthread \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ $(SUM_FUZZ_SRCS)
TEST_BINS += $(SUM_FUZZ_TARGET)
endif
