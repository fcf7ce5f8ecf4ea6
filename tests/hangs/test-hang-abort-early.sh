#!/bin/sh
# hang-abort-early: rank 2 aborts the world comm after 2 steps (an error
# path) and waits in a host-side join; ranks 0-1,3 wait in AllReduce #3.
# MISSING_RANK: AllReduce #3, culprit 2, waiting 0-1,3; the evidence says
# it ABORTED the comm (before: only "never called it (coll_enqueued 2)").
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start abort-early 4
wait_for_line $WD_WAIT '^rank 2: aborted the comm; joining$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=2 waiting=0-1,3 unknown=-$' 1
assert_grep '^evidence rank 2: never called it: it ABORTED the comm after #2; .*main thread: pthread_barrier_wait' "$T/dead"
assert_grep '^MISSING_RANK: rank 2 never called AllReduce #3 ' "$T/diag"
