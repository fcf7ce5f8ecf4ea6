#!/bin/sh
# The per-host summary reader's fuzz target (report/sources/summary/ under ASan and
# UBSan), run for a fixed number of inputs (a count, not a time) from a
# corpus of real summaries made here (nwgen's segments of four scenarios,
# with stacks, snapshots and p2p). Passes if nothing crashed, leaked, hit
# undefined behaviour, or failed the target's round trip. Skips without
# clang's libFuzzer (the target is then not built).
. "$NW_ROOT/tests/lib.sh"
fuzz="$NW_BUILD/tests/progs/fuzz-summary-reader"
NWGEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$fuzz" ] || skip "no fuzz target (clang with -fsanitize=fuzzer not available)"
[ -x "$NWGEN" ] || skip "$NWGEN is not built (tests/gen)"
mkdir -p "$T/corpus" "$T/new"
for s in missing_rank p2p_unmatched mismatch_op env_diff; do
	"$NWGEN" --scenario "$s" --ranks 4 --hosts 2 --stacks --job "$s" --out "$T/segs" > /dev/null 2>&1 || fail "nwgen $s"
	"$NW_CLI" summary -o "$T/corpus/$s.nwsum" "$T/segs/$s/node0".*.seg 2> /dev/null || fail "summary of $s"
done
"$fuzz" -runs=50000 -seed=1 -max_len=16384 -rss_limit_mb=1024 "$T/new" "$T/corpus" > "$T/fuzz.log" 2>&1
rc=$?
tail -n 5 "$T/fuzz.log"
[ $rc -eq 0 ] || { tail -n 40 "$T/fuzz.log" >&2; fail "fuzz target failed (status $rc)"; }
assert_grep '^Done 50000 runs' "$T/fuzz.log"
echo "ok"
