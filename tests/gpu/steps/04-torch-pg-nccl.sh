#!/bin/sh
# budget: 120
# Step 4: PyTorch's ProcessGroupNCCL, world size 1, under `ncclwatch run`
# (tests/gpu/torch_job.py): every all-reduce recorded and COMPLETED with
# its Python call site (all_reduce_step at torch_job.py's dist.all_reduce
# line: CPython 3.12's frames, read from the live interpreter), a stack
# capture (`ncclwatch dump`) whose Python threads are MainThread in hold()
# and "loader" in loader(); then the same job without the preload, taken by
# `ncclwatch attach` (native stacks by ptrace/proc, Python ones by py-spy
# when it is there). Only on a GPU with torch: the simulation cannot stand
# in for torch's CUDA.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"
gpu_real || skip "no GPU: ProcessGroupNCCL needs the real driver (the simulation cannot stand in for torch's CUDA)"
PY=$(gpu_python) || skip "no python3 with torch here"
job=$NW_ROOT/tests/gpu/torch_job.py
line=$(grep -n '^    dist.all_reduce(t)$' "$job" | cut -d: -f1)
[ -n "$line" ] || fail "torch_job.py: no dist.all_reduce(t) line"
pyver=$("$PY" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
export NCCLWATCH_PY_FRAMES=8 PYTHONUNBUFFERED=1 NCCLWATCH_JOB=torch1 MASTER_PORT=$((29600 + $$ % 300))
JD=$NCCLWATCH_DIR/torch1

note "20 all-reduces under ncclwatch run, then 30 s in hold() (Python $pyver)"
nw_spawn "$NW_CLI" run --keep --timeout 60 -- "$PY" "$job" --steps 20 --hold 30 > "$T/run.out" 2>&1
RP=$NW_PID
nw_until 90 grep -q 'holding' "$T/run.out" || { tail -n 20 "$T/run.out"; fail "the job did not reach hold(): $(grep -v '^\[W' "$T/run.out" | tail -n 1)"; }
"$NW_CLI" dump --wait 10 "$JD" > "$T/dump.out" 2>&1 || { cat "$T/dump.out"; fail "ncclwatch dump: $(tail -n 1 "$T/dump.out")"; }
"$NW_CLI" show "$JD" > "$T/show-live.txt" 2>&1
"$NW_CLI" diagnose "$JD" > "$T/diag-live.txt" 2>&1
kill -TERM "$RP" 2>/dev/null
nw_wait "$RP" 30 > /dev/null
# the process's own segment (the dump beside it holds its records too)
"$NW_CLI" show $(ls "$JD"/*.seg | grep -v '\.dump\.seg$') > "$T/show.txt" 2>&1
keep "$T/run.out" "$T/show-live.txt" "$T/show.txt" "$T/diag-live.txt" "$T/dump.out"

ars=$(grep -c '^  op .* AllReduce .*state=COMPLETED' "$T/show.txt")
arall=$(grep -c '^  op .* AllReduce ' "$T/show.txt")
sites=$(grep -c "^    py all_reduce_step (.*torch_job.py:$line)" "$T/show.txt")
note "AllReduce records: $arall, COMPLETED: $ars, with the call site all_reduce_step (torch_job.py:$line): $sites"
grep -m 3 -A 3 '^  op .* AllReduce ' "$T/show.txt"
# the dump's stacks: MainThread in hold(), the loader thread in loader()
main_ok=0 loader_ok=0
awk '/^    python "MainThread"/ { on = 1; next } /^  thread |^    python "/ { on = 0 } on' "$T/show-live.txt" | grep -q 'py#[0-9]* \(wait_forever\|hold\) (.*torch_job.py' && main_ok=1
awk '/^    python "loader"/ { on = 1; next } /^  thread |^    python "/ { on = 0 } on' "$T/show-live.txt" | grep -q 'py#[0-9]* loader (.*torch_job.py' && loader_ok=1
grep -m1 'note python' "$T/show-live.txt"

note "the same job without the preload, taken by ncclwatch attach"
unset NCCLWATCH_JOB
nw_spawn "$PY" "$job" --steps 3 --hold 40 > "$T/plain.out" 2>&1
PP=$NW_PID
nw_until 90 grep -q 'holding' "$T/plain.out" || fail "the plain job did not reach hold(): $(tail -n 1 "$T/plain.out")"
ppid=$(sed -n 's/.*holding .* (pid \([0-9]*\)).*/\1/p' "$T/plain.out")
"$NW_CLI" attach --no-ras -o "$T/att" "$ppid" > "$T/attach.txt" 2>&1
ast=$?
keep "$T/attach.txt"
kill -TERM "$PP" 2>/dev/null
att_threads=$(grep -c 'thread' "$T/attach.txt")
att_py=no
grep -q 'hold\|wait_forever' "$T/attach.txt" && att_py=yes
pyspy=$( [ -n "${NCCLWATCH_PYSPY:-}" ] && echo "py-spy $NCCLWATCH_PYSPY" || echo "py-spy: $(command -v py-spy || echo none)")
note "attach exit $ast, Python frames: $att_py ($pyspy)"
head -n 40 "$T/attach.txt"

[ "$arall" -eq 20 ] || fail "$arall AllReduce records, want 20 (Python $pyver)"
[ "$ars" -eq 20 ] || fail "$ars of 20 AllReduce COMPLETED"
[ "$sites" -eq 20 ] || fail "$sites of 20 AllReduce carry the call site all_reduce_step (torch_job.py:$line) (Python $pyver: $(grep -m1 'note python' "$T/show-live.txt"))"
[ $main_ok = 1 ] && [ $loader_ok = 1 ] || fail "the dump's Python stacks: MainThread in hold() $main_ok, loader in loader() $loader_ok (Python $pyver)"
[ $ast -le 1 ] || fail "ncclwatch attach exited $ast: $(tail -n 1 "$T/attach.txt")"
result "Python $pyver: 20/20 AllReduce COMPLETED with call site torch_job.py:$line; dump: MainThread in hold, loader in loader; attach without preload: exit $ast, Python frames $att_py"
