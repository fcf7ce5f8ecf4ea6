#!/bin/sh
# NCCLSIM_FAULT=gpufault: a collective fails on the "GPU" with
# CUDA_ERROR_ILLEGAL_ADDRESS (700), sticky in its context.
#  - 8 trainer ranks, gpufault:rank=3:seq=5: rank 3's all-reduce #5 fails
#    without arriving, so the seven others hang in #5 and report
#    state=STARTED for it. (Rank 3 itself sees the error in
#    cuStreamSynchronize at once and exits: what it leaves behind is
#    test-watchdog-gpufault-exit.sh's subject.)
#  - nccl-gpufault, one process that stays alive after the fault: it
#    reports state=FAILED cuda_error=700 (CUDA_ERROR_ILLEGAL_ADDRESS) for
#    all-reduce #2 at once: NCCLWATCH_TIMEOUT is 600 s here, so a report
#    at all proves FAILED needs no timeout. Its dump shows #2 FAILED and #1
#    COMPLETED (the program lets the watchdog see #1 complete before it
#    issues #2: after a sticky error no event query can tell any more), and
#    the async error it then reads from ncclCommGetAsyncError is recorded.
#  - the same, #2 issued right after #1's cuStreamSynchronize (no poll in
#    between): a sticky fault makes every event of the context fail, so the
#    watchdog cannot tell #1 completed; its one finding may name #1, and
#    says the faulting op is "this one or a later one": it must never name
#    an op after the faulting one (#2).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

note "8 ranks, rank 3's all-reduce #5 faults"
NCCLSIM_FAULT=gpufault:rank=3:seq=5 wd_start "$T/out" gf8 --nranks 8 --steps 10 --bcast-every 0
wait_for_count $WD_WAIT 7 'ncclwatch: stall: .* state=STARTED ' "$T/out"
stall_lines "$T/out"
assert_grep 'rank 3 step 4: cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS' "$T/out"
# If rank 3 says anything on its way out, it is the failure.
rank_stalls 3 "$T/out" | grep -v ' op=AllReduce seq=[1-5] .* state=FAILED cuda_error=700 ' \
	&& fail "rank 3 reported something else than its failed all-reduce"
assert_findings "$T/out" STARTED AllReduce 5 0 1 2 4 5 6 7
for r in 0 1 2 4 5 6 7; do
	show "$(dump_of "$(rank_stalls $r "$T/out")")" > "$T/dump.show"
	assert_grep "^  op .* AllReduce comm=$FINDING_COMM rank=$r/8 seq=5 .* state=STARTED .*cuda_error=0 " "$T/dump.show"
done
trainer_kill

note "one process that lives on after the fault: FAILED cuda_error=700, at once"
NCCLWATCH_TIMEOUT=600 NCCLSIM_FAULT=gpufault:rank=0:seq=2 prog_start "$T/gf.out" gf1 nccl-gpufault linger wait
wait_for_line $WD_WAIT '^waiting for SIGUSR1$' "$T/gf.out"
seg=$(segments "$NCCLWATCH_DIR/gf1")
[ -f "$seg" ] || fail "no segment for nccl-gpufault"
seg_has() { "$NW_CLI" show "$2" | grep -Eq -- "$1"; }
nw_until $WD_WAIT seg_has '^  op .* AllReduce .* seq=1 .* state=COMPLETED ' "$seg" \
	|| { "$NW_CLI" show "$seg" | grep '^  op '; fail "all-reduce #1 never seen COMPLETED"; }
kill -USR1 "$PROG_PID"
wait_for_line $WD_WAIT 'ncclwatch: stall: ' "$T/gf.out"
wait_for_line $WD_WAIT '^lingering$' "$T/gf.out"
cat "$T/gf.out"
assert_grep '^allreduce 2: stream error 700$' "$T/gf.out"
line=$(stall_lines "$T/gf.out")
assert_eq "$(echo "$line" | grep -c .)" 1 "finding lines"
echo "$line" | grep -Eq " pid=$PROG_PID op=AllReduce seq=2 comm=[0-9a-f]{16} comm_rank=0/1 state=FAILED cuda_error=700 \\(CUDA_ERROR_ILLEGAL_ADDRESS\\): the GPU reported an error.*; dump: " \
	|| fail "not the expected FAILED finding: $line"
show "$(dump_of "$line")" > "$T/gf.dump"
assert_grep '^  op .* AllReduce .* seq=2 .* state=FAILED .*cuda_error=700 ' "$T/gf.dump"
assert_grep '^  op .* AllReduce .* seq=1 .* state=COMPLETED .*cuda_error=0 ' "$T/gf.dump"
note "the async error the program read is in the live segment"
nw_until $WD_WAIT seg_has '^  op .* AsyncError .* state=FAILED result=ncclUnhandledCudaError ' "$seg" \
	|| { "$NW_CLI" show "$seg" | grep '^  op '; fail "no AsyncError record"; }
show "$seg" > "$T/gf.show"
assert_grep '^  flags +.*stall_seen' "$T/gf.show"
assert_grep '^  comm 0 .* async_error=ncclUnhandledCudaError ' "$T/gf.show"

note "the fault right after a synchronized op: the finding names #2 or an earlier op, as a lower bound"
NCCLWATCH_TIMEOUT=600 NCCLSIM_FAULT=gpufault:rank=0:seq=2 prog_start "$T/gf2.out" gf2 nccl-gpufault linger
wait_for_line $WD_WAIT 'ncclwatch: stall: ' "$T/gf2.out"
wait_for_line $WD_WAIT '^lingering$' "$T/gf2.out"
cat "$T/gf2.out"
line=$(stall_lines "$T/gf2.out")
assert_eq "$(echo "$line" | grep -c .)" 1 "finding lines"
echo "$line" | grep -Eq ' op=AllReduce seq=[12] .* state=FAILED cuda_error=700 \(CUDA_ERROR_ILLEGAL_ADDRESS\): .*the faulting op is this one or a later one' \
	|| fail "not a FAILED finding for #1 or #2 that says 'this one or a later one': $line"
wd_check_outputs
