#!/bin/sh
# A healthy 8-rank run of the trainer (segments kept): diagnose says
# HEALTHY (exit 0) in text and JSON (valid against the schema), status
# lists the 8 processes, dead, and the trace has one process per rank.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1

wd_run 120 "$T/out" healthy --nranks 8 --steps 10
assert_eq "$TRAINER_STATUS" 0 "the trainer's exit status"
assert_no_grep 'ncclwatch: ' "$T/out"
assert_eq "$(segments "$NCCLWATCH_DIR/healthy" | wc -l | tr -d ' ')" 8 "segments kept"

cli_ok 0 "$T/diag" diagnose "$NCCLWATCH_DIR"
cat "$T/diag"
assert_grep "^job healthy: 8 processes read, world size 8, ranks missing: none, timeout 2s$" "$T/diag"
assert_eq "$(sed -n 2p "$T/diag" | cut -d: -f1)" HEALTHY "the verdict (first after the job line)"
# no other kind of the kinds' table (report/verdict_kinds.h)
others=$("$NW_BUILD/tests/progs/verdict-kinds" | cut -f2 | grep -vx HEALTHY | paste -sd'|')
[ -n "$others" ] || fail "verdict-kinds printed no kinds"
assert_no_grep "^($others):" "$T/diag"
note "default directory: \$NCCLWATCH_DIR"
cli_ok 0 "$T/diag2" diagnose
cmp -s "$T/diag" "$T/diag2" || fail "diagnose without DIR differs from diagnose \$NCCLWATCH_DIR"

note "--json"
need_jsonschema
cli_ok 0 "$T/diag.json" diagnose --json --trace "$T/trace.json" "$NCCLWATCH_DIR/healthy"
schema_ok "$T/diag.json"
python3 - "$T/diag.json" <<'PY' || fail "JSON contents"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["worst"] == "HEALTHY", d["worst"]
[job] = d["jobs"]
assert job["name"] == "healthy" and job["process_count"] == 8 and job["world_size"] == 8, job
assert job["verdicts"][0]["kind"] == "HEALTHY", job["verdicts"]
assert sorted(p["rank"] for p in job["processes"]) == list(range(8))
assert all(p["alive"] is False and p["dump"] is False for p in job["processes"])
assert d["unreadable"] == []
PY
note "--trace"
trace_ok "$T/trace.json" 8

note "status"
cli_ok 0 "$T/status" status "$NCCLWATCH_DIR"
cat "$T/status"
assert_eq "$(head -n 1 "$T/status")" "# 1 job: 0 live, 0 hung, 1 stale" "status summary line"
assert_eq "$(sed -n 2p "$T/status")" "# host pid rank comms last state age alive" "status header"
assert_grep "^# job healthy: 8 processes, world size 8, ranks missing: none; stale \(every process dead\)$" "$T/status"
assert_eq "$(grep -vc '^#' "$T/status")" 8 "process lines"
for r in 0 1 2 3 4 5 6 7; do
	grep -Eq "^[^ ]+ [0-9]+ $r comms=[0-9]+ last=[A-Za-z]+(#[0-9]+)?(@[0-9a-f]{16})? state=[A-Z_]+ age=[0-9]+\.[0-9]s dead$" "$T/status" \
		|| fail "no status line for rank $r"
done
