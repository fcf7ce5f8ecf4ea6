#!/bin/sh
# A thread whose event pool runs dry never waits for the watchdog (only the
# watchdog waits): the test build's delay (NCCLWATCH_TEST_RING_DELAY_US,
# interpose/test_hooks.h) stops the watchdog for an hour inside its first
# poll, holding the progress module's lock, as a watchdog stuck in a driver
# call would. scenario graph-replay (2 ranks, 2,000 replays, a sync after
# each) still runs to its end: each rank's reap finds the lock taken and
# its pool grows instead (no pair is ever given back: at least 2 events per
# launch). When the reap waited for the lock, the ranks stopped in their
# first refill. (Each process's exit gives up its last poll after 1 s
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
for seg in $(segments "$NCCLWATCH_DIR/nowait"); do
	show "$seg" | awk '$1 == "counters" { for (i = 2; i <= NF; i++) if ($i ~ /^events_created=/) { sub(/.*=/, "", $i); print $i } }' \
		> "$T/created"
	created=$(cat "$T/created")
	note "$seg: $created events created"
	[ -n "$created" ] && [ "$created" -ge 4000 ] ||
		fail "$seg: $created events created for 2,000 launches: a pair came back, the watchdog was not stuck"
done
echo "ok"
