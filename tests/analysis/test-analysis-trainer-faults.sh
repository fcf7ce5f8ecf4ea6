#!/bin/sh
# More faults of the trainer and the simulation, 4 ranks each, analyzed
# live (once the verdict appears), by the watchdog itself (its report.txt
# and stderr name the same verdict and culprits) and after the kill:
#   --fault order:rank=1:step=3   collective #4 is a Broadcast on rank 1 and
#                                 an AllReduce elsewhere: MISMATCH, culprit 1
#   --fault p2p:rank=1:step=3     rank 1 sends to rank 3 instead of 2:
#                                 P2P_UNMATCHED (Recv #4 on rank 2 from 1,
#                                 culprit 1, its misdirected send as
#                                 evidence); the next all-reduce, which
#                                 ranks 1-2 never call (stuck in the ring,
#                                 rank 2 waiting for rank 1), is its
#                                 consequence: one evidence line, never a
#                                 verdict blaming rank 2, which only waits
#   NCCLSIM_FAULT=gpufault:rank=1:seq=3   GPU_FAULT on AllReduce #3, culprit
#                                 1 (its earlier ops FAILED too, by the
#                                 sticky error: the peers completed them)
#   --fault noinit:rank=3         rank 3 never calls NCCL (no file):
#                                 INIT_STALL, ranks 0-2 waiting, 3 unknown
#   --fault crash:rank=2:step=3   rank 2 is SIGKILLed: MISSING_RANK #4,
#                                 culprit 2, "process gone"
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
export NCCLWATCH_KEEP=1

# case NAME PATTERN TRAINER-ARGS...: start the job NAME, wait for a verdict
# line matching PATTERN on the live files, then kill it and expect the same
# line from the files left.
case_() {
	_name=$1 _pat=$2; shift 2
	note "$_name"
	wd_start "$T/$_name.out" "$_name" "$@"
	_live() { analyze "$T/$_name.live" "$NCCLWATCH_DIR/$_name" && grep -Eq "$_pat" "$T/$_name.live"; }
	nw_until $WD_WAIT _live || { cat "$T/$_name.live" "$T/$_name.out" >&2; fail "$_name: no /$_pat/"; }
	# The files left carry the last heartbeat (up to a poll old): give
	# the ops that just passed the timeout a second more before the kill.
	sleep 1
	nw_until $WD_WAIT _live || { cat "$T/$_name.live" >&2; fail "$_name: /$_pat/ went away"; }
	grep -Ev '^stack ' "$T/$_name.live" | sed 's/^/    /'
	_line=$(grep -E "$_pat" "$T/$_name.live")
	# The watchdog printed the same verdict by itself (report.txt beside
	# the dumps holds what it printed last).
	_kind=$(echo "$_line" | cut -d' ' -f2)
	_culprits=$(verdict_field "$_line" culprits)
	_wd() { [ -f "$NCCLWATCH_DIR/$_name/report.txt" ] && grep -q "^$_kind: " "$NCCLWATCH_DIR/$_name/report.txt" \
		&& { [ "$_culprits" = - ] || grep -qx "  culprits: $_culprits" "$NCCLWATCH_DIR/$_name/report.txt"; }; }
	nw_until $WD_WAIT _wd || { cat "$NCCLWATCH_DIR/$_name/report.txt" "$T/$_name.out" >&2; fail "$_name: the watchdog did not print $_kind, culprits $_culprits"; }
	assert_grep "ncclwatch: $_kind: " "$T/$_name.out"
	trainer_kill
	analyze "$T/$_name.dead" "$NCCLWATCH_DIR/$_name"
	grep -qxF -- "$_line" "$T/$_name.dead" || { cat "$T/$_name.dead" >&2; fail "$_name: not the same after the kill"; }
}

case_ order '^verdict MISMATCH comm=[0-9a-f]{16} op=AllReduce seq=4 culprits=1 waiting=0,2-3 unknown=-$' \
	--nranks 4 --steps 6 --count 100 --bcast-every 0 --fault order:rank=1:step=3
assert_grep '^summary rank 1 called Broadcast \(root 0\) as #4 on comm [0-9a-f]{16} \(4 ranks\) where ranks 0,2-3 called AllReduce; they wait in it$' "$T/order.live"

case_ p2p '^verdict P2P_UNMATCHED comm=[0-9a-f]{16} op=Recv seq=4 culprits=1 waiting=0,2-3 unknown=-$' \
	--nranks 4 --steps 7 --count 50 --bcast-every 0 --fault p2p:rank=1:step=3
# rank 1's send to rank 3 completes eagerly (as on real NCCL) and rank 1
# goes on to step 4: only rank 2 never called AllReduce #5, and rank 2's
# Recv #4 is matched by count only by rank 1's step-4 send behind it
assert_grep '^evidence consequence: MISSING_RANK: rank 2 never called AllReduce #5 on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it$' "$T/p2p.live"
assert_eq "$(grep -c '^verdict ' "$T/p2p.live")" 1 "p2p: verdicts"
assert_grep "^summary rank 2's Recv #4 from rank 1 on comm [0-9a-f]{16} is pending for .*, matched only by a send rank 1 posted later behind its own stuck work; rank 1 sent to the wrong peer: its send to rank 3 completed \(eager, into rank 3's buffer\) and rank 3 never received it$" "$T/p2p.live"

NCCLSIM_FAULT=gpufault:rank=1:seq=3 case_ gpufault \
	'^verdict GPU_FAULT comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=1 waiting=0,2-3 unknown=-$' \
	--nranks 4 --steps 6 --count 10 --bcast-every 0
assert_grep '^evidence rank 1 on .*cuda_error 700 CUDA_ERROR_ILLEGAL_ADDRESS.*; 2 earlier ops marked FAILED too' "$T/gpufault.live"

case_ noinit '^verdict INIT_STALL comm=[0-9a-f]{16} op=CommInit seq=0 culprits=- waiting=0-2 unknown=3$' \
	--nranks 4 --steps 5 --fault noinit:rank=3
assert_grep '^job noinit procs=3 world=4 missing=3 ' "$T/noinit.live"

case_ crash '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=4 culprits=2 waiting=0-1,3 unknown=-$' \
	--nranks 4 --steps 8 --count 10 --bcast-every 0 --fault crash:rank=2:step=3
assert_grep '^evidence rank 2: never called it .*; process gone' "$T/crash.live"
wd_check_outputs
