#!/bin/sh
# Stacks a capture could not keep are a drop too: a healthy process whose
# thread table holds one thread (NCCLWATCH_STACK_THREADS=1) is asked for a
# dump; the threads its capture left out are counted in its segment
# (threads_dropped, and a note), and `ncclwatch diagnose` names them in the
# job's header (text and JSON) and in an evidence line. Its verdict stays
# HEALTHY: no verdict of a process with a segment is judged from stacks.
# (Lost ops and communicators: tests/interpose/test-interpose-comm-reuse.sh.)
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/cli/cli-lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
. "$NW_ROOT/tests/trainer/trainer-lib.sh"
need_engine

export NCCLWATCH_STACK_THREADS=1
watched_start "$T/live.out" lost --steps 4 --bcast-every 0 --verbose --fault sleep:rank=0:step=3:ms=3600000
wait_for_line 60 'rank 0 step 3: fault sleep: sleeping' "$T/live.out"
cli_ok 0 "$T/dump" dump --job lost --wait 30 "$NCCLWATCH_DIR"
assert_grep '^dump: job lost: 1 of 1 process answered$' "$T/dump"
dump=$(find "$NCCLWATCH_DIR/lost" -name '*.dump.seg')
show "$dump" > "$T/show"
left=$(sed -nE 's/^  threads_dropped +//p' "$T/show")
[ -n "$left" ] && [ "$left" -ge 1 ] || { grep -E '^(  threads_dropped|stacks|  note)' "$T/show"; fail "threads_dropped is '$left', not >= 1"; }
assert_grep '^stacks captured .* threads=1 ' "$T/show"
assert_grep "^  note native $left threads? left out: the thread table holds 1 \\(NCCLWATCH_STACK_THREADS\\)\$" "$T/show"
trainer_kill

cli_ok 0 "$T/diag" diagnose "$NCCLWATCH_DIR/lost"
cat "$T/diag"
assert_grep "^job lost: 1 process read, .*, data lost: $left stack threads? \\(rank 0\\)\$" "$T/diag"
assert_grep '^HEALTHY: ' "$T/diag"
assert_grep "^    rank 0 lost data: $left threads? left out of its last stack capture \\(thread table full: NCCLWATCH_STACK_THREADS\\)\$" "$T/diag"
cli_ok 0 "$T/json" diagnose --json "$NCCLWATCH_DIR/lost"
python3 - "$T/json" "$left" <<'EOF' || fail "diagnose --json"
import json, sys
d = json.load(open(sys.argv[1]))
left = int(sys.argv[2])
j = d["jobs"][0]
lost = j["lost"]
assert (lost["stack_threads"], lost["ops"], lost["comms"], lost["ranks"]) == (left, 0, 0, [0]), lost
assert j["processes"][0]["threads_dropped"] == left, j["processes"]
assert d["worst"] == "HEALTHY", d["worst"]
EOF
