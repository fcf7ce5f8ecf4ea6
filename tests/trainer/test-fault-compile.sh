#!/bin/sh
# --fault compile: after the communicators exist and before the first step,
# the rank (rank=R) or every rank (rank=all) stalls in compile_step(), like
# a JIT compile: forever (nobody issues a collective, or the others hang in
# the first all-reduce), or for ms=M and then the job runs normally.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

note "every rank compiles forever: no step ever starts"
trainer_start "$T/all.out" --nranks 4 --steps 5 --verbose --pipeline --fault compile:rank=all
wait_for_ranks 120 "$T/all.out" ': fault compile: compiling the first step, never finishing$' 0 1 2 3
wait_for_ranks 120 "$T/all.out" ': pipeline communicator ready \(rank [0-9] of 4\)$' 0 1 2 3
assert_hung 3 "$T/all.out"
assert_no_grep ' step [0-9]+ done' "$T/all.out"
assert_eq "$(rank_count)" 4 "ranks alive"
trainer_kill

note "rank 2 compiles forever, the others hang in the first all-reduce"
trainer_start "$T/one.out" --nranks 4 --steps 5 --verbose --fault compile:rank=2
wait_for_line 120 'rank 2: fault compile: compiling the first step, never finishing$' "$T/one.out"
wait_for_ranks 120 "$T/one.out" ': world communicator ready$' 0 1 3
assert_hung 3 "$T/one.out"
assert_eq "$(count_lines 'fault compile' "$T/one.out")" 1 "ranks compiling"
assert_no_grep ' step [0-9]+ done' "$T/one.out"
trainer_kill

note "every rank compiles for 300 ms, then trains"
trainer_run 120 "$T/ms.out" --nranks 4 --steps 3 --verbose --fault compile:rank=all:ms=300
assert_eq "$TRAINER_STATUS" 0 "exit status"
assert_ranks "$T/ms.out" ': fault compile: compiled, starting the first step$' 0 1 2 3
assert_grep 'trainer: all 4 ranks ok$' "$T/ms.out"
for r in 0 1 2 3; do
	c=$(grep -n "rank $r: fault compile: compiled" "$T/ms.out" | cut -d: -f1)
	s=$(grep -n "rank $r step 0 done\$" "$T/ms.out" | cut -d: -f1)
	[ -n "$s" ] && [ "$s" -gt "$c" ] || fail "rank $r: step 0 before the compile ended"
done

note "bad specifications"
for bad in compile:rank=all:step=1 compile:step=1 skip:rank=all:step=2; do
	"$NW_TRAINER" --fault "$bad" > "$T/bad.out" 2>&1
	assert_eq "$?" 2 "exit status of --fault $bad"
	assert_grep 'trainer: ' "$T/bad.out"
done
