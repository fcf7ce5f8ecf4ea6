#!/bin/sh
# `ncclwatch status` over three jobs of real processes under the preload,
# started one after the other: "done" ran to its end (files kept: every
# process dead), "hang" hangs (NCCLSIM_FAULT=stall:seq=6: Broadcast #6
# never completes on any of its 4 ranks; its watchdogs said so), "run" is
# a healthy job still running. status says so in its first line
# ("# 3 jobs: 1 live, 1 hung, 1 stale"), lists them newest first (run,
# hang, done), marks each job's state, and names the op that waited
# longest in the hung one; --json says the same (valid against
# docs/status.schema.json); --timeout moves the line between hung and live.
# Then a job whose ranks all compile for ever (alive, no NCCL call) reads
# idle once no process made an NCCL call for the timeout, live below it.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

note "three jobs: done (ended), hang (stalled), run (running)"
NCCLWATCH_KEEP=1 wd_run 120 "$T/done.out" done --nranks 2 --steps 3
assert_eq "$TRAINER_STATUS" 0 "the finished job's exit status"
NCCLSIM_FAULT=stall:seq=6 wd_start "$T/hang.out" hang --nranks 4 --steps 8 --bcast-every 3
wait_for_count $WD_WAIT 4 'ncclwatch: stall: ' "$T/hang.out"
wd_start "$T/run.out" run --nranks 2 --steps 100000000 --count 1
RUN_PID=$TRAINER_PID
# both its ranks have issued an op (and so have their segments)
nw_until $WD_WAIT sh -c "'$NW_CLI' status --job run '$NCCLWATCH_DIR' 2>/dev/null | grep -c ' last=AllReduce#' | grep -qx 2" \
	|| { cat "$T/run.out" >&2; fail "the running job's ranks never showed an all-reduce"; }

cli_ok 0 "$T/status" status
cat "$T/status"
assert_eq "$(sed -n 1p "$T/status")" "# 3 jobs: 1 live, 1 hung, 1 stale" "the summary line"
assert_eq "$(sed -n 2p "$T/status")" "# host pid rank comms last state age alive" "the column line"
assert_eq "$(grep '^# job ' "$T/status" | cut -d' ' -f3 | tr '\n' ' ')" "run: hang: done: " "jobs, newest first"
assert_grep '^# job run: 2 processes, world size 2, ranks missing: none; live \(2 alive\)$' "$T/status"
assert_grep '^# job hang: 4 processes, world size 4, ranks missing: none; hung \(4 alive; rank [0-3] pid [0-9]+ Broadcast#6 STARTED for [0-9.]+s, timeout 2s\)$' "$T/status"
assert_grep '^# job done: 2 processes, world size 2, ranks missing: none; stale \(every process dead\)$' "$T/status"
assert_eq "$(grep -v '^#' "$T/status" | grep -c ' dead$')" 2 "dead rank lines (the finished job)"
assert_eq "$(grep -v '^#' "$T/status" | grep -c ' alive$')" 6 "alive rank lines"
# the hung job's longest wait is at least the timeout (it is what made it hung)
age=$(sed -nE 's/^# job hang: .* for ([0-9.]+)s, timeout 2s\)$/\1/p' "$T/status")
awk -v a="$age" 'BEGIN { exit !(a >= 2) }' || fail "the hung job's longest wait ${age}s is below the timeout"

note "--timeout above the wait: the same job is live"
cli_ok 0 "$T/status.t" status --timeout 100000
assert_eq "$(sed -n 1p "$T/status.t")" "# 3 jobs: 2 live, 0 hung, 1 stale" "the summary line with --timeout 100000"
assert_grep '^# job hang: .*; live \(4 alive\)$' "$T/status.t"

note "--json"
cli_ok 0 "$T/status.json" status --json
python3 - "$T/status.json" <<'EOF' || fail "status --json"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "ncclwatch.status" and doc["version"] == 1, doc
assert doc["summary"] == {"jobs": 3, "live": 1, "hung": 1, "stale": 1, "unknown": 0, "idle": 0}, doc["summary"]
jobs = doc["jobs"]
assert [j["name"] for j in jobs] == ["run", "hang", "done"], [j["name"] for j in jobs]
assert [j["state"] for j in jobs] == ["live", "hung", "stale"], [j["state"] for j in jobs]
run, hang, done = jobs
assert (run["alive"], run["dead"], run["remote"]) == (2, 0, 0), run
assert (done["alive"], done["dead"]) == (0, 2), done
assert done["longest_wait"] is None and run["longest_wait"] is None
assert run["quiet_s"] < run["timeout_s"] and done["quiet_s"] is None, (run, done)
w = hang["longest_wait"]
assert w["op"]["kind"] == "Broadcast" and w["op"]["seq"] == 6 and w["op"]["state"] == "STARTED", w
assert w["op"]["age_s"] >= hang["timeout_s"] == 2, w
assert [r["rank"] for r in hang["ranks"]] == [0, 1, 2, 3], hang["ranks"]
for r in hang["ranks"]:
    assert r["alive"] == "alive", r
    p = r["oldest_pending"]
    assert p["kind"] == "Broadcast" and p["seq"] == 6 and p["comm"] == w["op"]["comm"], r
for r in done["ranks"]:
    assert r["alive"] == "dead" and r["oldest_pending"] is None, r
print("status --json: ok")
EOF
need_jsonschema
CLI_SCHEMA="$NW_ROOT/docs/status.schema.json" schema_ok "$T/status.json"

kill -KILL "-$RUN_PID" 2>/dev/null

note "idle: alive, nothing pending, no NCCL call for the timeout (every rank compiles for ever)"
wd_start "$T/idle.out" idle --nranks 2 --steps 5 --count 64 --fault compile:rank=all
IDLE_PID=$TRAINER_PID
wait_for_count $WD_WAIT 2 'fault compile: compiling the first step, never finishing' "$T/idle.out"
nw_until $WD_WAIT sh -c "'$NW_CLI' status --job idle '$NCCLWATCH_DIR' 2>/dev/null | grep -q '; idle ('" \
	|| { "$NW_CLI" status --job idle "$NCCLWATCH_DIR" >&2; fail "the compiling job never read idle"; }
cli_ok 0 "$T/status.i" status --job idle
cat "$T/status.i"
assert_eq "$(sed -n 1p "$T/status.i")" "# 1 job: 0 live, 0 hung, 0 stale, 1 idle" "the summary line of an idle job"
assert_grep '^# job idle: 2 processes, world size 2, ranks missing: none; idle \(2 alive; nothing pending, no NCCL call or op end for [0-9.]+s, timeout 2s\)$' "$T/status.i"
cli_ok 0 "$T/status.it" status --job idle --timeout 100000
assert_grep '^# job idle: .*; live \(2 alive\)$' "$T/status.it"
cli_ok 0 "$T/status.ij" status --job idle --json
python3 - "$T/status.ij" <<'EOF' || fail "status --json of the idle job"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["summary"] == {"jobs": 1, "live": 0, "hung": 0, "stale": 0, "unknown": 0, "idle": 1}, doc["summary"]
j = doc["jobs"][0]
assert j["state"] == "idle" and j["longest_wait"] is None and j["quiet_s"] >= j["timeout_s"] == 2, j
print("idle --json: ok")
EOF
CLI_SCHEMA="$NW_ROOT/docs/status.schema.json" schema_ok "$T/status.ij"
kill -KILL "-$IDLE_PID" 2>/dev/null
wd_check_outputs
