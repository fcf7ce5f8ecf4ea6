#!/bin/sh
# hang-compute-gaps: no hang. (a) Every rank computes between two
# all-reduces for longer than the timeout (until the test opens the gate):
# nothing is pending, the live verdict is HEALTHY all along, and so are the
# files once the job ended with status 0. (b) Only rank 1 computes that
# long (a straggler): while the others wait in AllReduce #2 the live
# verdict names rank 1 (it has not called it yet); once it comes the job
# ends with status 0 and the files it left say HEALTHY: a stall that
# resolved is not a hang. (c) Ranks 0-2 compute on the CPU (busy, their
# main threads run) while rank 3 waits in #2: they are named, not rank 3.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

note "(a) every rank computes"
hang_start compute-gaps 4 "$T/gate"
wait_for_ranks $WD_WAIT "$T/out" ': computing$' 0 1 2 3
# A lower bound, not a threshold: the gap lasts at least twice the timeout.
sleep $((WD_TIMEOUT * 2 + 1))
analyze "$T/gap" "$NCCLWATCH_DIR"
sed 's/^/    /' "$T/gap"
assert_eq "$(grep '^verdict ' "$T/gap")" "verdict HEALTHY comm=- op=- seq=0 culprits=- waiting=- unknown=-" "verdict in the gap"
assert_no_grep 'ncclwatch: stall: ' "$T/out"
touch "$T/gate"
nw_wait "$HANG_PID" $WD_WAIT
assert_eq "$?" 0 "job status"
analyze "$T/end" "$NCCLWATCH_DIR"
assert_eq "$(grep '^verdict ' "$T/end")" "verdict HEALTHY comm=- op=- seq=0 culprits=- waiting=- unknown=-" "verdict after the end"

note "(b) rank 1 is a straggler"
rm -rf "$NCCLWATCH_DIR" "$T/gate"
hang_start compute-gaps 4 "$T/gate" 1
WANT='^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=2 culprits=1 waiting=0,2-3 unknown=-$'
_straggler() { analyze "$T/live" "$NCCLWATCH_DIR" && verdict_line "$T/live" 1 | grep -Eq -- "$WANT"; }
nw_until $WD_WAIT _straggler || { cat "$T/live" "$T/out" >&2; fail "no live verdict naming the straggler"; }
sed 's/^/    /' "$T/live"
touch "$T/gate"
nw_wait "$HANG_PID" $WD_WAIT
assert_eq "$?" 0 "job status"
analyze "$T/end" "$NCCLWATCH_DIR"
sed 's/^/    /' "$T/end"
assert_eq "$(grep '^verdict ' "$T/end")" "verdict HEALTHY comm=- op=- seq=0 culprits=- waiting=- unknown=-" "verdict after the straggler came"

note "(c) ranks 0-2 compute on the CPU, rank 3 waits"
# The majority is idle in NCCL but busy (its main threads run): it has not
# called #2 yet, it did not stop short of it. Once their stacks are in
# (taken on rank 3's request), the verdict names them, never rank 3 as
# "one op past" (the idle-majority rule is for a majority that stopped).
rm -rf "$NCCLWATCH_DIR" "$T/gate"
hang_start compute-gaps 4 "$T/gate" 012 busy
WANT='^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=2 culprits=0-2 waiting=3 unknown=-$'
# (Until every busy rank's stacks are in, the ones without read as stopped.)
_busy() {
	analyze "$T/busy" "$NCCLWATCH_DIR" && verdict_line "$T/busy" 1 | grep -Eq -- "$WANT" &&
		grep -q '^stack 0-2 hang-compute-ga compute body ' "$T/busy"
}
nw_until $WD_WAIT _busy || { cat "$T/busy" "$T/out" >&2; fail "no live verdict naming the busy ranks, with their stacks"; }
sed 's/^/    /' "$T/busy"
touch "$T/gate"
nw_wait "$HANG_PID" $WD_WAIT
assert_eq "$?" 0 "job status"
analyze "$T/end" "$NCCLWATCH_DIR"
assert_eq "$(grep '^verdict ' "$T/end")" "verdict HEALTHY comm=- op=- seq=0 culprits=- waiting=- unknown=-" "verdict after the busy ranks came"
