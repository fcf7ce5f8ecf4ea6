# tests/sim/cuda: the simulated CUDA driver, $(BUILD)/sim/libcuda.so.1, and
# its tests $(BUILD)/tests/test-sim-cuda-*.

SIM_CUDA_SRCS := $(wildcard tests/sim/cuda/*.c)
SIM_CUDA_OBJS := $(SIM_CUDA_SRCS:%.c=$(BUILD)/%.o)
SIM_CUDA_LIB  := $(BUILD)/sim/libcuda.so.1

$(SIM_CUDA_OBJS): CFLAGS += $(LIB_CFLAGS)
# The old spellings need cuda.h's own view of them, as the driver has.
$(BUILD)/tests/sim/cuda/legacy.o: CPPFLAGS += -D__CUDA_API_VERSION_INTERNAL

$(SIM_CUDA_LIB): $(SIM_CUDA_OBJS) tests/sim/cuda/libcuda.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libcuda.so.1 -Wl,--version-script=tests/sim/cuda/libcuda.map \
		-Wl,--no-undefined $(LDFLAGS) -o $@ $(SIM_CUDA_OBJS) -ldl
	ln -sf libcuda.so.1 $(BUILD)/sim/libcuda.so

LIBS += $(SIM_CUDA_LIB)

# C tests: one binary per file tests/sim/cuda/tests/test-sim-cuda-*.c, linked
# against the simulated driver (found at run time through its rpath).
SIM_CUDA_TEST_SRCS := $(wildcard tests/sim/cuda/tests/test-sim-cuda-*.c)
SIM_CUDA_TEST_BINS := $(SIM_CUDA_TEST_SRCS:tests/sim/cuda/tests/%.c=$(BUILD)/tests/%)

$(BUILD)/tests/test-sim-cuda-%: $(BUILD)/tests/sim/cuda/tests/test-sim-cuda-%.o $(SIM_CUDA_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/sim -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../sim'

TEST_BINS += $(SIM_CUDA_TEST_BINS)
# keep the test objects (make would delete them as intermediates)
.SECONDARY: $(SIM_CUDA_TEST_SRCS:%.c=$(BUILD)/%.o)
