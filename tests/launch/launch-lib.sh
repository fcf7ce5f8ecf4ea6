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
