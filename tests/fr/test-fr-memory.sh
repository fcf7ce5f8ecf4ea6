#!/bin/sh
# Reading a Flight Recorder dump is bounded by a multiple of its size. The
# JSON form is parsed by jansson and converted into the tree pickle.c
# builds; each of jansson's values is freed once converted, so the two
# trees are never whole at once (they were: 14 times the dump). A dump of
# 50,000 entries of one rank (frgen.py, about 27 MB as JSON, 13 MB as a
# pickle) must peak below 10 times its size plus 32 MiB in both forms (the
# tree takes about 7 times a pickle: docs/flight-recorder.md); the
# verdict proves it was read. A bound on memory, not on time.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/fr/fr-lib.sh"

# maxrss OUT CMD...: CMD's stdout in OUT; prints its peak resident set (KB).
maxrss() {
	"$PY" -c '
import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}

for form in json pickle; do
	rm -rf "$T/gen" "$T/$form"
	"$PY" "$FRGEN" missing-rank "$T/gen" --ranks 2 --entries 50000 $([ $form = json ] && echo --json) > /dev/null || fail "frgen"
	mkdir "$T/$form"
	mv "$T/gen/comm_lib_trace_rank_0" "$T/$form/"   # rank 0 alone: one dump read
	size=$(stat -c %s "$T/$form/comm_lib_trace_rank_0")
	bound_kb=$(( (10 * size + 32 * 1024 * 1024) / 1024 ))
	kb=$(maxrss "$T/$form.out" "$NW_CLI" diagnose "$T/$form")
	echo "$form: $size bytes, peak $kb KB (bound $bound_kb KB)"
	assert_grep '^job .*: 1 process read' "$T/$form.out"
	assert_grep '^  op: AllReduce #50001 ' "$T/$form.out"
	[ "$kb" -lt "$bound_kb" ] || fail "diagnose of a $size-byte $form dump peaked at $kb KB (bound $bound_kb KB)"
done
