#!/bin/sh
# budget: 30
# GPU check, step 7: the crash-safety claim on the real driver. The step-1
# program loops under the preload (gpu-nccl loop --forever: rounds of 1,000
# AllReduce until killed) until `ncclwatch status` shows more than 1,000
# ops, then gets SIGKILL in the middle of its loop. What it left must be
# whole: its segment is there and readable (`status`, `show`, `diagnose
# --json`), holds at least as many ops as status saw before the kill, the
# ring's records are untorn and their sequence numbers go up by one to the
# last op enqueued, and the diagnosis knows the process is gone (its verdict
# for a lone killed rank is reported, not judged).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"

gpu_nccl_prog
gpu_use_nccl

nw_spawn env LD_PRELOAD="$(nw_preload)" "$prog" loop --forever 120 > "$T/loop.out" 2>&1
pid=$NW_PID    # env execs the program: the same process

# the seq of the last op `status` shows, 0 before there is one
seen() {
	"$NW_CLI" status "$NCCLWATCH_DIR" 2> /dev/null > "$T/status-before.txt"
	sed -n 's/.* last=AllReduce#\([0-9]*\)@.*/\1/p' "$T/status-before.txt" | tail -n 1
}
i=0 before=0
while [ $i -lt 600 ]; do     # 60 s
	before=$(seen)
	# past 1,000 ops and the watchdog has seen some complete (a real GPU
	# enqueues 1,000 in a few ms, before the first poll)
	[ "${before:-0}" -gt 1000 ] && "$NW_CLI" show --records 1 "$NCCLWATCH_DIR" 2> /dev/null | grep -q ' coll_completed=[1-9]' && break
	kill -0 "$pid" 2> /dev/null || { cat "$T/loop.out"; fail "the loop ended before it was killed"; }
	i=$((i + 1))
	sleep 0.1
done
[ "${before:-0}" -gt 1000 ] || { cat "$T/loop.out"; fail "status never showed more than 1,000 ops with some completed (60 s): last seen ${before:-none}"; }
kill -KILL "$pid"
nw_wait "$pid" 10 > /dev/null 2>&1
cat "$T/loop.out"
grep -q 'never killed' "$T/loop.out" && fail "the loop ended by itself before the kill"
cp "$T/status-before.txt" "$T/status-before-kill.txt"
keep "$T/status-before-kill.txt" "$T/loop.out"

segs=$(find "$NCCLWATCH_DIR" -name '*.seg' ! -name '*.dump.seg' | wc -l)
[ "$segs" = 1 ] || fail "$segs segments left after the kill, not 1"
"$NW_CLI" status "$NCCLWATCH_DIR" > "$T/status.txt" 2>&1 || { cat "$T/status.txt"; fail "ncclwatch status failed on the killed process's files"; }
"$NW_CLI" show "$NCCLWATCH_DIR" > "$T/show.txt" 2> "$T/show.err" || { cat "$T/show.err"; fail "ncclwatch show failed on the killed process's files"; }
"$NW_CLI" diagnose --json "$NCCLWATCH_DIR" > "$T/diagnose.json" 2> "$T/diagnose.err"
drc=$?
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/diagnose.txt" 2>&1
cat "$T/status.txt" "$T/diagnose.txt"
python3 "$NW_ROOT/tests/gpu/records.py" "$T/show.txt" > "$T/records.txt" || fail "cannot read ncclwatch show's output"
cat "$T/records.txt"
keep "$T/status.txt" "$T/diagnose.json" "$T/diagnose.txt" "$T/records.txt"
# show's output is large (the whole ring): its head and tail only
{ sed -n '1,/^records /p' "$T/show.txt"; echo ...; tail -n 5 "$T/show.txt"; } > "$T/show-ends.txt"
keep "$T/show-ends.txt"

verdict=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
alive = [p["alive"] for p in j["processes"]]
print(d["worst"], len(d["jobs"]), j["process_count"], "gone" if alive == [False] else "alive=%s" % alive)' "$T/diagnose.json" 2>/dev/null)
[ -n "$verdict" ] || { cat "$T/diagnose.err"; fail "diagnose --json (exit $drc) gave no readable document"; }
set -- $verdict
worst=$1 jobs=$2 procs=$3 gone=$4

enq=$(val coll_enqueued "$T/records.txt")
done_n=$(val coll_completed "$T/records.txt")
valid=$(val valid "$T/records.txt")
torn=$(val torn "$T/records.txt")
unpub=$(val unpublished "$T/records.txt")
over=$(val overwritten "$T/records.txt")
first=$(val seq_first_AllReduce "$T/records.txt")
last=$(val seq_last_AllReduce "$T/records.txt")
gaps=$(val seq_gaps_AllReduce "$T/records.txt")
states=$(val states_AllReduce "$T/records.txt")
created=$(val events_created "$T/records.txt")
: "${enq:=0}" "${last:=0}" "${gaps:=0}" "${torn:=0}"
status_after=$(grep -v '^#' "$T/status.txt" | head -n 1 | awk '{ print $NF }')
figures="status saw AllReduce #$before before the kill; left: AllReduce enqueued $enq (completed $done_n), ring $valid records (#$first-#$last, $over overwritten, torn $torn, unpublished $unpub, seq gaps $gaps; $states); status says $status_after; diagnose: $worst, process $gone; events created $created for $enq ops"
[ "$jobs" = 1 ] && [ "$procs" = 1 ] || fail "diagnose read $jobs jobs, $procs processes; $figures"
[ "$enq" -ge "$before" ] || fail "fewer ops recorded than status saw before the kill; $figures"
[ "$last" -ge "$before" ] || fail "the ring's last AllReduce is older than what status saw; $figures"
[ "$torn" = 0 ] || fail "torn records; $figures"
[ "$gaps" = 0 ] || fail "the ring's sequence numbers jump; $figures"
[ $((enq - last)) -le 1 ] && [ $((last - enq)) -le 1 ] || fail "the ring's last op and the comm's counter disagree; $figures"
[ "$gone" = gone ] || fail "diagnose does not see the process as gone; $figures"
[ "$status_after" = dead ] || fail "status does not call the process dead; $figures"
result "$figures"
