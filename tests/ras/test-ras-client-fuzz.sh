#!/bin/sh
# The RAS client against a peer that talks nonsense (tests/ras/ras_fake_server.py:
# random bytes, wrong handshakes, truncated and mutated JSON and text
# reports, an endless stream, silence, a slow drip, a reset): every query
# ends within its --timeout (bounded here), exits 0 (a report it could read)
# or 2 with exactly one line on stderr, never crashes. Then diagnose reads
# mutated saved reports: exit 1 or 2, never a crash.
. "$NW_ROOT/tests/lib.sh"
rounds=$((150 * ${NW_FUZZ_ROUNDS:-1}))
nw_spawn python3 "$NW_ROOT/tests/ras/ras_fake_server.py" "$T/port" 42
nw_until 30 test -s "$T/port" || fail "fake server did not start"
port=$(cat "$T/port")
ok=0 refused=0 i=0
while [ $i -lt $rounds ]; do
	nw_bounded 10 "$NW_CLI" ras --addr "127.0.0.1:$port" --timeout 1 > "$T/o" 2> "$T/e"
	rc=$?
	case $rc in
		0) ok=$((ok + 1)) ;;
		2) refused=$((refused + 1))
		   [ "$(wc -l < "$T/e")" = 1 ] || { cat "$T/e"; fail "round $i: not one line on stderr"; }
		   grep -q '^ncclwatch ras: ' "$T/e" || { cat "$T/e"; fail "round $i: unexpected message"; } ;;
		124) fail "round $i: the client did not end within 10 s (its timeout is 1 s)" ;;
		*) cat "$T/e"; fail "round $i: exit status $rc" ;;
	esac
	i=$((i + 1))
done
echo "client fuzz: $rounds queries, $ok reports read, $refused refused with one line"
[ $ok -gt 0 ] && [ $refused -gt 0 ] || fail "the fuzz never hit one of the two outcomes"
grep -h '^ncclwatch ras: ' "$T/e" | head -3

note "diagnose of mutated saved reports"
cat > "$T/base.json" <<'J'
{
  "nccl_version": "2.28.9",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2026-11-23 23:00:00",
  "communicators_count": 1,
  "communicators": [
    {
      "hash": "0x1234",
      "secondary_hash": "0x1:0x2",
      "size": 3,
      "ranks_count": 2,
      "missing_ranks_count": 1,
      "ranks": [
        { "rank": 0, "host": "h", "pid": 10, "cuda_dev": 0, "nvml_dev": 0,
          "status": { "init_state": 0, "async_error": 0, "finalize_called": false, "destroy_flag": false, "abort_flag": false },
          "collective_counts": { "Broadcast": 0, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0, "AllReduce": 5 } },
        { "rank": 1, "host": "h", "pid": 11, "cuda_dev": 1, "nvml_dev": 1,
          "status": { "init_state": 0, "async_error": 1, "finalize_called": false, "destroy_flag": false, "abort_flag": false },
          "collective_counts": { "Broadcast": 0, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0, "AllReduce": 4 } }
      ],
      "missing_ranks": [
        { "rank": 2, "host": "h", "pid": 12, "cuda_dev": 2, "nvml_dev": 2
          "status": { "unresponsive": true, "considered_dead": true } }
      ]
    }
  ],
  "ras": { "collection_time_sec": 0.001, "timeouts_count": 0 }
}
J
"$NW_CLI" diagnose "$T/base.json" > "$T/base.diag"; rc=$?
cat "$T/base.diag"
assert_eq "$rc" 1 "diagnose of the base report"
assert_grep '^GPU_FAULT: rank 1: comm 0000000000001234 reports async error ncclUnhandledCudaError ' "$T/base.diag"
python3 - "$T" "$rounds" <<'PY' || exit 1
import random, subprocess, sys, os
T, rounds = sys.argv[1], int(sys.argv[2])
rng = random.Random(11)
base = open(os.path.join(T, "base.json"), "rb").read()
cli = os.environ["NW_BUILD"] + "/bin/ncclwatch"
bad = 0
for i in range(rounds):
    b = bytearray(base)
    for _ in range(rng.randint(1, 6)):
        j = rng.randrange(len(b))
        op = rng.randrange(3)
        if op == 0: b[j] = rng.randrange(256)
        elif op == 1: del b[j:j + rng.randint(1, 30)]
        else: b = b[:j]
    p = os.path.join(T, "m.json")
    open(p, "wb").write(bytes(b))
    r = subprocess.run([cli, "diagnose", p], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
    if r.returncode not in (1, 2):
        print("round %d: exit %d: %s" % (i, r.returncode, r.stderr[:300]))
        sys.exit(1)
    if r.returncode == 2 and r.stderr.count(b"\n") != 1:
        print("round %d: %r" % (i, r.stderr))
        sys.exit(1)
    bad += r.returncode == 2
print("parser fuzz: %d mutated reports, %d refused with one line" % (rounds, bad))
PY
