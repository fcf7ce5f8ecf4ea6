#!/bin/sh
# A rank whose last op completed on the GPU, that waited for its stream
# (cuStreamSynchronize) and exited at once, must not be blamed for ending
# inside that op. The CUDA driver tears itself down at exit from a handler
# cuInit registered (the simulation does too): every event query after it
# answers CUDA_ERROR_DEINITIALIZED, and the library's destructor runs after
# it. Found on an H100 (driver 580, real NCCL): ranks that exited 0 after
# "the stream finished after all" left their AllReduce #5 STARTED or
# ENQUEUED, and the verdict said they "ended inside" it.
#
# scenario early-exit, 4 ranks: rank 3 synchronizes AllReduce #4 and
# returns at once (exit 0, its comm alive); ranks 0-2 issue #5 and wait in
# it. NCCLWATCH_POLL_MS=5000: no poll of rank 3's watchdog falls between its
# sync and its exit (its thread sleeps a whole interval before its first),
# so only what the exit path settles can say #4 completed.
#  1. rank 3's kept segment (`ncclwatch show`): every AllReduce COMPLETED,
#     #4 with its end time, no op ENQUEUED or STARTED;
#  2. `ncclwatch diagnose`: MISSING_RANK, rank 3 never called #5 (its last
#     call #4 COMPLETED, then it exited 0), ranks 0-2 wait in it; nobody
#     "ended inside" an op.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_POLL_MS=5000 NCCLWATCH_KEEP=1
JD="$NCCLWATCH_DIR/settle"
mkdir -p "$T/rdv"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=settle \
	"$NW_BUILD/tests/corpus/scenario" --case early-exit --nranks 4 --dir "$T/rdv" > "$T/out" 2>&1
JOB=$NW_PID

# rank 3's segment (HOST.PID.seg), once its process has ended
rank3_seg() {
	for _f in "$JD"/*.seg; do
		case $_f in *.dump.seg) continue ;; esac
		[ -f "$_f" ] || continue
		"$NW_CLI" show "$_f" > "$T/seg.show" 2> /dev/null || continue
		grep -Eq '^  op .* AllReduce .* rank=3/4 ' "$T/seg.show" || continue
		_pid=$(basename "$_f" .seg); _pid=${_pid##*.}
		kill -0 "$_pid" 2> /dev/null && return 1
		echo "$_f"
		return 0
	done
	return 1
}
parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/out")" -ge 4 ]; }
nw_until "$WD_WAIT" parked || { cat "$T/out"; fail "the ranks did not all reach their last step"; }
nw_until "$WD_WAIT" rank3_seg || { cat "$T/out"; ls -l "$JD"; fail "rank 3 did not exit, or left no segment"; }
SEG=$(rank3_seg)
cat "$T/out"

note "1. rank 3's segment"
show "$SEG" > "$T/rank3.show"
seg_ops "$T/rank3.show" | grep ' AllReduce '
grep -Eq '^  op .* AllReduce .* seq=4 .* state=COMPLETED .* ended=\+[0-9]' "$T/rank3.show" \
	|| fail "rank 3's AllReduce #4, synchronized before its exit, is not COMPLETED with an end time"
seg_ops "$T/rank3.show" | grep -E " $WD_GPU_OPS " > "$T/rank3.gpuops"
assert_no_grep 'state=(ENQUEUED|STARTED) ' "$T/rank3.gpuops"

note "2. the diagnosis (ranks 0-2 still waiting), once their watchdogs reported"
nw_until "$WD_WAIT" test -s "$JD/report.txt" || fail "no report.txt: the waiting ranks' watchdogs saw no stall"
"$NW_CLI" diagnose "$JD" > "$T/diagnose.out" 2> "$T/diagnose.err"
cat "$T/diagnose.out"
assert_no_grep 'ended inside' "$T/diagnose.out"
assert_no_grep 'ended before completing' "$T/diagnose.out"
assert_grep '^MISSING_RANK: rank 3 never called AllReduce #5 .*ranks 0-2 wait in it' "$T/diagnose.out"
assert_grep '^    rank 3: never called it .*last NCCL call AllReduce #4 .*\(COMPLETED\); exited with status 0' "$T/diagnose.out"

kill -KILL "-$JOB" 2> /dev/null
wd_check_outputs
