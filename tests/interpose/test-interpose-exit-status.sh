#!/bin/sh
# What a process leaves at exit depends on how it ended: a clean exit
# (status 0) removes the segment; a process that exits with a non-zero
# status keeps it, with the status in the header (a failed rank is often
# why its peers hang, and its record is the evidence); the diagnosis then
# names the mismatch (#4: step 0 also broadcasts) from the files kept.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
run() {
	_out=$1; shift
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$(basename "$_out")" \
		"$NW_TRAINER" "$@" > "$_out" 2>&1
	nw_wait "$NW_PID" 120
	TRAINER_STATUS=$?
}

note "a clean run: status 0, nothing left"
run "$T/clean" --nranks 4 --steps 5
assert_eq "$TRAINER_STATUS" 0 "clean run's status"
assert_eq "$(segments "$NCCLWATCH_DIR" | wc -l)" 0 "segments left by a clean run"

note "rank 3 all-reduces half the count at step 2: every rank sees a wrong result and exits 3"
run "$T/failed" --nranks 4 --steps 5 --count 64 --fault count:rank=3:step=2
cat "$T/failed"
assert_eq "$TRAINER_STATUS" 3 "failed run's status"
assert_eq "$(segments "$NCCLWATCH_DIR/failed" | wc -l)" 4 "segments kept by the failed ranks"
for s in $(segments "$NCCLWATCH_DIR/failed"); do
	"$NW_CLI" show "$s" > "$T/show" || fail "show $s"
	assert_grep '^  flags +recording,exited,exit_status$' "$T/show"
	assert_grep '^  exit_status +3$' "$T/show"
done
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/diag" 2>&1
assert_eq "$?" 1 "diagnose's status"
cat "$T/diag"
assert_grep '^MISMATCH: rank 3 called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\) with count 32 where ranks 0-2 used count 64' "$T/diag"
assert_grep '^  culprits: 3$' "$T/diag"
