#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): `ncclwatch diagnose` from
# per-host summaries (issue 24) beside the same job's segments. The
# generator (nwgen) writes the segments a missing-rank hang leaves (ring
# 256, stacks captured) on hosts of 8 ranks. At 16,384 ranks (2,048 hosts)
# each host's summary is made from that host's segments by `ncclwatch
# summary -o FILE SEG...`, one process per host, as a collection script
# runs it on every host (two at a time here); at 131,072 ranks (16,384
# hosts) by one `ncclwatch summary --by-host DIR SEGS` over all of them
# (the same bytes per host, tests/summary/test-summary-hosts.sh; 16,384
# processes would take most of an hour on this machine). Then diagnose
# reads the directory of summaries. Rows: 16,384 ranks from segments and
# from summaries, 131,072 ranks from summaries (NW_BENCH_SUMMARY_131K=0
# leaves it out: it writes about 7 GB of segments under $TMPDIR first).
# Columns: wall time and peak memory of diagnose (GNU time, the second of
# two runs), the input's size, the verdict. Goal: 131,072 ranks from
# summaries in < 5 s and < 1 GiB. Prints figures; never fails.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${NW_BUILD:=$NW_ROOT/build}"
: "${NW_BENCH_SUMMARY_131K:=1}"
gen="$NW_BUILD/tests/progs/nwgen"
cli="$NW_BUILD/bin/ncclwatch"
printf '\n=== per-host summaries: ncclwatch diagnose from summaries vs segments (missing_rank, 8 ranks per host) ===\n'
if [ ! -x "$gen" ] || [ ! -x "$cli" ] || [ ! -x /usr/bin/time ]; then
	echo "skipped: needs $gen, $cli and /usr/bin/time (Debian package time)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nwsum.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -le 2 ] || jobs=2
echo "command: nwgen --scenario missing_rank --ranks N --hosts N/8 --ring 256 --stacks --job j --out SEGS"
echo "         16384: per host H, $jobs at a time: ncclwatch summary -o SUMS/H.nwsum SEGS/j/H.*.seg"
echo "         131072: ncclwatch summary --by-host SUMS SEGS"
echo "         /usr/bin/time -f '%e s %M KiB' ncclwatch diagnose SEGS|SUMS  (the second of two runs)"
printf '%8s %7s %-9s %10s %10s %8s %10s %s\n' ranks hosts input input_MB per_host_KB wall_s peak_MiB verdict

# row N HOSTS INPUT DIR: one diagnose, timed
row() {
	"$cli" diagnose "$4" > /dev/null 2>&1
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$cli" diagnose "$4" > "$tmp/out" 2> /dev/null
	tail -n 1 "$tmp/time" > "$tmp/time1"
	read -r wall rss < "$tmp/time1"
	kb=$(du -sk "$4" | cut -f1)
	verdict=$(grep -m1 -o '^[A-Z_]*:' "$tmp/out" | tr -d :)
	printf '%8s %7s %-9s %10s %10s %8s %10s %s\n' "$1" "$2" "$3" "$((kb / 1024))" "$((kb / $2))" "$wall" \
		"$((rss / 1024))" "$verdict"
}

# summaries N with-segments|alone per-host|by-host: segments of N ranks, a summary per host; rows
summaries() {
	n=$1 hosts=$(($1 / 8))
	rm -rf "$tmp/segs" "$tmp/sums"
	mkdir -p "$tmp/sums"
	"$gen" --scenario missing_rank --ranks "$n" --hosts "$hosts" --ring 256 --stacks --job j --out "$tmp/segs" \
		> /dev/null || { echo "$n: nwgen failed"; return; }
	t0=$(date +%s.%N)
	if [ "$3" = per-host ]; then
		seq 0 $((hosts - 1)) | xargs -P "$jobs" -I{} sh -c \
			'"$1" summary -o "$2/node$3.nwsum" "$4"/j/node$3.*.seg 2> /dev/null' sh "$cli" "$tmp/sums" {} "$tmp/segs"
		how="$jobs at a time"
	else
		/usr/bin/time -f '%M' -o "$tmp/stime" "$cli" summary --by-host "$tmp/sums" "$tmp/segs" 2> /dev/null
		how="by one process of $(($(tail -n 1 "$tmp/stime") / 1024)) MiB peak"
	fi
	t1=$(date +%s.%N)
	made=$(ls "$tmp/sums" | grep -c '\.nwsum$')
	[ "$2" = with-segments ] && row "$n" "$hosts" segments "$tmp/segs"
	row "$n" "$hosts" summaries "$tmp/sums"
	awk -v a="$t0" -v b="$t1" -v h="$made" -v how="$how" \
		'BEGIN { printf "         (%d summaries written in %.1f s, %s)\n", h, b - a, how }'
	rm -rf "$tmp/segs"
}

summaries 16384 with-segments per-host
if [ "$NW_BENCH_SUMMARY_131K" = 1 ]; then
	summaries 131072 alone by-host
else
	echo "  131072: left out (NW_BENCH_SUMMARY_131K=0)"
fi
echo "goal: 131072 ranks (16384 hosts x 8) from summaries < 5 s and < 1024 MiB"
