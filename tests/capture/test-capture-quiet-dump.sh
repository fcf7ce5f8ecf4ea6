#!/bin/sh
# In-process captures change nothing: capture-quiet runs under the preload
# (a 1-rank communicator starts the watchdog) while `ncclwatch dump` makes
# its watchdog capture every thread 20 times. Every blocking call of issue
# 13's list returns what it would have (no early return, no EINTR, no short
# transfer), no signal reaches the threads that wait for signals, nothing
# is left pending across the execve at the end, the thread with 6 KB of
# stack left survives. The dumps hold every thread, the blocked ones read
# from /proc (regs-syscall, a thread caught between two calls of its loop
# once it blocks again), only the spinner by signal.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
export NCCLWATCH_JOB=quiet
# NCCL_RAS_ENABLE=0: the simulated NCCL, like NCCL, starts a RAS thread at
# the first init; the thread counts below are the program's and the watchdog's.
QUIET_ARGS=--nccl quiet_start NCCL_RAS_ENABLE=0 LD_PRELOAD="$(nw_preload)"

answered=0 tries=0
while [ $answered -lt 20 ] && [ $tries -lt 80 ]; do
	tries=$((tries + 1))
	# One dump answers every request of the next second: ask after it.
	if "$NW_CLI" dump --wait 5 "$NCCLWATCH_DIR" | grep -q ': 1 of 1 process answered'; then
		answered=$((answered + 1))
		"$NW_CLI" show "$NCCLWATCH_DIR"/quiet/*.dump.seg > "$T/show.$answered"
		sleep 1
	fi
done
assert_eq "$answered" 20 "dumps answered"
quiet_finish
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status after its execve"
assert_no_grep '^problem' "$T/quiet.out"
assert_grep '^calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_grep '^after-exec ok pending=0$' "$T/quiet.out"

note "every dump: 20 threads, 19 with a stack read from /proc or (the spinner, once"
note "seen running user code alone) by a signal to it alone"
signalled=0
for i in $(seq 20); do
	s="$T/show.$i"
	assert_grep '^stacks captured .* threads=20 ' "$s"
	sys=$(grep -c '^  thread .* regs-syscall' "$s")
	sig=$(grep -c '^  thread .* regs-signal' "$s")
	assert_eq "$((sys + sig))" 19 "threads read from /proc or signalled in dump $i"
	[ "$sig" -ge 1 ] || fail "dump $i: the spinner was not signalled"
	signalled=$((signalled + sig - 1))
	assert_no_grep '^  thread .*no-reply' "$s"
done
echo "threads signalled between two calls, beyond the spinner: $signalled in 20 captures"
assert_grep 't_sigsuspend\+' "$T/show.20"
assert_grep 'small_stack_loop\+' "$T/show.20"
assert_grep 't_spin\+' "$T/show.20"
