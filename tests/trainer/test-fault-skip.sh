#!/bin/sh
# --fault skip: rank 5 of 8 never issues step 20's all-reduce (it idles, like
# a rank stuck in another code path); the other 7 hang inside it. Nobody
# finishes step 20, every rank stays alive, the job never ends by itself.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_start "$T/out" --nranks 8 --steps 24 --count 64 --bcast-every 0 --verbose \
	--fault skip:rank=5:step=20
wait_for_line 120 'rank 5 step 20: fault skip: not issuing the all-reduce$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 19 done$' 0 1 2 3 4 5 6 7
assert_hung 10 "$T/out"
assert_grep 'rank 5 step 20: idling until killed$' "$T/out"
assert_no_grep ' step 20 done' "$T/out"
assert_eq "$(rank_count)" 8 "ranks alive"
trainer_kill
