# Helpers for the report tests (sourced after tests/lib.sh).
NW_MKSEG="$NW_BUILD/tests/progs/mkseg"
[ -x "$NW_MKSEG" ] || fail "$NW_MKSEG is not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI is not built"

# show_ok OUT ARGS...: `ncclwatch show ARGS` must succeed with nothing on stderr.
show_ok() {
	_out=$1; shift
	"$NW_CLI" show "$@" > "$_out" 2> "$_out.err"
	_rc=$?
	[ $_rc -eq 0 ] || { cat "$_out.err" >&2; fail "ncclwatch show $* exited $_rc"; }
	[ ! -s "$_out.err" ] || { cat "$_out.err" >&2; fail "ncclwatch show $* wrote to stderr"; }
}

# show_bad FILE PATTERN: exit status 2, nothing on stdout, exactly one line
# on stderr that names FILE and matches PATTERN (an extended regex).
show_bad() {
	"$NW_CLI" show "$1" > "$T/bad.out" 2> "$T/bad.err"
	_rc=$?
	[ $_rc -eq 2 ] || { cat "$T/bad.err" >&2; fail "$1: exit status $_rc, expected 2"; }
	[ ! -s "$T/bad.out" ] || fail "$1: something on stdout"
	assert_eq "$(wc -l < "$T/bad.err" | tr -d ' ')" 1 "$1: lines on stderr"
	grep -Fq -- "$1: " "$T/bad.err" || fail "$1: the message does not name the file: $(cat "$T/bad.err")"
	assert_grep "$2" "$T/bad.err"
}
