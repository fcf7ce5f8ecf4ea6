# tests/corpus: the scenario corpus of issue 11 (tests/corpus/cases.txt).
#   $(BUILD)/tests/corpus/scenario   the hang programs (scenario.c), written
#                                    against nccl.h and cuda.h only, ranks from
#                                    examples/launch.c like the trainer
SCENARIO = $(BUILD)/tests/corpus/scenario

$(SCENARIO): $(BUILD)/tests/corpus/scenario.o $(BUILD)/examples/launch.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SIM_LINK)

TEST_BINS += $(SCENARIO)
