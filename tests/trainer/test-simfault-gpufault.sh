#!/bin/sh
# NCCLSIM_FAULT=gpufault:rank=1:seq=3: rank 1's collective #3 (step 2's
# all-reduce with --bcast-every 0) fails on the "GPU". The trainer on rank 1
# reports CUDA_ERROR_ILLEGAL_ADDRESS from cuStreamSynchronize (blocking) or
# from its cuStreamQuery / async-error loop (non-blocking) and exits 5; the
# launcher names rank 1.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

export NCCLSIM_FAULT=gpufault:rank=1:seq=3

note "blocking communicators"
trainer_start "$T/a.out" --nranks 4 --steps 6 --count 10 --bcast-every 0 --verbose
wait_for_line 120 'trainer: rank 1 \(pid [0-9]+\) failed with exit code 5$' "$T/a.out"
cat "$T/a.out"
assert_grep 'rank 1 step 2: cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS' "$T/a.out"
assert_no_grep 'rank 1 step 2 done' "$T/a.out"
assert_no_grep 'trainer: rank [023] ' "$T/a.out"
trainer_kill

note "non-blocking communicators"
trainer_start "$T/b.out" --nranks 2 --steps 6 --count 10 --bcast-every 0 --verbose --nonblocking
wait_for_line 120 'trainer: rank 1 \(pid [0-9]+\) failed with exit code [45]$' "$T/b.out"
cat "$T/b.out"
assert_grep 'rank 1 step 2: (cuStreamQuery failed: CUDA_ERROR_ILLEGAL_ADDRESS|async error on the world communicator: unhandled cuda error|ncclAllReduce failed asynchronously: unhandled cuda error)' "$T/b.out"
assert_no_grep 'trainer: rank 0 ' "$T/b.out"
trainer_kill
