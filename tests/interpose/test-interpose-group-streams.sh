#!/bin/sh
# A group spread over more streams than the library gives event pairs
# (NW_GROUP_STREAMS, 8 per group; issue 22's leftover): scenario
# graph-replay with SCENARIO_GROUP_STREAMS=12, one eager group of 12
# AllReduces on the world comm, each on a stream of its own, every stream
# synced. The ops on the first 8 streams are COMPLETED, the 4 past them
# UNTRACKED (no pair: nobody watches them); before, they stayed ENQUEUED
# for good in a healthy job. The rest of graph-replay is as usual (the
# captured AllReduce, 10 launches COMPLETED) and diagnose says HEALTHY.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"

nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=streams NCCLWATCH_KEEP=1 \
	SCENARIO_GROUP_STREAMS=12 "$prog" --case graph-replay --nranks 2 > "$T/streams.out" 2>&1
rc=$?
cat "$T/streams.out"
assert_eq "$rc" 0 "exit status"
assert_no_grep 'ncclwatch:' "$T/streams.out"
assert_eq "$(segments "$NCCLWATCH_DIR/streams" | grep -c .)" 2 "segment files"
for seg in $(segments "$NCCLWATCH_DIR/streams"); do
	show "$seg" > "$T/seg.txt"
	# the group's AllReduces: those with a group id (in_group flag)
	grep ' AllReduce ' "$T/seg.txt" | grep -v 'state=CAPTURED' > "$T/ar.txt"
	echo "$seg: $(grep -o 'state=[A-Z_]*' "$T/ar.txt" | sort | uniq -c | tr -s ' \n' ' ')"
	assert_eq "$(grep -c 'state=ENQUEUED' "$T/ar.txt")" 0 "AllReduces left ENQUEUED in $seg"
	assert_eq "$(grep -c 'state=UNTRACKED' "$T/ar.txt")" 4 "UNTRACKED AllReduces (streams 9-12) in $seg"
	assert_eq "$(grep -c 'state=COMPLETED' "$T/ar.txt")" 14 "COMPLETED AllReduces (6 eager, 8 of the group) in $seg"
	assert_eq "$(grep ' GraphLaunch ' "$T/seg.txt" | grep -c 'state=COMPLETED')" 10 "COMPLETED launches in $seg"
done
"$NW_CLI" diagnose "$NCCLWATCH_DIR/streams" > "$T/diag.txt" 2>&1
cat "$T/diag.txt"
assert_grep '^HEALTHY' "$T/diag.txt"
echo "ok"
