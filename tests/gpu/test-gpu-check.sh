#!/bin/sh
# make gpu-check on the simulation (what CI runs every day): the whole
# runner (tests/gpu/run.sh) over every step there is. Steps 01, 02 and 07
# must PASS, and 03 and 03-getproc too (the simulation replays graphs:
# 100 replays recorded, through cuGetProcAddress with
# NCCLWATCH_GRAPH_PROCADDR=1); no step may FAIL; summary.txt must end with
# "N passed, 0 failed, N skipped" and summary.json list the same statuses.
# Step 02's stall-line delay is reported, not judged (NW_GPU_TIMING=report:
# no timing thresholds here).
. "$NW_ROOT/tests/lib.sh"

out="$T/out"
GPU_CHECK_OUT="$out" NW_GPU_MODE=sim NW_GPU_TIMING=report sh "$NW_ROOT/tests/gpu/run.sh" > "$T/run.txt" 2>&1
rc=$?
cat "$T/run.txt"
[ -s "$out/summary.txt" ] || fail "no summary.txt (run.sh exit $rc)"
[ -s "$out/summary.json" ] || fail "no summary.json (run.sh exit $rc)"

# every step there is has exactly one line
for f in "$NW_ROOT"/tests/gpu/steps/[0-9]*.sh; do
	name=$(basename "$f" .sh)
	n=$(grep -c "^[A-Z]*  *$name " "$out/steps.txt")
	[ "$n" = 1 ] || fail "step $name has $n status lines in steps.txt, not 1"
done
status() { awk -v s="$1" '$2 == s { print $1 }' "$out/steps.txt"; }
for s in 01-nccl-loop 02-stream-blocked 03-graph-replay 03-graph-replay-getproc 07-kill; do
	assert_eq "$(status $s)" PASS "step $s"
done
for via in link getproc; do
	assert_grep "^PASS +03-graph-replay[-a-z]* .*$via: captured ops recorded: 1 \\(CAPTURED\\); replays recorded: 100 of 100 launches \\(GraphLaunch records: COMPLETED:100, replay numbers 1\\.\\.100, 0 gaps\\)" "$out/steps.txt"
done
assert_grep '^PASS +03-graph-replay-getproc .*default: untouched \(exit 0, result right\)' "$out/steps.txt"
assert_no_grep '^FAIL ' "$out/steps.txt"
assert_eq "$rc" 0 "run.sh's exit status"
assert_grep '^PASS +01-nccl-loop .*records: 1000 AllReduce \(COMPLETED:1000, 1000 timed, tracking events\)' "$out/steps.txt"
assert_grep '^PASS +02-stream-blocked .*verdict kind=STREAM_BLOCKED culprits=1 waiting=0' "$out/steps.txt"

# the summary's last line counts the statuses above
pass=$(grep -c '^PASS ' "$out/steps.txt")
skipn=$(grep -c '^SKIP ' "$out/steps.txt")
assert_eq "$(tail -n 1 "$out/summary.txt")" "$pass passed, 0 failed, $skipn skipped" "summary.txt's last line"

# summary.json: the same steps with the same statuses, the same counts
python3 - "$out/summary.json" "$out/steps.txt" <<'PY' || fail "summary.json does not match steps.txt"
import json, sys
d = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    st, name = line.split()[:2]
    want[name] = st
got = {s["step"]: s["status"] for s in d["steps"]}
assert got == want, (got, want)
assert d["mode"] == "sim", d["mode"]
assert d["failed"] == 0 and d["passed"] == list(want.values()).count("PASS") and d["skipped"] == list(want.values()).count("SKIP"), d
for s in d["steps"]:
    assert s["detail"], s
print("summary.json: %d steps, %d passed, %d skipped" % (len(got), d["passed"], d["skipped"]))
PY
[ -s "$out/logs.tgz" ] || fail "no logs.tgz"
for d in 01-nccl-loop 02-stream-blocked 07-kill; do
	[ -n "$(ls "$out/logs/$d" 2>/dev/null)" ] || fail "step $d kept no files in its folder"
done
echo "ok: $pass passed, $skipn skipped"
