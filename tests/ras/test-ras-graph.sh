#!/bin/sh
# Launches captured into a CUDA graph are not counted (NCCL increments
# seqNumber only for non-persistent plans): nccl-capture issues two
# all-reduces on comm "graph" during a stream capture and two on comm
# "eager" after it; RAS shows 0 and 2.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"
prog="$NW_BUILD/tests/watchdog/nccl-capture"
[ -x "$prog" ] || fail "$prog not built"
# it sleeps SECONDS after the capture and again after the eager calls:
# RAS sees the eager comm at 2 during the second sleep
nw_spawn "$prog" 15 > "$T/out" 2>&1
eager() { "$NW_CLI" ras > "$T/ras.out" 2>&1 && grep -q '^  rank 0: RUNNING AllReduce launches=2$' "$T/ras.out"; }
nw_until 60 eager || { cat "$T/ras.out" "$T/out"; fail "the eager comm never showed 2 all-reduces"; }
cat "$T/ras.out"
assert_grep '^RAS at .*: NCCL 2\.28\.9, 2 communicators' "$T/ras.out"
assert_grep '^  rank 0: RUNNING no collective launched$' "$T/ras.out"
