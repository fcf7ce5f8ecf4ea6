#!/bin/sh
# A slot reused while the watchdog updates it (issue 16, item 2). With a
# 16-record ring and the test build's delay after every ring lookup
# (NCCLWATCH_TEST_RING_DELAY_US, tests/interpose/part.mk), the watchdog,
# slowed down, works at the ring's edge: the op it looked up is overwritten
# while it sleeps. Before the fix, the old op's COMPLETED landed in the new
# record (and the comm's coll_completed moved with the new record's
# number): a waiting rank's stuck op read COMPLETED, and the hang HEALTHY
# when every waiting rank was hit. Now an update holds the record
# by its ticket, so it lands nowhere else. The hang: 8 ranks, rank 1 skips
# step STEP's all-reduce (#STEP+1), after STEP all-reduces that wrap the
# ring many times; checked through `ncclwatch diagnose` and `show`, ROUNDS
# times. The shipped library has no trace of the hook.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1

: "${NW_RACE_ROUNDS:=4}" "${NW_RACE_STEP:=150}" "${NW_RACE_DELAY_US:=2000}"
HOOKED="$NW_BUILD/tests/hooks/lib/libncclwatch.so"
[ -f "$HOOKED" ] || fail "$HOOKED not built"

note "the shipped library has no trace of the test hook"
if grep -q NCCLWATCH_TEST_RING_DELAY "$NW_LIB"; then fail "$NW_LIB names the hook's variable"; fi
if nm "$NW_LIB" | grep -q nw_test_; then fail "$NW_LIB has the hook's functions"; fi
grep -q NCCLWATCH_TEST_RING_DELAY "$HOOKED" || fail "$HOOKED has no hook: the check above proves nothing"

# settled OUT: each of the 7 waiting ranks either reported the stuck op
# (a finding in OUT) or shows it COMPLETED (the race hit it: it never will).
settled() {
	_seen=$(grep -c 'ncclwatch: stall: ' "$1")
	for _f in "$NCCLWATCH_DIR"/race/*.seg; do
		"$NW_CLI" show "$_f" 2>/dev/null | grep -Eq "^  op .* AllReduce .* seq=$seq .* state=COMPLETED " &&
			_seen=$((_seen + 1))
	done
	[ "$_seen" -ge 7 ]
}

NW_LIB=$HOOKED
# Each step takes about 1.4 ms (rank 0's ops sleep 1 ms in the
# simulation), less than the watchdog's 2 ms delay: at the ring's edge
# the slot it looked up is reused while it sleeps.
export NCCLWATCH_RING=16 NCCLWATCH_POLL_MS=10 NCCLWATCH_TEST_RING_DELAY_US=$NW_RACE_DELAY_US
export NCCLSIM_FAULT=slow:rank=0:ms=1
step=$NW_RACE_STEP
seq=$((step + 1))
round=1
while [ $round -le "$NW_RACE_ROUNDS" ]; do
	note "round $round: rank 1 skips all-reduce #$seq"
	export NCCLWATCH_DIR="$T/shm$round" NCCLSIM_DIR="$T/sim$round"
	mkdir -p "$NCCLSIM_DIR"
	wd_start "$T/out$round" race --nranks 8 --steps $((step + 4)) --count 16 --bcast-every 0 \
		--fault skip:rank=1:step=$step
	wait_for_count $WD_WAIT 1 "rank 1 step $step: idling until killed\$" "$T/out$round"
	# The seven waiting ranks report the stuck op once its age passes the
	# timeout; a corrupted record never is: wait until each of them either
	# reported it or shows it COMPLETED, then diagnose.
	nw_until $WD_WAIT settled "$T/out$round" ||
		echo "only $(grep -c 'ncclwatch: stall: ' "$T/out$round") stall findings"
	cli "$T/diag$round" diagnose "$NCCLWATCH_DIR"
	sed 's/^/    /' "$T/diag$round"
	sed -n 2p "$T/diag$round" | grep -q '^MISSING_RANK: ' ||
		fail "round $round: the verdict is $(sed -n 2p "$T/diag$round" | cut -d: -f1), not MISSING_RANK"
	awk 'NR > 2 && /^[^ ]/ { exit } NR > 2' "$T/diag$round" > "$T/first$round"
	assert_grep "^  op: AllReduce #$seq on comm [0-9a-f]{16} \\(8 ranks\\)\$" "$T/first$round"
	assert_grep '^  culprits: 1$' "$T/first$round"
	assert_grep '^  waiting: 0,2-7$' "$T/first$round"
	assert_eq "$CLI_STATUS" 1 "diagnose's exit status"
	for f in "$NCCLWATCH_DIR"/race/*.seg; do
		"$NW_CLI" show "$f" > "$T/show" 2>&1 || fail "show $f"
		if grep -Eq "^  op .* AllReduce .* seq=$seq .* state=COMPLETED " "$T/show"; then
			grep -E "seq=$seq " "$T/show" >&2
			fail "round $round: all-reduce #$seq shown COMPLETED in $f"
		fi
		if grep -Eq "^  comm .* coll_completed=$seq " "$T/show"; then
			grep -E '^  comm ' "$T/show" >&2
			fail "round $round: coll_completed=$seq in $f"
		fi
	done
	trainer_kill
	round=$((round + 1))
done
echo "ok: $NW_RACE_ROUNDS rounds, MISSING_RANK culprit 1 each time"
