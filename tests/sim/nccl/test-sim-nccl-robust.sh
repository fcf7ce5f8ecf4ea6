#!/bin/sh
# A rank killed with SIGKILL: the survivors' collective with it hangs, their
# work on another communicator still completes, and ncclCommAbort still ends
# the hang. The dead job's files do not break a new job with the same id.
# Null mode (NCCLSIM_NULL=1): a rank alone "inits" an 4-rank comm, every
# call succeeds at once, buffers and NCCLSIM_DIR stay untouched.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/sim/nccl/sim_nccl_test.sh"
run_ok killed-3 60 "$SCEN" killed 3 21
assert_eq "$(grep -c 'survived a dead peer' "$T/killed-3.out")" 2 "survivors"
[ "$(comm_files)" -ge 1 ] || fail "the killed job should have left its world file"
run_ok reuse-3 60 "$SCEN" reuse 3 21
assert_eq "$(comm_files)" 0 "stale files left after a new job with the same id"

rm -rf "$NCCLSIM_DIR"; mkdir -p "$NCCLSIM_DIR"
NCCLSIM_NULL=1 run_ok null-4 30 "$SCEN" null 4
assert_eq "$(ls -A "$NCCLSIM_DIR" | wc -l)" 0 "files made in null mode"

# A hung job costs no CPU: 4 ranks stalled in a collective (stream workers
# waiting for their peers, main threads in cuStreamSynchronize) use less
# than a tenth of one core over 2 seconds (spinning would use both cores).
rm -rf "$NCCLSIM_DIR"; mkdir -p "$NCCLSIM_DIR"
note "hung job CPU use"
NCCLSIM_FAULT=stall:seq=1 nw_spawn "$SCEN" hang 4 > "$T/hang.out" 2>&1
hang_pgid=$NW_PID
all_hanging() { [ "$(grep -c hanging "$T/hang.out")" -eq 4 ]; }
end_hang() { kill -KILL "-$hang_pgid" 2>/dev/null; }  # dash: no "--" before a negative pid
nw_until 60 all_hanging || { end_hang; fail "the ranks did not reach the hang: $(cat "$T/hang.out")"; }
ticks() { for p in $(pgrep -g "$hang_pgid"); do awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null; done | awk '{ s += $1 } END { print s + 0 }'; }
t0=$(ticks); sleep 2; t1=$(ticks)
used=$((t1 - t0))
echo "CPU ticks used by the hung job in 2 s: $used"
end_hang
[ "$used" -lt 20 ] || fail "a hung job uses CPU ($used ticks in 2 s): something spins"
