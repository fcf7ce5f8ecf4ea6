#!/bin/sh
# A thread whose event pool runs dry never waits for the watchdog (only the
# watchdog waits): the test build's delay (NCCLWATCH_TEST_RING_DELAY_US,
# interpose/test_hooks.h) stops the watchdog for an hour inside its first
# poll, holding the progress module's lock, as a watchdog stuck in a driver
# call would. scenario graph-replay (2 ranks, 2,000 replays, a sync after
# each) still runs to its end: each rank's reap finds the lock taken and
# its pool grows instead (no pair is given back once it is stuck: 2 events per
# such launch). When the reap waited for the lock, the ranks stopped in their
# first refill. (Each process's exit gives up its last poll after 10 s
# and ends: test-interpose-exit-stuck; the segments are kept to be read.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
hooked="$NW_BUILD/tests/hooks/lib/libncclwatch.so"
[ -x "$prog" ] || fail "$prog not built"
[ -f "$hooked" ] || fail "$hooked not built"
LD_PRELOAD="$(NW_LIB=$hooked nw_preload)" NCCLWATCH_JOB=nowait NCCLWATCH_KEEP=1 NCCLWATCH_POLL_MS=1 NCCLWATCH_TEST_RING_DELAY_US=3600000000 \
	SCENARIO_GRAPH_REPLAYS=2000 nw_spawn "$prog" --case graph-replay --nranks 2 > "$T/out" 2>&1
nw_until 120 sh -c "[ \$(grep -c '^corpus: rank [01] done' '$T/out') = 2 ]" ||
	{ cat "$T/out"; fail "the ranks did not finish while the watchdog was stuck"; }
cat "$T/out"
assert_eq "$(segments "$NCCLWATCH_DIR/nowait" | wc -l)" 2 "segments of the 2 ranks"
# Every launch nobody moved past ENQUEUED kept its pair out (the watchdog
# was stuck and a reap never took its lock), so the pool made at least 2
# events for each. The watchdog gets stuck at its first poll that moves a
# record, which a loaded machine may run some launches late: the launches
# before that may be COMPLETED and their pairs reused. More stuck launches
# than the 32 pairs of the first batches means the pool grew while stuck.
for seg in $(segments "$NCCLWATCH_DIR/nowait"); do
	show "$seg" > "$T/show"
	created=$(awk '$1 == "counters" { for (i = 2; i <= NF; i++) if ($i ~ /^events_created=/) { sub(/.*=/, "", $i); print $i } }' "$T/show")
	launches=$(grep -c ' GraphLaunch .* state=' "$T/show")
	stuck=$(grep ' GraphLaunch .* state=' "$T/show" | grep -vc ' state=COMPLETED ')
	last=$(grep ' GraphLaunch .* state=' "$T/show" | tail -n 1 | sed 's/.* state=\([A-Z]*\) .*/\1/')
	note "$seg: $launches launches recorded, $stuck never moved past ENQUEUED/STARTED, $created events created"
	assert_eq "$launches" 2000 "$seg: launches recorded"
	[ "$last" != COMPLETED ] || fail "$seg: the last launch is COMPLETED: the watchdog was not stuck"
	[ "$stuck" -gt 32 ] || fail "$seg: only $stuck launches ran while the watchdog was stuck"
	[ -n "$created" ] && [ "$created" -ge $((2 * stuck)) ] ||
		fail "$seg: $created events created for $stuck launches left unmoved: a pair came back while the watchdog was stuck"
done
echo "ok"
