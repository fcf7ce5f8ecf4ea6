#!/bin/sh
# The same probe binary (tests/realnccl/nccl_probe.c) on the real NCCL of
# the CUDA toolkit and on the simulation: both say version 22809 and give a
# unique id; the real one fails ncclCommInitRank with ncclUnhandledCudaError
# (no GPU here), the simulated one succeeds. So the simulation stands in for
# the real library under an unchanged program.
. "$NW_ROOT/tests/lib.sh"
probe="$NW_BUILD/tests/realnccl/nccl-probe"
[ -x "$probe" ] || fail "$probe not built"

note "the simulation ($NW_SIM)"
( nw_use_sim; "$probe" ) > "$T/sim.out" 2>&1 || { cat "$T/sim.out"; fail "probe failed on the simulation"; }
cat "$T/sim.out"
assert_grep '^version 22809$' "$T/sim.out"
assert_grep '^uniqueid 0 ' "$T/sim.out"
assert_grep '^init 0 ' "$T/sim.out"
assert_grep '^destroy 0 ' "$T/sim.out"

[ -e "$NW_REAL_NCCL/libnccl.so.2" ] || skip "no real NCCL at $NW_REAL_NCCL/libnccl.so.2 (the simulation part passed)"
note "the real NCCL ($NW_REAL_NCCL/libnccl.so.2)"
# Leaks inside the real library on its failed init are not ours to report.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
LD_LIBRARY_PATH="$NW_REAL_NCCL" "$probe" > "$T/real.out" 2>&1 || { cat "$T/real.out"; fail "probe failed on the real NCCL"; }
cat "$T/real.out"
# The probe really loaded the toolkit's library, not the simulation.
LD_LIBRARY_PATH="$NW_REAL_NCCL" ldd "$probe" | grep -F "libnccl.so.2 => $NW_REAL_NCCL/libnccl.so.2" \
	|| fail "the probe did not resolve libnccl.so.2 to $NW_REAL_NCCL"
assert_grep '^version 22809$' "$T/real.out"
assert_grep '^uniqueid 0 ' "$T/real.out"
assert_grep '^init 1 unhandled cuda error' "$T/real.out"
assert_no_grep '^destroy ' "$T/real.out"
echo "real and simulated NCCL agree on version and unique id; init differs only by the missing GPU"
