#!/bin/sh
# Healthy trainer runs under the preload, segments kept: the engine says
# HEALTHY (exit 0) on the files a finished job leaves, with the pipeline's
# send/receive groups and with non-blocking communicators; and on a job
# that is still running (a long run analyzed while it goes), no verdict but
# HEALTHY either: in-flight ops younger than the timeout are not stalls.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
export NCCLWATCH_KEEP=1

check_healthy() {
	sed 's/^/    /' "$1"
	assert_eq "$AN_STATUS" 0 "driver status"
	assert_eq "$(grep -c '^verdict ' "$1")" 1 "verdicts"
	assert_grep '^verdict HEALTHY comm=- op=- seq=0 culprits=- waiting=- unknown=-$' "$1"
	assert_grep "^job $2 procs=$3 world=$3 missing=- " "$1"
	assert_grep '^worst HEALTHY$' "$1"
	assert_no_grep '^envdiff ' "$1"
}

note "8 ranks, pipeline, finished"
wd_run 120 "$T/a.out" pipe --nranks 8 --steps 40 --count 64 --pipeline --bcast-every 7
assert_eq "$TRAINER_STATUS" 0 "trainer status"
analyze "$T/a" "$NCCLWATCH_DIR/pipe"
check_healthy "$T/a" pipe 8

note "4 ranks, non-blocking communicators, finished"
wd_run 120 "$T/b.out" nb --nranks 4 --steps 20 --count 32 --nonblocking --pipeline
assert_eq "$TRAINER_STATUS" 0 "trainer status"
analyze "$T/b" "$NCCLWATCH_DIR/nb"
check_healthy "$T/b" nb 4

note "4 ranks, analyzed five times while running"
wd_start "$T/c.out" run --nranks 4 --steps 4000 --count 64 --pipeline
wait_for_ranks 60 "$T/c.out" ': pipeline communicator ready' 0 1 2 3 2>/dev/null || true
i=0
while [ $i -lt 5 ] && kill -0 "$TRAINER_PID" 2>/dev/null; do
	analyze "$T/c" "$NCCLWATCH_DIR/run"
	grep -q '^job run ' "$T/c" && check_healthy "$T/c" run 4
	sleep 0.3
	i=$((i + 1))
done
trainer_kill
wd_check_outputs
