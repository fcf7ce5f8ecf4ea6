#!/bin/sh
# The trainer under Open MPI's mpirun (4 ranks on one host) with
# libncclwatch.so preloaded.
# (a) `mpirun -x LD_PRELOAD=LIB`, no NCCLWATCH_* variable but NCCLWATCH_DIR
#     (kept so the test never writes into /dev/shm; the local ranks inherit
#     it from mpirun, no -x needed): a healthy run exits 0 with the same
#     "rank R ok ..." lines as without the preload, leaves no segment and
#     prints no "ncclwatch:" line. A hang (rank 1 skips), with
#     NCCLWATCH_TIMEOUT=2 also given by -x (the default 60 s would make the
#     test slow): the watchdog's verdict (MISSING_RANK, culprit 1, 0,2-3
#     waiting) shows while mpirun runs; the job directory is Open MPI's job
#     id (the first part of the ranks' OMPI_MCA_orte_hnp_uri), not ppid-...;
#     after SIGTERM to mpirun, which stops the ranks, `ncclwatch diagnose`
#     gives the same verdict, exit 1.
# (b) `ncclwatch run --timeout 2 -- mpirun ... trainer`: mpirun is preloaded
#     too, yet only the 4 ranks create a segment; ncclwatch exits as mpirun
#     does when run directly: 0 healthy, the same status when a rank is
#     killed (crash fault); on a hang the verdict shows, and a SIGTERM to
#     ncclwatch is forwarded: mpirun ends, stopping the ranks, and ncclwatch
#     exits with the status mpirun has after a SIGTERM when run directly.
# (c) examples/mpirun.sh: healthy (as in (a), and its default dump directory
#     gets no file) and a hang (--timeout 2): the verdict, dumps and
#     report.txt in the dump directory it announced (NCCLWATCH_* reach the
#     ranks by -x), post-mortem diagnose of segments and of dumps.
# Every teardown is checked: when mpirun ends (SIGTERM, a killed rank), no
# rank is left running.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
need_mpirun
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI not built"
example="$NW_ROOT/examples/mpirun.sh"
unset LD_PRELOAD NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR NCCLWATCH_KEEP NCCLWATCH_JOB NCCLWATCH_LIB
nw_vars() { env | grep '^NCCLWATCH_' | cut -d= -f1 | sort | tr '\n' ' '; }
assert_eq "$(nw_vars)" "NCCLWATCH_DIR " "NCCLWATCH_* variables set"
preload=$(nw_preload)
args="--steps 20 --count 64 --pipeline"
mpi_opts="--allow-run-as-root --oversubscribe"

running_ranks() { launch_procs | grep -c ' trainer$'; }
# wait_verdict OUT: the watchdog's verdict in OUT while the launcher and
# its 4 ranks still run.
wait_verdict() {
	nw_until 60 grep -q 'ncclwatch:   hint: ' "$1" || { cat "$1"; fail "no verdict from the watchdog in $1"; }
	kill -0 "$LAUNCH_PID" 2>/dev/null || fail "the launcher ended before the teardown"
	assert_eq "$(running_ranks)" 4 "ranks running when the verdict was printed"
}
# segments DIR: the live segments (not dumps) under DIR.
segments() { find "$1" -name '*.seg' ! -name '*.dump.seg' | sort; }
# teardown SIG: signal the launcher alone (what an operator does), which
# must end and stop every rank.
teardown() {
	launch_stop "$1"
	[ "$LAUNCH_STATUS" != 124 ] || fail "the launcher did not end within 60 s of SIG$1"
	note "after SIG$1 the launcher exited with status $LAUNCH_STATUS"
	launch_settled 20 || fail "processes left after the launcher ended"
}

note "(a) healthy, without the preload and with mpirun -x LD_PRELOAD"
launch_mpirun 4 "$T/plain.out" $mpi_opts -- "$NW_TRAINER" $args
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "mpirun's exit status without the preload"
launch_rank_lines "$T/plain.out" > "$T/plain.ranks"
assert_eq "$(grep -c . "$T/plain.ranks")" 4 "rank lines without the preload"
launch_mpirun 4 "$T/healthy.out" $mpi_opts -x "LD_PRELOAD=$preload" -- "$NW_TRAINER" $args
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "mpirun's exit status with the preload"
launch_rank_lines "$T/healthy.out" > "$T/healthy.ranks"
diff "$T/plain.ranks" "$T/healthy.ranks" || fail "the ranks' results differ under the preload"
assert_no_grep 'ncclwatch:' "$T/healthy.out"
assert_eq "$(find "$NCCLWATCH_DIR" -name '*.seg' | wc -l)" 0 "segments left after a clean exit"

note "(a) rank 1 skips step 5's all-reduce (-x NCCLWATCH_TIMEOUT=2)"
export NCCLWATCH_DIR="$T/shm-a"
launch_mpirun 4 "$T/hang.out" $mpi_opts -x "LD_PRELOAD=$preload" -x NCCLWATCH_TIMEOUT=2 -- \
	"$NW_TRAINER" $args --fault skip:rank=1:step=5
wait_verdict "$T/hang.out"
check_verdict "$T/hang.out" 1 0,2-3 7
jobdir=$(job_dirs)
assert_eq "$(echo "$jobdir" | grep -c .)" 1 "job directories"
segments "$jobdir" > "$T/segs"
assert_eq "$(grep -c . "$T/segs")" 4 "segments of the hung job"
pid0=$(head -n 1 "$T/segs" | sed -E 's/.*\.([0-9]+)\.seg$/\1/')
uri=$(tr '\0' '\n' < "/proc/$pid0/environ" | sed -n 's/^OMPI_MCA_orte_hnp_uri=//p')
note "a rank's OMPI_MCA_orte_hnp_uri: $uri"
[ -n "$uri" ] || fail "rank pid $pid0 has no OMPI_MCA_orte_hnp_uri"
assert_eq "$(basename "$jobdir")" "${uri%%.*}" "job directory: Open MPI's job id"
teardown TERM
direct_term_status=$LAUNCH_STATUS
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/post.txt" 2>&1
assert_eq $? 1 "diagnose after the teardown: exit status"
assert_grep "^job ${uri%%.*}: 4 processes read, world size 4, ranks missing: none, timeout 2s\$" "$T/post.txt"
same_verdict "$T/hang.out" "$T/post.txt"

note "(b) ncclwatch run -- mpirun: healthy (--keep: count the segments)"
export NCCLWATCH_DIR="$T/shm-b"
launch_cmd "$T/run-healthy.out" "$NW_CLI" run --keep --timeout 2 -- "$MPIRUN" $mpi_opts -np 4 "$NW_TRAINER" $args
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "ncclwatch run's exit status, healthy job"
launch_rank_lines "$T/run-healthy.out" > "$T/run-healthy.ranks"
diff "$T/plain.ranks" "$T/run-healthy.ranks" || fail "the ranks' results differ under ncclwatch run"
assert_no_grep 'ncclwatch:' "$T/run-healthy.out"
assert_eq "$(segments "$NCCLWATCH_DIR" | wc -l)" 4 "segments: one per rank, none of mpirun"
"$NW_CLI" status "$NCCLWATCH_DIR" > "$T/run-status.txt" 2>&1 || fail "ncclwatch status failed"
cat "$T/run-status.txt"
for r in 0 1 2 3; do
	assert_eq "$(grep -Ec "^[^#]* $r comms=" "$T/run-status.txt")" 1 "status lines of rank $r"
done

note "(b) a rank killed (crash fault): mpirun directly, then under ncclwatch run"
export NCCLWATCH_DIR="$T/shm-b2"
launch_mpirun 4 "$T/crash-direct.out" $mpi_opts -- "$NW_TRAINER" $args --fault crash:rank=1:step=3
launch_wait 90
direct_crash_status=$LAUNCH_STATUS
note "mpirun directly: status $direct_crash_status"
launch_settled 20 || fail "processes left after mpirun ended"
[ "$direct_crash_status" != 0 ] && [ "$direct_crash_status" != 124 ] || fail "mpirun's status with a killed rank: $direct_crash_status"
launch_cmd "$T/crash-run.out" "$NW_CLI" run --timeout 2 -- "$MPIRUN" $mpi_opts -np 4 "$NW_TRAINER" $args --fault crash:rank=1:step=3
launch_wait 90
assert_eq "$LAUNCH_STATUS" "$direct_crash_status" "ncclwatch run's status, a rank killed"
launch_settled 20 || fail "processes left after ncclwatch run ended"

note "(b) a hang under ncclwatch run; SIGTERM to ncclwatch"
export NCCLWATCH_DIR="$T/shm-b3"
launch_cmd "$T/run-hang.out" "$NW_CLI" run --timeout 2 -- "$MPIRUN" $mpi_opts -np 4 "$NW_TRAINER" $args --fault skip:rank=1:step=5
wait_verdict "$T/run-hang.out"
check_verdict "$T/run-hang.out" 1 0,2-3 7
mpirun_pid=$(launch_procs | awk '$2 == "mpirun" { print $1 }')
[ -n "$mpirun_pid" ] || fail "no mpirun under ncclwatch run"
grep -q libncclwatch "/proc/$mpirun_pid/maps" || fail "mpirun (pid $mpirun_pid) has not loaded libncclwatch.so"
assert_eq "$(segments "$NCCLWATCH_DIR" | wc -l)" 4 "segments of the hung job (mpirun preloaded, none of its own)"
segments "$NCCLWATCH_DIR" | grep -q "\.$mpirun_pid\.seg\$" && fail "mpirun created a segment"
teardown TERM
kill -0 "$mpirun_pid" 2>/dev/null && fail "mpirun still runs: the SIGTERM was not forwarded"
assert_eq "$LAUNCH_STATUS" "$direct_term_status" "ncclwatch run's status after SIGTERM (as mpirun's directly)"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/run-post.txt" 2>&1
assert_eq $? 1 "diagnose after the teardown: exit status"
same_verdict "$T/run-hang.out" "$T/run-post.txt"

note "(c) examples/mpirun.sh, healthy"
export NCCLWATCH_DIR="$T/shm-c" NCCLWATCH_LIB="$NW_LIB"
# A sanitizer build needs its runtime first: the example keeps an
# LD_PRELOAD that already names the library.
[ -z "$NW_SAN" ] || export LD_PRELOAD="$preload"
work="$T/work"
mkdir -p "$work"
(cd "$work" && exec setsid "$example" --np 4 --oversubscribe -- "$NW_TRAINER" $args) > "$T/ex-healthy.out" 2>&1 &
LAUNCH_PID=$!; _nw_pgids="$_nw_pgids $LAUNCH_PID"
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "exit status through examples/mpirun.sh"
launch_rank_lines "$T/ex-healthy.out" > "$T/ex-healthy.ranks"
diff "$T/plain.ranks" "$T/ex-healthy.ranks" || fail "the ranks' results differ through examples/mpirun.sh"
assert_grep '^mpirun.sh: NCCLWATCH_TIMEOUT=120 NCCLWATCH_DUMP_DIR=' "$T/ex-healthy.out"
assert_no_grep 'ncclwatch:' "$T/ex-healthy.out"
assert_eq "$(find "$NCCLWATCH_DIR" -name '*.seg' | wc -l)" 0 "segments left after a clean exit"
assert_eq "$(find "$work" -type f | wc -l)" 0 "files in the working directory (dumps, report)"

note "(c) examples/mpirun.sh --timeout 2, rank 2 skips step 3's all-reduce"
dumps="$T/dumps-c"
(cd "$work" && exec setsid "$example" --np 4 --timeout 2 --dump-dir "$dumps" --oversubscribe -- \
	"$NW_TRAINER" $args --fault skip:rank=2:step=3) > "$T/ex-hang.out" 2>&1 &
LAUNCH_PID=$!; _nw_pgids="$_nw_pgids $LAUNCH_PID"
wait_verdict "$T/ex-hang.out"
check_verdict "$T/ex-hang.out" 2 0-1,3 5
assert_grep "^mpirun.sh: NCCLWATCH_TIMEOUT=2 NCCLWATCH_DUMP_DIR=$dumps\$" "$T/ex-hang.out"
# Every rank writes a dump (the stuck ones on their own, the others on
# request), some after the first verdict was printed.
nw_until 30 sh -c '[ "$(find "$1" -name "*.dump.seg" | wc -l)" -ge 4 ]' sh "$dumps" \
	|| fail "4 dumps were not written in $dumps: $(ls "$dumps")"
teardown TERM
assert_eq "$(segments "$NCCLWATCH_DIR" | wc -l)" 4 "segments left by the killed job"
assert_eq "$(find "$dumps" -name '*.dump.seg' | wc -l)" 4 "dumps in $dumps"
same_verdict "$T/ex-hang.out" "$dumps/report.txt"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/ex-post.txt" 2>&1
assert_eq $? 1 "diagnose of the segments: exit status"
same_verdict "$T/ex-hang.out" "$T/ex-post.txt"
"$NW_CLI" diagnose "$dumps" > "$T/ex-post-dumps.txt" 2>&1
assert_eq $? 1 "diagnose of the dumps: exit status"
same_verdict "$T/ex-hang.out" "$T/ex-post-dumps.txt"
