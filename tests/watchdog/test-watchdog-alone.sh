#!/bin/sh
# libncclwatch.so installed without the two libraries it loads from its own
# directory (libncclwatch-unwind.so for libunwind, libncclwatch-engine.so
# for the cross-rank verdict): it still records and still finds the stall.
# Every rank says once that its thread stacks are off and why; the process
# that reports for the host says once why there is no cross-rank verdict
# and prints none; each stuck rank still prints its own stall line and
# writes its dump, with the reason for the missing native stacks in it. The
# CLI, reading what they recorded, gives the verdict the watchdog could not.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
mkdir -p "$T/alone"
cp "$NW_LIB" "$T/alone/libncclwatch.so"
NW_LIB="$T/alone/libncclwatch.so"

wd_start "$T/out" alone --nranks 4 --steps 24 --count 64 --bcast-every 0 --fault skip:rank=3:step=20
wait_for_count $WD_WAIT 3 'ncclwatch: stall: ' "$T/out"
wait_for_count $WD_WAIT 1 'ncclwatch: dump requested by .*: rank=3 pid=[0-9]+ wrote ' "$T/out"
wait_for_count $WD_WAIT 1 'ncclwatch: no cross-rank verdict: ' "$T/out"
wait_for_count $WD_WAIT 4 'ncclwatch: thread stacks off: cannot load libunwind: ' "$T/out"
# A verdict would come within a poll or two of the first stall line.
sleep 3
grep '^ncclwatch: ' "$T/out"
kill -0 "$TRAINER_PID" 2>/dev/null || fail "the job ended instead of hanging"

note "each rank once: no libunwind, with the file it looked for"
assert_eq "$(grep -c 'ncclwatch: thread stacks off: ' "$T/out")" 4 "'thread stacks off' lines (one per rank)"
assert_grep "ncclwatch: thread stacks off: cannot load libunwind: $T/alone/libncclwatch-unwind.so: .*No such file" "$T/out"
note "the host's reporter once: no engine, no verdict"
assert_eq "$(grep -c 'ncclwatch: no cross-rank verdict: ' "$T/out")" 1 "'no cross-rank verdict' lines"
assert_grep "ncclwatch: no cross-rank verdict: cannot load the report engine: $T/alone/libncclwatch-engine.so: .*No such file" "$T/out"
assert_no_grep 'ncclwatch: (MISSING_RANK|culprits|waiting)' "$T/out"
[ -f "$NCCLWATCH_DIR/alone/report.txt" ] && fail "report.txt written without an engine"

note "recording went on: the stuck ranks' findings, dumps without native stacks"
assert_findings "$T/out" STARTED AllReduce 21 0 1 2
line=$(rank_stalls 0 "$T/out")
show "$(dump_of "$line")" > "$T/dump0.show"
assert_grep '^  op .* AllReduce .* seq=21 .* state=STARTED ' "$T/dump0.show"
assert_grep '^stacks captured ' "$T/dump0.show"
assert_grep '^ +note native no native stacks: libunwind could not be loaded$' "$T/dump0.show"
assert_no_grep '^ +#[0-9]+ 0x' "$T/dump0.show"

note "the CLI still reads it all"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/diagnose.txt" 2>&1
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #21 ' "$T/diagnose.txt"
trainer_kill
wd_check_outputs
