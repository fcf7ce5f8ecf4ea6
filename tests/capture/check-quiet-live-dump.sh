#!/bin/sh
# Transfers with a live peer are left whole by in-process captures (issue
# 25): capture-quiet --live (see check-quiet-live-attach.sh) runs
# under the preload while `ncclwatch dump` makes its watchdog capture every
# thread 20 times. A thread copying inside its call must not get the
# capture signal (a transfer under way would return short): it is read
# once it is seen blocked, signalled only once it has run user code alone,
# else left running without a stack, the dump's note saying why. No call
# returns short or with EINTR; the /dev/zero reader has no stack in any
# dump, and the note gives the reason.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
export NCCLWATCH_JOB=quiet
QUIET_ARGS="--live --nccl" quiet_start NCCL_RAS_ENABLE=0 LD_PRELOAD="$(nw_preload)"

answered=0 tries=0
while [ $answered -lt 20 ] && [ $tries -lt 80 ]; do
	tries=$((tries + 1))
	# One dump answers every request of the next second: ask after it
	# (2 s: the two threads that never block slow the watchdog down).
	if "$NW_CLI" dump --wait 5 "$NCCLWATCH_DIR" | grep -q ': 1 of 1 process answered'; then
		answered=$((answered + 1))
		"$NW_CLI" show "$NCCLWATCH_DIR"/quiet/*.dump.seg > "$T/show.$answered"
		sleep 2
	fi
done
assert_eq "$answered" 20 "dumps answered"
quiet_finish
grep '^short transfers: ' "$T/quiet.out" | sed 's/$/ in 20 dumps/'
assert_grep '^short transfers: 0$' "$T/quiet.out"
assert_no_grep '^problem' "$T/quiet.out"
assert_grep '^calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status"
signalled=0
for i in $(seq 20); do
	assert_grep '^  thread [0-9]+ "q-zero-read" no-reply$' "$T/show.$i"
	assert_grep '^  note native [0-9]+ threads? without a stack \(running.*: not interrupted\)$' "$T/show.$i"
	signalled=$((signalled + $(grep -Ec '^  thread [0-9]+ "capture-quiet" regs-signal' "$T/show.$i")))
done
echo "the spinner was signalled (running user code) in $signalled of 20 dumps"
