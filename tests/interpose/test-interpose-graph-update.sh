#!/bin/sh
# cuGraphExecUpdate under the preload, on the simulation (issue 22): an
# updated executable graph runs the new graph's ops, and its launches say
# so. scenario graph-update, 3 ranks: every rank uploads its graph of
# AllReduce #5 and launches it twice; between the two an update from a
# graph of another topology fails (CUDA leaves the exec as it was); then
# every rank updates the exec from a graph of AllReduce #6, rank 1's with
# half the count, uploads and launches it once more:
# 1. each rank's launches are replays 1 and 2 of graph #5, then replay 1 of
#    graph #6 (the update restarts the count); the failed update changed
#    nothing; the two uploads are no launches (graph_launches 3);
# 2. rank 1 completes its replay and exits 3, ranks 0 and 2 wait in theirs:
#    `diagnose` says MISMATCH, rank 1's count of #6, and that ranks 0,2 wait
#    in replay 1 of the graph holding it; the watchdog's stall line names
#    graph #6;
# 3. the same calls looked up through cuGetProcAddress (12.0 ABI of
#    cuGraphExecUpdate) and dlsym (10.2 ABI): the launch after the update
#    names graph #6 all the same.
# 4. graph-update-lost, 2 ranks: the library's graph table (256) is full
#    when the graph the exec is updated from is captured: the library cannot
#    know what the exec runs from then on, so its launches are no longer
#    recorded (not as replays of the graph it ran before) and the update
#    counts in graphs_untracked (2: that graph, the update); one
#    "ncclwatch:" line per process.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"
export NCCLWATCH_TIMEOUT=2

# launches FILE: "graph replay state" of each GraphLaunch in a show output
launches() { grep ' GraphLaunch ' "$1" | sed -E 's/.* graph=(#[0-9]+) .* replay=([0-9]+) .* state=([A-Z_]+) .*/\1 \2 \3/'; }

# start JOB [ENV...]: the hanging job in the background, until its 3 ranks parked
start() {
	_job=$1; shift
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$_job" NCCLWATCH_KEEP=1 "$@" \
		"$prog" --case graph-update --nranks 3 --count 32768 > "$T/$_job.out" 2>&1
	parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/$_job.out")" -ge 3 ]; }
	nw_until 60 parked || { cat "$T/$_job.out"; fail "$_job: the ranks did not park"; }
}

# rank_launches JOB: $T/JOB.launches.R for each rank R
rank_launches() {
	for seg in $(segments "$NCCLWATCH_DIR/$1"); do
		show "$seg" > "$T/seg.txt"
		rank=$(grep '^  comm 0 ' "$T/seg.txt" | field rank | cut -d/ -f1)
		launches "$T/seg.txt" > "$T/$1.launches.$rank"
		echo "$1 rank $rank: $(tr '\n' ',' < "$T/$1.launches.$rank")"
		assert_grep '^  graph_launches +3$' "$T/seg.txt"
		assert_grep '^  graphs_untracked +0$' "$T/seg.txt"
	done
}

note "graph-update: 3 ranks, rank 1's updated graph holds #6 with half the count"
start update
pid=$NW_PID
stalled() { grep -q 'ncclwatch: stall: rank=0 .*op=GraphLaunch' "$T/update.out"; }
nw_until 60 stalled || { cat "$T/update.out"; fail "graph-update: no stall line for the stuck replay"; }
cat "$T/update.out"
assert_grep 'rank 1 parked: a wrong result noticed' "$T/update.out"
assert_no_grep 'launches of such graphs are not recorded' "$T/update.out"
assert_grep 'ncclwatch: stall: rank=0 .*op=GraphLaunch seq=1 .*graph=#6 first=AllReduce (in_op=1/1 )?state=(ENQUEUED|STARTED) ' "$T/update.out"
"$NW_CLI" diagnose "$NCCLWATCH_DIR/update" > "$T/diagnose.txt" 2>&1
cat "$T/diagnose.txt"
assert_grep '^MISMATCH: rank 1 called AllReduce #6 on comm [0-9a-f]+ \(3 ranks\) with count 16384 where ranks 0,2 used count 32768; ranks 0,2 wait in replay 1 of the graph holding it ' "$T/diagnose.txt"
assert_grep '^  waiting: 0,2$' "$T/diagnose.txt"
assert_grep 'ranks 0,2: in replay 1 of its graph \((ENQUEUED|(op 1 of 1 )?STARTED) for ' "$T/diagnose.txt"
assert_no_grep '^TRANSPORT_STALL' "$T/diagnose.txt"
rank_launches update
for r in 0 1 2; do
	[ -f "$T/update.launches.$r" ] || fail "graph-update: no file for rank $r"
	assert_eq "$(head -n 2 "$T/update.launches.$r" | tr '\n' ',')" "#5 1 COMPLETED,#5 2 COMPLETED," \
		"rank $r: the launches before the update (the failed one changed nothing)"
	assert_eq "$(grep -c . "$T/update.launches.$r")" 3 "rank $r: launches"
done
assert_eq "$(tail -n 1 "$T/update.launches.1")" "#6 1 COMPLETED" "rank 1: the launch after the update"
for r in 0 2; do
	assert_eq "$(tail -n 1 "$T/update.launches.$r" | grep -Ec '^#6 1 (ENQUEUED|STARTED)$')" 1 \
		"rank $r: the launch after the update, pending"
done
kill -KILL "-$pid" 2>/dev/null

for via in getproc dlsym; do
	note "graph-update, the graph calls looked up ($via)"
	start $via SCENARIO_GRAPH_VIA=$via NCCLWATCH_GRAPH_PROCADDR=1
	pid=$NW_PID
	assert_grep 'graph calls through (cuGetProcAddress|dlsym)' "$T/$via.out"
	assert_no_grep 'ncclwatch: .*not recorded' "$T/$via.out"
	rank_launches $via
	for r in 0 1 2; do
		assert_eq "$(cut -d' ' -f1,2 "$T/$via.launches.$r" | tr '\n' ',')" "#5 1,#5 2,#6 1," "$via: rank $r's launches"
	done
	kill -KILL "-$pid" 2>/dev/null
done

note "graph-update-lost: the exec updated from a graph past the table"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=lost NCCLWATCH_KEEP=1 \
	"$prog" --case graph-update-lost --nranks 2 > "$T/lost.out" 2>&1
rc=$?
cat "$T/lost.out"
assert_eq "$rc" 0 "graph-update-lost: exit status"
assert_eq "$(grep -c 'ncclwatch:' "$T/lost.out")" 2 "graph-update-lost: ncclwatch lines"
assert_eq "$(grep -c 'ncclwatch: more than 256 CUDA graphs hold NCCL ops at once: launches of such graphs are not recorded' "$T/lost.out")" 2 \
	"graph-update-lost: the table's line"
assert_eq "$(segments "$NCCLWATCH_DIR/lost" | grep -c .)" 2 "graph-update-lost: segment files"
for seg in $(segments "$NCCLWATCH_DIR/lost"); do
	show "$seg" > "$T/seg.txt"
	assert_grep '^  graph_launches +256$' "$T/seg.txt"
	assert_grep '^  graphs_untracked +2$' "$T/seg.txt"
	assert_eq "$(grep -c ' GraphLaunch graph=#5 ' "$T/seg.txt")" 1 "graph-update-lost: launches of graph #5 in $seg"
done
echo "ok"
