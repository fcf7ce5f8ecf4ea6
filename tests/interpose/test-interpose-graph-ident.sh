#!/bin/sh
# A replay's graph identity comes from the launch record itself (segment
# 2.2: root = the seq of the graph's first captured op on its comm), not
# from the CAPTURED record, which a long run pushes out of the ring:
# graph-replay with 40 launches per rank, rank 1 one fewer, in a ring of
# 16 records (NCCLWATCH_RING=16): by the stuck replay 40 the ring holds
# launches only. `show` names every launch graph=#5 (AllReduce #5 is the
# graph's first op) and `diagnose` still names the graph holding AllReduce
# #5 and the replay (2.1 records carried a per-process capture id, and the
# engine found the graph from the CAPTURED record: "the graph whose first
# op is a AllReduce" once it was gone).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"
export NCCLWATCH_TIMEOUT=2

nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=ident NCCLWATCH_KEEP=1 NCCLWATCH_RING=16 \
	SCENARIO_GRAPH_REPLAYS=40 SCENARIO_GRAPH_SHORT=1 \
	"$prog" --case graph-replay --nranks 2 > "$T/out" 2>&1
parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/out")" -ge 2 ]; }
nw_until 60 parked || { cat "$T/out"; fail "the ranks did not park"; }
stalled() { grep -q 'ncclwatch: stall: .*op=GraphLaunch' "$T/out"; }
nw_until 60 stalled || { cat "$T/out"; fail "no stall line for the stuck replay"; }
for seg in $(segments "$NCCLWATCH_DIR/ident"); do
	show "$seg" > "$T/seg.txt"
	assert_no_grep 'state=CAPTURED' "$T/seg.txt"
	assert_eq "$(grep -c ' GraphLaunch ' "$T/seg.txt")" 16 "GraphLaunch records in the ring of $seg"
	assert_eq "$(grep ' GraphLaunch ' "$T/seg.txt" | grep -vc ' GraphLaunch graph=#5 ')" 0 \
		"launches in $seg not named graph=#5"
done
"$NW_CLI" diagnose "$NCCLWATCH_DIR/ident" > "$T/diagnose.txt" 2>&1
cat "$T/diagnose.txt"
assert_grep '^MISSING_RANK: rank 1 launched the graph holding AllReduce #5 on comm [0-9a-f]+ 39 times; rank 0 waits in replay 40 ' "$T/diagnose.txt"
assert_grep 'ncclwatch: stall: rank=0 .*op=GraphLaunch seq=40 .*graph=#5 first=AllReduce ' "$T/out"
kill -KILL "-$NW_PID" 2>/dev/null
echo "ok"
