# examples: the example trainer, $(BUILD)/bin/trainer, and the probe that
# runs unchanged on the real NCCL and on the simulation,
# $(BUILD)/tests/realnccl/nccl-probe (source in tests/realnccl/).
#
# Both link against the sonames only (libcuda.so.1, libnccl.so.2): at run
# time LD_LIBRARY_PATH picks the real libraries or $(BUILD)/sim. They are
# linked against the simulated ones, so the simulation is built first.
SIM_SONAMES = $(BUILD)/sim/libcuda.so.1 $(BUILD)/sim/libnccl.so.2
SIM_LINK    = -L$(BUILD)/sim -l:libnccl.so.2 -l:libcuda.so.1
# The probe needs NCCL only: the real libnccl.so.2 loads the driver itself.
NCCL_LINK   = -L$(BUILD)/sim -l:libnccl.so.2

TRAINER_OBJS = $(BUILD)/examples/trainer.o $(BUILD)/examples/trainer_options.o $(BUILD)/examples/launch.o
TRAINER      = $(BUILD)/bin/trainer
NCCL_PROBE   = $(BUILD)/tests/realnccl/nccl-probe

BINS         += $(TRAINER)   # an example: built, never installed
TEST_BINS    += $(NCCL_PROBE)

$(TRAINER): $(TRAINER_OBJS) | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(TRAINER_OBJS) $(SIM_LINK)

$(NCCL_PROBE): $(BUILD)/tests/realnccl/nccl_probe.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(NCCL_LINK)
