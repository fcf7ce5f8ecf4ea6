#!/bin/sh
# Kill storm: an 8-rank job of the example trainer under the preload, on the
# simulation, SIGKILLed at a random point, 100 rounds per NW_SOAK_ROUNDS.
# After each round every file left is read back: every segment and dump
# `ncclwatch show`s with no torn record, `status` and `diagnose` read the
# job with no unreadable file, and nothing a rank published is lost: for
# each step it logged done (--verbose) its segment holds the all-reduce and
# broadcast of that step (and its send and receive with --pipeline), the
# collective seqs of the world communicator 1..N without a gap.
# The kill points (one of, per round):
#   time     after a random 0-299 ms, every rank (anywhere: start, init,
#            steps, finalize, exit)
#   step     at the moment a random rank logs a random step done (tail -f
#            wakes on the write), every rank
#   partial  once a random rank logged a random step, a random 1-7 ranks;
#            the others hang, their watchdogs (NCCLWATCH_TIMEOUT=1) find
#            stalls, dump and print a verdict, and are killed after a
#            random 0-3 s (so some kills land while they dump)
# Figures: rounds (and those where a kill landed before the job ended: on
# a loaded machine the job can outrun its follower), kills, files read,
# records checked, and the memory ceiling: the peak RSS of diagnose on one
# round's job, and on the last (up to) 25 rounds' jobs at once.
# NW_KILLSTORM_ROUNDS=N sets the rounds directly (to try a few by hand).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
[ -x /usr/bin/time ] || skip "/usr/bin/time is not installed (Debian package time)"
export NCCLSIM_GPUS=8

rounds=${NW_KILLSTORM_ROUNDS:-$(( 100 * ${NW_SOAK_ROUNDS:-1} ))}
steps=600      # x 5 records a step with --pipeline: fits the ring (4096), nothing overwritten
# (--count 4096: a job of a second or more, so that a kill at a step's line lands before its end)
keep=25        # job directories kept for the all-jobs diagnose (about 15 MB each)

# rnd N: a random number in 0..N-1
rnd() { od -An -N4 -tu4 /dev/urandom | awk -v n="$1" '{ print $1 % n }'; }
# kill_picked I...: SIGKILL the I-th (1..8) of the ranks alive now; prints
# the pids killed
kill_picked() {
	_idx="$*"
	# shellcheck disable=SC2046
	set -- $(rank_pids)
	for _i in $_idx; do
		eval "_p=\${$_i:-}"
		[ -n "$_p" ] && kill -KILL "$_p" 2>/dev/null && echo "$_p"
	done
	return 0      # (none left: the job ended first)
}
# follow FILE PATTERN CMD...: run CMD at the moment FILE gets a line
# matching PATTERN (tail -f wakes on the write: not a poll later, when the
# job may be over); fails if the job ends first, or after 120 s.
follow() {
	_f=$1; _pat=$2; shift 2
	timeout 120 tail -s 0.1 --pid="$TRAINER_PID" -n +1 -f "$_f" | { grep -q -m 1 -- "$_pat" && "$@"; }
}
# the job's processes (its process group) are all gone, zombies reaped
job_gone() { ! pgrep -g "$TRAINER_PID" > /dev/null; }

# rss_of OUT CMD...: run CMD with stdout+stderr to OUT; RSS_KB = its peak
# RSS; returns CMD's status.
rss_of() {
	_o=$1; shift
	/usr/bin/time -f '%x %M' -o "$T/time" "$@" > "$_o" 2>&1
	_st=$(cut -d' ' -f1 "$T/time" | tail -n 1)
	RSS_KB=$(cut -d' ' -f2 "$T/time" | tail -n 1)
	return "$_st"
}

# check_segment FILE LOG: one segment (or dump) of a dead job, against what
# its rank logged in LOG.
check_segment() {
	_f=$1; _log=$2
	"$NW_CLI" show "$_f" > "$T/show" 2> "$T/show.err" || { cat "$T/show.err"; fail "$_f: ncclwatch show failed"; }
	[ -s "$T/show.err" ] && { cat "$T/show.err"; fail "$_f: ncclwatch show wrote to stderr"; }
	files=$((files + 1))
	grep -Eq '^records .* torn=0 overwritten=0 ' "$T/show" || { grep '^records' "$T/show"; fail "$_f: torn (or overwritten) records in a dead process's file"; }
	valid=$(sed -nE 's/^records .* valid=([0-9]+) .*/\1/p' "$T/show")
	records=$((records + valid))
	case "$_f" in *.dump.seg) dumps=$((dumps + 1)); return 0 ;; esac    # a copy taken earlier
	_pid=$(sed -nE 's/^  pid +([0-9]+)$/\1/p' "$T/show")
	_rank=$(sed -nE "s/^rank ([0-9]+): world size .*, pid $_pid,.*/\\1/p" "$_log")
	# collective seqs of the world communicator: 1..N, no gap
	world=$(sed -nE 's/^  op [0-9]+ .* CommInit comm=([0-9a-f]+) .*/\1/p' "$T/show" | head -n 1)
	if [ -n "$world" ]; then
		grep -E "^  op [0-9]+ .* (AllReduce|Broadcast) comm=$world " "$T/show" | field seq > "$T/seqs"
		n=$(grep -c . "$T/seqs")
		[ "$(tr '\n' ' ' < "$T/seqs")" = "$(seq 1 "$n" | tr '\n' ' ')" ] \
			|| fail "$_f: world collective seqs are not 1..$n: $(tr '\n' ' ' < "$T/seqs" | cut -c1-200)"
	fi
	[ -n "$_rank" ] || return 0                    # killed before it logged: nothing published to compare
	last=$(sed -nE "s/^rank $_rank step ([0-9]+) done$/\\1/p" "$_log" | tail -n 1)
	[ -n "$last" ] || return 0
	# steps 0..last were done: their all-reduces, broadcasts (steps 0, 10, ...) and ring exchanges
	want_ar=$((last + 1)); want_bc=$((last / 10 + 1))
	got_ar=$(grep -cE '^  op [0-9]+ .* AllReduce ' "$T/show")
	got_bc=$(grep -cE '^  op [0-9]+ .* Broadcast ' "$T/show")
	[ "$got_ar" -ge "$want_ar" ] || fail "$_f: rank $_rank logged step $last done, its segment has $got_ar all-reduces (want >= $want_ar)"
	[ "$got_bc" -ge "$want_bc" ] || fail "$_f: rank $_rank logged step $last done, its segment has $got_bc broadcasts (want >= $want_bc)"
	if [ "$pipeline" ]; then
		for k in Send Recv; do
			got=$(grep -cE "^  op [0-9]+ .* $k " "$T/show")
			[ "$got" -ge "$want_ar" ] || fail "$_f: rank $_rank logged step $last done, its segment has $got ${k}s (want >= $want_ar)"
		done
	fi
	steps_checked=$((steps_checked + want_ar))
}

kills=0 killed_rounds=0 files=0 dumps=0 records=0 steps_checked=0 rss_max=0 r=0
modes_time=0 modes_step=0 modes_partial=0
while [ $r -lt $rounds ]; do
	r=$((r + 1)); k0=$kills
	job=ks$r
	out="$T/round$r.out"
	pipeline=""; [ "$(rnd 2)" = 1 ] && pipeline=--pipeline
	case $(rnd 3) in 0) mode=time ;; 1) mode=step ;; *) mode=partial ;; esac
	eval "modes_$mode=\$((modes_$mode + 1))"
	rank=$(rnd 8); step=$(rnd $((steps - 50))); n=$(( $(rnd 7) + 1 )); seed=$(rnd 1000000)
	pick=$(seq 1 8 | awk -v s="$seed" 'BEGIN { srand(s) } { print rand(), $0 }' | sort | cut -d' ' -f2 | tr '\n' ' ')
	[ $mode = partial ] && pick=$(echo "$pick" | cut -d' ' -f1-"$n")
	delay="0.$(printf %03d "$(rnd 300)")"
	: > "$out"     # before the job starts: tail -f must find it
	NCCLWATCH_TIMEOUT=1 watched_start "$out" "$job" --nranks 8 --steps $steps --count 4096 --verbose $pipeline
	first=""
	if [ $mode = time ]; then
		sleep "$delay"
		note "round $r: $mode $pipeline"
	else
		follow "$out" "^rank $rank step $step done\$" kill_picked $pick > "$T/killed" \
			|| { tail "$out"; fail "round $r: no line 'rank $rank step $step done'"; }
		first=$(cat "$T/killed")
		kills=$((kills + $(echo $first | wc -w)))
		note "round $r: $mode $pipeline at rank $rank step $step, $(echo $first | wc -w) killed there"
		[ $mode = partial ] && sleep "$(rnd 3).$(printf %03d "$(rnd 1000)")"
	fi
	victims=$(rank_pids)
	# the rest (a rank killed first may be a zombie still: kill would succeed again)
	for p in $victims; do
		case " $(echo $first) " in *" $p "*) continue ;; esac
		kill -KILL "$p" 2>/dev/null && kills=$((kills + 1))
	done
	trainer_kill
	[ $kills -gt $k0 ] && killed_rounds=$((killed_rounds + 1))   # (else the job had ended first)
	note "round $r: $((kills - k0)) kills, last line $(tail -n 1 "$out")"
	nw_until 60 job_gone || fail "round $r: processes of the job still there 60 s after SIGKILL"

	dir="$NCCLWATCH_DIR/$job"
	if [ -n "$(segments "$dir" 2>/dev/null)" ]; then
		for f in $(segments "$dir"); do check_segment "$f" "$out"; done
		rss_of "$T/status" "$NW_CLI" status "$dir" || { cat "$T/status"; fail "round $r: status on $dir failed"; }
		assert_no_grep 'unreadable' "$T/status"
		rss_of "$T/diag" "$NW_CLI" diagnose "$dir"
		st=$?
		[ $st -le 1 ] || { cat "$T/diag"; fail "round $r: diagnose $dir exited $st"; }
		assert_no_grep 'unreadable' "$T/diag"
		[ "$RSS_KB" -gt "$rss_max" ] && rss_max=$RSS_KB
	fi
	old=$((r - keep))
	[ $old -gt 0 ] && rm -rf "$NCCLWATCH_DIR/ks$old" "$T/round$old.out"
done

note "every kept job at once"
jobs=$(ls "$NCCLWATCH_DIR" | wc -l)
nfiles=$(find "$NCCLWATCH_DIR" -name '*.seg' | wc -l)
rss_of "$T/diag" "$NW_CLI" diagnose "$NCCLWATCH_DIR"
st=$?
[ $st -le 1 ] || { tail "$T/diag"; fail "diagnose on $jobs jobs exited $st"; }
assert_no_grep 'unreadable' "$T/diag"

echo "soak killstorm: rounds=$rounds rounds_with_kills=$killed_rounds kills=$kills files_read=$files dumps_read=$dumps records_checked=$records steps_checked=$steps_checked modes=time:$modes_time,step:$modes_step,partial:$modes_partial"
echo "soak killstorm: diagnose_peak_rss_kb=$rss_max (one job of 8 ranks) diagnose_all_peak_rss_kb=$RSS_KB (jobs=$jobs files=$nfiles)"
[ $kills -gt 0 ] || fail "no process was killed"
exit 0
