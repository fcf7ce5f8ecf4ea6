#!/bin/sh
# hang-extra-coll: rank 2 runs one all-reduce more than the others (#4);
# ranks 0-1,3 completed #3 and wait in a host-side join, outside NCCL,
# with nothing pending. The three that agree are the program as written:
# rank 2 went one op past them. MISSING_RANK on AllReduce #4, culprit 2,
# nobody waiting in NCCL. (Before the fix: culprits 0-1,3, "never called
# #4", rank 2 waiting: the ranks that agree were blamed for not following
# the one that deviated.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start extra-coll 4
wait_for_ranks $WD_WAIT "$T/out" ': joining$' 0 1 3
wait_for_line $WD_WAIT '^rank 2: step 3 done$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=4 culprits=2 waiting=- unknown=-$' 1
assert_grep '^summary rank 2 called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\) after ranks 0-1,3 stopped at #3 and wait for nothing in NCCL' "$T/dead"
assert_grep '^evidence rank 2: issued it past where the others stopped; in AllReduce #4 ' "$T/dead"
assert_grep '^evidence ranks 0-1,3: stopped after #3 \(COMPLETED\), nothing pending since; ' "$T/dead"
assert_grep '^MISSING_RANK: rank 2 called AllReduce #4 ' "$T/diag"
assert_grep '^  culprits: 2$' "$T/diag"
