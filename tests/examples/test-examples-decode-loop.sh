#!/bin/sh
# examples/decode_loop.c under `ncclwatch run` on the simulation (issue 22):
# 1. healthy, 2 ranks, 300 tokens: exit 0, each rank's file holds the
#    captured AllReduce once and 300 GraphLaunch records counted
#    (graph_launches 300), each tracked by exactly one event pair
#    (ops_tracked 300, event_records 600), nothing untracked, no
#    "ncclwatch:" line, and `diagnose` says HEALTHY;
# 2. --fault stop:rank=2:token=50 on 4 ranks: rank 2 stops after 50 tokens,
#    the others launch replay 51 and wait: the watchdog's stall line and
#    `diagnose` name rank 2, the graph holding AllReduce #1 and replay 51.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/bin/decode_loop"
[ -x "$prog" ] || fail "$prog not built"
unset LD_PRELOAD

note "healthy: 2 ranks, 300 tokens"
nw_bounded 60 env ${CLI_SAN_RT:+"LD_PRELOAD=$CLI_SAN_RT"} NCCLWATCH_JOB=decode \
	"$NW_CLI" run --timeout 2 --dir "$T/d" --keep -- "$prog" --nranks 2 --tokens 300 > "$T/ok.out" 2>&1
rc=$?
cat "$T/ok.out"
assert_eq "$rc" 0 "decode_loop's exit status"
assert_grep '^rank 0: ok tokens=300$' "$T/ok.out"
assert_grep '^rank 1: ok tokens=300$' "$T/ok.out"
assert_no_grep 'ncclwatch:' "$T/ok.out"
n=0
for seg in $(segments "$T/d/decode"); do
	show "$seg" > "$T/seg.txt"
	assert_eq "$(grep ' AllReduce ' "$T/seg.txt" | grep -c 'state=CAPTURED')" 1 "CAPTURED AllReduce in $seg"
	assert_grep '^  graph_launches +300$' "$T/seg.txt"
	assert_grep '^  graphs_untracked +0$' "$T/seg.txt"
	# one event pair per launch (no eager op after the capture): counts, not times
	assert_grep '^  counters +events_created=[0-9]+ event_records=600 ops_tracked=300 ' "$T/seg.txt"
	n=$((n + 1))
done
assert_eq "$n" 2 "segment files"
"$NW_CLI" diagnose "$T/d/decode" > "$T/ok.diag" 2>&1
assert_grep '^HEALTHY' "$T/ok.diag"

note "fault: rank 2 of 4 stops after 50 tokens"
nw_spawn env ${CLI_SAN_RT:+"LD_PRELOAD=$CLI_SAN_RT"} NCCLWATCH_JOB=stop \
	"$NW_CLI" run --timeout 2 --dir "$T/d" --keep -- "$prog" --nranks 4 --tokens 200 \
	--fault stop:rank=2:token=50 > "$T/stop.out" 2>&1
verdict() { grep -q 'ncclwatch: MISSING_RANK' "$T/stop.out"; }
nw_until 60 verdict || { cat "$T/stop.out"; fail "no verdict from the watchdog"; }
"$NW_CLI" diagnose "$T/d/stop" > "$T/stop.diag" 2>&1
kill -KILL "-$NW_PID" 2>/dev/null
cat "$T/stop.out" "$T/stop.diag"
assert_grep '^rank 2: fault stop: stopped after 50 tokens' "$T/stop.out"
assert_grep 'ncclwatch: stall: rank=[013] .*op=GraphLaunch seq=51 .*graph=#1 first=AllReduce ' "$T/stop.out"
assert_grep 'ncclwatch: MISSING_RANK: rank 2 launched the graph holding AllReduce #1 on comm [0-9a-f]{16} 50 times; ranks 0-1,3 wait in replay 51 ' "$T/stop.out"
assert_grep '^MISSING_RANK: rank 2 launched the graph holding AllReduce #1 on comm [0-9a-f]{16} 50 times; ranks 0-1,3 wait in replay 51 ' "$T/stop.diag"
assert_grep '^  op: replay 51 of the graph holding AllReduce #1 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/stop.diag"
echo "ok"
