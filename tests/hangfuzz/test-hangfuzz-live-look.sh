#!/bin/sh
# A generator job that ends by itself waits for the harness's live look:
# after "corpus: check" every process waits for DIR/checked (which
# corpus-lib.sh makes after its live diagnosis) before the job ends and,
# with NCCLWATCH_KEEP=0, its files go. With a fixed 300 ms pause instead,
# a live look under load raced the clean end: files vanished while
# diagnose read them (exit 2, "unreadable live.json": seed 100510 in the
# 3000-3399/100500-100599 sweep). Seed 100510: healthy, 6 ranks, a graph
# captured per step.
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
HF="$NW_BUILD/tests/hangfuzz/hangfuzz"
[ -x "$HF" ] || fail "$HF is not built (make all)"
mkdir -p "$T/rdv"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=look NCCLWATCH_KEEP=0 NCCLWATCH_TIMEOUT=2 \
	"$HF" --seed 100510 --nranks 6 --dir "$T/rdv" > "$T/out" 2>&1
CP=$NW_PID
nw_until 60 grep -q '^corpus: check' "$T/out" || { cat "$T/out"; fail "no 'corpus: check'"; }
# not looked at yet: the job stays (the bound only limits how long a
# wrong job may take to end: 300 ms before)
gone() { ! kill -0 "$CP" 2>/dev/null || ps -o stat= -p "$CP" 2>/dev/null | grep -q Z; }
nw_until 10 gone && { cat "$T/out"; fail "the job ended before the harness looked at it"; }
"$NW_CLI" diagnose --json "$NCCLWATCH_DIR/look" > "$T/live.json" 2> "$T/live.err"
assert_eq "$?" 0 "diagnose of the running job ($(head -c 200 "$T/live.err"))"
assert_eq "$(ls "$NCCLWATCH_DIR/look" | grep -c '\.seg$')" 6 "segments of the running job"
: > "$T/rdv/checked"
nw_wait "$CP" 60
assert_eq "$?" 0 "the job's exit status once looked at"
assert_eq "$(grep -c '^corpus: rank [0-9]* done' "$T/out")" 6 "ranks done"
