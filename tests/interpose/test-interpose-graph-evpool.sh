#!/bin/sh
# The event pool in steady state (issue 22): a process launching a CUDA
# graph thousands of times takes its event pairs from the pairs in flight
# that finished (interpose/evpool.c: when its pool runs dry the launching
# thread reaps them, watchdog/progress.c), never from new events, however
# seldom the watchdog polls. scenario graph-replay (2 ranks, a sync after
# each launch) under the preload, 2,000 and 6,000 replays; each rank's
# counters, from its segment:
# - events created: the same after 6,000 replays as after 2,000 (0 per
#   launch past warm-up) with the watchdog not polling before exit
#   (NCCLWATCH_POLL_MS=60000: the launching side alone keeps the pool;
#   before the reaper every launch made a pair). At the default poll
#   (100 ms) and every millisecond, polls race with reaps, and a reap that
#   meets a poll does not wait for it (a batch is created instead): how
#   many is timing, printed and not asserted; the rest is;
# - exactly one pair per launch, two records per pair: from 2,000 to 6,000
#   replays ops_tracked grows by 4,000 and event_records by 8,000;
# - every GraphLaunch record still in the ring is COMPLETED with its start
#   and end times: a reaped pair's launch is brought up to date before the
#   pair is used again (at POLL_MS=60000 nothing else could have).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"

# counters JOB: "rank created tracked records launches" per segment, by rank
counters() {
	for seg in $(segments "$NCCLWATCH_DIR/$1"); do
		show "$seg" | awk '
			function val(key,    i, kv) {
				for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) { split($i, kv, "="); return kv[2] }
				return "?" }
			$1 == "rank" { r = $2 }
			$1 == "counters" { c = val("events_created"); p = val("ops_tracked"); e = val("event_records") }
			$1 == "graph_launches" { l = $2 }
			END { print r, c, p, e, l }'
	done | sort -n
}

# run POLL_MS REPLAYS: the job evpool-POLL-REPLAYS, checked; its counters in $T/POLL-REPLAYS
run() {
	_job=evpool-$1-$2
	nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=$_job NCCLWATCH_KEEP=1 NCCLWATCH_POLL_MS=$1 \
		SCENARIO_GRAPH_REPLAYS=$2 "$prog" --case graph-replay --nranks 2 > "$T/$_job.out" 2>&1
	_rc=$?
	[ $_rc = 0 ] || cat "$T/$_job.out"
	assert_eq "$_rc" 0 "$_job: exit status"
	assert_no_grep 'ncclwatch:' "$T/$_job.out"
	counters $_job > "$T/$1-$2"
	echo "$_job: rank created tracked records launches:"
	cat "$T/$1-$2"
	assert_eq "$(awk -v l="$2" '$5 == l' "$T/$1-$2" | grep -c .)" 2 "$_job: ranks with $2 graph launches"
	for seg in $(segments "$NCCLWATCH_DIR/$_job"); do
		show "$seg" | grep ' GraphLaunch ' > "$T/launches"
		[ -s "$T/launches" ] || fail "$_job: no GraphLaunch record in $seg"
		assert_eq "$(grep -vc ' state=COMPLETED .* started=+[0-9.]* ended=+[0-9.]* ' "$T/launches")" 0 \
			"$_job: GraphLaunch records not COMPLETED with both times in $seg"
	done
}

for poll in 60000 100 1; do
	note "NCCLWATCH_POLL_MS=$poll: 2,000 and 6,000 replays"
	run $poll 2000
	run $poll 6000
	join "$T/$poll-2000" "$T/$poll-6000" > "$T/$poll-both"
	assert_eq "$(grep -c . "$T/$poll-both")" 2 "POLL_MS=$poll: ranks in both runs"
	while read -r rank c1 p1 e1 l1 c2 p2 e2 l2; do
		if [ "$poll" = 60000 ]; then
			assert_eq "$((c2 - c1))" 0 "POLL_MS=$poll rank $rank: events created past warm-up ($c1 after 2,000 replays, $c2 after 6,000)"
		else
			note "POLL_MS=$poll rank $rank: $((c2 - c1)) events created past warm-up (reaps that met a poll)"
		fi
		assert_eq "$((p2 - p1))" "$((l2 - l1))" "POLL_MS=$poll rank $rank: pairs for $((l2 - l1)) more launches"
		assert_eq "$((e2 - e1))" "$((2 * (p2 - p1)))" "POLL_MS=$poll rank $rank: event records for $((p2 - p1)) more pairs"
	done < "$T/$poll-both"
done
echo "ok"
