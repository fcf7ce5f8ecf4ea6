#!/bin/sh
# diagnose and status: --help, bad options, and inputs with nothing to
# read (a missing directory, an empty one, only broken files, a job that is
# not there): exit status 2 and one line on stderr naming the problem.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine

for c in diagnose status; do
	cli_ok 0 "$T/help" $c --help
	head -n 1 "$T/help" | grep -q "^usage: ncclwatch $c " || fail "$c --help: no usage line first"
	usage_error "unknown option '--bogus'" $c --bogus
	usage_error "option '--job' needs a value" $c --job
	usage_error "$T/missing: No such file or directory" $c "$T/missing"
	NCCLWATCH_DIR="$T/missing-default" usage_error "$T/missing-default: No such file or directory" $c
	mkdir -p "$T/empty/job"
	usage_error "$T/empty" $c "$T/empty"
	mkdir -p "$T/broken/job"
	echo junk > "$T/broken/job/a.seg"
	usage_error "$T/broken/job/a.seg: " $c "$T/broken"
done
usage_error "--timeout wants a number of seconds > 0, not 'x'" diagnose --timeout x "$T"
usage_error "--timeout wants a number of seconds > 0, not '-1'" diagnose -t -1 "$T"
usage_error "option '--trace' needs a value" diagnose --trace
