#!/bin/sh
# The top Makefile's fragments (PARTS, every part.mk of the tree) give the
# same build in any include order: with PARTS reversed and shuffled,
# `make -n -B all` prints the same commands, make's database holds the same
# targets with the same prerequisites, and no variable is used before a
# fragment defines it (--warn-undefined-variables says nothing).
. "$NW_ROOT/tests/lib.sh"
cd "$NW_ROOT" || fail "no $NW_ROOT"
command -v make > /dev/null || skip "no make"

awk '/^PARTS := \\$/ { f = 1; next }
     f { c = /\\$/; gsub(/\\/, ""); print; if (!c) f = 0 }' Makefile | tr -s ' \t' '\n\n' | grep . > "$T/parts"
[ -s "$T/parts" ] || fail "no 'PARTS := \\' list in the Makefile"
note "PARTS: $(wc -l < "$T/parts") fragments; every part.mk of the tree is one"
find . -name part.mk -not -path './build/*' -not -path './.git/*' | sed 's|^\./||' | sort > "$T/found"
sort "$T/parts" | diff -u - "$T/found" || fail "PARTS is not the tree's part.mk files"

# build ORDER-NAME PARTS...: commands, database and warnings of that order
build() {
	_n=$1; shift
	mkdir -p "$T/b-$_n"
	make --no-print-directory -n -B all BUILD="$T/b-$_n" PARTS="$*" --warn-undefined-variables \
		> "$T/$_n.cmds" 2> "$T/$_n.err" || { cat "$T/$_n.err" >&2; fail "$_n order: make -n all failed"; }
	[ ! -s "$T/$_n.err" ] || { cat "$T/$_n.err" >&2; fail "$_n order: make warned"; }
	# (make's own "rm" of intermediate files names them in hash order)
	sed "s|$T/b-$_n|BUILD|g" "$T/$_n.cmds" |
		awk '/^rm / { n = split($0, w, " "); for (i = 2; i <= n; i++) print "rm " w[i]; next } { print }' |
		sort > "$T/$_n.cmds.sorted"
	# the database: "TARGET", "TARGET <- PREREQ", "TARGET <-| ORDER-ONLY"
	make --no-print-directory -pn -B all BUILD="$T/b-$_n" PARTS="$*" 2> /dev/null | sed "s|$T/b-$_n|BUILD|g" | awk '
		/^# Files/ { f = 1; next }
		/^# files hash-table stats/ { f = 0 }
		f && /^[^#\t ].*:/ && !/^[^:]*:?[:+?!]?= / {
			t = $1; sep = " <- "; print t
			for (i = 2; i <= NF; i++) if ($i == "|") sep = " <-| "; else print t sep $i }' | sort -u > "$T/$_n.rules"
	[ -s "$T/$_n.rules" ] || fail "$_n order: no rules in make -p's database"
}

# same NAME: that order's commands and rules are the given order's
same() {
	diff -u "$T/given.cmds.sorted" "$T/$1.cmds.sorted" > "$T/$1.diff" ||
		{ head -n 40 "$T/$1.diff" >&2; fail "$1 order: other commands than the given order"; }
	diff -u "$T/given.rules" "$T/$1.rules" > "$T/$1.diff" ||
		{ head -n 40 "$T/$1.diff" >&2; fail "$1 order: other prerequisites than the given order"; }
	note "$1 order: the same $(wc -l < "$T/$1.cmds.sorted") command lines and $(wc -l < "$T/$1.rules") rule lines"
}

build given $(cat "$T/parts")
grep -q 'bin/ncclwatch' "$T/given.cmds" || fail "make -n all does not build the CLI"
build reversed $(tac "$T/parts")
same reversed
for seed in 1 2 3; do
	build "shuffle$seed" $(awk -v s=$seed 'BEGIN { srand(s) } { print rand() "\t" $0 }' "$T/parts" | sort | cut -f2)
	same "shuffle$seed"
done
