#!/bin/sh
# Transfers with a live peer are left whole by attach (issue 25): capture-quiet
# --live copies 8 MiB at a time through a pipe and a socket to peers that
# drain 32 KiB every 100 us, receives 8 MiB with MSG_WAITALL from a peer
# that sends 16 KiB every 100 us, reads /dev/zero 64 MiB at a time (inside
# the kernel, never blocked) and spins in user code, while `ncclwatch
# attach` takes its stacks 20 times. A thread copying inside its call shows
# "running" in /proc/PID/task/TID/syscall like one running user code: the
# capture must not stop it (a transfer already under way would return
# short): it is read once it is seen blocked, stopped only once it has run
# user code alone, else left running without a stack, the snapshot's note
# saying why. No call returns short or with EINTR; the /dev/zero reader,
# which never blocks and never runs user code for long, has no stack in any
# snapshot, and the note gives the reason.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
QUIET_ARGS=--live quiet_start

for i in $(seq 20); do
	"$NW_CLI" attach --no-verdict --no-python -o "$T/snap" "$QUIET_PID" > "$T/attach.$i" 2>&1 ||
		{ cat "$T/attach.$i"; fail "attach $i failed"; }
	assert_grep "^attach: pid $QUIET_PID rank - \\(capture-quiet\\): 9 threads, " "$T/attach.$i"
	"$NW_CLI" show "$T/snap/$(hostname).$QUIET_PID.rank-.snap.seg" > "$T/show.$i" || fail "show $i"
	cat "$T/attach.$i"
	assert_grep '^  thread [0-9]+ "q-zero-read" no-reply$' "$T/show.$i"
	assert_grep '^  note native [0-9]+ of 9 threads without a stack \(running.*: not interrupted\)$' "$T/show.$i"
done
stopped=$(grep -Ec '^  thread [0-9]+ "capture-quiet" regs-ptrace' "$T"/show.* | awk -F: '{ n += $2 } END { print n }')
echo "the spinner was stopped (running user code) in $stopped of 20 attaches"
quiet_finish
grep '^short transfers: ' "$T/quiet.out" | sed 's/$/ in 20 attaches/'
assert_grep '^short transfers: 0$' "$T/quiet.out"
assert_no_grep '^problem' "$T/quiet.out"
assert_grep '^calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status"
