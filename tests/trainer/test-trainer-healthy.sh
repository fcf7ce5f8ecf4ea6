#!/bin/sh
# Healthy runs of the example trainer on the simulation, 2, 4 and 8 ranks:
# every rank checks every all-reduce, broadcast and pipeline receive, and
# the job exits 0 with one "ok" line per rank and the right op counts.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

# check_ok OUT NRANKS STEPS ALLREDUCES BROADCASTS SENDRECVS
check_ok() {
	assert_eq "$TRAINER_STATUS" 0 "exit status"
	r=0
	while [ $r -lt "$2" ]; do
		assert_grep "rank $r ok steps=$3 allreduce=$4 broadcast=$5 sendrecv=$6\$" "$1"
		r=$((r + 1))
	done
	assert_eq "$(count_lines ' ok steps=' "$1")" "$2" "ok lines"
	assert_grep "trainer: all $2 ranks ok\$" "$1"
	assert_no_grep 'wrong|failed|error' "$1"
}

note "2 ranks, defaults but 30 steps (broadcast after steps 0, 10, 20)"
trainer_run 120 "$T/a.out" --nranks 2 --steps 30
check_ok "$T/a.out" 2 30 30 3 0

note "4 ranks, pipeline ring on a split communicator, broadcast every 4 steps, 5 elements"
trainer_run 120 "$T/b.out" --nranks 4 --steps 13 --count 5 --pipeline --bcast-every 4
check_ok "$T/b.out" 4 13 13 4 13
assert_eq "$(count_lines 'pipeline communicator ready \(rank [0-3] of 4\)' "$T/b.out")" 4 "pipeline ranks"

note "8 ranks, non-blocking communicators, pipeline, a device per rank, verbose"
export NCCLSIM_GPUS=8
trainer_run 180 "$T/c.out" --nranks 8 --steps 6 --count 257 --nonblocking --pipeline \
	--device-per-rank --bcast-every 2 --verbose
check_ok "$T/c.out" 8 6 6 3 6
for s in 0 1 2 3 4 5; do assert_ranks "$T/c.out" " step $s done\$" 0 1 2 3 4 5 6 7; done
for r in 0 1 2 3 4 5 6 7; do
	assert_grep "rank $r: world size 8 \(launcher local\), pid [0-9]+, device $r " "$T/c.out"
done

note "8 ranks, one element, no broadcast"
trainer_run 180 "$T/d.out" --nranks 8 --steps 20 --count 1 --bcast-every 0
check_ok "$T/d.out" 8 20 20 0 0

note "the rendezvous directory is cleaned up"
leftover=$(find "$NCCLSIM_DIR" -name 'trainer-rendezvous-*' 2>/dev/null)
assert_eq "$leftover" "" "leftover rendezvous directories"
