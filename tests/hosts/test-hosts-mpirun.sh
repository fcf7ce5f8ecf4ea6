#!/bin/sh
# A job of four namespaced hosts x two ranks started the way users start
# one: examples/mpirun.sh, Open MPI's mpirun launching its orted on each
# "host" through an ssh stand-in (host-rsh.sh: the host's namespaces and a
# fresh environment, so what the ranks get comes through mpirun -x). Rank 5
# (node3) broadcasts at step 3 where the others all-reduce: MISMATCH. While
# it hangs, examples/collect/collect-mpirun.sh gathers every host's files
# through mpirun again (one process per host) and diagnose names rank 5;
# the job directory is the one ncclwatch derives from Open MPI's job id, the
# same on every host.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/hosts/hosts-lib.sh"
need_mpirun
hosts="node1 node2 node3 node4"
hosts_up $hosts
unset NCCLWATCH_DIR
export NCCLWATCH_KEEP=1 MPIRUN
rsh="--mca plm_rsh_agent $NW_ROOT/tests/hosts/host-rsh.sh"
nw_spawn "$NW_ROOT/examples/mpirun.sh" --np 8 --timeout 2 --dump-dir "$T/dumps" \
	--host node1:2,node2:2,node3:2,node4:2 $rsh \
	-x NCCLSIM_DIR -x LD_LIBRARY_PATH -x NCCL_RAS_ADDR -x NW_TEST_ID -- \
	"$NW_TRAINER" --steps 10 --count 100 --bcast-every 0 --verbose --fault order:rank=5:step=3 > "$T/job.out" 2>&1
job_pid=$NW_PID
jobdirs() { host_run "$1" sh -c 'ls -d /dev/shm/ncclwatch-*/*/' 2>/dev/null; }
# the hang: every rank stuck wrote its dump into the shared dump directory
# (mpirun.sh's way for several hosts; the segments stay on each host)
dumped() { [ "$(ls "$T/dumps" 2>/dev/null | grep -c '\.rank[0-7]\.dump\.seg$')" -ge 8 ]; }
nw_until 120 dumped || { tail -n 20 "$T/job.out"; ls "$T/dumps"; fail "not every rank dumped"; }
kill -0 "$job_pid" || fail "mpirun ended"

note "each host holds its two ranks' segments, in one job directory named alike everywhere"
jd1=$(jobdirs node1)
for h in $hosts; do
	assert_eq "$(jobdirs "$h")" "$jd1" "the job directory on $h"
	host_run "$h" ls "$jd1" > "$T/ls.$h"
	assert_eq "$(grep -c "^$h\.[0-9]*\.seg\$" "$T/ls.$h")" 2 "segments on $h"
	! grep '^node' "$T/ls.$h" | grep -v "^$h\." || fail "files of other hosts on $h"
done

note "collect-mpirun.sh while the job hangs"
export NCCLWATCH="$NW_CLI" MPIRUN_OPTS="$rsh -x NCCLWATCH -x NW_TEST_ID"
out="$T/collected"
"$NW_ROOT/examples/collect/collect-mpirun.sh" node1,node2,node3,node4 "$out" > "$T/collect.out" 2>&1
echo "collect-mpirun.sh exited $?"
cat "$T/collect.out"
kill -0 "$job_pid" || fail "the job ended during the collection"
for h in $hosts; do assert_grep "^collect: $h: [0-9]+ files in " "$T/collect.out"; done
assert_no_grep '^collect: no files from' "$T/collect.out"
"$NW_CLI" diagnose --json "$out" > "$T/all.json" 2> "$T/all.err"
python3 "$NW_ROOT/tests/corpus/judge.py" json "$T/all.json" MISMATCH 5 0-4,6-7 - > "$T/all.judged"
cat "$T/all.judged"
grep -q '^ok ' "$T/all.judged" || fail "collected through mpirun: not MISMATCH with culprit 5"
assert_grep '^MISMATCH: ' "$T/collect.out"
echo "ok: 4 hosts x 2 ranks under mpirun, collected through mpirun"
