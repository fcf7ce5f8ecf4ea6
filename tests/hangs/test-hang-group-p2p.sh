#!/bin/sh
# hang-group-p2p: a ring exchange in one group per step; at step 2 rank 2
# sends to rank 0 instead of rank 3. Rank 3's Recv #2 from rank 2 is never
# sent; rank 2's Send #1 to rank 0 completes eagerly into rank 0's buffer
# (as on real NCCL) and is never received; ranks 0-1 wait in the
# all-reduce behind. P2P_UNMATCHED: Recv #2, culprit 2 (misdirected: its
# completed send nobody received), ranks 0-1,3 waiting; the all-reduce
# rank 2 never started is a consequence.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start group-p2p 4
wait_for_line $WD_WAIT '^rank 2: step 2: sending to rank 0 instead of 3$' "$T/out"
hang_verdict '^verdict P2P_UNMATCHED comm=[0-9a-f]{16} op=Recv seq=2 culprits=2 waiting=0-1,3 unknown=-$' 1
assert_grep "^evidence misdirected: rank 2's Send #1 to rank 0 on comm [0-9a-f]{16} COMPLETED \(eager, into rank 0's buffer\), which rank 0 never received \(it posted receives from rank 2 up to #0\)$" "$T/dead"
assert_grep "^P2P_UNMATCHED: rank 3's Recv #2 from rank 2 " "$T/diag"
assert_grep '^  culprits: 2$' "$T/diag"
