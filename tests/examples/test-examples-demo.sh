#!/bin/sh
# `make demo` (examples/demo.sh) as a newcomer runs it: it ends with status
# 0, the watchdog's own verdict and the post-mortem diagnosis both name
# rank 5 (the rank that skipped the all-reduce) with ranks 0-4,6-7
# waiting, and it leaves no process and no temporary directory behind.
. "$NW_ROOT/tests/lib.sh"
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
nw_bounded 120 sh "$NW_ROOT/examples/demo.sh" > "$T/demo.out" 2>&1
status=$?
cat "$T/demo.out"
assert_eq "$status" 0 "demo's exit status"
assert_grep '^    ncclwatch: stall: rank=[0-9] ' "$T/demo.out"
assert_grep '^    ncclwatch: MISSING_RANK: rank 5 never called AllReduce #[0-9]+ on comm [0-9a-f]{16} \(8 ranks\); ranks 0-4,6-7 wait in it$' "$T/demo.out"
assert_grep '^    ncclwatch:   culprits: 5$' "$T/demo.out"
sed -n '/^==> Post-mortem/,$p' "$T/demo.out" > "$T/post"
assert_grep '^    MISSING_RANK: rank 5 never called AllReduce #[0-9]+ on comm [0-9a-f]{16} \(8 ranks\); ranks 0-4,6-7 wait in it$' "$T/post"
assert_grep '^      culprits: 5$' "$T/post"
assert_grep '^      waiting: 0-4,6-7$' "$T/post"
assert_grep '^      rank 5 \(1\) thread "trainer":$' "$T/post"
assert_grep '^        #1 idle_forever' "$T/post"
assert_grep '^    \(exit status 1: ' "$T/post"
assert_eq "$(ls -A "$TMPDIR")" "" "leftovers in TMPDIR"
# The demo's own command line, and only processes of this run (their
# NCCLSIM_DIR is under our TMPDIR): another `make test` may run its demo now.
for p in $(pgrep -f -- "--count 256 --bcast-every 10 --verbose --fault skip:rank=5:step=20"); do
	tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qF "NCCLSIM_DIR=$TMPDIR/" && fail "the demo left its trainer process $p"
done
exit 0
