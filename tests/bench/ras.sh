#!/bin/sh
# Part of `make bench` (tests/bench/run.sh): `ncclwatch ras` against the
# simulated NCCL's RAS endpoint of a hung trainer job of 8 and 64 processes
# started without the preload (rank 1 skips an all-reduce), then
# `ncclwatch diagnose` of the saved report: wall time of each (median of 5),
# report size, and the verdict; then `ncclwatch attach --tree` over the job
# (snapshots, the RAS query, the verdict over both; median of 3). Goal
# (issue 15): attach to verdict, with RAS, < 2 s at 64 processes. Prints
# figures; never fails.
set -u
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${NW_BUILD:=$NW_ROOT/build}"
cli="$NW_BUILD/bin/ncclwatch"
trainer="$NW_BUILD/bin/trainer"
printf '\n=== figure 8: ncclwatch ras + diagnose of the saved report (simulated NCCL 2.28.9 RAS, no preload) ===\n'
if [ ! -x "$trainer" ] || [ ! -x "$cli" ]; then
	echo "skipped: needs $trainer and $cli"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nwras.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill -KILL "-$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export NCCL_RAS_ADDR="127.0.0.1:$port" LD_LIBRARY_PATH="$NW_BUILD/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "command: trainer --nranks N --fault skip:rank=1:step=3 (NCCL_RAS_ADDR=$NCCL_RAS_ADDR)"
echo "         ncclwatch ras --save F; ncclwatch diagnose F   (median of 5 runs each)"
echo "         ncclwatch attach --no-python --tree TRAINER -o DIR  (median of 3)"
printf '%6s %10s %8s %12s %10s %10s %s\n' procs report_KB ras_ms diagnose_ms total_ms attach_ms verdict
now_ms() { date +%s%3N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for n in 8 64; do
	export NCCLSIM_DIR="$tmp/sim$n"
	mkdir -p "$NCCLSIM_DIR"
	setsid "$trainer" --nranks "$n" --steps 1000 --count 64 --bcast-every 0 --fault skip:rank=1:step=3 > "$tmp/out$n" 2>&1 &
	pid=$!
	i=0
	until [ "$("$cli" ras --json 2>/dev/null | grep -c '^          "rank": ')" = "$n" ] &&
	      "$cli" ras 2>/dev/null | grep -q "^  rank 1: RUNNING AllReduce launches=3$"; do
		i=$((i + 1)); [ $i -gt 1200 ] && break
		sleep 0.1
	done
	: > "$tmp/r"; : > "$tmp/d"
	for k in 1 2 3 4 5; do
		t0=$(now_ms); "$cli" ras --save "$tmp/s.json" > /dev/null 2>&1; t1=$(now_ms)
		"$cli" diagnose "$tmp/s.json" > "$tmp/diag" 2>&1; t2=$(now_ms)
		echo $((t1 - t0)) >> "$tmp/r"; echo $((t2 - t1)) >> "$tmp/d"
	done
	: > "$tmp/a"
	for k in 1 2 3; do
		rm -rf "$tmp/snap"
		t0=$(now_ms); "$cli" attach --no-python --tree "$pid" -o "$tmp/snap" > "$tmp/attach" 2>&1; t1=$(now_ms)
		echo $((t1 - t0)) >> "$tmp/a"
	done
	grep -q '^attach: RAS at ' "$tmp/attach" || echo "   (attach did not get RAS: $(grep '^attach: [^p]' "$tmp/attach" | head -n 1))"
	a=$(median < "$tmp/a")
	r=$(median < "$tmp/r"); d=$(median < "$tmp/d")
	kb=$(( $(wc -c < "$tmp/s.json") / 1024 ))
	verdict=$(grep -m1 -o '^[A-Z_]*: rank[s]* [0-9,-]* never launched [A-Za-z]* #[0-9]*' "$tmp/diag" || grep -m1 '^[A-Z_]*:' "$tmp/diag" | cut -c1-60)
	printf '%6s %10s %8s %12s %10s %10s %s\n' "$n" "$kb" "$r" "$d" $((r + d)) "$a" "$verdict"
	kill -KILL "-$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=""
done
echo "goal: 64 processes, attach to verdict with RAS < 2000 ms"

printf '\n=== figure 8b: peak memory reading a saved RAS report (generated: tests/ras/rasgen.py) ===\n'
echo "command: rasgen.py N F; ncclwatch diagnose F  (peak resident set, getrusage; ratio = peak / report size)"
echo "         a world communicator of N ranks and one of every 8 ranks; the verdict names rank 1"
printf '%8s %10s %10s %7s %s\n' ranks report_MB peak_MB ratio verdict
for n in 10000 60000 150000; do
	python3 "$NW_ROOT/tests/ras/rasgen.py" "$n" "$tmp/big.json" || break
	size=$(stat -c %s "$tmp/big.json")
	set -- $(python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$tmp/big.out" "$cli" diagnose "$tmp/big.json")
	verdict=$(grep -m1 -o '^[A-Z_]*: rank[s]* [0-9,-]* never launched [A-Za-z]* #[0-9]*' "$tmp/big.out")
	awk -v n="$n" -v s="$size" -v kb="$1" -v v="$verdict" \
		'BEGIN { printf "%8d %10.1f %10.1f %7.2f %s\n", n, s / 1048576, kb / 1024, kb * 1024 / s, v }'
	rm -f "$tmp/big.json" "$tmp/big.out"
done
echo "goal: a small multiple of the report (the reader kept jansson's tree of the whole report: 6-10x)"
