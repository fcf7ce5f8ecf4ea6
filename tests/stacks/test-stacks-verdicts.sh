#!/bin/sh
# The verdict from stacks alone (docs/diagnosis.md, "Verdicts from stacks
# alone"), through the real CLI on snapshot files nwgen writes as attach
# would (flag SNAPSHOT: identity and stacks, no ring): a minority elsewhere
# while the others wait in NCCL is the culprit "from stacks"; two minorities
# are two verdicts; everybody in NCCL cannot be decided and says what would;
# a rank with no file, or whose process is gone, is "process gone"; a job
# where nobody waits in NCCL is healthy; a snapshot never gives op numbers;
# `show` reads snapshots. Mixed jobs (segments and snapshots): test-stacks-mixed.sh.
. "$NW_ROOT/tests/lib.sh"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"

NCCL='futex_wait@libc.so.6<ncclAllReduce@libnccl.so.2<train_step<main'

# snap NAME SPEC [NWGEN OPTIONS...]: snapshots of 8 ranks into $T/NAME,
# `diagnose` (text into $T/NAME.txt, JSON into $T/NAME.json, exit statuses
# into RC and RCJ).
snap() {
	_n=$1 _spec=$2
	shift 2
	rm -rf "${T:?}/$_n"
	"$NW_GEN" --snapshot "$_spec" --ranks 8 --out "$T/$_n" "$@" > "$T/$_n.gen" 2>&1 ||
		{ cat "$T/$_n.gen" >&2; fail "$_n: nwgen --snapshot"; }
	"$NW_CLI" diagnose "$T/$_n" > "$T/$_n.txt" 2> "$T/$_n.err"
	RC=$?
	"$NW_CLI" diagnose --json "$T/$_n" > "$T/$_n.json" 2>> "$T/$_n.err"
	RCJ=$?
	[ ! -s "$T/$_n.err" ] || { cat "$T/$_n.err" >&2; fail "$_n: diagnose wrote to stderr"; }
}

# verdicts FILE.json: one line per verdict, "KIND culprits=C waiting=W op=OP seq=SEQ comm=COMM".
verdicts() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
def rs(v):
    if not v:
        return "-"
    out, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        out.append(str(v[i]) if i == j else "%d-%d" % (v[i], v[j]))
        i = j + 1
    return ",".join(out)
for j in d["jobs"]:
    for v in j["verdicts"]:
        print("%s culprits=%s waiting=%s op=%s seq=%s comm=%s" % (v["kind"], rs(v.get("culprits")),
              rs(v.get("waiting")), v.get("op"), v.get("seq"), v.get("comm")))
EOF
}

note "show reads a snapshot: flags, one snapshot line, the stacks"
snap one "0-6=$NCCL;7=compile_step<train_step<main;*/pt_autograd=pthread_cond_wait@libc.so.6<autograd_loop"
"$NW_CLI" show "$T/one/gen-snapshot/node1.10007.snapshot.seg" > "$T/show" 2> "$T/show.err" || fail "show: exit $?"
[ ! -s "$T/show.err" ] || fail "show wrote to stderr"
assert_grep '^  flags +dump,snapshot$' "$T/show"
assert_grep '^snapshot no comm table, peer table or op ring' "$T/show"
assert_no_grep '^(comms|peers|records) ' "$T/show"
assert_grep '^  thread 10007 "train" regs-syscall$' "$T/show"
assert_grep '^    #0 0x[0-9a-f]+ compile_step\+0x24 \(train\+0x[0-9a-f]+\)$' "$T/show"
assert_grep '^  thread 10008 "pt_autograd" regs-syscall$' "$T/show"

note "the reader: only a snapshot may have no ring, and a snapshot has none"
f="$T/one/gen-snapshot/node0.10000.snapshot.seg"
cp "$f" "$T/noflag.seg"
cp "$f" "$T/ring.seg"
python3 - "$T/noflag.seg" "$T/ring.seg" <<'EOF'
import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(20); flags, = struct.unpack("<I", f.read(4))
f.seek(20); f.write(struct.pack("<I", flags & ~0x100))           # SNAPSHOT off
f = open(sys.argv[2], "r+b"); f.seek(72); f.write(struct.pack("<I", 16))   # ring_capacity 16
EOF
"$NW_CLI" show "$T/noflag.seg" > /dev/null 2> "$T/err"
assert_eq "$?" 2 "a ring of 0 records without SNAPSHOT: exit status"
assert_grep "^ncclwatch: $T/noflag.seg: ring_capacity 0 is not a power of two$" "$T/err"
"$NW_CLI" show "$T/ring.seg" > /dev/null 2> "$T/err"
assert_eq "$?" 2 "a snapshot with a ring: exit status"
assert_grep "^ncclwatch: $T/ring.seg: snapshot with comm_capacity 0, peer_capacity 0, ring_capacity 16, ring_head 0 " "$T/err"

note "1 of 8 in compile_step while 7 wait in ncclAllReduce: rank 7, from stacks"
assert_eq "$RC" 1 "minority: exit status"
assert_eq "$RCJ" 1 "minority: exit status (json)"
verdicts "$T/one.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=7 waiting=0-6 op=None seq=None comm=None" "minority: verdicts"
assert_grep '^MISSING_RANK: rank 7 is in compile_step < train_step < main, not inside NCCL, while ranks 0-6 wait inside NCCL or on the GPU \(from stacks\)' "$T/one.txt"
assert_grep '^    rank 7: from stacks: not inside NCCL: main thread: compile_step < train_step < main$' "$T/one.txt"
assert_grep '^    ranks 0-6: from stacks: waits in ncclAllReduce: futex_wait < ncclAllReduce < train_step < main$' "$T/one.txt"
assert_grep '^    from stacks: no op numbers' "$T/one.txt"

note "the minority's innermost frames differ: one group, where it leaves the others' stack"
snap inner "*=$NCCL;2=memcpy@libc.so.6<compile_step<train_step<main;6=malloc@libc.so.6<jit<compile_step<train_step<main"
verdicts "$T/inner.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=2,6 waiting=0-1,3-5,7 op=None seq=None comm=None" "one place: verdicts"
assert_grep '^MISSING_RANK: ranks 2,6 are in compile_step < train_step < main, not inside NCCL' "$T/inner.txt"

note "two different minorities: two verdicts, each naming where it is"
snap two "*=$NCCL;3=compile_step<train_step<main;5=read@libc.so.6<load_batch<data_loader<main"
verdicts "$T/two.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=3 waiting=0-2,4,6-7 op=None seq=None comm=None
MISSING_RANK culprits=5 waiting=0-2,4,6-7 op=None seq=None comm=None" "two minorities: verdicts"
assert_grep '^MISSING_RANK: rank 3 is in compile_step < train_step < main, not inside NCCL' "$T/two.txt"
assert_grep '^MISSING_RANK: rank 5 is in read < load_batch < data_loader < main, not inside NCCL' "$T/two.txt"

note "every rank inside NCCL: cannot decide, says what would"
snap all "*=$NCCL"
assert_eq "$RC" 1 "all in NCCL: exit status"
verdicts "$T/all.json" > "$T/v"
assert_eq "$(cat "$T/v")" "UNDECIDED culprits=- waiting=0-7 op=None seq=None comm=None" "all in NCCL: verdicts"
assert_grep '^UNDECIDED: every rank \(0-7\) waits inside NCCL or on the GPU \(from stacks\): stacks cannot tell which collective each is in or who is behind' "$T/all.txt"
assert_grep '^  culprits: - \(cannot decide: see the evidence\)$' "$T/all.txt"
assert_grep 'what would decide: .*ncclwatch ras.*preload' "$T/all.txt"
assert_grep '^  hint: ncclwatch ras' "$T/all.txt"
assert_no_grep 'not all in the same call' "$T/all.txt"

note "everyone in NCCL, but not in the same call: still undecided, says a desync is likely"
snap calls "*=$NCCL;4=poll@libc.so.6<ncclBroadcast@libnccl.so.2<train_step<main"
verdicts "$T/calls.json" > "$T/v"
assert_eq "$(cat "$T/v")" "UNDECIDED culprits=- waiting=0-7 op=None seq=None comm=None" "two calls: verdicts"
assert_grep 'not all in the same call' "$T/calls.txt"
assert_grep '^    rank 4: from stacks: waits in ncclBroadcast:' "$T/calls.txt"

note "half in NCCL, half elsewhere: no minority stands out: undecided, nobody blamed"
snap half "0-3=$NCCL;4-7=optimizer_step<train_step<main"
verdicts "$T/half.json" > "$T/v"
assert_eq "$(cat "$T/v")" "UNDECIDED culprits=- waiting=0-3 op=None seq=None comm=None" "half: verdicts"
assert_grep 'no minority stands out' "$T/half.txt"

note "a rank with no file at all, and one whose process is gone while another of its host runs: process gone"
snap gone "*=$NCCL" --drop 2 --gone 5 --alive 0
verdicts "$T/gone.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=2,5 waiting=0-1,3-4,6-7 op=None seq=None comm=None" "gone: verdicts"
assert_grep '^MISSING_RANK: ranks 2,5: process gone; ranks 0-1,3-4,6-7 wait inside NCCL' "$T/gone.txt"
assert_grep '^    rank 2: no snapshot and no segment \(world size 8\)' "$T/gone.txt"
assert_grep '^    rank 5: process gone: pid [0-9]+ on .* no longer runs; its main thread when attach saw it: futex_wait < ncclAllReduce' "$T/gone.txt"

note "every process gone (snapshots read after the job ended): judged by their stacks, nobody 'gone'"
snap ended "*=$NCCL;7=compile_step<train_step<main" --gone 0-7
verdicts "$T/ended.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=7 waiting=0-6 op=None seq=None comm=None" "ended: verdicts"
assert_grep 'from stacks: 8 processes of this host no longer run, and none of the job does \(read after the job ended\)' "$T/ended.txt"
assert_no_grep 'process gone' "$T/ended.txt"

note "a gone rank and a minority elsewhere: both named"
snap gone2 "*=$NCCL;6=compile_step<train_step<main" --drop 1
verdicts "$T/gone2.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=1 waiting=0,2-5,7 op=None seq=None comm=None
MISSING_RANK culprits=6 waiting=0,2-5,7 op=None seq=None comm=None" "gone and elsewhere: verdicts"

note "torch: c10d's wait (mangled, as dladdr names it), cudaStreamSynchronize, a frame in libnccl with no symbol, XLA's BlockHostUntilReady count as waiting"
snap torch "*=pthread_cond_wait@libc.so.6<_ZN4c10d16ProcessGroupNCCL8WorkNCCL4waitENSt6chrono8durationIlSt5ratioILl1ELl1000EEEE@libtorch_cuda.so<_PyEval_EvalFrameDefault@libpython3.11.so;1-2=futex_wait@libc.so.6<cudaStreamSynchronize@libcudart.so.12<_PyEval_EvalFrameDefault@libpython3.11.so;3=poll@libc.so.6<@libnccl.so.2<_PyEval_EvalFrameDefault@libpython3.11.so;4=_ZN3xla25PjRtStreamExecutorBuffer19BlockHostUntilReadyEv@libxla.so<_PyEval_EvalFrameDefault@libpython3.11.so;7=_PyEval_EvalFrameDefault@libpython3.11.so"
verdicts "$T/torch.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=7 waiting=0-6 op=None seq=None comm=None" "torch: verdicts"
assert_grep '^    rank 3: from stacks: waits in libnccl.so.2\+0x[0-9a-f]+: poll < libnccl.so.2\+0x' "$T/torch.txt"
assert_grep '^    rank 4: from stacks: waits in _ZN3xla25PjRtStreamExecutorBuffer19BlockHostUntilReadyEv:' "$T/torch.txt"

note "Python frames (FUNCTION (FILE:LINE)): torch.distributed's all_reduce waits, a user's all_reduce does not"
PYW='all_reduce (/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:2501)<train_step (train.py:40)<main (train.py:90)'
# Rank 3 as stacks print Python frames by default (the file's base name).
snap py "*=$PYW;3=all_reduce (distributed_c10d.py:2501)<train_step (train.py:40)<main (train.py:90);5=all_reduce (mymodel/sum.py:12)<train_step (train.py:40)<main (train.py:90)"
verdicts "$T/py.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=5 waiting=0-4,6-7 op=None seq=None comm=None" "python: verdicts"
assert_grep '^MISSING_RANK: rank 5 is in all_reduce \((mymodel/)?sum.py:12\) < train_step \(train.py:40\) < main \(train.py:90\), not inside NCCL' "$T/py.txt"
assert_grep 'waits in all_reduce \(/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:2501\)' "$T/py.txt"
# loss.item(): a Python thread waiting in native code under its innermost
# Python frame (with the py format, what stacks print of it is its Python
# frames alone: the engine judges the native frames under them too).
snap pynative "*=futex_wait@libc.so.6<cudaStreamSynchronize@libcudart.so.12<train_step (train.py:40)<main (train.py:90);7=compile (jit.py:12)<train_step (train.py:40)<main (train.py:90)"
verdicts "$T/pynative.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=7 waiting=0-6 op=None seq=None comm=None" "python over native: verdicts"
assert_grep '^MISSING_RANK: rank 7 is in compile \(jit.py:12\) < train_step \(train.py:40\) < main \(train.py:90\), not inside NCCL' "$T/pynative.txt"
assert_grep 'waits in cudaStreamSynchronize' "$T/pynative.txt"
snap jax "*=block_until_ready (/opt/venv/lib/python3.12/site-packages/jax/_src/array.py:610)<step (train.py:77);0=compile (/opt/venv/lib/python3.12/site-packages/jax/_src/compiler.py:238)<step (train.py:77)"
verdicts "$T/jax.json" > "$T/v"
assert_eq "$(cat "$T/v")" "MISSING_RANK culprits=0 waiting=1-7 op=None seq=None comm=None" "jax: verdicts"

note "a healthy job: nobody waits in NCCL, all busy: no culprit"
snap healthy "*=gemm_kernel_launch@libcublas.so.12<forward<train_step<main;3=read@libc.so.6<load_batch<main"
assert_eq "$RC" 0 "healthy: exit status"
verdicts "$T/healthy.json" > "$T/v"
assert_eq "$(cat "$T/v")" "HEALTHY culprits=- waiting=- op=None seq=None comm=None" "healthy: verdicts"
assert_grep '^HEALTHY: from stacks: no rank waits inside NCCL or on the GPU \(8 processes' "$T/healthy.txt"

note "two snapshots of one process (attach run twice): one process, the newer capture"
rm -rf "$T/twice"
cp -r "$T/one" "$T/twice"
python3 - "$T/twice/gen-snapshot/node0.10003.snapshot.seg" "$T/twice/gen-snapshot/node0.10003.again.seg" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
stack, = struct.unpack_from("<Q", b, 80)                   # header.stack_offset
for off in (112, stack + 88):                               # start_realtime_ns (attach: when taken), capture_ns
    v, = struct.unpack_from("<Q", b, off); struct.pack_into("<Q", b, off, v + 5 * 10**9)
open(sys.argv[2], "wb").write(b)
EOF
"$NW_CLI" diagnose --json "$T/twice" > "$T/twice.json"
python3 - "$T/twice.json" <<'EOF' || fail "two snapshots of one process"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["process_count"] == 8, j["process_count"]
p = [p for p in j["processes"] if p["rank"] == 3]
assert len(p) == 1 and p[0]["path"].endswith("node0.10003.again.seg"), p
EOF

note "a snapshot never gives op numbers or communicators"
for n in one inner two all calls half gone ended gone2 torch py pynative jax healthy; do
	sed '/^environment differences/,$d' "$T/$n.txt" > "$T/verdicts-only"   # the merged stacks number frames
	assert_no_grep '^  (op|comm):' "$T/verdicts-only"
	assert_no_grep '#[0-9]' "$T/verdicts-only"
	python3 - "$T/$n.json" <<'EOF' || fail "$n: a verdict with an op, seq or comm"
import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    for v in j["verdicts"]:
        assert v.get("op") is None and v.get("seq") is None and v.get("comm") is None, v
EOF
done
note "every JSON document validates against docs/diagnose.schema.json"
if python3 -c 'import jsonschema' 2>/dev/null; then
	for n in one inner two all calls half gone ended gone2 torch py pynative jax healthy; do
		python3 "$NW_ROOT/tests/cli/check_json.py" schema "$NW_ROOT/docs/diagnose.schema.json" "$T/$n.json" ||
			fail "$n.json does not validate"
	done
else
	echo "(no python3 jsonschema: not validated)"
fi
echo "ok"
