#!/bin/sh
# budget: 30
# GPU check, step 3: a CUDA graph that holds an AllReduce, replayed 100
# times (gpu-nccl graph: one rank, a warm-up AllReduce, then global capture
# mode on a non-default stream, cuGraphInstantiateWithFlags, 100
# cuGraphLaunch, a sync, the result checked), the graph calls bound by the
# linker (through cuGetProcAddress: 03-graph-replay-getproc.sh). Issue
# 22/23: every replay is recorded. PASS when, each time, `ncclwatch show` lists 100 GraphLaunch
# records with replay numbers 1..100, all COMPLETED, and the captured
# AllReduce once, CAPTURED. The same on the simulation, which replays
# graphs as CUDA does. A driver that refuses to launch the graph a second
# time (gpu-nccl exits 6) FAILs.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
. "$NW_ROOT/tests/gpu/graph-lib.sh"
gpu_nccl_prog
gpu_use_nccl
replays link
result "$figures"
