#!/bin/sh
# NCCL calls on a stream being captured into a CUDA graph are counted but
# not timed: the watchdog records no event on a capturing stream (that
# would break the capture) and marks the ops CAPTURED, both alone and in a
# group; the same calls issued after the capture are COMPLETED. Captured
# ops never complete (the graph is never launched), yet they are never a
# finding: the program lingers 3 timeouts after the capture.
# nccl-capture: one process, 1-rank comms "graph" (captured #1, grouped
# #2) and "eager" (#1, grouped #2, synchronized); see its source for why
# two comms.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_TIMEOUT=0.5 NCCLWATCH_KEEP=1

prog_run 60 "$T/out" capture nccl-capture 1.5
cat "$T/out"
assert_eq "$PROG_STATUS" 0 "exit status of nccl-capture"
assert_grep '^captured 2 all-reduces$' "$T/out"
assert_grep '^eager 2 all-reduces completed$' "$T/out"
assert_grep '^done failures=0$' "$T/out"
assert_no_grep 'ncclwatch:' "$T/out"

seg=$(segments "$NCCLWATCH_DIR/capture")
assert_eq "$(echo "$seg" | grep -c .)" 1 "segments"
show "$seg" > "$T/show"
assert_grep '^  tracking +events$' "$T/show"
assert_grep '^  counters .*findings=0 dumps=0 ' "$T/show"
op_lines "$seg" > "$T/ops"
cat "$T/ops"
graph=$(grep '^  comm 0 ' "$T/show" | field id)
eager=$(grep '^  comm 1 ' "$T/show" | field id)
[ -n "$graph" ] && [ -n "$eager" ] && [ "$graph" != "$eager" ] || fail "two comms expected"
seg_ops "$T/show" > "$T/full"
note "captured: #1 and the grouped #2 of comm $graph, never started"
assert_grep "^  op .* AllReduce comm=$graph rank=0/1 seq=1 .* group=0 .* state=CAPTURED .* started=- ended=- " "$T/full"
assert_grep "^  op .* AllReduce comm=$graph rank=0/1 seq=2 .* group=[1-9][0-9]* .* state=CAPTURED .* started=- ended=- " "$T/full"
note "eager: #1 and the grouped #2 of comm $eager COMPLETED"
assert_grep "^  op .* AllReduce comm=$eager rank=0/1 seq=1 .* group=0 .* state=COMPLETED .* started=\\+[0-9.]+ ended=\\+[0-9.]+ " "$T/full"
assert_grep "^  op .* AllReduce comm=$eager rank=0/1 seq=2 .* group=[1-9][0-9]* .* state=COMPLETED .* started=\\+[0-9.]+ ended=\\+[0-9.]+ " "$T/full"
assert_eq "$(grep -c ' AllReduce ' "$T/ops")" 4 "all-reduce records"
assert_eq "$(grep -c ' state=CAPTURED ' "$T/ops")" 2 "CAPTURED records"
# groups and life-cycle calls returned
assert_eq "$(grep -vc ' AllReduce ' "$T/ops")" "$(grep -c ' state=INIT_DONE ' "$T/ops")" "other records INIT_DONE"
# the comm table: the graph comm's collectives were enqueued, none started
assert_grep "^  comm 0 id=$graph .* coll_enqueued=2 coll_started=0 coll_completed=0 " "$T/show"
assert_grep "^  comm 1 id=$eager .* coll_enqueued=2 coll_started=2 coll_completed=2 " "$T/show"
wd_check_outputs
