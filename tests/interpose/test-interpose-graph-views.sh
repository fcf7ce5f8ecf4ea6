#!/bin/sh
# A stuck graph replay as every view names it (issue 22): graph-replay with
# SCENARIO_GRAPH_SHORT=1 (rank 1 launches the graph holding AllReduce #5 9
# times, rank 0 10 times and waits in replay 10):
# - `status`: each rank's last op is the launch, with its graph:
#   last=GraphLaunch#10(graph#5:AllReduce) for rank 0 (with "(op 1 of 1
#   STARTED)" once it started: per-op events are on), #9 for rank 1;
# - `diagnose`: the verdict's op line names the replay and the graph;
# - `diagnose --json`: the verdict has op AllReduce, seq 5, replay 10 and
#   validates against docs/diagnose.schema.json;
# - `diagnose --trace`: each launch is a span "replay N of graph #5
#   (AllReduce)", cat graph, args replay/graph_first_seq; rank 0's replay 10
#   is not completed (args.until).
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
nw_use_sim
need_jsonschema
prog="$NW_BUILD/tests/corpus/scenario"
[ -x "$prog" ] || fail "$prog not built"
export NCCLWATCH_TIMEOUT=2

nw_spawn env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=views NCCLWATCH_KEEP=1 SCENARIO_GRAPH_SHORT=1 \
	"$prog" --case graph-replay --nranks 2 > "$T/out" 2>&1
parked() { [ "$(grep -c '^corpus: rank [0-9]* parked' "$T/out")" -ge 2 ]; }
nw_until 60 parked || { cat "$T/out"; fail "the ranks did not park"; }
stalled() { grep -q 'ncclwatch: stall: .*op=GraphLaunch' "$T/out"; }
nw_until 60 stalled || { cat "$T/out"; fail "no stall line for the stuck replay"; }
dir="$NCCLWATCH_DIR/views"

"$NW_CLI" status "$dir" > "$T/status.txt" 2>&1
cat "$T/status.txt"
assert_grep '^[^ ]+ [0-9]+ 0 .* last=GraphLaunch#10\(graph#5:AllReduce\)(\(op 1 of 1 STARTED\))?@[0-9a-f]{16} state=(ENQUEUED|STARTED) ' "$T/status.txt"
assert_grep '^[^ ]+ [0-9]+ 1 .* last=GraphLaunch#9\(graph#5:AllReduce\)@[0-9a-f]{16} state=COMPLETED ' "$T/status.txt"

"$NW_CLI" diagnose "$dir" > "$T/diagnose.txt" 2>&1
cat "$T/diagnose.txt"
assert_grep '^  op: replay 10 of the graph holding AllReduce #5 on comm [0-9a-f]{16} \(2 ranks\)$' "$T/diagnose.txt"

"$NW_CLI" diagnose --json "$dir" > "$T/diagnose.json" 2>/dev/null
schema_ok "$T/diagnose.json"
python3 - "$T/diagnose.json" <<'PY' || fail "diagnose --json: no MISSING_RANK verdict on replay 10 of the graph of AllReduce #5"
import json, sys
doc = json.load(open(sys.argv[1]))
v = [v for j in doc["jobs"] for v in j["verdicts"]][0]
print(v["kind"], v["op"], v["seq"], v.get("replay"), v["culprits"], v["waiting"])
sys.exit(0 if (v["kind"], v["op"], v["seq"], v.get("replay"), v["culprits"], v["waiting"]) ==
         ("MISSING_RANK", "AllReduce", 5, 10, [1], [0]) else 1)
PY

"$NW_CLI" diagnose --trace "$T/trace.json" "$dir" > /dev/null 2>&1
python3 - "$T/trace.json" <<'PY' || fail "diagnose --trace: the replays are not spans named by graph and replay"
import json, sys
doc = json.load(open(sys.argv[1]))
evs = doc["traceEvents"] if isinstance(doc, dict) else doc
spans = {}
for e in evs:
    if e.get("ph") == "X" and e.get("cat") == "graph":
        a = e["args"]
        ok = e["name"] == "replay %d of graph #5 (AllReduce)" % a["replay"] and a["graph_first_seq"] == 5 \
            and a["graph_first_op"] == "AllReduce" and a["graph_ops"] == 1
        if not ok:
            print("bad span", e); sys.exit(1)
        spans.setdefault(e["pid"], []).append((a["replay"], "until" in a))
for pid in sorted(spans):
    print(pid, spans[pid])
want = {1: [(r, r == 10) for r in range(1, 11)], 2: [(r, False) for r in range(1, 10)]}
sys.exit(0 if {p: sorted(s) for p, s in spans.items()} == want else 1)
PY
kill -KILL "-$NW_PID" 2>/dev/null
echo "ok"
