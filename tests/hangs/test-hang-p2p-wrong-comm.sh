#!/bin/sh
# hang-p2p-wrong-comm: a pipeline on comm pp (0 -> 1 -> 2 -> 3), an
# all-reduce on the world each step; at step 2 rank 2 posts its receive
# from rank 1 on the world instead of pp. Rank 1's Send #2 to rank 2 on pp
# is small: it completes eagerly into rank 2's buffer, as on real NCCL,
# and nobody receives it; rank 2's Recv #1 from rank 1 on the world is
# never sent; rank 1 waits in the world's AllReduce #2 that rank 2 (and
# rank 3, stuck in its Recv #2 from rank 2 on pp) never called. Rank 2's
# receive is the first send/receive anybody posted on the world, while
# rank 1's send waits unreceived on pp, where the pair already talked:
# rank 2 used the wrong comm. One verdict: P2P_UNMATCHED, rank 3's Recv #2
# from rank 2 on pp, culprit 2, waiting 0-1,3. (Before issue 21 the
# simulation made rank 1's send wait, and the verdict was on that send;
# before the wrong-comm rule: P2P_DEADLOCK blaming ranks 1-2.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start p2p-wrong-comm 4
wait_for_line $WD_WAIT '^rank 2: step 2: receiving from rank 1 on the world comm$' "$T/out"
hang_verdict '^verdict P2P_UNMATCHED comm=[0-9a-f]{16} op=Recv seq=2 culprits=2 waiting=0-1,3 unknown=-$' 1
assert_grep "^summary rank 3's Recv #2 from rank 2 on comm [0-9a-f]{16} is pending for .*, which rank 2 never sent \(it posted sends to rank 3 up to #1\)$" "$T/dead"
assert_grep '^evidence rank 2 deviates in a cycle of waits \(ranks 1-3\): ' "$T/dead"
assert_grep "^evidence consequence: P2P_UNMATCHED: rank 2's Recv #1 from rank 1 on comm " "$T/dead"
assert_no_grep 'DEADLOCK' "$T/dead"
assert_grep '^  culprits: 2$' "$T/diag"
