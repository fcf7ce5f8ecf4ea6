# tests/hangfuzz: the hang generator of issue 21 (plan.h). One binary, on
# cuda.h and nccl.h only, run on the simulation by the corpus harness.
#   $(BUILD)/tests/hangfuzz/hangfuzz   --seed S --case | --plan | --nranks N
HANGFUZZ = $(BUILD)/tests/hangfuzz/hangfuzz

$(HANGFUZZ): $(BUILD)/tests/hangfuzz/hangfuzz.o $(BUILD)/tests/hangfuzz/plan.o $(BUILD)/examples/launch.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SIM_LINK)

TEST_BINS += $(HANGFUZZ)
