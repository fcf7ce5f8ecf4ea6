#!/bin/sh
# `status --watch` and `diagnose --watch` on a hung job of real processes
# (NCCLSIM_FAULT=stall:seq=6 under the preload), the way a user meets them:
#   - into a file: frames appended, each after a line
#     "# ---- ncclwatch CMD --watch: TIME ----", no terminal escapes, and
#     SIGINT (status) or SIGTERM (diagnose) ends it with status 0;
#   - on a terminal (a pseudo-terminal from `script`): each frame redrawn
#     in place (cursor home, lines cleared, the rest of the screen
#     cleared), under a title line, no separator lines; SIGINT ends it
#     with status 0.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

NCCLSIM_FAULT=stall:seq=6 wd_start "$T/hang.out" hang --nranks 4 --steps 8 --bcast-every 3
wait_for_count $WD_WAIT 4 'ncclwatch: stall: ' "$T/hang.out"
ESC=$(printf '\033')
SEP='^# ---- ncclwatch (status|diagnose) --watch: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z ----$'

# watch_until FILE N PATTERN: FILE has N lines matching PATTERN.
frames() { [ "$(grep -Ec -- "$2" "$1")" -ge "$3" ]; }

note "status --watch 1 into a file, ended by SIGINT"
nw_spawn "$NW_CLI" status --watch 1 > "$T/status.watch" 2> "$T/status.watch.err"
W=$NW_PID
nw_until $WD_WAIT frames "$T/status.watch" "$SEP" 3 || { cat "$T/status.watch" "$T/status.watch.err" >&2; fail "fewer than 3 frames"; }
kill -INT "$W"
nw_wait "$W" 30
assert_eq $? 0 "status --watch's exit status after SIGINT"
cat "$T/status.watch" | head -n 12
[ ! -s "$T/status.watch.err" ] || { cat "$T/status.watch.err" >&2; fail "status --watch wrote to stderr"; }
assert_no_grep "$ESC" "$T/status.watch"
head -n 1 "$T/status.watch" | grep -Eq "$SEP" || fail "the first line is not a frame's separator"
# every separator is followed by the summary line, then the column line
nsep=$(grep -Ec "$SEP" "$T/status.watch")
assert_eq "$(grep -A1 -E "$SEP" "$T/status.watch" | grep -c '^# 1 job: 0 live, 1 hung, 0 stale$')" "$nsep" "frames with the summary line"
assert_eq "$(grep -c '^# job hang: 4 processes, world size 4, ranks missing: none; hung ' "$T/status.watch")" "$nsep" "frames with the hung job"

note "status --watch=1 --json: one document per frame"
nw_spawn "$NW_CLI" status --watch=1 --json > "$T/json.watch" 2>&1
W=$NW_PID
nw_until $WD_WAIT frames "$T/json.watch" "$SEP" 2 || { cat "$T/json.watch" >&2; fail "fewer than 2 frames"; }
kill -TERM "$W"
nw_wait "$W" 30
assert_eq $? 0 "status --watch --json's exit status after SIGTERM"
grep -Ev "$SEP" "$T/json.watch" | python3 -c '
import json, sys
docs = [json.loads(l) for l in sys.stdin if l.strip()]
assert len(docs) >= 2, len(docs)
for d in docs:
    assert d["schema"] == "ncclwatch.status" and d["summary"]["hung"] == 1, d["summary"]
print("%d documents" % len(docs))' || fail "status --watch --json frames"

note "diagnose --watch 1 into a file, ended by SIGTERM"
nw_spawn "$NW_CLI" diagnose --watch 1 > "$T/diag.watch" 2> "$T/diag.watch.err"
W=$NW_PID
nw_until $WD_WAIT frames "$T/diag.watch" "$SEP" 2 || { cat "$T/diag.watch" "$T/diag.watch.err" >&2; fail "fewer than 2 frames"; }
kill -TERM "$W"
nw_wait "$W" 30
assert_eq $? 0 "diagnose --watch's exit status after SIGTERM (a single diagnose exits 1 here)"
nsep=$(grep -Ec "$SEP" "$T/diag.watch")
assert_eq "$(grep -c '^TRANSPORT_STALL: ' "$T/diag.watch")" "$nsep" "frames with the verdict"
assert_no_grep "$ESC" "$T/diag.watch"
usage_error '--watch and --trace do not go together' diagnose --watch --trace "$T/t.json"
usage_error '--watch wants a number of seconds' status --watch=0
usage_error '--watch wants a number of seconds' diagnose --watch=x

note "a file that stays unreadable: said once on stderr, not once a frame"
"$NW_BUILD/tests/progs/nwgen" --scenario healthy --ranks 2 --out "$T/gen" > /dev/null || fail "nwgen healthy"
echo garbage > "$T/gen/gen-healthy/bad.seg"
nw_spawn "$NW_CLI" status --watch 0.2 "$T/gen" > "$T/bad.watch" 2> "$T/bad.watch.err"
W=$NW_PID
nw_until $WD_WAIT frames "$T/bad.watch" "$SEP" 4 || { cat "$T/bad.watch" "$T/bad.watch.err" >&2; fail "fewer than 4 frames"; }
kill -INT "$W"
nw_wait "$W" 30
assert_eq "$(grep -c "^ncclwatch status: unreadable: $T/gen/gen-healthy/bad.seg: not an ncclwatch segment (bad magic)$" "$T/bad.watch.err")" 1 "stderr lines for the unreadable file over $(grep -Ec "$SEP" "$T/bad.watch") frames"
assert_eq "$(grep -c "bad.seg" "$T/bad.watch")" "$(grep -Ec "$SEP" "$T/bad.watch")" "frames that list the unreadable file"

note "status --watch 1 on a terminal (script), ended by SIGINT"
command -v script >/dev/null || skip "no script (Debian: bsdutils) for the terminal part"
nw_spawn script -qefc "exec '$NW_CLI' status --watch 1" /dev/null < /dev/null > "$T/tty.out" 2>&1
S=$NW_PID
nw_until $WD_WAIT frames "$T/tty.out" 'ncclwatch status --watch, every 1s \(Ctrl-C ends it\): ' 3 \
	|| { cat -v "$T/tty.out" >&2; fail "fewer than 3 frames on the terminal"; }
C=$(ps -o pid= --ppid "$S" | tr -d ' ')
[ -n "$C" ] || fail "no child of script"
kill -INT "$C"
nw_wait "$S" 30
assert_eq $? 0 "status --watch's exit status on a terminal after SIGINT (through script -e)"
cat -v "$T/tty.out" | head -n 8
python3 - "$T/tty.out" <<'EOF' || fail "in-place redraw"
import re, sys
out = open(sys.argv[1], "rb").read().decode()
frames = out.split("\033[H")[1:]
assert len(frames) >= 3, "%d frames start at the cursor home" % len(frames)
for f in frames[:-1]:
    lines = f.split("\r\n")
    assert re.match(r"ncclwatch status --watch, every 1s \(Ctrl-C ends it\): \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\033\[K$", lines[0]), repr(lines[0])
    assert lines[1] == "# 1 job: 0 live, 1 hung, 0 stale\033[K", repr(lines[1])
    assert all(l.endswith("\033[K") for l in lines[:-1] if l), "a line not cleared to its end"
    assert lines[-1] == "\033[J", "the frame does not clear the rest of the screen: %r" % lines[-1]
assert "# ---- " not in out, "a separator line on a terminal"
print("%d frames redrawn in place" % len(frames))
EOF
wd_check_outputs
