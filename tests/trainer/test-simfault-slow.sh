#!/bin/sh
# NCCLSIM_FAULT=slow:rank=2:ms=100: every op of rank 2 takes 100 ms longer.
# Slow is not broken: the job completes with correct results on every rank.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

export NCCLSIM_FAULT=slow:rank=2:ms=100
trainer_run 120 "$T/out" --nranks 4 --steps 8 --count 30 --bcast-every 3 --pipeline --verbose
assert_eq "$TRAINER_STATUS" 0 "exit status"
assert_grep 'trainer: all 4 ranks ok$' "$T/out"
assert_eq "$(count_lines ' ok steps=8 allreduce=8 broadcast=3 sendrecv=8$' "$T/out")" 4 "ok lines"
