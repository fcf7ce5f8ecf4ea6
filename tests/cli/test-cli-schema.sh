#!/bin/sh
# The renderers' JSON (on the hand-made analysis of test-cli-render)
# validates against docs/diagnose.schema.json, and a document that breaks
# the schema is refused; their trace loads as JSON with slices that nest.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
RENDER="$NW_BUILD/tests/test-cli-render"
[ -x "$RENDER" ] || fail "$RENDER not built"
need_jsonschema

"$RENDER" --json "$T/doc.json" || fail "test-cli-render --json failed"
schema_ok "$T/doc.json"
note "the validator refuses a document without \"worst\" and one with a culprit of -1"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["worst"]; json.dump(d, open(sys.argv[2], "w"))' \
	"$T/doc.json" "$T/bad1.json"
! "$CLI_PY" "$CLI_CHECK" schema "$CLI_SCHEMA" "$T/bad1.json" 2>/dev/null || fail "a document without worst validated"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["jobs"][0]["verdicts"][0]["culprits"]=[-1]; json.dump(d, open(sys.argv[2], "w"))' \
	"$T/doc.json" "$T/bad2.json"
! "$CLI_PY" "$CLI_CHECK" schema "$CLI_SCHEMA" "$T/bad2.json" 2>/dev/null || fail "a culprit of -1 validated"

"$RENDER" --trace "$T/trace.json" || fail "test-cli-render --trace failed"
python3 "$CLI_CHECK" trace "$T/trace.json" > "$T/trace.out" || fail "the trace does not load"
assert_eq "$(cat "$T/trace.out")" "processes=9 slices=32 stalls=7" "what the trace holds"
