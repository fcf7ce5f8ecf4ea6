#!/bin/sh
# Field case: xDiT PipeFusion on L40s: NCCL SEND / COALESCED timeouts with
# different op numbers on different ranks; the pipeline's point-to-point
# sends were not matched by receives. Under torchrun, 4 ranks of the
# trainer pass activations around a send/recv ring (--pipeline); at step 3
# rank 1 sends to rank 3 instead of rank 2 (--fault p2p:rank=1:step=3).
#
# Expected, from the watchdog and from `ncclwatch diagnose` alike:
# P2P_UNMATCHED first, on Recv #4 (rank 2's fourth receive from rank 1),
# culprit 1, waiting 0,2-3, its summary naming the pair (rank 2 waits for
# rank 1, which never sent it and sent to rank 3 instead, which never
# received it), hint "pipeline schedule mismatch"; and, as the ring stops,
# its consequence in the same verdict: rank 2 never calls AllReduce #5 (it
# waits for rank 1; rank 1's small misdirected send completed eagerly, as
# on real NCCL, and rank 1 went on into #5 with ranks 0 and 3). One
# verdict: rank 2 only waits and is never blamed.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_torchrun

field_torchrun "$T/job.out" "$NW_TRAINER" --steps 8 --count 50 --bcast-every 0 --fault p2p:rank=1:step=3
field_job
nw_until $FIELD_WAIT wd_verdict pipeline P2P_UNMATCHED 0,2-3 || {
	tail -n 40 "$T/job.out" >&2; fail "the watchdog did not report P2P_UNMATCHED with ranks 0,2-3 waiting"
}
note "the watchdog's verdict after $(field_elapsed) s"
# the verdict set grows while the peers reach the timeout one by one
_two() { "$NW_CLI" diagnose "$FIELD_JOB" > "$T/poll" 2>/dev/null; grep -q '^    consequence: MISSING_RANK: ' "$T/poll"; }
nw_until $FIELD_WAIT _two || { cat "$T/poll" >&2; fail "no MISSING_RANK consequence in the P2P_UNMATCHED verdict"; }
sleep 1
field_diagnose pipeline
check_first pipeline P2P_UNMATCHED 'Recv #4' 1 0,2-3 - 1
# rank 1's misdirected send is small: as on real NCCL it completes into
# rank 3's buffer (eager) and rank 1 goes on; its next send to rank 2 fills
# the count behind its own stuck work
assert_grep "^P2P_UNMATCHED: rank 2's Recv #4 from rank 1 on comm [0-9a-f]{16} is pending for .*, matched only by a send rank 1 posted later behind its own stuck work; rank 1 sent to the wrong peer: its send to rank 3 completed \(eager, into rank 3's buffer\) and rank 3 never received it" "$T/pipeline.diag"
assert_grep '^  hint: pipeline schedule mismatch$' "$T/pipeline.diag"
assert_grep '^    consequence: MISSING_RANK: rank 2 never called AllReduce #5 on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it$' "$T/pipeline.diag"
assert_no_grep '^MISSING_RANK: ' "$T/pipeline.diag"
# the watchdog printed the same by itself (its verdict text may still be
# the one before the last rank passed the timeout: compare once it has
# the consequence)
nw_until $FIELD_WAIT grep -q '^    consequence: MISSING_RANK: ' "$FIELD_JOB/report.txt" ||
	{ cat "$FIELD_JOB/report.txt" >&2; fail "the watchdog's report.txt never had the consequence"; }
sleep 1
check_watchdog pipeline "$T/job.out"
field_keep pipeline
t0=$(date +%s)
field_stop TERM "$T/job.out"
note "torchrun ended $(( $(date +%s) - t0 )) s after SIGTERM, status $LAUNCH_STATUS; test took $(field_elapsed) s"
