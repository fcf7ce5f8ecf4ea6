#!/bin/sh
# Transfers with a live peer are left whole by attach (issue 25):
# capture-quiet --live copies 8 MiB at a time through a pipe and a socket to
# peers that drain 64 KiB every millisecond and receives 8 MiB with
# MSG_WAITALL from a peer that sends 64 KiB every millisecond, while
# `ncclwatch attach` takes its stacks 10 times, each inside a spell of its
# /dev/zero reader (64 MiB at a time: inside the kernel, never blocked) and
# its spinner (user code). A thread copying inside its call shows "running"
# in /proc/PID/task/TID/syscall like one running user code: the capture
# must not stop it (a transfer already under way would return short): it is
# read once it is seen blocked, stopped only once it has run user code
# alone, else left running without a stack, the snapshot's note saying
# why. No call returns short or with EINTR; the /dev/zero reader has no
# stack in any snapshot, and the note gives the reason. The busy threads
# run at nice 19 and only in spells, and one live test of a build runs at
# a time (live_lock): they never starve the tests next to them.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
live_lock
QUIET_ARGS=--live quiet_start

for i in $(seq 10); do
	live_spell_start $i
	"$NW_CLI" attach --no-verdict --no-python -o "$T/snap" "$QUIET_PID" > "$T/attach.$i" 2>&1
	rc=$?
	live_spell_end $i
	[ $rc = 0 ] || { cat "$T/attach.$i"; fail "attach $i failed"; }
	assert_grep "^attach: pid $QUIET_PID rank - \\(capture-quiet\\): 9 threads, " "$T/attach.$i"
	"$NW_CLI" show "$T/snap/$(hostname).$QUIET_PID.rank-.snap.seg" > "$T/show.$i" || fail "show $i"
	cat "$T/attach.$i"
	assert_grep '^  thread [0-9]+ "q-zero-read" no-reply$' "$T/show.$i"
	assert_grep '^  note native [0-9]+ of 9 threads without a stack \(running.*: not interrupted\)$' "$T/show.$i"
done
stopped=$(grep -Ec '^  thread [0-9]+ "q-spin" regs-ptrace' "$T"/show.* | awk -F: '{ n += $2 } END { print n }')
echo "the spinner was stopped (running user code) in $stopped of 10 attaches"
quiet_finish
grep 'short transfers: ' "$T/quiet.out" | sed 's/$/ in 10 attaches/'
assert_grep 'short transfers: 0$' "$T/quiet.out"
assert_no_grep 'problem: ' "$T/quiet.out"
assert_grep 'calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status"
