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

# Every attach takes all 19 stacks; whether it catches the spinner running
# (and stops it) depends on the scheduler (a loaded machine may have it
# preempted at that instant), so the ptrace path is asserted over the 20.
stopping=0
for i in $(seq 20); do
	"$NW_CLI" attach --no-verdict -o "$T/snap" "$QUIET_PID" > "$T/attach.$i" 2>&1 ||
		{ cat "$T/attach.$i"; fail "attach $i failed"; }
	assert_grep "^attach: pid $QUIET_PID rank - \\(capture-quiet\\): 19 threads, 19 stacks \\([0-9]+ stopped, " "$T/attach.$i"
	grep -Eq "19 stacks \\([1-9][0-9]* stopped, " "$T/attach.$i" && stopping=$((stopping + 1))
	cat "$T/attach.$i"
done
note "$stopping of 20 attaches stopped the spinner with ptrace"
[ "$stopping" -ge 1 ] || fail "no attach stopped the running spinner: the ptrace path was not taken"
[ -f "$T/snap/$(hostname).$QUIET_PID.rank-.snap.seg" ] || fail "no snapshot file"
quiet_finish
assert_eq "$QUIET_STATUS" 0 "capture-quiet's exit status after its execve"
assert_no_grep '^problem' "$T/quiet.out"
assert_grep '^calls=[0-9]+ problems=0$' "$T/quiet.out"
assert_grep '^after-exec ok pending=0$' "$T/quiet.out"
