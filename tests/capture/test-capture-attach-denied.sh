#!/bin/sh
# Attaching to a process we may not read is one clear line each, the others
# are still read, and the exit status is 2: as user nobody, `ncclwatch
# attach` on nobody's own process (read: a snapshot), nobody's process
# that set PR_SET_DUMPABLE 0, and root's process.
. "$NW_ROOT/tests/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (runs the CLI as nobody)"
command -v runuser >/dev/null || skip "no runuser"
# nobody runs the CLI and writes its snapshots where it can reach (the
# checkout's directory may be private, and $T is ours)
nw_share_build
OUT="$NW_SHARED/out"
mkdir "$OUT" && chown nobody "$OUT"

nw_spawn runuser -u nobody -- sleep 600
MINE=$NW_PID
nw_spawn runuser -u nobody -- python3 -c 'import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); print("undumpable", flush=True); time.sleep(600)' > "$T/undumpable.out"
nw_until 30 grep -q undumpable "$T/undumpable.out" || fail "the undumpable process did not start"
UNDUMP=$NW_PID
nw_spawn sleep 600
ROOTS=$NW_PID
# runuser forks the command: its child is the process to read.
child() { pgrep -P "$1" | head -1; }
nw_until 30 child "$MINE" || fail "no child of runuser"
MINE=$(child "$MINE")
UNDUMP=$(child "$UNDUMP")

runuser -u nobody -- "$NW_CLI" attach --no-verdict -o "$OUT" "$UNDUMP" "$ROOTS" "$MINE" > "$T/stdout" 2> "$T/stderr"
status=$?
cat "$T/stdout" "$T/stderr"
assert_eq "$status" 2 "exit status"
assert_eq "$(grep -c . "$T/stderr")" 2 "lines on stderr"
assert_grep "^ncclwatch attach: pid $UNDUMP \\(python3\\): not permitted to read it " "$T/stderr"
assert_grep "^ncclwatch attach: pid $ROOTS \\(sleep\\): not permitted to read it " "$T/stderr"
assert_grep "^attach: pid $MINE rank - \\(sleep\\): 1 threads, 1 stacks " "$T/stdout"
[ -s "$OUT/$(hostname).$MINE.rank-.snap.seg" ] || fail "no snapshot of nobody's own process"
