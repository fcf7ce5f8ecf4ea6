#!/bin/sh
# The hang generator's graph jobs (seeds from 100000 on, tests/hangfuzz/
# plan.h): ops of each step replayed from a CUDA graph, captured once and
# launched every step (vLLM's decode graph) or captured and launched every
# step (torch.compile re-capturing per shape), on the simulation under the
# preload, judged in every view (live, dead, watchdog) against the answer
# the construction gives (exact culprits, an allowed first kind, no
# verdict blaming another rank; healthy jobs raise nothing). Each graph
# fault kind, in both capture modes where it applies, with processes of one
# and of several ranks (a thread per rank, or one thread for all):
#   graph-die (SIGKILL inside a replay): 100004 100010, 2 x 2: 100059 100071
#   graph-hostfn (a host function that never returns before the launch):
#     100012 100031, 2 x 2: 100020 100108, 2 x 4: 100066
#   graph-nolaunch (captured, destroyed unlaunched, next op eager): 100011,
#     4 x 2: 100019
#   graph-other (the victim's graph captured with another dtype: 100119
#     100068; redop, which completes and ends cleanly: 100054 100058;
#     count: 100163 100252; the order of two comms' ops: 104965)
#   graph-peer (the captured ring sends to the rank after next: 100007
#     100015; receives from the rank before previous, whose send waits
#     unreceived at the victim, counted per replay: 100215 per step, 100219
#     captured once (the victim's graph B, which no other rank launched:
#     they did not launch it "fewer times"))
#   graph-skip (one replay fewer): 100000 100009, 2 x 2: 100023, 3 x 2:
#     100032, 4 x 2: 100040
#   healthy: 100001 100017, 2 x 2: 100002, 4 x 2: 100101
#   issue order of eager ops and replays on one comm (verdicts_order.c):
#     100128 (rank 0 skips replay 4 and its next eager AllReduce pairs
#     with the others' replay 4; was TRANSPORT_STALL); 2 ranks, a tie
#     decided by who waits: 100270
#   a replay of a graph on two comms stuck behind its ring's misdirected
#     receive: 100319 (the ranks behind it were STREAM_BLOCKED culprits);
#     100594: a rank whose eager receive and all-reduce are queued behind
#     its started, stuck replay (held up by the victim's host function
#     before its own replay) waits, it was a STREAM_BLOCKED culprit
#   graph-nolaunch per step on TP pairs and DP groups: 100555 (rank 2
#     captured its step's graph, TP ring + DP ReduceScatter, and never
#     launched it, then issued the world AllReduce: its captured ops count
#     as never issued, and the replays every member started wait for the
#     member held on the graph's other comm; was TRANSPORT_STALL)
#   a process of several ranks whose threads capture one at a time, on
#     one comm id (world, or a TP group inside the process): each launch
#     runs its own rank's captured ops, not those of the rank that
#     captured last (graph_unlaunched.c: those of every other rank were
#     taken as never launched and their positions ended before them):
#     graph-skip 100398 (2 x 4; was STREAM_BLOCKED blaming rank 6, who
#     waits), 101084 (2 x 4; blamed ranks 2 and 5), 101774 (4 x 2; blamed
#     rank 0), 102353 (2 x 2; blamed rank 0); graph-hostfn 101809 (2 x 2;
#     was P2P_UNMATCHED)
#   a graph only the victim captured shifts its numbers on the comm by its
#     ops: 102294 (graph-other count; its eager AllReduce #7, unstarted
#     behind its stuck replay, was taken to wait for the others, who never
#     issue a #7: a cycle that blamed ranks 0-1,3-5, who wait; an op behind
#     its own stream's unfinished work waits for that stream)
#   one thread that drives all the ranks of its process (JAX/XLA, single-
#     process multi-GPU; seeds from 110000 on): it captures a graph per
#     rank together, op by op or rank by rank in one group, and launches
#     them in rank order or last rank first: graph-die 111398 (2 x 4, rank
#     5 dies inside its replay after ranks 7 and 6 launched, before rank 4
#     did: the whole process), graph-skip 111537 (2 x 4, per step),
#     graph-hostfn 110015 (3 x 2), graph-other count 110109 (2 x 2, per
#     step), graph-peer recv 112666 (2 x 4, graph B on a TP pair inside
#     the process)
#   a graph only the victim captured (graph B) holding ops on a pair comm
#     (DP pairs): 104272 (the pair's other member was blamed: B's send
#     numbered past its position, though it receives at each replay of
#     its own graph; and for launching B 0 times: a graph is the
#     minority's own when most ranks of any of its comms never launched
#     it)
#   a comm's collectives lined up as they run, replays expanded into their
#     captured ops (verdicts_lineup.c), where a re-captured graph shifts
#     the victim's numbers: 110987 (graph-peer recv, 2 x 4, one thread:
#     its graph B's AllGather, captured as #5, was lined up by number with
#     the others' eager AllReduce #5: MISMATCH and a false "only captured"
#     over the misdirected receive), 113331 (graph-other dtype, 2 x 4, one
#     thread: rank 7's graph B runs a float64 ReduceScatter where ranks 4-6
#     replay float32; was TRANSPORT_STALL with no culprit), 116330 (the
#     same with a process per rank: rank 2's graph B all-reduces float64
#     on its TP group where ranks 0-1,3 replay float32)
# The corpus holds two more (cases.txt: graph-ring-hostfn, 100021;
# graph-tp-world-skip, 100003).
. "$NW_ROOT/tests/lib.sh"
seeds="100004 100010 100059 100071 100012 100031 100020 100108 100066 100011 100019
       100119 100068 100054 100058 100163 100252 104965 100007 100015 100215 100219
       100000 100009 100023 100032 100040 100001 100017 100002 100101 100128 100319 100270
       100594 100555 100398 101084 101774 102353 101809
       102294 104272
       111398 111537 110015 110109 112666
       110987 113331 116330"
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
# the seeds are graph jobs of the kinds named above (a plan that changed
# would pass without testing them)
for k in graph-die graph-hostfn graph-nolaunch graph-other graph-peer graph-skip none; do
	grep -q "^$k: [0-9]* ok of [0-9]* seeds" "$T/out" || fail "no seed of fault kind $k"
done
