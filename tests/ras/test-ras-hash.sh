#!/bin/sh
# RAS's comm hash is NCCL's commHash, not the simulation's key: for a comm
# split from the world one (the trainer's --pipeline: color 0, the parent's
# first split), NCCL computes digestHash(eatHash(parent commHash),
# eatHash(splitCount = 1), eatHash(color = 0)) (init.cc, bitops.h). A
# Python port of bitops.h's getHash family recomputes it from the world
# comm's hash in the report. Also: send/receive are not counted (the
# pipeline comm only does send/recv: all counts 0, and no verdict).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"
note "a running job moves: --settle says so"
trainer_start "$T/run.out" --nranks 2 --steps 1000000 --count 64 --bcast-every 0 --verbose
wait_for_ranks 120 "$T/run.out" ' step 3 done$' 0 1
# (polled: under load a 0.5 s window may see no launch; a hung job never does)
moved() { "$NW_CLI" ras --settle 0.5 > "$T/settle.out" && grep -q '^progress: ' "$T/settle.out"; }
nw_until 60 moved || { cat "$T/settle.out"; fail "a running job never showed progress"; }
cat "$T/settle.out"
assert_grep '^progress: [12] ranks? launched more collectives in 0\.5 s: the job moves, count differences are in-flight ops$' "$T/settle.out"
trainer_kill

# hung in all-reduce #5 (a running job's ranks are caught at different
# counts: RAS is a snapshot of launches)
NCCLSIM_FAULT=stall:seq=5 trainer_start "$T/out" --nranks 4 --steps 1000000 --count 64 --bcast-every 0 --pipeline --verbose
wait_for_ranks 120 "$T/out" ' step 3 done$' 0 1 2 3
at5() { "$NW_CLI" ras | grep -q '^  ranks 0-3: RUNNING AllReduce launches=5$'; }
nw_until 60 at5 || fail "the world comm never reached AllReduce 5 everywhere"
"$NW_CLI" ras --settle 0.5 > "$T/settle2.out" || fail "ncclwatch ras --settle failed"
assert_grep '^no progress in 0\.5 s: no launch count grew$' "$T/settle2.out"
nw_until 60 ras_answers 8 || fail "RAS never listed both comms"
"$NW_CLI" ras --json > "$T/r.json" || fail "ncclwatch ras failed"
"$NW_CLI" ras
python3 - "$T/r.json" <<'PY' || fail "commHash of the split comm is not NCCL's"
import json, struct, sys
M = (1 << 64) - 1
def eat(acc, b):
    acc[0] ^= len(b)
    while b:
        acc[0] = (acc[0] + acc[1]) & M; acc[1] ^= acc[0]; acc[0] ^= acc[0] >> 31
        acc[0] = (acc[0] * 0x9de62bbc8cef3ce3) & M; acc[1] ^= acc[1] >> 32; acc[1] = (acc[1] * 0x485cd6311b599e79) & M
        chunk, b = b[:8], b[8:]
        acc[0] = (acc[0] + int.from_bytes(chunk.ljust(8, b"\0"), "little")) & M
def digest(acc):
    h = acc[0]; h ^= h >> 31; h = (h * 0xbac3bd562846de6b) & M; h = (h + acc[1]) & M; h ^= h >> 32
    return (h * 0x995a187a14e7b445) & M
doc = json.load(open(sys.argv[1]))
comms = doc["communicators"]
assert len(comms) == 2, comms
world = [c for c in comms if any(r["collective_counts"]["AllReduce"] for r in c["ranks"])]
pipe = [c for c in comms if not any(sum(r["collective_counts"].values()) for r in c["ranks"])]
assert len(world) == 1 and len(pipe) == 1, "one comm with all-reduces, one with only send/recv (not counted)"
parent = int(world[0]["hash"], 16)
acc = [1, 1]
eat(acc, struct.pack("<Q", parent)); eat(acc, struct.pack("<i", 1)); eat(acc, struct.pack("<i", 0))
want = digest(acc)
got = int(pipe[0]["hash"], 16)
print("world 0x%x, split: expected 0x%x, RAS says 0x%x" % (parent, want, got))
assert got == want
PY
note "a comm that only sends and receives: nothing for RAS to blame"
"$NW_CLI" diagnose "$T/r.json" > "$T/diag.out"
cat "$T/diag.out"
assert_eq "$(grep -c '^TRANSPORT_STALL: ' "$T/diag.out")" 1 "equal counts verdicts (the all-reduce comm only)"
assert_no_grep 'launched the same collectives \(none\)' "$T/diag.out"
trainer_kill
