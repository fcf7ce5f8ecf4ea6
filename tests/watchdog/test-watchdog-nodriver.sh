#!/bin/sh
# Without a CUDA driver for the watchdog (NCCLWATCH_CUDA_LIB=none, or a
# path that does not load) the application runs as before (it has its own
# driver), each process says exactly once that GPU completion is not
# tracked, the segment says "tracking no-driver", GPU ops are UNTRACKED
# (no events; never a false stall) and life-cycle calls INIT_DONE. What
# needs no events still works: an init stall is reported (INIT_ENTERED),
# and so is an error from ncclCommGetAsyncError (state=FAILED
# async_error=...: with untracked ops it is the only sign of a GPU fault).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

nolib="$T/no-such-dir/libcuda.so.1"
for lib in none "$nolib"; do
	case $lib in
		none) said='^ncclwatch: NCCLWATCH_CUDA_LIB=none: GPU completion is not tracked \(ops are UNTRACKED\)$'; tag=none ;;
		*)    said='^ncclwatch: no CUDA driver \(.*no-such-dir/libcuda\.so\.1.*\): GPU completion is not tracked \(ops are UNTRACKED\)$'; tag=nolib ;;
	esac
	note "NCCLWATCH_CUDA_LIB=$lib: a healthy job, segments kept"
	NCCLWATCH_CUDA_LIB=$lib NCCLWATCH_KEEP=1 wd_run 120 "$T/$tag.ok" "$tag-ok" --nranks 8 --steps 20 --bcast-every 5 --pipeline
	grep '^ncclwatch' "$T/$tag.ok" | sort | uniq -c
	assert_eq "$TRAINER_STATUS" 0 "exit status"
	assert_grep 'trainer: all 8 ranks ok$' "$T/$tag.ok"
	assert_eq "$(grep -c 'not tracked' "$T/$tag.ok")" 8 "'not tracked' lines (one per rank process)"
	assert_eq "$(grep -Ec "$said" "$T/$tag.ok")" 8 "'not tracked' lines with the expected text"
	assert_eq "$(grep -c 'ncclwatch:' "$T/$tag.ok")" 8 "ncclwatch lines (nothing else said)"
	segs=$(segments "$NCCLWATCH_DIR/$tag-ok")
	assert_eq "$(echo "$segs" | grep -c .)" 8 "segments"
	for s in $segs; do
		show "$s" > "$T/seg.show"
		assert_grep '^  tracking +no-driver$' "$T/seg.show"
		assert_grep '^  counters +events_created=0 event_records=0 ops_tracked=0 findings=0 dumps=0 ' "$T/seg.show"
		seg_ops "$T/seg.show" > "$T/ops"
		grep -E " $WD_GPU_OPS comm=" "$T/ops" | grep -v ' state=UNTRACKED .* started=- ended=- ' > "$T/bad" || true
		[ ! -s "$T/bad" ] || { head -n 3 "$T/bad"; fail "GPU ops not UNTRACKED"; }
		assert_eq "$(grep -Ec " $WD_GPU_OPS comm=.* state=UNTRACKED " "$T/ops")" 64 "UNTRACKED ops (20 all-reduces, 4 broadcasts, 20 sends, 20 receives)"
		grep -vE " $WD_GPU_OPS comm=" "$T/ops" | grep -v ' state=INIT_DONE ' > "$T/bad" || true
		[ ! -s "$T/bad" ] || { head -n 3 "$T/bad"; fail "calls not INIT_DONE"; }
	done

	note "NCCLWATCH_CUDA_LIB=$lib: NCCLSIM_FAULT=initstall:rank=2 is still reported"
	NCCLWATCH_CUDA_LIB=$lib NCCLSIM_FAULT=initstall:rank=2 wd_start "$T/$tag.init" "$tag-init" --nranks 8 --steps 5
	wait_for_count $WD_WAIT 8 'ncclwatch: stall: ' "$T/$tag.init"
	stall_lines "$T/$tag.init"
	assert_findings "$T/$tag.init" INIT_ENTERED CommInit 0 0 1 2 3 4 5 6 7
	assert_eq "$(grep -Ec "$said" "$T/$tag.init")" 8 "'not tracked' lines"
	assert_eq "$(grep -c 'not tracked' "$T/$tag.init")" 8 "lines saying 'not tracked'"
	show "$(dump_of "$(rank_stalls 0 "$T/$tag.init")")" > "$T/dump.show"
	assert_grep '^  tracking +no-driver$' "$T/dump.show"
	trainer_kill
done

note "NCCLWATCH_CUDA_LIB=none: a GPU fault shows as the async error the application reads"
NCCLWATCH_CUDA_LIB=none NCCLWATCH_TIMEOUT=600 NCCLSIM_FAULT=gpufault:rank=0:seq=2 \
	prog_start "$T/gf.out" gf nccl-gpufault linger
wait_for_line $WD_WAIT 'ncclwatch: stall: ' "$T/gf.out"
cat "$T/gf.out"
line=$(stall_lines "$T/gf.out")
assert_eq "$(echo "$line" | grep -c .)" 1 "finding lines"
echo "$line" | grep -Eq " pid=$PROG_PID op=AsyncError seq=0 comm=[0-9a-f]{16} comm_rank=0/1 state=FAILED async_error=ncclUnhandledCudaError: ncclCommGetAsyncError reported it; dump: " \
	|| fail "not the expected async error finding: $line"
show "$(dump_of "$line")" > "$T/gf.dump"
assert_grep '^  op .* AllReduce .* seq=2 .* state=UNTRACKED ' "$T/gf.dump"
assert_grep '^  op .* AsyncError .* state=FAILED result=ncclUnhandledCudaError ' "$T/gf.dump"
wd_check_outputs
