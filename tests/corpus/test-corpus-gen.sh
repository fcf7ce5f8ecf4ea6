#!/bin/sh
# The scenario corpus (tests/corpus/cases.txt), classes: gen -- generated
# segments (post mortem only). Every case in every view (live, dead,
# watchdog; post for generated ones) must give the first verdict, culprits,
# waiting and unknown sets cases.txt gives, and no verdict may blame a rank
# outside the culprits. The lines are those of tests/corpus/run-corpus.sh;
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
corpus_test gen
