# Helpers for the CLI's tests (sourced after tests/lib.sh).
[ -x "$NW_CLI" ] || fail "$NW_CLI not built"
CLI_CHECK="$NW_ROOT/tests/cli/check_json.py"
CLI_SCHEMA="$NW_ROOT/docs/diagnose.schema.json"

# cli OUT ARGS...: run `ncclwatch ARGS`, stdout in OUT, stderr in OUT.err;
# sets CLI_STATUS.
cli() {
	_out=$1; shift
	"$NW_CLI" "$@" > "$_out" 2> "$_out.err"
	CLI_STATUS=$?
}

# cli_ok STATUS OUT ARGS...: `ncclwatch ARGS` exits STATUS and writes
# nothing on stderr.
cli_ok() {
	_want=$1; shift
	cli "$@"
	[ "$CLI_STATUS" = "$_want" ] || { cat "$1" "$1.err" | tail -n 40 >&2; shift; fail "ncclwatch $*: exit status $CLI_STATUS, expected $_want"; }
	[ ! -s "$1.err" ] || { cat "$1.err" >&2; shift; fail "ncclwatch $*: wrote to stderr"; }
}

# usage_error PATTERN ARGS...: `ncclwatch ARGS` exits 2 with nothing on
# stdout and exactly one line on stderr, "ncclwatch ...", matching PATTERN.
usage_error() {
	_pat=$1; shift
	"$NW_CLI" "$@" > "$T/usage.out" 2> "$T/usage.err"
	_rc=$?
	[ $_rc -eq 2 ] || { cat "$T/usage.out" "$T/usage.err" >&2; fail "ncclwatch $*: exit status $_rc, expected 2"; }
	[ ! -s "$T/usage.out" ] || { cat "$T/usage.out" >&2; fail "ncclwatch $*: wrote to stdout"; }
	assert_eq "$(wc -l < "$T/usage.err" | tr -d ' ')" 1 "ncclwatch $*: lines on stderr"
	assert_grep "^ncclwatch( [a-z]+)?: " "$T/usage.err"
	assert_grep "$_pat" "$T/usage.err"
}

# need_engine: skip unless the CLI has the commands of the analysis engine.
need_engine() {
	"$NW_CLI" --help | grep -q '^  diagnose ' \
		|| skip "the analysis engine (report/{sources,model,decide}/*.c) is not built yet: no diagnose/status in $NW_CLI"
}

# need_jsonschema: the python that has the jsonschema module, in CLI_PY;
# /usr/bin/python3 (Debian's python3-jsonschema) first. Skips without one.
need_jsonschema() {
	for CLI_PY in /usr/bin/python3 python3; do
		"$CLI_PY" -c 'import jsonschema' 2>/dev/null && return 0
	done
	skip "no python3 with the jsonschema module (Debian: python3-jsonschema)"
}

# schema_ok DOC: DOC validates against docs/diagnose.schema.json.
schema_ok() {
	"$CLI_PY" "$CLI_CHECK" schema "$CLI_SCHEMA" "$1" || fail "$1 does not validate against $CLI_SCHEMA"
}

# trace_ok TRACE N: TRACE is a loadable Chrome trace with one process per
# rank 0..N-1; prints what it holds.
trace_ok() {
	python3 "$CLI_CHECK" trace "$1" "$2" || fail "$1 is not a good trace of $2 ranks"
}

# The sanitizer runtime of this build ("" without one).
san_runtime() {
	case "$NW_SAN" in
		*address*) ${CC:-gcc} -print-file-name=libasan.so ;;
		*thread*)  ${CC:-gcc} -print-file-name=libtsan.so ;;
	esac
}
CLI_SAN_RT=$(san_runtime)

# cli_run ARGS...: `env ... ncclwatch run ARGS` as a test runs it (env
# execs ncclwatch: nw_spawn cli_env ... gets its pid). In a sanitizer build
# what CMD loads (libncclwatch.so is instrumented) needs the sanitizer
# runtime first in LD_PRELOAD (`run` keeps it first) and must not fail on
# leaks of programs that are not ours. Only this command gets it: tools
# such as ps hang under a preloaded ASan runtime.
cli_run() { cli_env "$NW_CLI" run "$@"; }
cli_env() {
	env ${CLI_SAN_RT:+"LD_PRELOAD=$CLI_SAN_RT${LD_PRELOAD:+:$LD_PRELOAD}"} \
		${CLI_SAN_RT:+"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"} "$@"
}
