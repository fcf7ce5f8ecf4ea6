#!/bin/sh
# --fault skip:rank=5:step=20: rank 5 never issues step 20's all-reduce
# (#21 of the world comm with --bcast-every 0) and idles; the other seven
# are stuck in it. The seven report state=STARTED for AllReduce #21 of one
# comm; rank 5 has nothing pending, so it reports nothing, but it answers
# their dump request: a "dump requested by" line and its dump, whose main
# thread stack shows where it is instead (the trainer's idle_forever). The
# stuck ranks' dumps show their main thread inside the trainer (run_rank,
# waiting in cuStreamSynchronize). One process of the host prints the
# cross-rank verdict itself: MISSING_RANK naming rank 5, the seven waiting,
# the same text in report.txt beside the dumps.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"

wd_start "$T/out" skip --nranks 8 --steps 24 --count 64 --bcast-every 0 --fault skip:rank=5:step=20
stuck="0 1 2 3 4 6 7"
wait_for_count $WD_WAIT 7 'ncclwatch: stall: ' "$T/out"
wait_for_count $WD_WAIT 1 'ncclwatch: dump requested by rank=[0-9]+ pid=[0-9]+ host=[^ ]+: rank=5 pid=[0-9]+ wrote ' "$T/out"
grep 'ncclwatch: ' "$T/out"
assert_grep 'rank 5 step 20: idling until killed$' "$T/out"
kill -0 "$TRAINER_PID" 2>/dev/null || fail "the job ended instead of hanging"

note "the seven stuck ranks: one finding each, AllReduce #21 STARTED, same comm"
assert_findings "$T/out" STARTED AllReduce 21 $stuck
note "rank 5: no finding, its dump written on request"
[ -z "$(rank_stalls 5 "$T/out")" ] || fail "rank 5 reported a finding"
served=$(grep -E 'ncclwatch: dump requested by .*: rank=5 ' "$T/out" | head -n 1)
requester=$(echo "$served" | sed -nE 's/^ncclwatch: dump requested by rank=([0-9-]+) .*/\1/p')
case " $stuck " in *" $requester "*) ;; *) fail "the request came from rank $requester, not a stuck rank: $served" ;; esac
pid5=$(echo "$served" | sed -nE 's/.*: rank=5 pid=([0-9]+) wrote .*/\1/p')
dump5=$(dump_of "$served")
[ -f "$dump5" ] || fail "rank 5's dump $dump5 does not exist"
show "$dump5" > "$T/dump5.show"
assert_grep '^  flags +.*dump' "$T/dump5.show"
assert_no_grep '^  flags +.*stall_seen' "$T/dump5.show"
assert_grep '^  op .* AllReduce .* seq=20 .* state=COMPLETED ' "$T/dump5.show"
assert_no_grep '^  op .* AllReduce .* seq=21 ' "$T/dump5.show"
assert_no_grep '^  op .* state=(ENQUEUED|STARTED|INIT_ENTERED) ' "$T/dump5.show"
assert_grep '^stacks captured .* request=[1-9]' "$T/dump5.show"
main_stack "$T/dump5.show" "$pid5" > "$T/stack5"
sed 's/^/    /' "$T/stack5"
assert_grep ' idle_forever[.a-z0-9]*\+0x' "$T/stack5"
assert_grep ' run_rank\+0x' "$T/stack5"

note "the stuck ranks' dumps: main thread in the trainer, waiting for the stream"
for r in $stuck; do
	line=$(rank_stalls $r "$T/out")
	pid=$(finding_value pid "$line")
	show "$(dump_of "$line")" > "$T/dump.show"
	assert_grep "^  op .* AllReduce comm=$FINDING_COMM rank=$r/8 seq=21 .* state=STARTED " "$T/dump.show"
	main_stack "$T/dump.show" "$pid" > "$T/stack"
	assert_grep ' run_rank\+0x' "$T/stack"
	assert_grep ' cuStreamSynchronize\+0x' "$T/stack"
	assert_no_grep 'idle_forever' "$T/stack"
done
note "the watchdog's own verdict, printed once for the host, and report.txt"
wait_for_count $WD_WAIT 1 'ncclwatch: MISSING_RANK: rank 5 never called AllReduce #21 ' "$T/out"
# Printed by one process of the host, again only when the verdict or the
# stack groups change (peers' dumps arrive within a second or two): never
# once per rank or per poll.
prints=$(grep -c 'ncclwatch: MISSING_RANK:' "$T/out")
[ "$prints" -ge 1 ] && [ "$prints" -le 3 ] || fail "the verdict was printed $prints times"
assert_grep 'ncclwatch:   culprits: 5$' "$T/out"
assert_grep 'ncclwatch:   waiting: 0-4,6-7$' "$T/out"
report="$NCCLWATCH_DIR/skip/report.txt"
[ -f "$report" ] || fail "no $report"
assert_grep '^MISSING_RANK: rank 5 never called AllReduce #21 ' "$report"
assert_grep '^  culprits: 5$' "$report"
trainer_kill
wd_check_outputs
