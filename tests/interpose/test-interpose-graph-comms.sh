#!/bin/sh
# A captured op on a communicator the library does not follow (its comm
# table full) still gets its event-record node (issue 22's leftover):
# scenario graph-replay with SCENARIO_GRAPH_COMMS=1 captures the same
# AllReduce on the world comm (graph A) and on a split of it (graph B),
# under NCCLWATCH_COMMS=1 (the library follows the world comm only). Both
# graphs must have the same number of nodes, and cuGraphExecUpdate of A's
# exec from B must succeed as it does without the library; before, B had
# no node of ours and the update failed (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
# topology changed): the library changed what CUDA does.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"

# check OUT: per rank, the same node count for both graphs and the update done
check() {
	for r in 0 1; do
		nodes=$(grep "^rank $r: graph nodes: " "$1" | sed -E 's/.* world ([0-9]+), split ([0-9]+)$/\1 \2/')
		[ -n "$nodes" ] || fail "rank $r: no node counts in $1"
		set -- "$1" $nodes
		assert_eq "$3" "$2" "rank $r: nodes of the split's graph against the world's"
		assert_grep "^rank $r: update from the split's graph: 0 \\(result 0\\)" "$1"
	done
}

note "without the library"
nw_bounded 120 env SCENARIO_GRAPH_COMMS=1 "$prog" --case graph-replay --nranks 2 > "$T/plain.out" 2>&1
rc=$?
cat "$T/plain.out"
assert_eq "$rc" 0 "exit status without the library"
check "$T/plain.out"

note "under the library, NCCLWATCH_COMMS=1: the split is not followed"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=comms NCCLWATCH_KEEP=1 NCCLWATCH_COMMS=1 \
	SCENARIO_GRAPH_COMMS=1 "$prog" --case graph-replay --nranks 2 > "$T/watched.out" 2>&1
rc=$?
cat "$T/watched.out"
assert_eq "$rc" 0 "exit status under the library"
assert_grep 'ncclwatch: comm table full: its 1 slots' "$T/watched.out"
check "$T/watched.out"
assert_eq "$(segments "$NCCLWATCH_DIR/comms" | grep -c .)" 2 "segment files"
for seg in $(segments "$NCCLWATCH_DIR/comms"); do
	show "$seg" > "$T/seg.txt"
	# A's launch (replay 1) is recorded; after the update from B the exec
	# runs an op the library does not follow: no record
	assert_eq "$(grep -c ' GraphLaunch ' "$T/seg.txt")" 1 "GraphLaunch records in $seg"
done
echo "ok"
