# tests/gpu: the GPU check (issue 23), `make gpu-check`.
#   $(BUILD)/tests/gpu/gpu-nccl   the C steps' program (gpu_nccl.c), written
#                                 against nccl.h and cuda.h only, linked
#                                 against the sonames: the real driver and
#                                 NCCL or the simulation, as LD_LIBRARY_PATH
#                                 says (tests/gpu/gpu-lib.sh: gpu_use_nccl)
#   make gpu-check                builds, then tests/gpu/run.sh: real steps
#                                 on a GPU, the C steps on the simulation
#                                 without one; summary in GPU_CHECK_OUT
#   make gpu-bundle               what a machine that cannot build (no
#                                 libunwind-dev, as the GPU machine) needs
#                                 to run the check from this build: the
#                                 CLI's libunwind beside it, and py-spy for
#                                 attach's Python stacks (gpu-runtime/)
GPU_NCCL = $(BUILD)/tests/gpu/gpu-nccl

$(GPU_NCCL): $(BUILD)/tests/gpu/gpu_nccl.o $(BUILD)/examples/launch.o | $(SIM_SONAMES)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(SIM_LINK) -ldl

TEST_BINS += $(GPU_NCCL)

.PHONY: gpu-check gpu-bundle
gpu-check: all
	@NW_BUILD=$(BUILD) sh tests/gpu/run.sh

gpu-bundle: all
	@mkdir -p $(BUILD)/gpu-runtime
	@ldd $(BUILD)/bin/ncclwatch | awk '/libunwind/ { print $$3 }' | xargs -r cp -L -t $(BUILD)/gpu-runtime
	@[ ! -x $(BUILD)/venv/bin/py-spy ] || cp $(BUILD)/venv/bin/py-spy $(BUILD)/gpu-runtime/
	@echo "gpu-bundle: carry $(BUILD)/bin $(BUILD)/lib $(BUILD)/sim $(BUILD)/tests/corpus $(BUILD)/tests/gpu $(BUILD)/gpu-runtime; run NW_BUILD=$(BUILD) sh tests/gpu/run.sh"
	@du -shc $(BUILD)/bin $(BUILD)/lib $(BUILD)/sim $(BUILD)/tests/corpus $(BUILD)/tests/gpu $(BUILD)/gpu-runtime | tail -n 1
