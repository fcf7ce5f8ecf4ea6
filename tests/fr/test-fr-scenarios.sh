#!/bin/sh
# Flight Recorder dumps written by tests/gen/frgen.py for every scenario
# torch's analyzer knows and ours beyond it: `diagnose` gives the verdict
# kind and the exact culprit set. Pickles (protocol 2, like torch's own),
# the JSON form, and old/new dump versions.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
need_engine
. "$NW_ROOT/tests/fr/fr-lib.sh"

fr_expect healthy HEALTHY -
fr_expect missing-rank MISSING_RANK 7
# No file from rank 7 at all: torch's analyzer refuses to work without
# every file (check_no_missing_dump_files); ours names the rank as unknown.
fr_expect missing-file MISSING_RANK -
assert_grep '"unknown": *\[7\]' "$T/missing-file.json"
fr_expect type-mismatch MISMATCH 7
# Rank 0 is the odd one: torch's analyzer compares every rank with the
# first dump it reads and "assumes the current rank is not the source"
# (utils.py), so it blames ranks 1-7; the minority is rank 0.
fr_expect first-rank-wrong MISMATCH 0
fr_expect size-mismatch MISMATCH 1
fr_expect dtype-mismatch MISMATCH 2
fr_expect late-mismatch MISSING_RANK 1
fr_expect state-mismatch TRANSPORT_STALL -
fr_expect transport TRANSPORT_STALL -
fr_expect p2p-ok HEALTHY -
fr_expect p2p-unmatched P2P_UNMATCHED 1
# all_to_all with uneven splits is legal: no size mismatch
fr_expect alltoall-ok HEALTHY -
fr_expect multi-pg MISSING_RANK 1
fr_expect coalesced-ok HEALTHY -

note "comm_lib_version: the NCCL version among the environment differences"
fr_expect nccl-differs TRANSPORT_STALL -
"$NW_CLI" diagnose "$T/nccl-differs" > "$T/nccl.out"
assert_grep 'NCCL version' "$T/nccl.out"
assert_grep '2\.18\.1' "$T/nccl.out"

note "the JSON form, and dump versions 2.0, 2.3, 2.10"
fr_expect missing-rank MISSING_RANK 7 --json
fr_expect type-mismatch MISMATCH 7 --json
fr_expect missing-rank MISSING_RANK 7 --version 2.0 --no-frames
fr_expect size-mismatch MISMATCH 1 --version 2.3

note "text: the call site, the source's limits, the NCCL version"
"$PY" "$FRGEN" missing-rank "$T/text" > /dev/null
cli "$T/text.out" diagnose "$T/text"
assert_eq "$CLI_STATUS" 1 "exit status"
assert_grep 'called from train_step at /home/user/train.py:40' "$T/text.out"
assert_grep 'source: PyTorch Flight Recorder dumps \(version 2.10\)' "$T/text.out"
assert_grep 'no GPU start events' "$T/text.out"

note "--json validates against the schema; --trace is a trace of the 8 ranks"
if "$PY" -c 'import jsonschema' 2>/dev/null; then
	CLI_PY=$PY
	schema_ok "$T/missing-rank.json"
	schema_ok "$T/p2p-unmatched.json"
else
	echo "(no jsonschema module: the schema check is left out)"
fi

note "show: the process the engine makes of a dump; --trace: a valid trace"
cli_ok 0 "$T/show.out" show "$T/p2p-unmatched/comm_lib_trace_rank_0"
assert_grep '^flight-recorder .*comm_lib_trace_rank_0$' "$T/show.out"
assert_grep '^  peer 0 comm=0 peer=1 send_enqueued=1 send_completed=0 recv_enqueued=0 recv_completed=0$' "$T/show.out"
assert_grep ' Send comm=[0-9a-f]{16} rank=0/8 seq=1 count=256 dtype=float32 peer=1 state=STARTED from=train_step at /home/user/train.py:77$' "$T/show.out"
cli "$T/tr.out" diagnose --trace "$T/trace.json" "$T/text"
"$PY" - "$T/trace.json" <<'PY' || fail "the trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
x = [e for e in ev if e.get("ph") == "X"]
assert len({e["pid"] for e in x}) == 8, "a process per rank"
assert any(e["name"] == "AllReduce #5" for e in x), "the pending op"
PY

note "the rank: from a send/receive entry when there is one, else the name's trailing number"
mkdir -p "$T/names"
"$PY" "$FRGEN" p2p-unmatched "$T/p2p2" > /dev/null
# rank 0's dump (it sends 0->1) under a name that says nothing, rank 1's
# (collectives only) under a name whose number is its rank
cp "$T/p2p2/comm_lib_trace_rank_0" "$T/names/dump-of-the-sender"
for r in 1 2 3 4 5 6 7; do cp "$T/p2p2/comm_lib_trace_rank_$r" "$T/names/trace_$r"; done
cli "$T/names.out" diagnose --json "$T/names"
assert_eq "$CLI_STATUS" 1 "exit status"
"$PY" - "$T/names.out" <<'PY' || fail "ranks from the content"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["jobs"][0]["verdicts"][0]
assert v["kind"] == "P2P_UNMATCHED" and v["culprits"] == [1], v
PY
cp "$T/p2p2/comm_lib_trace_rank_3" "$T/names/no-number-here"
usage_error 'which rank wrote this Flight Recorder dump is not known' diagnose "$T/names/no-number-here"

note "an unknown version: one line naming it, exit 2"
"$PY" "$FRGEN" missing-rank "$T/v3" --version 3.0 > /dev/null
usage_error 'Flight Recorder dump version "3.0" is not one this reader knows' diagnose "$T/v3"

note "a directory mixing dumps with segments of another job"
"$PY" "$FRGEN" size-mismatch "$T/mix" > /dev/null
"$NW_BUILD/tests/progs/mkseg" "$T/mix/other.1.seg" > /dev/null 2>&1 || true
cli "$T/mix.out" diagnose "$T/mix"
assert_grep '^job fr:mix: 8 processes read' "$T/mix.out"
assert_grep '^MISMATCH: ' "$T/mix.out"
echo ok
