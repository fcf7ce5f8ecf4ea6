# Helpers for the field cases (sourced after tests/lib.sh and
# tests/launch/launch-lib.sh): DESIGN.md's real hangs, reproduced with the
# example trainer on the simulation, started by a real launcher (torchrun
# or mpirun) with libncclwatch.so preloaded into every rank, and judged by
# the watchdog and by `ncclwatch diagnose`.
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"

# Four ranks, a short stall timeout; segments kept after any exit, so the
# files a torn-down job leaves are always there to read.
NCCLWATCH_TIMEOUT=2
NCCLWATCH_KEEP=1
export NCCLWATCH_TIMEOUT NCCLWATCH_KEEP
NRANKS=4
PRELOAD=$(nw_preload)
# Bounds, not expectations: every wait ends as soon as the thing happened
# (a verdict comes within a few seconds of the hang).
FIELD_WAIT=60
COMM_CULPRIT='- (the communicator or its link, not a rank)'
# No culprit while ranks that may hold the op up left no file.
NOFILE_CULPRIT='- (the ranks that may hold it up left no file: see unknown)'
FIELD_T0=$(date +%s)

# field_torchrun OUT ARGS...: the trainer on NRANKS ranks under torchrun,
# the preload inherited by every worker (README: LD_PRELOAD=... torchrun).
field_torchrun() {
	_fo=$1; shift
	need_torchrun
	LD_PRELOAD=$PRELOAD launch_torchrun $NRANKS "$_fo" "$@"
}

# field_mpirun OUT ARGS...: the same under mpirun, the preload exported to
# every rank with -x (README: mpirun -x LD_PRELOAD=...).
field_mpirun() {
	_fo=$1; shift
	need_mpirun
	launch_mpirun $NRANKS "$_fo" -x "LD_PRELOAD=$PRELOAD" -- "$@"
}

# field_job: the job directory the ranks made (the launcher names it;
# exactly one), in FIELD_JOB.
field_job() {
	nw_until $FIELD_WAIT sh -c '[ "$(find "$NCCLWATCH_DIR" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l)" = 1 ]' ||
		fail "no job directory (or more than one) under $NCCLWATCH_DIR: $(job_dirs | tr '\n' ' ')"
	FIELD_JOB=$(job_dirs)
}

# field_segments N: until the job directory holds N live segments.
field_segments() {
	nw_until $FIELD_WAIT sh -c "[ \"\$(find '$FIELD_JOB' -name '*.seg' ! -name '*.dump.seg' | wc -l)\" = $1 ]" ||
		{ ls -l "$FIELD_JOB" >&2; fail "expected $1 segments in $FIELD_JOB"; }
}

# field_lines SECS PATTERN FILE N: until FILE has N lines matching PATTERN.
field_lines() {
	nw_until "$1" sh -c "[ \"\$(grep -Ec -- '$2' '$3')\" -ge $4 ]" ||
		{ tail -n 40 "$3" >&2; fail "fewer than $4 lines /$2/ in $3 after $1 s"; }
}

# field_pids OUT: the ranks' pids, from their "pid N" lines (torchrun
# prefixes stdout with "[default<R>]:").
field_pids() { sed -n 's/^\(\[default[0-9]*\]:\)\{0,1\}rank [0-9]*: world size .* pid \([0-9]*\),.*/\2/p' "$1"; }

# field_request_dumps: ask every process of the job for its stacks with
# `ncclwatch dump`, as a user would for a job where nobody is stuck (IDLE),
# so no watchdog raises a request by itself; every process answers.
field_request_dumps() {
	cli_ok 0 "$T/dump.out" dump --wait 30 "$FIELD_JOB"
	assert_grep "^dump: job $(basename "$FIELD_JOB"): $NRANKS of $NRANKS processes answered\$" "$T/dump.out"
}

# field_diagnose NAME [STATUS]: `ncclwatch diagnose` of the job directory
# (exit STATUS, default 1, nothing on stderr) into $T/NAME.diag; kept as
# $NW_FIELD_OUT/NAME.txt when NW_FIELD_OUT names a directory.
field_diagnose() {
	cli_ok "${2:-1}" "$T/$1.diag" diagnose "$FIELD_JOB"
	first_verdict "$T/$1.diag" > "$T/$1.first"
}
field_keep() {
	[ -z "${NW_FIELD_OUT:-}" ] || [ ! -d "$NW_FIELD_OUT" ] || cp "$T/$1.diag" "$NW_FIELD_OUT/$1.txt" ||
		fail "cannot copy the diagnosis to $NW_FIELD_OUT"
	sed 's/^/    | /' "$T/$1.diag"
}

# first_verdict TEXT: the first verdict of a text diagnosis (of its last
# "job" block) as "kind K", "op ...", "culprits ...", "waiting ...",
# "unknown ...", "verdicts N" lines ("-" for a set not printed).
first_verdict() {
	awk '
		/^job / { n = 0; k = op = cul = ""; wai = unk = "-"; inb = 0; next }
		/^[A-Z][A-Z0-9_\/]+: / { n++; inb = (n == 1); if (inb) { k = $0; sub(/: .*/, "", k) }; next }
		/^[^ ]/ { inb = 0; next }
		inb && /^  op: /       { op = substr($0, 7) }
		inb && /^  comm: /     { op = "comm " substr($0, 9) }
		inb && /^  culprits: / { cul = substr($0, 13) }
		inb && /^  waiting: /  { wai = substr($0, 12) }
		inb && /^  unknown: /  { unk = substr($0, 12) }
		END { printf "kind %s\nop %s\nculprits %s\nwaiting %s\nunknown %s\nverdicts %d\n", k, op, cul, wai, unk, n }
	' "$1"
}

# check_first NAME KIND OP CULPRITS WAITING UNKNOWN [VERDICTS]: the first
# verdict of $T/NAME.diag; OP is a regex for what precedes
# " on comm <id> (4 ranks)" ("comm" for a verdict that names only the comm).
check_first() {
	_f="$T/$1.first"
	_k=$(sed -n 's/^kind //p' "$_f") _o=$(sed -n 's/^op //p' "$_f")
	_c=$(sed -n 's/^culprits //p' "$_f") _w=$(sed -n 's/^waiting //p' "$_f") _u=$(sed -n 's/^unknown //p' "$_f")
	_n=$(sed -n 's/^verdicts //p' "$_f")
	_ore="$3 on comm [0-9a-f]{16} \\($NRANKS ranks\\)"
	[ "$3" != comm ] || _ore="comm [0-9a-f]{16} \\($NRANKS ranks\\)"
	{ [ "$_k" = "$2" ] && echo "$_o" | grep -Eqx "$_ore" && [ "$_c" = "$4" ] && [ "$_w" = "$5" ] &&
	  [ "$_u" = "$6" ] && [ "$_n" = "${7:-1}" ]; } || {
		sed 's/^/    | /' "$T/$1.diag" | head -n 40 >&2
		sed 's/^/    got: /' "$_f" >&2
		fail "$1: expected $2, op $3, culprits $4, waiting $5, unknown $6, ${7:-1} verdict(s)"
	}
}

# wd_text OUT REPORT: the watchdog's last verdict on stderr (its lines
# without the prefix, without the stall and dump lines that interleave).
wd_text() {
	sed -n 's/^ncclwatch: //p' "$1" | grep -Ev '^(stall: |stall cleared: |dump requested by )' |
		awk '/^job / { b = "" } { b = b $0 "\n" } END { printf "%s", b }' > "$2"
}

# wd_verdict NAME KIND WAITING: report.txt (the watchdog's last verdict)
# has the expected kind and waiting set.
wd_verdict() {
	[ -f "$FIELD_JOB/report.txt" ] || return 1
	first_verdict "$FIELD_JOB/report.txt" > "$T/$1.poll"
	grep -qx "kind $2" "$T/$1.poll" && grep -qx "waiting $3" "$T/$1.poll"
}

# check_watchdog NAME OUT: the watchdog printed the verdict by itself: its
# last block on stderr (in OUT) is report.txt, line for line, and its first
# verdict is diagnose's ($T/NAME.first).
check_watchdog() {
	cp "$FIELD_JOB/report.txt" "$T/$1.report"
	wd_text "$2" "$T/$1.stderr"
	cmp -s "$T/$1.report" "$T/$1.stderr" || {
		diff "$T/$1.report" "$T/$1.stderr" >&2
		fail "$1: the watchdog's last verdict on stderr differs from report.txt"
	}
	first_verdict "$T/$1.report" > "$T/$1.wd.first"
	cmp -s "$T/$1.first" "$T/$1.wd.first" || {
		diff "$T/$1.first" "$T/$1.wd.first" >&2
		fail "$1: the watchdog's verdict is not diagnose's"
	}
}

# field_stop SIG OUT: stop the launcher as an operator would (signal it
# alone; it tears its ranks down), then field_clean OUT.
field_stop() {
	launch_stop "$1"
	[ "$LAUNCH_STATUS" != 124 ] || fail "the launcher did not end within 60 s of SIG$1"
	field_clean "$2"
}

# field_clean OUT: once the launcher ended, nothing it started is left: no
# process of its session (trainer, torchrun, mpirun, orted, a wrapper
# shell), and none of the ranks' pids.
field_clean() {
	_left() {
		ps -eo sid=,pid=,stat=,args= | awk -v s="$LAUNCH_PID" '$1 == s && $3 !~ /^Z/'
		for _p in $(field_pids "$1"); do ps -o pid=,stat=,args= -p "$_p" | awk '$2 !~ /^Z/'; done
	}
	nw_until 30 sh -c "[ -z \"\$(ps -eo sid=,stat= | awk -v s=$LAUNCH_PID '\$1 == s && \$2 !~ /^Z/')\" ]" || true
	[ -z "$(_left "$1")" ] || { _left "$1" >&2; fail "processes of the job left after the launcher ended"; }
	[ -n "$(field_pids "$1")" ] || fail "no rank pid found in $1"
}

field_elapsed() { echo $(( $(date +%s) - FIELD_T0 )); }
