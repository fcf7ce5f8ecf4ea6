#!/bin/sh
# The hang generator (issue 21) on a fixed set of seeds that covers every
# fault kind of its menu and a healthy job: each seed's job is run on the
# simulation under the preload and judged in every view (live, dead,
# watchdog) against the answer its construction gives (exact culprits, an
# allowed first kind, no verdict blaming another rank; healthy jobs raise
# nothing). `make bench` runs a larger sweep (tests/bench/hangfuzz.sh).
. "$NW_ROOT/tests/lib.sh"
# The first two seeds of each fault kind among seeds 1-400 (hangfuzz --seed
# S --case), and processes of several ranks: 2 x 2 with a thread per rank
# (15 sleep, 248 SIGKILL before an op), 2 x 2 driven by one thread (142
# SIGKILL before, 165 a host function), 2 x 4 with a thread per rank (33
# sleep, 278 SIGKILL inside) and one thread (266 skip, 74 healthy), 4 x 2
# one thread (48 SIGKILL before), 3 x 2 one thread (12 exit after
# destroying its comms); 9 (exit-destroy, one rank per process) and 32
# (SIGKILLed before its watchdog's first beat); 617 (rank 0 SIGKILLed
# after issuing a ReduceScatter, its TP peers' Broadcasts queued behind
# theirs: the ranks inside wait for the dead rank, no second verdict
# blames them); 574 (rank 2's grouped ring halves behind a host function:
# its peers' halves wait for them, only rank 2 is blamed); 687 and 708 (2
# ranks: rank 0 skips the step's ReduceScatter/AllGather, so #7 is an
# AllReduce on rank 0 and the skipped op on rank 1: no majority, the
# comm's periodic history names rank 0); 19 and 47 (redop: a reduction
# with ncclMax on one rank completes, the job ends cleanly with its files
# kept: MISMATCH on the victim alone, 47 with 2 x 2 ranks whose process
# left with the victim); 1748 and 3871 (a pipeline stage, PP: ungrouped
# receive-then-send micro-batches, whose victim skips it; 1748 on 2
# streams, 3 x 2 ranks driven by one thread); 116 and 1215 (order: the
# world's closing op issued before a split's op on one stream; in 1215 a
# world op lies between, so the moved op is a MISMATCH on the world too:
# the cycle through both streams is decided by that mismatch's majority,
# never "cannot decide" between the victim and the peer that waits); 3243
# and 3363 (lock: one thread drives its process's ranks in one group and
# blocks on a lock after some of them issued their op into it; the group
# never ends, so those ops were never launched: every rank of the open
# group is a culprit with the ones that never issued, none is waiting);
# 3493 (exit: the process of ranks 4-5 exits with its tp ring halves still
# queued; rank 3's ring send and receive with them never end: it waits for
# the ranks that left, no STREAM_BLOCKED verdict blames it); 3175, 911 and
# 5086 (hostfn: a host function that never returns ahead
# of a rank's send/receive halves on a stream of their own, nothing of
# NCCL queued behind them: 3175 a grouped 2-rank ring, each rank the
# other's peer; 911 a 5-rank ring; 5086 an ungrouped 2-rank pipeline
# stage. The unstarted halves wait for their stream, the peers' started
# halves for them: only the rank behind the host function is blamed);
# 3131, 5770 and 4466 (lock or sleep of the one thread that drives its
# process's ranks, mid-group, before a send/receive step: the peers wait
# in a receive from the rank it never reached, and the thread holds every
# rank it drives: 3131 after putting rank 0's grouped ring halves into the
# open group, 5770 with nothing in it yet (a pipeline stage), 4466 four
# ranks of one process; the send/receive verdict named the one rank the
# receive waits for).
# Wide jobs (seeds from 200000 on, plan.h): 200012 (7 ranks, a tp comm over
# the whole world split anew every step; rank 2's ring receives from rank 0
# on the fresh comm, where it received from nobody yet: the earlier
# instances of the group say it received from rank 1, whose send waits
# unreceived; rank 0 was blamed); 200238 (2 processes of 2 ranks, a thread
# per rank, the split made every step: rank 1 never makes the fault step's,
# ranks 0, 2, 3 wait inside it; both of the second process's children had
# the same id and no device yet, so rank 2's split went to rank 3's view
# and rank 2, idle, was blamed); 200563 and 200186 (processes of 2 ranks
# driven by one thread, each split made in a group: one process never makes
# the fault step's split, the others' splits returned at once and wait in
# ncclGroupEnd, where NCCL creates the comms: a child made in a group that
# has not ended (no size yet) is inside its creation; the ranks in it were
# blamed for never calling the world's next collective); 200156 and 200731
# (2 ranks, a comm over both split anew every step: rank 1 never makes the
# fault step's split and goes on with the world's ops, a collective in
# 200156, a ring send in 200731; rank 0 waits inside it: no majority, but
# both made every earlier split after the same number of world
# collectives: rank 1 went past the split, "cannot decide" before) and
# 200014 (the same with 2 processes of 2 ranks, one thread each, the split
# in a group: 2 against 2, ranks 0-1 were blamed).
# 200164 (6 ranks, tp pairs but ranks 4-5 pass NCCL_SPLIT_NOCOLOR: rank 1
# issues the world's all-reduce before its pair's all-gather; the ranks
# left out of the split issued the world's op with no pair op before it,
# which kept "skipped a step" from naming rank 1, and the world's waiters
# outvoted its partner, rank 0, which was blamed).
# 200395 (4 ranks, a pair comm for ranks 0-1 made anew every step, 2-3
# left out: rank 0 issues the world's all-reduce before the pair's
# broadcast; 1 against 1, the left-out ranks' votes for the world's op
# blamed rank 1; they cannot tell the pair's order, and the order kept
# before lies in the pair's earlier instances, not in its fresh comm).
# 200496 (8 ranks, tp groups of 4 made every step, ranks 4-7 pass
# NCCL_SPLIT_NOCOLOR: rank 0 never makes the fault step's split; ranks 4-7
# wait inside the split too, with no child comm, and were blamed for never
# calling the world's Reduce).
# 200603 (8 ranks, 2 per process with a thread each, tp groups of 4 split
# every step: rank 1 destroys its comms and exits after the fault step's
# split while rank 0, its process's other thread, is still inside it; the
# others' ranks in the tp comm leave rank 0 one place in it, yet it was
# named "unknown (no file)" by a second verdict).
# 202203 (2 processes of 2 ranks, a thread each: rank 2 is SIGKILLed
# before the fault step's AllReduce, while its mate rank 3 had not yet
# posted the step's ring: rank 0's receive from rank 3 is as unmatched as
# the AllReduce is missing, P2P_UNMATCHED is right too; its MISSING_RANK,
# once death took ranks 2-3 into both, folds into it).
# 9262 (3 processes of 2 ranks, one thread each, tp groups of 3: the
# thread of ranks 4-5 pauses before the fault step's tp Broadcast; rank 3,
# in the other process, waits in it alone. Ranks 4-5, idle, were 2 of 3
# in the tp comm, "the program's end", and rank 3 was blamed for going
# past it, while the world's majority waited in its AllReduce for ranks
# 4-5: idle ranks a comm's majority waits for are behind, not the end).
seeds="16 41 14 11 18 8 13 2 37 30 60 1 5 24 43 3 22 4 10 209 39 79 44 221 6 20 7 15
       248 142 165 33 278 266 74 48 12 9 32 617 574 687 708 19 47 1748 3871 116 1215
       3243 3363 3493 3175 911 5086 3131 5770 4466 200012 200238
       200563 200186 200156 200731 200014 200164 200395 200496 200603 202203
       9262"
# shellcheck disable=SC2086
CORPUS_FAIL_DETAIL="$T/detail" sh "$NW_ROOT/tests/hangfuzz/run-seeds.sh" $seeds > "$T/out" 2>&1
st=$?
cat "$T/out"
if [ $st -ne 0 ]; then
	# last, where a CI log's tail shows them: the wrong views, then what
	# the first wrong dead view said
	grep ' FAIL ' "$T/out"
	head -n 10 "$T/detail" 2>/dev/null
	fail "wrong views (above)"
fi
# every seed judged in three views
n=$(grep -cE '^fuzz-[0-9]+ (live|dead|watchdog) ok ' "$T/out")
[ "$n" -eq $(( $(echo $seeds | wc -w) * 3 )) ] || fail "$n views judged ok, want $(( $(echo $seeds | wc -w) * 3 ))"
