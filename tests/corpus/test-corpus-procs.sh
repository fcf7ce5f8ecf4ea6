#!/bin/sh
# The scenario corpus (tests/corpus/cases.txt), class procs: processes that
# drive several ranks (2 x 2 and 2 x 4, one thread issuing its ranks' ops
# in a group, or a thread per rank), as JAX runs a process per host. Every
# case in every view (live, dead, watchdog) must give the first verdict,
# culprits, waiting and unknown sets cases.txt gives, by rank, and no
# verdict may blame a rank outside the culprits.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
corpus_test procs
