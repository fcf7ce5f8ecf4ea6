#!/bin/sh
# budget: 40
# GPU check, step 2: STREAM_BLOCKED on a real stream. Two ranks (gpu-nccl
# blocked: two processes; on a real GPU both on device 0 as separate NCCL
# "hosts", gpu_hosts_env) do 3 checked AllReduce; then rank 1 queues a spin
# that never ends on its stream (real GPU: a PTX kernel loaded with
# cuModuleLoadDataEx, spinning on a flag in mapped host memory; simulation:
# a host function spinning on a flag, as it cannot load modules) and
# AllReduce #4 behind it. With NCCLWATCH_TIMEOUT=2 the watchdog's stall
# line for #4 must come within 3 s of rank 1's enqueue (every line of the
# job is time-stamped as it arrives), `diagnose --json` must say
# STREAM_BLOCKED, culprit rank 1, rank 0 waiting (tests/corpus/judge.py);
# then the step creates the release file, the spin ends, #4 completes and
# both ranks check their result and exit 0.
#   NW_GPU_TIMING=report   the stall line's delay is reported, not judged
#                          (tests/gpu/test-gpu-check.sh under make test:
#                          no timing thresholds in the test suite)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/gpu/gpu-lib.sh"

gpu_nccl_prog
gpu_use_nccl
gpu_hosts_env
export NCCLWATCH_TIMEOUT=2
limit=3     # NCCLWATCH_TIMEOUT + 1 s

if gpu_real; then spin=kernel; else spin=hostfn; fi
ptx_note=""
if ! gpu_real; then
	# No GPU to run the kernel: at least the compiler of the toolkit
	# must accept its text for an H100 (sm_90), if it is here.
	ptxas="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
	if [ -x "$ptxas" ]; then
		"$prog" ptx > "$T/spin.ptx" || fail "gpu-nccl ptx failed"
		"$ptxas" -arch=sm_90 "$T/spin.ptx" -o "$T/spin.cubin" 2> "$T/ptxas.err" ||
			{ cat "$T/ptxas.err"; fail "ptxas refuses the spin kernel's PTX for sm_90"; }
		ptx_note="; the kernel's PTX compiles for sm_90 (ptxas)"
	else
		ptx_note="; no ptxas here to compile the kernel's PTX"
	fi
fi

rv="$T/rendezvous"
mkdir -p "$rv"
log="$T/job.log"
# Every line of the job (both ranks, the library's lines) with the time it
# arrived (CLOCK_REALTIME, as the program's own "enqueued at" times).
nw_spawn sh -c '{ env LD_PRELOAD="$3" "$0" blocked --nranks 2 --dir "$1" --spin "$2" --release-timeout 60; echo "gpu-check: program exit $?"; } 2>&1 |
	python3 -u -c "
import sys, time
for line in iter(sys.stdin.readline, \"\"):
    sys.stdout.write(\"%.6f %s\" % (time.time(), line))
    sys.stdout.flush()
"' "$prog" "$rv" "$spin" "$(nw_preload)" > "$log" 2>&1
job=$NW_PID

show_log() { sed 's/^/    /' "$log" | tail -n 40 >&2; }
enq_line='rank 1: AllReduce #4 enqueued at'
nw_until 90 grep -q "$enq_line" "$log" || { show_log; fail "rank 1 never enqueued AllReduce #4 behind the spin (90 s)"; }
grep -q 'gpu-check: program exit' "$log" && { show_log; fail "the job ended before the release"; }
ran=$(sed -n 's/.*rank 1: spin queued on the stream: //p' "$log" | head -n 1)
t_enq=$(grep "$enq_line" "$log" | head -n 1 | sed 's/.* enqueued at \([0-9.]*\).*/\1/')
nw_until 15 grep -q 'ncclwatch: stall: .*op=AllReduce seq=4 ' "$log" ||
	{ show_log; fail "no stall line for AllReduce #4 within 15 s of its enqueue"; }
stall=$(grep 'ncclwatch: stall: .*op=AllReduce seq=4 ' "$log" | head -n 1)
t_stall=${stall%% *}
who=$(echo "$stall" | sed 's/.* stall: rank=\([0-9]*\) .* state=\([A-Z_]*\) .*/rank \1 \2/')
latency=$(awk -v a="$t_enq" -v b="$t_stall" 'BEGIN { printf "%.2f", b - a }')
note "stall line $latency s after rank 1's enqueue ($who): $stall"

# The verdict, live, while the spin holds: the first diagnosis may come
# before the peer's state moved on; a few tries within 10 s.
i=0 judged=""
while [ $i -lt 20 ]; do
	"$NW_CLI" diagnose --json "$NCCLWATCH_DIR" > "$T/diagnose.json" 2> "$T/diagnose.err"
	judged=$(python3 "$NW_ROOT/tests/corpus/judge.py" json "$T/diagnose.json" STREAM_BLOCKED 1 0 -)
	case "$judged" in ok*) break ;; esac
	i=$((i + 1))
	sleep 0.5
done
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/diagnose.txt" 2>&1
keep "$T/diagnose.json" "$T/diagnose.txt"
verdict=$(echo "$judged" | sed 's/^[a-zA-Z]* \(kind=[^ ]* culprits=[^ ]* waiting=[^ ]*\).*/\1/')

touch "$rv/release"
nw_wait "$job" 60
wrc=$?
cp "$log" "$T/job-log.txt" && keep "$T/job-log.txt"
cat "$log"
figures="spin: ${ran:-?}$ptx_note; stall line $latency s after the blocked AllReduce's enqueue ($who; limit $limit s); verdict $verdict"
[ $wrc = 124 ] && fail "the job did not end within 60 s of the release; $figures"
code=$(sed -n 's/.*gpu-check: program exit \([0-9]*\).*/\1/p' "$log" | tail -n 1)
case "$judged" in ok*) ;; *) fail "diagnose --json: $judged; $figures" ;; esac
if [ "${NW_GPU_TIMING:-judge}" = report ]; then
	figures="$figures (delay reported, not judged)"
else
	awk -v l="$latency" -v m="$limit" 'BEGIN { exit !(l <= m) }' || fail "the stall line came too late; $figures"
fi
grep -q 'rank 0: result ok' "$log" && grep -q 'rank 1: result ok' "$log" ||
	fail "a rank did not finish with a right result after the release (program exit ${code:-?}); $figures"
[ "$code" = 0 ] || fail "the job exited with ${code:-?}; $figures"
result "$figures; released, both ranks exit 0"
