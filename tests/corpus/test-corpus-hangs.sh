#!/bin/sh
# The scenario corpus (tests/corpus/cases.txt), class hangs: the
# hand-written hang programs of tests/hangs/ as corpus rows, so that every
# view (live, dead, watchdog) judges them by the same rubric as the other
# cases. Their own tests (tests/hangs/test-hang-*.sh) check the words.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
corpus_test hangs
