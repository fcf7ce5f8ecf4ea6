# examples: the example trainer, $(BUILD)/bin/trainer, and the probe that
# runs unchanged on the real NCCL and on the simulation,
# $(BUILD)/tests/realnccl/nccl-probe (source in tests/realnccl/).
#
# Both link against the sonames only ($(SIM_LINK), $(NCCL_LINK): the top
# Makefile); the probe needs NCCL only.

TRAINER_OBJS = $(BUILD)/examples/trainer.o $(BUILD)/examples/trainer_options.o $(BUILD)/examples/launch.o
TRAINER      = $(BUILD)/bin/trainer
DECODE_LOOP  = $(BUILD)/bin/decode_loop   # a decode loop served from a CUDA graph
NCCL_PROBE   = $(BUILD)/tests/realnccl/nccl-probe

BINS         += $(TRAINER) $(DECODE_LOOP)   # examples: built, never installed
TEST_BINS    += $(NCCL_PROBE)

$(TRAINER): $(TRAINER_OBJS) | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(TRAINER_OBJS) $(SIM_LINK)

$(DECODE_LOOP): $(BUILD)/examples/decode_loop.o $(BUILD)/examples/launch.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(BUILD)/examples/decode_loop.o $(BUILD)/examples/launch.o $(SIM_LINK)

$(NCCL_PROBE): $(BUILD)/tests/realnccl/nccl_probe.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(NCCL_LINK)
