#!/bin/sh
# `ncclwatch gc`: removes the segments and dumps of dead processes of this
# host and the job directories left empty; never a live process's segment
# (the job "live" keeps running, unharmed), never a file of another host,
# never an unreadable file. A segment whose pid now belongs to a process
# started after it was created is dead (pid reuse).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
export NCCLWATCH_TIMEOUT=2
S=$NCCLWATCH_DIR

note "job done: 2 ranks ran to the end, segments kept"
watched_run 120 "$T/done.out" done --nranks 2 --steps 3
assert_eq "$TRAINER_STATUS" 0 "job done"
note "job live: 2 ranks hang (rank 1 skips step 3's all-reduce)"
watched_start "$T/live.out" live --nranks 2 --steps 100 --bcast-every 0 --fault skip:rank=1:step=3
LIVE_PID=$TRAINER_PID
nw_until 60 sh -c "[ \$(find '$S/live' -name '*.seg' | wc -l) -ge 2 ]" || fail "job live has no segments"
live_segs=$(find "$S/live" -name '*.seg' | sort)
note "job reused: a dead segment whose pid a later process has"
mkdir -p "$S/reused"
cp "$(segments "$S/done" | head -n 1)" "$S/reused/seg-copy.seg"
sleep 30 &
SLEEPER=$!
python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(96); f.write(struct.pack("<q", int(sys.argv[2])))' \
	"$S/reused/seg-copy.seg" $SLEEPER
"$NW_CLI" show "$S/reused/seg-copy.seg" | grep -q "^  pid  *$SLEEPER\$" || fail "the pid patch missed (header layout changed?)"
note "job far: a dead segment of another host, and a file that is not a segment"
mkdir -p "$S/far"
cp "$(segments "$S/done" | tail -n 1)" "$S/far/otherhost.1.seg"
python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(144); f.write(b"otherhost\0")' "$S/far/otherhost.1.seg"
"$NW_CLI" show "$S/far/otherhost.1.seg" | grep -q '^  host  *otherhost$' || fail "the host patch missed"
echo garbage > "$S/far/junk.seg"
find "$S" | sort > "$T/before"

note "--dry-run removes nothing"
cli_ok 0 "$T/dry" gc --dry-run "$S"
cat "$T/dry"
find "$S" | sort > "$T/after-dry"
cmp -s "$T/before" "$T/after-dry" || fail "--dry-run changed $S"
assert_grep "^would remove $S/done/.*\.seg$" "$T/dry"
assert_grep "^gc: 3 would be removed, 4 kept \(2 live, 1 other hosts, 1 unreadable\)$" "$T/dry"

cli_ok 0 "$T/gc" gc "$S"
cat "$T/gc"
assert_eq "$(grep -c "^removed $S/done/.*\.seg$" "$T/gc")" 2 "segments of job done removed"
assert_grep "^removed $S/done/control$" "$T/gc"
assert_grep "^removed $S/done/$" "$T/gc"
assert_grep "^removed $S/reused/seg-copy.seg$" "$T/gc"
assert_grep "^removed $S/reused/$" "$T/gc"
assert_grep "^gc: 3 removed, 4 kept \(2 live, 1 other hosts, 1 unreadable\)$" "$T/gc"
[ ! -e "$S/done" ] || fail "$S/done is still there"
[ ! -e "$S/reused" ] || fail "$S/reused is still there"
for f in $live_segs "$S/live/control" "$S/far/otherhost.1.seg" "$S/far/junk.seg"; do
	[ -f "$f" ] || fail "$f was removed"
done
assert_no_grep "$S/(live|far)" "$T/gc"
kill -0 "$LIVE_PID" 2>/dev/null || fail "job live died"

note "after the live job is killed, its segments go too (job far stays: another host's file)"
ranks=$(rank_pids)
trainer_kill
kill "$SLEEPER" 2>/dev/null
for r in $ranks; do   # SIGKILL is delivered asynchronously: until each has exited
	nw_until 20 sh -c "! kill -0 $r || grep -q '^State:.*[ZX]' /proc/$r/status" || fail "rank pid $r still runs"
done
cli_ok 0 "$T/gc2" gc "$S"
cat "$T/gc2"
[ ! -e "$S/live" ] || { find "$S/live" >&2; fail "$S/live is still there"; }
[ -f "$S/far/otherhost.1.seg" ] || fail "another host's file was removed"
assert_no_grep "^removed $S/far" "$T/gc2"

note "an empty directory: nothing to do"
mkdir -p "$T/empty"
cli_ok 0 "$T/gc3" gc "$T/empty"
assert_grep "^gc: 0 removed, 0 kept" "$T/gc3"
