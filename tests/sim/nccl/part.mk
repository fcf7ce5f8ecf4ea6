# tests/sim/nccl: the simulated NCCL (owner: sim-nccl)
