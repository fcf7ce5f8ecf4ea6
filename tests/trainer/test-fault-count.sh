#!/bin/sh
# --fault count: rank 1 of 4 all-reduces half the elements at step 3.
# As in NCCL, data moves in chunks (64 KiB in the simulation): with 4 chunks
# per gradient, rank 1 needs fewer chunks, completes, finds the second half
# of its gradient unreduced and exits 3 (wrong result); the others wait for
# chunks nobody sends and hang. With a one-chunk gradient every rank
# completes with corrupt data and all four exit 3.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

note "4 chunks: rank 1 fails, the others hang"
trainer_start "$T/a.out" --nranks 4 --steps 6 --count 65536 --bcast-every 0 --verbose \
	--fault count:rank=1:step=3
wait_for_line 120 'rank 1 step 3: fault count: all-reduce of 32768 elements instead of 65536$' "$T/a.out"
wait_for_line 120 'trainer: rank 1 \(pid [0-9]+\) failed with exit code 3$' "$T/a.out"
assert_grep 'rank 1 step 3: wrong all-reduce result at element 32768: ' "$T/a.out"
wait_for_ranks 120 "$T/a.out" ' step 2 done$' 0 2 3
assert_hung 10 "$T/a.out"
assert_no_grep ' step 3 done' "$T/a.out"
assert_no_grep 'trainer: rank [023] ' "$T/a.out"
assert_eq "$(rank_count)" 3 "ranks alive"
trainer_kill

note "1 chunk: everybody completes with corrupt data"
trainer_run 120 "$T/b.out" --nranks 4 --steps 6 --count 10 --bcast-every 0 --fault count:rank=1:step=3
assert_eq "$TRAINER_STATUS" 3 "exit status"
for r in 0 1 2 3; do
	assert_grep "rank $r step 3: wrong all-reduce result at element 5: " "$T/b.out"
	assert_grep "trainer: rank $r \\(pid [0-9]+\\) failed with exit code 3\$" "$T/b.out"
done
assert_grep 'trainer: 4 of 4 ranks failed$' "$T/b.out"
