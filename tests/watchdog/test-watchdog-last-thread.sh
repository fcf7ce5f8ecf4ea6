#!/bin/sh
# The watchdog never keeps a process alive. glibc ends a process when its
# last thread ends, also when main called pthread_exit and another thread
# ends later; the watchdog, a thread too, must leave once the
# application's threads are gone (before, such a process lived for ever,
# and a SIGTERM, blocked by the watchdog, stayed pending for ever).
# nccl-main-exit on the null simulation (which starts no thread of its
# own): main calls pthread_exit, a worker makes NCCL calls and ends later:
# the process ends with status 0, and its clean exit removes the segment,
# the control file and the job directory. A SIGTERM pending when the
# worker ends (the worker blocks it) kills the process. A Python fork
# child ending from a thread (Debian's python3, NCCL through ctypes) ends,
# and its parent's waitpid returns.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1
# TSan's background thread is a pthread of its own that keeps such a
# process alive by itself (without ncclwatch too).
case "$NW_SAN" in *thread*) skip "TSan's background thread keeps the process alive";; esac
PROG="$NW_PROGS/nccl-main-exit"
# Bounds only for a failure: a process that ends, ends at the watchdog's
# next poll.
WAIT=60

note "main calls pthread_exit; the worker's NCCL calls, then it ends: the process exits 0"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=late "$PROG" late 3 > "$T/late.out" 2>&1
nw_wait "$NW_PID" $WAIT
status=$?
cat "$T/late.out"
assert_eq "$status" 0 "status of a process whose last thread ended (124: still alive after ${WAIT}s)"
assert_grep 'worker done calls=3 failures=0' "$T/late.out"
assert_no_grep 'ncclwatch:' "$T/late.out"
[ ! -e "$NCCLWATCH_DIR/late" ] || { find "$NCCLWATCH_DIR/late"; fail "the clean exit left its job directory"; }

note "a SIGTERM pending with only the watchdog left kills the process"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=sigterm "$PROG" sigterm 3 > "$T/sigterm.out" 2>&1
pid=$NW_PID
nw_until $WAIT grep -q 'main gone' "$T/sigterm.out" || { cat "$T/sigterm.out"; fail "no 'main gone' line"; }
kill -TERM "$pid"
nw_wait "$pid" $WAIT
status=$?
cat "$T/sigterm.out"
assert_eq "$status" 143 "status after SIGTERM (143: killed by it; 124: still alive after ${WAIT}s)"

note "a Python fork child ending from a thread exits, and its parent's waitpid returns"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 (Debian: python3)"
# (LeakSanitizer would report CPython's own allocations at exit as leaks)
nw_spawn env LD_PRELOAD="$(nw_preload)" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" NCCLWATCH_JOB=pyfork /usr/bin/python3 "$NW_ROOT/tests/watchdog/py_fork_child.py" \
	> "$T/py.out" 2>&1
nw_wait "$NW_PID" $WAIT
status=$?
cat "$T/py.out"
assert_eq "$status" 0 "status of the Python parent (124: it still waited for its child after ${WAIT}s)"
assert_grep 'child [0-9]+ done' "$T/py.out"
assert_grep 'child [0-9]+ status 0' "$T/py.out"
[ ! -e "$NCCLWATCH_DIR/pyfork" ] || { find "$NCCLWATCH_DIR/pyfork"; fail "the child's clean exit left its job directory"; }
echo ok
