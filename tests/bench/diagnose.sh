#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): `ncclwatch diagnose` on the
# dumps a missing-rank hang leaves at 1,024, 4,096 and 16,384 ranks (rings
# of 256 records, stacks captured), written by the generator (nwgen): wall
# time and peak memory (GNU time's maximum resident set), and how they grow
# from one size to the next (4x the ranks). Goal on 2 cores: 16,384 ranks
# in under 5 s and under 1 GiB, growing linearly. Prints figures; never fails.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${NW_BUILD:=$NW_ROOT/build}"
gen="$NW_BUILD/tests/progs/nwgen"
cli="$NW_BUILD/bin/ncclwatch"
printf '\n=== figure 5: ncclwatch diagnose at scale (missing_rank dumps, ring 256, stacks) ===\n'
if [ ! -x "$gen" ] || [ ! -x "$cli" ] || [ ! -x /usr/bin/time ]; then
	echo "skipped: needs $gen, $cli and /usr/bin/time (Debian package time)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nwdiag.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "command: nwgen --scenario missing_rank --ranks N --ring 256 --stacks --dump --out DIR"
echo "         /usr/bin/time -f '%e s %M KiB' ncclwatch diagnose DIR  (the second of two runs: warm cache)"
printf '%8s %10s %12s %10s %12s %s\n' ranks files_MB wall_s ratio peak_MiB verdict
prev_wall=""; prev_rss=""
for n in 1024 4096 16384; do
	rm -rf "$tmp/d"
	"$gen" --scenario missing_rank --ranks "$n" --ring 256 --stacks --dump --out "$tmp/d" > /dev/null || {
		echo "$n: nwgen failed"; continue; }
	mb=$(du -sm "$tmp/d" | cut -f1)
	"$cli" diagnose "$tmp/d" > /dev/null 2>&1
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$cli" diagnose "$tmp/d" > "$tmp/out" 2> /dev/null
	tail -n 1 "$tmp/time" > "$tmp/time1"   # GNU time first says "exited with non-zero status 1"
	read -r wall rss < "$tmp/time1"
	verdict=$(grep -m1 -o '^[A-Z_]*:' "$tmp/out" | tr -d :)
	ratio=-
	[ -n "$prev_wall" ] && ratio=$(awk -v a="$wall" -v b="$prev_wall" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }')
	printf '%8s %10s %12s %10s %12s %s\n' "$n" "$mb" "$wall" "$ratio" "$((rss / 1024))" "$verdict"
	prev_wall=$wall; prev_rss=$rss
done
echo "goal: 16384 ranks < 5 s and < 1024 MiB; linear growth = about 4x per row"
