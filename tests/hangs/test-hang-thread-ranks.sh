#!/bin/sh
# hang-thread-ranks: 2 processes drive 2 ranks each (one thread per rank)
# of comms A and B; at step 2 the thread of comm rank 3 (process 1) goes B
# before A. Comm ranks 0-2 wait in A's AllReduce #2, rank 3 in B's #2. In
# processes: process 0 waits in A only; process 1 holds one rank that
# waits in A and one that took the other path. The cycle is decided by a
# majority of the threads (3 in A #2, 1 in B #2): process 1 deviates.
# MISSING_RANK on A, AllReduce #2, culprit 1 (process rank), waiting 0.
# (Before the fix: each process voted once with its oldest op, a tie, and
# the verdict named both processes, "cannot decide".)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start thread-ranks 2
wait_for_ranks $WD_WAIT "$T/out" ': step 2: ' 0 1 2 3
assert_grep 'rank 3: step 2: B before A$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=2 culprits=1 waiting=0 unknown=-$' 1
assert_grep '^job thread-ranks procs=2 world=2 ' "$T/dead"
assert_grep '^evidence rank 1 deviates in a cycle of waits \(ranks 0-1\): it is stuck in another op than the majority$' "$T/dead"
assert_no_grep 'cannot decide' "$T/dead"
assert_grep '^  culprits: 1$' "$T/diag"
