#!/bin/sh
# One hang, one op number: a job with the preload that also serves RAS, a
# Broadcast before its all-reduces (--bcast-every 10: after step 0), rank 3
# skips step 4's all-reduce. The preload numbers every collective of the
# comm together (AllReduce #6: 5 all-reduces and 1 broadcast before it);
# RAS counts each kind apart (the others launched 5 AllReduces). Every
# "AllReduce #N" the CLI prints for this hang, from the segments or from
# the RAS report beside them, must be the same N; RAS's counts are written
# as launch counts ("AllReduce launches=5"), in `ncclwatch ras` and in the
# verdicts; `--json` puts them in "launches", never in "seq".
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"

LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=notation trainer_start "$T/out" --nranks 4 --steps 24 --count 64 --bcast-every 10 \
	--verbose --fault skip:rank=3:step=4
wait_for_line 120 'rank 3 step 4: fault skip: not issuing the all-reduce$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 3 done$' 0 1 2 3
at5() { "$NW_CLI" ras > "$T/ras.out" 2>&1 && grep -Eq '^  ranks 0-2: RUNNING .*AllReduce (launches=)?5$' "$T/ras.out"; }
nw_until 60 at5 || { cat "$T/ras.out"; fail "RAS never showed ranks 0-2 at their 5th AllReduce"; }
cat "$T/ras.out"
assert_grep '^  ranks 0-2: RUNNING Broadcast launches=1 AllReduce launches=5$' "$T/ras.out"
assert_grep '^  rank 3: RUNNING Broadcast launches=1 AllReduce launches=4$' "$T/ras.out"
segdir=$(dirname "$(ls "$NCCLWATCH_DIR"/*/*.seg | head -n 1)")
"$NW_CLI" ras --save "$segdir/ras.json" > /dev/null || fail "ncclwatch ras --save failed"
cp "$segdir/ras.json" "$T/ras.json"

note "the segments and the report in one directory: one job"
both() { "$NW_CLI" diagnose --verbose --timeout 1 "$segdir" > "$T/one.out"; grep -q '^  op: AllReduce #' "$T/one.out"; }
nw_until 60 both || { cat "$T/one.out"; fail "no verdict from the segments"; }
sed 's/^/    /' "$T/one.out"
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #6 on comm ' "$T/one.out"
assert_grep '^  op: AllReduce #6 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/one.out"
assert_grep '^    NCCL RAS \(.*\) agrees: MISSING_RANK: rank 3 .*\(RAS: AllReduce launches=4 there, launches=5 on 3 peers\)' "$T/one.out"

note "the report given apart, beside the segments: it joins their job all the same"
"$NW_CLI" diagnose --verbose --timeout 1 "$T/ras.json" "$segdir" > "$T/two.out"
sed 's/^/    /' "$T/two.out"
assert_eq "$(grep -c '^job ' "$T/two.out")" 1 "jobs"
assert_grep "^    NCCL RAS \\($T/ras\\.json\\) agrees: MISSING_RANK: rank 3 .*\\(RAS: AllReduce launches=4 there, launches=5 on 3 peers\\)" "$T/two.out"

note "the report alone: a job of its own, RAS's count as a launch count"
"$NW_CLI" diagnose --verbose "$T/ras.json" > "$T/alone.out"
sed 's/^/    /' "$T/alone.out"
assert_grep "^job ras $T/ras\\.json: " "$T/alone.out"
assert_grep '^  op: AllReduce launches=5 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/alone.out"

note "one notation: #N only for the op number (the hang's is #6), never on what RAS said"
assert_no_grep '#[0-9]' "$T/alone.out"
for f in "$T/one.out" "$T/two.out"; do
	nums=$(grep -E '^(MISSING_RANK|  op):' "$f" | grep -o 'AllReduce #[0-9]*' | sort -u)
	assert_eq "$nums" "AllReduce #6" "op numbers of the verdicts in $f"
	assert_no_grep 'RAS.*#[0-9]' "$f"
done
assert_no_grep '#[0-9]' "$T/ras.out"

note "--json: RAS's count in \"launches\", \"seq\" null; the segments' verdict keeps its seq"
"$NW_CLI" diagnose --json --timeout 1 "$segdir" > "$T/seg.json"
"$NW_CLI" diagnose --json "$T/ras.json" > "$T/doc.json"
python3 - "$T/seg.json" "$T/doc.json" <<'EOF' || fail "the JSON's op numbers"
import json, sys
seen = {}
for job in json.load(open(sys.argv[1]))["jobs"] + json.load(open(sys.argv[2]))["jobs"]:
    for v in job["verdicts"]:
        if v["op"] == "AllReduce":
            seen[job["name"].startswith("ras ")] = (v["seq"], v.get("launches"))
print(seen)
assert seen.get(True) == (None, 5), seen     # the RAS job: a launch count, no op number
assert seen.get(False) == (6, None), seen    # the segments: op #6
EOF
if (need_jsonschema) > /dev/null; then
	need_jsonschema
	"$CLI_PY" "$CLI_CHECK" schema "$CLI_SCHEMA" "$T/doc.json" || fail "diagnose --json breaks the schema"
fi
trainer_kill
