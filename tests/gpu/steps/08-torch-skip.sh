#!/bin/sh
# budget: 120
# Step 8b: a real cross-rank hang in PyTorch. Two ranks of torch_job.py on
# the one GPU (each its own NCCL_HOSTID, sockets on the loopback), under
# the preload, with TORCH_FR_BUFFER_SIZE: rank 1 skips step 3's all-reduce
# and waits, rank 0 hangs in it. The watchdog's verdict, `ncclwatch
# diagnose` on the live job and on torch's own Flight Recorder dumps alone
# (taken through torch's API while the job hangs) must all say MISSING_RANK,
# rank 1 the culprit, rank 0 waiting.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
gpu_real || skip "no GPU: ProcessGroupNCCL needs the real driver"
PY=$(gpu_python) || skip "no python3 with torch here"
export PYTHONUNBUFFERED=1 TORCH_FR_BUFFER_SIZE=2000 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1
export LD_LIBRARY_PATH="$NW_GPU_NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
JD=$NCCLWATCH_DIR/torchskip
port=$((29900 + $$ % 300))
for r in 0 1; do
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=torchskip NCCLWATCH_TIMEOUT=5 NCCLWATCH_KEEP=1 \
		NCCL_HOSTID="gpucheck-torch-$r" RANK=$r WORLD_SIZE=2 MASTER_PORT=$port \
		"$PY" "$NW_ROOT/tests/gpu/torch_job.py" --steps 6 --skip 1:3 --fr-dump "$T/fr" --dump-after 2 --wait 90 > "$T/rank$r.out" 2>&1
	eval "P$r=\$NW_PID"
done
nw_until 120 sh -c "[ -s '$JD/report.txt' ] && [ -s '$T/fr/nccl_trace_rank_0' ] && [ -s '$T/fr/nccl_trace_rank_1' ]" ||
	fail "no watchdog report or FR dumps: $(tail -n 1 "$T/rank0.out"); $(tail -n 1 "$T/rank1.out")"
sleep 1
"$NW_CLI" diagnose --json "$JD" > "$T/live.json" 2>&1
"$NW_CLI" diagnose "$JD" > "$T/live.txt" 2>&1
"$NW_CLI" diagnose --json "$T/fr" > "$T/fr.json" 2>&1
"$NW_CLI" diagnose "$T/fr" > "$T/fr.txt" 2>&1
cp "$JD/report.txt" "$T/report.txt"
cp "$T/fr/nccl_trace_rank_0" "$T/fr/nccl_trace_rank_1" "$T/"
keep "$T/rank0.out" "$T/rank1.out" "$T/live.json" "$T/live.txt" "$T/fr.json" "$T/fr.txt" "$T/report.txt" "$T/nccl_trace_rank_0" "$T/nccl_trace_rank_1"
head -n 8 "$T/live.txt"; head -n 8 "$T/fr.txt"
judge() { python3 "$NW_ROOT/tests/corpus/judge.py" "$1" "$2" MISSING_RANK 1 0 -; }
l=$(judge json "$T/live.json") w=$(judge text "$T/report.txt") f=$(judge json "$T/fr.json")
note "live: $l; watchdog: $w; flight recorder: $f"
case "$l|$w|$f" in ok*\|ok*\|ok*) ;; *) fail "live: $l; watchdog: $w; flight recorder: $f" ;; esac
result "2 ranks, rank 1 skips an all-reduce: MISSING_RANK rank 1 live, in the watchdog and from torch's FR dumps"
