#!/bin/sh
# --fault sleep: rank 1 of 4 sleeps 1.5 s before step 3's all-reduce. A
# straggler, not a hang: the job succeeds, and nobody finishes step 3
# before rank 1 woke up and issued its part (checked by the order of the
# lines in the shared output, which is causal, not by timing).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

trainer_run 120 "$T/out" --nranks 4 --steps 6 --count 20 --bcast-every 2 --verbose \
	--fault sleep:rank=1:step=3:ms=1500
assert_eq "$TRAINER_STATUS" 0 "exit status"
assert_grep 'trainer: all 4 ranks ok$' "$T/out"
awake=$(grep -n 'rank 1 step 3: fault sleep: awake, issuing the all-reduce$' "$T/out" | cut -d: -f1)
[ -n "$awake" ] || fail "rank 1 never woke up"
assert_grep 'rank 1 step 3: fault sleep: sleeping 1500 ms before the all-reduce$' "$T/out"
for r in 0 1 2 3; do
	done_at=$(grep -n "rank $r step 3 done\$" "$T/out" | cut -d: -f1)
	[ -n "$done_at" ] || fail "rank $r did not finish step 3"
	[ "$done_at" -gt "$awake" ] || fail "rank $r finished step 3 (line $done_at) before rank 1 issued it (line $awake)"
done
