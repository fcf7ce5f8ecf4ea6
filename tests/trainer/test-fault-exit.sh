#!/bin/sh
# --fault exit: rank 1 of 4 leaves cleanly (exit code 0) at step 5 without
# its last collectives; the launcher sees no failure, and the other three
# hang in step 5's all-reduce.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 8 --count 100 --bcast-every 0 --verbose \
	--fault exit:rank=1:step=5
wait_for_line 120 'rank 1 step 5: fault exit: leaving early with exit code 0$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 4 done$' 0 1 2 3
nw_until 30 sh -c "[ \$(pgrep -P $TRAINER_PID | wc -l) -eq 3 ]" || fail "rank 1 did not exit"
assert_hung 10 "$T/out"
assert_no_grep ' step 5 done' "$T/out"
assert_no_grep 'trainer: rank 1 ' "$T/out"
assert_eq "$(rank_count)" 3 "ranks alive"
trainer_kill
