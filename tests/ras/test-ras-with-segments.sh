#!/bin/sh
# A job that runs with the preload AND serves RAS: the saved RAS report,
# above the segments' job directory or inside it, is read by the same
# `diagnose DIR` and joins the job of the processes that are its ranks
# (host and pid): one job, the segments' verdict (the strongest source),
# and one line saying whether RAS agrees. (A report outside the job
# directory was a job of its own, lined up with the segments' comms by a
# second path, nw_ras_match: two verdict sets for one hang.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=rasjob trainer_start "$T/out" --nranks 4 --steps 24 --count 64 --bcast-every 0 \
	--verbose --fault skip:rank=3:step=4
wait_for_line 120 'rank 3 step 4: fault skip: not issuing the all-reduce$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 3 done$' 0 1 2 3
at5() { "$NW_CLI" ras | grep -q '^  ranks 0-2: RUNNING AllReduce launches=5$'; }
nw_until 60 at5 || fail "ranks 0-2 never reached AllReduce launches=5"
"$NW_CLI" ras --save "$NCCLWATCH_DIR/ras.json" > /dev/null || fail "ncclwatch ras --save failed"
# the segments' verdict needs the stuck ops older than the timeout (1 s)
both() { "$NW_CLI" diagnose --timeout 1 "$NCCLWATCH_DIR" > "$T/diag.out"; grep -q '^MISSING_RANK: rank 3 never called AllReduce #' "$T/diag.out"; }
nw_until 60 both || { cat "$T/diag.out"; fail "no verdict from the segments"; }
"$NW_CLI" diagnose --verbose --timeout 1 "$NCCLWATCH_DIR" > "$T/diag.out"; rc=$?
grep -v '^    from NCCL RAS' "$T/diag.out" | sed 's/^/    /'
assert_eq "$rc" 1 "diagnose exit status"
assert_eq "$(grep -c '^job ' "$T/diag.out")" 1 "jobs"
assert_grep '^job rasjob: 4 processes read' "$T/diag.out"
assert_no_grep '^job ras ' "$T/diag.out"
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #5 on comm [0-9a-f]{16}' "$T/diag.out"
assert_grep '^  culprits: 3$' "$T/diag.out"
assert_grep "^    NCCL RAS \\($NCCLWATCH_DIR/ras\\.json\\) agrees: MISSING_RANK: rank 3 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \\(RAS: AllReduce launches=4 there, launches=5 on 3 peers\\)" "$T/diag.out"
note "the report inside the segments' own job directory: one job, the segments' verdict, RAS's agreement line"
segdir=$(dirname "$(ls "$NCCLWATCH_DIR"/*/*.seg | head -n 1)")
"$NW_CLI" ras --save "$segdir/ras.json" > /dev/null || fail "ncclwatch ras --save failed"
"$NW_CLI" diagnose --verbose --timeout 1 "$segdir" > "$T/one.out"; rc=$?
grep -v '^    from NCCL RAS' "$T/one.out" | sed 's/^/    /'
assert_eq "$rc" 1 "diagnose exit status"
assert_eq "$(grep -c '^job ' "$T/one.out")" 1 "jobs"
assert_grep '^job rasjob: 4 processes read' "$T/one.out"
assert_grep "^    NCCL RAS \\($segdir/ras\\.json\\) agrees: MISSING_RANK: rank 3 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \\(RAS: AllReduce launches=4 there, launches=5 on 3 peers\\)" "$T/one.out"
assert_no_grep '^    stacks agree' "$T/one.out"
rm -f "$segdir/ras.json"
note "the JSON validates against docs/diagnose.schema.json"
. "$NW_ROOT/tests/cli/cli-lib.sh"
if (need_jsonschema) > /dev/null; then
	need_jsonschema
	"$NW_CLI" diagnose --json --timeout 1 "$NCCLWATCH_DIR" > "$T/doc.json"
	"$CLI_PY" "$CLI_CHECK" schema "$CLI_SCHEMA" "$T/doc.json" || fail "diagnose --json with a RAS report breaks the schema"
else
	note "no python3 jsonschema: schema check left out"
fi
trainer_kill

note "a rank that crashed left its segment: the segments decide, RAS's gone process is the line beside them"
LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=rasjob2 trainer_start "$T/crash.out" --nranks 4 --steps 24 --count 64 \
	--bcast-every 0 --verbose --fault crash:rank=2:step=4
wait_for_ranks 120 "$T/crash.out" ' step 3 done$' 0 1 3
gone() { "$NW_CLI" ras --json | grep -q '"unresponsive": true'; }
nw_until 60 gone || fail "crash: rank 2 never showed as gone"
"$NW_CLI" ras --save "$NCCLWATCH_DIR/rasjob2/ras.json" > /dev/null || fail "ncclwatch ras --save failed"
stuck() { "$NW_CLI" diagnose --verbose --timeout 1 "$NCCLWATCH_DIR/rasjob2" > "$T/crash.diag"; grep -q '^MISSING_RANK: rank 2' "$T/crash.diag"; }
nw_until 60 stuck || { cat "$T/crash.diag"; fail "crash: no verdict from the segments"; }
grep -v '^    from NCCL RAS' "$T/crash.diag" | sed 's/^/    /'
assert_grep '^job rasjob2: 4 processes read' "$T/crash.diag"
assert_grep "^    NCCL RAS \\($NCCLWATCH_DIR/rasjob2/ras\\.json\\) agrees: MISSING_RANK: rank 2: process gone or unreachable \\(RAS got no answer from it\\)" "$T/crash.diag"
trainer_kill
