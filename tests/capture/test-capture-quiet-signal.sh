#!/bin/sh
# The old way does the damage the quiet tests look for (so they can fail):
# with NCCLWATCH_STACK_SIGNAL=1 the watchdog signals every thread, and
# capture-quiet reports calls that returned early (EINTR, short sleeps),
# the threads that wait for signals receive ours, and the signal left
# pending in its exec thread (every signal blocked) kills the program
# after its execve. (Without --no-small-stack the thread with 6 KB of
# stack left takes the handler and the whole process dies at once.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/capture/capture-lib.sh"
export NCCLWATCH_JOB=quiet
QUIET_ARGS="--nccl --no-small-stack" quiet_start LD_PRELOAD="$(nw_preload)" NCCLWATCH_STACK_SIGNAL=1

"$NW_CLI" dump --wait 5 "$NCCLWATCH_DIR" | grep -q ': 1 of 1 process answered' || fail "no dump"
quiet_finish
assert_grep '^problem: (nanosleep|clock_nanosleep|usleep|sleep|poll|select|epoll_wait): ' "$T/quiet.out"
assert_grep '^problem: (sigwaitinfo|signalfd): received|^problem: signalfd: read' "$T/quiet.out"
assert_no_grep '^after-exec ok pending=0$' "$T/quiet.out"
[ "$QUIET_STATUS" != 0 ] || fail "capture-quiet exited 0 after the signal capture"
