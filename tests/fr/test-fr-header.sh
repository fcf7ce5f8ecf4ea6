#!/bin/sh
# A job header prints a timeout only where one was set: Flight Recorder
# dumps hold no stall timeout of ours (every op pending in a dump counts
# as stuck), so `diagnose` of them says "no timeout (...)", never the
# internal 1 ms ("timeout 0.001s"); `--timeout S` given by the user is
# printed as given; `--json` says where the threshold came from.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/fr/fr-lib.sh"

"$PY" "$FRGEN" missing-rank "$T/fr" > /dev/null || fail "frgen missing-rank"
"$NW_CLI" diagnose "$T/fr" > "$T/text" 2> "$T/err"
assert_eq $? 1 "diagnose exit status"
head -n 2 "$T/text"
assert_grep '^job [^ ]+: 8 processes read, world size 8, ranks missing: none, no timeout \(Flight Recorder dumps: a pending op counts as stuck\)$' "$T/text"
assert_no_grep 'timeout [0-9]' "$T/text"
assert_grep '^MISSING_RANK: rank 7 never called AllReduce #5 ' "$T/text"

"$NW_CLI" diagnose --timeout 30 "$T/fr" > "$T/given"
head -n 1 "$T/given"
assert_grep '^job [^ ]+: 8 processes read, world size 8, ranks missing: none, timeout 30s$' "$T/given"

"$NW_CLI" diagnose --json "$T/fr" > "$T/doc.json"
"$PY" - "$T/doc.json" <<'PY' || fail "timeout_from of the dumps' job"
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
print("timeout_from", job.get("timeout_from"), "timeout_s", job["timeout_s"])
assert job.get("timeout_from") == "none"
PY
if (need_jsonschema) > /dev/null; then
	need_jsonschema
	"$CLI_PY" "$CLI_CHECK" schema "$CLI_SCHEMA" "$T/doc.json" || fail "diagnose --json of dumps breaks the schema"
fi
