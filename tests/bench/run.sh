#!/bin/sh
# `make bench`: what libncclwatch.so adds to a wrapped ncclAllReduce, on the
# simulated NCCL in null mode (the real call returns at once). Prints
# figures and ratios; nothing here passes or fails on time.
#   - ns per call (median of repeats), 1 thread on 1 comm and 8 threads on
#     4 comms, without and with the preload;
#   - instructions per call under valgrind --tool=callgrind: the difference
#     between N and 2N calls, with the preload minus without, divided by N
#     (start-up costs cancel out).
# Goal: <= 100 ns and <= 300 instructions added per call.
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${NW_BUILD:=build}"
case "$NW_BUILD" in /*) ;; *) NW_BUILD="$root/$NW_BUILD" ;; esac
bench="$NW_BUILD/tests/bench/bench-allreduce"
lib="$NW_BUILD/lib/libncclwatch.so"
[ -x "$bench" ] && [ -f "$lib" ] || { echo "bench: build first (make all)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nwbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export NCCLSIM_NULL=1 NCCLSIM_DIR="$tmp/sim" NCCLWATCH_DIR="$tmp/shm"
export LD_LIBRARY_PATH="$NW_BUILD/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$NCCLSIM_DIR"

echo "ncclwatch bench: wrapped ncclAllReduce on the null NCCL ($(nproc) cores)"
printf '%-22s %12s %12s %10s %8s\n' "case" "plain ns" "watched ns" "added ns" "ratio"
for c in "1 1 2000000" "8 4 500000"; do
	set -- $c
	plain=$("$bench" "$1" "$2" "$3" 9)
	watched=$(LD_PRELOAD="$lib" NCCLWATCH_JOB=bench "$bench" "$1" "$2" "$3" 9)
	awk -v p="$plain" -v w="$watched" -v name="$1 thread(s), $2 comm(s)" \
		'BEGIN { printf "%-22s %12.1f %12.1f %10.1f %7.1fx\n", name, p, w, w - p, (p > 0 ? w / p : 0) }'
done

if command -v valgrind > /dev/null; then
	n=20000
	ir() {   # ir CALLS [preload]: instructions of a whole run
		_pre=""; [ -n "${2:-}" ] && _pre=$lib
		LD_PRELOAD="$_pre" NCCLWATCH_JOB=callgrind valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$bench" 1 1 "$1" 1 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	p1=$(ir $n); p2=$(ir $((2 * n)))
	w1=$(ir $n lib); w2=$(ir $((2 * n)) lib)
	awk -v p1="$p1" -v p2="$p2" -v w1="$w1" -v w2="$w2" -v n="$n" 'BEGIN {
		# the bench issues CALLS twice (warm-up + one repeat)
		plain = (p2 - p1) / (2 * n); watched = (w2 - w1) / (2 * n)
		printf "instructions per call (callgrind): plain %.0f, watched %.0f, added %.0f\n", plain, watched, watched - plain }'
else
	echo "instructions per call: valgrind not installed"
fi
echo "goal: <= 100 ns and <= 300 instructions added per call"
