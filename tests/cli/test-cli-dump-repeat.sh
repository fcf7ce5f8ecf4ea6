#!/bin/sh
# `ncclwatch dump` never loses a request: 30 calls back to back against one
# healthy live process are each answered by it (a request that comes within
# the watchdog's grouping window after its last dump gets a dump of its own
# once the window is over, instead of being taken and never answered). And
# dump asks only the live processes of the job: the segment a dead process
# of the same job left (kept: NCCLWATCH_KEEP=1) is named dead, not waited
# for, and does not make dump exit 1.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

note "a process of job 'live' that ran and exited, its segment kept"
env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=live NCCLWATCH_KEEP=1 "$NW_TRAINER" --steps 2 > "$T/dead.out" 2>&1 ||
	{ cat "$T/dead.out" >&2; fail "the short trainer failed"; }
assert_eq "$(segments "$NCCLWATCH_DIR/live" | wc -l)" 1 "kept segments of the dead process"
show "$NCCLWATCH_DIR/live" > "$T/dead.show"
dead=$(sed -nE 's/^  pid +([0-9]+)$/\1/p' "$T/dead.show")
[ -n "$dead" ] || fail "no pid in the dead process's segment"

note "a healthy live process of the same job: 2 steps done, then host work (a long"
note "sleep before step 3's all-reduce: no op pending, no stall)"
watched_start "$T/live.out" live --steps 4 --bcast-every 0 --verbose --fault sleep:rank=0:step=3:ms=3600000
wait_for_line 60 'rank 0 step 3: fault sleep: sleeping' "$T/live.out"
nw_until 30 test "$(segments "$NCCLWATCH_DIR/live" | wc -l)" -eq 2 || fail "no live segment"

answered=0
for i in $(seq 30); do
	cli "$T/dump.$i" dump --job live --wait 30 "$NCCLWATCH_DIR"
	if [ "$CLI_STATUS" = 0 ] && grep -Eq '^dump: job live: 1 of 1 process answered' "$T/dump.$i"; then
		answered=$((answered + 1))
	else
		echo "call $i (exit $CLI_STATUS):"; cat "$T/dump.$i" "$T/dump.$i.err"
		break
	fi
done
cat "$T/dump.$i"
assert_eq "$answered" 30 "dump calls answered 1 of 1 with exit 0"
assert_grep "^dump: job live: 1 of 1 process answered; 1 dead process not asked \\(pid $dead\\)\$" "$T/dump.30"
[ ! -s "$T/dump.30.err" ] || { cat "$T/dump.30.err" >&2; fail "dump wrote to stderr"; }
# Each call got a dump of its own: the live process said so once per request.
assert_eq "$(grep -c 'ncclwatch: dump requested by rank=-1 ' "$T/live.out")" 30 "dumps the live process wrote"
trainer_kill

note "the job once every process is gone: nothing to ask, nothing to wait for"
nw_until 30 sh -c "! kill -0 $TRAINER_PID 2>/dev/null" || fail "the trainer outlived SIGKILL"
cli_ok 0 "$T/gone" dump --wait 30 "$NCCLWATCH_DIR/live"
cat "$T/gone"
assert_grep '^dump: job live: 0 of 0 processes answered; 2 dead processes not asked \(pids [0-9]+,[0-9]+\)$' "$T/gone"
