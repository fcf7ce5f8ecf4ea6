#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): `ncclwatch diagnose` on
# PyTorch Flight Recorder dumps (pickles, one per rank, 256 entries each
# with frames; rank N-1 misses the last all_reduce) at 1,024 / 4,096 /
# 16,384 / 65,536 ranks, written by tests/gen/frgen.py: wall time, peak
# memory, growth per row (4x the ranks); then the pickle reader alone on
# one 64 KB dump (bench-pickle: CPU microseconds per parse). Goal on 2
# cores: 16,384 ranks in under 5 s and under 1 GiB, linear. torch's
# analyzer (fr_trace) is not timed: it needs a PyTorch with
# torch.distributed.flight_recorder (2.5+); Debian's python3-torch is 1.13
# and a pip wheel is ~800 MB plus CUDA libraries, beyond what this machine
# fetches. Prints figures; never fails.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${NW_BUILD:=$NW_ROOT/build}"
cli="$NW_BUILD/bin/ncclwatch"
gen="$NW_ROOT/tests/gen/frgen.py"
: "${FR_BENCH_SIZES:=1024 4096 16384 65536}"
printf '\n=== Flight Recorder dumps: ncclwatch diagnose at scale (one missing rank, 256 entries) ===\n'
if [ ! -x "$cli" ] || [ ! -x /usr/bin/time ] || [ ! -x /usr/bin/python3 ]; then
	echo "skipped: needs $cli, /usr/bin/time and /usr/bin/python3"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nwfr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "command: frgen.py bench DIR --ranks N --entries 256"
echo "         /usr/bin/time -f '%e s %U+%S cpu %M KiB' ncclwatch diagnose DIR  (the second of two runs: warm cache)"
echo "         cpu_s (user+system) is printed too: wall time on a loaded machine says little"
echo "torch's analyzer: not installed here (see the comment in tests/bench/fr.sh): only ours"
printf '%8s %10s %8s %10s %8s %10s %10s %s\n' ranks files_MB gen_s wall_s cpu_s ratio peak_MiB verdict
prev_wall=""
for n in $FR_BENCH_SIZES; do
	rm -rf "$tmp/d"
	g0=$(date +%s.%N)
	/usr/bin/python3 "$gen" bench "$tmp/d" --ranks "$n" --entries 256 > /dev/null || { echo "$n: frgen failed"; continue; }
	g1=$(date +%s.%N)
	mb=$(du -sm "$tmp/d" | cut -f1)
	"$cli" diagnose "$tmp/d" > /dev/null 2>&1
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$cli" diagnose "$tmp/d" > "$tmp/out" 2> /dev/null
	tail -n 1 "$tmp/time" > "$tmp/time1"
	read -r wall usr sys rss < "$tmp/time1"
	cpu=$(awk -v a="$usr" -v b="$sys" 'BEGIN { printf "%.2f", a + b }')
	verdict="$(grep -m1 -o '^[A-Z_]*:' "$tmp/out" | tr -d :) $(grep -m1 '^  culprits:' "$tmp/out" | tr -d ' ')"
	ratio=-
	[ -n "$prev_wall" ] && ratio=$(awk -v a="$cpu" -v b="$prev_wall" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }')
	gs=$(awk -v a="$g0" -v b="$g1" 'BEGIN { printf "%.1f", b - a }')
	printf '%8s %10s %8s %10s %8s %10s %10s %s\n' "$n" "$mb" "$gs" "$wall" "$cpu" "$ratio" "$((rss / 1024))" "$verdict"
	prev_wall=$cpu
done
# The pickle reader alone (report/sources/fr/pickle.c) on one 64 KB dump.
pk="$NW_BUILD/tests/bench/bench-pickle"
if [ -x "$pk" ]; then
	rm -rf "$tmp/d"
	/usr/bin/python3 "$gen" bench "$tmp/d" --ranks 2 --entries 280 > /dev/null
	f="$tmp/d/comm_lib_trace_rank_0"
	set -- $("$pk" "$f" 41 200)
	echo "pickle reader alone, one $(stat -c %s "$f")-byte dump (bench-pickle FILE 41 200): $2 us CPU per parse"
	echo "      (median of 41 batches of 200 parses; least $1, most $3; a85ea67 timed 117 -> 79 us, wall time)"
fi
echo "goal: 16384 ranks < 5 s and < 1024 MiB; linear growth = about 4x per row (ratio: of cpu_s)"
echo "note: every rank's dump holds the default group's rank list (ranks_str of all N ranks), so the"
echo "      input itself grows as N^2 (files_MB); each distinct rank list is parsed once per reading"
echo "      (a hash table by content, report/sources/fr/load_fr.c), the rest of a dump is read and unpickled"
echo "      once; at 65536 ranks the 31.7 GB do not fit in the page cache: that row also times the disk"
echo "before the reader's speed work (same machine, measured alongside): cpu_s 1024 0.35, 4096 1.44,"
echo "      16384 5.3-5.55, 65536 35.5; after: 0.17, 0.69, 2.99, 22.5 (docs/flight-recorder.md)"
