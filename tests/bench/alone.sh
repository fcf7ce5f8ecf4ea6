#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): what the watchdog's check "are
# the application's threads all gone?" (watchdog/alone.c, once per poll)
# costs in a process of 1 to 512 threads: one stat(2) of /proc/self/task,
# and with 2 threads or fewer a read of /proc/self/stat. Prints figures;
# never fails on time.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$NW_ROOT/tests/bench/bench_lib.sh"

nb_header "watchdog: the per-poll 'last thread left?' check"
echo "command: bench-alone THREADS 20000 (median of 9 runs)"
printf '%-8s %10s %22s\n' threads "ns/check" "% of a core at 100 ms"
for n in 1 2 8 64 512; do
	"$NW_BUILD/tests/bench/bench-alone" "$n" 20000 | awk '{ printf "%-8s %10s %22s\n", $1, $2, $3 }'
done
echo "goal: nothing measurable next to figure 2's < 0.5 % of a core"
