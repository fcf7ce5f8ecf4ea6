#!/bin/sh
# hang-xcomm-order: two comms A and B, each step A then B synchronized; at
# step 3 rank 3 goes B before A. Ranks 0-2 wait in A's AllReduce #3, which
# rank 3 never issued; rank 3 waits in B's #3, which they never issued: a
# cycle, decided by the majority (three ranks stuck in A #3). One verdict:
# MISSING_RANK on A, AllReduce #3, culprit 3, waiting 0-2; B's verdict (which
# would blame 0-2) is only a consequence.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start xcomm-order 4
wait_for_ranks $WD_WAIT "$T/out" ': step 3: ' 0 1 2 3
assert_grep 'rank 3: step 3: B before A$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^evidence rank 3 deviates in a cycle of waits \(ranks 0-3\): it is stuck in another op than the majority$' "$T/dead"
assert_grep '^evidence consequence: MISSING_RANK: ranks 0-2 never called AllReduce #3 on comm [0-9a-f]{16} \(4 ranks\); rank 3 waits in it$' "$T/dead"
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #3 on comm ' "$T/diag"
assert_grep '^  culprits: 3$' "$T/diag"

note "2 ranks: one against one, nobody can tell which deviated"
kill -KILL "-$HANG_PID" 2>/dev/null
rm -rf "$NCCLWATCH_DIR" "$T/out"
hang_start xcomm-order 2 2
wait_for_ranks $WD_WAIT "$T/out" ': step 3: ' 0 1
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=0-1 waiting=- unknown=-$' 1
assert_grep '^summary cannot decide between ranks 0-1, waiting for each other: ' "$T/dead"
assert_grep '^evidence cannot decide: ranks 0-1 wait for each other in a cycle' "$T/dead"
assert_grep '^MISSING_RANK: cannot decide between ranks 0-1, waiting for each other: ' "$T/diag"
