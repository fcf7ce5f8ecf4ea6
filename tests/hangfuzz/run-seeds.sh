#!/bin/sh
# The hang generator in results mode (issue 21):
#   sh tests/hangfuzz/run-seeds.sh SEED...        or   --range FIRST LAST
# builds each seed's case line from the generator's own oracle
# (`hangfuzz --seed S --case`), runs them through the corpus harness
# (every view: live, dead, watchdog; CORPUS_JOBS at once) and prints one
# line per seed and view, then per fault kind "fault: N ok of M seeds",
# per shape "shape DIMENSION=VALUE: N ok of M seeds" (ranks, ranks per
# process: one, several, several-one-thread (one thread captures and
# launches the graphs of all its ranks), comms, send/receive, graph, split: none, a TP x DP grid, one over
# the whole world, a group left out with NCCL_SPLIT_NOCOLOR; +per-step), every seed with a wrong view (with
# its plan), and "N ok, N FAIL" (views).
# Needs `make all`; the programs are copied at the start (a rebuild while
# it runs changes nothing). Exit status 0 when every view is right.
: "${NW_ROOT:=$(cd "$(dirname "$0")/../.." && pwd)}"
export NW_ROOT
. "$NW_ROOT/tests/lib.sh"
HANGFUZZ="$NW_BUILD/tests/hangfuzz/hangfuzz"
[ -x "$HANGFUZZ" ] || fail "$HANGFUZZ is not built (make all)"
if [ "${1:-}" = --range ]; then set -- $(seq "$2" "$3"); fi
[ $# -gt 0 ] || fail "usage: run-seeds.sh SEED... | --range FIRST LAST"
# The programs of the whole sweep, copied once: a rebuild of the checkout
# while it runs (minutes) must not change, or break, them between one
# seed's views and the next (a CLI the linker is writing is not
# executable: "diagnose exited 126", a dead view unreadable, as seed 2007's
# once was).
mkdir -p "$T/build/tests/hangfuzz" "$T/build/tests/corpus"
cp -R "$NW_BUILD/bin" "$NW_BUILD/lib" "$NW_BUILD/sim" "$T/build/" && cp "$HANGFUZZ" "$T/build/tests/hangfuzz/" &&
	cp "$NW_BUILD/tests/corpus/scenario" "$T/build/tests/corpus/" || fail "cannot copy the programs of $NW_BUILD"
NW_BUILD="$T/build" NW_SIM="$T/build/sim" NW_LIB="$T/build/lib/libncclwatch.so" NW_CLI="$T/build/bin/ncclwatch"
NW_TRAINER="$T/build/bin/trainer" HANGFUZZ="$T/build/tests/hangfuzz/hangfuzz"
export NW_BUILD
CORPUS_CASES="$T/cases.txt"
export CORPUS_CASES
nw_use_sim
for s in "$@"; do "$HANGFUZZ" --seed "$s" --case || fail "no case for seed $s"; done > "$CORPUS_CASES"
. "$NW_ROOT/tests/corpus/corpus-lib.sh"
names=$(for s in "$@"; do echo "fuzz-$s"; done)
# shellcheck disable=SC2086
corpus_run $names > "$T/lines"
st=$?
cat "$T/lines"
# per fault kind: a seed is right when every view of it is
for s in "$@"; do
	f=$(awk -F'|' -v n="fuzz-$s" '{ gsub(/ /, "", $2) } $2 == n { split($10, w, " "); print w[1] }' "$CORPUS_CASES")
	if grep -q "^fuzz-$s [a-z]* FAIL" "$T/lines" || ! grep -q "^fuzz-$s " "$T/lines"; then echo "$f FAIL $s"; else echo "$f ok $s"; fi
done > "$T/byfault"
awk '{ n[$1]++; if ($2 == "ok") ok[$1]++ } END { for (f in n) printf "%s: %d ok of %d seeds\n", f, ok[f], n[f] }' "$T/byfault" | sort
# per shape of the job (from its plan's words): a seed counts in one row
# of each dimension
while read -r f r s; do
	"$HANGFUZZ" --seed "$s" --plan | awk -v r="$r" '
		NR == 1 { p = /one thread drives/ ? "several-one-thread" : /processes of/ ? "several" : "one"; c = /(tp|dp) groups/ ? "splits" : "world"
		          n = $3 + 0; sz = n <= 2 ? "2" : n <= 4 ? "3-4" : "5-8"
		          sp = /NOCOLOR/ ? "nocolor" : /whole world/ ? "whole-world" : /tp groups/ ? "grid" : "none"
		          if (/every step/) sp = sp "+per-step" }
		/ring send\/recv/ { x = "ring" } /pipeline stage/ { y = "pipeline" }
		/CUDA graph/ { g = /captured once/ ? "once" : "per-step" }
		END { o = x y; if (o == "") o = "none"; if (o == "ringpipeline") o = "ring+pipeline"; if (g == "") g = "eager"
		      printf "ranks=%s %s\nranks-per-process=%s %s\ncomms=%s %s\nsend-recv=%s %s\ngraph=%s %s\nsplit=%s %s\n", sz, r, p, r, c, r, o, r, g, r, sp, r }'
done < "$T/byfault" > "$T/byshape"
awk '{ n[$1]++; if ($2 == "ok") ok[$1]++ } END { for (k in n) printf "shape %s: %d ok of %d seeds\n", k, ok[k], n[k] }' "$T/byshape" | sort
for s in $(awk '$2 == "FAIL" { print $3 }' "$T/byfault"); do
	echo "wrong: seed $s"
	"$HANGFUZZ" --seed "$s" --plan | sed 's/^/    /'
done
echo "$(grep -c ' ok ' "$T/lines") ok, $(grep -c ' FAIL ' "$T/lines") FAIL"
exit $st
