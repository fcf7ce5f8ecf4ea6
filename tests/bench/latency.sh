#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): how long after a fault takes
# effect the first "ncclwatch: stall:" line appears, for every fault kind
# the trainer and the simulation inject, at NCCLWATCH_TIMEOUT=2 and 5 with
# the default 100 ms poll. Prints figures and ratios to the goal; never
# fails on time.
#
# Each job is the 8-rank trainer (--verbose: "rank R step S done" per step)
# under the preload, run by bench-stamp, which stamps every line of the
# merged stdout/stderr with CLOCK_MONOTONIC when it arrives and kills the
# job's process group GRACE s after the first stall line. Two measures:
#   age   the age= the first stall line reports (the stuck op's age: since
#         it was enqueued, or since the watchdog saw it start);
#   wall  the stall line's arrival time minus that of the last line the
#         reporting rank printed before it: its last "step S done" (a hang
#         in step S+1), "world communicator ready" (slow: the first
#         all-reduce is the slow one), "joining the world communicator"
#         (init faults: the init call was entered right after it), or, for
#         gpufault, its own "cuStreamSynchronize failed" line.
# Goal: <= timeout + 2 polls (timeout + 0.2 s); a FAILED op (gpufault)
# needs no timeout: <= 1 poll (0.1 s).
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/bench/bench_lib.sh"

STEPS=2000        # the job's length if nothing hangs
AT=1000           # the step a fault hits (~0.3 s into the job: the watchdog polls by then)
SEQ=$((AT + 1))   # --bcast-every 0: collective #SEQ is step AT's all-reduce
GRACE=1
POLL=0.1
FRANK=5           # the faulty rank

nb_header "figure 1: stall detection latency (8 ranks, NCCLWATCH_POLL_MS=100)"
cat <<EOF
command (per row; FAULT and SIM from the table, T = NCCLWATCH_TIMEOUT):
  env NCCLWATCH_TIMEOUT=T NCCLSIM_FAULT=SIM LD_PRELOAD=$NW_LIB \\
    bench-stamp -m 'ncclwatch: stall:' -g $GRACE -- \\
    trainer --nranks 8 --steps $STEPS --bcast-every 0 --count 256 --verbose --fault FAULT
  (gpufault: LD_PRELOAD also gets libbench-linger.so, which keeps the faulty
  rank alive after it exits with an error, and rank $FRANK first sleeps 500 ms
  at step $AT so that steps 0..$((AT - 1)) are polled COMPLETED before the fault;
  "gpufault, no pause": the same without the sleep, so the ops of the last
  <= 100 ms are still unpolled when the context's error turns sticky;
  "gpufault, rank exits" is the plain trainer, whose faulty rank exits ~1 ms
  after the error, before any poll)
age = the first stall line's age=; wall = its arrival - the reporting rank's
last line before it (ref); goal = T + 2 polls, or 1 poll for FAILED.
EOF
printf '%-20s %3s  %-34s %6s %7s %6s %7s %7s  %s\n' \
	fault T "first stall line" age wall goal age/goal wall/goal "ref (s after launch: line)"

# row NAME T LINGER TRAINER_FAULT SIM_FAULT
row() {
	_name=$1 _to=$2 _linger=$3 _tf=$4 _sf=$5
	_pre=$NW_LIB
	[ "$_linger" = 1 ] && _pre="$NW_LIB:$NB_LINGER"
	set -- "$NW_TRAINER" --nranks 8 --steps "$STEPS" --bcast-every 0 --count 256 --verbose
	[ -n "$_tf" ] && set -- "$@" --fault "$_tf"
	_out="$T/latency.out"
	nb_start "$_out" $((_to + 20)) -m 'ncclwatch: stall:' -g "$GRACE" -- \
		env NCCLWATCH_TIMEOUT="$_to" NCCLSIM_FAULT="$_sf" LD_PRELOAD="$_pre" "$@" || return
	nb_wait
	_goal=$(awk -v t="$_to" -v p="$POLL" -v f="$_name" 'BEGIN { printf "%.1f", f ~ /^gpufault/ && f !~ /exits/ ? p : t + 2 * p }')
	awk -v name="$_name" -v to="$_to" -v goal="$_goal" -v seq="$SEQ" '
		function field(key,    i) {
			for (i = 4; i <= NF; i++)
				if (index($i, key "=") == 1)
					return substr($i, length(key) + 2)
			return "?"
		}
		$2 == "ncclwatch:" && $3 == "stall:" {
			if (!found) {
				found = 1; ts = $1
				r = field("rank"); st = field("state"); age = field("age")
				sub(/s:?$/, "", age)
				what = "rank=" r " " field("op") "#" field("seq") " " st
				ref = (r in last) ? last[r] : ""; reftext = (r in text) ? text[r] : "(none)"
			}
			if ($0 ~ /state=FAILED/ && !failed) { failed = 1; fts = $1; fwhat = "rank=" field("rank") " " field("op") "#" field("seq") }
			next
		}
		!found && $2 == "rank" {
			rr = $3; sub(/:$/, "", rr)
			last[rr] = $1
			t = $0; sub(/^[^ ]* /, "", t); text[rr] = t
		}
		END {
			if (!found) {
				printf "%-20s %3s  %-34s\n", name, to, "(no stall line before the job ended)"
				exit
			}
			wall = ref != "" ? ts - ref : -1
			agef = age == "?" ? "-" : sprintf("%.1f", age)
			ager = age == "?" ? "-" : sprintf("%.2f", age / goal)
			printf "%-20s %3s  %-34s %6s %7.3f %6.1f %7s %7.2f  %.3f: %s\n", name, to, what, agef,
				wall, goal, ager, wall / goal, ref, substr(reftext, 1, 48)
			if (name ~ /^gpufault/)
				printf "%-20s      %s\n", "", failed ? sprintf("FAILED line: %s at +%.3f s after the ref (the fault hit #%s)", fwhat, fts - ref, seq) \
					: "no FAILED line at all: the faulty rank exited before a poll saw the error"
		}' "$_out"
}

for to in 2 5; do
	ms=$(( (to + 3) * 1000 ))      # sleep / slow well above the timeout
	row skip             "$to" 0 "skip:rank=$FRANK:step=$AT" ""
	row stall            "$to" 0 "" "stall:seq=$SEQ"
	row gpufault         "$to" 1 "sleep:rank=$FRANK:step=$AT:ms=500" "gpufault:rank=$FRANK:seq=$SEQ"
	row "gpufault, no pause" "$to" 1 "" "gpufault:rank=$FRANK:seq=$SEQ"
	row "gpufault, rank exits" "$to" 0 "" "gpufault:rank=$FRANK:seq=$SEQ"
	row initstall        "$to" 0 "" "initstall:rank=$FRANK"
	row noinit           "$to" 0 "noinit:rank=$FRANK" ""
	row "sleep $ms ms"   "$to" 0 "sleep:rank=$FRANK:step=$AT:ms=$ms" ""
	row "slow $ms ms"    "$to" 0 "" "slow:rank=$FRANK:ms=$ms"
done
