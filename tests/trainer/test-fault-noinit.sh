#!/bin/sh
# --fault noinit: one rank never creates the communicator (it idles), so
# the others hang inside ncclCommInitRank: with blocking communicators
# (rank 3 of 4 missing) and non-blocking ones (rank 0 of 2 missing, after
# publishing the unique id; rank 1 polls ncclCommGetAsyncError forever).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

note "blocking, rank 3 of 4 never joins"
trainer_start "$T/a.out" --nranks 4 --steps 5 --verbose --fault noinit:rank=3
wait_for_line 120 'rank 3: fault noinit: never creating the communicator$' "$T/a.out"
wait_for_ranks 120 "$T/a.out" ': joining the world communicator$' 0 1 2
assert_hung 10 "$T/a.out"
assert_no_grep 'world communicator ready' "$T/a.out"
assert_no_grep ' step [0-9]+ done' "$T/a.out"
assert_eq "$(rank_count)" 4 "ranks alive"
trainer_kill

note "non-blocking, rank 0 of 2 never joins"
trainer_start "$T/b.out" --nranks 2 --steps 5 --nonblocking --verbose --fault noinit:rank=0
wait_for_line 120 'rank 0: fault noinit: never creating the communicator$' "$T/b.out"
wait_for_ranks 120 "$T/b.out" ': joining the world communicator$' 1
assert_hung 10 "$T/b.out"
assert_no_grep 'world communicator ready' "$T/b.out"
assert_eq "$(rank_count)" 2 "ranks alive"
trainer_kill
