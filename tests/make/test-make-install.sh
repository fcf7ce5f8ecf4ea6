#!/bin/sh
# `make install PREFIX=DIR` as a user runs it, then the installed CLI:
# (a) with py-spy in the build (make deps: build/venv), the installed
#     `ncclwatch attach` finds the copy make install put beside it
#     (PREFIX/libexec/ncclwatch/py-spy), with no py-spy in PATH and no
#     NCCLWATCH_PYSPY: a live simulated Python job (examples/train.py, 2
#     ranks, no preload; rank 1 in run_evaluation) gets its Python stacks.
# (b) without py-spy (PYSPY= names none): make install says so in one
#     line, and attach says exactly how to get it, in one line.
# (c) the man page (share/man/man1/ncclwatch.1) renders without a warning
#     and has a section per command; the bash completion
#     (share/bash-completion/completions/ncclwatch) completes every command
#     `ncclwatch --help` lists and every option `ncclwatch attach --help`
#     lists.
. "$NW_ROOT/tests/lib.sh"
nw_use_sim
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no $PY (Debian: python3)"
TRAIN="$NW_ROOT/examples/train.py"
BUILD_PYSPY="$NW_ROOT/build/venv/bin/py-spy"
# PATH without any py-spy, as on a fresh machine
CLEAN_PATH=/usr/sbin:/usr/bin:/sbin:/bin
PATH=$CLEAN_PATH command -v py-spy > /dev/null && skip "py-spy is in $CLEAN_PATH: cannot check the installed CLI's own"
unset NCCLWATCH_PYSPY

# install PREFIX [MAKE-ARGS...]: make install into PREFIX; its output in PREFIX.out.
install_to() {
	_p=$1; shift
	(cd "$NW_ROOT" && make --no-print-directory install BUILD="$NW_BUILD" PREFIX="$_p" "$@") > "$_p.out" 2>&1 ||
		{ cat "$_p.out"; fail "make install PREFIX=$_p failed"; }
	grep '^install: ' "$_p.out" || true
}

# A job without the preload: rank 1 skips step 3's all-reduce and sits in
# run_evaluation (Python), rank 0 waits in the all-reduce.
start_job() {
	for r in 0 1; do
		nw_spawn env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r TORCHELASTIC_RUN_ID="install$$" \
			"$PY" "$TRAIN" --steps 20 --count 64 --bcast-every 0 --verbose --fault skip:rank=1:step=3 > "$T/rank$r.out" 2>&1
		eval "PID$r=\$NW_PID"
	done
	for r in 0 1; do
		nw_until 120 grep -q "^rank $r step 2 done" "$T/rank$r.out" || { cat "$T/rank$r.out"; fail "rank $r never did step 2"; }
	done
}

note "(a) make install with the build's py-spy; attach of the installed CLI on a live Python job"
if [ -x "$BUILD_PYSPY" ]; then
	install_to "$T/inst"
	[ -x "$T/inst/libexec/ncclwatch/py-spy" ] || fail "make install put no py-spy in PREFIX/libexec/ncclwatch/"
	start_job
	ok=0 i=0
	while [ $i -lt 60 ]; do
		PATH=$CLEAN_PATH "$T/inst/bin/ncclwatch" attach --no-ras -o "$T/snap.$i" "$PID0" "$PID1" > "$T/attach.out" 2>&1
		if [ "$(grep -c '; python: py-spy dump --nonblocking: [0-9]* Python threads\{0,1\} -> ' "$T/attach.out")" = 2 ] &&
			grep -q 'run_evaluation' "$T/attach.out"; then ok=1; break; fi
		grep -q 'py-spy not found' "$T/attach.out" && break
		i=$((i + 1)); sleep 1
	done
	cat "$T/attach.out"
	[ $ok = 1 ] || fail "the installed attach took no Python stacks of both ranks"
	assert_no_grep 'py-spy not found' "$T/attach.out"
	kill -KILL "$PID0" "$PID1" 2>/dev/null
else
	note "no $BUILD_PYSPY (make deps installs it): (a) left out"
fi

note "(b) make install without py-spy: one line each from make install and from attach"
install_to "$T/bare" PYSPY=/nonexistent/py-spy
assert_eq "$(grep -c '^install: no py-spy at /nonexistent/py-spy ' "$T/bare.out")" 1 "make install's line about py-spy"
[ ! -e "$T/bare/libexec/ncclwatch/py-spy" ] || fail "a py-spy was installed from nowhere"
nw_spawn "$PY" "$NW_ROOT/tests/capture/pyquiet.py" "$T/stop" > "$T/py.out" 2>&1
QPID=$NW_PID
nw_until 30 grep -q '^ready' "$T/py.out" || fail "pyquiet.py never got ready"
PATH=$CLEAN_PATH "$T/bare/bin/ncclwatch" attach --no-verdict --no-ras -o "$T/snap-bare" "$QPID" > "$T/bare-attach.out" 2>&1 ||
	{ cat "$T/bare-attach.out"; fail "the installed attach failed"; }
cat "$T/bare-attach.out"
assert_grep "^attach: pid $QPID .*; python: py-spy not found beside ncclwatch \\(\\.\\./libexec/ncclwatch/\\) or in PATH: pip install py-spy, or set NCCLWATCH_PYSPY; native stacks only -> " "$T/bare-attach.out"
NCCLWATCH_PYSPY=/nonexistent PATH=$CLEAN_PATH "$T/bare/bin/ncclwatch" attach --no-verdict --no-ras -o "$T/snap-bare" "$QPID" > "$T/bare-env.out" 2>&1
assert_grep '; python: NCCLWATCH_PYSPY=/nonexistent is not an executable file: native stacks only -> ' "$T/bare-env.out"
touch "$T/stop"

note "(c) the man page and the bash completion make install put under share/"
man1="$T/bare/share/man/man1/ncclwatch.1"
comp="$T/bare/share/bash-completion/completions/ncclwatch"
[ -f "$man1" ] || fail "no man page installed"
[ -f "$comp" ] || fail "no bash completion installed"
commands=$("$NW_CLI" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
[ -n "$commands" ] || fail "ncclwatch --help lists no command"
if command -v groff > /dev/null; then
	groff -man -Tutf8 -ww -z "$man1" 2> "$T/groff.err" || fail "groff cannot render $man1"
	[ ! -s "$T/groff.err" ] || { cat "$T/groff.err"; fail "groff warns about $man1"; }
	MANWIDTH=100 man -l "$man1" > "$T/man.txt" 2> /dev/null || groff -man -Tutf8 "$man1" | col -b > "$T/man.txt"
	head -n 12 "$T/man.txt"
	assert_grep '^NAME' "$T/man.txt"
	assert_grep '^ +ncclwatch - find out why a multi-GPU NCCL job hangs' "$T/man.txt"
	for c in $commands; do
		assert_grep "^ +ncclwatch $c\$" "$T/man.txt"
		assert_grep "usage: ncclwatch $c " "$T/man.txt"
	done
	assert_grep '--verbose +the verdict with every evidence line' "$T/man.txt"
else
	note "no groff: the page's structure only"
	assert_grep '^\.TH NCCLWATCH 1 ' "$man1"
	for c in $commands; do assert_grep "^\\.SS ncclwatch $c\$" "$man1"; done
fi

# complete WORDS...: what the completion offers for the command line WORDS
# (the last word is the one being completed).
complete_words() {
	bash -c '. "$1"; shift; complete -p ncclwatch >&2 || exit 1; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_ncclwatch; printf "%s\n" "${COMPREPLY[@]}"' sh "$comp" "$@"
}
complete_words ncclwatch "" > "$T/top.comp" 2> "$T/complete-p" || fail "no completion registered for ncclwatch"
cat "$T/complete-p"
assert_grep '^complete .*-F _ncclwatch ncclwatch$' "$T/complete-p"
for c in $commands; do
	grep -qx "$c" "$T/top.comp" || fail "the completion does not offer the command $c"
done
complete_words ncclwatch di > "$T/di.comp"
assert_eq "$(cat "$T/di.comp")" diagnose "completion of 'di'"
complete_words ncclwatch attach -- > "$T/attach.comp"
"$NW_CLI" attach --help | sed -n 's/^ \{1,\}\(-[A-Za-z], \{1,\}\)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort > "$T/attach.opts"
[ "$(wc -l < "$T/attach.opts")" -ge 8 ] || fail "attach --help lists too few options to check: $(cat "$T/attach.opts")"
sort "$T/attach.comp" | diff "$T/attach.opts" - || fail "the completion of 'ncclwatch attach --' is not attach's options"
complete_words ncclwatch attach --j > "$T/attachj.comp"
assert_eq "$(cat "$T/attachj.comp")" --json "completion of 'attach --j'"
