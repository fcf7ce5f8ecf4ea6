#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): the memory a healthy 8-rank job
# pays for the preload (issue 20's "RSS of a healthy 8-rank job").
#
#   trainer --nranks 8 --steps 1000000 --pipeline --count 256, with and
#   without LD_PRELOAD=libncclwatch.so; NB_RSS_WAIT s (3) after every rank
#   says its pipeline communicator is ready, each rank's
#     /proc/PID/status      VmRSS (resident now), VmHWM (peak resident)
#     /proc/PID/smaps_rollup Pss (its fair share of shared pages: the
#                           segment a rank writes is its own, so it counts whole)
#   are read, and the job is killed. The segment files' size on disk (tmpfs)
#   is printed beside them: that memory is the ring every rank writes, kept
#   when the process dies, and is the bulk of what the preload adds.
# NB_RSS_LIB=PATH measures another build's library in place of this one's
# (the figure before a change). Figures only, never pass/fail.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/bench/bench_lib.sh"

WAIT=${NB_RSS_WAIT:-3}
NW_LIB=${NB_RSS_LIB:-$NW_LIB}

nb_header "memory of a healthy 8-rank job (KiB per rank)"
cat <<EOF
command: env [LD_PRELOAD=$NW_LIB] trainer --nranks 8 --steps 1000000 --pipeline --count 256
         read ${WAIT} s after every rank is ready: /proc/PID/status VmRSS VmHWM, /proc/PID/smaps_rollup Pss
EOF
printf '%-9s %10s %10s %10s %10s %10s   %s\n' job "VmRSS" "max" "VmHWM" "Pss" "max Pss" "segments on tmpfs"

# sample PID...: "rss hwm pss" per rank, in KiB
sample() {
	for _p in "$@"; do
		awk '
			FILENAME ~ /status$/ && $1 == "VmRSS:" { rss = $2 }
			FILENAME ~ /status$/ && $1 == "VmHWM:" { hwm = $2 }
			FILENAME ~ /smaps_rollup$/ && $1 == "Pss:" { pss = $2 }
			END { print rss + 0, hwm + 0, pss + 0 }' "/proc/$_p/status" "/proc/$_p/smaps_rollup" 2>/dev/null
	done
}

# measure NAME [LD_PRELOAD=LIB]
measure() {
	_name=$1
	shift
	_out="$T/rss.out"
	nb_start "$_out" $((WAIT + 40)) -- env NCCLWATCH_JOB=benchrss "$@" \
		"$NW_TRAINER" --nranks 8 --steps 1000000 --pipeline --count 256 || return
	_n=200
	while [ "$(grep -c 'pipeline communicator ready' "$_out")" -lt 8 ] && [ $_n -gt 0 ]; do
		sleep 0.1; _n=$((_n - 1))
	done
	sleep "$WAIT"
	# rank R: world size 8 (launcher local), pid N, ...
	_pids=$(awk '$2 == "rank" && $4 == "world" { r = $3; sub(/:$/, "", r); p = $10; sub(/,$/, "", p); print r, p }' "$_out" |
		sort -n | awk '{ print $2 }')
	# shellcheck disable=SC2086
	set -- $_pids
	if [ $# -ne 8 ]; then
		echo "$_name: found $# rank pids, not 8"; nb_stop; return
	fi
	sample "$@" > "$T/rss.sample"
	_seg=$(du -sk "$NCCLWATCH_DIR" 2>/dev/null | awk '{ print $1 }')
	_nseg=$(find "$NCCLWATCH_DIR" -type f 2>/dev/null | wc -l)
	nb_stop
	awk -v name="$_name" -v seg="${_seg:-0}" -v nseg="$_nseg" '
		{ n++; r += $1; if ($1 > rm) rm = $1; h += $2; p += $3; if ($3 > pm) pm = $3 }
		END {
			if (n != 8) { printf "%-9s sampled %d of 8 ranks\n", name, n; exit }
			s = nseg ? sprintf("%d KiB in %d files", seg, nseg) : "none"
			printf "%-9s %10.0f %10d %10.0f %10.0f %10d   %s\n", name, r / n, rm, h / n, p / n, pm, s
			print r / n, h / n, p / n, seg > "/dev/stderr"
		}' "$T/rss.sample" 2>> "$T/rss.means"
}

: > "$T/rss.means"
measure plain
measure preload LD_PRELOAD="$NW_LIB"
awk 'NR == 1 { r = $1; h = $2; p = $3 } NR == 2 {
		printf "added per rank (preload - plain, means): VmRSS %+.0f KiB, VmHWM %+.0f KiB, Pss %+.0f KiB; segments %d KiB per rank\n",
			$1 - r, $2 - h, $3 - p, $4 / 8 }' "$T/rss.means"
echo "(the segment is mapped by its rank and counted in its RSS; NCCLWATCH_RING sizes the ring)"
