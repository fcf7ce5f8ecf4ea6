#!/bin/sh
# hang-allgather-count: AllGather #2 with 16384 floats a rank, rank 1 with
# 65536. The three others need fewer chunks: they complete it and wait in a
# host-side join; rank 1 waits in #2 for chunks nobody sends. MISMATCH:
# AllGather #2, culprit 1; nobody waits inside NCCL (the others wait on the
# host, outside what the records see).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start allgather-count 4
wait_for_ranks $WD_WAIT "$T/out" ': all-gather done; joining$' 0 2 3
hang_verdict '^verdict MISMATCH comm=[0-9a-f]{16} op=AllGather seq=2 culprits=1 waiting=- unknown=-$' 1
assert_grep '^evidence ranks 0,2-3: AllGather count 16384 float32 \(majority\), COMPLETED$' "$T/dead"
assert_grep '^evidence rank 1: AllGather count 65536 float32 \(differs in count\), STARTED$' "$T/dead"
assert_grep '^MISMATCH: rank 1 called AllGather #2 on comm [0-9a-f]{16} \(4 ranks\) with count 65536 where ranks 0,2-3 used count 16384' "$T/diag"
