#!/bin/sh
# The graph tables across fork() (interpose/graphs.c: a child starts with
# none, as a process that never captured; CUDA does not survive fork):
# nccl-graph-fork's parent captures 1 AllReduce into a graph and launches
# it 3 times, forks, launches it once more after the child exits; the
# child (a fresh simulated driver) tries the parent's executable graph
# once (refused), captures 2 AllReduces into its own graph and launches it
# twice. The parent's file: 4 launches of its 1-op graph, replays 1..4;
# the child's: its own 2 launches, replays 1..2 of its 2-op graph, nothing
# of the parent's graph; neither counts untracked graphs.
# First the parent alone, exiting with its graph alive: under the
# sanitizers, LeakSanitizer finds no leak (the tables are heap memory it
# scans, so the per-op event sets they point to are still reachable).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
prog="$NW_PROGS/nccl-graph-fork"
[ -x "$prog" ] || fail "$prog not built"

note "alone: exit with the graph alive"
NCCLSIM_NULL=1 NCCLWATCH_JOB=galone LD_PRELOAD="$(nw_preload)" "$prog" alone > "$T/alone.out" 2>&1 \
	|| { cat "$T/alone.out"; fail "nccl-graph-fork alone failed"; }
assert_no_grep 'ncclwatch:|LeakSanitizer' "$T/alone.out"

note "fork"
# (the child leaves the parent's CUDA objects and events behind: not leaks
# of its own)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
NCCLSIM_NULL=1 NCCLWATCH_JOB=gfork NCCLWATCH_KEEP=1 LD_PRELOAD="$(nw_preload)" "$prog" > "$T/fork.out" 2>&1 \
	|| { cat "$T/fork.out"; fail "nccl-graph-fork failed"; }
cat "$T/fork.out"
assert_no_grep 'ncclwatch:' "$T/fork.out"
assert_grep '^child: the parent.s graph: refused$' "$T/fork.out"
parent=$(sed -n 's/^parent \([0-9]*\) child.*/\1/p' "$T/fork.out")
child=$(sed -n 's/.* child \([0-9]*\)$/\1/p' "$T/fork.out")
[ -n "$parent" ] && [ -n "$child" ] || fail "no pids in the output"
pseg=$(segments "$NCCLWATCH_DIR/gfork" | grep "\.$parent\.seg\$") || fail "no parent segment"
cseg=$(segments "$NCCLWATCH_DIR/gfork" | grep "\.$child\.seg\$") || fail "no child segment"

# launches FILE: "replay ops" of each GraphLaunch
launches() { grep ' GraphLaunch ' "$1" | sed -E 's/.* replay=([0-9]+) ops=([0-9]+) .*/\1 \2/' | tr '\n' ' '; }

show "$pseg" > "$T/parent.show"
assert_eq "$(launches "$T/parent.show")" "1 1 2 1 3 1 4 1 " "the parent's launches (replay ops)"
assert_grep '^  graph_launches +4$' "$T/parent.show"
assert_grep '^  graphs_untracked +0$' "$T/parent.show"

show "$cseg" > "$T/child.show"
assert_eq "$(grep ' AllReduce ' "$T/child.show" | grep -c 'state=CAPTURED')" 2 "the child's CAPTURED AllReduces"
assert_eq "$(launches "$T/child.show")" "1 2 2 2 " "the child's launches (replay ops)"
assert_grep '^  graph_launches +2$' "$T/child.show"
assert_grep '^  graphs_untracked +0$' "$T/child.show"
echo ok
