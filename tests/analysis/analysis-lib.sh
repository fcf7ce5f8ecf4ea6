# Helpers for the analysis engine's tests (sourced after tests/lib.sh): run
# the driver (tests/analysis/analyze.c) on segments and check its lines.
NW_ANALYZE="$NW_BUILD/tests/progs/analyze"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_ANALYZE" ] || fail "$NW_ANALYZE is not built"

# analyze OUT ARGS...: the driver's output in OUT, its status in AN_STATUS;
# a sanitizer report or a crash fails the test.
analyze() {
	_out=$1; shift
	"$NW_ANALYZE" "$@" > "$_out" 2> "$_out.err"
	AN_STATUS=$?
	if grep -Eq 'Sanitizer|runtime error:' "$_out.err" || [ "$AN_STATUS" -gt 2 ]; then
		head -n 40 "$_out.err" >&2
		fail "analyze $* exited $AN_STATUS"
	fi
	return 0
}

# verdict_line OUT N: the N-th verdict line (1: the first, the worst).
verdict_line() { grep '^verdict ' "$1" | sed -n "${2}p"; }

# verdict_field LINE KEY: KEY=value of a verdict line.
verdict_field() { echo " $1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# expect_verdicts EXPECT OUT: every "expect" and "also" line nwgen printed
# is a verdict line of OUT, exactly (kind, comm, op, seq, culprits, waiting,
# unknown), and OUT has no other verdict; the first verdict line is the
# worst kind among them.
expect_verdicts() {
	_n=0
	while read -r _tag _v _c _nr _op _seq _cul _wai _unk _rest; do
		case "$_tag" in expect|also) ;; *) continue ;; esac
		_want="verdict ${_v#verdict=} $_c $_op $_seq $_cul $_wai $_unk"
		grep -qxF -- "$_want" "$2" || {
			grep '^verdict ' "$2" | sed 's/^/    got: /' >&2
			fail "no line '$_want' in $2"
		}
		_n=$((_n + 1))
	done < "$1"
	[ "$_n" -gt 0 ] || fail "no expect line in $1"
	assert_eq "$(grep -c '^verdict ' "$2")" "$_n" "verdicts in $2"
}
