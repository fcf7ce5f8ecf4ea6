#!/bin/sh
# The faults of examples/train.py that the other Python tests do not take,
# under the preload, 4 ranks started directly (py_direct; a rendezvous
# directory per case: a killed job leaves its id behind), each diagnosed
# live (the watchdog's own verdict) where the job hangs, and post-mortem:
#   order:rank=1:step=4  rank 1 broadcasts where the others all-reduce:
#                        MISMATCH, culprit 1, its Broadcast issued at
#                        broadcast_weights' ncclBroadcast line; rank 1's
#                        main thread inside broadcast_weights
#   sleep:rank=1:step=3:ms=8000
#                        rank 1 sleeps in train_step before step 3's
#                        all-reduce: the others report the stall, its
#                        verdict names rank 1 in train_step at the sleep;
#                        then rank 1 wakes and all end well
#   count:rank=1:step=3  rank 1 all-reduces half the gradient (2 chunks of
#                        4): #4 completes, but the streams stay shifted and
#                        a later all-reduce hangs (rank 1 may exit 3 on
#                        wrong data first): MISMATCH on count, culprit 1,
#                        the later stall one of its evidence lines
#                        ("consequence: TRANSPORT_STALL"), never a verdict
#   dtype:rank=1:step=3  float16 where the others use float32: the same,
#                        on datatype
#   exit:rank=2:step=3   rank 2 leaves with os._exit(0): MISSING_RANK,
#                        culprit 2, "process gone"
. "$NW_ROOT/tests/lib.sh"
. "$NW_ROOT/tests/launch/launch-lib.sh"
. "$NW_ROOT/tests/python/py-lib.sh"

bc_line=$(line_of 'check_nccl(self.nccl.ncclBroadcast(')
sleep_line=$(line_of 'time.sleep(fault.ms / 1000.0)')
for v in "$bc_line" "$sleep_line"; do
	[ -n "$v" ] || fail "train.py: a line the test looks for is not there (or not once)"
done

# fresh: a clean job directory for the next case.
fresh() { py_direct_stop; rm -rf "$NCCLWATCH_DIR" "$NCCLWATCH_DUMP_DIR"; }

note "order: rank 1 broadcasts where the others all-reduce (#7)"
py_direct "$T/order.out" --rendezvous "$T/rdv.order" --steps 30 --count 64 --bcast-every 2 --fault order:rank=1:step=4
wait_verdict 120 "$T/order.out" MISMATCH
assert_grep 'ncclwatch: MISMATCH: rank 1 called Broadcast \(root 0\) as #7 on comm [0-9a-f]{16} \(4 ranks\) where ranks 0,2-3 called AllReduce; they wait in it$' "$T/order.out"
ev="rank 1: Broadcast count 64 float32 root 0 \\(differs in op\\), STARTED, issued at train\\.py:$bc_line in broadcast_weights"
live() { "$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/order.live" 2>&1; grep -Eq "^    $ev\$" "$T/order.live"; }
nw_until 60 live || { cat "$T/order.live" >&2; fail "order: no /$ev/ live"; }
assert_grep '^  culprits: 1$' "$T/order.live"
fresh

note "sleep: rank 1 sleeps 8 s before step 3's all-reduce"
py_direct "$T/sleep.out" --rendezvous "$T/rdv.sleep" --steps 8 --count 64 --bcast-every 0 --fault sleep:rank=1:step=3:ms=8000
wait_verdict 60 "$T/sleep.out" MISSING_RANK
ev="rank 1: never called it .*; main thread in train_step \\(train\\.py:$sleep_line\\) < main "
# Its stacks come with the dump the others ask for (it has nothing stuck
# itself): the verdict is printed again with them, while it sleeps.
nw_until 60 grep -Eq "ncclwatch:     $ev" "$T/sleep.out" || assert_grep "ncclwatch:     $ev" "$T/sleep.out"
for p in $PY_PIDS; do
	nw_wait "$p" 60 || fail "sleep: a rank ended with status $?"
done
# Each rank's last line (anchored at neither end: 4 processes and their
# watchdogs append to one file, and an unbuffered print writes its text
# and its newline apart, so another rank's line can come in between).
for r in 0 1 2 3; do
	grep -Eq "rank $r ok steps=8(\$|[^0-9])" "$T/sleep.out" ||
		{ grep -v '^ncclwatch:  ' "$T/sleep.out" >&2; fail "sleep: rank $r did not end well"; }
done
fresh

for f in count dtype; do
	note "$f: rank 1's all-reduce #4 differs in $f"
	py_direct "$T/$f.out" --rendezvous "$T/rdv.$f" --steps 30 --count 65536 --bcast-every 0 --fault $f:rank=1:step=3
	case $f in
	# count: rank 1's #4 is 2 chunks of the others' 4, its first right:
	#   it goes on, its #5 takes the others' last 2 chunks of #4 (they
	#   complete #4 with its #5's), it finds #5 wrong and exits 3; they
	#   wait in #5 for its 2 chunks: a stall that is #4's consequence.
	# dtype: rank 1's float16 #4 reads wrong at once: it exits 3 after #4,
	#   the others wait in #4.
	count) head='MISMATCH: rank 1 called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\) with count 32768 where ranks 0,2-3 used count 65536$'
	       then='^    consequence: TRANSPORT_STALL: ranks 0,2-3 are stuck in AllReduce #5 ' what=count ;;
	dtype) head='MISMATCH: rank 1 called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\) with datatype float16 \(2 bytes\) where ranks 0,2-3 used float32 \(4 bytes\); they wait in it$'
	       then='^    ranks 0,2-3: AllReduce count 65536 float32 sum \(majority\), STARTED$' what=datatype ;;
	esac
	wait_verdict 120 "$T/$f.out" MISMATCH
	assert_grep "ncclwatch: $head" "$T/$f.out"
	# Killed once every waiting rank is past the timeout in its file.
	live() { "$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/$f.live" 2>&1; grep -Eq "$then" "$T/$f.live"; }
	nw_until 60 live || { cat "$T/$f.live" >&2; fail "$f: no /$then/ live"; }
	# A dead process's ages are measured up to its watchdog's last beat,
	# a live one's up to now: let every watchdog beat again past the
	# timeout before the processes end (10 polls), or a rank whose beat
	# lags reads as not stuck yet in the dead view.
	sleep 1
	py_direct_stop
	"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/$f.dead"
	assert_grep "^$head" "$T/$f.dead"
	assert_grep '^  culprits: 1$' "$T/$f.dead"
	assert_grep "$then" "$T/$f.dead"
	assert_grep "^    rank 1: AllReduce count .* \\(differs in $what\\), COMPLETED" "$T/$f.dead"
	assert_no_grep '^TRANSPORT_STALL: ' "$T/$f.dead"
	fresh
done

note "exit: rank 2 leaves at step 3"
py_direct "$T/exit.out" --rendezvous "$T/rdv.exit" --steps 30 --count 64 --bcast-every 0 --fault exit:rank=2:step=3
wait_verdict 120 "$T/exit.out" MISSING_RANK
assert_grep 'ncclwatch: MISSING_RANK: rank 2 never called AllReduce #4 on comm [0-9a-f]{16} \(4 ranks\); ranks 0-1,3 wait in it$' "$T/exit.out"
assert_grep 'ncclwatch:     rank 2: never called it .*; process gone$' "$T/exit.out"
py_direct_stop
"$NW_CLI" diagnose "$NCCLWATCH_DIR" > "$T/exit.dead"
assert_grep '^  culprits: 2$' "$T/exit.dead"
echo ok
