#!/bin/sh
# The graph and exec tables are allocated at the first capture of an NCCL
# op into a graph (interpose/graphs.h), not carried in .bss. An allocation
# that fails (the test build of the library fails it when
# NCCLWATCH_TEST_GRAPH_ALLOC_FAIL=1: the path a full address space takes)
# is treated as a full table: scenario graph-replay, 2 ranks, 10 launches
# each, ends as without the library (exit status 0), each rank keeps its
# CAPTURED AllReduce, records no GraphLaunch, counts graphs_untracked and
# says so once. The same run without the failure records its 10 launches
# (the hook, not the scenario, is what took them away).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
[ -z "$NW_SAN" ] || skip "the test build of the library is not built with sanitizers"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
HOOKED="$NW_BUILD/tests/hooks/lib/libncclwatch.so"
[ -x "$prog" ] || fail "$prog not built"
[ -f "$HOOKED" ] || fail "$HOOKED not built"

# run JOB [ENV...]: graph-replay on 2 ranks under the test library
run() {
	_job=$1; shift
	nw_bounded 60 env LD_PRELOAD="$HOOKED" NCCLWATCH_JOB="$_job" NCCLWATCH_KEEP=1 "$@" \
		"$prog" --case graph-replay --nranks 2 > "$T/$_job.out" 2>&1
	_rc=$?
	cat "$T/$_job.out"
	assert_eq "$_rc" 0 "$_job: exit status"
	assert_eq "$(segments "$NCCLWATCH_DIR/$_job" | grep -c .)" 2 "$_job: segment files"
}

note "the allocation fails: launches not recorded, counted, said once per rank"
run nomem NCCLWATCH_TEST_GRAPH_ALLOC_FAIL=1
assert_eq "$(grep -c '^ncclwatch: .*no memory for the tables of CUDA graphs holding NCCL ops' "$T/nomem.out")" 2 \
	"the failure said once by each rank"
for seg in $(segments "$NCCLWATCH_DIR/nomem"); do
	show "$seg" > "$T/seg.txt"
	assert_eq "$(grep ' AllReduce ' "$T/seg.txt" | grep -c 'state=CAPTURED')" 1 "nomem: CAPTURED AllReduce in $seg"
	assert_no_grep ' GraphLaunch ' "$T/seg.txt"
	assert_grep '^  graph_launches +0$' "$T/seg.txt"
	assert_grep '^  graphs_untracked +[1-9][0-9]*$' "$T/seg.txt"
done

note "the same run, allocation allowed: 10 launches recorded"
run allocated
assert_no_grep 'ncclwatch:' "$T/allocated.out"
for seg in $(segments "$NCCLWATCH_DIR/allocated"); do
	show "$seg" > "$T/seg.txt"
	assert_eq "$(grep -c ' GraphLaunch ' "$T/seg.txt")" 10 "allocated: GraphLaunch records in $seg"
	assert_grep '^  graph_launches +10$' "$T/seg.txt"
	assert_grep '^  graphs_untracked +0$' "$T/seg.txt"
done
echo ok
