#!/bin/sh
# budget: 90
# Step 5: PyTorch's own Flight Recorder on a real job: torch_job.py with
# TORCH_FR_BUFFER_SIZE, 10 all-reduces, a dump taken through torch's API
# (_dump_nccl_trace, pickle); `ncclwatch show` must read all 10 AllReduce
# from it and `ncclwatch diagnose` give HEALTHY (nothing pending). The job
# runs under the preload too: our records and torch's agree on the count.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
gpu_real || skip "no GPU: torch's Flight Recorder records ProcessGroupNCCL, which needs the real driver"
PY=$(gpu_python) || skip "no python3 with torch here"
export PYTHONUNBUFFERED=1 TORCH_FR_BUFFER_SIZE=2000 NCCLWATCH_JOB=torchfr MASTER_PORT=$((29300 + $$ % 300))
timeout 100 "$NW_CLI" run --keep --timeout 60 -- "$PY" "$NW_ROOT/tests/gpu/torch_job.py" --steps 10 --fr-dump "$T/fr" > "$T/run.out" 2>&1 ||
	fail "the job failed: $(grep -v '^\[W' "$T/run.out" | tail -n 1)"
dump=$T/fr/nccl_trace_rank_0
[ -s "$dump" ] || fail "torch wrote no dump: $(tail -n 1 "$T/run.out")"
"$NW_CLI" show "$dump" > "$T/show-fr.txt" 2>&1 || fail "ncclwatch show on torch's dump: $(tail -n 1 "$T/show-fr.txt")"
"$NW_CLI" diagnose "$T/fr" > "$T/diag-fr.txt" 2>&1
dst=$?
"$NW_CLI" diagnose --json "$T/fr" > "$T/diag-fr.json" 2>&1
"$NW_CLI" show $(ls "$NCCLWATCH_DIR/torchfr"/*.seg) > "$T/show-seg.txt" 2>&1
cp "$dump" "$T/nccl_trace_rank_0"
keep "$T/run.out" "$T/show-fr.txt" "$T/diag-fr.txt" "$T/diag-fr.json" "$T/nccl_trace_rank_0"
cat "$T/diag-fr.txt"
fr_ops=$(grep -c '^  op .* AllReduce ' "$T/show-fr.txt")
seg_ops=$(grep -c '^  op .* AllReduce ' "$T/show-seg.txt")
ver=$(sed -n 's/.*Flight Recorder dumps (version \([0-9.]*\)).*/\1/p' "$T/diag-fr.txt" | head -n 1)
note "AllReduce in torch's dump: $fr_ops, in our segment: $seg_ops; diagnose exit $dst; FR version ${ver:-?}"
[ "$fr_ops" -eq 10 ] || fail "ncclwatch read $fr_ops AllReduce from torch's dump, want 10"
[ "$seg_ops" -eq 10 ] || fail "our segment holds $seg_ops AllReduce, want 10"
[ $dst -eq 0 ] && grep -q '^HEALTHY' "$T/diag-fr.txt" || fail "diagnose on the dump: exit $dst, $(head -n 2 "$T/diag-fr.txt" | tail -n 1)"
result "torch's dump (FR version ${ver:-?}, $(wc -c < "$dump") bytes): 10/10 AllReduce read, HEALTHY; our segment: 10"
