#!/bin/sh
# A healthy job under the watchdog: 8 ranks, 200 steps with the pipeline's
# send/recv groups, then a non-blocking (config.blocking = 0) run. The
# watchdog sees every collective and every Send/Recv COMPLETED on the GPU
# (start and end times set), every other call (inits, split, groups,
# finalize, destroy) INIT_DONE; it says nothing (no stall, no other line);
# the trainer's results are those of a run without the preload; and without
# NCCLWATCH_KEEP no segment is left behind.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

# check_segments JOB NRANKS ALLREDUCES BROADCASTS SENDRECVS
check_segments() {
	_job=$1 _n=$2 _ar=$3 _bc=$4 _sr=$5
	_segs=$(segments "$NCCLWATCH_DIR/$_job")
	assert_eq "$(echo "$_segs" | grep -c .)" "$_n" "$_job: segment files"
	for _seg in $_segs; do
		show "$_seg" > "$T/seg.show"
		_rank=$(sed -nE 's/^  rank +//p' "$T/seg.show")
		assert_grep '^  tracking +events$' "$T/seg.show"
		assert_grep '^  counters .*findings=0 dumps=0 ' "$T/seg.show"
		_tracked=$(grep '^  counters ' "$T/seg.show" | field ops_tracked)
		[ "$_tracked" -gt 0 ] || fail "$_job: rank $_rank: ops_tracked=$_tracked"
		assert_no_grep '^  flags .*stall_seen' "$T/seg.show"
		seg_ops "$T/seg.show" > "$T/ops"
		grep -E " $WD_GPU_OPS comm=" "$T/ops" > "$T/gpu.ops"
		grep -vE " $WD_GPU_OPS comm=" "$T/ops" > "$T/call.ops"
		# GPU ops: COMPLETED, no CUDA error, both times set
		grep -vE ' state=COMPLETED .*cuda_error=0 .* started=\+[0-9.]+ ended=\+[0-9.]+ ' "$T/gpu.ops" > "$T/bad" || true
		[ ! -s "$T/bad" ] || { head -n 3 "$T/bad"; fail "$_job: rank $_rank: GPU ops not COMPLETED with times"; }
		# everything else returned: INIT_DONE
		grep -v ' state=INIT_DONE ' "$T/call.ops" > "$T/bad" || true
		[ ! -s "$T/bad" ] || { head -n 3 "$T/bad"; fail "$_job: rank $_rank: calls not INIT_DONE"; }
		assert_eq "$(grep -c ' AllReduce ' "$T/gpu.ops")" "$_ar" "$_job: rank $_rank: all-reduces"
		assert_eq "$(grep -c ' Broadcast ' "$T/gpu.ops")" "$_bc" "$_job: rank $_rank: broadcasts"
		assert_eq "$(grep -c ' Send ' "$T/gpu.ops")" "$_sr" "$_job: rank $_rank: sends"
		assert_eq "$(grep -c ' Recv ' "$T/gpu.ops")" "$_sr" "$_job: rank $_rank: receives"
		assert_eq "$(grep -c ' GroupEnd ' "$T/call.ops")" "$_sr" "$_job: rank $_rank: group ends"
		for _k in CommInit CommSplit CommFinalize CommDestroy GroupStart; do
			grep -q " $_k " "$T/call.ops" || fail "$_job: rank $_rank: no $_k record"
		done
		# the comm table agrees: everything enqueued was completed
		_world=$(grep '^  comm 0 ' "$T/seg.show")
		assert_eq "$(echo "$_world" | field coll_completed)" $((_ar + _bc)) "$_job: rank $_rank: world coll_completed"
		assert_eq "$(echo "$_world" | field coll_started)" $((_ar + _bc)) "$_job: rank $_rank: world coll_started"
		assert_eq "$(grep '^  comm 1 ' "$T/seg.show" | field p2p_completed)" $((2 * _sr)) "$_job: rank $_rank: p2p_completed"
		# peer lines: ... send_enqueued= send_completed= recv_enqueued= recv_completed=
		grep '^  peer ' "$T/seg.show" | awk '
			{ split($6, a, "="); split($7, b, "="); split($8, c, "="); split($9, d, "=");
			  if (a[2] != b[2] || c[2] != d[2]) bad = 1 } END { exit bad }' \
			|| { grep '^  peer ' "$T/seg.show"; fail "$_job: rank $_rank: peer counts not all completed"; }
	done
	note "$_job: $_n segments: every collective and Send/Recv COMPLETED with times, every call INIT_DONE"
}

note "reference: the job without the preload"
trainer_run 120 "$T/plain" --nranks 8 --steps 200 --pipeline > /dev/null
assert_eq "$TRAINER_STATUS" 0 "exit status without the preload"
grep -E 'rank [0-9]+ ok ' "$T/plain" | sort > "$T/plain.ok"
assert_eq "$(grep -c . "$T/plain.ok")" 8 "ok lines without the preload"

note "watched, segments kept (NCCLWATCH_KEEP=1, NCCLWATCH_TIMEOUT=$WD_TIMEOUT)"
NCCLWATCH_KEEP=1 wd_run 120 "$T/kept" kept --nranks 8 --steps 200 --pipeline
assert_eq "$TRAINER_STATUS" 0 "exit status under the preload"
grep -E 'rank [0-9]+ ok ' "$T/kept" | sort > "$T/kept.ok"
diff "$T/plain.ok" "$T/kept.ok" || fail "the ranks' results differ under the preload"
assert_no_grep 'ncclwatch:' "$T/kept"
check_segments kept 8 200 20 200
assert_eq "$(find "$NCCLWATCH_DIR/kept" -name '*.dump.seg' | grep -c .)" 0 "dumps of a healthy job"

note "watched, segments not kept: nothing is left behind"
wd_run 120 "$T/nokeep" nokeep --nranks 8 --steps 200 --pipeline
assert_eq "$TRAINER_STATUS" 0 "exit status under the preload"
grep -E 'rank [0-9]+ ok ' "$T/nokeep" | sort > "$T/nokeep.ok"
diff "$T/plain.ok" "$T/nokeep.ok" || fail "the ranks' results differ under the preload"
assert_no_grep 'ncclwatch:' "$T/nokeep"
# (The same command with NCCLWATCH_KEEP=1 above shows the preload works.)
# Nothing at all: the last process out removes the control file and the
# job directory.
[ ! -e "$NCCLWATCH_DIR/nokeep" ] || { find "$NCCLWATCH_DIR/nokeep"; fail "left behind without NCCLWATCH_KEEP"; }

note "non-blocking communicators (ncclInProgress; end events after ncclCommGetAsyncError)"
NCCLWATCH_KEEP=1 wd_run 120 "$T/nb" nb --nranks 8 --steps 50 --pipeline --nonblocking
assert_eq "$TRAINER_STATUS" 0 "exit status under the preload"
assert_ranks "$T/nb" ' ok steps=50 ' 0 1 2 3 4 5 6 7
assert_no_grep 'ncclwatch:' "$T/nb"
check_segments nb 8 50 5 50
show "$NCCLWATCH_DIR/nb" > "$T/nb.show"
assert_eq "$(grep '^  comm ' "$T/nb.show" | grep -c 'blocking=0')" 16 "non-blocking comms"
assert_grep '^  op .* AllReduce .* state=COMPLETED result=ncclInProgress ' "$T/nb.show"
wd_check_outputs
