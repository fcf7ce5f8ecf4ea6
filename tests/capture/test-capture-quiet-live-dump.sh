#!/bin/sh
# Transfers with a live peer are left whole by in-process captures (issue
# 25): capture-quiet --live (see test-capture-quiet-live-attach.sh) runs
# under the preload while `ncclwatch dump` makes its watchdog capture every
# thread 10 times, each inside a spell of its busy threads. A thread
# copying inside its call must not get the capture signal (a transfer under
# way would return short): it is read once it is seen blocked, signalled
# only once it has run user code alone, else left running without a stack,
# the dump's note saying why. No call returns short or with EINTR; the
# /dev/zero reader has no stack in any dump, and the note gives the reason.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
export NCCLWATCH_JOB=quiet
live_lock
QUIET_ARGS="--live --nccl" quiet_start NCCL_RAS_ENABLE=0 LD_PRELOAD="$(nw_preload)"

signalled=0
for i in $(seq 10); do
	live_spell_start $i
	# Each request is answered (one within the watchdog's grouping window
	# after its last dump gets its own once the window is over).
	"$NW_CLI" dump --wait 30 "$NCCLWATCH_DIR" > "$T/dump.$i" 2>&1
	live_spell_end $i
	assert_grep ': 1 of 1 process answered' "$T/dump.$i"
	"$NW_CLI" show "$NCCLWATCH_DIR"/quiet/*.dump.seg > "$T/show.$i" || fail "show $i"
	assert_grep '^  thread [0-9]+ "q-zero-read" no-reply$' "$T/show.$i"
	assert_grep '^  note native [0-9]+ threads? without a stack \(running.*: not interrupted\)$' "$T/show.$i"
	signalled=$((signalled + $(grep -Ec '^  thread [0-9]+ "q-spin" regs-signal' "$T/show.$i")))
done
echo "the spinner was signalled (running user code) in $signalled of 10 dumps"
quiet_finish
grep 'short transfers: ' "$T/quiet.out" | sed 's/$/ in 10 dumps/'
assert_grep 'short transfers: 0$' "$T/quiet.out"
assert_no_grep 'problem: ' "$T/quiet.out"
assert_grep 'calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status"
