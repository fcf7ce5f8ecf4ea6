#!/bin/sh
# Per-op call sites are named while the job runs, not only once a stall is
# captured: examples/train.py, 4 ranks started directly (RANK, WORLD_SIZE:
# a launcher would tear the job down when a rank is killed), healthy and
# long. The
# watchdog of each rank names the call sites of new ops at its poll, with
# no capture (`show`: "stacks never ... captures=0" and the op's "py
# sync_gradients (.../train.py:LINE)"). Rank 2 is then SIGKILLed: it never
# captured anything, yet the verdict (MISSING_RANK, culprit 2, "process
# gone") says where Python issued its last call, live from the watchdog of
# the ranks left and post-mortem.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/python/py-lib.sh"

ar_line=$(line_of 'check_nccl(self.nccl.ncclAllReduce(')
[ -n "$ar_line" ] || fail "train.py: no ncclAllReduce line"

py_direct "$T/out" --steps 1000000 --count 64 --bcast-every 0
# rank_seg R: the segment of global rank R, once it exists.
rank_seg() {
	for _f in "$NCCLWATCH_DIR"/*/*.seg; do
		[ -f "$_f" ] || continue
		"$NW_CLI" show --records 0 --no-stacks "$_f" 2>/dev/null | grep -q "^  rank  *$1\$" && { echo "$_f"; return 0; }
	done
	return 1
}
nw_until 60 rank_seg 2 > /dev/null || { cat "$T/out" >&2; fail "no segment of rank 2"; }
seg=$(rank_seg 2)
named() {
	"$NW_CLI" show --records 8 "$seg" > "$T/show" 2>&1 &&
		grep -Eq "^    py sync_gradients \(.*train\.py:$ar_line\)\$" "$T/show" &&
		! grep -q '^    py ?? ' "$T/show"
}
nw_until 60 named || { cat "$T/show" >&2; fail "rank 2's call sites were not named"; }
assert_grep "^stacks never t=- request=0 threads=0 captures=0 " "$T/show"
pid=$(awk '$1 == "pid" { print $2; exit }' "$T/show")
[ -n "$pid" ] || fail "no pid in rank 2's segment"
kill -9 "$pid"

wait_verdict 120 "$T/out" MISSING_RANK
# Killed between two calls, or after enqueueing one (either is right).
ev="rank 2: (never called it|called it but ended before completing it).*last NCCL call AllReduce #[0-9]+ on comm [0-9a-f]{16} \\([A-Z]+\\), issued at train\\.py:$ar_line in sync_gradients.*; process gone"
assert_grep "ncclwatch:     $ev" "$T/out"
assert_grep 'ncclwatch: MISSING_RANK: rank 2 (never called|ended inside) AllReduce #[0-9]+ on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it' "$T/out"
py_direct_stop
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/dead.txt"
assert_grep "^    $ev" "$T/dead.txt"
echo ok
