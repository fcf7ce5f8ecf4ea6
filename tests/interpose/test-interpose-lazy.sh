#!/bin/sh
# Costing a process that never calls NCCL nothing: /bin/true, a shell
# script and a sleeping program under the preload create no file or
# directory, start no thread and print nothing. NCCLWATCH_DISABLE=1 makes an
# NCCL program pure pass-through (no file, same output). After fork() the
# child records into its own segment and the parent's is untouched.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1

note "processes that never call NCCL"
LD_PRELOAD="$(nw_preload)" /bin/true > "$T/true.out" 2>&1 || fail "/bin/true failed under the preload"
printf 'echo hello; x=$(ls /); exit 0\n' > "$T/script.sh"
LD_PRELOAD="$(nw_preload)" sh "$T/script.sh" > "$T/script.out" 2>&1 || fail "the script failed under the preload"
assert_eq "$(cat "$T/true.out")" "" "output of /bin/true"
assert_eq "$(cat "$T/script.out")" "hello" "output of the script"
# threads of `sleep` under the preload = threads under the sanitizer runtime
# alone (none in a normal build): 1
san_only=$(nw_preload | sed -n 's/^\(.*\):[^:]*libncclwatch.so$/\1/p')
for pre in "$san_only" "$(nw_preload)"; do
	nw_spawn env LD_PRELOAD="$pre" sleep 30
	sleeper=$NW_PID
	nw_until 10 grep -q '^Name:.*sleep' "/proc/$sleeper/status" || fail "sleep did not start"
	sleep 1
	ls "/proc/$sleeper/task" | grep -c . > "$T/threads.$([ "$pre" = "$san_only" ] && echo base || echo watched)"
	[ "$pre" = "$san_only" ] || grep -q libncclwatch "/proc/$sleeper/maps" || fail "the library was not loaded into sleep"
	kill "$sleeper"
done
assert_eq "$(cat "$T/threads.watched")" "$(cat "$T/threads.base")" "threads of a sleeping process under the preload"
[ -n "$NW_SAN" ] || assert_eq "$(cat "$T/threads.watched")" 1 "threads of sleep"
[ ! -e "$NCCLWATCH_DIR" ] || { find "$NCCLWATCH_DIR"; fail "$NCCLWATCH_DIR created by processes that never called NCCL"; }

note "NCCLWATCH_DISABLE=1"
"$NW_PROGS/nccl-ops-linked" > "$T/plain.out" 2>&1
NCCLWATCH_DISABLE=1 LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-ops-linked" > "$T/disabled.out" 2>&1 \
	|| { cat "$T/disabled.out"; fail "disabled run failed"; }
diff "$T/plain.out" "$T/disabled.out" || fail "output differs when disabled"
[ ! -e "$NCCLWATCH_DIR" ] || fail "NCCLWATCH_DISABLE=1 still created $NCCLWATCH_DIR"

note "a segment exists while an NCCL program runs; a clean exit removes it, the control file and the job directory"
NCCLWATCH_JOB=clean LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-ops-linked" > "$T/clean.out" 2>&1 || fail "run failed"
[ ! -e "$NCCLWATCH_DIR/clean" ] || { ls -la "$NCCLWATCH_DIR/clean"; fail "a clean exit left its job directory"; }
[ "$(stat -c %a "$NCCLWATCH_DIR")" = 700 ] || fail "$NCCLWATCH_DIR is not mode 0700"

note "fork: the child has its own segment; the parent's is untouched"
# (the child never destroys the comm it inherited: not a leak of ours)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
NCCLWATCH_JOB=fork NCCLWATCH_KEEP=1 LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-fork" > "$T/fork.out" 2>&1 \
	|| { cat "$T/fork.out"; fail "nccl-fork failed"; }
cat "$T/fork.out"
parent=$(sed -n 's/^parent \([0-9]*\) child.*/\1/p' "$T/fork.out")
child=$(sed -n 's/.* child \([0-9]*\) .*/\1/p' "$T/fork.out")
assert_eq "$(segments "$NCCLWATCH_DIR/fork" | grep -c .)" 2 "segments of parent and child"
[ "$(stat -c %a "$NCCLWATCH_DIR/fork")" = 700 ] || fail "the job directory is not mode 0700"
pseg=$(segments "$NCCLWATCH_DIR/fork" | grep "\.$parent\.seg\$") || fail "no parent segment"
cseg=$(segments "$NCCLWATCH_DIR/fork" | grep "\.$child\.seg\$") || fail "no child segment"
show "$pseg" > "$T/parent.show"; show "$cseg" > "$T/child.show"
assert_grep "^  pid +$parent\$" "$T/parent.show"
assert_grep "^  pid +$child\$" "$T/child.show"
assert_grep "^  ppid +$parent\$" "$T/child.show"
# parent: 3 + 1 all-reduces, counts 3 and 1; child: 2 all-reduces of count 2
assert_eq "$(grep -c ' AllReduce ' "$T/parent.show")" 4 "parent all-reduces"
assert_eq "$(grep ' AllReduce ' "$T/parent.show" | field seq | tr '\n' ' ')" "1 2 3 4 " "parent seqs"
assert_no_grep ' AllReduce .* count=2 ' "$T/parent.show"
assert_no_grep " tid=$child " "$T/parent.show"
assert_eq "$(grep -c ' AllReduce .* count=2 ' "$T/child.show")" 2 "child all-reduces"
assert_eq "$(grep -c '^  op ' "$T/child.show")" 4 "child records (init, 2 all-reduces, destroy)"
assert_grep '^  flags +recording,exited,exit_status$' "$T/child.show"
assert_grep '^  exit_status +0$' "$T/child.show"
