#!/bin/sh
# Groups and send/recv: grouped ring and all-to-all exchanges complete with
# the right data (2, 4, 8 ranks); nothing is queued before the outermost
# ncclGroupEnd; ncclGroupSimulateEnd launches nothing; an ungrouped mutual
# blocking send hangs (events stay NOT_READY) until ncclCommAbort, after
# which the stream goes on.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
for n in 2 4 8; do
	run_ok "group-$n" 120 "$SCEN" group "$n"
done
for n in 2 4; do
	run_ok "p2p-deadlock-$n" 60 "$SCEN" p2p-deadlock "$n"
	assert_eq "$(grep -c 'deadlock seen, abort ended it' "$T/p2p-deadlock-$n.out")" "$n" "ranks that saw the deadlock"
done
