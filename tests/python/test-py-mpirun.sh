#!/bin/sh
# examples/train.py under mpirun, 4 ranks, preloaded (Debian's python3).
# (a) --fault gil:rank=2:step=3: rank 2's main thread makes a C call that
#     never returns while it holds the GIL (ctypes.PyDLL): its Python
#     stacks are taken all the same (no GIL, no signal): the verdict names
#     rank 2 in hold_gil_forever at its line, the merged stacks hold its
#     data-loader thread (blocked on the GIL) in Python frames. With
#     NCCLWATCH_PY_FRAMES=0 no op has a call site (no "issued at", no "py"
#     line in show) and thread stacks are still Python.
# (b) --fault compile:rank=1: rank 1 stalls in compile_step() before the
#     first collective: the verdict names it there, and where its last NCCL
#     call (the communicator's init) was issued: init_comms. Taken with
#     NCCLWATCH_PY_METHOD=dump: the interpreter's own dumper, parsed.
# (c) --fault p2p:rank=1:step=3: rank 1 sends to the wrong peer in the
#     pipeline ring: P2P_UNMATCHED, and its evidence says where Python
#     issued the misdirected send (pass_activations, the ncclSend line).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
need_mpirun
. "$NW_ROOT/tests/python/py-lib.sh"

gil_line=$(line_in hold_gil_forever 'libc.sleep(3600)')
gil_call=$(line_of 'self.hold_gil_forever()')
compile_line=$(line_in compile_step 'time.sleep(0.05)')
init_line=$(line_of 'check_nccl(self.nccl.ncclCommInitRank(')
for v in "$gil_line" "$gil_call" "$compile_line" "$init_line"; do
	[ -n "$v" ] || fail "train.py: a line the test looks for is not there (or not once)"
done

note "(a) gil: rank 2 holds the GIL forever at step 3 (NCCLWATCH_PY_FRAMES=0)"
export NCCLWATCH_PY_FRAMES=0
py_mpirun "$T/gil.out" --steps 30 --count 64 --bcast-every 0 --fault gil:rank=2:step=3
wait_verdict 120 "$T/gil.out" MISSING_RANK
ev="rank 2: never called it .*; main thread in hold_gil_forever \\(train.py:$gil_line\\) < train_step \\(train.py:$gil_call\\) < main "
nw_until 60 grep -Eq "ncclwatch:     $ev" "$T/gil.out" || assert_grep "ncclwatch:     $ev" "$T/gil.out"
assert_grep 'ncclwatch: MISSING_RANK: rank 2 never called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it' "$T/gil.out"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/gil.txt"
assert_grep "^    $ev" "$T/gil.txt"
assert_no_grep 'issued at' "$T/gil.txt"
awk '/^  (rank 2|ranks [0-9,-]*2[0-9,-]*) \(/{ on = 1; next } /^  rank/{ on = 0 } on' "$T/gil.txt" > "$T/rank2.stacks"
assert_grep '^    #[0-9] data_loader \(train.py:' "$T/gil.txt"
seg=$(grep -l . "$NCCLWATCH_DIR"/*/*.seg | head -1)
"$NW_CLI" show "$seg" > "$T/gil.show"
assert_grep '^  op .* AllReduce ' "$T/gil.show"
assert_no_grep '^    py ' "$T/gil.show"
assert_grep '^    py#0 ' "$T/gil.show"
launch_stop TERM
launch_settled 30 || fail "ranks left after mpirun was stopped"
unset NCCLWATCH_PY_FRAMES

note "(b) compile: rank 1 stalls in compile_step before the first collective"
rm -rf "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR"
export NCCLWATCH_PY_METHOD=dump
py_mpirun "$T/compile.out" --steps 30 --count 64 --fault compile:rank=1
wait_verdict 120 "$T/compile.out" MISSING_RANK
ev="rank 1: never called it .*CommInit of comm [0-9a-f]{16} \\(INIT_DONE\\), issued at train.py:$init_line in init_comms.*; main thread in compile_step \\(train.py:$compile_line\\) < main "
nw_until 60 grep -Eq "ncclwatch:     $ev" "$T/compile.out" || assert_grep "ncclwatch:     $ev" "$T/compile.out"
seg=$(grep -l . "$NCCLWATCH_DIR"/*/*.seg | head -1)
"$NW_CLI" show "$seg" > "$T/dump.show"
assert_grep '^  note python CPython 3\.11 via _Py_DumpTracebackThreads \(NCCLWATCH_PY_METHOD=dump\)$' "$T/dump.show"
launch_stop TERM
"$NW_CLI" diagnose "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR" > "$T/compile.txt"
assert_grep "^MISSING_RANK: rank 1 never called AllReduce #1 " "$T/compile.txt"
assert_grep "^    $ev" "$T/compile.txt"
unset NCCLWATCH_PY_METHOD

note "(c) p2p: rank 1 sends to the wrong peer at step 3"
rm -rf "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR"
send_line=$(line_of 'check_nccl(self.nccl.ncclSend(')
[ -n "$send_line" ] || fail "train.py: no ncclSend line"
# 16 MiB messages: a smaller misdirected send completes eagerly into the
# peer's buffer, as on real NCCL, and rank 1 would not stay in it
py_mpirun "$T/p2p.out" --steps 8 --count 4194304 --bcast-every 0 --fault p2p:rank=1:step=3
wait_verdict 120 "$T/p2p.out" P2P_UNMATCHED
ev="rank 1: in Send #1 to rank 3 on comm [0-9a-f]{16} \\(STARTED for [^)]*\\), issued at train.py:$send_line in pass_activations; main thread in "
nw_until 60 grep -Eq "ncclwatch:     $ev" "$T/p2p.out" || assert_grep "ncclwatch:     $ev" "$T/p2p.out"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/p2p.txt"
assert_grep "^    $ev" "$T/p2p.txt"
launch_stop TERM
echo ok
