# What every step of the GPU check (tests/gpu/steps/) shares; sourced after
# tests/lib.sh (a private temp dir $T, every process killed at the end).
#
#   gpu_real            true on a real GPU (NW_GPU_MODE=real)
#   gpu_use_nccl        the real libnccl.so.2 (NW_GPU_NCCL_DIR) first on
#                       LD_LIBRARY_PATH, or the simulation's (both libraries)
#   gpu_hosts_env       real NCCL's ranks on one GPU as separate "hosts":
#                       sockets on the loopback (each rank's own NCCL_HOSTID
#                       is the program's business: SCENARIO_HOSTID_PER_RANK)
#   gpu_python          a python3 that imports torch, or nothing
#   gpu_nccl_prog       $prog: the C steps' program, built
#   val NAME FILE       a figure of tests/gpu/records.py's output
#   result TEXT         the step's figures (the runner prints the last one)
#   keep FILE...        copies files into the step's folder of the summary
: "${NW_GPU_MODE:=sim}" "${NW_GPU_NCCL_DIR:=$NW_SIM}"
: "${NW_GPU_STEP_DIR:=$T/step}"
mkdir -p "$NW_GPU_STEP_DIR"
NW_GPU_PROGS="$NW_BUILD/tests/gpu"

# A build made on another machine (make gpu-bundle) brings the libunwind
# the CLI and the preload's stack capture (libncclwatch-unwind.so) link:
# on the path of every process the step starts, as an installed package
# would be.
if [ -n "${NW_GPU_CLI_LIBS:-}" ]; then
	export LD_LIBRARY_PATH="$NW_GPU_CLI_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# py-spy for attach's Python stacks, where the machine has none (bundled)
if [ -z "${NCCLWATCH_PYSPY:-}" ] && ! command -v py-spy > /dev/null && [ -x "$NW_BUILD/gpu-runtime/py-spy" ]; then
	export NCCLWATCH_PYSPY="$NW_BUILD/gpu-runtime/py-spy"
fi

gpu_real() { [ "$NW_GPU_MODE" = real ]; }

gpu_use_nccl() {
	if gpu_real; then export LD_LIBRARY_PATH="$NW_GPU_NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	else nw_use_sim; fi
}

gpu_hosts_env() {
	gpu_real || return 0
	export NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 SCENARIO_HOSTID_PER_RANK=1
}

gpu_python() {
	for _py in "${NW_GPU_PYTHON:-}" /opt/torch/.venv/bin/python3 python3; do
		[ -n "$_py" ] && "$_py" -c 'import torch' 2>/dev/null && { echo "$_py"; return 0; }
	done
	return 1
}

# gpu_nccl_prog: the C steps' program (tests/gpu/gpu_nccl.c) into $prog
gpu_nccl_prog() {
	prog="$NW_GPU_PROGS/gpu-nccl"
	[ -x "$prog" ] || fail "$prog is not built (make all)"
}
# val NAME FILE: VALUE of the last NAME=VALUE line (tests/gpu/records.py's figures)
val() { sed -n "s/^$1=//p" "$2" | tail -n 1; }

result() { echo "result: $*"; }
keep() { cp "$@" "$NW_GPU_STEP_DIR/" 2>/dev/null || true; }
