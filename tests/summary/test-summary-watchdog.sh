#!/bin/sh
# The watchdog that prints a job's verdict on a stall also writes its
# host's summary next to report.txt (issue 24): <job dir>/<host>.nwsum.
# Real hangs of the scenario corpus under the preload on the simulation;
# the summary alone must give the verdict cases.txt wants (as report.txt
# does), and hold every rank of the job (one host here); once the job is
# dead, `ncclwatch gc` removes it with the job directory.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
host=$(hostname)
bad=
for c in skip-allgather ring-missing-recv-16m; do
	rm -rf "$T/rdv" "$NCCLSIM_DIR"
	mkdir -p "$NCCLSIM_DIR"
	corpus_case "$c" > "$T/case.lines" 2>&1
	sed 's/^/    /' "$T/case.lines"
	grep -q " FAIL " "$T/case.lines" && { bad="$bad $c(corpus)"; continue; }
	f="$NCCLWATCH_DIR/$c/$host.nwsum"
	[ -s "$f" ] || { bad="$bad $c(no $host.nwsum next to report.txt)"; continue; }
	"$NW_CLI" diagnose --json "$f" > "$T/$c.json" 2> "$T/$c.err"
	l=$(corpus_line "$c")
	r=$(python3 "$CORPUS_DIR/judge.py" json "$T/$c.json" "$(echo "$l" | cut -d'|' -f5)" "$(echo "$l" | cut -d'|' -f6)" \
		"$(echo "$l" | cut -d'|' -f7)" "$(echo "$l" | cut -d'|' -f8)")
	echo "$c watchdog's summary ($(stat -c %s "$f") bytes): $r"
	case $r in ok*) ;; *) bad="$bad $c($r)" ;; esac
	n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["jobs"][0]["process_count"])' "$T/$c.json")
	want=$(echo "$l" | cut -d'|' -f3)
	[ "$n" = "$want" ] || bad="$bad $c($n processes in the summary, not $want)"
	# the job is dead (corpus_case killed it): gc takes the summary with
	# the rest of what ncclwatch wrote, and the job directory goes
	"$NW_CLI" gc "$NCCLWATCH_DIR" > "$T/$c.gc" 2>&1
	[ ! -e "$NCCLWATCH_DIR/$c" ] || bad="$bad $c(gc left $(ls "$NCCLWATCH_DIR/$c" | tr '\n' ' '))"
done
[ -z "$bad" ] || fail "the watchdog's summaries:$bad"
echo ok
