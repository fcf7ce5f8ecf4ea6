#!/bin/sh
# hang-thread-ranks: 2 processes drive 2 ranks each (one thread and one
# GPU per rank: process p has GPUs 2p and 2p+1) of comms A and B; at step
# 2 the thread of comm rank 3 (process 1) goes B before A. Ranks 0-2 wait
# in A's AllReduce #2, rank 3 in B's #2: a cycle decided by the majority
# (3 ranks in A #2, 1 in B #2). The engine's unit is the rank, not the
# process (issue 20): MISSING_RANK on A, AllReduce #2, culprit 3, waiting
# 0-2, a job of 4 ranks, though the launcher's RANK names the 2 processes.
# (Before: both ranks on one GPU, which NCCL refuses and the simulation
# now refuses too, and the verdict named process 1 of a job of 2.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start thread-ranks 2
wait_for_ranks $WD_WAIT "$T/out" ': step 2: ' 0 1 2 3
assert_grep 'rank 3: step 2: B before A$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=2 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^job thread-ranks procs=4 world=4 ' "$T/dead"
assert_grep '^evidence rank 3 deviates in a cycle of waits \(ranks 0-3\): it is stuck in another op than the majority$' "$T/dead"
assert_no_grep 'cannot decide' "$T/dead"
assert_grep '^  culprits: 3$' "$T/diag"
