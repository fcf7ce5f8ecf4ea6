#!/bin/sh
# examples/attach-all-hosts.sh on this one host, --local and --mpirun (one
# attach per node through mpirun --map-by ppr:1:node): a hung 4-rank job
# started under mpirun without ncclwatch gets one snapshot per rank in the
# shared directory, and the script ends in `ncclwatch diagnose` of it.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
need_mpirun
sh -n "$NW_ROOT/examples/attach-all-hosts.sh" || fail "sh -n"
launch_mpirun 4 "$T/job.out" "$NW_TRAINER" --steps 10 --verbose --fault skip:rank=2:step=3
# Only this test's job (by default attach takes every process of the user
# with libnccl mapped: other tests' too, which it must not disturb here).
export NCCLWATCH="$NW_CLI" ATTACH_OPTS="--no-python --no-dump --tree $LAUNCH_PID"
hung() { [ "$(grep -c 'step 2 done' "$T/job.out")" -ge 4 ]; }
nw_until 120 hung || { cat "$T/job.out"; fail "the job did not reach step 2"; }
for mode in --local --mpirun; do
	d="$T/shared$mode"
	if [ $mode = --mpirun ]; then
		"$NW_ROOT/examples/attach-all-hosts.sh" --mpirun localhost "$d" > "$T/out$mode" 2>&1
	else
		"$NW_ROOT/examples/attach-all-hosts.sh" --local "$d" > "$T/out$mode" 2>&1
	fi
	cat "$T/out$mode"
	for r in 0 1 2 3; do
		ls "$d"/*.rank$r.snap.seg > /dev/null 2>&1 || fail "$mode: no snapshot of rank $r"
	done
	assert_eq "$(ls "$d" | grep -c '\.snap\.seg$')" 4 "$mode: snapshots"
	# the last step is diagnose of the directory (its verdict needs the
	# snapshot reader; here it is enough that it ran on that directory)
	assert_grep "$d|job " "$T/out$mode"
done
launch_stop KILL
