#!/bin/sh
# tests/corpus/cases.txt itself: at least 60 cases and 10 healthy ones,
# unique names, known classes and ends, 2 to 8 ranks, rank sets in the
# "0-2,5" form, a kind or a list of the kinds a case allows ("A,B": the
# hang generator's cases, where the first verdict may be either), every class of issue 11 and every verdict kind present;
# every case of the scenario program is used and every scenario a line
# names exists (scenario --list); the judge reads both outputs it is given
# (a JSON diagnosis and a watchdog text) as they are written.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
[ -x "$CORPUS_SCENARIO" ] || fail "$CORPUS_SCENARIO is not built"
nw_use_sim
lines="$T/lines"
grep -v '^[[:space:]]*#' "$CORPUS_CASES" | grep '|' | sed 's/[[:space:]]*|[[:space:]]*/|/g; s/^[[:space:]]*//' > "$lines"

n=$(grep -c . "$lines")
healthy=$(awk -F'|' '$5 == "HEALTHY"' "$lines" | grep -c .)
note "$n cases, $healthy healthy"
[ "$n" -ge 60 ] || fail "only $n cases"
[ "$healthy" -ge 10 ] || fail "only $healthy healthy cases"
dups=$(cut -d'|' -f2 "$lines" | sort | uniq -d)
[ -z "$dups" ] || fail "case names used twice: $dups"
awk -F'|' '
	NF != 10 { print "line with " NF " fields: " $0; bad = 1 }
	$1 !~ /^(order|death|capture|desync|p2p|init|mismatch|stall|healthy|trainer|hangs|procs|gen|jobs)$/ { print "class: " $0; bad = 1 }
	$3 !~ /^[2-8]$/ { print "ranks: " $0; bad = 1 }
	$4 !~ /^(hang|quiet|either|post|[0-9]+)$/ { print "end: " $0; bad = 1 }
	$5 !~ /^(HEALTHY|IDLE|TRANSPORT_STALL|STREAM_BLOCKED|MISSING_RANK|P2P_UNMATCHED|P2P_DEADLOCK|MISMATCH|INIT_STALL|GPU_FAULT)(,(TRANSPORT_STALL|STREAM_BLOCKED|MISSING_RANK|P2P_UNMATCHED|P2P_DEADLOCK|MISMATCH|INIT_STALL|GPU_FAULT))*$/ { print "kind: " $0; bad = 1 }
	$6 !~ /^(-|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$/ || $7 !~ /^(-|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$/ ||
	$8 !~ /^(-|[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*)$/ { print "rank set: " $0; bad = 1 }
	$5 == "HEALTHY" && ($6 != "-" || $7 != "-" || $8 != "-") { print "healthy with ranks: " $0; bad = 1 }
	$10 == "" { print "no why: " $0; bad = 1 }
	END { exit bad }' "$lines" || fail "malformed lines in $CORPUS_CASES"
for k in HEALTHY IDLE TRANSPORT_STALL STREAM_BLOCKED MISSING_RANK P2P_UNMATCHED P2P_DEADLOCK MISMATCH INIT_STALL GPU_FAULT; do
	awk -F'|' -v k=$k '$5 == k && $4 != "post"' "$lines" | grep -q . || fail "no process case of kind $k"
done
for c in order death capture desync p2p init mismatch stall healthy trainer hangs procs gen jobs; do
	[ -n "$(corpus_names $c)" ] || fail "no case of class $c"
done

"$CORPUS_SCENARIO" --list | awk '{print $1}' > "$T/programs"
[ "$(grep -c . "$T/programs")" -ge 40 ] || fail "scenario --list: $(cat "$T/programs")"
# every job's scenario (a command "CMD ++ CMD2" runs two jobs)
awk -F'|' '{ n = split($9, w, " "); s = 1; for (i = 1; i <= n; i++) { if (w[i] == "++") s = 1; else if (s && w[i] == "scenario") { print w[i + 1]; s = 0 } } }' "$lines" | sort -u > "$T/used"
unused=$(sort "$T/programs" | comm -23 - "$T/used")
[ -z "$unused" ] || fail "scenario cases no line of cases.txt runs: $unused"
unknown=$(sort "$T/programs" | comm -13 - "$T/used")
[ -z "$unknown" ] || fail "cases.txt runs scenarios that do not exist: $unknown"
"$CORPUS_SCENARIO" --case no-such-case --nranks 2 > "$T/bad.out" 2>&1 && fail "an unknown case ran"
assert_grep '^scenario: no such case' "$T/bad.out"
"$CORPUS_SCENARIO" --case order-subgroup --nranks 4 > "$T/bad.out" 2>&1 && fail "a case ran with too few ranks"
assert_grep 'needs 6 to 8 ranks, not 4' "$T/bad.out"

note "the judge"
cat > "$T/v.json" <<'J'
{"jobs": [{"verdicts": [
 {"kind": "MISSING_RANK", "culprits": [3], "waiting": [0, 1, 2], "unknown": []},
 {"kind": "MISSING_RANK", "culprits": [1, 2], "waiting": [0], "unknown": []}]}]}
J
python3 "$CORPUS_DIR/judge.py" json "$T/v.json" MISSING_RANK 3 0-2 - > "$T/j"
assert_grep '^FAIL kind=MISSING_RANK culprits=3 waiting=0-2 unknown=- verdicts=2 blames=1-2 ' "$T/j"
sed 's/"culprits": \[1, 2\]/"culprits": [3]/' "$T/v.json" > "$T/v2.json"
python3 "$CORPUS_DIR/judge.py" json "$T/v2.json" MISSING_RANK 3 0-2 - > "$T/j"
assert_grep '^ok kind=MISSING_RANK culprits=3 waiting=0-2 unknown=- verdicts=2 ' "$T/j"
cat > "$T/v.txt" <<'J'
job x: 4 processes read
HEALTHY: nothing
job x: 4 processes read, world size 4, ranks missing: none, timeout 2s
TRANSPORT_STALL: every rank of comm 00 started AllReduce #5
  op: AllReduce #5 on comm 00 (4 ranks)
  culprits: - (the communicator or its link, not a rank)
  waiting: 0-1,3
  evidence:
    ranks 0-1,3: STARTED
environment differences: none
J
python3 "$CORPUS_DIR/judge.py" text "$T/v.txt" TRANSPORT_STALL - 0-1,3 - > "$T/j"
assert_grep '^ok kind=TRANSPORT_STALL culprits=- waiting=0-1,3 unknown=- ' "$T/j"
python3 "$CORPUS_DIR/judge.py" text "$T/none.txt" HEALTHY - - - > "$T/j"
assert_grep '^ok kind=HEALTHY ' "$T/j"
# a diagnose that gave no JSON: the judge shows why (corpus-lib.sh's note)
echo "diagnose exited 126: sh: 1: ncclwatch: Permission denied" > "$T/note.json"
python3 "$CORPUS_DIR/judge.py" json "$T/note.json" MISSING_RANK 3 0-2 - > "$T/j"
assert_grep '^FAIL diagnose exited 126: sh: 1: ncclwatch: Permission denied \(want ' "$T/j"
python3 "$CORPUS_DIR/judge.py" attach "$T/note.json" MISSING_RANK 3 0-2 - > "$T/j"
assert_grep '^FAIL diagnose exited 126: ' "$T/j"

