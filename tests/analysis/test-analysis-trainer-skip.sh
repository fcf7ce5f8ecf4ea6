#!/bin/sh
# The trainer on the simulation, 8 ranks, --fault skip:rank=5:step=20: rank
# 5 never issues step 20's all-reduce (AllReduce #21 of the world comm with
# --bcast-every 0) and idles; the seven others hang inside it. The engine,
# on the live job and on the files left after killing it: MISSING_RANK on
# the world comm, AllReduce #21, culprit 5, ranks 0-4,6-7 waiting; the
# evidence says where rank 5 is instead (idle, its main thread's stack).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_KEEP=1

wd_start "$T/out" skip --nranks 8 --steps 24 --count 64 --bcast-every 0 --fault skip:rank=5:step=20
WANT='^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=21 culprits=5 waiting=0-4,6-7 unknown=-$'
# Until the seven have waited longer than the timeout (the watchdog's 2 s).
live_verdict() { analyze "$T/live" "$NCCLWATCH_DIR" && grep -Eq "$WANT" "$T/live"; }
nw_until $WD_WAIT live_verdict || { cat "$T/live" "$T/out" >&2; fail "no MISSING_RANK verdict on the live job"; }
sed 's/^/    /' "$T/live"
kill -0 "$TRAINER_PID" 2>/dev/null || fail "the job ended instead of hanging"

note "live: the verdict is the first and only one; the evidence"
assert_eq "$(grep -c '^verdict ' "$T/live")" 1 "verdicts"
assert_eq "$AN_STATUS" 1 "driver status"
assert_grep '^job skip procs=8 world=8 missing=- ' "$T/live"
assert_grep '^summary rank 5 never called AllReduce #21 on comm [0-9a-f]{16} \(8 ranks\); ranks 0-4,6-7 wait in it$' "$T/live"
assert_grep '^evidence rank 5: never called it \(coll_enqueued 20\); last NCCL call AllReduce #20 on comm [0-9a-f]{16} \(COMPLETED\)' "$T/live"
assert_grep '^evidence ranks 0-4,6-7: in it \(STARTED for ' "$T/live"
assert_grep '^hint the code path differs on those ranks$' "$T/live"
comm=$(verdict_field "$(verdict_line "$T/live" 1)" comm)

note "live, once the stuck ranks' dump request made rank 5 capture its stacks, and each stuck rank its own"
# (each stuck rank captures when its own watchdog finds the stall: on a
# loaded machine some do so after rank 5 answered the first one's request)
stacks_seen() {
	live_verdict && grep -Eq '^evidence rank 5: .*idle: no NCCL call for .*; main thread: .*idle_forever' "$T/live" &&
		grep -Eq '^stack 0-4,6-7 ' "$T/live"
}
nw_until $WD_WAIT stacks_seen || { cat "$T/live" >&2; fail "rank 5's evidence never showed it idle in idle_forever, or not every stuck rank's stack came"; }
grep -E '^(evidence|stack) ' "$T/live" | sed 's/^/    /'
assert_grep '^stack 5 [^ ]+ .*idle_forever.* run_rank ' "$T/live"
assert_grep '^stack 0-4,6-7 [^ ]+ .*cuStreamSynchronize.* run_rank ' "$T/live"

note "post-mortem: the same verdict from the files left after SIGKILL"
trainer_kill
analyze "$T/dead" "$NCCLWATCH_DIR"
sed 's/^/    /' "$T/dead"
assert_grep "^verdict MISSING_RANK comm=$comm op=AllReduce seq=21 culprits=5 waiting=0-4,6-7 unknown=-\$" "$T/dead"
assert_eq "$(grep -c '^verdict ' "$T/dead")" 1 "verdicts after the kill"
# Live segments and the watchdogs' dumps of one process are one process.
assert_grep '^job skip procs=8 ' "$T/dead"
wd_check_outputs
