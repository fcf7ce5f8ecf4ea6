#!/bin/sh
# The corpus as a user meets a job started WITHOUT ncclwatch (issue 21):
# each case runs with no preload and NCCL's RAS on, and once it hangs
# `ncclwatch attach --tree` takes its stacks and RAS's report; `diagnose`
# on what attach wrote is judged (tests/corpus/judge.py, attach rubric).
# No verdict may blame a rank outside the culprits (and the ranks the
# preload could not know about); the cases below, one per way attach
# decides, must name exactly their culprits: a rank elsewhere while the
# others wait (desync-sym, trainer-skip), a death inside a collective
# (die-inside), a host function that never returns (hostfn-block), most
# of the job gone while one rank runs an extra op (extra-step), a rank that
# never calls NCCL (noinit), a size mismatch whose launch counts differ
# (mm-count), and a stuck transfer (stall: counts equal, every rank
# inside NCCL). `sh tests/corpus/run-corpus.sh` with CORPUS_VIEW=attach
# runs the whole corpus this way (the bench's figure).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
export CORPUS_VIEW=attach
cases="desync-sym trainer-skip die-inside hostfn-block extra-step noinit mm-count stall"
# shellcheck disable=SC2086
corpus_run $cases > "$T/lines"
cat "$T/lines"
for c in $cases; do
	grep -q "^$c attach ok exact " "$T/lines" || fail "$c: not exact from attach"
done
assert_no_grep ' FAIL ' "$T/lines"
