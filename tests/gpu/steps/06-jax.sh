#!/bin/sh
# budget: 150
# Step 6: JAX. jaxlib's CUDA plugin does not link NCCL: XLA dlopen()s
# libnccl.so.2 and looks every function up with dlsym, which only our dlsym
# hook sees. Two JAX processes share the one GPU as two "hosts"
# (NCCL_HOSTID each, sockets on the loopback) and run examples/jax_train.py
# (jax.distributed, a psum across processes per step) under the preload:
# (a) 20 steps: each process's segment must hold its AllReduce records,
# COMPLETED, and name the NCCL library the hook found; (b) process 1 skips
# step 10's psum: the watchdog and `ncclwatch diagnose` must name it
# (MISSING_RANK, culprit rank 1, rank 0 waits).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
gpu_real || skip "no GPU: JAX's CUDA plugin needs the real driver"
PY=$(gpu_python) || skip "no python3 here"
"$PY" -c 'import jax' 2>/dev/null || skip "no jax in $PY"
jaxver=$("$PY" -c 'import jax; print(jax.__version__)')
plugin=$("$PY" -c 'import jax_plugins, os, glob; print(os.path.dirname(glob.glob(os.path.join(list(jax_plugins.__path__)[0], "*", "xla_cuda_plugin.so"))[0]))' 2>/dev/null)
linked=$(ldd "$plugin"/xla_cuda_plugin.so 2>/dev/null | grep -c libnccl)
note "jax $jaxver, plugin $plugin, libnccl linked into it: $linked"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1
export LD_LIBRARY_PATH="$NW_GPU_NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# jaxjob NAME STEPS FAULT: two processes, outputs $T/NAME.0 and .1
jaxjob() {
	port=$((12400 + $$ % 500 + ${4:-0}))
	for p in 0 1; do
		nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$1" NCCLWATCH_TIMEOUT=5 NCCLWATCH_KEEP=1 \
			NCCL_HOSTID="gpucheck-jax-$1-$p" JAX_COORDINATOR_ADDRESS="127.0.0.1:$port" \
			JAX_NUM_PROCESSES=2 JAX_PROCESS_ID=$p STEPS=$2 FAULT_PROCESS=$3 \
			"$PY" "$NW_ROOT/examples/jax_train.py" > "$T/$1.$p" 2>&1
		eval "P$p=\$NW_PID"
	done
}

note "(a) 20 steps, 2 processes"
jaxjob healthy 20 -1 0
nw_wait "$P0" 120 > /dev/null; s0=$?
nw_wait "$P1" 30 > /dev/null; s1=$?
keep "$T/healthy.0" "$T/healthy.1"
[ $s0 = 0 ] && [ $s1 = 0 ] || fail "the JAX job failed (exit $s0, $s1): $(grep -v '^W[0-9]\|^I[0-9]' "$T/healthy.0" | tail -n 1)"
for seg in "$NCCLWATCH_DIR"/healthy/*.seg; do "$NW_CLI" show "$seg"; done > "$T/healthy.show" 2>&1
keep "$T/healthy.show"
segs=$(ls "$NCCLWATCH_DIR"/healthy/*.seg 2>/dev/null | wc -l)
ars=$(grep -c '^  op .* AllReduce .*state=COMPLETED' "$T/healthy.show")
ops=$(grep -c '^  op ' "$T/healthy.show")
lib=$(sed -n 's/^  nccl_lib *//p' "$T/healthy.show" | sort -u | head -n 1)
note "segments $segs, ops $ops, AllReduce COMPLETED $ars, NCCL library $lib"
grep '^  op ' "$T/healthy.show" | awk '{ print $5 }' | sort | uniq -c
[ "$segs" -eq 2 ] || fail "$segs segments for 2 JAX processes (the dlsym hook saw no NCCL call?)"
[ "$ars" -ge 40 ] || fail "$ars AllReduce COMPLETED in 2 processes x 20 steps (ops recorded: $ops)"

note "(b) process 1 skips step 10's psum"
jaxjob skip 30 1 7
nw_until 120 sh -c "[ -s '$NCCLWATCH_DIR/skip/report.txt' ]" || fail "no watchdog report: $(tail -n 1 "$T/skip.0")"
sleep 2
"$NW_CLI" diagnose --json "$NCCLWATCH_DIR/skip" > "$T/skip.json" 2>&1
"$NW_CLI" diagnose "$NCCLWATCH_DIR/skip" > "$T/skip.txt" 2>&1
keep "$T/skip.0" "$T/skip.1" "$T/skip.json" "$T/skip.txt" "$NCCLWATCH_DIR/skip/report.txt"
head -n 12 "$T/skip.txt"
j=$(python3 "$NW_ROOT/tests/corpus/judge.py" json "$T/skip.json" MISSING_RANK 1 0 -)
w=$(python3 "$NW_ROOT/tests/corpus/judge.py" text "$NCCLWATCH_DIR/skip/report.txt" MISSING_RANK 1 0 -)
note "diagnose: $j; watchdog: $w"
case "$j $w" in ok*ok*) ;; *) fail "JAX skip: diagnose $j; watchdog $w" ;; esac
result "jax $jaxver (NCCL dlopened: linked=$linked): 2 processes, $ars AllReduce COMPLETED via the dlsym hook ($lib); skip: MISSING_RANK rank 1 in diagnose and the watchdog"
