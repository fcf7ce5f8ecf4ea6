#!/bin/sh
# The hang generator's jobs in the attach view (issue 20: started without
# the preload, `ncclwatch attach --tree` then `diagnose`: stacks of each
# process plus NCCL RAS launch counts, no op numbers), judged by
# judge.py's attach rubric, on seeds where that view was wrong or named
# nobody:
#   9262 (3 processes of 2 ranks, one thread each, tp groups of 3: ranks
#     4-5 pause before the fault step's tp Broadcast; 2 of 3 in the tp
#     comm, their count was its majority and rank 3, ahead of them, was
#     blamed, while a strict majority of the world waited for them in its
#     AllReduce: their counts cast no vote on their other comms);
#   2 ranks, 1 against 1 in launch counts, the rank behind outside NCCL
#     (its stack), the other waiting inside it: 202069 (sleep), 9014 (a
#     lock), 202210 (the victim skips the step's last op and stops): no
#     rank may be blamed from counts and stacks (a rank that ran one
#     collective too many looks the same), so no verdict may be wrong;
#   202349 (rank 1 never makes the grouped split: the other process's
#     threads wait inside NCCL's creation of the child, the simulation's
#     job thread named as NCCL names it: no rank of it may be blamed).
. "$NW_ROOT/tests/lib.sh"
exact="9262"
others="202069 9014 202210 202349"
# shellcheck disable=SC2086
CORPUS_VIEW=attach sh "$NW_ROOT/tests/hangfuzz/run-seeds.sh" $exact $others > "$T/out" 2>&1
st=$?
cat "$T/out"
for s in $exact; do
	grep -q "^fuzz-$s attach ok exact " "$T/out" || fail "seed $s: not exact from attach"
done
for s in $others; do
	grep -q "^fuzz-$s attach ok " "$T/out" || fail "seed $s: no right verdict from attach"
done
[ $st -eq 0 ] || fail "wrong views (above)"
