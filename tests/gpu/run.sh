#!/bin/sh
# make gpu-check: one bounded run that proves ncclwatch on a real driver,
# real NCCL, real PyTorch (Python 3.12) and JAX when a GPU is here, and the
# same C steps on the simulation (tests/sim) when none is (CI), so the
# script itself is exercised every day.
#
# Steps are tests/gpu/steps/NN-name.sh, run in order, each in its own
# process group under its own time limit (its "# budget: SECONDS" line:
# twice its time measured on the simulation, or a guess where only a GPU
# runs it). A step exits 0 (PASS), 77 (SKIP, with a "skipped: why" line)
# or anything else (FAIL, with a "FAIL: why" line); its last "result: "
# line holds its figures. Each step prints one line here:
#     PASS  01-nccl-loop      12.3 s  1000 AllReduce recorded, ...
# and the run ends with "N passed, N failed, N skipped". The summary
# (summary.txt, summary.json) and every step's log (logs.tgz) go to
# GPU_CHECK_OUT (default $NW_BUILD/gpu-check). Nothing needs the network.
#
#   NW_GPU_MODE=auto|real|sim   auto: real when nvidia-smi sees a GPU
#   NW_GPU_NCCL_DIR             the real libnccl.so.2's folder (default:
#                               the nvidia-nccl wheel next to torch, else
#                               the loader's)
#   NW_GPU_STEPS="01 04"        only the steps whose name starts so
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${NW_BUILD:=build}"
case "$NW_BUILD" in /*) ;; *) NW_BUILD="$root/$NW_BUILD" ;; esac
: "${GPU_CHECK_OUT:=$NW_BUILD/gpu-check}"
: "${NW_GPU_MODE:=auto}" "${NW_GPU_STEPS:=}"
export NW_ROOT="$root" NW_BUILD GPU_CHECK_OUT
out=$GPU_CHECK_OUT
rm -rf "$out" && mkdir -p "$out/logs" || { echo "gpu-check: cannot write $out" >&2; exit 2; }
start=$(date +%s)

if [ "$NW_GPU_MODE" = auto ]; then
	NW_GPU_MODE=sim
	nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && NW_GPU_MODE=real
fi
case "$NW_GPU_MODE" in
real)
	if [ -z "${NW_GPU_NCCL_DIR:-}" ]; then
		w=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
		if [ -n "$w" ] && [ -e "$w/lib/libnccl.so.2" ]; then NW_GPU_NCCL_DIR=$w/lib
		else NW_GPU_NCCL_DIR=$(dirname "$(ldconfig -p | awk '/libnccl.so.2 .*x86-64/ { print $NF; exit }')" 2>/dev/null); fi
	fi ;;
sim) NW_GPU_NCCL_DIR=$NW_BUILD/sim ;;
*) echo "gpu-check: NW_GPU_MODE must be auto, real or sim, not '$NW_GPU_MODE'" >&2; exit 2 ;;
esac
export NW_GPU_MODE NW_GPU_NCCL_DIR
for f in "$NW_BUILD/lib/libncclwatch.so" "$NW_BUILD/bin/ncclwatch" "$NW_BUILD/sim/libnccl.so.2"; do
	[ -e "$f" ] || { echo "gpu-check: $f is not built (make all, or make gpu-bundle elsewhere and carry it)" >&2; exit 2; }
done
# A build made on another machine may need the libunwind it was built with
# (make gpu-bundle copies it; gpu-lib.sh puts it on the steps' path).
if [ -d "$NW_BUILD/gpu-runtime" ] && ldd "$NW_BUILD/bin/ncclwatch" | grep -q 'not found'; then
	export NW_GPU_CLI_LIBS="$NW_BUILD/gpu-runtime"
fi

{
	echo "ncclwatch gpu-check $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%dT%H:%M:%SZ), mode $NW_GPU_MODE"
	sh "$root/tests/gpu/machine.sh" "$out/logs" | grep -v '^file:'
	echo "nccl:          $NW_GPU_NCCL_DIR/libnccl.so.2"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

pass=0 failn=0 skipn=0
: > "$out/steps.tsv"
for f in "$root"/tests/gpu/steps/[0-9]*.sh; do
	name=$(basename "$f" .sh)
	if [ -n "$NW_GPU_STEPS" ]; then
		want=0
		for s in $NW_GPU_STEPS; do case "$name" in "$s"*) want=1 ;; esac; done
		[ $want = 1 ] || continue
	fi
	budget=$(sed -n 's/^# budget: *\([0-9][0-9]*\).*/\1/p' "$f" | head -n 1)
	: "${budget:=60}"
	log="$out/logs/$name.log"
	t0=$(date +%s.%N)
	# setsid: the step and all it started are one group, killed at the end
	NW_GPU_STEP_DIR="$out/logs/$name" setsid timeout -k 5 "$budget" sh "$f" > "$log" 2>&1 &
	sp=$!
	wait $sp
	rc=$?
	kill -KILL -- "-$sp" 2>/dev/null
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0)  st=PASS; pass=$((pass + 1)); why=$(sed -n 's/^result: //p' "$log" | tail -n 1) ;;
	77) st=SKIP; skipn=$((skipn + 1)); why=$(sed -n 's/^skipped: //p' "$log" | tail -n 1) ;;
	124|137) st=FAIL; failn=$((failn + 1)); why="over its budget of ${budget} s: $(tail -n 1 "$log" | cut -c1-160)" ;;
	*)  st=FAIL; failn=$((failn + 1)); why=$(sed -n 's/^FAIL: //p' "$log" | tail -n 1)
	    [ -n "$why" ] || why="exit $rc: $(tail -n 1 "$log" | cut -c1-160)" ;;
	esac
	printf '%-5s %-26s %6s s  %s\n' "$st" "$name" "$secs" "$why" | tee -a "$out/steps.txt"
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$st" "$secs" "$budget" "$why" >> "$out/steps.tsv"
done

total=$(( $(date +%s) - start ))
{
	cat "$out/machine.txt"
	echo
	cat "$out/steps.txt" 2>/dev/null
	echo
	echo "total ${total} s"
	echo "$pass passed, $failn failed, $skipn skipped"
} > "$out/summary.txt"
python3 - "$out" "$NW_GPU_MODE" "$total" > "$out/summary.json" <<'PY'
import json, sys
out, mode, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
machine = {}
for line in open(out + "/machine.txt"):
    if ":" in line and not line.startswith("ncclwatch "):
        k, v = line.split(":", 1)
        machine[k.strip()] = v.strip()
steps = []
for line in open(out + "/steps.tsv"):
    name, status, secs, budget, why = line.rstrip("\n").split("\t", 4)
    steps.append({"step": name, "status": status, "seconds": float(secs), "budget_s": int(budget), "detail": why})
count = lambda s: sum(1 for x in steps if x["status"] == s)
json.dump({"mode": mode, "machine": machine, "steps": steps, "total_s": total,
           "passed": count("PASS"), "failed": count("FAIL"), "skipped": count("SKIP")}, sys.stdout, indent=1)
print()
PY
tar czf "$out/logs.tgz" -C "$out" logs 2>/dev/null
echo "total ${total} s; summary in $out/summary.txt, summary.json, logs.tgz"
echo "$pass passed, $failn failed, $skipn skipped"
[ $failn = 0 ]
