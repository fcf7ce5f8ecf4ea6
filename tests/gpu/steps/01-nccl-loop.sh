#!/bin/sh
# budget: 40
# GPU check, step 1: one rank on the real libcuda.so.1 and libnccl.so.2 (or
# the simulation): init, 1,000 AllReduce, destroy (gpu-nccl loop), without
# and with the preload (NCCLWATCH_KEEP=1). Judges the records (`ncclwatch
# show`: 1,000 AllReduce, all COMPLETED, each with a start and an end time
# from the library's CUDA events) and the verdict (`diagnose --json`:
# HEALTHY, nothing lost); reports events per op (the segment's counters:
# created, recorded; created in steady state: the live counters read
# after round 1, the program held meanwhile), ns per ncclAllReduce call without and with the
# preload (median of 5 rounds of 200, the enqueue loop alone) and
# user-space instructions per call where the kernel has hardware counters.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"

gpu_nccl_prog
gpu_use_nccl

note "without the preload"
nw_bounded 120 "$prog" loop --iters 1000 --rounds 5 > "$T/plain.out" 2>&1
rc=$?
cat "$T/plain.out"
[ $rc = 0 ] || fail "gpu-nccl loop without the preload: exit $rc: $(tail -n 1 "$T/plain.out")"

note "with the preload"
# Held after round 1 (200 ops, drained, polled) while the live segment's
# counters are read: what rounds 2-5 create is the steady state.
nw_spawn env NCCLWATCH_KEEP=1 LD_PRELOAD="$(nw_preload)" "$prog" loop --iters 1000 --rounds 5 --hold "$T/go" > "$T/preload.out" 2>&1
pid=$NW_PID
nw_until 60 grep -q 'loop: round 1 done' "$T/preload.out" || { cat "$T/preload.out"; fail "round 1 never ended (60 s)"; }
"$NW_CLI" show --records 1 "$NCCLWATCH_DIR" > "$T/show-round1.txt" 2>&1
created1=$(sed -n 's/.*events_created=\([0-9]*\).*/\1/p' "$T/show-round1.txt" | head -n 1)
touch "$T/go"
nw_wait "$pid" 120
rc=$?
cat "$T/preload.out"
keep "$T/plain.out" "$T/preload.out" "$T/show-round1.txt"
[ $rc = 0 ] || fail "gpu-nccl loop with the preload: exit $rc: $(tail -n 1 "$T/preload.out")"
grep -q 'loop: result ok' "$T/preload.out" || fail "the program did not check its result"
grep -q '^ncclwatch: ' "$T/preload.out" && note "the library said something (above)"

"$NW_CLI" show "$NCCLWATCH_DIR" > "$T/show.txt" 2> "$T/show.err" || { cat "$T/show.err"; fail "ncclwatch show failed on the kept segment"; }
"$NW_CLI" diagnose --json "$NCCLWATCH_DIR" > "$T/diagnose.json" 2> "$T/diagnose.err"
drc=$?
keep "$T/show.txt" "$T/diagnose.json"
python3 "$NW_ROOT/tests/gpu/records.py" "$T/show.txt" > "$T/records.txt" || fail "cannot read ncclwatch show's output"
cat "$T/records.txt"
keep "$T/records.txt"
verdict=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
print(d["worst"], len(d["jobs"]), j["process_count"], j["lost"]["ops"])' "$T/diagnose.json" 2>/dev/null)
[ -n "$verdict" ] || { cat "$T/diagnose.err"; fail "diagnose --json (exit $drc) gave no readable document"; }
set -- $verdict
worst=$1 jobs=$2 procs=$3 lost=$4

n=$(val n_AllReduce "$T/records.txt")
done_n=$(val n_AllReduce_COMPLETED "$T/records.txt")
states=$(val states_AllReduce "$T/records.txt")
timed=$(val timed_AllReduce "$T/records.txt")
tracking=$(val tracking "$T/records.txt")
others=$(grep -E '^n_Comm[A-Za-z]*=' "$T/records.txt" | sed 's/^n_//' | tr '\n' ' ' | sed 's/ $//')
created=$(val events_created "$T/records.txt")
records=$(val event_records "$T/records.txt")
pairs=$(val ops_tracked "$T/records.txt")
per_op=$(awk -v c="$created" -v r="$records" -v n="$n" 'BEGIN { printf "%.3f created, %.2f recorded", n ? c / n : 0, n ? r / n : 0 }')
steady=$(awk -v a="${created1:-x}" -v c="$created" 'BEGIN {
	if (a !~ /^[0-9]+$/) print "steady state unknown (no counters after round 1)"
	else printf "%d after round 1, %d more in rounds 2-5: %.3f created per op in steady state", a, c - a, (c - a) / 800 }')

ns_plain=$(sed -n 's/.*ns_per_call median \([0-9]*\).*/\1/p' "$T/plain.out")
ns_pre=$(sed -n 's/.*ns_per_call median \([0-9]*\).*/\1/p' "$T/preload.out")
ins_plain=$(sed -n 's/.*instructions_per_call median \([0-9]*\).*/\1/p' "$T/plain.out")
ins_pre=$(sed -n 's/.*instructions_per_call median \([0-9]*\).*/\1/p' "$T/preload.out")
if [ -n "$ins_plain" ] && [ -n "$ins_pre" ]; then
	ins="instructions/call $ins_plain -> $ins_pre (+$((ins_pre - ins_plain)))"
else
	ins="instructions: no hardware counters here"
fi
ns="ns/call $ns_plain -> $ns_pre (+$((ns_pre - ns_plain)))"

figures="records: $n AllReduce ($states, $timed timed, tracking $tracking), $others; verdict $worst; events: $created created, $records cuEventRecord, $pairs pairs tracked for $n ops ($per_op per op; $steady); $ns; $ins"
[ "$jobs" = 1 ] && [ "$procs" = 1 ] || fail "diagnose read $jobs jobs, $procs processes (want 1, 1); $figures"
[ "$n" = 1000 ] || fail "$n AllReduce recorded, not 1000; $figures"
[ "$done_n" = 1000 ] || fail "not every AllReduce COMPLETED; $figures"
[ "$timed" = 1000 ] || fail "AllReduce records without a start and end time from events; $figures"
[ "$worst" = HEALTHY ] && [ "$lost" = 0 ] || fail "diagnose: $worst, $lost ops lost; $figures"
result "$figures"
