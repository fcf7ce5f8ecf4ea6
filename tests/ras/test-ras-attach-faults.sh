#!/bin/sh
# `ncclwatch attach --tree LAUNCHER` on the trainer started WITHOUT the
# preload, NCCL RAS on: ONE job, one verdict set, RAS's op numbers and
# the culprit's stack from its snapshot (docs/ras.md, "One job, one
# verdict"). Faults: skip, count (the rank fails, the others hang), crash,
# noinit and initstall (RAS lists no comm), stall (every rank launched the
# same ops: launch counts equal, every stack inside NCCL). Then the same
# skip with NCCL_RAS_ENABLE=0: the stacks' verdict and one line saying RAS
# did not answer.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

# att NAME [ARGS]: attach to the trainer's tree into $T/NAME, verdict in $T/NAME.out
att() {
	_n=$1; shift
	"$NW_CLI" attach --no-python "$@" --tree "$TRAINER_PID" -o "$T/$_n" > "$T/$_n.out" 2>&1
	_rc=$?
	grep -v '^    #' "$T/$_n.out" | sed 's/^/    /'
	assert_eq "$_rc" 1 "$_n: attach's exit status (a problem found)"
	assert_eq "$(grep -c '^job ' "$T/$_n.out")" 1 "$_n: jobs"
}
gone() { "$NW_CLI" ras --json | grep -q '"unresponsive": true'; }

note "skip: rank 2 of 4 never issues step 3's all-reduce"
trainer_start "$T/skip.log" --nranks 4 --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=2:step=3
wait_for_ranks 120 "$T/skip.log" ' step 2 done$' 0 1 2 3
at4() { "$NW_CLI" ras | grep -q '^  ranks 0-1,3: RUNNING AllReduce launches=4$'; }
nw_until 60 at4 || fail "skip: ranks 0,1,3 never reached AllReduce launches=4"
att skip
assert_grep '^job [^ ]+: 4 processes read, world size 4, ranks missing: none' "$T/skip.out"
assert_grep '^MISSING_RANK: rank 2 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=3 there, launches=4 on 3 peers\)' "$T/skip.out"
assert_grep '^  culprits: 2$' "$T/skip.out"
assert_grep '^  waiting: 0-1,3$' "$T/skip.out"
assert_grep '^    rank 2 \(from stacks\): where it is instead: pause < idle_forever' "$T/skip.out"
assert_grep '^    stacks agree: MISSING_RANK: rank 2 is in pause < idle_forever' "$T/skip.out"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/skip.out")" 1 "skip: verdicts"
trainer_kill

note "count: rank 1's all-reduce of step 3 has half the count; it fails, the others hang"
trainer_start "$T/count.log" --nranks 4 --steps 6 --count 65536 --bcast-every 0 --verbose --fault count:rank=1:step=3
wait_for_line 120 'trainer: rank 1 \(pid [0-9]+\) failed with exit code 3$' "$T/count.log"
wait_for_ranks 120 "$T/count.log" ' step 2 done$' 0 2 3
nw_until 60 gone || fail "count: rank 1 never showed as gone"
att count
assert_grep '^MISSING_RANK: rank 1: process gone or unreachable' "$T/count.out"
assert_grep '^  op: AllReduce launches=4 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/count.out"
assert_grep '^  culprits: 1$' "$T/count.out"
assert_grep '^    rank 1 \(from stacks\): no snapshot: attach found no such process' "$T/count.out"
assert_grep '^    stacks agree: MISSING_RANK: rank 1: process gone' "$T/count.out"
trainer_kill

note "crash: rank 2 kills itself at step 4"
trainer_start "$T/crash.log" --nranks 4 --steps 24 --count 64 --bcast-every 0 --verbose --fault crash:rank=2:step=4
wait_for_ranks 120 "$T/crash.log" ' step 3 done$' 0 1 3
nw_until 60 gone || fail "crash: rank 2 never showed as gone"
att crash
assert_grep '^MISSING_RANK: rank 2: process gone or unreachable' "$T/crash.out"
assert_grep '^  op: AllReduce launches=5 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/crash.out"
assert_grep '^  culprits: 2$' "$T/crash.out"
assert_grep '^  waiting: 0-1,3$' "$T/crash.out"
assert_grep '^    stacks agree: MISSING_RANK: rank 2: process gone' "$T/crash.out"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/crash.out")" 1 "crash: verdicts"
trainer_kill

note "noinit: rank 1 never creates the world communicator (RAS lists none; the stacks name it)"
trainer_start "$T/noinit.log" --nranks 4 --steps 4 --verbose --fault noinit:rank=1
wait_for_ranks 120 "$T/noinit.log" ': joining the world communicator$' 0 2 3
wait_for_line 120 'fault noinit' "$T/noinit.log"
nw_until 60 sh -c '[ "$(ss -Hltn "sport = :'"$RAS_PORT"'" | wc -l)" -ge 3 ]' || fail "noinit: RAS not up"
att noinit
assert_grep '^attach: RAS at .*: NCCL 2\.28\.9, 0 communicators' "$T/noinit.out"
assert_grep '^MISSING_RANK: pid [0-9]+ on [^ ]+ is in .*idle_forever.*\(from stacks\).*; NCCL RAS lists no communicator' "$T/noinit.out"
assert_grep '^    NCCL RAS \(.*/ras\.json\): INIT_STALL: RAS reports no communicator' "$T/noinit.out"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/noinit.out")" 1 "noinit: verdicts"
trainer_kill

note "initstall: rank 1 stalls inside the world communicator's init (every stack in NCCL)"
NCCLSIM_FAULT=initstall:rank=1 trainer_start "$T/initstall.log" --nranks 4 --steps 4 --verbose
wait_for_ranks 120 "$T/initstall.log" ': joining the world communicator$' 0 1 2 3
nw_until 60 sh -c '[ "$(ss -Hltn "sport = :'"$RAS_PORT"'" | wc -l)" -ge 3 ]' || fail "initstall: RAS not up"
att initstall
assert_grep '^INIT_STALL: RAS reports no communicator' "$T/initstall.out"
assert_grep '^    stacks agree: UNDECIDED: every rank .* waits inside NCCL' "$T/initstall.out"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/initstall.out")" 1 "initstall: verdicts"
trainer_kill

note "stall: every rank starts collective #4 and none completes"
NCCLSIM_FAULT=stall:seq=4 trainer_start "$T/stall.log" --nranks 4 --steps 24 --count 64 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/stall.log" ' step 2 done$' 0 1 2 3
equal4() { "$NW_CLI" ras | grep -q '^  ranks 0-3: RUNNING AllReduce launches=4$'; }
nw_until 60 equal4 || fail "stall: counts never reached 4 everywhere"
att stall
assert_grep '^TRANSPORT_STALL: launch counts equal; RAS cannot see completion' "$T/stall.out"
assert_grep '^  op: AllReduce launches=4 on comm [0-9a-f]{16} \(4 ranks\)$' "$T/stall.out"
assert_grep '^  waiting: 0-3$' "$T/stall.out"
assert_grep '^    stacks agree: UNDECIDED: every rank \(0-3\) waits inside NCCL' "$T/stall.out"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/stall.out")" 1 "stall: verdicts"
trainer_kill

note "NCCL_RAS_ENABLE=0: the stacks' verdict, and one line saying RAS did not answer"
NCCL_RAS_ENABLE=0 trainer_start "$T/off.log" --nranks 4 --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=2:step=3
wait_for_ranks 120 "$T/off.log" ' step 2 done$' 0 1 2 3
att off
assert_eq "$(grep -c '^attach: RAS off in every process (NCCL_RAS_ENABLE not 1): stacks alone$' "$T/off.out")" 1 "the RAS line"
assert_grep '^MISSING_RANK: pid [0-9]+ on [^ ]+ is in pause < idle_forever.*\(from stacks\)' "$T/off.out"
assert_no_grep 'never launched|NCCL RAS report|stacks agree' "$T/off.out"
note "--no-ras: the same, said once"
att noras --no-ras
assert_eq "$(grep -c '^attach: RAS not asked (--no-ras): stacks alone$' "$T/noras.out")" 1 "the --no-ras line"
trainer_kill
