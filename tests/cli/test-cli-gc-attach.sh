#!/bin/sh
# `gc` after `attach`: a hung job started without ncclwatch (RAS on) is
# attached into its default job directory ($NCCLWATCH_DIR/<job>): its
# snapshots (*.snap.seg) and RAS report (ras.json). While the job lives,
# gc keeps all of it; once no process of the job is left, gc removes the
# snapshots, ras.json and the job directory, so nothing stays behind.
# Every `gc` summary counts exactly the lines it listed ("N would be
# removed" after N "would remove" lines).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
S=$NCCLWATCH_DIR
mkdir -p "$S" && chmod 700 "$S"

# gc_counts OUT PREFIX: the summary's count is the number of PREFIX lines.
gc_counts() {
	_n=$(grep -c "^$2 " "$1")
	assert_grep "^gc: $_n (would be )?removed \(" "$1"
}

trainer_start "$T/job.out" --nranks 4 --steps 20 --verbose --fault skip:rank=2:step=3
wait_for_line 120 'rank 2 step 3: idling until killed$' "$T/job.out"
wait_for_ranks 120 "$T/job.out" ' step 2 done$' 0 1 3
at4() { "$NW_CLI" ras > "$T/ras.out" 2>&1 && grep -Eq 'ranks 0-1,3: RUNNING .*AllReduce (launches=)?4$' "$T/ras.out"; }
nw_until 60 at4 || { cat "$T/ras.out"; fail "RAS never showed the hang"; }
"$NW_CLI" attach --no-python --no-verdict --tree "$TRAINER_PID" > "$T/attach.out" 2>&1 || { cat "$T/attach.out"; fail "attach"; }
cat "$T/attach.out"
job=$(ls "$S")
assert_eq "$(echo "$job" | wc -l)" 1 "job directories attach made"
assert_eq "$(ls "$S/$job"/*.snap.seg | wc -l)" 4 "snapshots"
[ -f "$S/$job/ras.json" ] || fail "attach wrote no ras.json"

note "the job lives: gc keeps its snapshots and its RAS report"
cli_ok 0 "$T/gc-live" gc "$S"
cat "$T/gc-live"
assert_grep '^gc: 0 removed.*, 4 kept \(4 live, ' "$T/gc-live"
[ -f "$S/$job/ras.json" ] || fail "gc removed the RAS report of a live job"

note "the job is gone: --dry-run lists, and counts, what gc then removes"
trainer_kill
find "$S" | sort > "$T/before"
cli_ok 0 "$T/dry" gc --dry-run "$S"
cat "$T/dry"
find "$S" | sort > "$T/after-dry"
cmp -s "$T/before" "$T/after-dry" || fail "--dry-run changed $S"
assert_eq "$(grep -c "^would remove $S/$job/.*\.snap\.seg$" "$T/dry")" 4 "snapshots gc would remove"
assert_grep "^would remove $S/$job/ras\\.json$" "$T/dry"
assert_grep "^would remove $S/$job/$" "$T/dry"
gc_counts "$T/dry" "would remove"

cli_ok 0 "$T/gc" gc "$S"
cat "$T/gc"
assert_grep "^removed $S/$job/ras\\.json$" "$T/gc"
assert_grep "^removed $S/$job/$" "$T/gc"
gc_counts "$T/gc" removed
assert_eq "$(find "$S" -mindepth 1 | wc -l)" 0 "what is left in $S"
