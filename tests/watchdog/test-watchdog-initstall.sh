#!/bin/sh
# Stalls inside communicator init, where no GPU op exists yet.
#  - NCCLSIM_FAULT=initstall:rank=2: rank 2 enters ncclCommInitRank and
#    blocks before joining, so the other seven wait in it too: all eight
#    are inside the call (the wrapper recorded INIT_ENTERED before calling
#    NCCL) and each reports state=INIT_ENTERED op=CommInit "thread T is
#    inside the call" with T its own main thread, for the same comm.
#  - --fault noinit:rank=2: rank 2 never calls NCCL at all (so it has no
#    watchdog and no segment); the seven that entered report the same.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

# check_init_findings OUT JOB RANKS...
check_init_findings() {
	_out=$1 _job=$2; shift 2
	assert_findings "$_out" INIT_ENTERED CommInit 0 "$@"
	for _r in "$@"; do
		_line=$(rank_stalls "$_r" "$_out")
		_pid=$(finding_value pid "$_line")
		echo "$_line" | grep -Eq " comm_rank=$_r/8 state=INIT_ENTERED age=[0-9.]+s: thread $_pid is inside the call; dump: " \
			|| fail "rank $_r: $_line"
		show "$(dump_of "$_line")" > "$T/dump.show"
		assert_grep "^  op [0-9]+ .* CommInit comm=$FINDING_COMM rank=$_r/8 .* state=INIT_ENTERED " "$T/dump.show"
		assert_grep "^  comm 0 id=$FINDING_COMM .* state=INIT_ENTERED " "$T/dump.show"
		assert_no_grep "^  op .* $WD_GPU_OPS comm=" "$T/dump.show"
		main_stack "$T/dump.show" "$_pid" > "$T/stack"
		assert_grep ' ncclCommInitRank\+0x' "$T/stack"
	done
	note "$_job: ranks $* report INIT_ENTERED in CommInit of comm $FINDING_COMM"
}

note "NCCLSIM_FAULT=initstall:rank=2: all eight inside ncclCommInitRank"
NCCLSIM_FAULT=initstall:rank=2 wd_start "$T/initstall" initstall --nranks 8 --steps 5
wait_for_count $WD_WAIT 8 'ncclwatch: stall: ' "$T/initstall"
stall_lines "$T/initstall"
check_init_findings "$T/initstall" initstall 0 1 2 3 4 5 6 7
assert_no_grep 'world communicator ready' "$T/initstall"
trainer_kill

note "--fault noinit:rank=2: the seven others inside ncclCommInitRank"
wd_start "$T/noinit" noinit --nranks 8 --steps 5 --fault noinit:rank=2
wait_for_count $WD_WAIT 7 'ncclwatch: stall: ' "$T/noinit"
stall_lines "$T/noinit"
assert_grep 'rank 2: fault noinit: never creating the communicator$' "$T/noinit"
check_init_findings "$T/noinit" noinit 0 1 3 4 5 6 7
[ -z "$(rank_stalls 2 "$T/noinit")" ] || fail "rank 2 (never called NCCL) reported"
assert_no_grep 'rank=2 pid=[0-9]+ wrote' "$T/noinit"
assert_eq "$(segments "$NCCLWATCH_DIR/noinit" | grep -v '\.dump\.seg$' | grep -c .)" 7 "live segments (rank 2 has none)"
trainer_kill
wd_check_outputs
