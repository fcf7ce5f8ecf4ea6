#!/bin/sh
# The rank whose GPU faults is the culprit; what does it leave behind when
# it does what the trainer and most applications do: see the error, abort
# the communicator and exit at once, long before the watchdog's next poll?
# nccl-gpufault exit, NCCLSIM_FAULT=gpufault:rank=0:seq=2: all-reduce #1 is
# synchronized by the program (it completed), #2 faults (700); then
# ncclCommAbort, cuStreamDestroy, cuDevicePrimaryCtxRelease, exit 5.
#
# The contract: a FAILED op is a finding at once (no timeout), and a process
# that saw a failure keeps its segment; at exit the last poll and the
# findings at exit must see the sticky error:
#  1. NCCLWATCH_KEEP=1: the kept segment shows #2 FAILED cuda_error=700
#     (and not #1 ENQUEUED, which says the GPU never reached it);
#  2. segments not kept: the process leaves evidence: a FAILED line, or its
#     segment / a dump showing #2 FAILED.
# Both are checked before the test fails, so its log lists each.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLSIM_FAULT=gpufault:rank=0:seq=2
problems=0
problem() { echo "PROBLEM: $*"; problems=$((problems + 1)); }

note "1. exit right after the fault, NCCLWATCH_KEEP=1"
NCCLWATCH_KEEP=1 prog_run 30 "$T/keep.out" keep nccl-gpufault exit
cat "$T/keep.out"
assert_eq "$PROG_STATUS" 5 "exit status of nccl-gpufault exit"
assert_grep '^allreduce 2: stream error 700$' "$T/keep.out"
show "$NCCLWATCH_DIR/keep" > "$T/keep.show"
seg_ops "$T/keep.show" | grep ' AllReduce '
grep -Eq '^  op .* AllReduce .* seq=2 .* state=FAILED .*cuda_error=700 ' "$T/keep.show" \
	|| problem "the kept segment does not show all-reduce #2 FAILED cuda_error=700"
grep -Eq '^  op .* AllReduce .* seq=1 .* state=ENQUEUED ' "$T/keep.show" \
	&& problem "the kept segment shows all-reduce #1 ENQUEUED (the GPU never reached it), yet the program had synchronized it"

note "2. exit right after the fault, segments not kept"
prog_run 30 "$T/gone.out" gone nccl-gpufault exit
cat "$T/gone.out"
assert_eq "$PROG_STATUS" 5 "exit status of nccl-gpufault exit"
find "$NCCLWATCH_DIR/gone" -name '*.seg' -type f > "$T/gone.files"
cat "$T/gone.files"
evidence=0
grep -q 'ncclwatch: stall: .* state=FAILED cuda_error=700' "$T/gone.out" && evidence=1
for f in $(cat "$T/gone.files"); do
	"$NW_CLI" show "$f" | grep -Eq '^  op .* AllReduce .* seq=2 .* state=FAILED ' && evidence=1
done
[ $evidence = 1 ] || problem "the process whose GPU faulted left nothing: no FAILED line, no segment or dump showing it"

wd_check_outputs
[ $problems = 0 ] || fail "$problems problems (see PROBLEM lines above)"
