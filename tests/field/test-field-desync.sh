#!/bin/sh
# Field case: CPU-side desync, the commonest NCCL timeout (over 60% at
# Meta): one rank took another code path and never issued the collective
# the others wait in. Under mpirun, 4 ranks of the trainer; at step 4 rank
# 1 skips the all-reduce and idles (--fault skip:rank=1:step=4).
#
# Expected, from the watchdog and from `ncclwatch diagnose` alike:
# MISSING_RANK on AllReduce #5, culprit 1, waiting 0,2-3, and where rank 1
# is instead: its last NCCL call (AllReduce #4, COMPLETED), idle for longer
# than the timeout, and its main thread's stack (pause < idle_forever <
# run_rank, from the dump the stuck ranks' watchdogs asked of it); hint
# "the code path differs on those ranks". The files left after mpirun tore
# the job down (SIGTERM) give the same verdict.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_mpirun

field_mpirun "$T/job.out" "$NW_TRAINER" --steps 10 --count 64 --bcast-every 0 --fault skip:rank=1:step=4
field_job
nw_until $FIELD_WAIT wd_verdict desync MISSING_RANK 0,2-3 || {
	tail -n 40 "$T/job.out" >&2; fail "the watchdog did not report MISSING_RANK with ranks 0,2-3 waiting"
}
note "the watchdog's verdict after $(field_elapsed) s"
field_lines $FIELD_WAIT '^ncclwatch: dump requested by .*: rank=1 ' "$T/job.out" 1
sleep 1
field_diagnose desync
check_first desync MISSING_RANK 'AllReduce #5' 1 0,2-3 -
assert_grep '^MISSING_RANK: rank 1 never called AllReduce #5 on comm [0-9a-f]{16} \(4 ranks\); ranks 0,2-3 wait in it$' "$T/desync.diag"
assert_grep '^    rank 1: never called it \(coll_enqueued 4\); last NCCL call AllReduce #4 on comm [0-9a-f]{16} \(COMPLETED\); idle: no NCCL call for [^;]*; main thread: pause < idle_forever[^ ]* < run_rank < main' "$T/desync.diag"
assert_grep '^    ranks 0,2-3: in it \(STARTED for .*\)$' "$T/desync.diag"
assert_grep '^  hint: the code path differs on those ranks$' "$T/desync.diag"
assert_grep '^  rank 1 \(1\) thread "trainer":$' "$T/desync.diag"
check_watchdog desync "$T/job.out"
field_keep desync
t0=$(date +%s)
field_stop TERM "$T/job.out"
note "mpirun ended $(( $(date +%s) - t0 )) s after SIGTERM, status $LAUNCH_STATUS"
cli_ok 1 "$T/dead.diag" diagnose "$FIELD_JOB"
first_verdict "$T/dead.diag" > "$T/dead.first"
cmp -s "$T/desync.first" "$T/dead.first" || { diff "$T/desync.first" "$T/dead.first" >&2; fail "the verdict changed after the teardown"; }
note "test took $(field_elapsed) s"
