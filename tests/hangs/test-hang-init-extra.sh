#!/bin/sh
# hang-init-extra: rank 3 alone enters ncclCommInitRank of a second comm;
# ranks 0-2 wait in the world's AllReduce #2, which rank 3 never issued.
# A cycle decided by the majority (three ranks in AllReduce #2): one
# verdict, MISSING_RANK on the world, AllReduce #2, culprit 3, waiting 0-2;
# the INIT_STALL that would blame 0-2 (never entered the new comm) is only
# a consequence.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start init-extra 4
wait_for_line $WD_WAIT '^rank 3: creating an extra comm$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=2 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^evidence rank 3: never called it \(coll_enqueued 1\); inside CommInit of comm ' "$T/dead"
assert_grep '^evidence consequence: INIT_STALL: rank 3 is inside ncclCommInitRank of comm [0-9a-f]{16} \(4 ranks\) for .*; ranks 0-2 never entered it$' "$T/dead"
assert_grep '^  culprits: 3$' "$T/diag"
