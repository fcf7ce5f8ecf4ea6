# The scenario corpus (issue 11): run cases of tests/corpus/cases.txt and
# judge each in three views. Sourced after tests/lib.sh.
#
#   corpus_names [CLASS...]   the cases of those classes (all without one)
#   corpus_run NAME...        runs them, CORPUS_JOBS (4) at a time, each in
#                             its own process (run-one.sh) with its own
#                             NCCLWATCH_DIR and NCCLSIM_DIR; prints one line
#                             per case and view, in the order given:
#                               NAME VIEW ok|FAIL kind=K culprits=C waiting=W unknown=U (want ...)
#                             returns 1 if any line is FAIL
#   corpus_case NAME          runs one case here (run-one.sh calls it)
#   corpus_test CLASS...      what a test-corpus-<class>.sh does: runs the
#                             cases of those classes and fails on any wrong
#                             view
#
# CORPUS_NCCL_DIR=DIR runs the cases on the real NCCL in DIR and the real
# driver instead of the simulation (tests/gpu/steps/08-corpus-real.sh).
#
# Views: live (`ncclwatch diagnose --json` on the job dir while the job
# runs), dead (the same after the job's process group was SIGKILLed, or after
# it ended by itself), watchdog (the verdict the watchdog printed last,
# report.txt in the job dir, which its last verdict on stderr must match);
# post (a generated case: diagnose on nwgen's
# files). A job that ends by itself must end with the status cases.txt
# gives, and its watchdog must stay silent (no report.txt, no "ncclwatch:
# stall:" or verdict line on stderr).
#
# Several jobs on one host (issue 21, shape 6): a command "CMD ++ CMD2"
# starts job CMD2 (same ranks, same NCCLSIM_DIR and NCCL_RAS_ADDR: one
# host, one RAS port) beside the case's job CMD, before it. Neither job
# names its directory (no NCCLWATCH_JOB): each gets the one the preload
# gives the ranks of one launcher, and the case's is the one of its
# launcher's pid. View "jobs": the job directories are the two jobs' only
# (a launcher is no job, the jobs' files never land together); attach
# takes both jobs' processes (--tree over their common parent) and its
# verdict of the case's job is judged.
CORPUS_DIR="$NW_ROOT/tests/corpus"
: "${CORPUS_CASES:=$CORPUS_DIR/cases.txt}"  # the hang generator's runs give their own
CORPUS_SCENARIO="$NW_BUILD/tests/corpus/scenario"
CORPUS_GEN="$NW_BUILD/tests/progs/nwgen"
: "${CORPUS_JOBS:=4}"
: "${CORPUS_TIMEOUT:=2}"     # NCCLWATCH_TIMEOUT of every job
CORPUS_WAIT=60               # bound of every wait for an event

# The cases.txt line of NAME, fields trimmed, '|' between them.
corpus_line() {
	grep -v '^[[:space:]]*#' "$CORPUS_CASES" | sed 's/[[:space:]]*|[[:space:]]*/|/g; s/^[[:space:]]*//; s/[[:space:]]*$//' |
		awk -F'|' -v n="$1" 'NF >= 10 && $2 == n { print; exit }'
}

corpus_names() {
	grep -v '^[[:space:]]*#' "$CORPUS_CASES" | sed 's/[[:space:]]*|[[:space:]]*/|/g; s/^[[:space:]]*//' |
		awk -F'|' -v want=" $* " 'NF >= 10 && (want == "  " || index(want, " " $1 " ")) { print $2 }'
}

corpus_run() {
	[ -x "$CORPUS_SCENARIO" ] || fail "$CORPUS_SCENARIO is not built"
	_out="$T/corpus-results"
	rm -rf "$_out"; mkdir -p "$_out"
	printf '%s\n' "$@" | CORPUS_OUT="$_out" xargs -P "$CORPUS_JOBS" -n 1 sh "$CORPUS_DIR/run-one.sh"
	_bad=0
	for _n in "$@"; do
		if [ -s "$_out/$_n.res" ]; then cat "$_out/$_n.res"; else echo "$_n - FAIL the case produced no result"; _bad=1; fi
		if grep -q ' FAIL ' "$_out/$_n.res" 2>/dev/null; then _bad=1; fi
	done
	# the slowest cases, for whoever keeps the corpus quick (stderr)
	for _n in "$@"; do echo "$(cat "$_out/$_n.secs" 2>/dev/null || echo 0) $_n"; done | sort -rn | head -n 3 |
		awk '{ s = s sep $2 " " $1 "s"; sep = ", " } END { if (s != "") print "slowest: " s > "/dev/stderr" }'
	return $_bad
}

# ---- a second job beside the case's (a command "CMD ++ CMD2") ----------------------

# _find_jd: with a job beside, the case's job directory is the one the
# preload named after the case's launcher (ppid-PID-START, README "Job
# directory"), once its ranks made it.
_find_jd() {
	[ -n "$_beside" ] || return 0
	JD=$(ls -d "$NCCLWATCH_DIR/ppid-$CP-"* 2>/dev/null | head -n 1)
	[ -n "$JD" ] || JD="$NCCLWATCH_DIR/ppid-$CP-none"
}

# _start_beside preload|bare [RAS_ADDR]: starts the job beside (BP), with
# the preload or without it (the attach view: NCCL's RAS on RAS_ADDR, the
# case's port), and waits until its ranks parked (a scenario) or 3 s.
_start_beside() {
	_bmode=$1 _bras=${2:-}
	_argv "$T/rdv2" "$_beside" || return 1
	mkdir -p "$T/rdv2"
	set -f
	# shellcheck disable=SC2086
	set -- $_aargv
	set +f
	if [ "$_bmode" = preload ]; then
		# shellcheck disable=SC2086
		nw_spawn env -u NCCLWATCH_JOB LD_PRELOAD="$(nw_preload)" $_aenv "$@" > "$T/beside.out" 2>&1
	else
		# shellcheck disable=SC2086
		nw_spawn env NCCL_RAS_ADDR="$_bras" $_aenv "$@" > "$T/beside.out" 2>&1
	fi
	BP=$NW_PID
	case $_aprog in
	scenario|hangfuzz) nw_until $CORPUS_WAIT sh -c "[ \$(grep -c '^corpus: rank [0-9]* parked' '$T/beside.out') -ge $CR ]" ;;
	*) sleep 3 ;;
	esac
	return 0
}

_stop_beside() {
	kill -KILL "-$BP" "$BP" 2>/dev/null
	wait "$BP" 2>/dev/null
	_nw_pgids=$(echo " $_nw_pgids " | sed "s/ $BP / /g")
}

# _jobs_view [DIR]: the job directories under DIR (NCCLWATCH_DIR) are the
# two jobs' and no other (a launcher is never a job), each holding only
# its own job's files: the pids of its segments or snapshots and of its
# RAS report (attach's ras.json) are children of one launcher ($T/jobpids,
# taken while the jobs run).
_jobs_view() {
	_jd=${1:-$NCCLWATCH_DIR}
	_dirs=$(ls "$_jd" 2>/dev/null | tr '\n' ' ')
	_want="ppid-$CP-* ppid-$BP-*"
	[ -z "${1:-}" ] || _want="two job directories"
	_r="ok the jobs' files in $(ls "$_jd" | grep -c .) directories, each its job's own"
	if [ "$(ls "$_jd" | grep -c .)" -ne 2 ]; then
		_r="FAIL job directories: $_dirs(want $_want)"
	elif [ -z "${1:-}" ] && { ! ls -d "$_jd/ppid-$CP-"* > /dev/null 2>&1 || ! ls -d "$_jd/ppid-$BP-"* > /dev/null 2>&1; }; then
		_r="FAIL job directories: $_dirs(want $_want)"
	else
		for _d in "$_jd"/*/; do
			_owners=$( { for _f in "$_d"*.seg; do basename "$_f" | sed -n 's/^[^.]*\.\([0-9]*\)\..*/\1/p'; done
				cat "$_d"ras.json 2>/dev/null | grep -o '"pid": *[0-9]*' | grep -o '[0-9]*$'; } |
				while read -r _p; do awk -v p="$_p" '$2 == p { print $1 }' "$T/jobpids"; done | sort -u | tr '\n' ' ')
			[ "$(echo $_owners | wc -w)" -eq 1 ] || _r="FAIL $(basename "$_d") holds the files of launchers: ${_owners:-none}"
		done
	fi
	echo "$CN jobs $_r"
}

# _job_pids: "LAUNCHER CHILD" for the processes of both jobs, while they run.
_job_pids() { for _l in $CP $BP; do pgrep -P "$_l" | sed "s/^/$_l /"; done > "$T/jobpids"; }

# ---- one case --------------------------------------------------------------------

_cj() { python3 "$CORPUS_DIR/judge.py" "$@"; }

# _view VIEW FORMAT FILE: one result line against the wanted verdict.
# With CORPUS_FAIL_DETAIL=FILE, a wrong dead view also appends its first
# verdicts' summaries and evidence to FILE (for a CI log: a flake seen
# there can be read without its files).
_view() {
	_r=$(_cj "$2" "$3" "$CK" "$CC" "$CW" "$CU")
	echo "$CN $1 $_r"
	case "$1 $_r" in
	"dead FAIL"*) [ -z "${CORPUS_FAIL_DETAIL:-}" ] || python3 -c '
import json, sys
try:
    vs = [v for j in json.load(open(sys.argv[2])).get("jobs", []) for v in j.get("verdicts", [])]
except Exception as e:
    vs = []
    print("%s dead: no JSON (%s)" % (sys.argv[1], e))
for v in vs[:2]:
    print("%s dead: %s: %s" % (sys.argv[1], v.get("kind"), v.get("summary")))
    for e in (v.get("evidence") or [])[:4]:
        print("%s dead:   %s" % (sys.argv[1], e))
' "$CN" "$3" >> "$CORPUS_FAIL_DETAIL" 2>&1 ;;
	esac
}

# _diagnose FILE: ncclwatch diagnose --json on the job dir into FILE;
# status 2 (bad input) or a crash leaves a note in FILE.err.
_diagnose() {
	# a job that ended cleanly without NCCLWATCH_KEEP=1 leaves no job
	# directory at all: nothing was raised
	if [ ! -e "$JD" ]; then : > "$1"; : > "$1.err"; return; fi
	"$NW_CLI" diagnose --json "$JD" > "$1" 2> "$1.err"
	_s=$?
	[ $_s -le 1 ] || { echo "diagnose exited $_s: $(head -c 200 "$1.err")" > "$1"; }
}

_parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/out")" -ge "$CR" ]; }
_gone() { ! kill -0 "$CP" 2>/dev/null || ps -o stat= -p "$CP" 2>/dev/null | grep -q Z; }
_parked_or_gone() { _parked || _gone; }
_report() { _find_jd; [ -s "$JD/report.txt" ] || _gone; }
_checked() { grep -q '^corpus: check' "$T/out" || _gone; }
_segs() { _find_jd; [ "$(ls "$JD" 2>/dev/null | grep -c '\.seg$')" -ge "$CR" ] || _gone; }
_group_empty() { ! pgrep -g "$CP" > /dev/null; }

# _shuffled: with CORPUS_SHUFFLE=1, diagnose the files left given one by
# one in a random order; view "order": ok when its verdicts are those of
# the dead view (tests/bench/corpus.sh).
_shuffled() {
	[ -n "${CORPUS_SHUFFLE:-}" ] || return 0
	find "$JD" -name '*.seg' | shuf > "$T/files"
	# shellcheck disable=SC2046
	"$NW_CLI" diagnose --json $(cat "$T/files") > "$T/shuffle.json" 2> /dev/null
	_cj sig "$T/dead.json" > "$T/dead.sig"
	_cj sig "$T/shuffle.json" > "$T/shuffle.sig"
	if cmp -s "$T/dead.sig" "$T/shuffle.sig"; then echo "$CN order ok same verdicts from $(grep -c . "$T/files") files in a shuffled order"
	else echo "$CN order FAIL other verdicts from the files in a shuffled order: $(diff "$T/dead.sig" "$T/shuffle.sig" | grep '^[<>]' | head -n 2 | tr '\n' ' ' | cut -c1-200)"; fi
}

# _forget: the job is reaped; its pid may be reused at once (pid_max is
# 32768 here and the corpus starts many processes), so tests/lib.sh's
# cleanup must not kill that number's group any more.
_forget() { _nw_pgids=$(echo " $_nw_pgids " | sed "s/ $CP / /g"); }

# _wd_view: the watchdog's verdict, report.txt, judged; its last verdict on
# stderr (the "ncclwatch: " lines of the last "job" block, without the
# stall and dump lines of other ranks) must judge the same.
_wd_view() {
	sed -n 's/^ncclwatch: //p' "$T/out" | grep -Ev '^(stall: |stall cleared: |dump requested by )' |
		awk '/^job / { b = "" } { b = b $0 "\n" } END { printf "%s", b }' > "$T/stderr.txt"
	_r=$(_cj text "$T/report.txt" "$CK" "$CC" "$CW" "$CU")
	_e=$(_cj text "$T/stderr.txt" "$CK" "$CC" "$CW" "$CU")
	[ "$_r" = "$_e" ] || _r="FAIL stderr's last verdict is not report.txt's: ${_e#* }; report.txt: ${_r#* }"
	echo "$CN watchdog $_r"
}

# _wd_silent: the watchdog view of a job where nothing is pending: no
# report.txt, no stall or verdict line on stderr.
_wd_silent() {
	_r=$(_cj text "$T/report.txt" HEALTHY - - -)
	if grep -Eq 'ncclwatch: (stall: |[A-Z][A-Z_/]+: )' "$T/out"; then
		_r="FAIL the watchdog printed: $(grep -E 'ncclwatch: (stall: |[A-Z][A-Z_/]+: )' "$T/out" | head -n 1 | cut -c1-120)"
	fi
	echo "$CN watchdog $_r"
}

# _argv RDV COMMAND: a cases.txt command as _aenv (its leading NAME=VALUE
# words), _aprog (the program's word) and _aargv (the program and its
# arguments; words without blanks, split again by the caller); a gen
# command gives its scenario and arguments. RDV: the scenario's rendezvous.
_argv() {
	_aenv= _aprog= _aargv= _ardv=$1
	set -f
	# shellcheck disable=SC2086
	set -- $2
	set +f
	while [ $# -gt 0 ]; do
		case $1 in *=*) _aenv="$_aenv $1"; shift ;; *) _aprog=$1; shift; break ;; esac
	done
	case $_aprog in
	gen)      _aargv="$*" ;;
	scenario) _c=$1; shift; _aargv="$CORPUS_SCENARIO --case $_c --nranks $CR --dir $_ardv $*" ;;
	trainer)  _aargv="$NW_TRAINER --nranks $CR $*" ;;
	hangfuzz) _aargv="$NW_BUILD/tests/hangfuzz/hangfuzz --nranks $CR --dir $_ardv $*" ;;
	hang)     _h=$1; shift; _aargv="$NW_BUILD/tests/hangs/hang-$_h $*" ;;
	*) echo "$CN - FAIL unknown program '$_aprog' in cases.txt"; return 1 ;;
	esac
	return 0
}

corpus_case() {
	_l=$(corpus_line "$1")
	[ -n "$_l" ] || { echo "$1 - FAIL no such case in $CORPUS_CASES"; return; }
	CN=$1
	CR=$(echo "$_l" | cut -d'|' -f3) CE=$(echo "$_l" | cut -d'|' -f4) CK=$(echo "$_l" | cut -d'|' -f5)
	CC=$(echo "$_l" | cut -d'|' -f6) CW=$(echo "$_l" | cut -d'|' -f7) CU=$(echo "$_l" | cut -d'|' -f8)
	_cmd=$(echo "$_l" | cut -d'|' -f9)
	_beside=
	case $_cmd in *" ++ "*) _beside=${_cmd#* ++ }; _cmd=${_cmd%% ++ *} ;; esac
	export NCCLWATCH_TIMEOUT="$CORPUS_TIMEOUT" NCCLWATCH_KEEP=1
	# CORPUS_NCCL_DIR: a real libnccl.so.2 and the real driver (the GPU
	# check, tests/gpu/steps/08-*), else the simulation
	if [ -n "${CORPUS_NCCL_DIR:-}" ]; then
		export LD_LIBRARY_PATH="$CORPUS_NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	else
		nw_use_sim
	fi
	JD="$NCCLWATCH_DIR/$CN"
	_argv "$T/rdv" "$_cmd" || return
	_env=$_aenv _prog=$_aprog
	set -f
	# shellcheck disable=SC2086
	set -- $_aargv
	set +f
	if [ "$_prog" = gen ]; then
		_s=$1; shift
		"$CORPUS_GEN" --scenario "$_s" --ranks "$CR" --out "$NCCLWATCH_DIR" --job "$CN" "$@" > "$T/gen.out" 2>&1 ||
			{ echo "$CN post FAIL nwgen: $(tail -n 1 "$T/gen.out")"; return; }
		_diagnose "$T/post.json"
		_view post json "$T/post.json"
		_keep
		return
	fi
	mkdir -p "$T/rdv"
	if [ "${CORPUS_VIEW:-}" = attach ]; then
		# shellcheck disable=SC2086
		_attach_view $_env "$@"
		_keep
		return
	fi
	# shellcheck disable=SC2086
	if [ -n "$_beside" ]; then
		_start_beside preload || return
		_jobvar="-u NCCLWATCH_JOB"
	else
		_jobvar="NCCLWATCH_JOB=$CN"
	fi
	# shellcheck disable=SC2086
	nw_spawn env $_jobvar LD_PRELOAD="$(nw_preload)" $_env "$@" > "$T/out" 2>&1
	CP=$NW_PID

	if [ "$CE" = hang ] || [ "$CE" = quiet ] || [ "$CE" = either ]; then
		# Every rank at its last state (scenario), or the watchdog's
		# first report (trainer; every file there when nothing will be
		# pending); then the timeout must pass for every op that waits,
		# and the watchdogs' next polls judge them.
		if [ "$_prog" = scenario ] || [ "$_prog" = hangfuzz ]; then nw_until $CORPUS_WAIT _parked_or_gone
		elif [ "$CE" = quiet ]; then nw_until $CORPUS_WAIT _segs
		else nw_until $CORPUS_WAIT _report; fi
		_find_jd
		[ -z "$_beside" ] || _job_pids
		sleep $((CORPUS_TIMEOUT + 2))
		[ "$CE" = quiet ] || nw_until 10 sh -c "[ -s '$JD/report.txt' ]"
		if _gone; then
			echo "$CN live FAIL the job ended instead of hanging; last: $(tail -n 1 "$T/out")"
		else
			_diagnose "$T/live.json"
			_view live json "$T/live.json"
		fi
		cp "$JD/report.txt" "$T/report.txt" 2>/dev/null || : > "$T/report.txt"
		# either: the job stops with ops pending (the watchdog judges) or
		# with every rank idle after a mismatched op that completed (silent)
		if [ "$CE" = quiet ] || { [ "$CE" = either ] && [ ! -s "$T/report.txt" ]; }; then _wd_silent; else _wd_view; fi
		kill -KILL "-$CP" "$CP" 2>/dev/null
		wait "$CP" 2>/dev/null
		nw_until 20 _group_empty || echo "$CN dead FAIL processes of the job outlived SIGKILL"
		_forget
		_diagnose "$T/dead.json"
		_view dead json "$T/dead.json"
		_shuffled
	else
		if [ "$_prog" = scenario ] || [ "$_prog" = hangfuzz ]; then nw_until $CORPUS_WAIT _checked; else nw_until $CORPUS_WAIT _segs; fi
		_find_jd
		[ -z "$_beside" ] || _job_pids
		_diagnose "$T/live.json"
		_view live json "$T/live.json"
		# looked at: a hangfuzz job waits for this before it ends
		: > "$T/rdv/checked"
		nw_wait "$CP" $CORPUS_WAIT
		_st=$?
		_forget
		_diagnose "$T/dead.json"
		_r=$(_cj json "$T/dead.json" "$CK" "$CC" "$CW" "$CU")
		[ "$_st" = "$CE" ] || _r="FAIL exit=$_st (want exit=$CE); ${_r#ok }"
		echo "$CN dead $_r"
		_shuffled
		cp "$JD/report.txt" "$T/report.txt" 2>/dev/null || : > "$T/report.txt"
		_wd_silent
	fi
	if [ -n "$_beside" ]; then _jobs_view; _stop_beside; fi
	_keep
}

# _attach_view ENV... PROGRAM ARGS...: CORPUS_VIEW=attach, the job as a
# user who did not start it with ncclwatch meets it: run WITHOUT the
# preload (NCCL's RAS on, a port of its own), and once it hangs,
# `ncclwatch attach --tree` over it (stacks and RAS), then `diagnose
# --json` on what attach wrote, judged by judge.py's attach rubric: exact,
# undecided (no culprit named, a waiting rank never blamed) or FAIL. A
# culprit named by its pid (no rank known: no RAS) is every rank of the
# process the launcher forked in that order (examples/launch.c forks
# rank 0 first; a process of k ranks drives the next k).
_attach_view() {
	if [ "$CE" != hang ] && [ "$CE" != quiet ]; then
		echo "$CN attach skip the job ends by itself"; return
	fi
	_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# a job beside: first, on the same RAS port (one host)
	[ -z "$_beside" ] || _start_beside bare "127.0.0.1:$_port" || return
	nw_spawn env NCCL_RAS_ADDR="127.0.0.1:$_port" "$@" > "$T/out" 2>&1
	CP=$NW_PID
	case $* in
	*/scenario*|*/hangfuzz*) nw_until $CORPUS_WAIT _parked_or_gone ;;
	*) sleep 3 ;;
	esac
	# the waiting ranks into their wait, the gone ones counted dead by RAS
	sleep $((CORPUS_TIMEOUT + 2))
	# a process's ranks as the program lays them out: as it says
	# ("corpus: pid P ranks A-B", hangfuzz), else (examples/launch.c,
	# tests/hangs) the k-th process forked drives the k-th block of
	# CR / processes ranks (those gone too: the launcher names them,
	# "trainer: rank K (pid P) was killed ...")
	if grep -q '^corpus: pid [0-9]* ranks ' "$T/out"; then
		sed -n 's/^corpus: pid \([0-9]*\) ranks \([0-9]*\)-\([0-9]*\)$/\1 \2 \3/p' "$T/out" |
			awk '{ printf "%s", $1; for (r = $2; r <= $3; r++) printf " %d", r; printf "\n" }' > "$T/pidranks"
	else
		{ pgrep -P "$CP"; sed -n 's/^trainer: rank [0-9]* (pid \([0-9]*\)).*/\1/p' "$T/out"; } | sort -n -u > "$T/pids"
		awk -v n="$(grep -c . "$T/pids")" -v cr="$CR" '{ per = n ? int(cr / n) : 1; if (per < 1) per = 1
			printf "%s", $1; for (r = (NR - 1) * per; r < NR * per; r++) printf " %d", r; printf "\n" }' "$T/pids" > "$T/pidranks"
	fi
	if _gone; then
		echo "$CN attach FAIL the job ended instead of hanging; last: $(tail -n 1 "$T/out")"
	elif [ -n "$_beside" ]; then
		# both jobs' processes, as `attach` with no PID takes every NCCL
		# process of the user: one directory per job, the case's judged
		_job_pids
		NCCLWATCH_DIR="$T/attachjobs" "$NW_CLI" attach --no-python --no-verdict --tree $$ > "$T/attach.out" 2>&1
		_ad=
		for _d in "$T"/attachjobs/*/; do
			for _f in "$_d"*.seg; do
				_p=$(basename "$_f" | sed -n 's/^[^.]*\.\([0-9]*\)\..*/\1/p')
				if grep -q "^$CP $_p\$" "$T/jobpids"; then _ad=$_d; break; fi
			done
		done
		"$NW_CLI" diagnose --json "${_ad:-$T/attachjobs/none}" > "$T/attach.json" 2> "$T/attach.err"
		_s=$?
		[ $_s -le 1 ] || echo "diagnose exited $_s: $(head -c 200 "$T/attach.err")" > "$T/attach.json"
		echo "$CN attach $(_cj attach "$T/attach.json" "$CK" "$CC" "$CW" "$CU" "$T/pidranks")"
		_jobs_view "$T/attachjobs"
	else
		"$NW_CLI" attach --no-python --no-verdict --tree "$CP" -o "$T/attach" > "$T/attach.out" 2>&1
		"$NW_CLI" diagnose --json "$T/attach" > "$T/attach.json" 2> "$T/attach.err"
		_s=$?
		[ $_s -le 1 ] || echo "diagnose exited $_s: $(head -c 200 "$T/attach.err")" > "$T/attach.json"
		echo "$CN attach $(_cj attach "$T/attach.json" "$CK" "$CC" "$CW" "$CU" "$T/pidranks")"
	fi
	[ -z "$_beside" ] || _stop_beside
	kill -KILL "-$CP" "$CP" 2>/dev/null
	wait "$CP" 2>/dev/null
	nw_until 20 _group_empty || :
	_forget
}

# _keep: with CORPUS_KEEP=DIR, the case's output, diagnoses and the
# watchdog's report.txt into DIR/NAME/, and the files the job left (the
# dead view's segments and dumps, attach's snapshots) into DIR/NAME/files/:
# frozen inputs on which an engine change can be compared verdict for
# verdict (tests/corpus/verdicts-of.sh).
_keep() {
	[ -n "${CORPUS_KEEP:-}" ] || return 0
	mkdir -p "$CORPUS_KEEP/$CN"
	for _f in "$T/out" "$T"/*.json "$T/report.txt"; do
		[ -e "$_f" ] && cp "$_f" "$CORPUS_KEEP/$CN/"
	done
	for _d in "$JD" "$T/attach" "$T/attachjobs"; do
		[ -d "$_d" ] && cp -r "$_d" "$CORPUS_KEEP/$CN/files"
	done
	return 0
}

corpus_test() {
	_names=$(corpus_names "$@")
	[ -n "$_names" ] || fail "no case of class $* in $CORPUS_CASES"
	# shellcheck disable=SC2086
	corpus_run $_names > "$T/lines"
	cat "$T/lines"
	_bad=
	for _n in $_names; do
		if grep -q "^$_n [a-z]* FAIL " "$T/lines" || ! grep -q "^$_n " "$T/lines"; then
			_bad="$_bad $_n"
		fi
	done
	[ -z "$_bad" ] || fail "wrong views in:$_bad"
	return 0
}
