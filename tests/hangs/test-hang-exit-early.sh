#!/bin/sh
# hang-exit-early: rank 3 destroys the world comm after 2 steps and exits
# with status 0; ranks 0-2 wait in AllReduce #3. Without NCCLWATCH_KEEP a
# clean exit with every comm destroyed leaves no file (docs/diagnosis.md,
# Limits), so rank 3 cannot be judged: MISSING_RANK on AllReduce #3, no
# culprit, 0-2 waiting, 3 unknown; diagnose says the unknown rank is what
# may hold it up (before: "the communicator or its link, not a rank").
# With NCCLWATCH_KEEP=1 its file stays: culprit 3, "DESTROYED ... exited
# with status 0".
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"

unset NCCLWATCH_KEEP
hang_start exit-early 4
wait_for_line $WD_WAIT '^rank 3 ended: status 0$' "$T/out"
HANG_SETTLE="0 1 2"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=- waiting=0-2 unknown=3$' 1
assert_grep '^job exit-early procs=3 world=4 missing=3 ' "$T/dead"
assert_grep '^  culprits: - \(the ranks that may hold it up left no file: see unknown\)$' "$T/diag"
assert_grep '^  unknown: 3 \(no file\)$' "$T/diag"

note "the same job with NCCLWATCH_KEEP=1: rank 3's file says it exited"
rm -rf "$NCCLWATCH_DIR"
export NCCLWATCH_KEEP=1
hang_start exit-early 4
wait_for_line $WD_WAIT '^rank 3 ended: status 0$' "$T/out"
hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=3 waiting=0-2 unknown=-$' 1
assert_grep '^evidence rank 3: never called it: it DESTROYED the comm after #2; .*exited with status 0' "$T/dead"
