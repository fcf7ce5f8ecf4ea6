#!/bin/sh
# A process's exit never waits for a stuck watchdog: the test build's delay
# (NCCLWATCH_TEST_RING_DELAY_US, interpose/test_hooks.h) stops the watchdog
# for an hour inside the poll that moves the program's one all-reduce,
# holding its locks, as a watchdog stuck in a driver call would.
# nccl-exit-stuck waits until the watchdog is stuck, then returns from
# main, or calls exit(3): the process ends with that status, its exit
# handlers having given up their last poll (flag exit_poll_skipped, one
# line) and kept every record. When the exit handlers waited for the lock,
# the process never ended.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_PROGS/nccl-exit-stuck"
hooked="$NW_BUILD/tests/hooks/lib/libncclwatch.so"
[ -x "$prog" ] || fail "$prog not built"
[ -f "$hooked" ] || fail "$hooked not built"

for how in return exit; do
	case $how in return) args=return want=0 ;; exit) args="exit 3" want=3 ;; esac
	note "the watchdog stuck in its poll; the program ends with: $args"
	# shellcheck disable=SC2086 # args: the mode and its status
	nw_spawn env LD_PRELOAD="$(NW_LIB=$hooked nw_preload)" NCCLWATCH_JOB="stuck-$how" NCCLWATCH_KEEP=1 \
		NCCLWATCH_POLL_MS=1 NCCLWATCH_TEST_RING_DELAY_US=3600000000 "$prog" $args > "$T/$how.out" 2>&1
	nw_wait "$NW_PID" 60
	status=$?
	cat "$T/$how.out"
	assert_grep '^watchdog stuck$' "$T/$how.out"
	assert_eq "$status" "$want" "$how: the process's status (124: its exit waited for the stuck watchdog)"
	assert_eq "$(grep -c "^ncclwatch: exiting: the watchdog's poll did not end within 10 s" "$T/$how.out")" 1 \
		"$how: lines saying the exit went on without its last poll"
	seg=$(segments "$NCCLWATCH_DIR/stuck-$how")
	[ -n "$seg" ] || fail "$how: no segment"
	show "$seg" > "$T/$how.show"
	assert_grep '^  flags +recording,exited,exit_status,exit_poll_skipped$' "$T/$how.show"
	assert_grep "^  exit_status +$want\$" "$T/$how.show"
	# what was recorded before the exit is all there
	assert_grep '^  op 1 .* AllReduce .* count=4 ' "$T/$how.show"
	assert_grep '^  op 2 .* CommDestroy .* state=INIT_DONE result=ncclSuccess ' "$T/$how.show"
done
echo "ok"
