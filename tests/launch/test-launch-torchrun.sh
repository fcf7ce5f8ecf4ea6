#!/bin/sh
# The trainer under Debian's torchrun with libncclwatch.so preloaded.
# (a) through examples/torchrun.sh, a healthy 4-rank job: exit 0, the same
#     "rank R ok ..." lines as without the preload, no segment left, no file
#     in the default dump directory (./ncclwatch/<date>-<pid>), no
#     "ncclwatch:" line.
# (b) through examples/torchrun.sh, rank 1 skips an all-reduce (timeout 2 s):
#     while torchrun still runs, its output holds the watchdog's verdict
#     (MISSING_RANK, culprit 1, 0,2-3 waiting, the "code path differs" hint);
#     SIGTERM to torchrun stops every worker; segments (job directory
#     ppid-<torchrun's pid>-..., run id "none" on one node), dumps and
#     report.txt stay, and `ncclwatch diagnose` of the segments, and of the
#     dumps, gives the same verdict (exit 1).
# (c) two hung torchrun jobs at once, both run id "none", different ports:
#     two job directories, one per torchrun pid; each diagnosis reads its own
#     4 ranks and names its own culprit.
# (d) --rdzv_id NAME: the job directory is NAME.
# (e) two torchrun agents, --nnodes 2 --node_rank 0/1 with one
#     --master_addr/--master_port (static rendezvous), 2 workers each, rank 3
#     (on "node" 1) skips: one job directory torchrun-127.0.0.1-<port> with
#     4 segments; the verdict, printed on the hung job and by diagnose,
#     spans both agents.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
need_torchrun
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI not built"
example="$NW_ROOT/examples/torchrun.sh"
unset LD_PRELOAD NCCLWATCH_TIMEOUT NCCLWATCH_DUMP_DIR NCCLWATCH_KEEP NCCLWATCH_JOB
export NCCLWATCH_LIB="$NW_LIB"
# A sanitizer build needs its runtime first: the example keeps an
# LD_PRELOAD that already names the library.
[ -z "$NW_SAN" ] || export LD_PRELOAD="$(nw_preload)"

# running_workers: the trainers still alive in the launchers' sessions.
running_workers() { launch_procs | grep -c ' trainer$'; }

work="$T/work"                # the examples' working directory (default dump dir)
mkdir -p "$work"
args="--steps 20 --count 64 --pipeline"

note "(a) healthy, 4 ranks: without the preload, then through examples/torchrun.sh"
launch_torchrun 4 "$T/plain.out" "$NW_TRAINER" $args
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "torchrun's exit status without the preload"
launch_rank_lines "$T/plain.out" > "$T/plain.ranks"
assert_eq "$(grep -c . "$T/plain.ranks")" 4 "rank lines without the preload"
(cd "$work" && exec setsid "$example" --nproc 4 --master_port "$(free_port)" --log_dir "$T/logs-a" \
	-- "$NW_TRAINER" $args) > "$T/healthy.out" 2>&1 &
LAUNCH_PID=$!; _nw_pgids="$_nw_pgids $LAUNCH_PID"
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "exit status through examples/torchrun.sh"
launch_rank_lines "$T/healthy.out" > "$T/healthy.ranks"
diff "$T/plain.ranks" "$T/healthy.ranks" || fail "the ranks' results differ under the preload"
assert_grep '^torchrun.sh: NCCLWATCH_TIMEOUT=120 NCCLWATCH_DUMP_DIR=' "$T/healthy.out"
assert_no_grep 'ncclwatch:' "$T/healthy.out"
assert_eq "$(find "$NCCLWATCH_DIR" -name '*.seg' | wc -l)" 0 "segments left after a clean exit"
# The library creates the dump directory at the first NCCL call (requests
# go through it); a healthy job writes nothing into it.
dump_dir=$(sed -n 's/^torchrun.sh: NCCLWATCH_TIMEOUT=120 NCCLWATCH_DUMP_DIR=//p' "$T/healthy.out")
case $dump_dir in "$work"/ncclwatch/*) ;; *) fail "default dump directory: '$dump_dir'" ;; esac
assert_eq "$(find "$work" -type f | wc -l)" 0 "files in the working directory (dumps, report)"

note "(b) rank 1 skips step 5's all-reduce, through examples/torchrun.sh --timeout 2"
export NCCLWATCH_DIR="$T/shm-b"
(cd "$work" && exec setsid "$example" --nproc 4 --timeout 2 --master_port "$(free_port)" --log_dir "$T/logs-b" \
	-- "$NW_TRAINER" $args --fault skip:rank=1:step=5) > "$T/hang.out" 2>&1 &
LAUNCH_PID=$!; _nw_pgids="$_nw_pgids $LAUNCH_PID"
nw_until 60 grep -q 'ncclwatch:   hint: ' "$T/hang.out" || { cat "$T/hang.out"; fail "no verdict from the watchdog"; }
kill -0 "$LAUNCH_PID" 2>/dev/null || fail "torchrun ended before the teardown"
assert_eq "$(running_workers)" 4 "workers running when the verdict was printed"
grep 'ncclwatch: ' "$T/hang.out" | head -n 12
check_verdict "$T/hang.out" 1 0,2-3 7
dump_dir=$(sed -n 's/^torchrun.sh: NCCLWATCH_TIMEOUT=2 NCCLWATCH_DUMP_DIR=//p' "$T/hang.out")
case $dump_dir in "$work"/ncclwatch/*) ;; *) fail "default dump directory: '$dump_dir'" ;; esac
# Every process writes a dump (the stuck ones on their own, the others on
# request), some after the first verdict was printed.
nw_until 30 sh -c '[ "$(find "$1" -name "*.dump.seg" | wc -l)" -ge 4 ]' sh "$dump_dir" \
	|| fail "4 dumps were not written in $dump_dir: $(ls "$dump_dir")"
note "the operator's teardown: SIGTERM to torchrun"
launch_stop TERM
note "torchrun exited with status $LAUNCH_STATUS"
[ "$LAUNCH_STATUS" != 124 ] || fail "torchrun did not end within 60 s of SIGTERM"
launch_settled 20 || fail "processes left after torchrun ended"
jobs=$(job_dirs)
assert_eq "$(echo "$jobs" | grep -c .)" 1 "job directories"
case $(basename "$jobs") in "ppid-$LAUNCH_PID-"[0-9]*) ;; *) fail "job directory $jobs, expected ppid-$LAUNCH_PID-<ticks>" ;; esac
assert_eq "$(find "$jobs" -name '*.seg' ! -name '*.dump.seg' | wc -l)" 4 "segments left by the killed job"
assert_eq "$(find "$dump_dir" -name '*.dump.seg' | wc -l)" 4 "dumps in $dump_dir"
[ -f "$dump_dir/report.txt" ] || fail "no report.txt in $dump_dir"
same_verdict "$T/hang.out" "$dump_dir/report.txt"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/post.txt" 2>&1
assert_eq $? 1 "diagnose of the segments: exit status"
assert_grep "^job $(basename "$jobs"): 4 processes read, world size 4, ranks missing: none, timeout 2s\$" "$T/post.txt"
same_verdict "$T/hang.out" "$T/post.txt"
"$NW_CLI" diagnose "$dump_dir" > "$T/post-dumps.txt" 2>&1
assert_eq $? 1 "diagnose of the dumps: exit status"
same_verdict "$T/hang.out" "$T/post-dumps.txt"

note "(c) two hung jobs at once, run id 'none' for both, different ports"
export NCCLWATCH_DIR="$T/shm-c" NCCLWATCH_TIMEOUT=2
export LD_PRELOAD="$(nw_preload)"
launch_torchrun 4 "$T/c1.out" "$NW_TRAINER" $args --fault skip:rank=1:step=5
pid1=$LAUNCH_PID
launch_torchrun 4 "$T/c2.out" "$NW_TRAINER" $args --fault skip:rank=2:step=3
pid2=$LAUNCH_PID
nw_until 60 grep -q 'ncclwatch:   hint: ' "$T/c1.out" || { cat "$T/c1.out"; fail "no verdict in job 1"; }
nw_until 60 grep -q 'ncclwatch:   hint: ' "$T/c2.out" || { cat "$T/c2.out"; fail "no verdict in job 2"; }
kill -0 "$pid1" 2>/dev/null && kill -0 "$pid2" 2>/dev/null || fail "a job ended while hung"
assert_eq "$(running_workers)" 8 "workers of the two jobs"
check_verdict "$T/c1.out" 1 0,2-3 7
check_verdict "$T/c2.out" 2 0-1,3 5
assert_eq "$(job_dirs | wc -l)" 2 "job directories"
for j in 1 2; do
	eval "pid=\$pid$j"
	dir=$(job_dirs | grep "/ppid-$pid-[0-9]*\$") || fail "no job directory ppid-$pid-... for job $j: $(job_dirs)"
	assert_eq "$(find "$dir" -name '*.seg' ! -name '*.dump.seg' | wc -l)" 4 "segments of job $j"
	"$NW_CLI" diagnose "$dir" > "$T/c$j.diag" 2>&1
	assert_eq $? 1 "diagnose of job $j"
	assert_grep "^job $(basename "$dir"): 4 processes read, world size 4, ranks missing: none, timeout 2s\$" "$T/c$j.diag"
	same_verdict "$T/c$j.out" "$T/c$j.diag"
done
LAUNCH_PID=$pid1; launch_stop TERM
LAUNCH_PID=$pid2; launch_stop TERM
launch_settled 20 || fail "processes left after both torchruns ended"

note "(d) --rdzv_id names the job directory"
export NCCLWATCH_DIR="$T/shm-d" NCCLWATCH_KEEP=1
name="nw-rdzv.$$"
launch_torchrun 2 "$T/d.out" --rdzv_id "$name" "$NW_TRAINER" --steps 3
launch_wait 90
assert_eq "$LAUNCH_STATUS" 0 "exit status with --rdzv_id"
assert_eq "$(job_dirs)" "$NCCLWATCH_DIR/$name" "job directory with --rdzv_id $name"
assert_eq "$(find "$NCCLWATCH_DIR/$name" -name '*.seg' | wc -l)" 2 "segments (kept) under $name"
unset NCCLWATCH_KEEP

note "(e) two agents, --nnodes 2 (static rendezvous on one port), rank 3 skips"
export NCCLWATCH_DIR="$T/shm-e"
port=$(free_port)
for node in 0 1; do
	nw_spawn "$TORCHRUN" --nnodes 2 --node_rank $node --master_addr 127.0.0.1 --master_port "$port" \
		--nproc_per_node 2 --no_python --redirects 1 --tee 1 --log_dir "$T/logs-e$node" \
		"$NW_TRAINER" $args --rendezvous "$T/rdv-e" --fault skip:rank=3:step=5 > "$T/e$node.out" 2>&1
	eval "agent$node=\$NW_PID"
done
# One process per host prints the verdict: either agent's output may hold it.
nw_until 60 grep -q 'ncclwatch:   hint: ' "$T/e0.out" "$T/e1.out" || { cat "$T/e0.out" "$T/e1.out"; fail "no verdict"; }
cat "$T/e0.out" "$T/e1.out" > "$T/e.out"
kill -0 "$agent0" 2>/dev/null && kill -0 "$agent1" 2>/dev/null || fail "an agent ended while hung"
check_verdict "$T/e.out" 3 0-2 7
assert_eq "$(job_dirs)" "$NCCLWATCH_DIR/torchrun-127.0.0.1-$port" "the one job directory of both agents"
assert_eq "$(find "$NCCLWATCH_DIR" -name '*.seg' ! -name '*.dump.seg' | wc -l)" 4 "segments of the 4 ranks"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/e.diag" 2>&1
assert_eq $? 1 "diagnose of the 2-node job"
assert_grep "^job torchrun-127.0.0.1-$port: 4 processes read, world size 4, ranks missing: none, timeout 2s\$" "$T/e.diag"
same_verdict "$T/e.out" "$T/e.diag"
LAUNCH_PID=$agent1; launch_stop TERM
LAUNCH_PID=$agent0; launch_stop TERM
launch_settled 20 || fail "processes left after both agents ended"
