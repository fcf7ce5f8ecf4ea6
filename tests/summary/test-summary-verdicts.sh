#!/bin/sh
# Per-host summaries give the verdict the segments give (issue 24). Real
# hang jobs of the scenario corpus (tests/corpus/cases.txt) run under the
# preload on the simulation, each judged in its usual views by
# corpus-lib.sh; then, post-mortem, their segments are cut in two "hosts"
# (the first half of the files and the rest), `ncclwatch summary -o FILE
# SEG...` writes one summary per half, and `ncclwatch diagnose --json`
# must give, from the two summaries and from one summary beside the other
# half's segments, the same JSON document as from the segments (only
# files_read, the count of files given, differs), and the verdict
# cases.txt wants. A summary of at most 8 ranks must be KBs, not MBs.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
# MISSING_RANK, death, MISMATCH, P2P_UNMATCHED, STREAM_BLOCKED, GPU_FAULT,
# INIT_STALL (a rank with no file: unknown), HEALTHY
: "${SUMMARY_CASES:=skip-allgather die-inside mm-opkind ring-missing-recv-16m hostfn-block gpufault noinit clean-end}"

same_json() {   # same_json A B: the documents without files_read (else the first lines that differ)
	python3 - "$1" "$2" <<'PY'
import difflib, json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d.pop("files_read", None)
if a != b:
    da, db = (json.dumps(d, indent=1, sort_keys=True).splitlines() for d in (a, b))
    print("\n".join(list(difflib.unified_diff(da, db, lineterm="", n=1))[:30]))
    sys.exit(1)
PY
}

bad=
for c in $SUMMARY_CASES; do
	# each case with a fresh rendezvous and simulation directory, as
	# corpus_run gives each its own process
	rm -rf "$T/rdv" "$NCCLSIM_DIR"
	mkdir -p "$NCCLSIM_DIR"
	corpus_case "$c" > "$T/case.lines" 2>&1
	sed 's/^/    /' "$T/case.lines"
	grep -q " FAIL " "$T/case.lines" && { bad="$bad $c(corpus)"; continue; }
	JD="$NCCLWATCH_DIR/$c"
	find "$JD" -name '*.seg' | sort > "$T/segs"
	n=$(grep -c . "$T/segs")
	[ "$n" -ge 2 ] || { bad="$bad $c(only $n segments)"; continue; }
	half=$((n / 2))
	head -n "$half" "$T/segs" > "$T/hostA"
	tail -n "+$((half + 1))" "$T/segs" > "$T/hostB"
	S="$T/sum/$c"
	mkdir -p "$S"
	# shellcheck disable=SC2046
	"$NW_CLI" summary -o "$S/hostA.nwsum" $(cat "$T/hostA") 2> "$T/sumA.err" || { bad="$bad $c(summary A: $(head -c 200 "$T/sumA.err"))"; continue; }
	# shellcheck disable=SC2046
	"$NW_CLI" summary -o "$S/hostB.nwsum" $(cat "$T/hostB") 2> "$T/sumB.err" || { bad="$bad $c(summary B: $(head -c 200 "$T/sumB.err"))"; continue; }
	grep -Eq "wrote $S/hostA.nwsum: [1-9][0-9]* process" "$T/sumA.err" || { bad="$bad $c(summary line: $(cat "$T/sumA.err"))"; continue; }
	for f in "$S/hostA.nwsum" "$S/hostB.nwsum"; do
		sz=$(stat -c %s "$f")
		[ "$sz" -lt 65536 ] || bad="$bad $c($(basename "$f") is $sz bytes)"
	done
	"$NW_CLI" diagnose --json "$JD" > "$T/$c.seg.json" 2> /dev/null
	s1=$?
	"$NW_CLI" diagnose --json "$S" > "$T/$c.sum.json" 2> "$T/$c.sum.err"
	s2=$?
	# shellcheck disable=SC2046
	"$NW_CLI" diagnose --json "$S/hostA.nwsum" $(cat "$T/hostB") > "$T/$c.mix.json" 2> "$T/$c.mix.err"
	s3=$?
	echo "$c: $n segments ($(stat -c %s "$S/hostA.nwsum") + $(stat -c %s "$S/hostB.nwsum") bytes of summaries), exit $s1 / $s2 / $s3"
	[ "$s1" = "$s2" ] && [ "$s1" = "$s3" ] || bad="$bad $c(exit $s1 segments, $s2 summaries, $s3 mixed: $(head -c 200 "$T/$c.sum.err"))"
	same_json "$T/$c.seg.json" "$T/$c.sum.json" || bad="$bad $c(summaries: other JSON)"
	same_json "$T/$c.seg.json" "$T/$c.mix.json" || bad="$bad $c(mixed: other JSON)"
	# and the verdict cases.txt wants, from the summaries alone
	l=$(corpus_line "$c")
	r=$(python3 "$CORPUS_DIR/judge.py" json "$T/$c.sum.json" "$(echo "$l" | cut -d'|' -f5)" "$(echo "$l" | cut -d'|' -f6)" \
		"$(echo "$l" | cut -d'|' -f7)" "$(echo "$l" | cut -d'|' -f8)")
	echo "$c summaries $r"
	case $r in ok*) ;; *) bad="$bad $c(summaries: $r)" ;; esac
done
[ -z "$bad" ] || fail "summaries differ from segments in:$bad"
echo "ok: the same diagnosis from summaries, from a mix, and from segments"
