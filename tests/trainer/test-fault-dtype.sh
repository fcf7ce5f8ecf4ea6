#!/bin/sh
# --fault dtype: rank 2 of 4 all-reduces its float gradient as float16 at
# step 3: half the bytes. Like the count mismatch: rank 2 needs fewer chunks,
# completes, and exits 3 on the wrong values; the others hang waiting for
# the rest of its data.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 6 --count 65536 --bcast-every 0 --verbose \
	--fault dtype:rank=2:step=3
wait_for_line 120 'rank 2 step 3: fault dtype: all-reduce of float16 instead of float$' "$T/out"
wait_for_line 120 'trainer: rank 2 \(pid [0-9]+\) failed with exit code 3$' "$T/out"
assert_grep 'rank 2 step 3: wrong all-reduce result at element ' "$T/out"
wait_for_ranks 120 "$T/out" ' step 2 done$' 0 1 3
assert_hung 10 "$T/out"
assert_no_grep ' step 3 done' "$T/out"
assert_no_grep 'trainer: rank [013] ' "$T/out"
assert_eq "$(rank_count)" 3 "ranks alive"
trainer_kill
