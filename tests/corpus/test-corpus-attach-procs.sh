#!/bin/sh
# The attach view (a job started WITHOUT ncclwatch, `ncclwatch attach
# --tree` then `diagnose`, judge.py's attach rubric) on processes of
# several ranks (issue 20): 2 processes x 2 ranks and 2 x 4, the ranks'
# calls from one thread or from a thread each. A snapshot is split into
# the ranks NCCL RAS names with its pid, so every verdict names ranks: no
# verdict may blame a rank that only waits, and where RAS's counts or
# liveness decide, the culprits are exact: a rank one collective ahead
# (procs2x2-grouped-extra, hang-thread-ranks: its process's other rank
# waits), a thread that sleeps while its process's others wait
# (procs2x4-threads-sleep), processes gone (the -die and -exit cases), a
# rank one thread drives with three others and never launches for
# (procs2x4-grouped-skip: the thread's wait is not that rank's own);
# a host function that blocks one of two ranks driven by one thread names
# no rank (procs2x2-grouped-hostfn: whose stream is not known).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
export CORPUS_VIEW=attach
exact="procs2x2-grouped-extra hang-thread-ranks procs2x4-threads-sleep procs2x2-grouped-die procs2x4-threads-die procs2x2-threads-exit procs2x4-grouped-skip"
others="procs2x2-grouped-hostfn procs2x2-threads-skip procs2x2-threads-peer procs2x4-threads-order"
# shellcheck disable=SC2086
corpus_run $exact $others > "$T/lines"
cat "$T/lines"
for c in $exact; do
	grep -q "^$c attach ok exact " "$T/lines" || fail "$c: not exact from attach"
done
for c in $others; do
	grep -q "^$c attach ok " "$T/lines" || fail "$c: no verdict judged from attach"
done
assert_no_grep ' FAIL ' "$T/lines"
