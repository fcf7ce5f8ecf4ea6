#!/bin/sh
# hang-gather-root: Gather #2 to root 0, rank 3 to root 3; every rank
# hangs in it. MISMATCH: Gather #2, culprit 3, waiting 0-2.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start gather-root 4
wait_for_ranks $WD_WAIT "$T/out" ': gather to root ' 0 1 2 3
hang_verdict '^verdict MISMATCH comm=[0-9a-f]{16} op=Gather seq=2 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^evidence rank 3: Gather count 16384 float32 root 3 \(differs in root\), STARTED$' "$T/dead"
assert_grep '^MISMATCH: rank 3 called Gather #2 on comm [0-9a-f]{16} \(4 ranks\) with root 3 where ranks 0-2 used root 0' "$T/diag"
