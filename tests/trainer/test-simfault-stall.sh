#!/bin/sh
# NCCLSIM_FAULT=stall:seq=4: every rank starts collective #4 (step 3's
# all-reduce with --bcast-every 0) and none completes it: a transport
# deadlock below the application. Every rank finished step 2, none step 3,
# all stay alive.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

export NCCLSIM_FAULT=stall:seq=4
trainer_start "$T/out" --nranks 4 --steps 6 --count 10 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/out" ' step 2 done$' 0 1 2 3
assert_hung 10 "$T/out"
assert_no_grep ' step 3 done' "$T/out"
assert_eq "$(rank_count)" 4 "ranks alive"
trainer_kill
