#!/bin/sh
# A py-spy read that races the running interpreter fails the whole dump
# (py-spy --nonblocking: "Failed to copy PyThreadState"; under CI load one
# attach lost the Python stacks of 2 of 4 ranks this way and showed their
# native frames instead). attach tries such a failure again: here a py-spy
# that fails its first read of each process with that error still gives
# the program's 4 Python threads, on the 2nd try, and one that always fails
# is tried 3 times, then the stacks are native with py-spy's reason.
. "$NW_ROOT/tests/lib.sh"
PYSPY="$NW_ROOT/build/venv/bin/py-spy"
[ -x "$PYSPY" ] || PYSPY=$(command -v py-spy) || skip "no py-spy (make deps installs it)"
# flaky-py-spy: the first call for a pid fails as a racing read does; later
# calls run the real one. Each call is counted in $T/calls.
cat > "$T/flaky-py-spy" <<SCRIPT
#!/bin/sh
echo "\$*" >> "$T/calls"
pid=\$(echo "\$*" | sed 's/.*--pid \([0-9]*\).*/\1/')
if [ ! -e "$T/seen.\$pid" ] || [ -e "$T/always-fail" ]; then
	touch "$T/seen.\$pid"
	echo "Error: Failed to copy PyThreadState" >&2
	exit 1
fi
exec "$PYSPY" "\$@"
SCRIPT
chmod +x "$T/flaky-py-spy"
export NCCLWATCH_PYSPY="$T/flaky-py-spy"
nw_spawn python3 "$NW_ROOT/tests/capture/pyquiet.py" "$T/stop" > "$T/py.out" 2>&1
PY_PID=$NW_PID
nw_until 30 grep -q '^ready' "$T/py.out" || fail "pyquiet.py never got ready"

"$NW_CLI" attach --no-verdict -o "$T/snap" "$PY_PID" > "$T/attach.1" 2>&1 || { cat "$T/attach.1"; fail "attach failed"; }
cat "$T/attach.1"
assert_grep "^attach: pid $PY_PID .*; python: py-spy dump --nonblocking: 4 Python threads \(try 2 of 3\) -> " "$T/attach.1"
assert_eq "$(grep -c -- "--pid $PY_PID" "$T/calls")" 2 "py-spy calls for the first attach"
"$NW_CLI" show "$T/snap" > "$T/show.1" 2>&1 || { cat "$T/show.1"; fail "show of the snapshot failed"; }
assert_grep 'sleeper' "$T/show.1"

touch "$T/always-fail"
: > "$T/calls"
"$NW_CLI" attach --no-verdict -o "$T/snap2" "$PY_PID" > "$T/attach.2" 2>&1 || { cat "$T/attach.2"; fail "attach failed"; }
cat "$T/attach.2"
assert_grep "^attach: pid $PY_PID .*; python: py-spy: Error: Failed to copy PyThreadState \(tried 3 times\) -> " "$T/attach.2"
assert_eq "$(grep -c -- "--pid $PY_PID" "$T/calls")" 3 "py-spy calls when every read fails"
touch "$T/stop"
nw_wait "$PY_PID" 30
