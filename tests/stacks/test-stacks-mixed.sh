#!/bin/sh
# Mixed jobs: processes with the preload (segments, nwgen's scenarios) and
# attach's snapshots of the same job read together by the real CLI. A
# process with both files is one process (host, pid, start ticks), in the
# segment's job, with attach's stacks when its own capture is older or
# absent; a snapshot of a rank with no segment joins that job; the verdict
# is the segments' (op numbers and all), and a rank the segments cannot
# judge (no file of the preload) is named from its stack.
. "$NW_ROOT/tests/lib.sh"
NW_GEN="$NW_BUILD/tests/progs/nwgen"
[ -x "$NW_GEN" ] || fail "$NW_GEN is not built"

WAIT='futex_wait@libc.so.6<cudaStreamSynchronize@libcudart.so.12<attached_wait_for_step<train_step<main'

# mixed NAME SCENARIO SPEC [NWGEN OPTIONS...]: 8 ranks into $T/NAME, diagnose
# into $T/NAME.txt and $T/NAME.json.
mixed() {
	_n=$1 _s=$2 _spec=$3
	shift 3
	rm -rf "${T:?}/$_n"
	"$NW_GEN" --scenario "$_s" --ranks 8 --out "$T/$_n" --snapshot "$_spec" "$@" > "$T/$_n.gen" 2>&1 ||
		{ cat "$T/$_n.gen" >&2; fail "$_n: nwgen"; }
	"$NW_CLI" diagnose "$T/$_n" > "$T/$_n.txt" 2> "$T/$_n.err"
	RC=$?
	"$NW_CLI" diagnose --json "$T/$_n" > "$T/$_n.json" 2>> "$T/$_n.err"
	[ ! -s "$T/$_n.err" ] || { cat "$T/$_n.err" >&2; fail "$_n: diagnose wrote to stderr"; }
}

# summary FILE.json: "job=NAME procs=N snapshots=N attached=N", then
# "KIND culprits=... waiting=... unknown=... op=... seq=..." per verdict.
summary() {
	python3 - "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
def rs(v):
    return ",".join(str(x) for x in v) if v else "-"
for j in d["jobs"]:
    ps = j["processes"]
    print("job=%s procs=%d snapshots=%d attached=%d" % (j["name"], j["process_count"],
          sum(p["snapshot"] for p in ps), sum(p["stacks_from_attach"] for p in ps)))
    for v in j["verdicts"]:
        print("%s culprits=%s waiting=%s unknown=%s op=%s seq=%s" % (v["kind"], rs(v["culprits"]),
              rs(v["waiting"]), rs(v["unknown"]), v["op"], v["seq"]))
EOF
}

note "rank 5 runs without the preload (no segment), attach saw it in compile_step: the culprit, from stacks"
mixed a missing_files "*=$WAIT;5=compile_step<train_step<main"
assert_eq "$RC" 1 "exit status"
summary "$T/a.json" > "$T/s"
assert_eq "$(cat "$T/s")" "job=gen-missing_files procs=8 snapshots=1 attached=8
MISSING_RANK culprits=5 waiting=0,1,2,3,4,6,7 unknown=- op=AllReduce seq=301" "mixed: jobs and verdicts"
assert_grep '^MISSING_RANK: ranks 0-4,6-7 wait in AllReduce #301 on comm [0-9a-f]{16} \(8 ranks\)' "$T/a.txt"
assert_grep 'from stacks: rank 5 \(no segment\) is not inside NCCL \(compile_step < train_step < main\): the culprit$' "$T/a.txt"
assert_grep '^    rank 5: from stacks \(attached, no preload\): not inside NCCL: compile_step < train_step < main$' "$T/a.txt"
# The segments had no capture: the merged stacks are attach's.
assert_grep '^  ranks 0-4,6-7 \(7\) thread "train":$' "$T/a.txt"
assert_grep '^    #2 attached_wait_for_step$' "$T/a.txt"
# Fingerprint fields a snapshot cannot know are no difference.
assert_grep '^environment differences: none$' "$T/a.txt"
assert_no_grep '^job attach-' "$T/a.txt"

note "the same rank without a segment, but inside NCCL by its stack: not blamed, said as it is"
mixed b missing_files "*=$WAIT"
summary "$T/b.json" > "$T/s"
assert_eq "$(sed -n 2p "$T/s")" "MISSING_RANK culprits=- waiting=0,1,2,3,4,6,7 unknown=5 op=AllReduce seq=301" "inside NCCL: not a culprit"
assert_grep '^    rank 5: from stacks \(attached, no preload\): waits in cudaStreamSynchronize:' "$T/b.txt"

note "the preload's own capture is older than attach's: attach's stacks; the verdict is the segments'"
mixed c missing_rank "*=$WAIT" --stacks
summary "$T/c.json" > "$T/s"
assert_eq "$(cat "$T/s")" "job=gen-missing_rank procs=8 snapshots=0 attached=8
MISSING_RANK culprits=5 waiting=0,1,2,3,4,6,7 unknown=- op=AllReduce seq=301" "newer stacks: jobs and verdicts"
assert_grep '^    #2 attached_wait_for_step$' "$T/c.txt"

note "attach saw only some ranks: the others keep the preload's capture"
mixed d missing_rank "0-1=$WAIT" --stacks
summary "$T/d.json" > "$T/s"
assert_eq "$(sed -n 1p "$T/s")" "job=gen-missing_rank procs=8 snapshots=0 attached=2" "two attached"
assert_grep '^  ranks 2-4,6-7 \(5\) thread "train":$' "$T/d.txt"
assert_grep '^    #1 cuStreamSynchronize$' "$T/d.txt"

note "a healthy job with the preload stays healthy with attach's stacks added"
mixed e healthy "*=gemm@libcublas.so.12<forward<train_step<main"
assert_eq "$RC" 0 "healthy: exit status"
summary "$T/e.json" > "$T/s"
assert_eq "$(cat "$T/s")" "job=gen-healthy procs=8 snapshots=0 attached=8
HEALTHY culprits=- waiting=- unknown=- op=None seq=None" "healthy: verdicts"

note "a snapshot of another process with the same pid (other start ticks) is not merged"
rm -rf "$T/f"
"$NW_GEN" --scenario missing_rank --ranks 8 --out "$T/f" > /dev/null || fail "nwgen"
"$NW_GEN" --snapshot "0=$WAIT" --drop 1-7 --ranks 8 --out "$T/f2" --job attach-other > /dev/null || fail "nwgen --snapshot"
python3 - "$T/f2"/attach-other/node0.10000.snapshot.seg <<'EOF'
import struct, sys
f = open(sys.argv[1], "r+b"); f.seek(3904); f.write(struct.pack("<Q", 777))   # proc_start_ticks
EOF
"$NW_CLI" diagnose --json "$T/f" "$T/f2" > "$T/f.json" 2> "$T/f.err" || true
summary "$T/f.json" > "$T/s"
assert_grep '^job=attach-other procs=1 snapshots=1 attached=1$' "$T/s"
assert_grep '^job=gen-missing_rank procs=8 snapshots=0 attached=0$' "$T/s"
echo "ok"
