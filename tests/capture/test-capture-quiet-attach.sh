#!/bin/sh
# Captures from outside change nothing: capture-quiet runs without the
# preload while `ncclwatch attach PID` takes every thread's stack 20 times
# (blocked threads read from /proc, and so is a thread caught between two
# calls of its loop once it blocks again; the spinner, once seen running
# user code alone, stopped briefly with ptrace). Every blocking call of
# issue 13's list returns what it would have, no signal arrives, nothing is
# pending across its execve.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
quiet_start

for i in $(seq 20); do
	"$NW_CLI" attach --no-verdict -o "$T/snap" "$QUIET_PID" > "$T/attach.$i" 2>&1 ||
		{ cat "$T/attach.$i"; fail "attach $i failed"; }
	assert_grep "^attach: pid $QUIET_PID rank - \\(capture-quiet\\): 19 threads, 19 stacks \\([1-9][0-9]* stopped, " "$T/attach.$i"
	cat "$T/attach.$i"
done
[ -f "$T/snap/$(hostname).$QUIET_PID.rank-.snap.seg" ] || fail "no snapshot file"
quiet_finish
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status after its execve"
assert_no_grep '^problem' "$T/quiet.out"
assert_grep '^calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_grep '^after-exec ok pending=0$' "$T/quiet.out"
