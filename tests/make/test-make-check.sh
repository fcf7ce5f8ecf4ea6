#!/bin/sh
# `make check T=x` builds and runs the tests T names through the runner,
# without `make deps` (no package installs, no downloads), where `make
# test` runs deps first.
. "$NW_ROOT/tests/lib.sh"
cd "$NW_ROOT" || fail "no $NW_ROOT"
command -v make > /dev/null || skip "no make"
make --no-print-directory -n check T="test-cli-help test-report-kinds" BUILD="$T/b" > "$T/check" 2>&1 ||
	{ cat "$T/check" >&2; fail "make -n check failed"; }
assert_grep 'sh tests/run\.sh test-cli-help test-report-kinds$' "$T/check"
assert_grep "^cc .* -o $T/b/bin/ncclwatch " "$T/check"
assert_no_grep 'deps\.sh|fetch-nccl|install-pyspy|fetch-py313' "$T/check"
note "make test, for comparison, runs deps first"
make --no-print-directory -n test T=test-cli-help BUILD="$T/b" > "$T/test" 2>&1 || { cat "$T/test" >&2; fail "make -n test failed"; }
assert_grep 'tests/deps\.sh' "$T/test"
