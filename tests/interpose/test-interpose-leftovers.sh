#!/bin/sh
# What a job leaves in NCCLWATCH_DIR (issue 16, finding 5; issue 11, "keep
# the evidence"). A healthy job leaves nothing: each process removes its
# segment at a clean exit, and the last one out removes the job's control
# file and directory (ranks of one job exit at once; separately launched
# ranks start and end at different times). A process that exits, even with
# status 0, while one of its communicators was never destroyed keeps its
# segment: its exit status and the live communicator are the evidence.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"

# leftovers DIR: everything under DIR, one a line.
leftovers() { find "$1" -mindepth 1 2>/dev/null | sort; }
assert_empty_dir() {
	leftovers "$1" > "$T/left"
	[ ! -s "$T/left" ] || { cat "$T/left" >&2; fail "$2 left files behind"; }
}

note "healthy 4-rank jobs, 5 times: nothing left"
for i in 1 2 3 4 5; do
	nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/healthy" "$NW_TRAINER" --nranks 4 --steps 10 \
		> "$T/healthy.out" 2>&1 || { cat "$T/healthy.out"; fail "healthy run $i"; }
	assert_no_grep 'ncclwatch:' "$T/healthy.out"
	assert_empty_dir "$T/healthy" "healthy run $i"
done

note "a healthy pipeline job (a split communicator too): nothing left"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/pipe" "$NW_TRAINER" --nranks 4 --steps 10 --pipeline \
	> "$T/pipe.out" 2>&1 || { cat "$T/pipe.out"; fail "pipeline run"; }
assert_empty_dir "$T/pipe" "the pipeline run"

note "torchrun-style: 4 separately started ranks of one job, 3 times: nothing left"
for i in 1 2 3; do
	mkdir -p "$T/rdzv$i"
	pids=""
	for r in 0 1 2 3; do
		nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/sep" NCCLWATCH_JOB=sep RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r \
			"$NW_TRAINER" --steps 10 --rendezvous "$T/rdzv$i" > "$T/sep$r.out" 2>&1
		pids="$pids $NW_PID"
	done
	for p in $pids; do nw_wait "$p" 120 || { cat "$T"/sep*.out; fail "separate rank (pid $p) of run $i"; }; done
	assert_empty_dir "$T/sep" "separate ranks, run $i"
done

note "one job, processes starting while others exit: 10 rounds of 6 one-rank processes at once"
# Each process is a world of one (its own rendezvous) in the same job
# directory: the directory and control file are made, removed and made
# again under the processes' feet. None may say a word, none may fail,
# nothing may be left.
for i in 1 2 3 4 5 6 7 8 9 10; do
	pids=""
	for r in 1 2 3 4 5 6; do
		mkdir -p "$T/rdzv-churn$i.$r"
		nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/churn" NCCLWATCH_JOB=churn RANK=0 WORLD_SIZE=1 \
			"$NW_TRAINER" --steps $r --rendezvous "$T/rdzv-churn$i.$r" > "$T/churn$r.out" 2>&1
		pids="$pids $NW_PID"
	done
	for p in $pids; do nw_wait "$p" 120 || { cat "$T"/churn*.out; fail "churn round $i: pid $p failed"; }; done
	cat "$T"/churn*.out > "$T/churn.all"
	assert_no_grep 'ncclwatch:' "$T/churn.all"
	assert_empty_dir "$T/churn" "churn round $i"
done

note "a process of the job still running keeps the directory and control file; the last one out removes them"
mkdir -p "$T/rdzv-late"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/late" NCCLWATCH_JOB=late RANK=0 WORLD_SIZE=1 \
	"$NW_TRAINER" --fault sleep:rank=0:step=1:ms=600000 --rendezvous "$T/rdzv-late" > "$T/late-sleeper.out" 2>&1
sleeper=$NW_PID
wait_for_line 60 'fault sleep: sleeping' "$T/late-sleeper.out"
mkdir -p "$T/rdzv-late2"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/late" NCCLWATCH_JOB=late RANK=0 WORLD_SIZE=1 \
	"$NW_TRAINER" --steps 5 --rendezvous "$T/rdzv-late2" > "$T/late.out" 2>&1 || { cat "$T/late.out"; fail "short run"; }
[ -f "$T/late/late/control" ] || fail "the control file of a job with a live process went away"
# The short run exited cleanly while the sleeper runs: its segment stays,
# flagged left_early (a peer waiting for it would need it).
assert_eq "$(segments "$T/late/late" | wc -l)" 2 "segments while the sleeper runs"
"$NW_CLI" show --records 0 "$T/late/late" > "$T/late.show" 2>&1 || { cat "$T/late.show"; fail "show"; }
assert_eq "$(grep -c '^  flags .*exited.*left_early' "$T/late.show")" 1 "segments flagged left_early"
kill -TERM "$sleeper"; nw_wait "$sleeper" 30
# The sleeper was killed: its segment stays (evidence), gc does the rest.
"$NW_CLI" gc "$T/late" > "$T/gc.out" || { cat "$T/gc.out"; fail "gc"; }
assert_empty_dir "$T/late" "gc after the killed process"

note "a process that left early is removed by the job's last process out, when the job ends well"
mkdir -p "$T/rdzv-slow" "$T/rdzv-quick"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/slow" NCCLWATCH_JOB=slow RANK=0 WORLD_SIZE=1 \
	"$NW_TRAINER" --steps 3 --fault sleep:rank=0:step=1:ms=3000 --rendezvous "$T/rdzv-slow" > "$T/slow.out" 2>&1
slow=$NW_PID
wait_for_line 60 'fault sleep: sleeping' "$T/slow.out"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/slow" NCCLWATCH_JOB=slow RANK=0 WORLD_SIZE=1 \
	"$NW_TRAINER" --steps 5 --rendezvous "$T/rdzv-quick" > "$T/quick.out" 2>&1 || { cat "$T/quick.out"; fail "quick run"; }
assert_eq "$(segments "$T/slow/slow" | wc -l)" 2 "segments while the slow one runs"
nw_wait "$slow" 60
assert_eq "$?" 0 "status of the slow run"
assert_empty_dir "$T/slow" "after the last one out"

note "rank 3 exits 0 at step 5 with its communicator alive: its segment is kept"
mkdir -p "$T/exit"
nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_DIR="$T/exit" NCCLWATCH_JOB=exit NCCLWATCH_TIMEOUT=600 \
	"$NW_TRAINER" --nranks 4 --steps 10 --fault exit:rank=3:step=5 > "$T/exit.out" 2>&1
job=$NW_PID
wait_for_line 60 'trainer: rank 3 \(pid [0-9]+\) exited with status 0|rank 3 step 5: fault exit' "$T/exit.out"
# Rank 3's exit handler has run when its process is gone (the others hang).
r3=$(sed -nE 's/^rank 3: world size 4 .*pid ([0-9]+),.*/\1/p' "$T/exit.out")
[ -n "$r3" ] || { cat "$T/exit.out"; fail "no pid for rank 3"; }
nw_until 60 sh -c "! kill -0 $r3 2>/dev/null || ps -o stat= -p $r3 | grep -q Z" || fail "rank 3 did not exit"
seg=$(segments "$T/exit/exit" | grep "\.$r3\.seg\$")
[ -n "$seg" ] || { ls -l "$T/exit/exit"; fail "rank 3's segment was removed"; }
show "$seg" > "$T/show3"
assert_grep '^  flags +recording,exited,exit_status$' "$T/show3"
assert_grep '^  exit_status +0$' "$T/show3"
assert_grep '^  comm 0 id=[0-9a-f]{16} origin=InitRank rank=3/4 state=INIT_DONE ' "$T/show3"
kill -KILL "-$job"; nw_wait "$job" 30 || :
