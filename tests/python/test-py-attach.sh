#!/bin/sh
# examples/train.py started WITHOUT the preload (Debian's python3, ctypes
# on the simulated driver and NCCL, NCCL RAS on as in NCCL), 4 ranks,
# through torchrun and through mpirun, --fault skip:rank=2:step=5: rank 2
# runs run_evaluation instead of step 5's all-reduce. `ncclwatch attach
# --tree LAUNCHER` (stacks of every thread, Python stacks through py-spy,
# the RAS report) gives one job and one verdict: rank 2 never launched
# the AllReduce the others launched last (RAS: AllReduce launches=6), and where
# rank 2 is instead is its Python frame run_evaluation (train.py:L).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/python/py-lib.sh"
PYSPY=${NCCLWATCH_PYSPY:-$NW_BUILD/venv/bin/py-spy}
[ -x "$PYSPY" ] || PYSPY=$(command -v py-spy) || skip "no py-spy (make deps installs it)"
export NCCLWATCH_PYSPY="$PYSPY"
eval_line=$(line_in run_evaluation 'time.sleep(0.2)')
[ -n "$eval_line" ] || fail "train.py: run_evaluation's sleep is not there"

# attach_until OUT: attach to the launcher's tree until the verdict names
# rank 2 and rank 2 is in run_evaluation (the job is still running steps
# 0-4 at first; while rank 2 still synchronizes step 4 its peers may
# already have launched #6: RAS's counts name it before it is stuck).
attach_until() {
	_i=0
	while [ $_i -lt 60 ]; do
		"$NW_CLI" attach --tree "$LAUNCH_PID" -o "$T/att.$1.$_i" > "$T/$1" 2>&1
		grep -q '^MISSING_RANK: rank 2 never launched the AllReduce' "$T/$1" &&
			grep -q '^    rank 2 (from stacks): where it is instead: .*run_evaluation' "$T/$1" && return 0
		_i=$((_i + 1))
		sleep 1
	done
	cat "$T/$1"; tail -n 30 "$T/${1%.att}.out"
	fail "$1: attach never named rank 2 in run_evaluation"
}

check() {    # OUT: one job, one verdict, RAS's op number, rank 2's Python frame
	grep -v '^    #' "$T/$1" | sed 's/^/    /'
	assert_eq "$(grep -c '^job ' "$T/$1")" 1 "$1: jobs"
	assert_eq "$(grep -c '^[A-Z_]*: ' "$T/$1")" 1 "$1: verdicts"
	assert_grep '^MISSING_RANK: rank 2 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=5 there, launches=6 on 3 peers\)' "$T/$1"
	assert_grep '^  culprits: 2$' "$T/$1"
	assert_grep '^  waiting: 0-1,3$' "$T/$1"
	assert_grep "^    rank 2 \\(from stacks\\): where it is instead: .*run_evaluation \\(train.py:$eval_line\\)" "$T/$1"
	# native interpreter frames mean py-spy gave nothing for a process: its note says why
	! grep -q '_PyEval_EvalFrameDefault' "$T/$1" || grep '^attach: .*python:' "$T/$1" | sed 's/^/    /' >&2
	assert_no_grep '_PyEval_EvalFrameDefault' "$T/$1"
}

if [ -x "$TORCHRUN" ]; then
	note "torchrun, no preload"
	nw_spawn "$TORCHRUN" --nproc_per_node 4 --master_port "$(free_port)" \
		--redirects 1 --tee 1 --log_dir "$T/torchrun-logs" \
		"$TRAIN" --steps 30 --count 64 --bcast-every 0 --fault skip:rank=2:step=5 > "$T/torchrun.out" 2>&1
	LAUNCH_PID=$NW_PID
	attach_until torchrun.att
	check torchrun.att
	launch_stop TERM
else
	note "no torchrun: that half is not run"
fi

if [ -x "$MPIRUN" ]; then
	note "mpirun, no preload"
	nw_spawn "$MPIRUN" --allow-run-as-root --oversubscribe -np 4 -x LD_LIBRARY_PATH -x NCCLSIM_DIR \
		-x NCCL_RAS_ADDR -x NW_TEST_ID "$PY" "$TRAIN" --steps 30 --count 64 --bcast-every 0 \
		--fault skip:rank=2:step=5 > "$T/mpirun.out" 2>&1
	LAUNCH_PID=$NW_PID
	attach_until mpirun.att
	check mpirun.att
	launch_stop TERM
else
	note "no mpirun: that half is not run"
fi
[ -x "$TORCHRUN" ] || [ -x "$MPIRUN" ] || skip "neither torchrun nor mpirun"
