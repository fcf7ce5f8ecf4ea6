# The CPU simulation of the CUDA driver and of NCCL: $(BUILD)/sim/libcuda.so.1
# and $(BUILD)/sim/libnccl.so.2, loaded through LD_LIBRARY_PATH by tests.
include tests/sim/cuda/part.mk
include tests/sim/nccl/part.mk
