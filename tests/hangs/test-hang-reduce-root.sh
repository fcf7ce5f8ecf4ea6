#!/bin/sh
# hang-reduce-root: Reduce #2 to root 0, rank 2 to root 1; every rank
# hangs in it. MISMATCH: Reduce #2, culprit 2 (the root differs), waiting
# 0-1,3.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start reduce-root 4
wait_for_ranks $WD_WAIT "$T/out" ': reduce to root ' 0 1 2 3
hang_verdict '^verdict MISMATCH comm=[0-9a-f]{16} op=Reduce seq=2 culprits=2 waiting=0-1,3 unknown=-$' 1
assert_grep '^evidence rank 2: Reduce count 65536 float32 root 1 sum \(differs in root\), STARTED$' "$T/dead"
assert_grep '^MISMATCH: rank 2 called Reduce #2 on comm [0-9a-f]{16} \(4 ranks\) with root 1 where ranks 0-1,3 used root 0' "$T/diag"
