/* facts.h (part of decide.h's contract): what a rule found, as data. A
 * verdict says its summary, evidence lines and hint as findings: facts
 * (a kind, references to the model's processes, ops and communicators,
 * numbers), no words. words/ says them (nw_words_say, words/say.c: one
 * function per fact kind) once decide is done; decide never formats
 * text and never includes words/ (tests/report/test-report-words.sh
 * checks every file of decide/).
 *
 * A part of a line is a fact, or text: words a verdict already had when
 * a fact joined it (struct nw_part; every rule family is findings now, so
 * no pass of decide writes any). A pass that wraps another verdict's
 * summary ("consequence: KIND: <summary>", rootcause.c; "NCCL RAS ...
 * agrees: ", nw_fold_launch_only) wraps its parts, not its words. */
#ifndef NCCLWATCH_REPORT_DECIDE_FACTS_H
#define NCCLWATCH_REPORT_DECIDE_FACTS_H

#include "../model/model.h"

/* Every kind has its words function in words/say.c's table (a test
 * checks it). One row per kind: */
#define NW_FACT_KINDS(X)                                                                       \
	X(FAULT)       /* GPU_FAULT summary: proc's op failed on the GPU (op NULL: acomm's async  \
	                * error), comm's device on proc's host; view: op's comm view */           \
	X(FAULT_MORE)  /* GPU_FAULT summary, after FAULT: n more ranks failed the same way */     \
	X(FAULT_LINE)  /* GPU_FAULT evidence: proc, its failed op (or none), the async errors of  \
	                * its comms, comm's device, the GPU; n: earlier FAILED ops the peers     \
	                * completed (the sticky error) */                                          \
	X(FAULT_HINT)  /* GPU_FAULT hint: the error's own words: op's cuda_error, comm's async   \
	                * error */                                                                 \
	X(LOST_PROC)   /* lost.c evidence: what proc (job: its process's ranks) lost: ops,     \
	                * comms, a full comm table, recording stopped, threads left out */       \
	X(LOST_MORE)   /* lost.c evidence: n more processes lost data */                          \
	X(LOST_OPEN)   /* lost.c summary, before the HEALTHY summary it wraps: nothing wrong    \
	                * in what was recorded */                                                  \
	X(LOST_CLOSE)  /* lost.c summary, after it: what job lost cannot be judged */            \
	X(LOST_HINT)   /* lost.c hint: what to change so job loses nothing next time */      \
	X(EG_HEAD)     /* evidence grouped across ranks (findings.c, nw_fg_*): set's ranks and  \
	                * processes without rank, then ": "; the line's later parts say       \
	                * NW_AGE for the group's range of ages */                                \
	X(EG_MORE)     /* evidence grouped across ranks: n more groups not shown */              \
	X(WHERE)       /* where proc is (nw_fact_where): op its oldest stuck op (n & NW_WH_STUCK) \
	                * or newest op (NULL: none), view op's comm view, n: NW_WH_* flags and \
	                * the ended state, job: for its native flag */                           \
	X(ORDER_WHO)   /* verdicts_order.c summary: set's ranks (never: n) launched */          \
	X(ORDER_GRAPH) /* ...the graph holding op_kind #seq on view's comm (n: 0, the graph's   \
	                * op is on another comm that has ops on it) */                           \
	X(ORDER_TIMES) /* ...n times (0: nothing, NW_FACT_OTHER: another number of times) */    \
	X(ORDER_BEFORE)/* ...before set's (its/their) op_kind #seq, where the others launched   \
	                * it n times */                                                          \
	X(ORDER_WAIT)  /* ...; set's ranks wait (age n) */                                      \
	X(ORDER_COUNT) /* verdicts_order.c evidence: launched it n times before op_kind #seq */ \
	X(ORDER_IN)    /* verdicts_order.c evidence: op (view: its comm's) in its state for     \
	                * NW_AGE */                                                              \
	X(COMM_NOFILE) /* evidence: set's comm ranks have no file (global ranks not known) */    \
	X(RANKS)       /* "rank 3", "ranks 0-2": set */                                          \
	X(GRAPH_NAME)  /* verdicts_graph.c: the graph holding op_kind #seq on view's comm (n:    \
	                * its first op is on another comm; seq 0: no identity) */                \
	X(REPLAY_IN)   /* evidence: in replay seq (n: 1 of it, 2 of its graph) in launch op's  \
	                * state (its op inside the replay) for NW_AGE */                         \
	X(REPLAY_SHORT)/* evidence: launched it n times, never replay seq */                     \
	X(REPLAY_ENDED)/* evidence: ended inside replay seq of it */                             \
	X(REPLAY_MM_WAIT) /* MISMATCH summary, after its words: set's ranks wait in replay seq  \
	                * of the graph holding it (age n) */                                     \
	X(REPLAY_MM_AT) /* verdicts_lineup.c MISMATCH summary, after MM_WHERE: at the place   \
	                * of their replay seq of (GRAPH_NAME), or (seq 0) of their op_kind #n, \
	                * as the comm's ops run */                                               \
	X(REPLAY_LAUNCHED) /* summary: after RANKS, " launched " (then GRAPH_NAME) */            \
	X(REPLAY_TIMES)/* ...n times (NW_FACT_OTHER: fewer than seq times) */                    \
	X(REPLAY_ENDED_BEFORE) /* summary: after RANKS, ended before replay seq of (GRAPH_NAME) */\
	X(REPLAY_COMPLETED) /* ...completed */                                                   \
	X(REPLAY_WAIT) /* summary: set's ranks wait in replay seq (age n) */                     \
	X(REPLAY_NOFILE_WAIT) /* summary: set's ranks wait in replay seq of (GRAPH_NAME) */      \
	X(REPLAY_NOFILE) /* ...for age n; seq of its ranks have no file */                      \
	X(REPLAY_STALL)/* TRANSPORT_STALL summary: every rank of view's comm (n ranks) launched  \
	                * replay seq of its graph */                                             \
	X(REPLAY_STALL_WHAT) /* ...holding op_kind #seq (seq 0: whose first op is a op_kind) */ \
	X(REPLAY_STALL_END) /* ...and none completed it in age n: the transfer is stuck */      \
	X(LEFT_RANK)   /* verdicts_left.c evidence: proc ended comm (its state: how) early */    \
	X(LEFT)        /* verdicts_left.c summary: set's ranks left view's comm early; n of its \
	                * ranks still run it */                                                 \
	X(INIT_INSIDE) /* verdicts_init.c evidence: inside the creation (n: origin, state << 32, \
	                * 1 << 48 when the age is known) for NW_AGE */                           \
	X(INIT_NEVER)  /* ...evidence: never entered it (n 0), never called it (1), still inside \
	                * it (2, state seq); then WHERE */                                       \
	X(INIT_CALLED) /* ...evidence: called view's creation with nranks n; then WHERE */      \
	X(INIT_GONE)   /* ...evidence: proc's creation of comm (view's) failed or it ended      \
	                * inside it; then WHERE, NW_AGE from set's ages */                       \
	X(INIT_LOST)   /* ...evidence: set's comm ranks never entered (processes not known) */  \
	X(INIT_LATE)   /* ...evidence: set's ranks never called shrink #seq (n excluded) */     \
	X(INIT_IN)     /* ...summary: set's ranks inside the creation (op_kind: origin) of     \
	                * view's comm (NULL: comm id n), split/shrink #seq of it */             \
	X(INIT_FOR)    /* ...for age n (0: none), then "; " */                                  \
	X(INIT_NEVER_DID) /* ...set's ranks never entered (n 0) / called (1) it */              \
	X(INIT_NOFILE) /* ...; set's ranks have no file */                                      \
	X(INIT_NOFILE_Q) /* ...set's ranks have no file (never entered/called (n) it?) */       \
	X(INIT_TAIL)   /* ...nobody named: why (n: which) */                                    \
	X(INIT_TIE)    /* summary: set's ranks tie on nranks of view's creation (age n) */      \
	X(INIT_NSIZE)  /* summary: set's ranks called view's creation with another nranks */    \
	X(INIT_NSIZE_WAIT) /* ...than set's ranks (n: their size; age seq) */                   \
	X(INIT_MINORITY) /* summary: set's ranks still inside view's creation */               \
	X(INIT_MINORITY_DONE) /* ...which set's ranks finished (n: how many are inside) */      \
	X(INIT_FAILED) /* summary: set's ranks' creation of view's comm failed (n: the result; \
	                * seq: how many created it) */                                           \
	X(LAUNCH_RANK) /* verdicts_launch.c evidence: comm rank seq (proc: its pid) launched     \
	                * op_kind n times */                                                     \
	X(LAUNCH_RANK_AT) /* ...the same, proc's pid on its host */                              \
	X(LAUNCH_UNDECIDED) /* summary: the ranks of comm n launched op_kind different numbers  \
	                * of times, no count a strict majority's */                              \
	X(LAUNCH_HIDDEN) /* evidence: proc launched fewer op_kind than the others (seq) on comm  \
	                * n but waits in NCCL (nw_launch_hidden_wait): not blamed */             \
	X(LAUNCH_ALL_HIDDEN) /* summary: set's ranks launched fewer op_kind than the others (seq) \
	                * on comm n, and all may wait in a send/receive */                        \
	X(LAUNCH_HIDDEN_HINT) /* hint: their send/receive partners */                           \
	X(LAUNCH_BEHIND) /* summary: set's ranks never launched the op_kind the others launched \
	                * last on comm n; then LAUNCH_THEIRS */                                  \
	X(LAUNCH_AHEAD) /* summary: set's ranks launched the op_kind the other seq ranks never   \
	                * launched on comm n; then LAUNCH_THEIRS */                              \
	X(LAUNCH_THEIRS) /* ...their counts, n to seq */                                         \
	X(LAUNCH_BEHIND_END) /* ...the others' count n on seq peers, who wait in it */           \
	X(LAUNCH_AHEAD_END) /* ...the others' count n: set's ranks went past them */             \
	X(LAUNCH_MAJORITY) /* evidence: n ranks launched op_kind seq times */                    \
	X(LAUNCH_WAITED) /* evidence: set's counts of op_kind on comm n cast no vote: a strict  \
	                * majority of another of their comms launched past them */            \
	X(LAUNCH_EQUAL) /* TRANSPORT_STALL summary: every rank of comm n (seq ranks) launched    \
	                * the same collectives (proc's counts on it); RAS cannot see completion */\
	X(LAUNCH_EQUAL_SAME) /* evidence: a rank inside a collective and one past it look alike */\
	X(LAUNCH_EQUAL_ORDER) /* evidence: equal counts hide another launch order */                 \
	X(RAS_FOLD_SAYS) /* a joined NCCL RAS report (docs/ras.md, "One job, one verdict"):      \
	                * evidence, before the summary it wraps: what RAS (its report, name) said, \
	                * verdict kind n; seq 1 it agrees, 2 it says otherwise (beside segments: \
	                * nw_fold_launch_only), 0 said beside the stacks' verdict (verdicts_stacks.c) */\
	X(RAS_FOLD_STACKS) /* verdicts_stacks.c evidence on a verdict from facts, before the     \
	                * stacks' verdict it wraps (kind n): seq 0 they agree, 1 cannot decide, \
	                * 2 disagree */                                                           \
	X(RAS_FOLD_STACK) /* ...evidence: culprit rank n (from stacks): seq 0 no snapshot, 1 proc \
	                * has no stack, 2 proc's main thread: where it waits, or is instead */    \
	X(RAS_FOLD_EQUAL) /* ...summary of a stacks' verdict, appended: RAS's launch counts are   \
	                * equal (n 0), RAS lists no communicator (n 1) */                        \
	X(RAS_FOLD_RANKS) /* ras_merge.c evidence (x->joined_line): n of the ranks of report name \
	                * are processes of the job; seq: others are not */                       \
	X(RAS_FOLD_NOCOMM) /* ...evidence: report name lists no comm, joins its directory's job */\
	X(RAS_FOLD_FOREIGN) /* ...evidence: report name (n ranks) not used: another job's */     \
	X(PROC_AT)     /* a line's head: proc's label, then ": "; the line's later parts say NW_AGE \
	                * for set's range of ages */                                              \
	X(P2P_OP)      /* verdicts_p2p.c: proc's op (a send/receive) to/from comm rank n of view */\
	X(P2P_PENDING) /* ...is pending for age n */                                             \
	X(P2P_REPLAY_PENDING) /* ...in replay n of its graph is pending for age seq */           \
	X(P2P_NEVER)   /* ..., which the peer (op's) never posted (proc's, up to #seq) */        \
	X(P2P_WRONG_FROM) /* ..., which the peer never sent: proc received from the wrong peer   \
	                * (comm rank n of view) */                                                \
	X(P2P_WRONG_TO) /* ..., which the peer never sent (up to #seq to proc): it sent to the   \
	                * wrong peer (comm rank n of view) */                                     \
	X(P2P_WRONG_TO_LATE) /* ..., matched only by a send the peer posted later: it sent to the \
	                * wrong peer (comm rank n of view) */                                     \
	X(P2P_INSTEAD) /* P2P_UNMATCHED summary: "; instead " before a misdirected pair */      \
	X(P2P_MISDIRECTED) /* evidence: "misdirected: " before a misdirected pair */            \
	X(P2P_EAGER_SEND) /* evidence: proc's Send #n to comm rank seq of view completed eagerly \
	                * and that rank never received it */                                      \
	X(P2P_EAGER_RECVS) /* ...(it posted receives from proc up to #n) */                      \
	X(P2P_WAITER_OP) /* evidence: proc's op in its state for age n */                        \
	X(P2P_WAITER_REPLAY) /* evidence: proc's op_kind #seq in replay op (a launch: its state) \
	                * for age n */                                                            \
	X(P2P_NOFILE)  /* evidence: comm rank n of view has no file */                           \
	X(P2P_DEADLOCK_HEAD) /* P2P_DEADLOCK summary: "deadlock: ", then steps */               \
	X(P2P_STEP_SEP) /* ...between two steps */                                               \
	X(P2P_STEPS_MORE) /* ...past the fourth step: n steps in all */                          \
	X(P2P_STEP)    /* a step of the cycle: proc waits in op (view: its comm's; NULL op: an op) \
	                * held by the next step's process: */                                     \
	X(P2P_STEP_UNSTARTED) /* ...which proc posted but has not started (behind its stream) */ \
	X(P2P_STEP_NEVER) /* ...which proc never received (op a send) / sent (up to #n) */       \
	X(P2P_STEP_COLL) /* ...which proc never called (coll_enqueued n) */                      \
	X(P2P_STEP_INIT) /* ...which proc never entered */                                       \
	X(P2P_STEP_HELD) /* ...which proc holds up */                                            \
	X(P2P_DEADLOCK_HINT) /* P2P_DEADLOCK hint: group or order the posts */ \
	X(GONE_WITH)   /* rule_fate.c evidence: proc (its rank, pid) gone with rank n, the same \
	                * process */                                                           \
	X(HELD_WITH)   /* rule_fate.c evidence: proc held with rank n by their one thread (its \
	                * open group's tid) inside a group it never ended for age seq; then    \
	                * WHERE, NW_AGE from set's ages */                                     \
	X(HELD_HINT)   /* rule_fate.c hint, on any verdict it adds such a rank to: the thread  \
	                * stopped inside a group */                                            \
	X(GONE_PROC)   /* rule_fate.c evidence: proc (comm: its rank) gone (n 0) or gone or    \
	                * unreachable (n 1), as its source saw it (proc's gone_how) */         \
	X(GONE)        /* rule_fate.c summary: set's ranks gone or unreachable; the others    \
	                * wait */                                                              \
	X(GONE_AT)     /* rule_fate.c evidence: the n ranks that answered are at op_kind       \
	                * launches=seq on comm */                                              \
	X(GONE_HINT)   /* GONE's hint: a process died or stopped */                            \
	X(GONE_STILL)  /* rule_fate.c summary: set's ranks still run comm while (GONE_MOST) */ \
	X(GONE_MOST)   /* ...n of comm's ranks (set's) are gone: most of the job ended; seq:   \
	                * how many still run it */                                             \
	X(GONE_MOST_HINT) /* GONE_STILL's hint: the code path differs on the ranks still there */ \
	X(STK_WHO)     /* verdicts_stacks.c summary: set's ranks and its `others` processes      \
	                * without rank (set->other: that one's label when it is all) */           \
	X(STK_HOST_FN) /* ...: a CUDA host function (proc's, nw_stack_host_fn) has not returned */ \
	X(STK_ALSO_WAIT) /* ...; set's ranks and others (n processes) wait inside NCCL */         \
	X(STK_GONE)    /* ...: process gone */                                                    \
	X(STK_NONE_WAITS) /* ...; no other rank waits inside NCCL */                             \
	X(STK_IS_IN)   /* ...is (set of one) / are in the frames proc's main thread shares with   \
	                * its group (n of them from the outermost, seq shown), not inside NCCL */ \
	X(STK_WHILE)   /* ...while set's ranks and others (n processes) wait inside NCCL: the code \
	                * path differs on it (seq: the group's size, 1) or them */               \
	X(STK_ALL_WAIT) /* UNDECIDED summary: every rank (n: with a stack) waits inside NCCL:     \
	                * set's, or its others without rank */                                   \
	X(STK_SOME_WAIT) /* UNDECIDED summary: set's ranks and others (n processes) wait inside    \
	                * NCCL and seq others are elsewhere: no minority stands out */           \
	X(STK_QUIET)   /* HEALTHY summary: no rank of the n processes waits inside NCCL */        \
	X(STK_NO_STACKS) /* UNDECIDED summary: none of the n snapshots has a stack */            \
	X(STK_MISSING) /* evidence: set's ranks have no snapshot and no segment (world size n) */ \
	X(STK_WAITS_IN) /* evidence: proc's main thread waits in NCCL (its entry, its frames) */  \
	X(STK_GONE_PROC) /* evidence: proc no longer runs (its main thread's frames, if any) */  \
	X(STK_NO_STACK) /* evidence: proc has no stack: not judged */                            \
	X(STK_NOT_IN)  /* evidence: proc's main thread is not inside NCCL (its frames) */        \
	X(STK_HOST_FN_AT) /* evidence: proc's host function thread (nw_stack_host_fn): its frames */\
	X(STK_NO_OPS)  /* evidence: snapshots hold no op numbers */                               \
	X(STK_ONE_CAPTURE) /* evidence: one capture per process; attach again */                 \
	X(STK_CALLS_DIFFER) /* evidence: the waiting ranks are not all in the same call */       \
	X(STK_WOULD_DECIDE) /* evidence: what would decide (RAS, the preload) */                 \
	X(STK_ENDED)   /* evidence: n processes ended before attach read them, the whole job */  \
	X(STK_ATTACHED) /* evidence on a verdict with segments: proc's snapshot (no preload): gone, \
	                * its main thread waits in NCCL, is elsewhere, or no stack */            \
	X(STK_PROMOTED) /* summary, appended: set's ranks (no segment) are not inside NCCL (proc: \
	                * the one's, its main thread's frames): the culprit(s) */                \
	X(STK_HOST_FN_HINT) /* STREAM_BLOCKED hint: what the host function waits for */           \
	X(STK_GONE_HINT) /* MISSING_RANK (gone) hint: the dead process's log */                   \
	X(STK_DIFFERS_HINT) /* MISSING_RANK (elsewhere) hint: the code path differs */ \
	X(MM_CALLED)   /* MISMATCH summary (verdicts_coll.c): set's ranks called op (the        \
	                * minority's: its signature, nw_coll_sig) as #seq of view's comm; n:    \
	                * what it differs in (NW_MM_*) */                                        \
	X(MM_WHERE)    /* ... where set's ranks used op's signature (the majority's; n: what) */ \
	X(MM_WHILE)    /* ... while set's ranks used op's (a tie; n: what) */                   \
	X(MM_WAIT)     /* ...; they wait in it */                                               \
	X(MM_BY_HISTORY) /* ... (no majority: the comm's history gives the majority's op) */    \
	X(MM_TIE)      /* MISMATCH summary: cannot tell which of set's ranks deviates at #seq,  \
	                * then MM_CALLED, MM_WHILE */                                            \
	X(MM_OP)       /* MISMATCH evidence: op's signature (its group's; n: NW_MM_SIDE, what  \
	                * << 4, the group << 8) */                                               \
	X(MM_STATE)    /* ...proc's op's state, where it issued it (n 1: said) */              \
	X(SB_ONE)      /* STREAM_BLOCKED summary: proc's op (a replay: of its graph) of view's   \
	                * comm has not started in age n: (then SB_WHY) */                         \
	X(SB_MANY)     /* ...: set's ranks: op never started (for age n on proc; SB_WHY_IN) */   \
	X(SB_WHY)      /* what proc's stream is busy with: op (view: its comm's; its state for  \
	                * its age), NULL: none, work that is not NCCL on stream n */              \
	X(SB_WHY_IN)   /* ...the same, then ")" */                                              \
	X(SB_IN)       /* ...; set's ranks wait in (op a send/receive: for) it */               \
	X(SB_STREAM)   /* STREAM_BLOCKED evidence: stream n busy with op (view: its comm's;      \
	                * NULL: no NCCL op pending), then WHERE */                                \
	X(TS_ALL)      /* TRANSPORT_STALL summary: every rank of view's comm started op_kind    \
	                * #seq, none completed it in age n */                                     \
	X(TS_STARTED)  /* ...evidence: STARTED for NW_AGE, not completed */                     \
	X(TS_VERSIONS) /* ...evidence: proc's NCCL, CUDA driver, host */                        \
	X(TS_STUCK)    /* TRANSPORT_STALL summary of an op no rule explains: set's ranks are   \
	                * stuck in op (view: its comm's, or NULL), nobody missing */             \
	X(TS_DONE)     /* ...evidence: set's ranks completed it */                              \
	X(TS_IN)       /* ...evidence: in op (view: its comm's), its state for NW_AGE; a send/   \
	                * receive with its peer, n what the peer posted of the other half       \
	                * (NW_FACT_OTHER: op named as the verdict's, TS_STUCK) */             \
	X(MR_PAST)     /* MISSING_RANK summary (past the others' end): set's ranks called       \
	                * op_kind #seq of view's comm after (MR_PAST_DONE) */                    \
	X(MR_PAST_DONE) /* ...set's ranks stopped at #seq: n 0 in a CUDA graph, 1 idle, 2 had   \
	                * finished with it */                                                     \
	X(MR_PAST_IN)  /* ...evidence: issued it past where the others stopped; then WHERE */    \
	X(MR_STOPPED)  /* ...evidence: stopped after #seq (n & 0xff: 0 idle, 1 finalized or     \
	                * destroyed it, n >> 8 the comm's state; 2 in a CUDA graph); then WHERE */\
	X(MR_SUM)      /* MISSING_RANK summary: set's ranks never called (n 0), ended inside    \
	                * (1), only captured (2) op_kind #seq of view's comm; then MR_WAIT */    \
	X(MR_WAIT)     /* ...set's ranks wait in it */                                          \
	X(MR_NOFILE_N) /* ...; n ranks of it have no file */                                    \
	X(MR_WAIT_IN)  /* MISSING_RANK summary, nobody named: set's ranks wait in op_kind #seq  \
	                * of view's comm for age n; then MR_UNKNOWN */                           \
	X(MR_UNKNOWN)  /* ...set's ranks (NULL: n of its ranks) have no file (may never have    \
	                * called it) */                                                          \
	X(MR_OUT)      /* MISSING_RANK evidence, a culprit: (n & 0xff) 0 left the comm (its      \
	                * state n >> 8) after #seq, 1 held in a group never ended, 2 never       \
	                * called it (coll_enqueued seq), 3 ended inside it, 4 captured it; then  \
	                * WHERE */                                                               \
	X(MR_IN)       /* ...evidence, a rank inside it: its state n - 1 (0: STARTED, no        \
	                * record) for NW_AGE */                                                  \
	X(IDLE)        /* IDLE summary: set's ranks created their comms, never called a         \
	                * collective; no NCCL call for age n */                                  \
	X(HEALTHY)     /* HEALTHY summary: no stall in job's processes (n running or elsewhere),\
	                * seq ops in flight */                                                   \
	X(HEALTHY_TIMEOUT) /* ..., none older than the timeout (n) */                          \
	X(HEALTHY_NOFILE) /* HEALTHY evidence: set's ranks have no file (job's world size) */ \
	X(ROOT_STREAM) /* rootcause.c STREAM_BLOCKED summary, after RANKS (set's): they issued op \
	                * (view: its comm's; NULL: unknown) before (ROOT_STREAM_END) */           \
	X(ROOT_STREAM_END) /* ...op on the same stream, the rest of the cycle the other way round */ \
	X(ROOT_DIFFERS) /* rootcause.c MISSING_RANK summary, after RANKS: set's ranks are in op    \
	                * (NULL: another op) while the others wait in (ROOT_DIFFERS_END) */      \
	X(ROOT_DIFFERS_END) /* ...op (NULL: unknown): the code path differs on set's ranks */    \
	X(ROOT_STREAM_HINT) /* its hint: one order of the comms sharing a stream on every rank */ \
	X(ROOT_BROKE)  /* rootcause.c evidence: proc broke the order it kept on its stream: op    \
	                * before (then ROOT_BROKE_THEN, _BEFORE, _LAST: its ops in that order) */ \
	X(ROOT_BROKE_THEN) /* ...op, then */                                                    \
	X(ROOT_BROKE_BEFORE) /* ...op before */                                                 \
	X(ROOT_BROKE_LAST) /* ...op */                                                          \
	X(ROOT_DEADLOCK) /* rootcause.c STREAM_BLOCKED summary: the program as written deadlocks: \
	                * set's ranks wait for each other in a cycle through stream order, none   \
	                * changed the order it kept */                                            \
	X(ROOT_DEADLOCK_HINT) /* its hint: one global order of the comms on every rank */        \
	X(ROOT_DEVIATES) /* rootcause.c evidence on a rule's verdict: set's ranks deviate */     \
	X(ROOT_IN_CYCLE) /* ...in a cycle of waits (set's ranks): the reason of tie-break n     \
	                * (enum nw_tiebreak) */                                                   \
	X(ROOT_NOBODY) /* ...: the other ranks the rule named wait for others */                 \
	X(ROOT_UNDECIDED) /* rootcause.c evidence: cannot decide which of set's ranks (a cycle)   \
	                * deviated: all are named */                                              \
	X(ROOT_UNDECIDED_PREFIX) /* rootcause.c summary, before the summary it prefixes: cannot  \
	                * decide between set's ranks, waiting for each other */                   \
	X(ROOT_CONSEQUENCE) /* rootcause.c evidence, before the summary it wraps: a consequence \
	                * of verdict kind n */                                                  \
	X(RAS_ERROR)   /* verdicts_ras.c summary (a text report): set's ranks of comm n reported \
	                * the error seq (NW_RAS_ERR: an async or an init error) */               \
	X(RAS_ERROR_AT) /* ...evidence: comm rank and pid seq (NW_RAS_RANK_PID) on set's host      \
	                * reported error n (NW_RAS_ERR) */                                          \
	X(RAS_ERROR_HINT) /* ...hint of an async error: where its error string is */             \
	X(RAS_IN_INIT) /* ...summary: seq & 0xffffffff of the seq >> 32 ranks of comm n are      \
	                * still inside its init (a minority named, else the comm) */             \
	X(RAS_IN_INIT_WHY) /* ...evidence: RAS lists a comm once past the rendezvous */          \
	X(RAS_LAUNCH_AT) /* ...evidence: comm rank and pid seq (NW_RAS_RANK_PID) on set's host    \
	                * ("" unknown) launched op_kind n times */                                  \
	X(RAS_OUTLIERS) /* ...evidence, after LAUNCH_MAJORITY: a text report lists only its       \
	                * outliers by rank */                                                     \
	X(RAS_EQUAL)   /* ...TRANSPORT_STALL summary: a text report with no mismatch, error or  \
	                * missing process */                                                     \
	X(RAS_NO_COMM) /* ...INIT_STALL summary: the report lists no communicator */            \
	X(RAS_NO_COMM_WHY) /* ...evidence: a rank that never arrived cannot be named from RAS */ \
	X(RAS_HEALTHY) /* ...HEALTHY summary: nothing RAS can see is wrong */                  \
	X(SOURCE_NOTE) /* evidence, last on every verdict of a job: what its source cannot tell \
	                * (a proc's source_note: a Flight Recorder dump, NCCL RAS), name */

#define NW_FACT_ENUM_(name) NW_F_##name,
enum nw_fact_kind { NW_F_NONE = 0, NW_FACT_KINDS(NW_FACT_ENUM_) NW_F_NKINDS };
#undef NW_FACT_ENUM_

/* One fact. The references point into the analysis (job->procs, their
 * ops and comms, job->comms): valid as long as the analysis is. */
struct nw_fact {
	uint16_t kind;                       /* enum nw_fact_kind */
	const struct nw_proc *proc;
	const struct nw_seg_op *op;
	const struct nw_seg_comm *comm;      /* the comm concerned (the op's, or the one in error) */
	const struct nw_seg_comm *acomm;     /* a second comm (an async error's), or NULL */
	const struct nw_comm_view *view;     /* the job's view of the op's comm, or NULL */
	const struct nw_job *job;            /* the job concerned, or NULL */
	uint64_t n;
	const struct nw_fset *set;           /* a rank set the findings own (nw_findings_set), or NULL */
	const char *name;                    /* a string of the analysis (interned): the file of a
	                                      * source the fact names (a NCCL RAS report), or a
	                                      * source's note in its own words (SOURCE_NOTE); NULL */
	uint64_t seq;                        /* an op named by number when no record stands for it: */
	uint16_t op_kind;                    /* its seq and kind */
};

/* The tie-breaks between the processes of a cycle (rootcause.c's table,
 * in the order they are tried): how a cycle's deviants are known (a
 * ROOT_IN_CYCLE fact's n); 0: not decided. */
enum nw_tiebreak {
	NW_TB_COUNTS = 1,       /* send/receive counts that do not add up */
	NW_TB_NEVER_ISSUED,     /* never issued an op the others wait in */
	NW_TB_SKIPPED,          /* skipped a collective the others issued before */
	NW_TB_SKIPPED_SPLIT,    /* went past a split the others make every step */
	NW_TB_MAJORITY,         /* stuck in another op than the majority */
	NW_TB_MISMATCH,         /* a MISMATCH with a majority names it */
	NW_TB_ORDER_KEPT,       /* reversed the order it kept on its stream */
	NW_TB_N
};

/* A RAS_ERROR(_AT) fact's error: the ncclResult_t, and whether it is an
 * init error (else an async error). A RAS_*_AT fact's seq: the rank's
 * comm rank and pid, as the report lists them. */
#define NW_RAS_ERR(result, init) ((uint64_t)(uint32_t)(result) | (uint64_t)!!(init) << 32)
#define NW_RAS_ERR_RESULT(n) ((int)(int32_t)(uint32_t)(n))
#define NW_RAS_ERR_INIT(n) ((int)((n) >> 32) & 1)
#define NW_RAS_RANK_PID(rank, pid) ((uint64_t)(uint32_t)(rank) | (uint64_t)(uint32_t)(pid) << 32)
#define NW_RAS_RANK(seq) ((int)(int32_t)(uint32_t)(seq))
#define NW_RAS_PID(seq) ((int)(int32_t)(uint32_t)((seq) >> 32))

/* n of a fact that says "another number" rather than a number. */
#define NW_FACT_OTHER UINT64_MAX

/* A WHERE fact's n: its op is stuck (else the newest), the process is
 * idle, the main thread's stack is said; the ended state of its op
 * (NW_WH_ENDED(n): 0 none, 1 the others completed it, 2 some did, 3 none
 * did). */
#define NW_WH_STUCK 0x1u
#define NW_WH_IDLE 0x2u
#define NW_WH_STACK 0x4u
#define NW_WH_ENDED_SHIFT 4
#define NW_WH_ENDED(n) (((n) >> NW_WH_ENDED_SHIFT) & 3u)

/* What a MISMATCH's minority's op differs in (MM_* facts' n). */
enum nw_mm_what { NW_MM_OP, NW_MM_COUNT, NW_MM_DTYPE, NW_MM_ROOT, NW_MM_REDOP };
/* MM_OP's side, n & 0xf: the majority, the majority by the history, one
 * side of a tie, the minority (differs in what, n >> 4 & 0xf). */
enum nw_mm_side { NW_MM_MAJORITY, NW_MM_HISTORY, NW_MM_ONE_SIDE, NW_MM_DIFFERS };

/* A set of processes a fact names, owned by the findings: ranks, and the
 * processes without rank (how many; the first one); for a group of
 * evidence (EG_HEAD), the range of its members' ages (lo NW_NO_AGE: none). */
struct nw_fset {
	struct nw_rankset ranks;
	size_t others;
	const struct nw_proc *other;
	uint64_t age_lo, age_hi;
	char *host;                          /* a host it names (nw_findings_host: one a source
	                                      * lists where the job has no process), or NULL */
	struct nw_fset *next;                /* the findings' list */
	unsigned refs;                       /* the findings' and each part's naming it */
};

/* A part of a line: a fact, or (text != NULL) a rule's own words. */
struct nw_part {
	struct nw_fact f;
	char *text;
};

/* A line: its parts, said one after another. n == 0: no findings (the
 * verdict's text is the line). */
struct nw_line {
	struct nw_part *p;
	size_t n;
};

/* A verdict's findings (struct nw_verdict's `found`; NULL: all text). A
 * line with parts wins over the text at the same place: words/ replaces
 * the summary, evidence[i] (NULL until then) and, while the hint is
 * NULL, the hint with what it says. */
struct nw_findings {
	struct nw_line summary;
	struct nw_line hint;
	struct nw_line *evidence;            /* [nev]: line i of the evidence; nev <= nevidence */
	size_t nev;
	char *hint_said;                     /* words/: the hint's storage */
	struct nw_fset *sets;                /* the sets its facts name */
	int said;                            /* words/ said them: the text is filled */
};

void nw_findings_free(struct nw_findings *f);
/* A chain of rank sets (nw_fset.next), each released. */
void nw_fsets_free(struct nw_fset *s);

#endif
