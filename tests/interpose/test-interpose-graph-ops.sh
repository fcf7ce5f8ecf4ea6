#!/bin/sh
# Per-op state inside a CUDA graph replay (issue 22), on the simulation,
# under the preload: scenario graph-replay with SCENARIO_GRAPH_OPS=1 captures AllReduce #5, #6, a host
# function, #7, #8, #9 into one graph per rank and launches it once; rank
# 1's host function never returns, so rank 0's replay 1 stands in its op 3
# (#7, waiting for rank 1). With the per-op events (the default), rank 0's
# file says so: `show` prints "replay 1 of graph #G: op 3 of 5 STARTED" and
# ops 1-2 COMPLETED, 4-5 ENQUEUED; `status` names the op; the trace JSON
# (`diagnose --trace`) carries replay_op 3; NCCLWATCH_GRAPH_OP_EVENTS=1
# says the same. NCCLWATCH_GRAPH_OP_EVENTS=0 adds no event-record node: the
# replay says nothing of its ops. With #5 and #6 captured in one group
# (SCENARIO_GRAPH_OPS=group) the node after the group stands for both: the
# replay still stands in op 3.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"
export NCCLWATCH_TIMEOUT=2

# run JOB [ENV...]: start graph-ops, wait for both ranks to park and for the
# watchdog to see the stall; leaves rank 0's show output in $T/JOB.seg0
run() {
	_job=$1
	shift
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=$_job NCCLWATCH_KEEP=1 SCENARIO_GRAPH_OPS=1 "$@" \
		"$prog" --case graph-replay --nranks 2 > "$T/$_job.out" 2>&1
	parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/$_job.out")" -ge 2 ]; }
	nw_until 60 parked || { cat "$T/$_job.out"; fail "$_job: the ranks did not park"; }
	stalled() { grep -q 'ncclwatch: stall: rank=0 .*op=GraphLaunch' "$T/$_job.out"; }
	nw_until 60 stalled || { cat "$T/$_job.out"; fail "$_job: no stall line for rank 0's replay"; }
	for seg in $(segments "$NCCLWATCH_DIR/$_job"); do
		show "$seg" > "$T/seg.txt"
		rank=$(grep '^  comm 0 ' "$T/seg.txt" | field rank | cut -d/ -f1)
		cp "$T/seg.txt" "$T/$_job.seg$rank"
	done
	[ -f "$T/$_job.seg0" ] || fail "$_job: no file for rank 0"
}

note "graph-ops: rank 0's replay 1 stands in op 3 of 5 (per-op events by default)"
run ops
cat "$T/ops.out"
grep 'GraphLaunch\|replay 1 of' "$T/ops.seg0"
assert_no_grep 'ncclwatch: .*(error|failed|not recorded)' "$T/ops.out"
assert_grep ' GraphLaunch graph=#[0-9]+ exec=0x[0-9a-f]+ replay=1 ops=5 first=AllReduce .* state=STARTED ' "$T/ops.seg0"
assert_grep '^    replay 1 of graph #[0-9]+: op 3 of 5 STARTED; ops: 1=COMPLETED 2=COMPLETED 3=STARTED 4=ENQUEUED 5=ENQUEUED$' "$T/ops.seg0"
"$NW_CLI" status "$NCCLWATCH_DIR/ops" > "$T/status.txt" 2>&1
cat "$T/status.txt"
assert_grep 'last=GraphLaunch#1\(graph#[0-9]+:AllReduce\)\(op 3 of 5 STARTED\)' "$T/status.txt"
"$NW_CLI" diagnose --trace "$T/trace.json" "$NCCLWATCH_DIR/ops" > "$T/diagnose.txt" 2>&1
cat "$T/diagnose.txt"
assert_grep "in replay 1 .*\\(op 3 of 5 STARTED for " "$T/diagnose.txt"
"$NW_CLI" diagnose --json "$NCCLWATCH_DIR/ops" > "$T/diagnose.json" 2>&1
assert_grep "op 3 of 5 STARTED" "$T/diagnose.json"
assert_grep "ncclwatch: stall: rank=0 .*op=GraphLaunch seq=1 .*graph=#[0-9]+ first=AllReduce in_op=3/5 state=STARTED " "$T/ops.out"
assert_grep '"replay_op": ?3' "$T/trace.json"
assert_grep '"replay_op_state": ?"STARTED"' "$T/trace.json"
kill -KILL "-$NW_PID" 2>/dev/null

note "graph-ops, NCCLWATCH_GRAPH_OP_EVENTS=1: the same"
run on NCCLWATCH_GRAPH_OP_EVENTS=1
assert_grep '^    replay 1 of graph #[0-9]+: op 3 of 5 STARTED; ops: 1=COMPLETED 2=COMPLETED 3=STARTED 4=ENQUEUED 5=ENQUEUED$' "$T/on.seg0"
kill -KILL "-$NW_PID" 2>/dev/null

note "graph-ops, #5 and #6 captured in a group: one node after it, for both"
run group SCENARIO_GRAPH_OPS=group
assert_grep '^    replay 1 of graph #[0-9]+: op 3 of 5 STARTED; ops: 1=COMPLETED 2=COMPLETED 3=STARTED 4=ENQUEUED 5=ENQUEUED$' "$T/group.seg0"
kill -KILL "-$NW_PID" 2>/dev/null

note "graph-ops, NCCLWATCH_GRAPH_OP_EVENTS=0: no per-op state"
run off NCCLWATCH_GRAPH_OP_EVENTS=0
assert_grep ' GraphLaunch graph=#[0-9]+ exec=0x[0-9a-f]+ replay=1 ops=5 first=AllReduce .* state=STARTED ' "$T/off.seg0"
assert_no_grep 'replay 1 of graph' "$T/off.seg0"
kill -KILL "-$NW_PID" 2>/dev/null
echo "ok"
