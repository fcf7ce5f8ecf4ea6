#!/bin/sh
# Mismatched collectives behave as tests/sim/README.md documents: an
# AllReduce meeting a Broadcast at the same position hangs every rank; a
# count mismatch lets the smaller one complete and hangs the larger ones;
# and the streams stay shifted: after a count mismatch and 3 collectives
# that agree, the ranks that were behind hang in the last one.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
run_ok mismatch-kind-2 60 "$SCEN" mismatch-kind 2
run_ok mismatch-kind-4 60 "$SCEN" mismatch-kind 4
run_ok mismatch-count-2 60 "$SCEN" mismatch-count 2
assert_grep 'rank 0: smaller count completed' "$T/mismatch-count-2.out"
assert_grep 'rank 1: larger count hung until abort' "$T/mismatch-count-2.out"
run_ok mismatch-count-shift-3 60 "$SCEN" mismatch-count-shift 3
assert_grep 'rank 0: all 4 completed' "$T/mismatch-count-shift-3.out"
for r in 1 2; do
	assert_grep "rank $r: 3 completed, the 4th hung until abort" "$T/mismatch-count-shift-3.out"
done
