# tests/sim/cuda: the simulated CUDA driver (owner: sim-cuda)
