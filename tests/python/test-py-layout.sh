#!/bin/sh
# The layout tables pystack carries (CPython 3.11 and 3.12: pystack/
# cpython.c, threadnames.h) against CPython's own headers, every field
# they hold: tests/gpu/py_layout.c prints the offsets with offsetof() from
# the headers it is built against, $NW_BUILD/tests/py-layout-table prints
# our tables under the same names, and the two must be the same lines.
# - 3.11: py_layout.c built here against /usr/include/python3.11 (Debian
#   12's libpython3.11-dev, with its internal headers);
# - 3.12: no 3.12 here; tests/gpu/py312-layout.txt is py_layout.c's output
#   from Ubuntu 24.04's python3.12-dev 3.12.3, recorded on the GPU machine
#   (`make gpu-check` runs the live 3.12 check there).
. "$NW_ROOT/tests/lib.sh"
table="$NW_BUILD/tests/py-layout-table"
[ -x "$table" ] || fail "$table not built"
inc=${NW_PY311_INCLUDE:-/usr/include/python3.11}
[ -d "$inc/internal" ] || skip "no CPython 3.11 internal headers in $inc (libpython3.11-dev)"
command -v "${CC:-cc}" > /dev/null || skip "no C compiler"

# compare MINOR HEADER-OUTPUT: its version is 3.MINOR, every other line is
# in our table and every line of our table in it.
compare() {
	v=$(awk '$1 == "version" { print $2 }' "$2")
	[ -n "$v" ] || fail "$2: no version line"
	assert_eq "$(( (v >> 24) & 255 )).$(( (v >> 16) & 255 ))" "3.$1" "the headers' version in $2"
	grep -v '^version ' "$2" | sort > "$T/headers-3.$1"
	"$table" "3.$1" | sort > "$T/table-3.$1" || fail "py-layout-table 3.$1"
	n=$(wc -l < "$T/headers-3.$1")
	[ "$n" -ge 30 ] || fail "$2: only $n fields"
	grep -q '^ts_next ' "$T/headers-3.$1" || fail "$2: no ts_next"
	if ! diff -u "$T/headers-3.$1" "$T/table-3.$1" > "$T/diff-3.$1"; then
		sed 's/^/    /' "$T/diff-3.$1" >&2
		fail "CPython 3.$1: pystack's table (+) differs from the headers' offsets (-)"
	fi
	echo "CPython 3.$1: $n fields the same"
}

"${CC:-cc}" -I"$inc" -o "$T/py_layout" "$NW_ROOT/tests/gpu/py_layout.c" 2> "$T/cc.err" ||
	{ cat "$T/cc.err" >&2; fail "tests/gpu/py_layout.c does not build against $inc"; }
"$T/py_layout" > "$T/py311.txt" || fail "py_layout (3.11) failed"
compare 11 "$T/py311.txt"
compare 12 "$NW_ROOT/tests/gpu/py312-layout.txt"
echo ok
