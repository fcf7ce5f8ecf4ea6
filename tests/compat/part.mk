# tests/compat: ncclwatch on real NCCL libraries of several versions.
$(BUILD)/tests/progs/dlopen_probe: $(BUILD)/tests/compat/dlopen_probe.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -ldl
TEST_BINS += $(BUILD)/tests/progs/dlopen_probe

# throw-probe and libnw-throw.so: a C program that dlopens a C++ library
# which throws and catches (test-compat-unwind-scope.sh: which unwinder
# libstdc++ binds under the preload; tests/bench/preload.sh: what a throw
# costs).
CXX ?= g++
THROW_PROBE := $(BUILD)/tests/progs/throw-probe
THROW_LIB   := $(BUILD)/tests/compat/libnw-throw.so
TEST_BINS   += $(THROW_PROBE) $(THROW_LIB)

$(THROW_PROBE): $(BUILD)/tests/compat/throw_probe.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(SIM_LINK) -ldl

$(THROW_LIB): tests/compat/throw_lib.cc
	@mkdir -p $(dir $@)
	$(CXX) -shared -fPIC -O2 -Wall -Wextra -Werror -o $@ $<
