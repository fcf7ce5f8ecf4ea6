#!/bin/sh
# `ncclwatch run`: CMD's exit status, its terminating signal raised again,
# signals forwarded to it, LD_PRELOAD and the NCCLWATCH_* variables set;
# a missing library or command is a clear error.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
[ -f "$NW_LIB" ] || fail "$NW_LIB not built"
lib_real=$(realpath "$NW_LIB")
san=$CLI_SAN_RT
unset LD_PRELOAD

note "exit status"
cli_run -- sh -c 'exit 3'
assert_eq $? 3 "run -- sh -c 'exit 3'"
cli_run -- true
assert_eq $? 0 "run -- true"

note "a signal that ended CMD ends ncclwatch (the shell sees 128+N)"
(cli_run -- sh -c 'kill -TERM $$')
assert_eq $? 143 "run -- sh -c 'kill -TERM \$\$'"
(cli_run -- sh -c 'kill -KILL $$')
assert_eq $? 137 "run -- sh -c 'kill -KILL \$\$'"

note "SIGTERM, SIGUSR1, SIGHUP sent to ncclwatch reach CMD"
for sig in TERM USR1 HUP; do
	rm -f "$T/ready"
	nw_spawn env ${CLI_SAN_RT:+"LD_PRELOAD=$CLI_SAN_RT"} ASAN_OPTIONS=detect_leaks=0 \
		"$NW_CLI" run -- sh -c "trap 'exit 7' $sig; touch '$T/ready'; while :; do sleep 0.05; done"
	pid=$NW_PID
	nw_until 30 test -f "$T/ready" || fail "the child did not start"
	kill -$sig "$pid"
	nw_wait $pid 30
	assert_eq $? 7 "exit status after SIG$sig (the child traps it and exits 7)"
done

note "LD_PRELOAD and the variables"
cli_run -- sh -c 'echo "$LD_PRELOAD"' > "$T/preload"
assert_eq "$(cat "$T/preload")" "${san:+$san:}$lib_real" "LD_PRELOAD: ours first (after a sanitizer runtime)"
LD_PRELOAD=/nonexistent/other.so cli_run -- sh -c 'echo "$LD_PRELOAD"' > "$T/preload2" 2>/dev/null
assert_eq "$(cat "$T/preload2")" "${san:+$san:}$lib_real:/nonexistent/other.so" "LD_PRELOAD: ours, then the old value"
env -u NCCLWATCH_TIMEOUT -u NCCLWATCH_KEEP -u NCCLWATCH_STACKS -u NCCLWATCH_DUMP_DIR sh -c '
	. "$NW_ROOT/tests/lib.sh" >/dev/null; . "$NW_ROOT/tests/cli/cli-lib.sh"
	cli_run --timeout 2.5 --dir "$0/d" --dump-dir "$0/dd" --keep --stacks -- \
		sh -c "echo \"\$NCCLWATCH_TIMEOUT|\$NCCLWATCH_DIR|\$NCCLWATCH_DUMP_DIR|\$NCCLWATCH_KEEP|\$NCCLWATCH_STACKS\""
	cli_run -- sh -c "echo \"\${NCCLWATCH_TIMEOUT-unset}|\${NCCLWATCH_KEEP-unset}\""' "$T" > "$T/vars"
assert_eq "$(sed -n 1p "$T/vars")" "2.5|$T/d|$T/dd|1|1" "variables from the options"
assert_eq "$(sed -n 2p "$T/vars")" "unset|unset" "variables the options do not name"

note "errors"
NCCLWATCH_LIB="$T/nowhere/libncclwatch.so" usage_error "$T/nowhere/libncclwatch.so: No such file or directory" run -- true
cli_run -- "$T/no-such-command" 2> "$T/notfound.err"
assert_eq $? 127 "a command that does not exist"
assert_grep "no-such-command: No such file or directory" "$T/notfound.err"
