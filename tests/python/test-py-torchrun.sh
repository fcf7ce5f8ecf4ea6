#!/bin/sh
# examples/train.py (Debian's python3 3.11, ctypes on the simulated CUDA
# driver and NCCL) under torchrun, 4 ranks, every worker preloaded.
# (a) --fault skip:rank=2:step=5 (bcast every 2 steps): the watchdog's
#     verdict is MISSING_RANK naming rank 2, and its evidence names rank 2's
#     Python frames: "main thread in run_evaluation (train.py:L) <
#     train_step (train.py:L)" and where its last op was issued
#     ("issued at train.py:L in sync_gradients"); `ncclwatch diagnose`
#     while the job runs and after torchrun is stopped (segments, and the
#     dumps alone) says the same; the merged stacks are Python frames, the
#     data-loader thread's included; `show` gives every AllReduce the call
#     site sync_gradients < train_step and every Broadcast broadcast_weights
#     < train_step, at their lines; Python threads carry their
#     threading names (MainThread, data-loader renamed at run time,
#     checkpoint) in show, the merged stacks and --json; --native prints the interpreter's frames
#     too; --json's stack groups say python (and validate against the
#     schema); --trace's slices carry the call site in args.python.
# (b) --fault lock:rank=1:step=4: rank 1's main thread waits on a
#     threading.Lock the checkpoint thread holds forever: the verdict names
#     rank 1 in wait_for_checkpoint, and rank 1's checkpoint thread is in
#     the merged stacks in write_checkpoint_forever.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
need_torchrun
. "$NW_ROOT/tests/python/py-lib.sh"

eval_line=$(line_in run_evaluation 'time.sleep(0.2)')
skip_call=$(line_of 'self.run_evaluation()')
ar_line=$(line_of 'check_nccl(self.nccl.ncclAllReduce(')
bc_line=$(line_of 'check_nccl(self.nccl.ncclBroadcast(')
ar_call=$(line_of '        self.sync_gradients(count, dtype)')
bc_call=$(( $(line_of 'if bcast and not (mine and fault.kind == "order"):') + 1 ))
loader_line=$(line_in data_loader 'batches.put(')
for v in "$eval_line" "$skip_call" "$ar_line" "$bc_line" "$ar_call" "$loader_line"; do
	[ -n "$v" ] || fail "train.py: a line the test looks for is not there (or not once)"
done

note "(a) skip: rank 2 runs run_evaluation instead of step 5's all-reduce"
# Steps 0-4 made 5 all-reduces and 3 broadcasts: the missed one is #9.
py_torchrun "$T/skip.out" --steps 30 --count 64 --bcast-every 2 --fault skip:rank=2:step=5
wait_verdict 120 "$T/skip.out" MISSING_RANK
ev="main thread in run_evaluation \\(train.py:$eval_line\\) < train_step \\(train.py:$skip_call\\) < main "
site="Broadcast #8 on comm [0-9a-f]{16} \\(COMPLETED\\), issued at train.py:$bc_line in broadcast_weights"
assert_grep "ncclwatch: MISSING_RANK: rank 2 never called AllReduce #9 on comm [0-9a-f]{16} \\(4 ranks\\); ranks 0-1,3 wait in it" "$T/skip.out"
# The verdict is printed again when it changes: once rank 2's stacks are in.
nw_until 60 grep -Eq "ncclwatch:     rank 2: never called it .*$site.*; $ev" "$T/skip.out" ||
	assert_grep "ncclwatch:     rank 2: never called it .*$site.*; $ev" "$T/skip.out"

check_diag() {    # FILE: a diagnose output with the verdict and the stacks
	assert_grep "^MISSING_RANK: rank 2 never called AllReduce #9 " "$1"
	assert_grep "^    rank 2: never called it .*$site.*; $ev" "$1"
	assert_grep '^stacks \(first thread of each process and its other Python threads, ' "$1"
	assert_grep "^  rank 2 \\(1\\) thread \"MainThread\":" "$1"
	assert_grep "^    #0 run_evaluation \\(train.py:$eval_line\\)" "$1"
	# Python threads are named by threading.Thread.name (data-loader's
	# was given after it started).
	awk '/^  ranks? .* thread "data-loader":$/{ on = 1; next } /^  rank/{ on = 0 } on' "$1" > "$1.loader"
	assert_grep "^    #[0-9] data_loader \\(train.py:$loader_line\\)" "$1.loader"
	assert_grep '^  ranks? .* thread "checkpoint":$' "$1"
	assert_no_grep '_PyEval_EvalFrameDefault' "$1"
}
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/live.txt"
assert_eq $? 1 "diagnose's exit status (live)"
check_diag "$T/live.txt"
"$NW_CLI" diagnose --native "$NCCLWATCH_DIR" > "$T/native.txt"
assert_grep "^    rank 2: never called it .*; main thread: .*run_evaluation \\(train.py:$eval_line\\) < train_step .*_PyEval_EvalFrameDefault" "$T/native.txt"
assert_grep '^    #[0-9]+ _PyEval_EvalFrameDefault$' "$T/native.txt"
"$NW_CLI" diagnose --json "$NCCLWATCH_DIR" > "$T/diag.json"
$PY - "$T/diag.json" <<'PYEOF' || fail "--json: no Python stack group with data_loader"
import json, sys
d = json.load(open(sys.argv[1]))
groups = d["jobs"][0]["stacks"]
assert any(g["python"] and g["thread"] == "data-loader" and
           any(f.startswith("data_loader (train.py:") for f in g["frames"]) for g in groups)
assert all(isinstance(g["python"], bool) for g in groups)
PYEOF
$PY "$NW_ROOT/tests/cli/check_json.py" schema "$NW_ROOT/docs/diagnose.schema.json" "$T/diag.json" ||
	[ $? = 77 ] || fail "--json does not validate against docs/diagnose.schema.json"
# --trace: every slice of an op issued from Python carries its call site.
"$NW_CLI" diagnose --trace "$T/trace.json" "$NCCLWATCH_DIR" > /dev/null
$PY "$NW_ROOT/tests/cli/check_json.py" trace "$T/trace.json" 4 > /dev/null || fail "the trace is not one Perfetto loads"
$PY - "$T/trace.json" "$ar_line" "$bc_line" <<'PYEOF' || fail "--trace: slices without their Python call site"
import json, sys
events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
ops = [e for e in events if e.get("ph") == "X" and e["name"].startswith(("AllReduce", "Broadcast"))]
assert ops
for e in ops:
    want = ("train.py:%s in sync_gradients" % sys.argv[2] if e["name"].startswith("AllReduce")
            else "train.py:%s in broadcast_weights" % sys.argv[3])
    assert e["args"].get("python") == want, (e["name"], e["args"].get("python"))
PYEOF

# The per-op call sites, in the live segment of rank 0.
seg=$(grep -l . "$NCCLWATCH_DIR"/*/*.seg | head -1)
"$NW_CLI" show "$seg" > "$T/show.txt" || fail "show $seg"
awk '/^  op .* AllReduce /{ getline; print }' "$T/show.txt" | sort -u > "$T/ar.sites"
awk '/^  op .* Broadcast /{ getline; print }' "$T/show.txt" | sort -u > "$T/bc.sites"
assert_eq "$(cat "$T/ar.sites")" "    py sync_gradients ($TRAIN:$ar_line)" "AllReduce call sites"
assert_eq "$(cat "$T/bc.sites")" "    py broadcast_weights ($TRAIN:$bc_line)" "Broadcast call sites"
assert_grep "^    py train_step \\($TRAIN:$ar_call\\)" "$T/show.txt"
assert_grep "^    py train_step \\($TRAIN:$bc_call\\)" "$T/show.txt"
assert_grep '^  note python CPython 3\.11 via its thread states$' "$T/show.txt"
assert_grep '^    python "MainThread" frames=[1-9][0-9]* native_above=[0-9]+ main' "$T/show.txt"
assert_grep '^    python "data-loader" frames=[1-9]' "$T/show.txt"
assert_grep '^    python "checkpoint" frames=[1-9]' "$T/show.txt"

launch_stop TERM
launch_settled 30 || fail "workers left after torchrun was stopped"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR" > "$T/post.txt"
check_diag "$T/post.txt"
"$NW_CLI" diagnose "$NCCLWATCH_DUMP_DIR" > "$T/dumps.txt"
check_diag "$T/dumps.txt"

note "(b) lock: rank 1 waits for a lock its checkpoint thread never gives back"
rm -rf "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR"
py_torchrun "$T/lock.out" --steps 30 --count 64 --fault lock:rank=1:step=4
wait_verdict 120 "$T/lock.out" MISSING_RANK
wait_line=$(line_in wait_for_checkpoint 'with self.checkpoint_lock:')
forever_line=$(line_in write_checkpoint_forever 'time.sleep(0.2)')
nw_until 60 grep -Eq "ncclwatch:     rank 1: never called it .*; main thread in wait_for_checkpoint \\(train.py:$wait_line\\) < train_step " "$T/lock.out" ||
	assert_grep "ncclwatch:     rank 1: never called it .*; main thread in wait_for_checkpoint \\(train.py:$wait_line\\) < train_step " "$T/lock.out"
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/lock.txt"
assert_grep "^    rank 1: never called it .*; main thread in wait_for_checkpoint \\(train.py:$wait_line\\)" "$T/lock.txt"
awk '/^  rank 1 \(1\) thread/{ on = 1; next } /^  rank/{ on = 0 } on' "$T/lock.txt" > "$T/rank1.stacks"
assert_grep "^    #0 write_checkpoint_forever \\(train.py:$forever_line\\)" "$T/rank1.stacks"
grep -A1 '^  rank 1 (1) thread "checkpoint":$' "$T/lock.txt" | grep -q "^    #0 write_checkpoint_forever " ||
	fail "rank 1's checkpoint thread is not named \"checkpoint\" in the merged stacks"
assert_grep "^    #0 wait_for_checkpoint \\(train.py:$wait_line\\)" "$T/rank1.stacks"
launch_stop TERM
echo "ok"
