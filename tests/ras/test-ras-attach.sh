#!/bin/sh
# `ncclwatch attach` asks NCCL's RAS too: on a hung trainer started without
# the preload (rank 2 of 4 skips step 3's all-reduce), attach finds the RAS
# address in the processes' environment (NCCL_RAS_ADDR), writes the report
# next to the snapshots, and the verdict is ONE job: rank 2 with the op
# number from RAS launch counts, its stack from its snapshot, and the
# stacks' own verdict folded in as "stacks agree"; the report is written
# 0600, as the snapshots are. With NCCL_RAS_ENABLE=0
# it says so and goes on with stacks alone. The same under mpirun and
# torchrun (attach --tree LAUNCHER).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=2:step=3
wait_for_line 120 'rank 2 step 3: fault skip: not issuing the all-reduce$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 2 done$' 0 1 2 3
nw_until 60 ras_answers 4 || fail "RAS never listed the 4 ranks"
# attach finds the address in the processes' environment, not in ours.
# The report is private like the snapshots (0600), whatever the umask, also
# over a report an older attach left readable.
umask 022
mkdir -p "$T/snap"
echo old > "$T/snap/ras.json"
chmod 644 "$T/snap/ras.json"
env -u NCCL_RAS_ADDR "$NW_CLI" attach --no-python --tree "$TRAINER_PID" -o "$T/snap" > "$T/attach.out" 2>&1
rc=$?
cat "$T/attach.out"
assert_eq "$rc" 1 "attach's exit status (a verdict)"
assert_grep "^attach: RAS at 127\\.0\\.0\\.1:$RAS_PORT: NCCL 2\\.28\\.9, 1 communicator -> $T/snap/ras\\.json$" "$T/attach.out"
[ -s "$T/snap/ras.json" ] || fail "no ras.json next to the snapshots"
assert_grep '"nccl_version"' "$T/snap/ras.json"
for f in "$T"/snap/*.snap.seg "$T/snap/ras.json"; do
	assert_eq "$(stat -c %a "$f")" 600 "mode of $(basename "$f")"
done
assert_grep '^MISSING_RANK: rank 2 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=3 there, launches=4 on 3 peers\)' "$T/attach.out"
assert_eq "$(grep -c '^job ' "$T/attach.out")" 1 "jobs (the RAS report joined the snapshots' job)"
assert_eq "$(grep -c '^[A-Z_]*: ' "$T/attach.out")" 1 "verdicts"
# the RAS culprit's own stack, from its snapshot (lined up by host and pid)
assert_grep '^    rank 2 \(from stacks\): where it is instead: pause < idle_forever' "$T/attach.out"
assert_grep '^    stacks agree: MISSING_RANK: rank 2 is in pause < idle_forever' "$T/attach.out"
trainer_kill

note "NCCL_RAS_ENABLE=0: stacks alone, said once"
NCCL_RAS_ENABLE=0 trainer_start "$T/out2" --nranks 4 --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=2:step=3
wait_for_ranks 120 "$T/out2" ' step 2 done$' 0 1 2 3
"$NW_CLI" attach --no-python --tree "$TRAINER_PID" -o "$T/snap2" > "$T/attach2.out" 2>&1
cat "$T/attach2.out"
assert_eq "$(grep -c '^attach: RAS off in every process (NCCL_RAS_ENABLE not 1): stacks alone$' "$T/attach2.out")" 1 "the RAS line"
[ ! -e "$T/snap2/ras.json" ] || fail "a ras.json with RAS off"
assert_no_grep 'never launched' "$T/attach2.out"
assert_eq "$(grep -c '^job ' "$T/attach2.out")" 1 "jobs with RAS off"
assert_grep '^MISSING_RANK: .*\(from stacks\)' "$T/attach2.out"
trainer_kill

. "$NW_ROOT/tests/launch/launch-lib.sh"
for launcher in mpirun torchrun; do
	if [ $launcher = mpirun ]; then
		[ -x "$MPIRUN" ] || { note "no $MPIRUN: skipped"; continue; }
		launch_mpirun 4 "$T/$launcher.out" -- "$NW_TRAINER" --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=1:step=3
	else
		[ -x "$TORCHRUN" ] || { note "no $TORCHRUN: skipped"; continue; }
		launch_torchrun 4 "$T/$launcher.out" "$NW_TRAINER" --steps 10 --count 64 --bcast-every 0 --verbose --fault skip:rank=1:step=3
	fi
	note "$launcher: attach --tree the launcher"
	hung() { [ "$(grep -c 'step 2 done' "$T/$launcher.out")" -ge 4 ]; }
	nw_until 120 hung || { cat "$T/$launcher.out"; fail "$launcher: the job did not reach step 2"; }
	nw_until 60 ras_answers 4 || fail "$launcher: RAS never listed the 4 ranks"
	"$NW_CLI" attach --no-python --tree "$LAUNCH_PID" -o "$T/$launcher" > "$T/$launcher.attach" 2>&1
	grep -v '^        #' "$T/$launcher.attach" | sed 's/^/    /'
	assert_grep "^attach: RAS at 127\\.0\\.0\\.1:$RAS_PORT: NCCL 2\\.28\\.9, 1 communicator -> $T/$launcher/ras\\.json$" "$T/$launcher.attach"
	assert_grep '^MISSING_RANK: rank 1 never launched the AllReduce the others launched last on comm' "$T/$launcher.attach"
	assert_eq "$(grep -c '^job ' "$T/$launcher.attach")" 1 "$launcher: jobs"
	assert_grep '^  culprits: 1$' "$T/$launcher.attach"
	assert_grep '^    rank 1 \(from stacks\): where it is instead: .*idle_forever' "$T/$launcher.attach"
	assert_grep '^    stacks agree: MISSING_RANK: rank 1 is in ' "$T/$launcher.attach"
	if [ $launcher = mpirun ]; then launch_stop TERM; launch_settled 30 || fail "mpirun's ranks outlived it"; else launch_stop KILL; fi
done
