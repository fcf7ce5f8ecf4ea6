#!/bin/sh
# hang-split-skip: rank 3 skips the ncclCommSplit of the world (colors
# rank/2) the others enter, and waits in the world's AllReduce #2 instead.
# Ranks 0-1 (color 0) and rank 2 (color 1) are inside the same split call
# of the parent: one group, the majority. One verdict: INIT_STALL on the
# parent's split, culprit 3, waiting 0-2; the AllReduce #2 that 0-2 never
# issued is a consequence (before the fix, a second verdict blamed rank 2,
# the only rank of color 1, which only waits in the split).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start split-skip 4
wait_for_ranks $WD_WAIT "$T/out" ': splitting$' 0 1 2
wait_for_line $WD_WAIT '^rank 3: skipping the split$' "$T/out"
hang_verdict '^verdict INIT_STALL comm=[0-9a-f]{16} op=CommSplit seq=0 culprits=3 waiting=0-2 unknown=-$' 1
comm=$(verdict_field "$(verdict_line "$T/dead" 1)" comm)
assert_grep "^evidence rank 3: never called it; in AllReduce #2 on comm $comm " "$T/dead"
assert_grep '^evidence consequence: MISSING_RANK: ranks 0-2 never called AllReduce #2 ' "$T/dead"
assert_grep "^INIT_STALL: ranks 0-2 are inside ncclCommSplit of split #1 of comm $comm .*; rank 3 never called it$" "$T/diag"
