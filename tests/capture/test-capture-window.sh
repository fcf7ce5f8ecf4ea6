#!/bin/sh
# The window, from outside: capture-quiet --window's 8 threads run user
# code for 20 us between 2 ms epoll_wait and nanosleep calls, so attach
# often finds one running (and stops it) and may catch one entering its
# call just as it is interrupted. 30 attaches: no call returns early (a
# nanosleep the interrupt wakes is restarted by the kernel, an epoll_wait's
# EINTR is turned into a restart at the stop), every thread has a stack.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
QUIET_ARGS=--window quiet_start
for i in $(seq 30); do
	"$NW_CLI" attach --no-verdict --no-python -o "$T/snap" "$QUIET_PID" > "$T/attach.$i" 2>&1 ||
		{ cat "$T/attach.$i"; fail "attach $i failed"; }
	assert_grep "^attach: pid $QUIET_PID rank - \\(capture-quiet\\): 9 threads, 9 stacks " "$T/attach.$i"
done
cat "$T"/attach.* | awk '/ woken in the window/ { for (i = 1; i <= NF; i++) { if ($i == "stopped") s += $(i - 1); if ($i == "woken") r += $(i - 2) } }
	END { print "30 attaches: " s " threads stopped while running, " r " calls woken in the window and restarted" }'
touch "$STOP"
nw_wait "$QUIET_PID" 60
cat "$T/quiet.out"
assert_grep '^calls=[0-9]+ problems=0$' "$T/quiet.out"
