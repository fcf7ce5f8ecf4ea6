# tests/sim/nccl: the simulated NCCL, $(BUILD)/sim/libnccl.so.2 (see
# tests/sim/README.md), linked against the simulated CUDA driver, and its
# tests: C programs built into $(BUILD)/sim-tests/ (run by the
# tests/sim/nccl/test-*.sh scripts) plus $(BUILD)/tests/test-sim-nccl-*.

SIM_NCCL_SRCS := $(addprefix tests/sim/nccl/,env.c shm.c datatype.c comm.c ops.c progress.c transport.c api_misc.c ras.c)
SIM_NCCL_OBJS := $(SIM_NCCL_SRCS:%.c=$(BUILD)/%.o)
SIM_NCCL_LIB  := $(BUILD)/sim/libnccl.so.2

$(SIM_NCCL_OBJS): CFLAGS += $(LIB_CFLAGS)

$(SIM_NCCL_LIB): $(SIM_NCCL_OBJS) tests/sim/nccl/libnccl.map $(BUILD)/sim/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(SIM_NCCL_OBJS) -Wl,-soname,libnccl.so.2 \
		-Wl,--version-script=tests/sim/nccl/libnccl.map -Wl,--no-undefined \
		$(LDFLAGS) $(BUILD)/sim/libcuda.so.1 -Wl,-rpath,'$$ORIGIN' -lm
	ln -sf libnccl.so.2 $(BUILD)/sim/libnccl.so

LIBS += $(SIM_NCCL_LIB)

# Test programs: linked against the simulated NCCL and CUDA driver, found
# at run time through LD_LIBRARY_PATH (tests call nw_use_sim) or the rpath.
SIM_NCCL_TEST_SRCS := $(wildcard tests/sim/nccl/t_*.c)
SIM_NCCL_TEST_BINS := $(SIM_NCCL_TEST_SRCS:tests/sim/nccl/t_%.c=$(BUILD)/sim-tests/nccl-%)
SIM_NCCL_TEST_OBJS := $(SIM_NCCL_TEST_SRCS:%.c=$(BUILD)/%.o)
.SECONDARY: $(SIM_NCCL_TEST_OBJS)

$(BUILD)/sim-tests/nccl-%: $(BUILD)/tests/sim/nccl/t_%.o $(SIM_NCCL_LIB) $(BUILD)/sim/libcuda.so.1
	@mkdir -p $(dir $@)
	$(CC) -o $@ $< $(LDFLAGS) $(SIM_NCCL_LIB) $(BUILD)/sim/libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../sim' -lm

TEST_BINS += $(SIM_NCCL_TEST_BINS)
