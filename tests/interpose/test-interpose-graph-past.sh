#!/bin/sh
# Per-op event-record nodes (issue 22) never depend on the library's state:
# two graphs of the same captured code have the same topology, so
# cuGraphExecUpdate between them succeeds, as it does without the preload.
# SCENARIO_GRAPH_PAST=1 scenario graph-update-lost, 2 ranks, on the
# simulation (whose cuGraphExecUpdate refuses another node count or type, as
# CUDA does): every graph holds AllReduce, a group of two, then 66 more (69
# ops: past the 64 per-op events of a graph); 255 graphs of one AllReduce
# fill the graph table (256) in between. The exec of a graph in the table is
# updated from a graph past it, the exec of a graph past it from one in it.
# 1. default (per-op events on): both updates succeed, every graph has the
#    same node count, 68 more than with NCCLWATCH_GRAPH_OP_EVENTS=0 (a node
#    after each of the 67 single ops, one after the group);
# 2. NCCLWATCH_GRAPH_OP_EVENTS=0 and no preload at all: the same node count,
#    the updates succeed;
# 3. the first launch of the exec of the first graph and the launch of the
#    exec updated from the graph in the table are recorded (69 ops).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"

# run NAME [ENV...]: the job to its end (exit 0 expected), output in $T/NAME.out
run() {
	_name=$1
	shift
	nw_bounded 180 env "$@" NCCLWATCH_JOB="$_name" NCCLWATCH_KEEP=1 SCENARIO_GRAPH_PAST=1 \
		"$prog" --case graph-update-lost --nranks 2 > "$T/$_name.out" 2>&1
	_rc=$?
	grep -v '^corpus: rank [0-9]* step' "$T/$_name.out" | head -n 40
	assert_eq "$_rc" 0 "$_name: exit status"
	for r in 0 1; do
		for what in "in the table" "past the table" "past the table, for the update" \
			"in the table, for the update"; do
			assert_eq "$(grep -c "^rank $r: graph $what: [0-9]* nodes$" "$T/$_name.out")" 1 \
				"$_name: rank $r: graph $what"
		done
		assert_grep "^rank $r: update of the exec of a graph in the table from one past it: 0 \\(result 0\\)" "$T/$_name.out"
		assert_grep "^rank $r: update of the exec of a graph past the table from one in it: 0 \\(result 0\\)" "$T/$_name.out"
	done
}

# nodes NAME: the node counts of the job's graphs, distinct, one a line
nodes() { sed -nE 's/^rank [0-9]+: graph .*: ([0-9]+) nodes$/\1/p' "$T/$1.out" | sort -u; }

note "graph-past: per-op events on (the default)"
run on LD_PRELOAD="$(nw_preload)"
assert_eq "$(nodes on | grep -c .)" 1 "on: every graph has the same node count ($(nodes on | tr '\n' ' '))"
assert_no_grep 'cannot add an event-record node' "$T/on.out"
assert_grep 'ncclwatch: more than 256 CUDA graphs hold NCCL ops at once' "$T/on.out"

note "graph-past: NCCLWATCH_GRAPH_OP_EVENTS=0, and no preload"
run off LD_PRELOAD="$(nw_preload)" NCCLWATCH_GRAPH_OP_EVENTS=0
run plain NCCLWATCH_DISABLE=1
assert_eq "$(nodes off | grep -c .)" 1 "off: one node count"
assert_eq "$(nodes off)" "$(nodes plain)" "off: the node count without the library"
assert_eq "$(($(nodes on) - $(nodes off)))" 68 "event-record nodes of a graph of 67 single ops and a group"

note "graph-past: the exec updated from the graph in the table is followed"
for seg in $(segments "$NCCLWATCH_DIR/on"); do
	show "$seg" > "$T/seg.txt"
	grep ' GraphLaunch .* ops=69 ' "$T/seg.txt"
	assert_eq "$(grep -Ec ' GraphLaunch .* ops=69 first=AllReduce .* state=COMPLETED ' "$T/seg.txt")" 2 \
		"$seg: the recorded launches of the wide graphs (the first exec's first, the second's after its update)"
done
echo "ok"
