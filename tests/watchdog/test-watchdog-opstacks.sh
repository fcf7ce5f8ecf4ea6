#!/bin/sh
# NCCLWATCH_STACKS=1: every op record carries the call stack of the thread
# that issued it (raw return addresses on the hot path, named by the
# watchdog), printed by `ncclwatch show` as "    at 0xIP SYMBOL+0xOFF
# (MODULE+0xOFF)" lines under the op.
#  1. a stalled job (NCCLSIM_FAULT=stall:seq=3): each rank's dump names,
#     under the stuck all-reduce #3, the trainer functions that issued it
#     (issue_allreduce, called from run_rank) in the trainer's module;
#  2. a healthy job, segments kept (NCCLWATCH_KEEP=1): the segment left at
#     exit names the trainer functions in the same way (a post-mortem
#     reader has no other source for them).
# Both are checked before the test fails, so its log shows each.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_STACKS=1
problems=0
problem() { echo "PROBLEM: $*"; problems=$((problems + 1)); }

# op_stack SHOW PATTERN: the "at" lines under the first op line matching PATTERN.
op_stack() {
	awk -v pat="$2" '
		done { next }
		on && /^    at / { print; next }
		on { done = 1; next }
		/^  op / && $0 ~ pat { on = 1 }' "$1"
}

note "1. a stalled job: the dumps name the issuing trainer functions"
NCCLSIM_FAULT=stall:seq=3 wd_start "$T/stall" stall --nranks 8 --steps 5 --bcast-every 0
wait_for_count $WD_WAIT 8 'ncclwatch: stall: .* op=AllReduce seq=3 ' "$T/stall"
without_slow_inits "$T/stall" > "$T/stall.ar" || exit 1
assert_findings "$T/stall.ar" STARTED AllReduce 3 0 1 2 3 4 5 6 7
for r in 0 1 2 3 4 5 6 7; do
	show "$(dump_of "$(rank_stalls $r "$T/stall.ar")")" > "$T/dump.show"
	op_stack "$T/dump.show" " AllReduce comm=$FINDING_COMM rank=$r/8 seq=3 " > "$T/stack"
	[ $r = 0 ] && sed 's/^/    /' "$T/stack"
	[ -s "$T/stack" ] || fail "rank $r: no 'at' lines under all-reduce #3"
	assert_grep '^    at 0x[0-9a-f]+ issue_allreduce\+0x[0-9a-f]+ \(trainer\+0x[0-9a-f]+\)$' "$T/stack"
	assert_grep '^    at 0x[0-9a-f]+ run_rank\+0x[0-9a-f]+ \(trainer\+0x[0-9a-f]+\)$' "$T/stack"
	# ncclwatch's own frames are not part of the caller's stack
	assert_no_grep 'libncclwatch' "$T/stack"
	# the op's caller= is the innermost return address
	caller=$(grep -E " AllReduce comm=$FINDING_COMM rank=$r/8 seq=3 " "$T/dump.show" | field caller)
	assert_eq "$(head -n 1 "$T/stack" | awk '{ print $2 }')" "$caller" "rank $r: innermost frame = caller"
done
assert_grep '^stacks captured .* opstack_depth=[1-9]' "$T/dump.show"
trainer_kill

note "2. a healthy job, segments kept: the segments name the issuing trainer functions"
NCCLWATCH_KEEP=1 wd_run 120 "$T/healthy" healthy --nranks 8 --steps 20 --bcast-every 5 --pipeline
assert_eq "$TRAINER_STATUS" 0 "exit status"
assert_no_grep 'ncclwatch:' "$T/healthy"
for s in $(segments "$NCCLWATCH_DIR/healthy"); do
	show "$s" > "$T/seg.show"
	rank=$(sed -nE 's/^  rank +//p' "$T/seg.show")
	op_stack "$T/seg.show" ' AllReduce comm=[0-9a-f]+ rank=[0-9]+/8 seq=1 ' > "$T/stack"
	if [ "$rank" = 0 ]; then
		grep '^stacks ' "$T/seg.show"
		sed 's/^/    /' "$T/stack"
	fi
	[ -s "$T/stack" ] || { problem "rank $rank: no 'at' lines under all-reduce #1"; continue; }
	grep -Eq '^    at 0x[0-9a-f]+ issue_allreduce\+0x[0-9a-f]+ \(trainer\+0x[0-9a-f]+\)$' "$T/stack" \
		|| problem "rank $rank: the kept segment's stack of all-reduce #1 names no trainer function ($(head -n 1 "$T/stack" | sed 's/^ *//'))"
done

wd_check_outputs
[ $problems = 0 ] || fail "$problems problems (see PROBLEM lines above)"
