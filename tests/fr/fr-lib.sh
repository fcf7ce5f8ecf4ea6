# Helpers for the Flight Recorder tests (sourced after tests/lib.sh).
FRGEN="$NW_ROOT/tests/gen/frgen.py"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3 (frgen.py writes the dumps)"

# fr_expect SCENARIO KIND CULPRITS [frgen options...]: generate the
# scenario's dumps, run `ncclwatch diagnose --json` on them, check the
# first verdict's kind and its exact culprit set ("-" none, "0,7" ranks).
fr_expect() {
	_sc=$1 _kind=$2 _cul=$3; shift 3
	rm -rf "$T/$_sc"
	"$PY" "$FRGEN" "$_sc" "$T/$_sc" "$@" > "$T/$_sc.gen" || fail "frgen $_sc"
	"$NW_CLI" diagnose --json "$T/$_sc" > "$T/$_sc.json" 2> "$T/$_sc.err"
	_rc=$?
	[ $_rc -le 1 ] || { cat "$T/$_sc.err" >&2; fail "$_sc: diagnose exit status $_rc"; }
	[ ! -s "$T/$_sc.err" ] || { cat "$T/$_sc.err" >&2; fail "$_sc: diagnose wrote to stderr"; }
	_got=$("$PY" - "$T/$_sc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["jobs"][0]["verdicts"][0]
c = ",".join(str(r) for r in v.get("culprits", [])) or "-"
print(v["kind"], c)
PY
)
	assert_eq "$_got" "$_kind $_cul" "$_sc: first verdict and culprits"
	if [ "$_kind" = HEALTHY ]; then assert_eq $_rc 0 "$_sc: exit status"; else assert_eq $_rc 1 "$_sc: exit status"; fi
	echo "ok $_sc: $_got"
}
