#!/bin/sh
# Python stacks taken 2000 times in a row while Python threads start, run
# 15 calls deep and exit (tests/python/py_churn.c, an embedded CPython
# 3.11): the default method (the walk of the thread states, every read
# through process_vm_readv) never crashes the process and sees Python
# threads, every one tied to its native thread in the end (a torn read:
# a state with frames and no tie, two states on one tid, a new 3.11 thread
# still carrying its starter's tid, is read again; the last capture's note
# has no "not tied"). The interpreter's own dumper (_Py_DumpTracebackThreads,
# NCCLWATCH_PY_METHOD=dump) was seen to crash this very program inside
# CPython, which is why it is not the default: not asserted here (a test
# must not depend on a crash).
# Thread names (threading.Thread.name) under the same churn, next to 100
# idle threads, every thread renamed at run time to "tid-<its native id>":
# never a wrong name (another thread's, a stale one), and captures name all
# 100 idle threads by their new names. The capture time is printed as a
# figure (not asserted).
. "$NW_ROOT/tests/lib.sh"
churn="$NW_BUILD/tests/progs/py-churn"
[ -x "$churn" ] || skip "py-churn not built (needs Debian's libpython3.11)"
unset NCCLWATCH_PY_METHOD
nw_bounded 300 "$churn" 2000 > "$T/out" 2>&1
rc=$?
cat "$T/out"
[ $rc = 0 ] || fail "py-churn ended with status $rc"
assert_grep '^names: named=[1-9][0-9]* wrong=0 full=[1-9][0-9]*$' "$T/out"
assert_grep '^capture_ns: mean=[0-9]+ max=[0-9]+$' "$T/out"
assert_grep '^captures=2000 threads_seen=[1-9][0-9]* frames_seen=[1-9][0-9]* note=CPython 3\.11 via its thread states$' "$T/out"
echo ok
