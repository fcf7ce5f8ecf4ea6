#!/bin/sh
# The CLI's surface: --help, --version, COMMAND --help, usage errors (exit 2).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/report/report-lib.sh"

"$NW_CLI" --help > "$T/help" || fail "--help failed"
assert_grep '^usage: ncclwatch ' "$T/help"
assert_grep '^  show ' "$T/help"
"$NW_CLI" --version > "$T/version" || fail "--version failed"
seg_minor=$(sed -n 's/^#define NW_SEG_VERSION_MINOR \([0-9]*\).*/\1/p' "$NW_ROOT/include/ncclwatch/segment.h")
assert_grep "^ncclwatch [0-9]+\\.[0-9]+\\.[0-9]+ \\(segment format 2\\.$seg_minor\\)\$" "$T/version"
"$NW_CLI" show --help > "$T/show-help" || fail "show --help failed"
assert_grep '^usage: ncclwatch show ' "$T/show-help"
assert_grep 'records shown=N valid=N torn=N overwritten=N unpublished=N' "$T/show-help"
assert_grep '--no-stacks' "$T/show-help"
assert_grep 'stacks STATE t=\+S request=N threads=N' "$T/show-help"
assert_grep 'thread TID "NAME" \[watchdog\] \[no-reply\] \[in-nccl\] \[truncated\]' "$T/show-help"

# usage ARGS... : status 2, one line on stderr.
usage() {
	"$NW_CLI" "$@" > "$T/u.out" 2> "$T/u.err"
	_rc=$?
	[ $_rc -eq 2 ] || fail "ncclwatch $*: status $_rc, expected 2"
	assert_eq "$(wc -l < "$T/u.err" | tr -d ' ')" 1 "ncclwatch $*: lines on stderr"
}
usage
usage --bogus
usage frobnicate
usage show
usage show --bogus "$T"
usage show --records
usage show --records many "$T"
usage show --records -3 "$T"
assert_grep "^ncclwatch show: --records wants a number, not .-3.$" "$T/u.err"
echo "ok"
