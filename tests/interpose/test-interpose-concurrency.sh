#!/bin/sh
# 16 threads on 4 communicators of one process (NCCLSIM_NULL=1), while
# `ncclwatch show` reads the live segment again and again:
# - small ring (wrap-around many times over): every record any read
#   accepted is whole (its fields belong together, see check_records.awk),
#   none twice; at the end the ring holds the newest records and every
#   comm's coll_enqueued is exact;
# - ring larger than the run: no record lost or duplicated; each comm's
#   sequence numbers are exactly 1..N.
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/interpose/interpose-lib.sh"
nw_use_sim
export NCCLSIM_NULL=1 NCCLWATCH_KEEP=1
awkf="$NW_ROOT/tests/interpose/check_records.awk"

note "ring of 256 records, 16 threads x 300000 all-reduces, read while written"
calls=300000
nw_spawn env NCCLWATCH_JOB=wrap NCCLWATCH_RING=256 LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-threads" 16 4 $calls
writer=$NW_PID
reads=0; live=0
while kill -0 "$writer" 2>/dev/null; do
	f=$(find "$NCCLWATCH_DIR/wrap" -name '*.seg' 2>/dev/null | head -n 1)
	[ -n "$f" ] || continue
	"$NW_CLI" show "$f" > "$T/read.out" 2> "$T/read.err" || { cat "$T/read.err"; fail "reader failed on a live segment"; }
	awk -v COMMS=4 -f "$awkf" "$T/read.out" > "$T/read.check"
	grep -v '^records ' "$T/read.check" | head -n 5 | grep . && fail "a concurrent read accepted a bad record"
	reads=$((reads + 1))
	grep -q '^  flags .*exited' "$T/read.out" || live=$((live + 1))
done
nw_wait "$writer" 60 || fail "nccl-threads failed"
note "$reads reads, $live of them while the writer ran"
[ "$live" -ge 1 ] || fail "no read overlapped the writer (make it longer)"
seg=$(segments "$NCCLWATCH_DIR/wrap")
show "$seg" > "$T/wrap.show"
awk -v COMMS=4 -f "$awkf" "$T/wrap.show" > "$T/wrap.check"
cat "$T/wrap.check"
assert_eq "$(grep -vc '^records ' "$T/wrap.check")" 0 "problems in the final read"
total=$((16 * calls))
assert_eq "$(grep '^  comm ' "$T/wrap.show" | grep -c "coll_enqueued=$((4 * calls)) ")" 4 "coll_enqueued of each comm"
# Tickets: one per record, plus one per slot a writer found still being
# written by a preempted older writer (it takes a new ticket instead).
head=$(sed -n 's/^records .* head=\([0-9]*\) capacity=256$/\1/p' "$T/wrap.show")
[ -n "$head" ] && [ "$head" -ge $((total + 4)) ] || fail "ring head $head < $((total + 4)) records"
note "ring head $head for $((total + 4)) records; ops_dropped $(sed -n 's/^  ops_dropped *//p' "$T/wrap.show")"
# the newest records: every one shown has a ticket in the last lap
low=$((head - 256))
assert_eq "$(grep '^  op ' "$T/wrap.show" | awk -v low=$low '$2 < low' | grep -c .)" 0 "records older than the last lap"
kept=$(grep -c '^  op ' "$T/wrap.show")
[ "$kept" -ge 200 ] || fail "only $kept of the newest 256 records are valid"

note "ring of 65536 records, 16 threads x 4000 all-reduces: nothing lost"
calls=4000
NCCLWATCH_JOB=full NCCLWATCH_RING=65536 LD_PRELOAD="$(nw_preload)" "$NW_PROGS/nccl-threads" 16 4 $calls \
	> "$T/full.out" 2>&1 || { cat "$T/full.out"; fail "nccl-threads failed"; }
show "$(segments "$NCCLWATCH_DIR/full")" > "$T/full.show"
awk -v COMMS=4 -f "$awkf" "$T/full.show" > "$T/full.check"
assert_eq "$(cat "$T/full.check")" "records $((16 * calls)) head $((16 * calls + 4))" "records kept"
for r in 0 1 2 3; do
	grep " AllReduce .* rank=$r/4 " "$T/full.show" | field seq | sort -n > "$T/seqs.$r"
	seq 1 $((4 * calls)) | cmp -s - "$T/seqs.$r" || fail "comm $r: seqs are not exactly 1..$((4 * calls))"
done
