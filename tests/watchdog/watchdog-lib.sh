# Helpers for the watchdog's tests (sourced after tests/lib.sh): run the
# trainer or a test program under the preload with a short timeout, and
# read what the watchdog said (its "ncclwatch: stall: ..." lines on
# stderr) and wrote (segments, dumps, thread stacks).
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"      # also puts the simulation first
WD_PROGS="$NW_BUILD/tests/watchdog"
# Short enough for quick tests, long enough that a healthy step (a few ms,
# more under a sanitizer on 2 shared cores) never reaches it.
: "${NCCLWATCH_TIMEOUT:=2}"
export NCCLWATCH_TIMEOUT
WD_TIMEOUT=$NCCLWATCH_TIMEOUT
# A stall is reported at the first poll after the timeout; the dump requests
# it raises are served within a poll (same host) or about a second (the
# request file). Waits are bounded generously: they end as soon as the
# thing happened.
WD_WAIT=60

# wd_start OUT JOB ARGS...: the trainer under the preload (job JOB) in the
# background, its output (stdout and stderr) in OUT; sets TRAINER_PID.
# Segments are kept only if the caller exported NCCLWATCH_KEEP=1.
wd_start() {
	_out=$1; _job=$2; shift 2
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$_job" "$NW_TRAINER" "$@" > "$_out" 2>&1
	TRAINER_PID=$NW_PID
}

# wd_run SECS OUT JOB ARGS...: wd_start, then wait for the end (at most
# SECS); sets TRAINER_STATUS (124: it had to be killed).
wd_run() {
	_secs=$1; shift
	wd_start "$@"
	nw_wait "$TRAINER_PID" "$_secs"
	TRAINER_STATUS=$?
}

# prog_start OUT JOB PROG ARGS...: a program of $WD_PROGS under the preload,
# in the background; sets PROG_PID (the program's own pid: setsid and env
# exec it).
prog_start() {
	_out=$1; _job=$2; _prog=$3; shift 3
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$_job" "$WD_PROGS/$_prog" "$@" > "$_out" 2>&1
	PROG_PID=$NW_PID
}

# prog_run SECS OUT JOB PROG ARGS...: prog_start, then wait for its end (at
# most SECS); sets PROG_STATUS (124: it had to be killed). Never put
# LD_PRELOAD on a helper call itself: the helpers' ps and sleep must not
# run under a sanitizer runtime.
prog_run() {
	_secs=$1; shift
	prog_start "$@"
	nw_wait "$PROG_PID" "$_secs"
	PROG_STATUS=$?
}

# count_at_least N PATTERN FILE: FILE has N or more lines matching PATTERN.
count_at_least() { [ "$(grep -Ec -- "$2" "$3")" -ge "$1" ]; }

# wait_for_count SECS N PATTERN FILE: until FILE has N lines matching.
wait_for_count() {
	nw_until "$1" count_at_least "$2" "$3" "$4" || {
		sed 's/^/    /' "$4" | tail -n 40 >&2
		fail "fewer than $2 lines /$3/ in $4 after $1 s"
	}
}

# stall_lines FILE: the finding lines, one per finding.
stall_lines() { grep 'ncclwatch: stall: ' "$1"; }

# rank_stalls R FILE: the finding lines of rank R.
rank_stalls() { grep "ncclwatch: stall: rank=$1 " "$2"; }

# finding_value KEY LINE: the value of KEY=... in a finding line.
finding_value() { echo " $2" | sed -nE "s/.* $1=([^ :;]+).*/\\1/p"; }

# dump_of LINE: the dump path a stall or "dump requested" line names.
dump_of() { echo "$1" | sed -nE 's/.*(; dump: | wrote )(.*)$/\2/p'; }

# assert_age_at_least LINE SECS: the finding's age=X.Xs is at least SECS
# (a deterministic lower bound: the watchdog reports only past the timeout).
assert_age_at_least() {
	_age=$(finding_value age "$1" | sed 's/s$//')
	[ -n "$_age" ] || fail "no age in: $1"
	awk -v a="$_age" -v t="$2" 'BEGIN { exit !(a + 0 >= t + 0) }' || fail "age $_age s < $2 s in: $1"
}

# assert_findings FILE STATE OP SEQ RANKS...: each rank listed printed
# exactly one finding line, for OP #SEQ in STATE, all on the same comm
# (sets FINDING_COMM), each with its dump written; findings other than
# FAILED are at least the timeout old.
assert_findings() {
	_file=$1; _state=$2; _op=$3; _seq=$4; shift 4
	FINDING_COMM=
	for _r in "$@"; do
		_lines=$(rank_stalls "$_r" "$_file")
		[ "$(echo "$_lines" | grep -c .)" = 1 ] || { echo "$_lines" >&2; fail "rank $_r: not exactly one finding line"; }
		echo "$_lines" | grep -q " op=$_op seq=$_seq .* state=$_state " \
			|| fail "rank $_r: expected op=$_op seq=$_seq state=$_state: $_lines"
		_c=$(finding_value comm "$_lines")
		[ -n "$FINDING_COMM" ] || FINDING_COMM=$_c
		assert_eq "$_c" "$FINDING_COMM" "rank $_r: comm of the finding"
		[ "$_state" = FAILED ] || assert_age_at_least "$_lines" "$WD_TIMEOUT"
		_d=$(dump_of "$_lines")
		[ -f "$_d" ] || fail "rank $_r: its dump $_d does not exist"
	done
}

# without_slow_inits FILE: FILE's lines but the findings of a communicator
# init that really outlasted the timeout (state INIT_ENTERED, age at least
# the timeout): on a loaded machine an 8-rank init can take longer than
# NCCLWATCH_TIMEOUT=2, and the watchdog rightly says so; a test about a
# later op checks that op's findings with assert_findings on the rest.
without_slow_inits() {
	grep -E 'ncclwatch: stall: .* op=CommInit[A-Za-z]* ' "$1" | while IFS= read -r _l; do
		echo "$_l" | grep -q ' state=INIT_ENTERED ' || fail "an init finding not in INIT_ENTERED: $_l"
		assert_age_at_least "$_l" "$WD_TIMEOUT"
	done || exit 1
	grep -Ev '^ncclwatch: stall: .* op=CommInit[A-Za-z]* ' "$1"
}

# main_stack SHOW TID: the frames of thread TID (the process's main thread
# when TID is its pid) in `ncclwatch show` output SHOW.
main_stack() {
	awk -v tid="$2" '
		$1 == "thread" { on = ($2 == tid); next }
		on && $1 ~ /^#[0-9]+$/ { print; next }
		{ on = 0 }' "$1"
}

# seg_ops SHOW: the op lines of `ncclwatch show` output.
seg_ops() { grep -E '^  op [0-9]+ ' "$1"; }

# The ops the watchdog tracks on the GPU: collectives, Send and Recv.
WD_GPU_OPS='(AllReduce|Broadcast|Bcast|Reduce|AllGather|ReduceScatter|AlltoAll|Gather|Scatter|Send|Recv)'

# wd_check_outputs: no output file of the test (the files directly in $T)
# holds a sanitizer report. Called at the end of each test: a sanitizer
# build (make test SAN=...) reports there, and nothing else reads it.
wd_check_outputs() {
	for _f in "$T"/*; do
		[ -f "$_f" ] || continue
		if grep -Eq 'ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error:' "$_f"; then
			grep -E -A 12 'Sanitizer|runtime error:' "$_f" | head -n 40 >&2
			fail "sanitizer report in $_f"
		fi
	done
}
