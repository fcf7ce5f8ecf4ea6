#!/bin/sh
# `ncclwatch dump`: usage errors and a directory without jobs exit 2 with one
# line; a hung job's processes all answer (the waiting ranks and the one
# that skipped, which is not stuck), and their dumps carry the stacks
# `diagnose` then shows; a job whose processes are gone has nobody to ask:
# they are named dead (exit 0, no wait). The IDLE case, where only dump gives stacks, is
# tests/field/test-field-compile.sh.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

usage_error "--wait wants a number of seconds" dump --wait x
usage_error "unknown option '--bogus'" dump --bogus
usage_error "one directory at most" dump a b
usage_error "$T/nope: " dump "$T/nope"
mkdir -p "$T/empty"
usage_error "no job with a control file" dump "$T/empty"

note "a job hung for a long time (timeout 600 s: no watchdog dumps by itself)"
export NCCLWATCH_TIMEOUT=600
watched_start "$T/live.out" live --nranks 2 --steps 100 --bcast-every 0 --verbose --fault skip:rank=1:step=3
wait_for_ranks 60 "$T/live.out" ' step 2 done$' 0 1
nw_until 30 test -f "$NCCLWATCH_DIR/live/control"
sleep 1.5   # older than diagnose's 0.5 s timeout
assert_eq "$(find "$NCCLWATCH_DIR/live" -name '*.dump.seg' | wc -l)" 0 "dumps before the request"
cli_ok 1 "$T/before" diagnose --timeout 0.5 "$NCCLWATCH_DIR/live"
assert_grep '^stacks: none captured$' "$T/before"
cli_ok 0 "$T/dump" dump --job live --wait 30 "$NCCLWATCH_DIR"
cat "$T/dump"
assert_grep '^dump: job live: 2 of 2 processes answered$' "$T/dump"
# each rank's line on its own (both processes and their watchdogs write to live.out)
for r in 0 1; do assert_grep "ncclwatch: dump requested by rank=-1 pid=[0-9]+ host=[^ ]+: rank=$r " "$T/live.out"; done
cli_ok 1 "$T/after" diagnose --timeout 0.5 "$NCCLWATCH_DIR/live"
assert_grep '^MISSING_RANK: rank 1 never called' "$T/after"
assert_grep '^  rank 1 \(1\) thread "trainer":$' "$T/after"
assert_grep '^    #1 idle_forever' "$T/after"
trainer_kill

note "the same job once its processes are gone: nobody to ask, named dead"
cli_ok 0 "$T/gone" dump --wait 30 "$NCCLWATCH_DIR/live"
assert_grep '^dump: job live: 0 of 0 processes answered; 2 dead processes not asked \(pids [0-9]+,[0-9]+\)$' "$T/gone"
