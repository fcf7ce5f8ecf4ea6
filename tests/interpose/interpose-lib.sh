# Helpers for the interposer's tests (sourced after tests/lib.sh): the test
# programs, and reading segments with `ncclwatch show`.
NW_PROGS="$NW_BUILD/tests/interpose"
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI not built"

# show FILE|DIR: the CLI's view of segments (fails the test on a reader error).
show() {
	"$NW_CLI" show "$@" > "$T/show.out" 2> "$T/show.err" || {
		cat "$T/show.err" >&2
		fail "ncclwatch show $* failed"
	}
	cat "$T/show.out"
}

# op_lines FILE: the op records of one segment, without what differs from
# run to run (index, times, thread id, comm id, caller, stream).
op_lines() {
	show "$1" | grep '^  op ' | sed -E 's/^  op [0-9]+//; s/ (t|tid|comm|ended|caller|stream)=[^ ]+//g'
}

# field NAME LINE...: the value of NAME=value on stdin lines.
field() { sed -nE "s/.* $1=([^ ]+).*/\\1/p"; }

# segments DIR: the segment files of a job directory, one a line.
segments() { find "$1" -name '*.seg' -type f | sort; }

# watched_start OUT JOB ARGS...: the trainer under the preload (job JOB,
# segments kept) in the background, output to OUT; sets TRAINER_PID.
# Only the trainer gets LD_PRELOAD (via env): the helpers that poll it (ps)
# must not run under a sanitizer runtime.
watched_start() {
	_out=$1; _job=$2; shift 2
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$_job" NCCLWATCH_KEEP=1 \
		"$NW_TRAINER" "$@" > "$_out" 2>&1
	TRAINER_PID=$NW_PID
}

# watched_run SECS OUT JOB ARGS...: watched_start, then wait (at most SECS);
# sets TRAINER_STATUS.
watched_run() {
	_secs=$1; shift
	watched_start "$@"
	nw_wait "$TRAINER_PID" "$_secs"
	TRAINER_STATUS=$?
}
