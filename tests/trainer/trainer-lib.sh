# Helpers for the trainer's tests (sourced after tests/lib.sh): start a job
# of the example trainer on the simulation and assert, from its output and
# its processes, how far each rank got.
nw_use_sim
[ -x "$NW_TRAINER" ] || fail "$NW_TRAINER not built"

# trainer_start OUT ARGS...: the trainer in the background, in its own
# process group (killed when the test ends); sets TRAINER_PID.
trainer_start() {
	_out=$1; shift
	nw_spawn "$NW_TRAINER" "$@" > "$_out" 2>&1
	TRAINER_PID=$NW_PID
}

# trainer_run SECS OUT ARGS...: run the trainer to its end (at most SECS);
# sets TRAINER_STATUS (124 if it had to be killed).
trainer_run() {
	_secs=$1; _out=$2; shift 2
	trainer_start "$_out" "$@"
	nw_wait "$TRAINER_PID" "$_secs"
	TRAINER_STATUS=$?
	cat "$_out"
}

# wait_for_line SECS PATTERN FILE: until FILE has a line matching PATTERN.
wait_for_line() {
	nw_until "$1" grep -Eq -- "$2" "$3" || { cat "$3" >&2; fail "no line /$2/ in $3 after $1 s"; }
}

# wait_for_ranks SECS FILE PATTERN RANKS...: until every listed rank printed
# "rank R<PATTERN>", e.g. ' step 4 done$': each rank's line on its own, not
# anchored at the line's start (the ranks and their watchdogs write to one
# file).
wait_for_ranks() {
	_secs=$1; _file=$2; _pat=$3; shift 3
	for _r in "$@"; do wait_for_line "$_secs" "rank $_r$_pat" "$_file"; done
}

# assert_ranks FILE PATTERN RANKS...: every listed rank printed "rank
# R<PATTERN>" (each on its own, as wait_for_ranks).
assert_ranks() {
	_file=$1; _pat=$2; shift 2
	for _r in "$@"; do assert_grep "rank $_r$_pat" "$_file"; done
}

# count_lines PATTERN FILE
count_lines() { grep -Ec -- "$1" "$2"; }

# rank_pids: the pids of the ranks (children of the --nranks parent) alive now.
rank_pids() { pgrep -P "$TRAINER_PID" 2>/dev/null | sort -n; }
rank_count() { rank_pids | wc -l; }

# assert_hung SECS FILE: the job is still running SECS seconds later and
# nobody printed a final "ok"; shows the output so far.
assert_hung() {
	note "job reached the hang; watching it for $1 s more"
	sleep "$1"
	kill -0 "$TRAINER_PID" 2>/dev/null || { cat "$2" >&2; fail "the job ended instead of hanging"; }
	assert_no_grep ' ok steps=' "$2"
	assert_no_grep 'all [0-9]+ ranks ok' "$2"
	sed 's/^/    /' "$2"
}

# trainer_kill: end the job (its whole process group) and reap it; returns
# once every process of the group is gone. SIGKILL lands on each rank in
# its own time: on a loaded machine (two test suites at once) a rank still
# dying read as alive, and `ncclwatch dump` waited for its answer.
trainer_kill() {
	kill -KILL "-$TRAINER_PID" 2>/dev/null
	wait "$TRAINER_PID" 2>/dev/null
	_trainer_gone() { ! kill -0 "-$TRAINER_PID" 2>/dev/null; }
	nw_until 60 _trainer_gone || fail "the trainer's processes outlived SIGKILL"
	return 0
}

# The ranks 0..N-1 except those given: `others 4 2` prints "0 1 3".
others() {
	_n=$1; shift
	_i=0
	while [ $_i -lt "$_n" ]; do
		case " $* " in *" $_i "*) ;; *) printf '%s ' $_i ;; esac
		_i=$((_i + 1))
	done
}
