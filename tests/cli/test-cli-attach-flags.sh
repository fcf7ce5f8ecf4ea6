#!/bin/sh
# Every option the CLI's output names is one the command accepts: a hung
# job started without ncclwatch (rank 2 skips step 3's all-reduce, RAS on),
# then `attach`, `diagnose`, `ras`, `gc --dry-run` and a usage error of
# each command as a user meets them; every `--flag` a printed line names
# must be listed by the `--help` of the command it belongs to
# (tests/cli/hint_flags.py). attach prints "(--verbose shows all)": so
# `attach --verbose` shows every evidence line, and `attach --json` prints
# diagnose's JSON document (same schema) with its own lines on stderr.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
HINTS="$NW_ROOT/tests/cli/hint_flags.py"

trainer_start "$T/job.out" --nranks 4 --steps 20 --verbose --fault skip:rank=2:step=3
wait_for_line 120 'rank 2 step 3: idling until killed$' "$T/job.out"
wait_for_ranks 120 "$T/job.out" ' step 2 done$' 0 1 3
# RAS shows the others in step 3's all-reduce (4 launched), rank 2 at 3
at4() { "$NW_CLI" ras > "$T/ras.out" 2>&1 && grep -Eq 'ranks 0-1,3: RUNNING .*AllReduce (launches=)?4$' "$T/ras.out"; }
nw_until 60 at4 || { cat "$T/ras.out"; fail "RAS never showed ranks 0-1,3 at their 4th AllReduce"; }

note "attach: its hints name only its own options"
"$NW_CLI" attach --no-python --tree "$TRAINER_PID" -o "$T/snap" > "$T/attach.out" 2>&1
assert_eq $? 1 "attach's exit status (a problem found)"
cat "$T/attach.out"
assert_grep '^MISSING_RANK: rank 2 ' "$T/attach.out"
assert_grep '\(--verbose shows all\)' "$T/attach.out"
python3 "$HINTS" "$NW_CLI" attach "$T/attach.out" || fail "attach names an option it does not accept"

note "attach --verbose: every evidence line, as diagnose --verbose"
"$NW_CLI" attach --verbose --no-python --tree "$TRAINER_PID" -o "$T/snapv" > "$T/attachv.out" 2>&1
assert_eq $? 1 "attach --verbose's exit status"
assert_no_grep 'shows all' "$T/attachv.out"
"$NW_CLI" diagnose --verbose "$T/snapv" > "$T/diagv.out"
sed -n '/^job /,$p' "$T/attachv.out" > "$T/attachv.verdict"
# the same verdict lines (idle times move on: compare the line shapes)
assert_eq "$(grep -c '^    ' "$T/attachv.verdict")" "$(grep -c '^    ' "$T/diagv.out")" "evidence and stack lines of attach --verbose and diagnose --verbose"

note "attach --json: diagnose's document on stdout, attach's lines on stderr"
"$NW_CLI" attach --json --no-python --tree "$TRAINER_PID" -o "$T/snapj" > "$T/attach.json" 2> "$T/attachj.err"
assert_eq $? 1 "attach --json's exit status"
assert_grep '^attach: pid [0-9]+ rank ' "$T/attachj.err"
assert_no_grep '^attach: ' "$T/attach.json"
python3 - "$T/attach.json" <<'PY' || fail "attach --json: not the verdict's document"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["jobs"][0]["verdicts"][0]
print(d["schema"], v["kind"], v["culprits"], v["op"], v["launches"])
assert d["schema"] == "ncclwatch.diagnose" and v["kind"] == "MISSING_RANK" and v["culprits"] == [2]
PY
if (need_jsonschema) > /dev/null; then
	need_jsonschema
	schema_ok "$T/attach.json"
fi
usage_error '--json is the verdict' attach --json --no-verdict

note "diagnose, ras, gc --dry-run on the same files"
"$NW_CLI" diagnose "$T/snap" > "$T/diag.out" 2>&1
"$NW_CLI" ras > "$T/ras.out" 2>&1
"$NW_CLI" gc --dry-run "$T/snap" > "$T/gc.out" 2>&1
python3 "$HINTS" "$NW_CLI" diagnose "$T/diag.out" || fail "diagnose names an option it does not accept"
python3 "$HINTS" "$NW_CLI" ras "$T/ras.out" || fail "ras names an option it does not accept"
python3 "$HINTS" "$NW_CLI" gc "$T/gc.out" || fail "gc names an option it does not accept"

note "usage errors of every command point at options it has"
for c in $("$NW_CLI" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
	"$NW_CLI" "$c" --no-such-option > /dev/null 2> "$T/usage.$c"
	python3 "$HINTS" "$NW_CLI" "$c" "$T/usage.$c" || fail "$c's usage error names an option it does not accept"
done
"$NW_CLI" --no-such-option > /dev/null 2> "$T/usage.top"
python3 "$HINTS" "$NW_CLI" "" "$T/usage.top" || fail "the top-level usage error names an option ncclwatch does not accept"
trainer_kill
