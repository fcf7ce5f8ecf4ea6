# Helpers for tests/capture (sourced after tests/lib.sh): capture-quiet in
# the background, told to end by its stop file.
nw_use_sim
QUIET="$NW_BUILD/tests/capture/capture-quiet"
STOP="$T/stop"

# quiet_start [ENV=VALUE...] [-- ARGS]: start it; waits for "ready" (every
# thread inside its call); sets QUIET_PID.
quiet_start() {
	nw_spawn env "$@" "$QUIET" "$STOP" ${QUIET_ARGS:-} > "$T/quiet.out" 2>&1
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
