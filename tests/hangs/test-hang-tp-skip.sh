#!/bin/sh
# hang-tp-skip: a tensor-parallel comm per pair ({0,1}, {2,3}: split of the
# world) and the world; each step all-reduces on the pair, then on the
# world. At step 2 rank 1 skips its pair's all-reduce: rank 0 waits in
# tp AllReduce #2 for it, ranks 1-3 in the world's #2, which rank 0 never
# reaches. A cycle of ranks 0 and 1; the ranks 2-3 that reached the
# world's #2 issued their own pair's #2 before it, rank 1 never did: it
# skipped a step. MISSING_RANK on rank 1's pair comm, AllReduce #2,
# culprit 1, waiting 0,2-3. (Before the fix: the majority of the world's
# op, ranks 1-3, voted rank 0 the deviant: it was blamed for waiting.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start tp-skip 4
wait_for_line $WD_WAIT '^rank 1: step 2: skipping the tp all-reduce$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=2 culprits=1 waiting=0,2-3 unknown=-$' 1
assert_grep '^summary rank 1 never called AllReduce #2 on comm [0-9a-f]{16} \(2 ranks\); rank 0 waits in it$' "$T/dead"
assert_grep '^evidence rank 1 deviates in a cycle of waits \(ranks 0-1\): it skipped a collective ' "$T/dead"
assert_grep '^evidence consequence: MISSING_RANK: rank 0 never called AllReduce #2 on comm [0-9a-f]{16} \(4 ranks\); ranks 1-3 wait in it$' "$T/dead"
assert_grep '^  culprits: 1$' "$T/diag"
