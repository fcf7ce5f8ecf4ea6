#!/bin/sh
# Field case: PyTorch Lightning DDP on RTX 3090s, driver 545: GPU and CPU at
# 100%, no progress; every rank inside the same all-reduce (a P2P transport
# deadlock; NCCL_P2P_DISABLE=1 confirms it). Under mpirun, 4 ranks of the
# trainer; the simulated NCCL's NCCLSIM_FAULT=stall:seq=3 makes every rank
# start all-reduce #3 and none complete it.
#
# Expected: TRANSPORT_STALL on AllReduce #3, culprits "-" (the communicator
# or its link, not a rank), waiting 0-3, the P2P hint (NCCL_P2P_DISABLE=1
# to confirm, NCCL_P2P_LEVEL=NVL, NCCL_DEBUG=INFO ...; compare driver
# versions), and the NCCL and CUDA driver versions of each host in the
# evidence. The watchdog prints that verdict by itself (stderr and
# report.txt), and `ncclwatch diagnose` on the live job agrees; so does it
# on the files left after mpirun tore the job down (SIGTERM).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_mpirun

NCCLSIM_FAULT=stall:seq=3 field_mpirun "$T/job.out" "$NW_TRAINER" --steps 10 --count 64 --bcast-every 0
field_job
nw_until $FIELD_WAIT wd_verdict stall TRANSPORT_STALL 0-3 || {
	tail -n 40 "$T/job.out" >&2; fail "the watchdog did not report TRANSPORT_STALL with ranks 0-3 waiting"
}
note "the watchdog's verdict after $(field_elapsed) s"
sleep 1   # it prints again if the picture changes; let it settle
field_diagnose transport-stall
check_first transport-stall TRANSPORT_STALL 'AllReduce #3' "$COMM_CULPRIT" 0-3 -
assert_grep '^TRANSPORT_STALL: every rank of comm [0-9a-f]{16} \(4 ranks\) started AllReduce #3 and none completed it in ' "$T/transport-stall.diag"
assert_grep '^    ranks 0-3: STARTED for .*, not completed$' "$T/transport-stall.diag"
assert_grep "^    ranks 0-3: NCCL 2\\.28\\.9, CUDA driver 13\\.0, host $(hostname)\$" "$T/transport-stall.diag"
assert_grep '^  hint: P2P or NVLink trouble: try NCCL_P2P_DISABLE=1 to confirm, NCCL_P2P_LEVEL=NVL, NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,NET; compare driver versions across ranks$' "$T/transport-stall.diag"
assert_grep '^environment differences: none$' "$T/transport-stall.diag"
check_watchdog transport-stall "$T/job.out"
assert_grep 'ncclwatch: TRANSPORT_STALL: ' "$T/job.out"
field_keep transport-stall

t0=$(date +%s)
field_stop TERM "$T/job.out"
note "mpirun ended $(( $(date +%s) - t0 )) s after SIGTERM, status $LAUNCH_STATUS"
cli_ok 1 "$T/dead.diag" diagnose "$FIELD_JOB"
first_verdict "$T/dead.diag" > "$T/dead.first"
cmp -s "$T/transport-stall.first" "$T/dead.first" || {
	diff "$T/transport-stall.first" "$T/dead.first" >&2; fail "the verdict changed after the teardown"
}
note "test took $(field_elapsed) s"
