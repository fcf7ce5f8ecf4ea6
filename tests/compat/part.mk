# tests/compat: ncclwatch on real NCCL libraries of several versions.
$(BUILD)/tests/progs/dlopen_probe: $(BUILD)/tests/compat/dlopen_probe.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ldl
TEST_BINS += $(BUILD)/tests/progs/dlopen_probe
