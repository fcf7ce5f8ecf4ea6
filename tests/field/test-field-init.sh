#!/bin/sh
# Field case: Lumina-T2X FSDP on 2+ GPUs stuck in "Initializing pipeline": a
# hang inside communicator init. Under mpirun, 4 ranks of the trainer:
#
# (a) rank 3 never creates the communicator (--fault noinit:rank=3: it got
#     the unique id, then idles without calling NCCL, so it has no file):
#     INIT_STALL on the world comm's CommInit, naming ranks 0-2 as inside
#     ncclCommInitRank (waiting) and rank 3 as the one that never entered:
#     "rank 3 has no file (never entered it?)", unknown "3 (no file)", and
#     the job header says ranks missing: 3. The engine cannot tell a rank
#     that never called NCCL from one whose file is on another host, so it
#     blames the communicator, not rank 3 (as test-analysis-trainer-faults.sh
#     asserts too); hint "launch, rendezvous address, network interface".
# (b) every rank enters ncclCommInitRank but rank 2 never joins the
#     rendezvous (NCCLSIM_FAULT=initstall:rank=2): INIT_STALL, every rank
#     inside and none finished, so per DESIGN.md ("the ranks that never
#     entered, else the comm") the communicator is the culprit, waiting 0-3.
# Both: the watchdog prints the verdict by itself and diagnose agrees; the
# job is then stopped with SIGTERM to mpirun and leaves no process.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_mpirun

note "(a) rank 3 never enters the init"
field_mpirun "$T/noinit.out" "$NW_TRAINER" --steps 5 --count 64 --fault noinit:rank=3
field_job
nw_until $FIELD_WAIT wd_verdict init-noinit INIT_STALL 0-2 || {
	tail -n 40 "$T/noinit.out" >&2; fail "the watchdog did not report INIT_STALL with ranks 0-2 waiting"
}
sleep 1
field_diagnose init-noinit
check_first init-noinit INIT_STALL CommInit "$NOFILE_CULPRIT" 0-2 "3 (no file)"
assert_grep '^job [^ ]+: 3 processes read, world size 4, ranks missing: 3, timeout 2s$' "$T/init-noinit.diag"
assert_grep '^INIT_STALL: ranks 0-2 are inside ncclCommInitRank of comm [0-9a-f]{16} \(4 ranks\) for .*; rank 3 has no file \(never entered it\?\)$' "$T/init-noinit.diag"
assert_grep '^  hint: launch, rendezvous address, network interface$' "$T/init-noinit.diag"
check_watchdog init-noinit "$T/noinit.out"
field_keep init-noinit
field_stop TERM "$T/noinit.out"

note "(b) every rank inside the init, rank 2 never joins"
rm -rf "$NCCLWATCH_DIR"
NCCLSIM_FAULT=initstall:rank=2 field_mpirun "$T/initstall.out" "$NW_TRAINER" --steps 5 --count 64
field_job
nw_until $FIELD_WAIT wd_verdict init-stall INIT_STALL 0-3 || {
	tail -n 40 "$T/initstall.out" >&2; fail "the watchdog did not report INIT_STALL with ranks 0-3 waiting"
}
sleep 1
field_diagnose init-stall
check_first init-stall INIT_STALL CommInit "$COMM_CULPRIT" 0-3 -
assert_grep '^INIT_STALL: ranks 0-3 are inside ncclCommInitRank of comm [0-9a-f]{16} \(4 ranks\) for .*; every rank entered it and none finished' "$T/init-stall.diag"
assert_grep '^  hint: launch, rendezvous address, network interface$' "$T/init-stall.diag"
assert_grep '^    #[0-9]+ sim_block_forever$' "$T/init-stall.diag"   # rank 2, blocked before it joins
check_watchdog init-stall "$T/initstall.out"
field_keep init-stall
field_stop TERM "$T/initstall.out"
note "test took $(field_elapsed) s"
