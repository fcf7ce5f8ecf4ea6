#!/bin/sh
# tests/hangfuzz/run-seeds.sh while the checkout is rebuilt: a sweep runs
# for minutes, and a CLI the linker is rewriting is not executable for a
# moment (diagnose exits 126, the view is unreadable: seed 2007's dead
# view in the 2000-2099 sweep). The sweep runs on its own copy of the
# programs: with the build's CLI made unexecutable once the seed's job
# runs, every view is still judged, and right.
. "$NW_ROOT/tests/lib.sh"
[ -x "$NW_BUILD/tests/hangfuzz/hangfuzz" ] || fail "hangfuzz is not built (make all)"
b="$T/b"   # a build of this test's own, which it may break
mkdir -p "$b/tests/hangfuzz" "$b/tests/corpus"
cp -R "$NW_BUILD/bin" "$NW_BUILD/lib" "$NW_BUILD/sim" "$b/" || fail "copy"
cp "$NW_BUILD/tests/hangfuzz/hangfuzz" "$b/tests/hangfuzz/" && cp "$NW_BUILD/tests/corpus/scenario" "$b/tests/corpus/" || fail "copy"
NW_BUILD="$b" sh "$NW_ROOT/tests/hangfuzz/run-seeds.sh" 16 > "$T/out" 2>&1 &
sweep=$!
# hangfuzz processes below the sweep: its job runs
jobs_below() {
	ps -eo pid=,ppid=,comm= | awk -v root="$sweep" '{ up[$1] = $2; name[$1] = $3 }
		END { for (p in up) { q = p; while ((q in up) && q != root && q > 1) q = up[q]; if (q == root && name[p] == "hangfuzz") n++ } exit !n }'
}
nw_until 60 jobs_below || { cat "$T/out"; fail "the seed's job never started"; }
chmod a-x "$b/bin/ncclwatch"   # as while the linker writes it
wait "$sweep"
st=$?
cat "$T/out"
assert_eq "$st" 0 "run-seeds.sh's exit status"
assert_eq "$(grep -c '^fuzz-16 [a-z]* ok ' "$T/out")" 3 "views of seed 16 judged ok"
