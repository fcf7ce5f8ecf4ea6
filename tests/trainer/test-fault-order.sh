#!/bin/sh
# --fault order: at step 3 (a broadcast step for everyone because of the
# fault) rank 1 of 4 broadcasts before it all-reduces, the others after.
# Collective #4 is a broadcast on rank 1 and an all-reduce elsewhere: as in
# NCCL, whose algorithms then never pair up, every rank hangs in it.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 6 --count 100 --bcast-every 0 --verbose \
	--fault order:rank=1:step=3
wait_for_line 120 'rank 1 step 3: fault order: broadcasting before the all-reduce$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 2 done$' 0 1 2 3
assert_hung 10 "$T/out"
assert_no_grep ' step 3 done' "$T/out"
assert_no_grep 'wrong|failed' "$T/out"
assert_eq "$(rank_count)" 4 "ranks alive"
trainer_kill
