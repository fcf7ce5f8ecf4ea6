# Helpers for tests that start the trainer through a real launcher
# (sourced after tests/lib.sh): Debian's torchrun (python3-torch) and
# mpirun (openmpi-bin), each in its own process group, killed with the test.
# The simulation goes first on the library path and every rank inherits it.
nw_use_sim
[ -x "$NW_TRAINER" ] || fail "$NW_TRAINER not built"

TORCHRUN=/usr/bin/torchrun
MPIRUN=/usr/bin/mpirun
need_torchrun() { [ -x "$TORCHRUN" ] || skip "no $TORCHRUN (Debian: python3-torch; make deps installs it)"; }
need_mpirun() { [ -x "$MPIRUN" ] || skip "no $MPIRUN (Debian: openmpi-bin; make deps installs it)"; }

# free_port: a TCP port nobody listens on now (torchrun's store needs one;
# two tests at once must not both take the default 29500).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# launch_torchrun NPROC OUT CMD...: `torchrun --no_python` starting NPROC
# copies of CMD in the background; both streams in OUT; sets LAUNCH_PID.
# Debian's torchrun 1.13 on Python 3.11 crashes unless --redirects and
# --tee are non-zero: workers' stdout goes to a log and is teed (lines
# prefixed "[default<R>]:"), their stderr comes through as it is.
launch_torchrun() {
	_np=$1 _out=$2; shift 2
	nw_spawn "$TORCHRUN" --nproc_per_node "$_np" --master_port "$(free_port)" \
		--no_python --redirects 1 --tee 1 --log_dir "$T/torchrun-logs.$$.$(date +%s%N)" \
		"$@" > "$_out" 2>&1
	LAUNCH_PID=$NW_PID
}

# launch_mpirun NP OUT [MPIRUN-OPTIONS... --] CMD...: `mpirun -np NP` in the
# background (as root it needs --allow-run-as-root; 2 cores need
# --oversubscribe); sets LAUNCH_PID. Options before a "--" go to mpirun.
launch_mpirun() {
	_np=$1 _out=$2; shift 2
	_opts=""
	case " $* " in *" -- "*)
		while [ "$1" != -- ]; do _opts="$_opts $1"; shift; done
		shift ;;
	esac
	# shellcheck disable=SC2086
	nw_spawn "$MPIRUN" --allow-run-as-root --oversubscribe -np "$_np" $_opts "$@" > "$_out" 2>&1
	LAUNCH_PID=$NW_PID
}

# launch_wait SECS: wait for the launcher to end; sets LAUNCH_STATUS
# (124: it had to be killed).
launch_wait() {
	nw_wait "$LAUNCH_PID" "$1"
	LAUNCH_STATUS=$?
}

# launch_stop SIG: what an operator (or a scheduler) does to a hung job:
# signal the launcher alone and let it tear its workers down; waits for it
# (at most 60 s) and sets LAUNCH_STATUS.
launch_stop() {
	kill "-$1" "$LAUNCH_PID" 2>/dev/null
	launch_wait 60
}

# job_dirs: the job directories under $NCCLWATCH_DIR.
job_dirs() { find "$NCCLWATCH_DIR" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort; }

# launch_cmd OUT CMD...: start CMD, a launcher or a script that execs one
# (examples/torchrun.sh, `ncclwatch run -- mpirun ...`), like the two above:
# own session, both streams in OUT, LAUNCH_PID set.
launch_cmd() {
	_out=$1; shift
	nw_spawn "$@" > "$_out" 2>&1
	LAUNCH_PID=$NW_PID
}

# launch_procs: "PID COMMAND" of every live process left in the sessions
# this test started (nw_spawn calls setsid: a session per launcher, its id
# the launcher's pid). Killing a launcher's process group is not enough:
# mpirun puts each rank in a process group of its own, so a rank would
# outlive an mpirun killed with SIGKILL. Zombies do not count (an orphan's
# zombie may stay a while unreaped in a container whose init is slow to
# reap).
launch_procs() {
	ps -eo pid=,sid=,stat=,comm= | awk -v sids=" $_nw_pgids " \
		'index(sids, " " $2 " ") && $3 !~ /^Z/ { print $1, $4 }'
}

# launch_sweep: SIGKILL whatever launch_procs lists, as a batch scheduler
# kills what is left of a job (its cgroup). Done when the test ends.
launch_sweep() {
	launch_procs | while read -r _p _c; do kill -KILL "$_p" 2>/dev/null; done
	return 0
}
trap 'launch_sweep; _nw_cleanup' EXIT

# launch_settled SECS: wait at most SECS until launch_procs lists nothing;
# status 1 (and the list on stderr) if something is still running.
launch_settled() {
	_n=$(( $1 * 10 ))
	while [ -n "$(launch_procs)" ]; do
		_n=$((_n - 1))
		[ $_n -le 0 ] && { launch_procs | sed 's/^/    left: /' >&2; return 1; }
		sleep 0.1
	done
	return 0
}

# launch_rank_lines OUT: the sorted "rank R ok ..." lines of a trainer job,
# without torchrun's "[default<R>]:" prefix.
launch_rank_lines() {
	sed 's/^\[default[0-9]*\]://' "$1" | grep -E 'rank [0-9]+ ok ' | sort
}

# verdict FILE: the first MISSING_RANK verdict's summary, culprits, waiting
# and hint lines, the watchdog's "ncclwatch: " prefix removed.
verdict() {
	sed 's/^ncclwatch: //' "$1" | awk '
		/^MISSING_RANK: / && !s { print; s = 1 }
		/^  culprits: / && !c { print; c = 1 }
		/^  waiting: / && !w { print; w = 1 }
		/^  hint: / && !h { print; h = 1 }'
}
# check_verdict FILE CULPRIT WAITING SEQ: FILE's verdict is this one.
check_verdict() {
	verdict "$1" > "$1.verdict"
	assert_grep "^MISSING_RANK: rank $2 never called AllReduce #$4 on comm [0-9a-f]{16} \(4 ranks\); ranks $3 wait in it\$" "$1.verdict"
	assert_grep "^  culprits: $2\$" "$1.verdict"
	assert_grep "^  waiting: $3\$" "$1.verdict"
	assert_grep '^  hint: the code path differs on those ranks$' "$1.verdict"
}
# same_verdict A B: both files give the same verdict, line for line.
same_verdict() {
	verdict "$1" > "$1.v"; verdict "$2" > "$2.v"
	diff "$1.v" "$2.v" || fail "the verdicts of $1 and $2 differ"
}
