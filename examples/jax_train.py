#!/usr/bin/env python3
"""A multi-process JAX job whose collectives go through NCCL, to run under
ncclwatch: one process per GPU (or per node), jax.distributed.initialize(),
then a psum over every device of every process, in a loop.

UNTESTED HERE: this machine has no JAX and no GPU (JAX's CUDA plugin needs
real NVIDIA GPUs and their driver; the CPU simulation ncclwatch's tests use
cannot stand in for XLA). Only its Python syntax is checked
(tests/launch/test-launch-examples.sh).

How ncclwatch sees JAX's NCCL calls: jaxlib's CUDA plugin (XLA, through
TSL's NCCL stub) does not link libnccl.so.2; it dlopen()s it (the
nvidia-nccl-cu12 wheel's nvidia/nccl/lib/libnccl.so.2, or the system's) and
looks every function up with dlsym(handle, "ncclAllReduce") (or dlvsym).
libncclwatch.so defines dlsym and dlvsym: a lookup of a function ncclwatch
wraps, whose result lies in a library named libnccl*, returns the wrapper,
which records the call and forwards it to that library. What is tested
(without JAX): a program that dlopen()s NCCL by path with RTLD_LOCAL and
calls only through dlsym is recorded exactly like one linked to it
(tests/interpose/test-interpose-dlopen.sh, on the simulated NCCL); with the
real NCCL 2.28.9 of the CUDA toolkit and the 2.18.3 and 2.32.3 wheels, the
program finds the same functions (those an older NCCL lacks stay missing),
versions and results under the preload, and its calls are recorded
(tests/compat/test-compat-dlopen-symbols.sh, up to communicator init: no
GPU). Not covered: a jaxlib built with NCCL linked in statically (nothing
to interpose: no segment is ever created; `ncclwatch status` while the job
runs shows whether any process is recorded), and on non-x86-64 machines
(e.g. GH200, aarch64) dlsym(RTLD_NEXT, ...) lookups made by other libraries
resolve relative to libncclwatch.so rather than to their caller.

What to adapt:
  - the launch: one process per GPU, each told its process id, the process
    count and the coordinator's address. On Slurm and under Open MPI,
    jax.distributed.initialize() with no argument finds them itself; else
    set JAX_COORDINATOR_ADDRESS (host:port of process 0),
    JAX_NUM_PROCESSES and JAX_PROCESS_ID, read below. E.g. with Slurm:
        srun --export=ALL,LD_PRELOAD=/usr/local/lib/libncclwatch.so,\\
             NCCLWATCH_DUMP_DIR=/shared/nw,NCCLWATCH_TIMEOUT=300 \\
             python3 jax_train.py
    or on one node, 8 processes (the trainer does nothing more):
        for i in 0 1 2 3 4 5 6 7; do
          CUDA_VISIBLE_DEVICES=$i JAX_COORDINATOR_ADDRESS=127.0.0.1:12355 \\
          JAX_NUM_PROCESSES=8 JAX_PROCESS_ID=$i \\
          LD_PRELOAD=/usr/local/lib/libncclwatch.so NCCLWATCH_TIMEOUT=120 \\
          python3 jax_train.py & done; wait
  - STEPS and the array size: the loop stands for your training step.
  - FAULT_PROCESS (testing ncclwatch): that process skips the psum of step
    10 and sleeps, the others wait in it: ncclwatch prints MISSING_RANK
    naming it after NCCLWATCH_TIMEOUT seconds. With one process per GPU the
    ranks ncclwatch names are NCCL ranks (the order XLA gives devices,
    normally the process order).
"""
import os
import sys
import time

import jax
import jax.numpy as jnp


def main():
    coordinator = os.environ.get("JAX_COORDINATOR_ADDRESS")
    if coordinator:
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=int(os.environ["JAX_NUM_PROCESSES"]),
            process_id=int(os.environ["JAX_PROCESS_ID"]),
        )
    else:
        jax.distributed.initialize()  # Slurm, Open MPI: found by JAX itself

    me = jax.process_index()
    local = jax.local_device_count()
    total = jax.device_count()
    print(f"process {me}/{jax.process_count()}: {local} local of {total} devices", flush=True)

    steps = int(os.environ.get("STEPS", "100"))
    fault = int(os.environ.get("FAULT_PROCESS", "-1"))

    # psum over the mapped axis: every device of every process. Across
    # processes XLA runs it as an NCCL all-reduce.
    allsum = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")
    x = jnp.ones((local, 1 << 20), dtype=jnp.float32)
    for step in range(steps):
        if step == 10 and me == fault:
            print(f"process {me}: skipping the psum of step {step}", flush=True)
            while True:
                time.sleep(60)
        y = allsum(x)
        y.block_until_ready()
        if y[0, 0] != total:
            print(f"process {me} step {step}: got {y[0, 0]}, expected {total}", file=sys.stderr)
            return 3
    print(f"process {me} ok steps={steps}", flush=True)
    jax.distributed.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
