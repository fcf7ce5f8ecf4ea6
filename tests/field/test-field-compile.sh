#!/bin/sh
# Field case: JAX on 8 GPUs stuck in jax.jit before the first step (DESIGN.md:
# "no collective was ever issued; compile/init stall"). Under torchrun, 4
# ranks of the trainer create their communicator, then stall in
# compile_step() (--fault compile:rank=all) before any collective.
#
# (a) every rank compiling: nothing is pending, so no watchdog reports
#     anything; `ncclwatch diagnose` on the live job exits 1 with IDLE,
#     culprits 0-3 (every comm created, no collective ever, no NCCL call
#     for longer than the timeout), hint "compile / data loading /
#     checkpoint". Once the job is asked for its stacks (as a stuck
#     watchdog would ask: the job's control file), the evidence and the
#     merged stacks name compile_step on all 4 ranks.
# (b) only rank 2 still compiling (--fault compile:rank=2) while ranks
#     0,1,3 wait in the first all-reduce: MISSING_RANK on AllReduce #1,
#     culprit 2 (never called it, coll_enqueued 0), waiting 0-1,3; its
#     stack (dumped at the stuck watchdogs' request) names compile_step;
#     the watchdog prints the same verdict by itself.
# Each job is then stopped as an operator would (SIGTERM to torchrun) and
# must leave no process behind.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_torchrun

note "(a) every rank stuck compiling"
field_torchrun "$T/all.out" "$NW_TRAINER" --steps 5 --count 64 --fault compile:rank=all
field_job
field_segments $NRANKS
field_lines $FIELD_WAIT 'fault compile: compiling the first step, never finishing' "$T/all.out" $NRANKS
# IDLE needs no NCCL call for longer than the timeout: poll until then.
_idle() { "$NW_CLI" diagnose "$FIELD_JOB" > "$T/all.poll" 2>&1; grep -q '^IDLE: ' "$T/all.poll"; }
nw_until $FIELD_WAIT _idle || { cat "$T/all.poll" >&2; fail "no IDLE verdict"; }
field_diagnose compile-all-nostacks
check_first compile-all-nostacks IDLE comm 0-3 - -
assert_grep '^IDLE: ranks 0-3 created their communicators but never called a collective; no NCCL call for ' "$T/compile-all-nostacks.diag"
assert_grep '^    ranks 0-3: last NCCL call CommInit of comm [0-9a-f]{16} \(INIT_DONE\); idle: no NCCL call for ' "$T/compile-all-nostacks.diag"
assert_grep '^  hint: compile / data loading / checkpoint$' "$T/compile-all-nostacks.diag"
assert_grep '^stacks: none captured$' "$T/compile-all-nostacks.diag"
note "no op is pending: no watchdog reported anything"
assert_no_grep 'ncclwatch: ' "$T/all.out"
[ ! -e "$FIELD_JOB/report.txt" ] || fail "a watchdog wrote report.txt for an idle job"

note "asking the job for its stacks"
field_request_dumps
field_lines $FIELD_WAIT '^ncclwatch: dump requested by rank=-1 ' "$T/all.out" $NRANKS
field_diagnose compile-all
check_first compile-all IDLE comm 0-3 - -
assert_grep '^    ranks 0-3: last NCCL call CommInit .*; idle: no NCCL call for .*; main thread: .*nanosleep < compile_step < run_rank < main' "$T/compile-all.diag"
assert_grep '^stacks \(first thread of each process, 1 group\):$' "$T/compile-all.diag"
assert_grep '^  ranks 0-3 \(4\) thread "trainer":$' "$T/compile-all.diag"
assert_grep '^    #[0-9] compile_step$' "$T/compile-all.diag"
field_keep compile-all
t0=$(date +%s)
field_stop TERM "$T/all.out"
note "(a) torchrun ended $(( $(date +%s) - t0 )) s after SIGTERM, status $LAUNCH_STATUS"

note "(b) rank 2 alone still compiling, the others in the first all-reduce"
rm -rf "$NCCLWATCH_DIR"
field_torchrun "$T/one.out" "$NW_TRAINER" --steps 5 --count 64 --fault compile:rank=2
field_job
nw_until $FIELD_WAIT wd_verdict compile-one MISSING_RANK 0-1,3 || {
	tail -n 40 "$T/one.out" >&2; fail "the watchdog did not report MISSING_RANK with ranks 0-1,3 waiting"
}
# the compiling rank's stack is in the dump the stuck ones asked of it
field_lines $FIELD_WAIT '^ncclwatch: dump requested by .*: rank=2 ' "$T/one.out" 1
sleep 1   # the verdict is printed again if the picture changes
field_diagnose compile-one
check_first compile-one MISSING_RANK 'AllReduce #1' 2 0-1,3 -
assert_grep '^MISSING_RANK: rank 2 never called AllReduce #1 on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it$' "$T/compile-one.diag"
assert_grep '^    rank 2: never called it \(coll_enqueued 0\); last NCCL call CommInit .*; idle: no NCCL call for .*; main thread: .*nanosleep < compile_step < run_rank' "$T/compile-one.diag"
assert_grep '^  hint: the code path differs on those ranks$' "$T/compile-one.diag"
assert_grep '^    #[0-9] compile_step$' "$T/compile-one.diag"
check_watchdog compile-one "$T/one.out"
field_keep compile-one
t0=$(date +%s)
field_stop TERM "$T/one.out"
note "(b) torchrun ended $(( $(date +%s) - t0 )) s after SIGTERM, status $LAUNCH_STATUS; test took $(field_elapsed) s"
