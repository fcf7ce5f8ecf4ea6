#!/bin/sh
# SIGKILL in the middle of a run: the segment left behind is the
# post-mortem record and holds every op issued before the kill.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim

note "a program that kills itself after 1000 all-reduces"
NCCLSIM_NULL=1 NCCLWATCH_JOB=kill LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-hot-loop" 1000 kill > "$T/kill.out" 2>&1
status=$?
assert_eq "$status" 137 "exit status (SIGKILL)"
assert_grep '^issued 1100 ' "$T/kill.out"
seg=$(segments "$NCCLWATCH_DIR/kill")
assert_eq "$(echo "$seg" | grep -c .)" 1 "segments left behind"
show "$seg" > "$T/kill.show"
assert_grep '^  flags +recording$' "$T/kill.show"       # never reached its exit handler
assert_eq "$(grep -c ' AllReduce ' "$T/kill.show")" 1100 "all-reduces recorded"
assert_eq "$(grep ' AllReduce ' "$T/kill.show" | field seq | sort -n | tail -n 1)" 1100 "last seq"
assert_grep '^  comm 0 .*coll_enqueued=1100 ' "$T/kill.show"
assert_grep '^records .*torn=0 ' "$T/kill.show"

note "the trainer: rank 2 kills itself at step 5 (--fault crash)"
export NCCLSIM_GPUS=4
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
watched_start "$T/crash.out" crash --nranks 4 --steps 20 --verbose --fault crash:rank=2:step=5
wait_dead() { ! [ -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status"; }
nw_until 60 grep -q 'rank 2 step 5: fault crash' "$T/crash.out" || { cat "$T/crash.out"; fail "rank 2 did not crash"; }
pid2=$(sed -n 's/^rank 2: world size 4 .*pid \([0-9]*\),.*/\1/p' "$T/crash.out")
[ -n "$pid2" ] || fail "no pid for rank 2"
nw_until 30 wait_dead "$pid2" || fail "rank 2 ($pid2) still alive"
trainer_kill
steps=$(grep -c 'rank 2 step [0-9]* done$' "$T/crash.out")
note "rank 2 reported $steps steps done before dying"
for seg in $(segments "$NCCLWATCH_DIR/crash"); do
	show "$seg" > "$T/seg.show"
	grep -Eq '^  local_rank +2$' "$T/seg.show" && cp "$T/seg.show" "$T/rank2.show"
done
[ -f "$T/rank2.show" ] || { find "$NCCLWATCH_DIR"; fail "no segment of rank 2 left behind"; }
assert_grep '^  flags +recording$' "$T/rank2.show"
n=$(grep -c ' AllReduce ' "$T/rank2.show")
# Every step it reported done issued its all-reduce (and maybe the next one
# before the kill): the record holds at least those.
[ "$n" -ge "$steps" ] && [ "$n" -ge 5 ] || fail "rank 2's segment has $n all-reduces, it reported $steps steps"
# issued in order: the seqs of its collectives are 1..N
ncoll=$(grep -cE ' (AllReduce|Broadcast) ' "$T/rank2.show")
assert_eq "$(grep -E ' (AllReduce|Broadcast) ' "$T/rank2.show" | field seq | tr '\n' ' ')" "$(seq 1 "$ncoll" | tr '\n' ' ')" "collective seqs"
