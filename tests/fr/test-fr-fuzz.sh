#!/bin/sh
# The Flight Recorder reader's fuzz target (pickle reader + loader), run for
# a fixed number of inputs (a count, not a time) from the corpus kept in
# tests/fuzz/corpus-fr/. Passes if nothing crashed, leaked or hit undefined
# behaviour. Skips without clang's libFuzzer (the target is then not built).
. "$NW_ROOT/tests/lib.sh"
fuzz="$NW_BUILD/tests/progs/fuzz-fr-reader"
[ -x "$fuzz" ] || skip "no fuzz target (clang with -fsanitize=fuzzer not available)"
[ -n "$(ls "$NW_ROOT/tests/fuzz/corpus-fr")" ] || fail "empty corpus"
mkdir -p "$T/new"
"$fuzz" -runs=100000 -seed=1 -max_len=16384 -rss_limit_mb=1024 "$T/new" "$NW_ROOT/tests/fuzz/corpus-fr" \
	> "$T/fuzz.log" 2>&1
rc=$?
tail -n 5 "$T/fuzz.log"
[ $rc -eq 0 ] || { tail -n 40 "$T/fuzz.log" >&2; fail "fuzz target failed (status $rc)"; }
assert_grep '^Done 100000 runs' "$T/fuzz.log"
echo "ok"
