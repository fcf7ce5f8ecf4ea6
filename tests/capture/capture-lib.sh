# Helpers for tests/capture (sourced after tests/lib.sh): capture-quiet in
# the background, told to end by its stop file.
nw_use_sim
QUIET="$NW_BUILD/tests/capture/capture-quiet"
STOP="$T/stop"

# quiet_start [ENV=VALUE...] [-- ARGS]: start it; waits for "ready" (every
# thread inside its call); sets QUIET_PID.
quiet_start() {
	nw_spawn env "$@" "$QUIET" "$STOP" ${QUIET_ARGS:-} > "$T/quiet.out" 2>&1 9>&-
	QUIET_PID=$NW_PID
	nw_until 60 grep -q '^ready' "$T/quiet.out" || { cat "$T/quiet.out"; fail "capture-quiet never got ready"; }
}

# quiet_finish: tell it to end; wait for it (and its exec) to exit; its
# output in $T/quiet.out, status in QUIET_STATUS.
quiet_finish() {
	touch "$STOP"
	nw_wait "$QUIET_PID" 120
	QUIET_STATUS=$?
	cat "$T/quiet.out"
}

# For capture-quiet --live (its busy threads work only in spells, see
# quiet.c). live_lock: wait until no other live test of this build runs
# (flock on fd 9, held until the test ends; capture-quiet does not inherit
# it), so that two never take the cores together.
live_lock() {
	exec 9> "$NW_BUILD/tests/capture/live.lock" || fail "cannot open the live lock"
	flock 9 || fail "flock on the live lock"
}
# live_spell_start N: spell N of the busy threads; returns once the
# /dev/zero reader is in it. live_spell_end N: returns once it ended.
live_spell_start() {
	touch "$STOP.busy"
	nw_until 120 grep -q "live spell $1 started" "$T/quiet.out" || { cat "$T/quiet.out"; fail "spell $1 did not start"; }
}
live_spell_end() {
	rm -f "$STOP.busy"
	nw_until 120 grep -q "live spell $1 ended" "$T/quiet.out" || { cat "$T/quiet.out"; fail "spell $1 did not end"; }
}
