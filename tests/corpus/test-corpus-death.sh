#!/bin/sh
# The scenario corpus (tests/corpus/cases.txt), classes: death init --
# processes that die or exit, and init. Every case in every view (live, dead, watchdog; post for
# generated ones) must give the first verdict, culprits, waiting and
# unknown sets cases.txt gives, and no verdict may blame a rank outside
# the culprits. The lines are those of tests/corpus/run-corpus.sh.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
names=$(corpus_names death init)
[ -n "$names" ] || fail "no case of class death init in $CORPUS_CASES"
# shellcheck disable=SC2086
corpus_run $names > "$T/lines"
st=$?
cat "$T/lines"
[ $st = 0 ] || fail "$(grep -c ' FAIL ' "$T/lines") of $(grep -c . "$T/lines") views wrong: $(grep ' FAIL ' "$T/lines" | cut -d' ' -f1 | sort -u | tr '\n' ' ')"
