#!/bin/sh
# Field case: one rank killed by the OOM killer (SIGKILL) mid-run. Under
# torchrun, 4 ranks of the trainer; at step 3 rank 2 kills itself with
# SIGKILL (--fault crash:rank=2:step=3) while the others go on into
# AllReduce #4 and wait there. Nobody stops the job: torchrun notices the
# dead worker at its next monitor poll, stops the others (SIGTERM) and
# exits with an error by itself; the test says how long that took.
#
# Expected: `ncclwatch diagnose` on the files left (every process dead by
# then) says MISSING_RANK on AllReduce #4, culprit 2, waiting 0-1,3, rank
# 2's evidence "never called it (coll_enqueued 3) ...; process gone", hint
# "the code path differs on those ranks" -- the culprit
# test-analysis-trainer-faults.sh asserts for the same crash without a
# launcher.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/field/field-lib.sh"
need_torchrun

field_torchrun "$T/job.out" "$NW_TRAINER" --steps 8 --count 64 --bcast-every 0 --fault crash:rank=2:step=3
field_job
field_lines $FIELD_WAIT 'fault crash: killing myself with SIGKILL' "$T/job.out" 1
t0=$(date +%s)
launch_wait $FIELD_WAIT
[ "$LAUNCH_STATUS" != 124 ] || { tail -n 40 "$T/job.out" >&2; fail "torchrun did not end by itself within $FIELD_WAIT s of the crash"; }
note "torchrun ended by itself $(( $(date +%s) - t0 )) s after the crash, status $LAUNCH_STATUS"
[ "$LAUNCH_STATUS" != 0 ] || fail "torchrun exited 0 after a worker was killed"
assert_grep 'Signals.SIGKILL|exitcode *: -9' "$T/job.out"
field_clean "$T/job.out"
[ "$(find "$FIELD_JOB" -name '*.seg' ! -name '*.dump.seg' | wc -l)" = $NRANKS ] ||
	{ ls -l "$FIELD_JOB" >&2; fail "expected $NRANKS segments left"; }

field_diagnose oom
check_first oom MISSING_RANK 'AllReduce #4' 2 0-1,3 -
assert_grep '^MISSING_RANK: rank 2 never called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it$' "$T/oom.diag"
assert_grep '^    rank 2: never called it \(coll_enqueued 3\); .*; process gone$' "$T/oom.diag"
assert_grep '^  hint: the code path differs on those ranks$' "$T/oom.diag"
cli_ok 1 "$T/oom.json" diagnose --json "$FIELD_JOB"
python3 - "$T/oom.json" <<'PY' || fail "JSON: not every process is dead, or the culprit differs"
import json, sys
[job] = json.load(open(sys.argv[1]))["jobs"]
assert not any(p["alive"] for p in job["processes"]), "a process still alive"
v = job["verdicts"][0]
assert (v["kind"], v["culprits"], v["waiting"]) == ("MISSING_RANK", [2], [0, 1, 3]), v
PY
field_keep oom
note "test took $(field_elapsed) s"
