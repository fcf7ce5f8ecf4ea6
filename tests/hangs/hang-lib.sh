# Helpers for tests/hangs/test-hang-*.sh (sourced after tests/lib.sh): run
# one hang program of tests/hangs/ under the preload on the simulation
# (job = the program's name, segments kept), wait until the engine's live
# verdict is the one expected, then kill the job and require exactly the
# same verdict from the files it left, and from `ncclwatch diagnose`.
. "$NW_ROOT/tests/analysis/analysis-lib.sh"
. "$NW_ROOT/tests/watchdog/watchdog-lib.sh"   # the simulation, the 2 s timeout
export NCCLWATCH_KEEP=1
HANG_PROGS="$NW_BUILD/tests/hangs"

# hang_start NAME NRANKS ARGS...: hang-NAME (NRANKS processes) in the
# background (job NAME), output in $T/out; sets HANG_PID.
hang_start() {
	_n=$1; HANG_NRANKS=$2; shift 2
	[ -x "$HANG_PROGS/hang-$_n" ] || fail "$HANG_PROGS/hang-$_n not built"
	nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB="$_n" "$HANG_PROGS/hang-$_n" "$@" > "$T/out" 2>&1
	HANG_PID=$NW_PID
	HANG_JOB=$_n
}

# hang_settled RANKS...: every rank listed left a mark dated past the
# timeout in its segment: its watchdog reported a stall (the finding's
# time) or it wrote its stacks on a stuck peer's request (their time). A
# process read after the kill is dated by the newest time it wrote, so only
# then do the files left say what the live job said.
_settled() {
	grep -Eq "ncclwatch: stall: rank=$1 |^ncclwatch: dump requested by .*: rank=$1 pid=[0-9]+ wrote " "$T/out"
}
hang_settled() {
	for _r in "$@"; do
		nw_until $WD_WAIT _settled "$_r" || { cat "$T/out" >&2; fail "rank $_r: no stall and no dump written"; }
	done
}

# hang_verdict WANT NVERDICTS: the live verdict lines until the first is
# WANT (an ERE of the whole line; the stuck ranks must first wait longer
# than the timeout), the job still running; then (hang_settled) the job is killed and the
# files it left give WANT again as their first verdict line, with exactly
# NVERDICTS verdicts both times. HANG_SETTLE: the ranks hang_settled waits
# for (default: all; a rank that left no file cannot be waited for). The post-mortem output is in $T/dead,
# `ncclwatch diagnose` in $T/diag.
hang_verdict() {
	_want=$1; _nv=$2
	_live() { analyze "$T/live" "$NCCLWATCH_DIR" && verdict_line "$T/live" 1 | grep -Eq -- "$_want"; }
	nw_until $WD_WAIT _live || { cat "$T/live" "$T/out" >&2; fail "no live verdict /$_want/"; }
	kill -0 "$HANG_PID" 2>/dev/null || { cat "$T/out" >&2; fail "the job ended instead of hanging"; }
	grep -E '^(verdict|summary|evidence) ' "$T/live" | sed 's/^/    live: /'
	assert_eq "$(grep -c '^verdict ' "$T/live")" "$_nv" "live verdicts"
	hang_settled ${HANG_SETTLE:-$(seq 0 $((HANG_NRANKS - 1)))}
	kill -KILL "-$HANG_PID" 2>/dev/null
	wait "$HANG_PID" 2>/dev/null
	# Every rank gone (SIGKILL lands on each in its own time): a rank
	# still dying would read as alive, not "process gone".
	_gone() { ! kill -0 "-$HANG_PID" 2>/dev/null; }
	nw_until 30 _gone || fail "the job's processes outlived SIGKILL"
	analyze "$T/dead" "$NCCLWATCH_DIR"
	verdict_line "$T/dead" 1 | grep -Eq -- "$_want" || { cat "$T/dead" >&2; fail "post-mortem: first verdict is not /$_want/"; }
	assert_eq "$(grep -c '^verdict ' "$T/dead")" "$_nv" "post-mortem verdicts"
	"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/diag" 2>&1
	_st=$?
	[ "$_st" = 1 ] || { cat "$T/diag" >&2; fail "ncclwatch diagnose exited $_st, not 1 (a problem found)"; }
}
