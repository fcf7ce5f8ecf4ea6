# Helpers for the nwgen tests (sourced after tests/lib.sh).
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"
[ -x "$NW_CLI" ] || fail "$NW_CLI is not built"

# gen SCENARIO NRANKS [NWGEN OPTIONS...]: generate into a fresh $T/gen and
# read every file back with `ncclwatch show`, which must succeed with
# nothing on stderr, show NRANKS segments (unless NW_GEN_FILES says how
# many) and no torn or unpublished record. Sets G (the job directory),
# E (nwgen's output: the summary and "expect" lines) and S (show's output).
gen() {
	_sc=$1 _n=$2
	shift 2
	rm -rf "$T/gen"
	E="$T/$_sc.expect"
	S="$T/$_sc.show"
	"$NW_GEN" --scenario "$_sc" --ranks "$_n" --out "$T/gen" "$@" > "$E" 2> "$E.err" ||
		{ cat "$E.err" >&2; fail "nwgen --scenario $_sc --ranks $_n $* failed"; }
	G="$T/gen/gen-$_sc"
	for _a in "$@"; do case "$_a" in --job=*) G="$T/gen/${_a#--job=}" ;; esac; done
	"$NW_CLI" show "$G" > "$S" 2> "$S.err"
	_rc=$?
	[ $_rc -eq 0 ] || { head -5 "$S.err" >&2; fail "$_sc: ncclwatch show exited $_rc"; }
	[ ! -s "$S.err" ] || { head -5 "$S.err" >&2; fail "$_sc: ncclwatch show wrote to stderr"; }
	assert_eq "$(grep -c '^segment ' "$S")" "${NW_GEN_FILES:-$_n}" "$_sc: segments shown"
	assert_eq "$(grep -c '^records ' "$S")" "${NW_GEN_FILES:-$_n}" "$_sc: records lines"
	assert_no_grep '^records .*(torn=[1-9]|unpublished=[1-9])' "$S"
	assert_grep "^expect verdict=" "$E"
	# The comm of the verdict, if any, is one the segments hold.
	_id=$(sed -n 's/^expect .* comm=\([0-9a-f]\{16\}\) .*/\1/p' "$E")
	[ -z "$_id" ] || grep -q "^  comm [0-9]* id=$_id " "$S" || fail "$_sc: expected comm $_id is in no segment"
}

# rank R: the show block of global rank R (pid 10000 + R) into $T/rank.R;
# prints that path.
rank() {
	_f="$T/rank.$1"
	awk -v pid="$((10000 + $1))" '
		/^segment / { p = ($0 ~ ("\\." pid "(\\.rank[0-9]+\\.dump)?\\.seg$")) }
		p' "$S" > "$_f"
	[ -s "$_f" ] || fail "no segment of rank $1 in $S"
	echo "$_f"
}

# comm_field R SLOT FIELD: FIELD=value of rank R's comm line SLOT.
comm_field() {
	grep "^  comm $2 " "$(rank "$1")" | tr ' ' '\n' | sed -n "s/^$3=//p"
}

# peer_field R PEER FIELD: FIELD of rank R's peer line for comm-1 rank PEER.
peer_field() {
	grep "^  peer [0-9]* comm=1 .* peer=$2 " "$(rank "$1")" | tr ' ' '\n' | sed -n "s/^$3=//p"
}

# last_op R: rank R's newest op line.
last_op() {
	grep '^  op ' "$(rank "$1")" | tail -n 1
}

# op_field LINE FIELD: FIELD=value in an op line.
op_field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# header R KEY: the value of a header line of rank R.
header() {
	sed -n "s/^  $2  *//p" "$(rank "$1")" | head -n 1
}

# ranks_except K N: 0..N-1 without K.
ranks_except() {
	_i=0
	while [ $_i -lt "$2" ]; do
		[ $_i -eq "$1" ] || printf '%s ' $_i
		_i=$((_i + 1))
	done
}
