#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): CPU time of the watchdog thread
# of each rank of an 8-rank trainer job, idle (hung, after its report) and
# busy (a healthy job with --pipeline while it runs), at the default 100 ms
# poll and at 10 ms. Prints figures; never fails on time.
#
# The thread is the one named "ncclwatch" in /proc/PID/task/*/comm (checked
# against the watchdog_tid of the rank's segment, `ncclwatch show`). Its CPU
# time is read twice, WINDOW s apart, from /proc/PID/task/TID/schedstat
# (first field: ns on a CPU) and from .../stat (utime+stime, in ticks of
# 1/CLK_TCK s: too coarse for a thread that sleeps, shown as a check);
# difference / wall interval = % of one core. Goal: < 0.5 % at 100 ms.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/bench/bench_lib.sh"

WINDOW=${NB_CPU_WINDOW:-10}
TCK=$(getconf CLK_TCK)

nb_header "figure 2: watchdog thread CPU, % of one core (8 ranks, ${WINDOW} s window)"
cat <<EOF
idle: env NCCLWATCH_TIMEOUT=1 NCCLWATCH_POLL_MS=P LD_PRELOAD=$NW_LIB \\
        trainer --nranks 8 --steps 2000 --bcast-every 0 --count 256 --fault skip:rank=5:step=1000
      (7 ranks hang in step 1000's all-reduce, rank 5 idles; window starts 1 s
      after the first stall line, so every watchdog has its findings)
busy: env NCCLWATCH_POLL_MS=P LD_PRELOAD=$NW_LIB \\
        trainer --nranks 8 --steps 1000000 --pipeline --count 256
      (healthy; window starts 1 s after every rank is ready; killed after it)
per rank: /proc/PID/task/TID/schedstat ns and .../stat utime+stime (1/$TCK s ticks)
of TID = the thread named "ncclwatch"; goal < 0.5 % of a core at 100 ms
EOF
printf '%-5s %7s %7s %7s   %-17s  %-47s %s\n' job poll_ms mean% max% "(stat mean/max%)" \
	"per rank 0..7 (schedstat %)" "context"

# sample RANKPIDS...: one line per rank "pid tid thread_ns thread_ticks process_ticks"
sample() {
	for _p in "$@"; do
		_tid=""
		for _c in /proc/"$_p"/task/*/comm; do
			[ "$(cat "$_c" 2>/dev/null)" = ncclwatch ] && { _tid=${_c%/comm}; _tid=${_tid##*/}; break; }
		done
		if [ -z "$_tid" ]; then
			echo "$_p - 0 0 0"
			continue
		fi
		awk -v p="$_p" -v t="$_tid" '
			FILENAME ~ /schedstat$/ { ns = $1 }
			FILENAME ~ /task.*\/stat$/ { tk = $14 + $15 }
			FILENAME ~ /^\/proc\/[0-9]+\/stat$/ { pk = $14 + $15 }
			END { printf "%s %s %s %s %s\n", p, t, ns, tk, pk }' \
			"/proc/$_p/task/$_tid/schedstat" "/proc/$_p/task/$_tid/stat" "/proc/$_p/stat" 2>/dev/null
	done
}

# completed ops of all ranks (collectives + sends/receives), from the live segments
ops_done() {
	"$NW_CLI" show "$NCCLWATCH_DIR/$NCCLWATCH_JOB" 2>/dev/null | awk '
		$1 == "comm" { for (i = 1; i <= NF; i++) if ($i ~ /^(coll|p2p)_completed=/) { split($i, kv, "="); n += kv[2] } }
		END { print n + 0 }'
}

# the pid -> watchdog_tid pairs the segments record
seg_tids() {
	"$NW_CLI" show "$NCCLWATCH_DIR/$NCCLWATCH_JOB" 2>/dev/null | awk '
		$1 == "pid" { pid = $2 } $1 == "watchdog_tid" { print pid, $2 }'
}

# measure JOB POLL_MS
measure() {
	_job=$1 _poll=$2 _out="$T/cpu.out"
	if [ "$_job" = idle ]; then
		nb_start "$_out" $((WINDOW + 30)) -- env NCCLWATCH_TIMEOUT=1 NCCLWATCH_POLL_MS="$_poll" LD_PRELOAD="$NW_LIB" \
			"$NW_TRAINER" --nranks 8 --steps 2000 --bcast-every 0 --count 256 --fault skip:rank=5:step=1000 || return
		nb_until_line "$_out" 'ncclwatch: stall:' 20 || { echo "$_job: no stall line"; nb_stop; return; }
	else
		nb_start "$_out" $((WINDOW + 30)) -- env NCCLWATCH_POLL_MS="$_poll" LD_PRELOAD="$NW_LIB" \
			"$NW_TRAINER" --nranks 8 --steps 1000000 --pipeline --count 256 || return
		_n=100
		while [ "$(grep -c 'pipeline communicator ready' "$_out")" -lt 8 ] && [ $_n -gt 0 ]; do
			sleep 0.1; _n=$((_n - 1))
		done
	fi
	sleep 1
	# rank R: world size 8 (launcher local), pid N, ...
	_pids=$(awk '$2 == "rank" && $4 == "world" { r = $3; sub(/:$/, "", r); p = $10; sub(/,$/, "", p); print r, p }' "$_out" |
		sort -n | awk '{ print $2 }')
	# shellcheck disable=SC2086
	set -- $_pids
	if [ $# -ne 8 ]; then
		echo "$_job: found $# rank pids, not 8"; nb_stop; return
	fi
	seg_tids > "$T/segtids"
	o0=$(ops_done); t0=$(nb_now); sample "$@" > "$T/s0"
	sleep "$WINDOW"
	t1=$(nb_now); sample "$@" > "$T/s1"; o1=$(ops_done)
	nb_stop
	awk -v job="$_job" -v poll="$_poll" -v dt="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
	    -v tck="$TCK" -v o0="$o0" -v o1="$o1" '
		FILENAME ~ /segtids$/ { seg[$1] = $2; next }
		FILENAME ~ /s0$/ { ns0[FNR] = $3; tk0[FNR] = $4; pk0[FNR] = $5; next }
		{
			n++
			if ($2 == "-" || !(FNR in ns0)) { bad++; next }
			if (seg[$1] != $2) mism++
			c = ($3 - ns0[FNR]) / 1e9 / dt * 100; s += c; if (c > m) m = c
			list = list sprintf(" %.3f", c)
			k = ($4 - tk0[FNR]) / tck / dt * 100; ks += k; if (k > km) km = k
			pc = ($5 - pk0[FNR]) / tck / dt * 100; ps += pc
		}
		END {
			good = n - bad
			if (!good) { printf "%-5s %7s  no watchdog thread found\n", job, poll; exit }
			ctx = sprintf("rank process %.1f%% of a core", ps / good)
			if (job == "busy") ctx = ctx sprintf(", %.0f ops/s per rank", (o1 - o0) / dt / good)
			if (mism) ctx = ctx sprintf(", %d tid(s) differ from the segment!", mism)
			if (bad) ctx = ctx sprintf(", %d rank(s) without a watchdog", bad)
			printf "%-5s %7s %7.3f %7.3f   (%5.2f / %5.2f)     %-47s %s\n", job, poll, s / good, m,
				ks / good, km, list, ctx
		}' "$T/segtids" "$T/s0" "$T/s1"
}

measure idle 100
measure busy 100
measure idle 10
measure busy 10
