#!/bin/sh
# An async error stays visible in RAS while the process lives: nccl-gpufault
# (a 1-rank comm, a GPU fault on all-reduce #2) lingers after
# ncclCommGetAsyncError reported it; RAS says async_error 1
# (ncclUnhandledCudaError), the text format has the comm's ERROR section,
# diagnose says GPU_FAULT (verdicts_fault.c, on the comm table the RAS
# adapter fills).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"
prog="$NW_BUILD/tests/watchdog/nccl-gpufault"
[ -x "$prog" ] || fail "$prog not built"
NCCLSIM_FAULT=gpufault:rank=0:seq=2 nw_spawn "$prog" linger > "$T/out" 2>&1
nw_until 60 grep -q lingering "$T/out" || { cat "$T/out"; fail "nccl-gpufault never lingered"; }
"$NW_CLI" ras --save "$T/s.json" > "$T/ras.out" || fail "ncclwatch ras failed"
cat "$T/ras.out"
assert_grep '^  rank 0: RUNNING async error 1 AllReduce launches=2$' "$T/ras.out"
assert_grep '^            "async_error": 1,$' "$T/s.json"
# A --save that cannot be written (the data goes, the close fails): one
# line, exit status 2 (the file was once closed twice then).
"$NW_CLI" ras --save /dev/full > "$T/full.out" 2> "$T/full.err"
assert_eq "$?" 2 "ras --save /dev/full exit status"
assert_grep '^ncclwatch ras: cannot write /dev/full' "$T/full.err"
assert_eq "$(wc -l < "$T/full.err")" 1 "error lines of ras --save /dev/full"
raw close 'STATUS\n' > "$T/text.out"
assert_grep '^    0         1         1         1         1         1   RUNNING   ERROR$' "$T/text.out"
assert_grep '^#0-0 \([0-9a-f]{16}\) ERROR$' "$T/text.out"
assert_grep '^  Asynchronous error on 1 rank$' "$T/text.out"
assert_grep '^  Rank 0 reported Unhandled CUDA error -- GPU 0 managed by process [0-9]+ on node 127\.0\.0\.1$' "$T/text.out"
"$NW_CLI" diagnose "$T/s.json" > "$T/diag.out"
cat "$T/diag.out"
# the async error is a fact of rank 0's process (its comm table), judged
# by the ordinary GPU_FAULT rule
assert_grep '^GPU_FAULT: rank 0: comm [0-9a-f]{16} reports async error ncclUnhandledCudaError \(unhandled cuda error\) on device 0 of 127\.0\.0\.1$' "$T/diag.out"
assert_grep '^  culprits: 0$' "$T/diag.out"

# the text form (NCCL < 2.28.7) lists only its outliers by rank: no job of
# processes; its error section is RAS's verdict, as before
"$NW_CLI" ras --text --save "$T/s.txt" > /dev/null || fail "ncclwatch ras --text --save failed"
"$NW_CLI" diagnose "$T/s.txt" > "$T/diag-text.out"
cat "$T/diag-text.out"
assert_grep '^GPU_FAULT: rank 0 of comm 0x[0-9a-f]{16} reported the async error ncclUnhandledCudaError$' "$T/diag-text.out"
assert_grep '^  culprits: 0$' "$T/diag-text.out"

# attach: the report joins the snapshot of the same process; the async
# error is a fact of that process too (its comm, from RAS), judged the same
"$NW_CLI" attach --no-python -o "$T/snap" "$NW_PID" > "$T/attach.out" 2>&1
cat "$T/attach.out"
assert_grep '^attach: RAS at .* -> .*/ras\.json$' "$T/attach.out"
assert_grep '^GPU_FAULT: rank 0: comm [0-9a-f]{16} reports async error ncclUnhandledCudaError ' "$T/attach.out"
assert_grep '^  culprits: 0$' "$T/attach.out"
