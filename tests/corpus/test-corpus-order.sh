#!/bin/sh
# The scenario corpus (tests/corpus/cases.txt), classes: order capture
# desync -- stream order, graph capture and desync across communicators.
# Every case in every view (live, dead, watchdog; post for generated ones)
# must give the first verdict, culprits, waiting and unknown sets cases.txt
# gives, and no verdict may blame a rank outside the culprits. The lines are
# those of tests/corpus/run-corpus.sh; cases in
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
corpus_test order capture desync
