#!/bin/sh
# hang-exit-early: rank 3 destroys the world comm after 2 steps and exits
# with status 0 (a DDP rank out of batches); ranks 0-2 wait in AllReduce
# #3. Its file stays although it exited cleanly with every comm destroyed:
# the others of the job still run (flag left_early; the job's last process
# out would remove it). So rank 3 is judged: culprit 3, "DESTROYED ...
# exited with status 0" (before: no file, culprit "-", rank 3 unknown).
# The same with NCCLWATCH_KEEP=1.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/hangs/hang-lib.sh"
for keep in unset 1; do
	note "NCCLWATCH_KEEP=$keep"
	rm -rf "$NCCLWATCH_DIR"
	if [ $keep = unset ]; then unset NCCLWATCH_KEEP; else export NCCLWATCH_KEEP=1; fi
	hang_start exit-early 4
	wait_for_line $WD_WAIT '^rank 3 ended: status 0$' "$T/out"
	HANG_SETTLE="0 1 2"
	hang_verdict '^verdict MISSING_RANK comm=[0-9a-f]{16} op=AllReduce seq=3 culprits=3 waiting=0-2 unknown=-$' 1
	assert_grep '^job exit-early procs=4 world=4 missing=- ' "$T/dead"
	assert_grep '^evidence rank 3: never called it: it DESTROYED the comm after #2; .*exited with status 0' "$T/dead"
done
echo ok
