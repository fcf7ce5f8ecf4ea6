#!/bin/sh
# `ncclwatch attach` on processes that run with the preload writes no
# snapshot for them: it names their live segment, asks their watchdog for a
# dump (as `ncclwatch dump` does) and leaves the segment as it is.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"
export NCCLWATCH_TIMEOUT=600      # no stall of its own: only attach asks for dumps
wd_start "$T/trainer.out" pre --nranks 2 --steps 1000 --verbose --fault skip:rank=1:step=3
hung() { [ "$(grep -c 'step 2 done' "$T/trainer.out")" -ge 2 ]; }
nw_until 60 hung || { cat "$T/trainer.out"; fail "the job did not reach step 2"; }
ranks=$(pgrep -P "$TRAINER_PID" | tr '\n' ' ')
[ -n "$ranks" ] || fail "no rank processes"
# shellcheck disable=SC2086
"$NW_CLI" attach --no-verdict -o "$T/snap" $ranks > "$T/attach" 2>&1 || { cat "$T/attach"; fail "attach failed"; }
cat "$T/attach"
for p in $ranks; do
	assert_grep "^attach: pid $p rank - \\(trainer\\): runs with the preload: its segment $NCCLWATCH_DIR/pre/[^ ]+\\.$p\\.seg$" "$T/attach"
	ls "$NCCLWATCH_DIR"/pre/*."$p".rank*.dump.seg > /dev/null 2>&1 || fail "no dump of $p"
done
assert_grep '^dump: job pre: 2 of 2 processes answered$' "$T/attach"
! ls "$T/snap"/*.snap.seg > /dev/null 2>&1 || fail "a snapshot was written for a process with the preload"
