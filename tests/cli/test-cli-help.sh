#!/bin/sh
# Every command answers --help (exit 0, its usage first) and refuses a bad
# option or argument with exit status 2 and one line on stderr.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"

cli_ok 0 "$T/help" --help
assert_grep '^usage: ncclwatch ' "$T/help"
cli_ok 0 "$T/version" --version
assert_grep '^ncclwatch [0-9]+\.[0-9]+\.[0-9]+ \(segment format 2\.[0-9]+\)$' "$T/version"
cmds=$(sed -nE 's/^  ([a-z]+) .*/\1/p' "$T/help")
note "commands: $(echo $cmds)"
for c in show gc run; do
	echo "$cmds" | grep -qx "$c" || fail "ncclwatch --help does not list $c"
done
for c in $cmds; do
	cli_ok 0 "$T/help.$c" "$c" --help
	head -n 1 "$T/help.$c" | grep -q "^usage: ncclwatch $c" || fail "$c --help does not start with its usage"
	assert_grep '^Exit status: ' "$T/help.$c"
	usage_error "unknown option '--no-such-option'" "$c" --no-such-option
done

note "bad arguments"
usage_error "unknown command 'nosuch'" nosuch
usage_error "no command given" 
usage_error "unknown option '--bogus'" --bogus
usage_error "no FILE or DIR given" show
usage_error "--records wants a number" show --records x "$T"
usage_error "one DIR at most" gc a b
usage_error "$T/missing: No such file or directory" gc "$T/missing"
usage_error "not a directory" gc "$T/help"
usage_error "no command given" run
usage_error "no command given" run --keep --
usage_error "--timeout wants a number of seconds > 0, not 'soon'" run --timeout soon -- true
usage_error "--timeout wants a number of seconds > 0, not '0'" run -t 0 -- true
usage_error "option '--dir' needs a value" run --dir
