# tests/bench: the interposer's benchmark program, run by tests/bench/run.sh
# (`make bench`). Linked against the simulated NCCL's soname.
BENCH_ALLREDUCE := $(BUILD)/tests/bench/bench-allreduce
BENCHES   += $(BENCH_ALLREDUCE)
TEST_BINS += $(BENCH_ALLREDUCE)

$(BENCH_ALLREDUCE): $(BUILD)/tests/bench/bench_allreduce.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)
