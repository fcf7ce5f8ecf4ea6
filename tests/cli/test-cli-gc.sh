#!/bin/sh
# `ncclwatch gc`: removes the segments and dumps of dead processes of this
# host and the job directories left empty; never a live process's segment
# (the job "live" keeps running, unharmed), never a file of another host,
# never an unreadable file. A segment whose pid now belongs to a process
# started after it was created is dead (pid reuse): told exactly by the
# writer's start time in the header (format 1.2), or, in a file without it
# (1.0/1.1, or 0), by comparing clocks.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
# Long enough that the hung job's watchdogs write no dump into its directory
# while the test runs (a dump of a live process is kept, like its segment:
# it would change the counts below whenever the machine is slow).
export NCCLWATCH_TIMEOUT=600
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
# poke FILE OFFSET STRUCT-FORMAT VALUE: overwrite one header field.
poke() {
	python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[2])); f.write(struct.pack(sys.argv[3], int(sys.argv[4])))' "$@"
}
# header_field FILE KEY: a `show` header line's value.
header_field() { "$NW_CLI" show --records 0 --no-stacks "$1" | sed -n "s/^  $2  *//p"; }
poke "$S/reused/seg-copy.seg" 96 '<q' $SLEEPER
"$NW_CLI" show "$S/reused/seg-copy.seg" | grep -q "^  pid  *$SLEEPER\$" || fail "the pid patch missed (header layout changed?)"
# For job paths, below: a segment of a dead process (the rest is built
# after the first gc, which the watchdogs' dumps must not beat).
cp "$(segments "$S/done" | head -n 1)" "$T/done-seg"
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
assert_grep "^gc: 6 would be removed \(3 segments, 1 other file, 2 directories\), 4 kept \(2 live, 1 other hosts, 1 unreadable, 0 other users\)$" "$T/dry"
assert_eq "$(grep -c "^would remove " "$T/dry")" 6 "lines listed by --dry-run"

cli_ok 0 "$T/gc" gc "$S"
cat "$T/gc"
assert_eq "$(grep -c "^removed $S/done/.*\.seg$" "$T/gc")" 2 "segments of job done removed"
assert_grep "^removed $S/done/control$" "$T/gc"
assert_grep "^removed $S/done/$" "$T/gc"
assert_grep "^removed $S/reused/seg-copy.seg$" "$T/gc"
assert_grep "^removed $S/reused/$" "$T/gc"
assert_grep "^gc: 6 removed \(3 segments, 1 other file, 2 directories\), 4 kept \(2 live, 1 other hosts, 1 unreadable, 0 other users\)$" "$T/gc"
[ ! -e "$S/done" ] || fail "$S/done is still there"
[ ! -e "$S/reused" ] || fail "$S/reused is still there"
for f in $live_segs "$S/live/control" "$S/far/otherhost.1.seg" "$S/far/junk.seg"; do
	[ -f "$f" ] || fail "$f was removed"
done
assert_no_grep "$S/(live|far)" "$T/gc"
kill -0 "$LIVE_PID" 2>/dev/null || fail "job live died"

note "job paths: each way a writer is told from a later process: the start time where the header has one, the clocks where not"
done_seg=$T/done-seg
done_ticks=$(header_field "$done_seg" start_ticks)
case $done_ticks in
[1-9]*) ;;
*) fail "the producer wrote no start_ticks ('$done_ticks')" ;;
esac
# the format this tree writes (the offsets poked below are its header's)
fmt=$(awk '/^#define NW_SEG_VERSION_MAJOR/ { M = $3 } /^#define NW_SEG_VERSION_MINOR/ { m = $3 } END { print M "." m }' \
	"$NW_ROOT/include/ncclwatch/segment.h")
assert_eq "$(header_field "$done_seg" format)" "$fmt" "the producer's format"

# Offsets (docs/FORMAT.md): version_major 12, version_minor 14, pid 96, start_monotonic_ns
# 120, proc_start_ticks 3904.
P=$T/paths
mkdir -p "$P/j"
live_seg=$(echo "$live_segs" | head -n 1)
live_ticks=$(header_field "$live_seg" start_ticks)
live_pid=$(header_field "$live_seg" pid)
assert_eq "$live_ticks" "$(cut -d')' -f2 /proc/$live_pid/stat | cut -d' ' -f21)" "start_ticks of a live rank = its /proc/PID/stat field 22"
# 1.2, exact: the pid is a later process's (start times differ): removed.
cp "$done_seg" "$P/j/exact-reused.seg"
poke "$P/j/exact-reused.seg" 96 '<q' $SLEEPER
# 1.2, exact: the writer itself (a copy, so nothing maps it): kept.
cp "$live_seg" "$P/j/exact-live.seg"
# 1.2, exact: the pid runs, but its start is not the header's: another
# process (the clocks alone would call it live): removed.
cp "$live_seg" "$P/j/exact-other.seg"
poke "$P/j/exact-other.seg" 3904 '<Q' $((live_ticks + 1))
# Fallback, proc_start_ticks 0 in a 1.2 file: the writer started before
# the segment was created: kept.
cp "$live_seg" "$P/j/clock-live.seg"
poke "$P/j/clock-live.seg" 3904 '<Q' 0
assert_eq "$(header_field "$P/j/clock-live.seg" start_ticks)" - "start_ticks zeroed"
# Fallback, a 1.1 file: the sleeper started after the segment was
# created: removed. Its offset 3904 holds the sleeper's own start time, which
# a reader must not believe in a 1.1 file (it would keep the file). Created
# at 1 ns of CLOCK_MONOTONIC, so that no pause of the machine shorter than
# its uptime can blur the comparison.
cp "$done_seg" "$P/j/clock-reused.seg"
poke "$P/j/clock-reused.seg" 96 '<q' $SLEEPER
poke "$P/j/clock-reused.seg" 12 '<H' 1
poke "$P/j/clock-reused.seg" 14 '<H' 1
poke "$P/j/clock-reused.seg" 120 '<Q' 1
poke "$P/j/clock-reused.seg" 3904 '<Q' "$(cut -d')' -f2 /proc/$SLEEPER/stat | cut -d' ' -f21)"
assert_eq "$(header_field "$P/j/clock-reused.seg" format)" 1.1 "version patch"
assert_eq "$(header_field "$P/j/clock-reused.seg" start_ticks)" - "a 1.1 file's start_ticks"
# Fallback, a 1.1 file whose writer runs: kept.
cp "$live_seg" "$P/j/clock-live11.seg"
poke "$P/j/clock-live11.seg" 12 '<H' 1
poke "$P/j/clock-live11.seg" 14 '<H' 1
poke "$P/j/clock-live11.seg" 3904 '<Q' $((live_ticks + 1))

cli_ok 0 "$T/gcp" gc "$P"
cat "$T/gcp"
for f in exact-reused exact-other clock-reused; do
	assert_grep "^removed $P/j/$f.seg\$" "$T/gcp"
done
for f in exact-live clock-live clock-live11; do
	[ -f "$P/j/$f.seg" ] || fail "$P/j/$f.seg was removed"
done
assert_grep "^gc: 3 removed \(3 segments, 0 other files, 0 directories\), 3 kept \(3 live, 0 other hosts, 0 unreadable, 0 other users\)$" "$T/gcp"

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
assert_grep "^gc: 0 removed \(0 segments, 0 other files, 0 directories\), 0 kept" "$T/gc3"
