#!/bin/sh
# Every collective x datatype x reduction (PreMulSum host and device scalar
# included) computes the exact result with 2, 4 and 8 ranks in separate
# processes, at a small count and at one spanning many staging chunks; the
# communicator files are gone afterwards.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
for n in 2 4 8; do
	run_ok "colls-$n" 240 "$COLLS" "$n"
done
assert_eq "$(comm_files)" 0 "communicator files left after clean runs"
