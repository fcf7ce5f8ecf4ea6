#!/bin/sh
# When py-spy fails, `ncclwatch attach` says how in one note and keeps the
# native stacks: stand-ins for py-spy (NCCLWATCH_PYSPY) that fail with an
# error line (tried 3 times: a racing read fails so under load), never
# answer (killed after 10 s, not tried again), write more than 32 MB, or
# write something that is not JSON. The timeout and the size note once
# came out empty ("py-spy: failed"): their text was cut to the length of
# py-spy's stderr.
. "$NW_ROOT/tests/lib.sh"
mk() {   # mk NAME BODY: a stand-in py-spy
	printf '#!/bin/sh\n%s\n' "$2" > "$T/$1"
	chmod +x "$T/$1"
}
mk err 'echo "Error: Failed to copy PyThreadState" >&2; echo "second line" >&2; exit 1'
mk slow "echo \$\$ > '$T/slow.pid'; exec sleep 60"
mk big 'exec head -c 40000000 /dev/zero'
mk notjson 'echo "hello"'
nw_spawn python3 "$NW_ROOT/tests/capture/pyquiet.py" "$T/stop" > "$T/py.out" 2>&1
PY_PID=$NW_PID
nw_until 30 grep -q '^ready' "$T/py.out" || fail "pyquiet.py never got ready"
attach() {   # attach NAME: attach with stand-in NAME, output in $T/NAME.out
	NCCLWATCH_PYSPY="$T/$1" "$NW_CLI" attach --no-verdict --no-ras -o "$T/snap-$1" "$PY_PID" > "$T/$1.out" 2>&1 ||
		{ cat "$T/$1.out"; fail "attach with stand-in $1 failed"; }
	cat "$T/$1.out"
}
line="^attach: pid $PY_PID .*: 4 threads, 4 stacks .*; python:"
attach err
assert_grep "$line py-spy: Error: Failed to copy PyThreadState \\(tried 3 times\\) -> " "$T/err.out"
attach slow
assert_grep "$line py-spy: timed out after 10 s -> " "$T/slow.out"
attach big
assert_grep "$line py-spy: wrote more than 32 MB -> " "$T/big.out"
attach notjson
assert_grep "$line py-spy: output is not a JSON list of threads -> " "$T/notjson.out"
# No stand-in is left running, and the program was not disturbed.
SLOW_PID=$(cat "$T/slow.pid") || fail "the slow stand-in never ran"
! kill -0 "$SLOW_PID" 2> /dev/null || fail "the slow stand-in (pid $SLOW_PID) was left running"
kill -0 "$PY_PID" || fail "the Python program died"
touch "$T/stop"
nw_wait "$PY_PID" 30
assert_grep '^calls [0-9]+ early 0$' "$T/py.out"
echo "ok"
