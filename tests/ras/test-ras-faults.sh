#!/bin/sh
# End to end, the way an on-call engineer meets a hung job started without
# ncclwatch: the trainer runs on the simulation without the preload, a fault
# hangs it, `ncclwatch ras --save` takes NCCL RAS's report and
# `ncclwatch diagnose FILE` names the culprit and the op from launch counts
# (or says what RAS cannot see). Faults: skip (8 ranks), count (the rank
# with the wrong count fails, the others hang), crash, noinit and initstall
# (RAS lists no comm before every rank arrived), stall (every rank launched
# the same ops: launch counts equal), and skip again under mpirun and
# torchrun.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

# diag NAME: save the RAS report and diagnose it into $T/NAME.diag
diag() {
	"$NW_CLI" ras --save "$T/$1.json" > "$T/$1.ras" 2>&1 || { cat "$T/$1.ras"; fail "$1: ncclwatch ras failed"; }
	sed 's/^/    /' "$T/$1.ras"
	"$NW_CLI" diagnose "$T/$1.json" > "$T/$1.diag"
	_rc=$?
	grep -v '^    from NCCL RAS' "$T/$1.diag" | sed 's/^/    /'
	assert_eq "$_rc" 1 "$1: diagnose exit status"
}

note "skip: rank 5 of 8 never issues step 20's all-reduce"
trainer_start "$T/skip.out" --nranks 8 --steps 24 --count 64 --bcast-every 0 --verbose --fault skip:rank=5:step=20
wait_for_line 120 'rank 5 step 20: fault skip: not issuing the all-reduce$' "$T/skip.out"
wait_for_ranks 120 "$T/skip.out" ' step 19 done$' 0 1 2 3 4 5 6 7
nw_until 60 ras_answers 8 || fail "RAS never listed the 8 ranks"
diag skip
assert_grep '^MISSING_RANK: rank 5 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=20 there, launches=21 on 7 peers\); the others wait in it$' "$T/skip.diag"
assert_grep '^  op: AllReduce launches=21 on comm [0-9a-f]{16} \(8 ranks\)$' "$T/skip.diag"
assert_grep '^  culprits: 5$' "$T/skip.diag"
assert_grep '^  waiting: 0-4,6-7$' "$T/skip.diag"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/skip.diag")" 1 "verdicts for skip"
trainer_kill

note "count: rank 1's step 3 all-reduce has half the count; it fails, the others hang"
trainer_start "$T/count.out" --nranks 4 --steps 6 --count 65536 --bcast-every 0 --verbose --fault count:rank=1:step=3
wait_for_line 120 'trainer: rank 1 \(pid [0-9]+\) failed with exit code 3$' "$T/count.out"
wait_for_ranks 120 "$T/count.out" ' step 2 done$' 0 2 3
gone() { "$NW_CLI" ras --json | grep -q '"unresponsive": true'; }
nw_until 60 gone || fail "count: rank 1 never showed as gone"
diag count
assert_grep '^MISSING_RANK: rank 1: process gone or unreachable' "$T/count.diag"
assert_grep '^  op: AllReduce launches=4 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/count.diag"
assert_grep '^  culprits: 1$' "$T/count.diag"
assert_grep 'the 3 ranks that answered are at AllReduce launches=4' "$T/count.diag"
trainer_kill

note "crash: rank 2 kills itself at step 4"
trainer_start "$T/crash.out" --nranks 4 --steps 24 --count 64 --bcast-every 0 --verbose --fault crash:rank=2:step=4
wait_for_ranks 120 "$T/crash.out" ' step 3 done$' 0 1 3
nw_until 60 gone || fail "crash: rank 2 never showed as gone"
diag crash
assert_grep '^MISSING_RANK: rank 2: process gone or unreachable' "$T/crash.diag"
assert_grep "rank 2 of comm 0x[0-9a-f]{16}: process gone or unreachable: pid [0-9]+ on 127\.0\.0\.1, did not answer RAS" "$T/crash.diag"
assert_grep '^  op: AllReduce launches=5 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/crash.diag"
assert_grep '^  waiting: 0-1,3$' "$T/crash.diag"
trainer_kill

for init in noinit initstall; do
	note "$init: rank 1 never arrives in the world communicator's init"
	if [ $init = noinit ]; then
		trainer_start "$T/$init.out" --nranks 4 --steps 4 --verbose --fault noinit:rank=1
	else
		NCCLSIM_FAULT=initstall:rank=1 trainer_start "$T/$init.out" --nranks 4 --steps 4 --verbose
	fi
	wait_for_ranks 120 "$T/$init.out" ': joining the world communicator$' 0 2 3
	nw_until 60 sh -c '[ "$(ss -Hltn "sport = :'"$RAS_PORT"'" | wc -l)" -ge 3 ]' || fail "$init: RAS not up"
	diag $init
	assert_grep '^RAS at .*: NCCL 2\.28\.9, 0 communicators' "$T/$init.ras"
	assert_grep '^INIT_STALL: RAS reports no communicator' "$T/$init.diag"
	assert_grep '^  culprits: -$' "$T/$init.diag"
	assert_grep 'a rank that never arrived cannot be named from RAS' "$T/$init.diag"
	trainer_kill
done

note "stall: every rank starts collective #4 and none completes"
NCCLSIM_FAULT=stall:seq=4 trainer_start "$T/stall.out" --nranks 4 --steps 24 --count 64 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/stall.out" ' step 2 done$' 0 1 2 3
equal4() { "$NW_CLI" ras | grep -q '^  ranks 0-3: RUNNING AllReduce launches=4$'; }
nw_until 60 equal4 || fail "stall: counts never reached 4 everywhere"
diag stall
assert_grep '^TRANSPORT_STALL: launch counts equal; RAS cannot see completion' "$T/stall.diag"
assert_grep '^  op: AllReduce launches=4 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/stall.diag"
assert_grep '^  waiting: 0-3$' "$T/stall.diag"
trainer_kill

. "$NW_ROOT/tests/launch/launch-lib.sh"
if [ -x "$MPIRUN" ]; then
	note "skip under mpirun"
	launch_mpirun 4 "$T/mpi.out" -- "$NW_TRAINER" --steps 24 --count 64 --bcast-every 0 --verbose --fault skip:rank=3:step=6
	nw_until 120 grep -q 'rank 3 step 6: fault skip' "$T/mpi.out" || { cat "$T/mpi.out"; fail "mpirun: no skip"; }
	nw_until 60 ras_answers 4 || fail "mpirun: RAS never listed the 4 ranks"
	mpi6() { "$NW_CLI" ras | grep -q '^  ranks 0-2: RUNNING AllReduce launches=7$'; }
	nw_until 60 mpi6 || fail "mpirun: ranks 0-2 never reached AllReduce launches=7"
	diag mpi
	assert_grep '^MISSING_RANK: rank 3 never launched the AllReduce the others launched last on comm' "$T/mpi.diag"
	# SIGTERM: mpirun tears its ranks down (after SIGKILL they would live on
	# in process groups of their own, and keep answering on this port)
	launch_stop TERM
	launch_settled 30 || fail "mpirun's ranks outlived it"
else
	note "no $MPIRUN: mpirun case skipped"
fi
if [ -x "$TORCHRUN" ]; then
	note "skip under torchrun"
	# a port of its own: nothing of an earlier job may answer there
	RAS_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export NCCL_RAS_ADDR="127.0.0.1:$RAS_PORT"
	launch_torchrun 4 "$T/torch.out" "$NW_TRAINER" --steps 24 --count 64 --bcast-every 0 --verbose --fault skip:rank=1:step=6
	nw_until 120 grep -q 'rank 1 step 6: fault skip' "$T/torch.out" || { cat "$T/torch.out"; fail "torchrun: no skip"; }
	t6() { "$NW_CLI" ras | grep -q '^  ranks 0,2-3: RUNNING AllReduce launches=7$'; }
	nw_until 60 t6 || fail "torchrun: ranks 0,2-3 never reached AllReduce launches=7"
	diag torch
	assert_grep '^MISSING_RANK: rank 1 never launched the AllReduce the others launched last on comm' "$T/torch.diag"
	launch_stop KILL
else
	note "no $TORCHRUN: torchrun case skipped"
fi
