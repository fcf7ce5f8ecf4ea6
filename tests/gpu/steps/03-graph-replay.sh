#!/bin/sh
# budget: 30
# GPU check, step 3: a CUDA graph that holds an AllReduce, replayed 100
# times (gpu-nccl graph: one rank, a warm-up AllReduce, then global capture
# mode on a non-default stream, cuGraphInstantiateWithFlags, 100
# cuGraphLaunch, a sync, the result checked). Issue 22/23: every replay is
# recorded. PASS when `ncclwatch show` lists 100 GraphLaunch records with
# replay numbers 1..100, all COMPLETED, and the captured AllReduce once,
# CAPTURED. The same on the simulation, which replays graphs as CUDA does.
# A driver that refuses to launch the graph a second time (gpu-nccl exits
# 6) FAILs.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"

prog="$NW_GPU_PROGS/gpu-nccl"
[ -x "$prog" ] || fail "$prog is not built (make all)"
gpu_use_nccl
val() { sed -n "s/^$1=//p" "$2" | tail -n 1; }
want=100

nw_bounded 120 env NCCLWATCH_KEEP=1 LD_PRELOAD="$(nw_preload)" "$prog" graph --launches $want > "$T/graph.out" 2>&1
rc=$?
cat "$T/graph.out"
keep "$T/graph.out"
"$NW_CLI" show "$NCCLWATCH_DIR" > "$T/show.txt" 2> "$T/show.err" || { cat "$T/show.err"; fail "ncclwatch show failed (program exit $rc)"; }
keep "$T/show.txt"
python3 "$NW_ROOT/tests/gpu/records.py" "$T/show.txt" > "$T/records.txt" || fail "cannot read ncclwatch show's output"
cat "$T/records.txt"
keep "$T/records.txt"

launched=$(sed -n 's/.*graph: \([0-9]*\) of [0-9]* launches done.*/\1/p' "$T/graph.out")
captured=$(val n_AllReduce_CAPTURED "$T/records.txt")
replays=$(val n_GraphLaunch "$T/records.txt")
done_=$(val n_GraphLaunch_COMPLETED "$T/records.txt")
first=$(val seq_first_GraphLaunch "$T/records.txt")
last=$(val seq_last_GraphLaunch "$T/records.txt")
gaps=$(val seq_gaps_GraphLaunch "$T/records.txt")
states=$(val states_GraphLaunch "$T/records.txt")
: "${captured:=0}" "${replays:=0}" "${done_:=0}"
figures="captured ops recorded: $captured (CAPTURED); replays recorded: $replays of ${launched:-0} launches (GraphLaunch records: ${states:-none}, replay numbers ${first:--}..${last:--}, ${gaps:--} gaps)"

[ $rc = 0 ] || fail "gpu-nccl graph: exit $rc: $(tail -n 1 "$T/graph.out"); $figures"
grep -q 'graph: result ok' "$T/graph.out" || fail "no result check; $figures"
[ "$launched" = $want ] || fail "$launched of $want launches; $figures"
[ "$captured" = 1 ] || fail "the captured AllReduce is not recorded once, CAPTURED; $figures"
[ "$replays" = $want ] || fail "$figures — not every replay is recorded"
[ "$done_" = $want ] || fail "$figures — not every replay COMPLETED"
[ "$first" = 1 ] && [ "$last" = $want ] && [ "$gaps" = 0 ] || fail "$figures — replay numbers are not 1..$want"
result "$figures"
