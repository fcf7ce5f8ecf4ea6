#!/bin/sh
# NCCLSIM_FAULT=stall:seq=6: every rank starts collective #6 of the world
# comm and none completes (a transport deadlock). With --bcast-every 3 the
# world comm's collectives are AR#1 BC#2 (step 0), AR#3 (1), AR#4 (2),
# AR#5 BC#6 (step 3): #6 is step 3's broadcast, so this also checks that
# all-reduces and broadcasts share one numbering. Every rank reports
# state=STARTED for Broadcast #6 of the same comm, once, at least the
# timeout old, and its dump shows that op STARTED (not ended).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

NCCLSIM_FAULT=stall:seq=6 wd_start "$T/out" stall --nranks 8 --steps 8 --bcast-every 3
wait_for_count $WD_WAIT 8 'ncclwatch: stall: ' "$T/out"
stall_lines "$T/out"
kill -0 "$TRAINER_PID" 2>/dev/null || fail "the job ended instead of hanging"
assert_no_grep ' ok steps=' "$T/out"

note "every rank: one finding, Broadcast #6 STARTED, same comm, age >= ${WD_TIMEOUT}s"
assert_findings "$T/out" STARTED Broadcast 6 0 1 2 3 4 5 6 7
assert_grep 'state=STARTED age=[0-9.]+s: started on the GPU, not completed; dump: ' "$T/out"

note "every rank's dump shows Broadcast #6 STARTED and what came before COMPLETED"
for r in 0 1 2 3 4 5 6 7; do
	line=$(rank_stalls $r "$T/out")
	pid=$(finding_value pid "$line")
	dump=$(dump_of "$line")
	case "$dump" in "$NCCLWATCH_DIR/stall/"*".$pid.rank$r.dump.seg") ;; *) fail "rank $r: dump path $dump" ;; esac
	show "$dump" > "$T/dump.show"
	assert_grep '^  flags +.*dump' "$T/dump.show"
	assert_grep '^  flags +.*stall_seen' "$T/dump.show"
	assert_grep "^  rank +$r\$" "$T/dump.show"
	assert_grep "^  op [0-9]+ .* Broadcast comm=$FINDING_COMM rank=$r/8 seq=6 .* state=STARTED .* started=\\+[0-9.]+ ended=- " "$T/dump.show"
	assert_grep "^  op [0-9]+ .* AllReduce comm=$FINDING_COMM rank=$r/8 seq=5 .* state=COMPLETED " "$T/dump.show"
	assert_no_grep '^  op .* AllReduce .* seq=[7-9] ' "$T/dump.show"
	assert_grep '^stacks captured ' "$T/dump.show"
done
trainer_kill
wd_check_outputs
