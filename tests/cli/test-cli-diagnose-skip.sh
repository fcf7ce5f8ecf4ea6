#!/bin/sh
# --fault skip:rank=5:step=20 on 8 ranks: rank 5 never issues AllReduce #21
# of the world comm, the seven others wait in it. Live, and after the job
# was killed: diagnose says MISSING_RANK with culprit 5 (exit 1), in text
# and JSON; status lists 8 processes (alive, then dead); the trace has one
# process per rank and marks the stalls.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1

wd_start "$T/out" skip --nranks 8 --steps 24 --count 64 --bcast-every 0 --fault skip:rank=5:step=20
wait_for_count $WD_WAIT 7 'ncclwatch: stall: ' "$T/out"
wait_for_count $WD_WAIT 1 'ncclwatch: dump requested by .*: rank=5 ' "$T/out"
kill -0 "$TRAINER_PID" 2>/dev/null || fail "the job ended instead of hanging"

# check_diagnosis OUT: the text verdict of this hang.
check_diagnosis() {
	cat "$1"
	assert_grep "^job skip: 8 processes read, world size 8, ranks missing: none, timeout 2s$" "$1"
	sed -n 2p "$1" | grep -q '^MISSING_RANK: ' || fail "the first verdict is not MISSING_RANK"
	# the first verdict's block: up to the next unindented line
	awk 'NR > 2 && /^[^ ]/ { exit } NR > 2' "$1" > "$1.first"
	assert_grep '^  op: AllReduce #21 on comm [0-9a-f]{16} \(8 ranks\)$' "$1.first"
	assert_grep '^  culprits: 5$' "$1.first"
	assert_grep '^  waiting: 0-4,6-7$' "$1.first"
	assert_grep '^  hint: ' "$1.first"
	assert_grep '^stacks \(first thread of each process, [0-9]+ groups?\):$' "$1"
	assert_grep '^    #[0-9]+ idle_forever' "$1"
}

note "live"
cli_ok 1 "$T/live" diagnose "$NCCLWATCH_DIR"
check_diagnosis "$T/live"
cli_ok 0 "$T/status-live" status "$NCCLWATCH_DIR"
cat "$T/status-live"
assert_eq "$(grep -Ec '^[^#].* alive$' "$T/status-live")" 8 "live processes"
assert_eq "$(grep -Ec "^[^#].* 5 comms=[0-9]+ last=AllReduce#20@[0-9a-f]{16} state=COMPLETED .* alive$" "$T/status-live")" 1 "rank 5's line"
assert_eq "$(grep -Ec "^[^#].* last=AllReduce#21@[0-9a-f]{16} state=STARTED .* alive$" "$T/status-live")" 7 "the waiting ranks' lines"

note "post mortem"
ranks=$(rank_pids)
trainer_kill
for r in $ranks; do
	nw_until 20 sh -c "! kill -0 $r" || fail "rank pid $r still exists (a zombie?)"
done
cli_ok 1 "$T/dead" diagnose --trace "$T/trace.json" "$NCCLWATCH_DIR"
check_diagnosis "$T/dead"
cli_ok 1 "$T/dead-job" diagnose --job skip --verbose "$NCCLWATCH_DIR/skip"
check_diagnosis "$T/dead-job"
usage_error "no job named 'other'" diagnose --job other "$NCCLWATCH_DIR"
cli_ok 0 "$T/status-dead" status "$NCCLWATCH_DIR"
assert_eq "$(grep -Ec '^[^#].* dead$' "$T/status-dead")" 8 "dead processes"

note "--trace"
trace_ok "$T/trace.json" 8 > "$T/trace.out"
cat "$T/trace.out"
stalls=$(sed -nE 's/.* stalls=([0-9]+)$/\1/p' "$T/trace.out")
[ "$stalls" -ge 7 ] || fail "$stalls stall marks, expected one per waiting rank at least"

note "--json"
need_jsonschema
cli_ok 1 "$T/dead.json" diagnose --json "$NCCLWATCH_DIR"
schema_ok "$T/dead.json"
python3 - "$T/dead.json" <<'PY' || fail "JSON contents"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["worst"] == "MISSING_RANK", d["worst"]
[job] = d["jobs"]
v = job["verdicts"][0]
assert v["kind"] == "MISSING_RANK", v
assert v["op"] == "AllReduce" and v["seq"] == 21 and v["comm_nranks"] == 8, v
assert v["culprits"] == [5], v["culprits"]
assert v["waiting"] == [0, 1, 2, 3, 4, 6, 7], v["waiting"]
assert all(p["alive"] is False for p in job["processes"])
assert sorted(p["rank"] for p in job["processes"]) == list(range(8))
PY
