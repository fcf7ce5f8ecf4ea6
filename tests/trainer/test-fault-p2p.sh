#!/bin/sh
# --fault p2p: in step 3's pipeline ring, rank 1 of 4 sends to rank 3
# instead of rank 2. Rank 2 waits for a receive that never comes; rank 1's
# small send completes eagerly into rank 3's buffer (as on real NCCL;
# nobody receives it), so rank 1 finishes step 3 and waits in step 4's
# all-reduce, which rank 2 never issues: rank 2 never finishes step 3 and
# nobody finishes step 4.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 7 --count 50 --bcast-every 0 --verbose \
	--fault p2p:rank=1:step=3
wait_for_line 120 'rank 1 step 3: fault p2p: sending to rank 3 instead of 2$' "$T/out"
wait_for_ranks 120 "$T/out" ': pipeline communicator ready \(rank [0-3] of 4\)$' 0 1 2 3
wait_for_ranks 120 "$T/out" ' step 2 done$' 0 1 2 3
assert_hung 10 "$T/out"
assert_no_grep 'rank 2 step 3 done' "$T/out"
assert_grep 'rank 1 step 3 done' "$T/out"
assert_no_grep ' step 4 done' "$T/out"
assert_eq "$(rank_count)" 4 "ranks alive"
trainer_kill
