#!/bin/sh
# Where Flight Recorder dumps and segments of the same job are both read,
# diagnose says so and uses the segments: a healthy 4-rank trainer run
# under ncclwatch whose environment names the dump file
# (TORCH_FR_DUMP_TEMP_FILE), next to FR dumps with those names that tell
# another story (a mismatch): the verdict is the segments' (HEALTHY), one
# note per dump set aside. A dump no segment claims is still read.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/fr/fr-lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1
mkdir -p "$T/fr"
export TORCH_FR_DUMP_TEMP_FILE="$T/fr/comm_lib_trace_rank_"

wd_run 120 "$T/out" frjob --nranks 4 --steps 5
assert_eq "$TRAINER_STATUS" 0 "the trainer's exit status"
"$PY" "$FRGEN" size-mismatch "$T/fr" --ranks 4 > /dev/null

cli "$T/diag" diagnose "$NCCLWATCH_DIR" "$T/fr"
cat "$T/diag"
assert_eq "$CLI_STATUS" 0 "exit status (the segments say HEALTHY)"
assert_grep '^job frjob: 4 processes read' "$T/diag"
assert_no_grep '^job fr:' "$T/diag"
assert_eq "$(grep -c '^note: .*comm_lib_trace_rank_[0-3]: a Flight Recorder dump of a process whose segment was read too: the segment is used$' "$T/diag")" 4 "notes"

note "the dumps alone are still read"
cli "$T/diag2" diagnose "$T/fr"
assert_eq "$CLI_STATUS" 1 "exit status"
assert_grep '^MISMATCH: ' "$T/diag2"

note "a dump whose rank no segment has is kept"
"$PY" "$FRGEN" size-mismatch "$T/fr8" --ranks 8 > /dev/null
cp "$T/fr8/comm_lib_trace_rank_7" "$T/fr/"
cli "$T/diag3" diagnose "$NCCLWATCH_DIR" "$T/fr"
assert_grep '^job fr:fr: 1 process read' "$T/diag3"
echo ok
