#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): the hang generator of issue 21
# (tests/hangfuzz/) on a sweep of seeds, every view of each: accuracy per
# fault kind and per shape of the job (a seed counts as right when all its
# views name exactly the
# culprits its construction gives, with an allowed kind, and no verdict
# blames another rank), and every seed it got wrong with its plan.
# HANGFUZZ_BENCH_SEEDS="FIRST LAST" (default "1000 1199") sets the sweep.
# Prints figures, never fails.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${NW_BUILD:=$NW_ROOT/build}"
export NW_ROOT NW_BUILD
: "${HANGFUZZ_BENCH_SEEDS:=1000 1199}"
printf '\n=== the hang generator (tests/hangfuzz/): seeds %s, every view ===\n' "$HANGFUZZ_BENCH_SEEDS"
if [ ! -x "$NW_BUILD/tests/hangfuzz/hangfuzz" ]; then
	echo "skipped: $NW_BUILD/tests/hangfuzz/hangfuzz is not built (make all)"
	exit 0
fi
start=$(date +%s)
# shellcheck disable=SC2086
sh "$NW_ROOT/tests/hangfuzz/run-seeds.sh" --range $HANGFUZZ_BENCH_SEEDS > "${TMPDIR:-/tmp}/nwbench-hangfuzz.$$" 2>&1
out="${TMPDIR:-/tmp}/nwbench-hangfuzz.$$"
grep -E '^[a-z-]+: [0-9]+ ok of [0-9]+ seeds$' "$out"
right=$(grep -E '^[a-z-]+: [0-9]+ ok of [0-9]+ seeds$' "$out" | awk '{ ok += $2; n += $5 } END { printf "%d of %d seeds right (%.1f%%)", ok, n, n ? 100 * ok / n : 0 }')
echo "all faults: $right"
grep -E '^shape [a-z-]+=[^:]+: [0-9]+ ok of [0-9]+ seeds$' "$out"
echo "blaming a rank that only waits: $(grep -c ' blames=' "$out") views"
sed -n '/^wrong: seed/,$p' "$out" | grep -v ' ok, .* FAIL$'
grep -E '^fuzz-[0-9]+ [a-z]+ FAIL' "$out" | head -n 40
echo "views: $(tail -n 1 "$out"); $(( $(date +%s) - start )) s"
rm -f "$out"
