#!/bin/sh
# Python stacks from outside change nothing: `ncclwatch attach` on a Python
# program whose threads sit in nanosleep, poll and epoll_wait (called
# through ctypes, so an EINTR is not retried) runs py-spy dump
# --nonblocking 10 times: no call returns early, and every capture has the
# program's three Python threads and the main one. (py-spy's default,
# which pauses the process, woke 10 of 13 calls when we measured it.)
. "$NW_ROOT/tests/lib.sh"
PYSPY="$NW_ROOT/build/venv/bin/py-spy"
[ -x "$PYSPY" ] || PYSPY=$(command -v py-spy) || skip "no py-spy (make deps installs it)"
export NCCLWATCH_PYSPY="$PYSPY"
nw_spawn python3 "$NW_ROOT/tests/capture/pyquiet.py" "$T/stop" > "$T/py.out" 2>&1
PY_PID=$NW_PID
nw_until 30 grep -q '^ready' "$T/py.out" || fail "pyquiet.py never got ready"
for i in $(seq 10); do
	"$NW_CLI" attach --no-verdict -o "$T/snap" "$PY_PID" > "$T/attach.$i" 2>&1 ||
		{ cat "$T/attach.$i"; fail "attach $i failed"; }
	assert_grep "^attach: pid $PY_PID .*; python: py-spy dump --nonblocking: 4 Python threads -> " "$T/attach.$i"
done
cat "$T/attach.10"
touch "$T/stop"
nw_wait "$PY_PID" 30
cat "$T/py.out"
assert_grep '^calls [0-9]+ early 0$' "$T/py.out"
