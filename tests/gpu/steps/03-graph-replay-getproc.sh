#!/bin/sh
# budget: 30
# GPU check, step 3b: step 3's graph with its calls taken from
# cuGetProcAddress, as libcudart (PyTorch's cudaGraphLaunch) and XLA reach
# the driver. ncclwatch hands out its graph wrappers there only with
# NCCLWATCH_GRAPH_PROCADDR=1: on an H100 (driver 580.159.04, 2026-11-26)
# the program died with SIGSEGV between capture and instantiation that
# way. First without it: the program must run as without ncclwatch (exit
# 0, result right; its launches are not recorded); then with it: 100
# replays recorded, as in step 3 (the simulation passes; a GPU FAILs until
# the crash is understood).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
. "$NW_ROOT/tests/gpu/graph-lib.sh"
gpu_nccl_prog
gpu_use_nccl
# off (the default): untouched
mkdir -p "$T/off"
nw_bounded 120 env NCCLWATCH_DIR="$T/off/shm" NCCLWATCH_KEEP=1 LD_PRELOAD="$(nw_preload)" \
	"$prog" graph --launches $want --via getproc > "$T/off/graph.out" 2>&1
rc=$?
cat "$T/off/graph.out"
cp "$T/off/graph.out" "$T/off-graph.out"; keep "$T/off-graph.out"
[ $rc = 0 ] && grep -q 'graph: result ok' "$T/off/graph.out" ||
	fail "without NCCLWATCH_GRAPH_PROCADDR the program failed under the preload: exit $rc: $(tail -n 1 "$T/off/graph.out")"
replays getproc NCCLWATCH_GRAPH_PROCADDR=1
result "default: untouched (exit 0, result right); NCCLWATCH_GRAPH_PROCADDR=1: $figures"
