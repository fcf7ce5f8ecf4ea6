#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): how many CUDA events the
# watchdog's tracking creates and records per NCCL op, from the counters of
# the segments of healthy 8-rank trainer jobs kept with NCCLWATCH_KEEP=1
# (`ncclwatch show`). Prints figures; never fails.
#
#   ops      per rank: coll_enqueued + p2p_enqueued summed over the rank's
#            comm lines (collectives + sends + receives the comms issued)
#   pairs    ops_tracked: event pairs handed to the watchdog (one per op
#            outside a group, one per stream of a group)
#   created  events_created (the pool grows by 16 pairs when it runs dry and
#            a reap of the finished pairs gives back fewer than 8)
#   records  event_records (cuEventRecord calls: 2 per pair)
# Steady state: created per op = (created(2000 steps) - created(200 steps))
# / (ops(2000) - ops(200)), over all 8 ranks; goal 0. Records per op: goal
# <= 2 (a group: <= 2 per stream, so records per pair <= 2).
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/bench/bench_lib.sh"

nb_header "figure 3: CUDA events per op (8 ranks, healthy jobs, NCCLWATCH_KEEP=1)"
cat <<EOF
command: env NCCLWATCH_KEEP=1 LD_PRELOAD=$NW_LIB trainer --nranks 8 --steps N --count 256 [--pipeline]
         then: ncclwatch show \$NCCLWATCH_DIR/$NCCLWATCH_JOB (counters and comm lines of each rank)
ops = coll_enqueued + p2p_enqueued of the rank's comms; pairs = ops_tracked;
figures are sums over the ranks (max/rank: the largest rank's events_created)
EOF

# sums: reads `ncclwatch show`, prints "ranks ops pairs created max records"
# summed over the segments that issued ops (the launcher's has none)
sums() {
	"$NW_CLI" show "$NCCLWATCH_DIR/$NCCLWATCH_JOB" 2>/dev/null | awk '
		function flush() {
			if (ops > 0) {
				ranks++; O += ops; P += pairs; C += created; R += records
				if (created > max) max = created
			}
			ops = pairs = created = records = 0
		}
		function val(key,    i, kv) {
			for (i = 1; i <= NF; i++)
				if (index($i, key "=") == 1) { split($i, kv, "="); return kv[2] + 0 }
			return 0
		}
		$1 == "segment" { flush() }
		$1 == "counters" { created = val("events_created"); records = val("event_records"); pairs = val("ops_tracked") }
		$1 == "comm" { ops += val("coll_enqueued") + val("p2p_enqueued") }
		END { flush(); print ranks + 0, O + 0, P + 0, C + 0, max + 0, R + 0 }'
}

# run NAME STEPS [TRAINER ARGS...]: a whole job; prints its table line on
# fd 3 and its sums on stdout
run() {
	_name=$1 _steps=$2
	shift 2
	_out="$T/events.out"
	nb_start "$_out" 120 -- env NCCLWATCH_KEEP=1 LD_PRELOAD="$NW_LIB" \
		"$NW_TRAINER" --nranks 8 --steps "$_steps" --count 256 "$@" || return
	nb_wait
	if ! grep -q 'all 8 ranks ok' "$_out"; then
		echo "$_name $_steps: the job failed:" >&2
		tail -n 5 "$_out" >&2
	fi
	_s=$(sums)
	echo "$_s" | awk -v name="$_name" -v steps="$_steps" '{
		printf "%-9s %5d %7d %9d %8d %8d %8d %9d %10.3f %11.3f\n", name, $1, steps, $2, $3, $4, $5, $6,
			$2 ? $6 / $2 : 0, $3 ? $6 / $3 : 0 }' >&3
	echo "$_s"
}

steady() {   # steady NAME "sums" (short job) "sums" (long job)
	echo "$2 $3" | awk -v name="$1" '{
		printf "  %s: (%d - %d) / (%d - %d) = %.4f events created per op\n",
			name, $10, $4, $8, $2, ($8 - $2) ? ($10 - $4) / ($8 - $2) : 0 }'
}

# live NAME [TRAINER ARGS...]: counters of a running job at +2, +5 and +8 s
# after every rank is ready: events created per op from +2 to +8 s
live() {
	_name=$1
	shift
	_out="$T/events.out"
	nb_start "$_out" 60 -- env LD_PRELOAD="$NW_LIB" \
		"$NW_TRAINER" --nranks 8 --steps 1000000 --count 256 "$@" || return
	_n=100
	while [ "$(grep -c 'world communicator ready' "$_out")" -lt 8 ] && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	sleep 2
	_a=$(sums)
	sleep 3
	_m=$(sums)
	sleep 3
	_b=$(sums)
	nb_stop
	echo "$_a $_m $_b" | awk -v name="$_name" '{
		printf "  %s one running job: created %d (+2 s) -> %d (+5 s) -> %d (+8 s) over %d ops: %.5f per op;\n",
			name, $4, $10, $16, $14 - $2, ($14 - $2) ? ($16 - $4) / ($14 - $2) : 0
		printf "  %s   records/op %.3f, records/pair %.3f (pairs counted when the watchdog or a reap takes them)\n",
			name, ($14 - $2) ? ($18 - $6) / ($14 - $2) : 0, ($15 - $3) ? ($18 - $6) / ($15 - $3) : 0 }'
}

printf '%-9s %5s %7s %9s %8s %8s %8s %9s %10s %11s\n' job ranks steps ops pairs created max/rank records records/op records/pair
exec 3>&1
short=$(run plain 200)
long=$(run plain 2000)
pshort=$(run pipeline 200 --pipeline)
plong=$(run pipeline 2000 --pipeline)
exec 3>&-
echo "steady state, as asked: (created(2000) - created(200)) / (ops(2000) - ops(200)), sums over 8 ranks (goal 0):"
steady "plain   " "$short" "$long"
steady "pipeline" "$pshort" "$plong"
echo "(two separate jobs: the pool grows to what is in flight plus a batch, reaped by"
echo "the calling thread when it runs dry, whatever the job's length; within one job:)"
live "plain   "
live "pipeline" --pipeline
echo "goal: records per op <= 2; per pair (an op outside a group, or one stream of a group) <= 2"
