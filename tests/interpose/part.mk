# tests/interpose: programs the interposer's tests (tests/interpose/test-*.sh)
# run under LD_PRELOAD, built into $(BUILD)/tests/interpose/. They link
# against the simulated NCCL's soname only; LD_LIBRARY_PATH picks a library.
INTERPOSE_TEST_PROGS := $(addprefix $(BUILD)/tests/interpose/,nccl-ops-linked nccl-ops-dlopen \
	nccl-threads nccl-hot-loop nccl-fork)
TEST_BINS += $(INTERPOSE_TEST_PROGS)

$(BUILD)/tests/interpose/nccl-ops-linked: $(BUILD)/tests/interpose/nccl_ops.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl_ops_dlopen.o: tests/interpose/nccl_ops.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DNW_OPS_DLOPEN -MMD -MP -c $< -o $@

# Not linked to NCCL at all: it loads it by path, like the TSL stub.
$(BUILD)/tests/interpose/nccl-ops-dlopen: $(BUILD)/tests/interpose/nccl_ops_dlopen.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -ldl

# nccl-threads, nccl-fork
$(BUILD)/tests/interpose/nccl-%: $(BUILD)/tests/interpose/nccl_%.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl-hot-loop: $(BUILD)/tests/interpose/nccl_hot_loop.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)
