# tests/interpose: programs the interposer's tests (tests/interpose/test-*.sh)
# run under LD_PRELOAD, built into $(BUILD)/tests/interpose/. They link
# against the simulated NCCL's soname only; LD_LIBRARY_PATH picks a library.
INTERPOSE_TEST_PROGS := $(addprefix $(BUILD)/tests/interpose/,nccl-ops-linked nccl-ops-dlopen \
	nccl-threads nccl-hot-loop nccl-fork nccl-graph-fork nccl-main-exit nccl-comm-cycles nccl-blocked-stream \
	nccl-exit-stuck)
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

$(BUILD)/tests/interpose/nccl-comm-cycles: $(BUILD)/tests/interpose/nccl_comm_cycles.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl-graph-fork: $(BUILD)/tests/interpose/nccl_graph_fork.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl-hot-loop: $(BUILD)/tests/interpose/nccl_hot_loop.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl-main-exit: $(BUILD)/tests/interpose/nccl_main_exit.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl-blocked-stream: $(BUILD)/tests/interpose/nccl_blocked_stream.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

$(BUILD)/tests/interpose/nccl-exit-stuck: $(BUILD)/tests/interpose/nccl_exit_stuck.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK)

# The test build of the library: the same sources with -DNW_TEST_HOOKS
# (interpose/test_hooks.h: a delay after every ring lookup-then-write point,
# NCCLWATCH_TEST_RING_DELAY_US), into $(BUILD)/tests/hooks/. Never the
# shipped $(INTERPOSE_LIB): the ring-race tests check it has no trace of it.
# Its directory also holds copies of the libraries it loads from there
# (libunwind's scope, the report engine).
HOOKS_DIR  := $(BUILD)/tests/hooks
HOOKS_OBJS = $(addprefix $(HOOKS_DIR)/,$(INTERPOSE_SRCS:%.c=%.o) $(WATCHDOG_SRCS:%.c=%.o) \
	$(CAPTURE_SRCS:%.c=%.o) capture/unw_table_dl.o $(PYSTACK_SRCS:%.c=%.o) report/names.o \
	interpose/test_hooks.o)
HOOKS_LIB  := $(HOOKS_DIR)/lib/libncclwatch.so
HOOKS_SIBLINGS := $(HOOKS_DIR)/lib/libncclwatch-unwind.so $(HOOKS_DIR)/lib/libncclwatch-engine.so
TEST_BINS  += $(HOOKS_LIB) $(HOOKS_SIBLINGS)

$(HOOKS_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -DNW_TEST_HOOKS $(CFLAGS) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(HOOKS_LIB): $$(HOOKS_OBJS) interpose/libncclwatch.map
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(HOOKS_OBJS) -Wl,-soname,libncclwatch.so \
		-Wl,--version-script=interpose/libncclwatch.map -Wl,--no-undefined -Wl,-z,now \
		$(LDFLAGS) -ldl

$(HOOKS_DIR)/lib/%.so: $(BUILD)/lib/%.so
	@mkdir -p $(dir $@)
	cp $< $@
