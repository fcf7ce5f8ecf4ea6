#!/bin/sh
# The scenario corpus (tests/corpus/cases.txt), class jobs: several jobs
# on one host (issue 21, shape 6). Each case's job runs beside a second
# job (hanging, or healthy) on the same simulated host and NCCL RAS port;
# the case's job must give its verdict in every view (live, dead,
# watchdog; then attach, without the preload, over both jobs' processes:
# exact, another job's RAS answer never taken for this job's), naming only
# its own culprits, and the "jobs" view must find the two
# jobs' files in two directories, each its job's own (no launcher a job).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
corpus_test jobs
names=$(corpus_names jobs)
# shellcheck disable=SC2086
CORPUS_VIEW=attach corpus_run $names > "$T/attach-lines"
cat "$T/attach-lines"
for n in $names; do
	for v in live dead watchdog jobs; do grep -q "^$n $v ok" "$T/lines" || fail "$n: view $v not ok"; done
	grep -q "^$n attach ok exact " "$T/attach-lines" || fail "$n: attach did not name exactly its culprits"
	grep -q "^$n jobs ok " "$T/attach-lines" || fail "$n: attach's job directories"
done
assert_no_grep ' FAIL ' "$T/attach-lines"
