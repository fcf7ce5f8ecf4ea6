#!/bin/sh
# --fault crash: rank 2 of 4 kills itself with SIGKILL at step 5. The
# launcher reports it (signal 9) while the other three hang in step 5's
# all-reduce, waiting for a rank that is gone.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 8 --count 100 --bcast-every 0 --verbose \
	--fault crash:rank=2:step=5
wait_for_line 120 'rank 2 step 5: fault crash: killing myself with SIGKILL$' "$T/out"
wait_for_line 120 'trainer: rank 2 \(pid [0-9]+\) was killed by signal 9 ' "$T/out"
wait_for_ranks 120 "$T/out" ' step 4 done$' 0 1 2 3
assert_hung 10 "$T/out"
assert_no_grep ' step 5 done' "$T/out"
assert_eq "$(rank_count)" 3 "ranks alive"
trainer_kill
