#!/bin/sh
# Communicator slots are reused, and what is lost is said (issue 25, item 5).
#
# (a) A process makes, uses and destroys 200 communicators (100 cycles of an
#     ncclCommInitAll pair: 1 to 3 all-reduces on both, a send from rank 0
#     to 1, both destroyed) with the default 64 comm slots: every op is
#     recorded (counted from `ncclwatch show`), the slots of destroyed comms
#     are reused (every comm made took one: the slots' generations add up),
#     each comm's positions are its own (the watchdog sees most ops complete
#     after their comm's slot went to a later comm, whose own count
#     differs), the old comms' ops stay readable with their comm id, and
#     diagnose says HEALTHY with nothing lost.
# (b) A process with more live communicators than slots (NCCLWATCH_COMMS=2,
#     two pairs alive at once): the ops of the two it could not record are
#     counted, and diagnose's header, text and JSON say what was lost, and
#     the verdict is not HEALTHY.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
nw_use_sim
PROG="$NW_PROGS/nccl-comm-cycles"
[ -x "$PROG" ] || fail "$PROG not built"

# count KIND SHOW: op records of that kind.
count() { grep -Ec "^  op [0-9]+ .* $1 comm=" "$2"; }
# header KEY SHOW: a header field's value.
header() { sed -nE "s/^  $1 +//p" "$2"; }

note "(a) 100 cycles of a comm pair made, used and destroyed: 200 comms, 64 slots"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=cycles NCCLWATCH_KEEP=1 "$PROG" 100 1 \
	> "$T/a.out" 2>&1 || { cat "$T/a.out"; fail "nccl-comm-cycles 100 1 failed"; }
assert_grep '^done cycles=100 comms=200$' "$T/a.out"
assert_no_grep '^ncclwatch:' "$T/a.out"
assert_eq "$(segments "$NCCLWATCH_DIR/cycles" | wc -l)" 1 "segments"
show "$NCCLWATCH_DIR/cycles" > "$T/a.show"
assert_eq "$(header ops_dropped "$T/a.show")" 0 "ops_dropped"
assert_eq "$(header comms_dropped "$T/a.show")" 0 "comms_dropped"
assert_eq "$(header comm_reuses "$T/a.show")" 136 "comm slots reused (200 comms, 64 slots)"
assert_no_grep '^  flags .*comms_full' "$T/a.show"
assert_grep '^comms count=64 capacity=64$' "$T/a.show"
# Cycle k: 2 inits, k % 3 + 2 groups of 2 ops (and their start and end
# records), 2 destroys: 8 + 4 (k % 3 + 1) records; 199 all-reduce groups.
assert_grep '^records shown=1596 valid=1596 torn=0 overwritten=0 unpublished=0 head=1596 ' "$T/a.show"
assert_eq "$(count CommInit "$T/a.show")" 200 "CommInit records"
assert_eq "$(count AllReduce "$T/a.show")" 398 "AllReduce records"
assert_eq "$(count Send "$T/a.show")" 100 "Send records"
assert_eq "$(count Recv "$T/a.show")" 100 "Recv records"
assert_eq "$(count CommDestroy "$T/a.show")" 200 "CommDestroy records"
# Every op completed (the watchdog followed each, its comm's slot reused or not).
assert_eq "$(grep -E '^  op [0-9]+ .* (AllReduce|Send|Recv) comm=' "$T/a.show" | grep -vc ' state=COMPLETED ')" 0 \
	"ops not COMPLETED"
# The old comms' ops are readable: 100 comm ids, each all-reduced by rank 0/2 and 1/2.
sed -nE 's/^  op [0-9]+ .* AllReduce comm=([0-9a-f]+) rank=([01])\/2 seq=1 .*/\1 \2/p' "$T/a.show" | sort > "$T/a.ids"
assert_eq "$(wc -l < "$T/a.ids")" 200 "(comm id, rank) pairs of the all-reduces"
assert_eq "$(cut -d' ' -f1 "$T/a.ids" | sort -u | wc -l)" 100 "comm ids of the all-reduces"
# Every comm took a slot: the 64 slots' generations (comms each held before
# its last) add up to the 136 reuses.
assert_eq "$(sed -nE 's/^  comm [0-9]+ .* gen=([0-9]+) .*/\1/p' "$T/a.show" | awk '{ s += $1 } END { print s }')" 136 \
	"generations of the slots"
# Each slot's last comm has its own positions, not an older comm's.
assert_eq "$(grep -Ec '^  comm [0-9]+ .* state=DESTROYED .* coll_enqueued=([1-3]) coll_started=\1 coll_completed=\1 p2p_enqueued=1 p2p_completed=1 ' "$T/a.show")" 64 \
	"destroyed comms with their own positions"
# Peer entries: one per pair and direction; those of comms whose slot was reused name no comm.
assert_grep '^peers count=200 capacity=1024$' "$T/a.show"
assert_eq "$(grep -c '^  peer [0-9]* comm=[0-9]* id=- ' "$T/a.show")" 136 "peer entries of comms gone from the table"
cli_ok 0 "$T/a.diag" diagnose "$NCCLWATCH_DIR/cycles"
cat "$T/a.diag"
# one process drives both ranks (a comm on each of two devices)
assert_grep '^job cycles: 1 process read \(2 ranks\), world size 2, ranks missing: none, timeout 60s$' "$T/a.diag"
assert_grep '^HEALTHY: ' "$T/a.diag"
cli_ok 0 "$T/a.json" diagnose --json "$NCCLWATCH_DIR/cycles"
python3 - "$T/a.json" <<'EOF' || fail "(a) diagnose --json"
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
assert d["worst"] == "HEALTHY", d["worst"]
lost = j["lost"]
assert (lost["ops"], lost["comms"], lost["process_count"]) == (0, 0, 0), lost
assert j["processes"][0]["ops_dropped"] == 0 and j["processes"][0]["comms_dropped"] == 0, j["processes"]
EOF

note "(b) 4 live comms, 2 slots: 2 comms and their 8 ops are not recorded, and diagnose says so"
nw_bounded 120 env LD_PRELOAD="$(nw_preload)" NCCLWATCH_JOB=overflow NCCLWATCH_KEEP=1 NCCLWATCH_COMMS=2 "$PROG" 1 2 \
	> "$T/b.out" 2>&1 || { cat "$T/b.out"; fail "nccl-comm-cycles 1 2 failed"; }
assert_grep '^done cycles=1 comms=4$' "$T/b.out"
assert_grep 'ncclwatch: comm table full: its 2 slots all hold live communicators \(NCCLWATCH_COMMS=2\)' "$T/b.out"
show "$NCCLWATCH_DIR/overflow" > "$T/b.show"
# Per untracked comm: its init, all-reduce, send or receive, destroy.
assert_eq "$(header ops_dropped "$T/b.show")" 8 "ops_dropped"
assert_eq "$(header comms_dropped "$T/b.show")" 2 "comms_dropped"
assert_grep '^  flags .*comms_full' "$T/b.show"
pid=$(header pid "$T/b.show")
cli_ok 1 "$T/b.diag" diagnose "$NCCLWATCH_DIR/overflow"
cat "$T/b.diag"
# the loss is the process's, counted once though it drives two ranks
assert_grep "^job overflow: 1 process read \\(2 ranks\\), world size 2, ranks missing: none, timeout 60s, data lost: 8 ops, 2 comms \\(ranks 0-1\\)\$" "$T/b.diag"
assert_no_grep '^HEALTHY' "$T/b.diag"
assert_grep '^UNDECIDED: nothing is wrong in what was recorded .*, but 8 ops and 2 communicators were not recorded: ' "$T/b.diag"
assert_grep "^    pid $pid on .* \\(ranks 0-1\\) lost data: 8 ops and 2 communicators not recorded \\(its 2 comm slots all held live communicators: NCCLWATCH_COMMS=2\\)\$" "$T/b.diag"
assert_grep '^  hint: raise NCCLWATCH_COMMS above the number of communicators alive at once$' "$T/b.diag"
cli_ok 1 "$T/b.json" diagnose --json "$NCCLWATCH_DIR/overflow"
python3 - "$T/b.json" "$pid" <<'EOF' || fail "(b) diagnose --json"
import json, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
j = d["jobs"][0]
assert d["worst"] != "HEALTHY", d["worst"]
assert all(v["kind"] != "HEALTHY" for v in j["verdicts"]), j["verdicts"]
lost = j["lost"]
assert (lost["ops"], lost["comms"], lost["comm_tables_full"], lost["process_count"]) == (8, 2, 1, 1), lost
# the process drives ranks 0 and 1 (a comm on each of two devices)
assert lost["ranks"] == [0, 1] and lost["unranked_pids"] == [], lost
p = j["processes"][0]
assert (p["ops_dropped"], p["comms_dropped"], p["comm_table_full"]) == (8, 2, True), p
assert any("8 ops and 2 communicators not recorded" in e for e in j["verdicts"][0]["evidence"]), j["verdicts"][0]
EOF
CLI_PY=
for py in /usr/bin/python3 python3; do
	"$py" -c 'import jsonschema' 2>/dev/null && { CLI_PY=$py; break; }
done
if [ -n "$CLI_PY" ]; then
	schema_ok "$T/a.json"
	schema_ok "$T/b.json"
else
	note "no python3 with the jsonschema module: the documents were not checked against the schema"
fi
