# Shared by the watchdog benchmarks of `make bench` (latency.sh, cpu.sh,
# events.sh): `. "$NW_ROOT/tests/bench/bench_lib.sh"`. On top of
# tests/lib.sh (private temp dir $T, NCCLWATCH_DIR/NCCLSIM_DIR in it):
# the simulation on the library path, and jobs run under bench-stamp, whose
# process group is killed when the job is done with and when the script
# ends, however it ends. Nothing here passes or fails on time.
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
NB_STAMP="$NW_BUILD/tests/bench/bench-stamp"
NB_LINGER="$NW_BUILD/tests/bench/libbench-linger.so"
for _f in "$NB_STAMP" "$NB_LINGER" "$NW_LIB" "$NW_CLI" "$NW_TRAINER"; do
	[ -e "$_f" ] || { echo "bench: $_f is missing (make all)" >&2; exit 2; }
done
export NCCLWATCH_JOB=bench

NB_STAMPER=""   # pid of the running bench-stamp
NB_JOB=""       # its job's process group
nb_cleanup() {
	[ -n "$NB_JOB" ] && kill -KILL "-$NB_JOB" 2>/dev/null
	[ -n "$NB_STAMPER" ] && kill -TERM "$NB_STAMPER" 2>/dev/null && wait "$NB_STAMPER" 2>/dev/null
	_nw_cleanup
}
trap nb_cleanup EXIT

# nb_start OUT LIMIT_S [STAMP_OPTION...] -- CMD...: start CMD under
# bench-stamp in the background (stamped output in OUT, killed after LIMIT_S
# at the latest); sets NB_STAMPER and NB_JOB. Each job gets fresh shared
# dirs: nothing of an earlier (killed) job is seen.
nb_start() {
	_out=$1 _lim=$2
	shift 2
	rm -rf "$NCCLWATCH_DIR" "$NCCLSIM_DIR" "$T/job.pid"
	mkdir -p "$NCCLSIM_DIR"
	"$NB_STAMP" -t "$_lim" -p "$T/job.pid" "$@" > "$_out" &
	NB_STAMPER=$!
	_n=50
	until [ -s "$T/job.pid" ]; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || { echo "bench: bench-stamp did not start" >&2; return 1; }
		sleep 0.1
	done
	NB_JOB=$(cat "$T/job.pid")
}

# nb_wait: wait for bench-stamp to end (it kills its job's group itself).
nb_wait() {
	wait "$NB_STAMPER" 2>/dev/null
	NB_STAMPER="" NB_JOB=""
}

# nb_stop: kill the job's process group now and reap bench-stamp.
nb_stop() {
	[ -n "$NB_JOB" ] && kill -KILL "-$NB_JOB" 2>/dev/null
	nb_wait
}

# nb_until_line OUT ERE SECS: wait until a line of OUT matches; 1 on timeout.
nb_until_line() {
	_n=$(( $3 * 10 ))
	until grep -Eq -- "$2" "$1" 2>/dev/null; do
		_n=$((_n - 1))
		[ $_n -gt 0 ] || return 1
		sleep 0.1
	done
}

nb_now() { date +%s.%N; }

# nb_header TITLE: the start of one figure's block.
nb_header() {
	echo
	echo "=== $* ==="
}
