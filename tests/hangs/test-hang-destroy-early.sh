#!/bin/sh
# hang-destroy-early: rank 3 finalizes and destroys the world comm after 2
# steps and waits in a host-side join; ranks 0-2 wait in AllReduce #3.
# MISSING_RANK: AllReduce #3, culprit 3 (it destroyed the comm), waiting 0-2.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start destroy-early 4
wait_for_line $WD_WAIT '^rank 3: destroyed the comm; joining$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^evidence rank 3: never called it: it DESTROYED the comm after #2; .*main thread: pthread_barrier_wait' "$T/dead"
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #3 ' "$T/diag"
