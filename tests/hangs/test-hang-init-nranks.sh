#!/bin/sh
# hang-init-nranks: rank 3 creates the world comm with nranks 5, the others
# with 4; everybody stays inside ncclCommInitRank. INIT_STALL on the comm,
# culprit 3 (the other size), waiting 0-2.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

hang_start init-nranks 4
wait_for_ranks $WD_WAIT "$T/out" ': init with nranks ' 0 1 2 3
hang_verdict '^verdict INIT_STALL comm=[0-9a-f]{16} op=CommInit seq=0 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^summary rank 3 called ncclCommInitRank of comm [0-9a-f]{16} with another nranks than ranks 0-2 \(4\)' "$T/dead"
assert_grep '^evidence rank 3: called ncclCommInitRank with nranks 5; ' "$T/dead"
assert_grep '^  culprits: 3$' "$T/diag"
