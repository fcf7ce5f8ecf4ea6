#!/bin/sh
# Communicator variants: Split (colors, keys, NOCOLOR) with 2, 4, 8 ranks;
# InitRankConfig with blocking=0 (ncclInProgress, then success through
# ncclCommGetAsyncError, also for a collective and Finalize),
# InitRankScalable, Shrink, CuDevice; InitAll and grouped inits of n ranks in
# one process; argument checks, version and error strings.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
for n in 2 4 8; do
	run_ok "split-$n" 120 "$SCEN" split "$n"
done
for n in 2 4; do
	run_ok "initvariants-$n" 120 "$SCEN" initvariants "$n"
done
run_ok initall-4 60 "$SCEN" initall 4
run_ok initall-8 60 "$SCEN" initall 8
run_ok args-2 60 "$SCEN" args 2
assert_eq "$(comm_files)" 0 "communicator files left after clean runs"
