#!/bin/sh
# CUDA graph replays on the simulation, under the preload, read back with
# `ncclwatch show` (issue 22):
# 1. graph-replay: two ranks each capture AllReduce #5 into a graph and
#    launch it 10 times: each rank's file holds the AllReduce once,
#    CAPTURED, and 10 GraphLaunch records with replays 1..10, all
#    COMPLETED, naming the AllReduce's comm; the header counts 10 launches.
# 2. graph-replay with SCENARIO_GRAPH_SHORT=1: rank 1 launches the graph 9
#    times, rank 0 10: rank 0's replay 10 never completes (ENQUEUED or
#    STARTED), its replays 1-9 and rank 1's 9 did. `diagnose` matches the
#    replays across ranks: MISSING_RANK, rank 1 launched the graph holding
#    AllReduce #5 9 times, rank 0 waits in replay 10 (the corpus case
#    graph-short judges the three views; this checks the words).
# 3. the same healthy job through cuGetProcAddress (libcudart's way) and
#    through dlsym on libcuda.so.1 (a loader's way): SCENARIO_GRAPH_VIA
#    makes scenario call the driver through pointers it looked up; the
#    launches are recorded all the same.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"
export NCCLWATCH_TIMEOUT=2

# launches FILE: "replay state" of each GraphLaunch in a show output
launches() { grep ' GraphLaunch ' "$1" | sed -E 's/.* replay=([0-9]+) .* state=([A-Z_]+) .*/\1 \2/'; }

check_healthy() {
	_job=$1
	assert_eq "$(segments "$NCCLWATCH_DIR/$_job" | grep -c .)" 2 "$_job: segment files"
	for seg in $(segments "$NCCLWATCH_DIR/$_job"); do
		show "$seg" > "$T/seg.txt"
		comm=$(grep ' AllReduce ' "$T/seg.txt" | grep 'state=CAPTURED' | field comm)
		assert_eq "$(echo "$comm" | grep -c .)" 1 "$_job: CAPTURED AllReduce records in $seg"
		launches "$T/seg.txt" > "$T/launches"
		assert_eq "$(grep -c . "$T/launches")" 10 "$_job: GraphLaunch records in $seg"
		assert_eq "$(cut -d' ' -f1 "$T/launches" | tr '\n' ' ')" "1 2 3 4 5 6 7 8 9 10 " "$_job: replay numbers"
		assert_eq "$(grep -vc ' COMPLETED$' "$T/launches")" 0 "$_job: launches not COMPLETED"
		assert_eq "$(grep ' GraphLaunch ' "$T/seg.txt" | field comm | sort -u)" "$comm" "$_job: the launches' comm"
		assert_grep ' GraphLaunch graph=#[0-9]+ exec=0x[0-9a-f]+ replay=1 ops=1 first=AllReduce ' "$T/seg.txt"
		assert_grep '^  graph_launches +10$' "$T/seg.txt"
		assert_grep '^  graphs_untracked +0$' "$T/seg.txt"
	done
}

note "graph-replay: 2 ranks, 10 launches each"
nw_bounded 60 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=replay NCCLWATCH_KEEP=1 \
	"$prog" --case graph-replay --nranks 2 > "$T/replay.out" 2>&1
rc=$?
cat "$T/replay.out"
assert_eq "$rc" 0 "graph-replay: exit status"
assert_no_grep 'ncclwatch:' "$T/replay.out"
check_healthy replay

note "graph-replay, SCENARIO_GRAPH_SHORT=1: rank 1 launches 9 times, rank 0 10"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=short NCCLWATCH_KEEP=1 SCENARIO_GRAPH_SHORT=1 \
	"$prog" --case graph-replay --nranks 2 > "$T/short.out" 2>&1
parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/short.out")" -ge 2 ]; }
nw_until 60 parked || { cat "$T/short.out"; fail "graph-replay (short): the ranks did not park"; }
# past NCCLWATCH_TIMEOUT: the watchdog names the stuck replay
stalled() { grep -q 'ncclwatch: stall: .*op=GraphLaunch' "$T/short.out"; }
nw_until 60 stalled || { cat "$T/short.out"; fail "graph-replay (short): no stall line for the stuck replay"; }
"$NW_CLI" diagnose "$NCCLWATCH_DIR/short" > "$T/diagnose.txt" 2>&1
cat "$T/diagnose.txt"
assert_grep '^MISSING_RANK: rank 1 launched the graph holding AllReduce #5 on comm [0-9a-f]+ 9 times; rank 0 waits in replay 10 ' "$T/diagnose.txt"
assert_grep 'rank 1: launched it 9 times, never replay 10' "$T/diagnose.txt"
assert_grep 'rank 0: in replay 10 of it \((ENQUEUED|(op 1 of 1 )?STARTED) for ' "$T/diagnose.txt"
assert_grep 'ncclwatch: stall: rank=0 .*op=GraphLaunch seq=10 .*graph=#[0-9]+ first=AllReduce (in_op=1/1 )?state=(ENQUEUED|STARTED) ' "$T/short.out"
assert_no_grep 'ncclwatch: stall: rank=1 ' "$T/short.out"
for seg in $(segments "$NCCLWATCH_DIR/short"); do
	show "$seg" > "$T/seg.txt"
	rank=$(grep '^  comm 0 ' "$T/seg.txt" | field rank | cut -d/ -f1)
	launches "$T/seg.txt" > "$T/launches.$rank"
	echo "rank $rank: $(tr '\n' ',' < "$T/launches.$rank")"
done
[ -f "$T/launches.0" ] && [ -f "$T/launches.1" ] || fail "graph-replay (short): no file for rank 0 or 1"
assert_eq "$(grep -c . "$T/launches.1")" 9 "rank 1's launches"
assert_eq "$(grep -vc ' COMPLETED$' "$T/launches.1")" 0 "rank 1's launches not COMPLETED"
assert_eq "$(grep -c . "$T/launches.0")" 10 "rank 0's launches"
assert_eq "$(head -n 9 "$T/launches.0" | grep -vc ' COMPLETED$')" 0 "rank 0's replays 1-9 not COMPLETED"
assert_eq "$(tail -n 1 "$T/launches.0" | grep -Ec '^10 (ENQUEUED|STARTED)$')" 1 "rank 0's replay 10 still pending"
kill -KILL "-$NW_PID" 2>/dev/null

for via in getproc dlsym; do
	note "graph-replay, the graph calls looked up ($via)"
	nw_bounded 60 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=$via NCCLWATCH_KEEP=1 SCENARIO_GRAPH_VIA=$via \
		NCCLWATCH_GRAPH_PROCADDR=1 \
		"$prog" --case graph-replay --nranks 2 > "$T/$via.out" 2>&1
	rc=$?
	cat "$T/$via.out"
	assert_eq "$rc" 0 "graph-replay via $via: exit status"
	assert_grep 'graph calls through (cuGetProcAddress|dlsym)' "$T/$via.out"
	assert_no_grep 'ncclwatch:' "$T/$via.out"
	check_healthy $via
done
echo "ok"
