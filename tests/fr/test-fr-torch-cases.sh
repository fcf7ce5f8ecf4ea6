#!/bin/sh
# The scenarios of PyTorch's own analyzer tests
# (test/distributed/flight_recorder/test_fr_analysis.py), rebuilt as dumps
# by tests/gen/frgen.py (their situations, not their code): the same or
# better answers. Their unit data leave every sequence number at 0; ours
# are numbered as a real job numbers them.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/fr/fr-lib.sh"

# their case 1: matched all_reduce on the default group and on a group each
# rank made alone (same name "1", different ranks: two different comms)
fr_expect torch-matched HEALTHY -
# their cases 2, 3, 5: coalesced collectives, matched
fr_expect torch-allreduce-coalesced HEALTHY -
fr_expect torch-broadcast-coalesced HEALTHY -
fr_expect torch-reduce-scatter-coalesced HEALTHY -
# their case 4: the slow path's all-gather with an uneven member: they
# report the collective as failing its check; so do we. Two ranks, one
# each way: no majority exists and no earlier op repeats to tell which is
# the program as written (verdicts_coll.c's tie rule), so both ranks are
# named and the summary says it cannot tell which (torch's analyzer names
# rank 1 only because it compares with the first rank read).
fr_expect torch-uneven-allgather MISMATCH 0,1
assert_grep 'count 41' "$T/torch-uneven-allgather.json"
assert_grep 'cannot tell which' "$T/torch-uneven-allgather.json"
# their case 6: an empty coalescing block on rank 0: as a hang, rank 1
# waits in the group's op that rank 0 never issued
fr_expect torch-empty-coalesced MISSING_RANK 0
# their match_one_event cases: output size and output dtype mismatches
# (with a third rank, so a majority exists), gather's root-only output
fr_expect torch-output-size MISMATCH 2
fr_expect torch-output-dtype MISMATCH 1
fr_expect torch-gather-root HEALTHY -
echo ok
