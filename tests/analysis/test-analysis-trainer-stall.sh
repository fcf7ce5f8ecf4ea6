#!/bin/sh
# NCCLSIM_FAULT=stall:seq=5 under the trainer, 8 ranks, --bcast-every 0:
# every rank starts collective #5 of the world comm (step 4's all-reduce)
# and none completes it. The engine, live and after the kill:
# TRANSPORT_STALL on the world comm, AllReduce #5, no rank blamed (the
# comm/link is), every rank waiting; the evidence names each host's NCCL and
# driver versions and the hint says what to try.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
export NCCLWATCH_KEEP=1

NCCLSIM_FAULT=stall:seq=5 wd_start "$T/out" stall --nranks 8 --steps 8 --bcast-every 0
WANT='^verdict TRANSPORT_STALL comm=[0-9a-f]{16} op=AllReduce seq=5 culprits=- waiting=0-7 unknown=-$'
live_verdict() { analyze "$T/live" "$NCCLWATCH_DIR" && grep -Eq "$WANT" "$T/live"; }
nw_until $WD_WAIT live_verdict || { cat "$T/live" "$T/out" >&2; fail "no TRANSPORT_STALL verdict on the live job"; }
sed 's/^/    /' "$T/live"
kill -0 "$TRAINER_PID" 2>/dev/null || fail "the job ended instead of hanging"
assert_eq "$(grep -c '^verdict ' "$T/live")" 1 "verdicts"
assert_eq "$AN_STATUS" 1 "driver status"
assert_grep '^summary every rank of comm [0-9a-f]{16} \(8 ranks\) started AllReduce #5 and none completed it in ' "$T/live"
assert_grep '^hint P2P or NVLink trouble: try NCCL_P2P_DISABLE=1 to confirm, NCCL_P2P_LEVEL=NVL, ' "$T/live"
assert_grep "^evidence ranks 0-7: STARTED for [0-9.-]+ s, not completed\$" "$T/live"
assert_grep "^evidence ranks 0-7: NCCL 2\\.28\\.9, CUDA driver 13\\.0, host $(hostname)\$" "$T/live"
comm=$(verdict_field "$(verdict_line "$T/live" 1)" comm)

note "post-mortem"
# The files left carry the last heartbeat (up to a poll old): a second
# more, so that no op is just at the timeout then.
sleep 1
trainer_kill
analyze "$T/dead" "$NCCLWATCH_DIR"
sed 's/^/    /' "$T/dead"
assert_grep "^verdict TRANSPORT_STALL comm=$comm op=AllReduce seq=5 culprits=- waiting=0-7 unknown=-\$" "$T/dead"
assert_eq "$(grep -c '^verdict ' "$T/dead")" 1 "verdicts after the kill"
wd_check_outputs
