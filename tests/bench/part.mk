# tests/bench: the programs of `make bench` (tests/bench/run.sh runs them,
# with latency.sh, cpu.sh and events.sh). bench-allreduce is linked against
# the simulated NCCL's and CUDA driver's sonames.
BENCH_ALLREDUCE := $(BUILD)/tests/bench/bench-allreduce
BENCHES   += $(BENCH_ALLREDUCE)
TEST_BINS += $(BENCH_ALLREDUCE)

$(BENCH_ALLREDUCE): $(BUILD)/tests/bench/bench_allreduce.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

# bench-graph: a wrapped cuGraphLaunch of a graph holding N NCCL ops
# (tests/bench/graphs.sh).
BENCH_GRAPH := $(BUILD)/tests/bench/bench-graph
BENCHES   += $(BENCH_GRAPH)
TEST_BINS += $(BENCH_GRAPH)

$(BENCH_GRAPH): $(BUILD)/tests/bench/bench_graph.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

# bench-stamp: runs a job and timestamps each line of its output (the
# detection-latency and watchdog-CPU figures: latency.sh, cpu.sh).
BENCH_STAMP := $(BUILD)/tests/bench/bench-stamp
BENCHES   += $(BENCH_STAMP)
TEST_BINS += $(BENCH_STAMP)

$(BENCH_STAMP): $(BUILD)/tests/bench/bench_stamp.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $<

# bench-alone: the watchdog's per-poll "last thread left?" check
# (watchdog/alone.c) with 1 to 512 threads in the process.
BENCH_ALONE := $(BUILD)/tests/bench/bench-alone
BENCHES   += $(BENCH_ALONE)
TEST_BINS += $(BENCH_ALONE)

$(BENCH_ALONE): $(BUILD)/tests/bench/bench_alone.o $(BUILD)/watchdog/alone.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -pthread

# bench-pickle: the Flight Recorder pickle reader alone on one dump, CPU
# microseconds per parse (tests/bench/fr.sh).
BENCH_PICKLE := $(BUILD)/tests/bench/bench-pickle
BENCHES   += $(BENCH_PICKLE)
TEST_BINS += $(BENCH_PICKLE)

$(BENCH_PICKLE): $(BUILD)/tests/bench/bench_pickle.o $(BUILD)/report/sources/fr/pickle.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lm

# libbench-linger.so: keeps a rank that exits with an error alive, so the
# gpufault row can time the faulty rank's own FAILED report.
BENCH_LINGER := $(BUILD)/tests/bench/libbench-linger.so
BENCHES   += $(BENCH_LINGER)
TEST_BINS += $(BENCH_LINGER)

$(BUILD)/tests/bench/bench_linger.o: CFLAGS += $(LIB_CFLAGS)
$(BENCH_LINGER): $(BUILD)/tests/bench/bench_linger.o
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $< $(LDFLAGS) -ldl

# bench-pystack: the Python part of a capture (pystack/) timed on an
# embedded CPython 3.11 with 64 threads; built only where Debian's
# libpython3.11 is installed (tests/bench/pystack.sh says so otherwise).
LIBPYTHON := $(wildcard /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0)
ifneq ($(LIBPYTHON),)
BENCH_PYSTACK := $(BUILD)/tests/bench/bench-pystack
BENCHES   += $(BENCH_PYSTACK)
TEST_BINS += $(BENCH_PYSTACK)

$(BENCH_PYSTACK): $(BUILD)/tests/bench/bench_pystack.o $$(PYSTACK_OBJS) $(BUILD)/watchdog/symbolize.o \
		$(BUILD)/interpose/log.o $(BUILD)/interpose/thread.o $(BUILD)/interpose/libc_dl.o $(BUILD)/interpose/hooks.o $$(UNW_TABLE_LINKED_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBPYTHON) $(CAPTURE_LIBS) -ldl -pthread -lm
endif
