#!/bin/sh
# NCCLSIM_FAULT, each kind doing what tests/sim/README.md promises:
#  stall:seq=2     every rank's collective #2 stays NOT_READY, no async error, abort ends it
#  stall:...:comm= only the communicator whose key starts with the prefix stalls
#  gpufault        the faulted rank gets a sticky CUDA_ERROR_ILLEGAL_ADDRESS and
#                  ncclUnhandledCudaError; its peers hang
#  slow            ops are not done at once but complete with the right result
#  initstall       that rank's init never returns and nobody's init completes
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"

NCCLSIM_FAULT=stall:seq=2 run_ok stall-4 60 "$SCEN" stall 4
assert_eq "$(grep -c 'stalled until abort' "$T/stall-4.out")" 4 "ranks that stalled"

# The key of a fixed id, as NCCLSIM_DEBUG=1 prints it at init.
key=$("$SCEN" key 2 11)
NCCLSIM_DEBUG=1 run_ok debug-key 60 "$SCEN" nostall 2 11
assert_grep "comm $key rank 0/2 .*init" "$T/debug-key.out"
prefix=$(echo "$key" | cut -c1-6)
other=$(echo "$key" | cut -c1-5)$(echo "$key" | cut -c6 | tr '0-9a-f' '123456789abcdef0')
NCCLSIM_FAULT="stall:seq=2:comm=$other" run_ok stall-other-comm 60 "$SCEN" nostall 2 11
NCCLSIM_FAULT="stall:seq=2:comm=$prefix" run_ok stall-this-comm 60 "$SCEN" stall 2 11

NCCLSIM_FAULT=gpufault:rank=1:seq=2 run_ok gpufault-4 60 "$SCEN" gpufault 4
assert_grep 'rank 1: gpufault seen' "$T/gpufault-4.out"
assert_eq "$(grep -c 'hung behind the faulted rank' "$T/gpufault-4.out")" 3 "peers that hung"

NCCLSIM_FAULT=slow:rank=0:ms=1500 run_ok slow-2 60 "$SCEN" slow 2

# initstall: rank 1 is still inside init when the others gave up (the
# program checks it is alive, then kills it).
NCCLSIM_FAULT=initstall:rank=1 run_ok initstall-3 60 "$SCEN" initstall 3
assert_eq "$(grep -c 'init stayed in progress' "$T/initstall-3.out")" 2 "ranks whose init stayed in progress"
