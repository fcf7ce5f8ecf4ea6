#!/bin/sh
# A point-to-point hang read by `ncclwatch attach` (no preload, NCCL RAS
# on): the trainer's pipeline, rank 1 sends its activations to rank 3
# instead of 2. Rank 2 waits in its receive, so it launches one AllReduce
# fewer than the others; RAS counts no send/receive and attach's snapshot
# records no op (neither source has the send_recv capability), and rank
# 2's stack waits inside NCCL: being behind in launch counts does not make
# it the culprit. It was blamed ("rank 2 never launched the AllReduce the
# others launched last", corpus case trainer-p2p, attach view: a waiting
# rank blamed); now no rank is, and the verdict says why.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

trainer_start "$T/p2p.log" --nranks 4 --steps 10 --count 50 --bcast-every 0 --pipeline --verbose --fault p2p:rank=1:step=3
wait_for_ranks 120 "$T/p2p.log" ' step 2 done$' 0 1 2 3
# rank 2 stays behind the others' AllReduce launches (it waits in its receive)
behind() { "$NW_CLI" ras > "$T/ras.txt" 2>&1 && grep -Eq '^  rank 2: RUNNING AllReduce launches=' "$T/ras.txt" &&
	grep -Eq '^  ranks 0-1,3: RUNNING AllReduce launches=' "$T/ras.txt"; }
nw_until 60 behind || { cat "$T/ras.txt" >&2; fail "rank 2 never showed behind in RAS's counts"; }
sleep 3
"$NW_CLI" attach --no-python --tree "$TRAINER_PID" -o "$T/att" > "$T/att.out" 2>&1
rc=$?
grep -v '^    #' "$T/att.out" | sed 's/^/    /'
assert_eq "$rc" 1 "attach's exit status (a problem found)"
assert_eq "$(grep -c '^job ' "$T/att.out")" 1 "jobs"
assert_grep '^MISSING_RANK: rank 2 launched fewer AllReduce than the others on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=[0-9]+ on the others\) but waits inside NCCL or on the GPU' "$T/att.out"
assert_grep '^    rank 2 launched fewer AllReduce than the others but waits in [^ ]+ \(stacks\), not in that collective.s call: NCCL RAS counts no send/receive' "$T/att.out"
assert_no_grep '^  culprits: .*2' "$T/att.out"
"$NW_CLI" diagnose --json "$T/att" > "$T/att.json"
python3 - "$T/att.json" <<'EOF' || fail "a verdict blames rank 2, or rank 2 does not see launch_only"
import json, sys
d = json.load(open(sys.argv[1]))
for j in d["jobs"]:
    for v in j["verdicts"]:
        assert 2 not in v["culprits"], v["summary"]
    sees = {p["rank"]: p["sees"] for p in j["processes"]}
    assert sees[2] == ["stacks", "launch_only"], sees
EOF
trainer_kill
