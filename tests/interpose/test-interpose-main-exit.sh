#!/bin/sh
# Recording works from any thread at any time, also once the main thread
# has exited: a segment is made without a name and linked through
# /proc/thread-self/fd, not /proc/self/fd, which is the main thread's and
# gone with it (before: no segment, and "cannot create ...: No such file or
# directory"). nccl-main-exit early on the null simulation: main calls
# pthread_exit before any NCCL call, and once it is gone two workers make
# the process's first NCCL calls (a comm of 2 ranks, 3 all-reduces each).
# The process ends with status 0 (glibc's exit when its last thread ends);
# its comms are alive, so the segment stays, and the CLI reads every record.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1
# TSan's background thread is a pthread of its own that keeps such a
# process alive by itself (without ncclwatch too).
case "$NW_SAN" in *thread*) skip "TSan's background thread keeps the process alive";; esac
# The program leaves its comms alive on purpose.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=early "$NW_PROGS/nccl-main-exit" early 3 > "$T/out" 2>&1
nw_wait "$NW_PID" 60
status=$?
cat "$T/out"
assert_eq "$status" 0 "status (124: still alive after 60s)"
assert_grep 'workers done calls=6 failures=0' "$T/out"
assert_no_grep 'ncclwatch:' "$T/out"
assert_eq "$(segments "$NCCLWATCH_DIR/early" | wc -l)" 1 "segments of the process"
seg=$(segments "$NCCLWATCH_DIR/early")
show "$seg" > "$T/show"
assert_grep '^  flags +recording,exited,exit_status$' "$T/show"
assert_grep '^  exit_status +0$' "$T/show"
assert_grep '^comms count=2 ' "$T/show"
assert_eq "$(grep -c '^  op .* CommInit .* state=INIT_DONE ' "$T/show")" 2 "CommInit records"
for rank in 0 1; do
	for count in 100 101 102; do
		assert_eq "$(grep -c "^  op .* AllReduce .* rank=$rank/2 .* count=$count " "$T/show")" 1 \
			"AllReduce records of rank $rank, count $count"
	done
done
assert_eq "$(grep -c '^  op ' "$T/show")" 8 "records"
# No temporary file left beside it.
assert_eq "$(find "$NCCLWATCH_DIR/early" -name '.*' | wc -l)" 0 "temporary files left"

"$NW_CLI" diagnose "$NCCLWATCH_DIR/early" > "$T/diag" 2>&1
rc=$?
cat "$T/diag"
assert_eq "$rc" 0 "diagnose's status"
assert_grep '^job early: 1 process read \(2 ranks\)' "$T/diag"
assert_grep '^HEALTHY: ' "$T/diag"
echo ok
