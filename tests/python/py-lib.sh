# Helpers for tests of Python programs under the preload (sourced after
# tests/lib.sh and tests/launch/launch-lib.sh): examples/train.py run by
# Debian's /usr/bin/python3 (3.11) through torchrun or mpirun, 4 ranks on
# the simulation, every process preloaded.
PY=/usr/bin/python3
TRAIN="$NW_ROOT/examples/train.py"
[ -x "$PY" ] || skip "no $PY (Debian: python3)"
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI not built"
unset NCCLWATCH_KEEP NCCLWATCH_JOB NCCLWATCH_PY_FRAMES NCCLWATCH_PY_METHOD
export NCCLWATCH_TIMEOUT=2 NCCLWATCH_DUMP_DIR="$T/dumps"
PRELOAD="$(nw_preload)"

# py_torchrun OUT ARGS...: train.py through torchrun (it runs python on the
# script), 4 workers, preloaded; sets LAUNCH_PID.
py_torchrun() {
	_out=$1; shift
	nw_spawn env LD_PRELOAD="$PRELOAD" "$TORCHRUN" --nproc_per_node 4 --master_port "$(free_port)" \
		--redirects 1 --tee 1 --log_dir "$T/torchrun-logs.$(date +%s%N)" "$TRAIN" "$@" > "$_out" 2>&1
	LAUNCH_PID=$NW_PID
}

# py_mpirun OUT ARGS...: the same through mpirun -np 4.
py_mpirun() {
	_out=$1; shift
	nw_spawn "$MPIRUN" --allow-run-as-root --oversubscribe -np 4 -x LD_PRELOAD="$PRELOAD" \
		-x LD_LIBRARY_PATH -x NCCLWATCH_DIR -x NCCLSIM_DIR -x NCCLWATCH_TIMEOUT -x NCCLWATCH_DUMP_DIR \
		-x NW_TEST_ID ${NCCLWATCH_PY_FRAMES+-x NCCLWATCH_PY_FRAMES} \
		${NCCLWATCH_PY_METHOD+-x NCCLWATCH_PY_METHOD} "$PY" "$TRAIN" "$@" > "$_out" 2>&1
	LAUNCH_PID=$NW_PID
}

# line_of PATTERN: the line number of train.py's only line matching PATTERN.
line_of() {
	_n=$(grep -n -- "$1" "$TRAIN" | cut -d: -f1)
	[ "$(printf '%s\n' "$_n" | grep -c .)" = 1 ] || fail "train.py: not one line matches /$1/: '$_n'"
	echo "$_n"
}

# line_in FUNCTION PATTERN: the line matching PATTERN inside def FUNCTION.
line_in() {
	awk -v f="def $1(" -v p="$2" 'index($0, f) { on = 1; next } on && /^    def |^def / { on = 0 }
		on && index($0, p) { print NR; exit }' "$TRAIN"
}

# wait_verdict SECS OUT KIND: the watchdog's verdict (KIND) printed, and its
# report complete (the "stacks" section follows the evidence).
wait_verdict() {
	nw_until "$1" grep -q "ncclwatch: $3: " "$2" || { tail -n 40 "$2" >&2; fail "no $3 verdict in $2"; }
	nw_until 30 grep -q 'ncclwatch: stacks' "$2" || { tail -n 40 "$2" >&2; fail "no stacks in $2's report"; }
}

# py_direct OUT ARGS...: train.py as 4 ranks started directly (RANK,
# WORLD_SIZE, LOCAL_RANK; no launcher, which would tear the job down when a
# rank dies), preloaded, all appending to OUT (the watchdog that prints a
# verdict may be any rank's); sets PY_PIDS. py_direct_stop: SIGTERM them
# and wait.
py_direct() {
	_out=$1; shift
	PY_PIDS=
	for _r in 0 1 2 3; do
		nw_spawn env LD_PRELOAD="$PRELOAD" RANK=$_r WORLD_SIZE=4 LOCAL_RANK=$_r \
			"$PY" "$TRAIN" "$@" >> "$_out" 2>&1
		PY_PIDS="$PY_PIDS $NW_PID"
	done
}
py_direct_stop() {
	for _p in $PY_PIDS; do
		kill -TERM "$_p" 2>/dev/null
		nw_wait "$_p" 30 > /dev/null
	done
}
