#!/bin/sh
# hang-host-lock: rank 1's main thread blocks in pthread_mutex_lock (a
# helper thread holds the lock for ever) before step 3; the others wait in
# AllReduce #3. MISSING_RANK: AllReduce #3, culprit 1, waiting 0,2-3; the
# evidence shows rank 1's main thread in pthread_mutex_lock.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start host-lock 4
wait_for_line $WD_WAIT '^rank 1: step 3: the loader holds the lock$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=1 waiting=0,2-3 unknown=-$' 1
assert_grep '^evidence rank 1: never called it \(coll_enqueued 2\); last NCCL call AllReduce #2 .*main thread: .*pthread_mutex_lock < body' "$T/dead"
assert_grep '^MISSING_RANK: rank 1 never called AllReduce #3 ' "$T/diag"
