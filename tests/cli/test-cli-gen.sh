#!/bin/sh
# Every scenario of the segment generator (tests/gen/nwgen.c), 8 ranks:
# diagnose exits 0 for the healthy ones and 1 for the others, its first
# verdict line is "KIND: ..." with a known KIND, its --json output
# validates against docs/diagnose.schema.json with the same worst verdict,
# and its --trace output loads with one process per rank present.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
NWGEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NWGEN" ] || skip "$NWGEN is not built (tests/gen)"
need_jsonschema

kinds='HEALTHY|IDLE|TRANSPORT_STALL|STREAM_BLOCKED|P2P_UNMATCHED|P2P_DEADLOCK|MISSING_RANK|MISMATCH|INIT_STALL|GPU_FAULT'
scenarios=$("$NWGEN" --list | awk '{ print $1 }')
[ -n "$scenarios" ] || fail "nwgen --list lists nothing"
for s in $scenarios; do
	"$NWGEN" --scenario "$s" --ranks 8 --out "$T/$s" > "$T/$s.gen" 2>&1 || { cat "$T/$s.gen" >&2; fail "nwgen $s"; }
	case $s in healthy*) want=0 ;; *) want=1 ;; esac
	cli_ok $want "$T/$s.txt" diagnose "$T/$s"
	first=$(sed -n 2p "$T/$s.txt")
	echo "$s: $first" | cut -c1-120
	echo "$first" | grep -Eq "^($kinds): " || fail "$s: the first verdict line is not KIND: summary: $first"
	cli_ok $want "$T/$s.json" diagnose --json --trace "$T/$s.trace" "$T/$s"
	schema_ok "$T/$s.json" > /dev/null
	worst=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["worst"])' "$T/$s.json")
	[ "$worst" = "$(echo "$first" | cut -d: -f1)" ] || fail "$s: JSON worst $worst, text ${first%%:*}"
	n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["process_count"])' "$T/$s.json")
	python3 "$CLI_CHECK" trace "$T/$s.trace" > "$T/$s.trace.out" || fail "$s: the trace does not load"
	grep -q "^processes=$n " "$T/$s.trace.out" || fail "$s: $(cat "$T/$s.trace.out"), expected $n processes"
done

note "colour: only on a terminal, and not with NO_COLOR"
if command -v script > /dev/null; then
	esc=$(printf '\033')
	env -u NO_COLOR script -qec "'$NW_CLI' diagnose '$T/missing_rank'" /dev/null > "$T/tty.out" 2>&1
	grep -q "^${esc}\[1;31mMISSING_RANK${esc}\[0m: " "$T/tty.out" || { cat -v "$T/tty.out" | head >&2; fail "no red MISSING_RANK on a terminal"; }
	NO_COLOR=1 script -qec "'$NW_CLI' diagnose '$T/missing_rank'" /dev/null > "$T/tty2.out" 2>&1
	! grep -q "$esc" "$T/tty2.out" || fail "colour with NO_COLOR=1"
	! grep -q "$esc" "$T/missing_rank.txt" || fail "colour into a file"
else
	note "no script(1): colour not checked"
fi
