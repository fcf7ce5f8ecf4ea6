#!/bin/sh
# The simulated NCCL's RAS endpoint, talked to with raw lines, checked
# against what NCCL 2.28.9's src/ras/client_support.cc answers (docs/ras.md):
# the handshake, TIMEOUT and SET FORMAT replies and errors, case-insensitive
# commands, \r\n, a line of 1,024 bytes without a newline closing the
# connection, the text and JSON reports (field names and order), the launch
# counts of a rank that skipped an all-reduce, every process listening on
# the one address (SO_REUSEPORT), and a killed rank reported as missing,
# unresponsive, with NCCL 2.28.9's missing comma in its JSON.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
. "$NW_ROOT/tests/ras/ras-lib.sh"

trainer_start "$T/out" --nranks 4 --steps 24 --count 64 --bcast-every 3 --verbose --fault skip:rank=2:step=5
wait_for_line 120 'rank 2 step 5: fault skip: not issuing the all-reduce$' "$T/out"
wait_for_ranks 120 "$T/out" ' step 4 done$' 0 1 3
nw_until 60 ras_answers 4 || fail "RAS never listed the 4 ranks"
assert_eq "$(listeners)" 4 "processes listening on $NCCL_RAS_ADDR (SO_REUSEPORT)"

note "handshake and commands"
assert_eq "$(raw lines:1 'CLIENT PROTOCOL 2\n')" "SERVER PROTOCOL 2" "handshake"
assert_eq "$(raw lines:1 'client protocol 99\n')" "SERVER PROTOCOL 2" "any client version, any case"
assert_eq "$(raw lines:1 'TIMEOUT 5\n')" "OK" "TIMEOUT 5"
assert_eq "$(raw lines:1 'timeout 3\r\n')" "OK" "TIMEOUT with \\r\\n"
assert_eq "$(raw lines:1 'TIMEOUT -1\n')" "ERROR: Invalid timeout value -1" "negative timeout"
assert_eq "$(raw lines:1 'TIMEOUT 5s\n')" "ERROR: Invalid timeout value 5s" "timeout with a unit"
assert_eq "$(raw lines:1 'SET FORMAT json\n')" "OK" "SET FORMAT json"
assert_eq "$(raw lines:1 'Set Format TEXT\n')" "OK" "SET FORMAT text"
assert_eq "$(raw lines:1 'SET FORMAT xml\n')" "ERROR: Invalid format xml" "unknown format"
assert_eq "$(raw lines:1 'hello\n')" "ERROR: Unknown command hello" "unknown command"
assert_eq "$(raw lines:1 'STATUSX\n')" "ERROR: Unknown command STATUSX" "STATUS is matched whole"
assert_eq "$(raw lines:3 'CLIENT PROTOCOL 2\nTIMEOUT 1\nbogus\n' | tr '\n' '|')" "SERVER PROTOCOL 2|OK|ERROR: Unknown command bogus|" "pipelined commands"
long=$(python3 -c 'print("x" * 1023, end="")')
assert_eq "$(raw lines:1 "$long\\n" | cut -c1-24)" "ERROR: Unknown command x" "a 1,023-byte line still fits"
over=$(python3 -c 'print("y" * 1024, end="")')
out=$(raw close "$over"); rc=$?
assert_eq "$rc:$out" "0:" "1,024 bytes without a newline: NCCL closes the connection without a reply"

note "text report"
raw close 'CLIENT PROTOCOL 2\nSTATUS\n' > "$T/text.out" || fail "STATUS: the server did not close the connection"
sed 's/^/    /' "$T/text.out"
assert_grep '^SERVER PROTOCOL 2$' "$T/text.out"
assert_grep '^NCCL version 2\.28\.9 compiled with CUDA [0-9]+\.[0-9]+$' "$T/text.out"
assert_grep '^CUDA runtime version [0-9]+, driver version [0-9]+$' "$T/text.out"
assert_grep '^Job summary$' "$T/text.out"
assert_grep '^      1          4            1          4        4$' "$T/text.out"
assert_grep '^Communicators\.\.\. \([0-9.]+s\)$' "$T/text.out"
assert_grep '^Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors$' "$T/text.out"
assert_grep '^    0         1         1         4         4         4   RUNNING  MISMATCH$' "$T/text.out"
assert_grep '^#0-0 \([0-9a-f]{16}\) MISMATCH$' "$T/text.out"
assert_grep '^  Communicator ranks have different AllReduce operation counts$' "$T/text.out"
assert_grep '^  3 ranks have launched up to operation 6$' "$T/text.out"
assert_grep '^  Rank 2 has launched up to operation 5 -- GPU 0 managed by process [0-9]+ on node 127\.0\.0\.1$' "$T/text.out"
assert_no_grep 'Broadcast operation counts' "$T/text.out"

note "JSON report"
raw close 'SET FORMAT json\nVERBOSE STATUS\n' > "$T/json.out" || fail "JSON STATUS did not close"
python3 - "$T/json.out" <<'PY' || fail "JSON report differs from NCCL 2.28.9's"
import json, sys
text = open(sys.argv[1]).read()
assert text.startswith("OK\n{\n  \"nccl_version\": \"2.28.9\",\n"), text[:80]
doc = json.loads(text[3:])
assert list(doc) == ["nccl_version", "cuda_runtime_version", "cuda_driver_version", "timestamp",
                     "communicators_count", "communicators", "ras"], list(doc)
assert list(doc["ras"]) == ["collection_time_sec", "timeouts_count"]
assert doc["communicators_count"] == len(doc["communicators"]) == 1
c = doc["communicators"][0]
assert list(c) == ["hash", "secondary_hash", "size", "ranks_count", "missing_ranks_count", "ranks", "missing_ranks"], list(c)
assert c["hash"].startswith("0x") and c["size"] == 4 and c["ranks_count"] == 4 and c["missing_ranks_count"] == 0
for i, r in enumerate(c["ranks"]):
    assert list(r) == ["rank", "host", "pid", "cuda_dev", "nvml_dev", "status", "collective_counts"], list(r)
    assert r["rank"] == i
    assert list(r["status"]) == ["init_state", "async_error", "finalize_called", "destroy_flag", "abort_flag"]
    assert r["status"]["init_state"] == 0 and r["status"]["async_error"] == 0
    assert list(r["collective_counts"]) == ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]
    cc = r["collective_counts"]
    # launched, not completed: rank 2 skipped step 5's all-reduce; the others launched it and wait in it
    assert cc["AllReduce"] == (5 if i == 2 else 6), (i, cc)
    assert cc["Broadcast"] == 2 and cc["Reduce"] == cc["AllGather"] == cc["ReduceScatter"] == 0, (i, cc)
print("JSON report: fields, order and counts as NCCL 2.28.9")
PY

note "the client"
"$NW_CLI" ras > "$T/ras.out" 2> "$T/ras.err" || { cat "$T/ras.err"; fail "ncclwatch ras failed"; }
cat "$T/ras.out"
assert_grep "^RAS at 127\.0\.0\.1:$RAS_PORT: NCCL 2\.28\.9, 1 communicator" "$T/ras.out"
assert_grep '^  ranks 0-1,3: RUNNING Broadcast launches=2 AllReduce launches=6$' "$T/ras.out"
assert_grep '^  rank 2: RUNNING Broadcast launches=2 AllReduce launches=5$' "$T/ras.out"
env -u NCCL_RAS_ADDR "$NW_CLI" ras --pid "$(rank_pids | tail -n 1)" > "$T/ras-pid.out" || fail "ncclwatch ras --pid failed"
assert_grep "^RAS at 127\.0\.0\.1:$RAS_PORT: NCCL 2\.28\.9, 1 communicator" "$T/ras-pid.out"
"$NW_CLI" ras --text > "$T/ras-text.out" || fail "ncclwatch ras --text failed"
assert_grep '\(text format: outliers only\)' "$T/ras-text.out"
assert_grep '^  rank 2: RUNNING AllReduce launches=5$' "$T/ras-text.out"
"$NW_CLI" ras --text --save "$T/saved.txt" > /dev/null || fail "ncclwatch ras --text --save failed"
assert_grep '^NCCL version 2\.28\.9 ' "$T/saved.txt"
"$NW_CLI" diagnose "$T/saved.txt" > "$T/diag-text.out"
cat "$T/diag-text.out"
assert_grep '^MISSING_RANK: rank 2 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=5 there, launches=6 on 3 peers\)' "$T/diag-text.out"
assert_grep '3 ranks launched AllReduce 6 times \(text report: only the outliers are listed by rank\)' "$T/diag-text.out"
assert_grep '^  op: AllReduce launches=6 on comm' "$T/diag-text.out"
assert_grep '^  culprits: 2$' "$T/diag-text.out"

note "a killed rank"
victim=$(rank_pids | sed -n 2p)
kill -KILL "$victim"
gone() { "$NW_CLI" ras --json | grep -q '"unresponsive": true'; }
nw_until 60 gone || fail "the killed rank never showed as unresponsive"
raw close 'SET FORMAT json\nSTATUS\n' > "$T/missing.out"
sed -n '/missing_ranks": \[/,$p' "$T/missing.out" | head -14 | sed 's/^/    /'
assert_grep '^      "missing_ranks_count": 1,$' "$T/missing.out"
# NCCL 2.28.9 writes no comma after a missing rank's nvml_dev (fixed in 2.29.2)
python3 - "$T/missing.out" "$victim" <<'PY' || fail "missing rank not as NCCL 2.28.9 writes it"
import sys
t = open(sys.argv[1]).read()
want = ('          "pid": %s,\n          "cuda_dev": 0,\n          "nvml_dev": 0\n          "status": {\n'
        '            "unresponsive": true,\n            "considered_dead": false\n' % sys.argv[2])
assert want in t, t[-600:]
PY
"$NW_CLI" ras --save "$T/saved.json" > "$T/ras2.out" || fail "ncclwatch ras --save failed"
assert_grep "^  missing rank [0-9]: pid $victim on 127\.0\.0\.1: unresponsive$" "$T/ras2.out"
cmp -s "$T/saved.json" "$T/missing.out" && fail "saved file should be the report only"
"$NW_CLI" diagnose "$T/saved.json" > "$T/diag.out"; rc=$?
cat "$T/diag.out"
assert_eq "$rc" 1 "diagnose exit status"
assert_grep "rank [0-9] of comm 0x[0-9a-f]{16}: process gone or unreachable: pid $victim on 127\.0\.0\.1, did not answer RAS" "$T/diag.out"
assert_grep '^MISSING_RANK: rank 2 never launched the AllReduce the others launched last on comm 0x[0-9a-f]{16} \(RAS: AllReduce launches=5 there, launches=6 on 2 peers\)' "$T/diag.out"
trainer_kill
