#!/bin/sh
# NCCLSIM_FAULT=initstall:rank=1: rank 1's ncclCommInitRank never returns.
# Rank 1 never reports its communicator ready, nobody finishes a step, the
# job hangs with every rank alive.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

export NCCLSIM_FAULT=initstall:rank=1
trainer_start "$T/out" --nranks 4 --steps 4 --verbose
wait_for_ranks 120 "$T/out" ': joining the world communicator$' 0 1 2 3
assert_hung 10 "$T/out"
assert_no_grep 'rank 1: world communicator ready' "$T/out"
assert_no_grep ' step [0-9]+ done' "$T/out"
assert_eq "$(rank_count)" 4 "ranks alive"
trainer_kill
