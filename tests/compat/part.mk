# tests/compat: ncclwatch on real NCCL libraries of several versions.
$(BUILD)/tests/progs/nccl_probe: $(BUILD)/tests/compat/nccl_probe.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ldl
TEST_BINS += $(BUILD)/tests/progs/nccl_probe
