#!/bin/sh
# `ncclwatch attach --tree LAUNCHER` on a hung job started without
# ncclwatch, under torchrun and under mpirun (4 ranks, rank 2 skips step
# 3's all-reduce and idles, the others wait in it): one snapshot per rank
# (the launcher and its helpers are left out), ranks and world size from
# each rank's environment, job named as the preload would name it, and the
# culprit's snapshot alone holds the function it idles in; diagnose of the
# snapshots names rank 2 from stacks alone.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"

# hung OUT: every rank is past step 2 (rank 2 idles at 3, the others wait).
hung() { [ "$(grep -c 'step 2 done' "$1")" -ge 4 ]; }

check_tree() {
	_name=$1 _out=$2
	nw_until 120 hung "$_out" || { cat "$_out"; fail "$_name: the job did not reach step 2"; }
	"$NW_CLI" attach --no-verdict --no-python --tree "$LAUNCH_PID" -o "$T/$_name" > "$T/$_name.attach" 2>&1 ||
		{ cat "$T/$_name.attach"; fail "$_name: attach failed"; }
	cat "$T/$_name.attach"
	assert_eq "$(grep -c '^attach: pid ' "$T/$_name.attach")" 4 "$_name: processes attached"
	for r in 0 1 2 3; do
		assert_grep "^attach: pid [0-9]+ rank $r \\(trainer\\): [0-9]+ threads, " "$T/$_name.attach"
		f=$(ls "$T/$_name"/*.rank$r.snap.seg) || fail "$_name: no snapshot of rank $r"
		if [ $r = 2 ]; then
			grep -q idle_forever "$f" || fail "$_name: rank 2's snapshot does not name idle_forever"
		else
			! grep -q idle_forever "$f" || fail "$_name: rank $r's snapshot names idle_forever"
		fi
	done
	# The verdict from stacks alone (report/decide, the snapshot reader):
	# rank 2 is the culprit. A CLI without that reader refuses snapshots.
	"$NW_CLI" diagnose "$T/$_name" > "$T/$_name.verdict" 2>&1
	if grep -q 'ring_capacity 0 is not a power of two' "$T/$_name.verdict"; then
		echo "$_name: this diagnose cannot read snapshots yet (no verdict checked)"
	else
		cat "$T/$_name.verdict"
		assert_grep '^MISSING_RANK: rank 2 ' "$T/$_name.verdict"
		assert_grep '^  culprits: 2$' "$T/$_name.verdict"
		assert_grep 'from stacks' "$T/$_name.verdict"
	fi
	launch_stop KILL
}

if [ -x "$TORCHRUN" ]; then
	launch_torchrun 4 "$T/torchrun.out" "$NW_TRAINER" --steps 10 --verbose --fault skip:rank=2:step=3
	check_tree torchrun "$T/torchrun.out"
else
	echo "no torchrun: skipped that half"
fi
need_mpirun
launch_mpirun 4 "$T/mpirun.out" "$NW_TRAINER" --steps 10 --verbose --fault skip:rank=2:step=3
check_tree mpirun "$T/mpirun.out"
