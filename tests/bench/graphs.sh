#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): what libncclwatch.so adds to a
# launch of a CUDA graph holding N NCCL ops (issue 22), next to the eager
# wrapped ncclAllReduce. Figures and ratios, never pass/fail.
#   ns per launch: bench-graph N 20000 9 on the null NCCL (NCCLSIM_NULL=1:
#     the captured AllReduces queue nothing), median of 9 rounds, with and
#     without the preload; the eager row is bench-allreduce 1 1 20000 9
#     stream. Both track with events of the SIMULATED driver (two
#     cuEventRecord per launch, a pool that grows with the launches queued
#     and not yet run, reaped by the launching thread when it runs dry):
#     those dominate, and are not what a real GPU driver costs.
#   instructions per launch (callgrind, the calling thread only, so not the
#     watchdog's poll nor the simulated stream's worker): the difference
#     between L and 2L launches, with the preload minus without, divided
#     by L; and how many of them ran inside the simulated driver's cu*
#     functions (event record and create).
#   capture cost: bench-graph 8 2000 9 capture, ns per captured op (begin,
#     8 AllReduces, end, destroy), plain, watched with
#     NCCLWATCH_GRAPH_OP_EVENTS=0 and watched by default (per-op events on:
#     one event-record node per op, recorded with the simulated driver's
#     cuEventRecordWithFlags). The launch rows and instruction counts show
#     both settings too.
#   events per launch: graph-replay jobs (2 ranks, a sync after each launch)
#     of 2,000 and 20,000 replays, NCCLWATCH_KEEP=1, per-op events on (the
#     default) and NCCLWATCH_GRAPH_OP_EVENTS=0, from each rank's
#     counters: pairs per launch ((ops_tracked - eager ops) / graph_launches,
#     goal 1), records per pair (event_records / ops_tracked, goal 2),
#     events created per launch in steady state ((created(20000) -
#     created(2000)) / (launches(20000) - launches(2000)), goal 0), at the
#     default poll (100 ms) and at NCCLWATCH_POLL_MS=5.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
bg="$NW_BUILD/tests/bench/bench-graph"
ba="$NW_BUILD/tests/bench/bench-allreduce"
sc="$NW_BUILD/tests/corpus/scenario"
for f in "$bg" "$ba" "$sc" "$NW_LIB" "$NW_CLI"; do
	[ -e "$f" ] || { echo "bench graphs: $f is missing (make all)" >&2; exit 2; }
done
mkdir -p "$NCCLSIM_DIR"

echo
echo "=== CUDA graph launches (issue 22): cost per launch, events per launch ==="
echo "command: NCCLSIM_NULL=1 [LD_PRELOAD=$NW_LIB] bench-graph NOPS 20000 9"
printf '%-40s %10s %11s %9s\n' "case" "plain ns" "watched ns" "added ns"
row() { awk -v n="$1" -v p="$2" -v w="$3" 'BEGIN { printf "%-40s %10.1f %11.1f %9.1f\n", n, p, w, w - p }'; }
p=$(NCCLSIM_NULL=1 "$ba" 1 1 20000 9 stream)
w=$(NCCLSIM_NULL=1 NCCLWATCH_JOB=benchg LD_PRELOAD="$NW_LIB" "$ba" 1 1 20000 9 stream)
row "eager ncclAllReduce, events (sim)" "$p" "$w"
for n in 1 8 64; do
	p=$(NCCLSIM_NULL=1 "$bg" $n 20000 9)
	w=$(NCCLSIM_NULL=1 NCCLWATCH_JOB=benchg LD_PRELOAD="$NW_LIB" "$bg" $n 20000 9)
	row "graph launch, $n op(s) (default, op events)" "$p" "$w"
	o=$(NCCLSIM_NULL=1 NCCLWATCH_JOB=benchg NCCLWATCH_GRAPH_OP_EVENTS=0 LD_PRELOAD="$NW_LIB" "$bg" $n 20000 9)
	row "graph launch, $n op(s), GRAPH_OP_EVENTS=0" "$p" "$o"
done
# (with op events the simulated driver replays one event-record node per
# op at every launch, in the calling thread: that is the difference)

echo "capture cost: NCCLSIM_NULL=1 [LD_PRELOAD=$NW_LIB] [NCCLWATCH_GRAPH_OP_EVENTS=0] bench-graph 8 2000 9 capture"
p=$(NCCLSIM_NULL=1 "$bg" 8 2000 9 capture)
o=$(NCCLSIM_NULL=1 NCCLWATCH_JOB=benchg NCCLWATCH_GRAPH_OP_EVENTS=0 LD_PRELOAD="$NW_LIB" "$bg" 8 2000 9 capture)
w=$(NCCLSIM_NULL=1 NCCLWATCH_JOB=benchg LD_PRELOAD="$NW_LIB" "$bg" 8 2000 9 capture)
awk -v p="$p" -v o="$o" -v w="$w" 'BEGIN { printf "  ns per captured op: plain %.1f, watched with GRAPH_OP_EVENTS=0 %.1f, watched (default, op events) %.1f (op events add %.1f)\n", p, o, w, w - o }'

if command -v valgrind > /dev/null && command -v callgrind_annotate > /dev/null; then
	# irt NOPS LAUNCHES [lib]: "total in_sim_driver" of the calling thread
	irt() {
		_pre=""; [ -n "${3:-}" ] && _pre=$NW_LIB
		rm -f "$T"/cgt.*
		NCCLSIM_NULL=1 LD_PRELOAD="$_pre" NCCLWATCH_GRAPH_OP_EVENTS=${4:-0} NCCLWATCH_JOB=benchg valgrind --tool=callgrind --separate-threads=yes \
			--callgrind-out-file="$T/cgt.out" "$bg" "$1" "$2" 1 > /dev/null 2>&1
		callgrind_annotate --auto=no --inclusive=yes --threshold=100 "$T/cgt.out-01" 2>/dev/null | awk '
			function num(s) { gsub(",", "", s); return s + 0 }
			/PROGRAM TOTALS/ { t = num($1); next }
			/sim\/libcuda\.so/ && /:(cuEvent(Record|Create)[A-Za-z_0-9]*|record_node_replay) \[/ { s += num($1) }
			END { printf "%d %d\n", t, s }'
	}
	l=2000
	echo "instructions per launch (callgrind, calling thread; bench-graph NOPS L 1, L=$l and 2L):"
	for n in 1 8; do
		echo "$(irt $n $l) $(irt $n $((2 * l))) $(irt $n $l lib) $(irt $n $((2 * l)) lib)" | awk -v n=$n -v l=$l '{
			# the bench launches L twice (warm-up + one round)
			k = 2 * l; plain = ($3 - $1) / k; watched = ($7 - $5) / k; sim = (($8 - $6) - ($4 - $2)) / k
			printf "  %d captured op(s): plain %.0f, watched (GRAPH_OP_EVENTS=0) %.0f, added %.0f, of which %.0f inside the simulated\n", n, plain, watched, watched - plain, sim
			printf "    driver'"'"'s cuEventRecord/cuEventCreate and event-record node replays (the rest: lookup, record, pool, ncclwatch'"'"'s own)\n" }'
		echo "$(irt $n $l lib 1) $(irt $n $((2 * l)) lib 1)" | awk -v n=$n -v l=$l '{
			printf "    NCCLWATCH_GRAPH_OP_EVENTS=1 (the default): watched %.0f\n", ($3 - $1) / (2 * l) }'
	done
else
	echo "instructions per launch: valgrind or callgrind_annotate not installed"
fi

# counters REPLAYS OP_EVENTS POLL_MS: "launches pairs records created" summed over the ranks
counters() {
	rm -rf "$NCCLWATCH_DIR" "$NCCLSIM_DIR"; mkdir -p "$NCCLSIM_DIR"
	NCCLWATCH_GRAPH_OP_EVENTS=$2 NCCLWATCH_POLL_MS=$3 NCCLWATCH_KEEP=1 NCCLWATCH_JOB=benchg SCENARIO_GRAPH_REPLAYS=$1 LD_PRELOAD="$NW_LIB" \
		"$sc" --case graph-replay --nranks 2 > "$T/g.out" 2>&1 || { echo "0 0 0 0"; return; }
	"$NW_CLI" show "$NCCLWATCH_DIR/benchg" 2>/dev/null | awk '
		function val(key,    i, kv) {
			for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) { split($i, kv, "="); return kv[2] + 0 }
			return 0 }
		$1 == "counters" { P += val("ops_tracked"); R += val("event_records"); C += val("events_created") }
		$1 == "graph_launches" { L += $2 }
		END { print L + 0, P + 0, R + 0, C + 0 }'
}
for ev_poll in "1 100" "0 100" "1 5" "0 5"; do
set -- $ev_poll
a=$(counters 2000 $1 $2); b=$(counters 20000 $1 $2)
echo "events per launch: scenario graph-replay, 2 ranks, 2,000 and 20,000 replays (sums over the ranks), NCCLWATCH_GRAPH_OP_EVENTS=$1 NCCLWATCH_POLL_MS=$2:"
echo "$a $b" | awk '{
	# each rank also tracks 6 eager AllReduces (4 warm-up, 2 after)
	printf "  2,000: launches %d, pairs %d, records %d, created %d; 20,000: launches %d, pairs %d, records %d, created %d\n", $1, $2, $3, $4, $5, $6, $7, $8
	printf "  pairs per launch %.3f (goal 1), records per pair %.3f (goal 2), created per launch in steady state %.4f (goal 0)\n",
	       ($6 - 12) / ($5 > 0 ? $5 : 1), $7 / ($6 > 0 ? $6 : 1), ($8 - $4) / ($5 - $1 > 0 ? $5 - $1 : 1) }'
done
# (the graph's per-op events are made once, at capture; "created" is the
# launch pairs' pool, which stops at what is in flight plus a batch: a
# thread whose pool runs dry reaps the pairs that finished itself
# (interpose/evpool.c), so the figure does not depend on the poll interval;
# before that, the pool grew to the launches made between two of the
# watchdog's polls, by 0.03-0.13 events per launch at 100 ms)
