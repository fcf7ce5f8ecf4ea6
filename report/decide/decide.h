/* decide.h: the engine's top layer and its entry point (nw_analyze).
 * The culprits are where waiting ends: the rules add candidate verdicts and
 * edges of the wait-for graph, the root-cause pass decides which
 * candidates are causes and which are consequences, and the verdicts are
 * ranked. The renderers (report/words/) read struct nw_analysis and
 * nothing else.
 *
 *   analyze.c        nw_analyze, nw_analysis_free: load, model, then per job the verdicts
 *   verdicts.c       the per-job pass: indexes, runs the rules, the graph, the
 *                    root-cause pass, ranks the verdicts
 *   verdict_build.c  building a verdict: creating it, its culprits, waiting
 *                    ranks and blamed graph nodes (no words: findings.c)
 *   process_view.c   read-only questions the rules ask: a member's ops, its collective
 *                    #n, peers, the op a stream is busy with, where a process is
 *   verdicts_*.c     the rules, one family per file
 *   rule_fate.c      ranks of one process share its fate
 *   lost.c           data lost: evidence, never HEALTHY
 *   rootcause.c      the wait-for model's decision: root causes, consequences, who
 *                    deviates inside a cycle
 *   majority.c       the strict majority of counted groups (majority.h), for every
 *                    rule that lets the majority decide who deviates
 *   verdicts_ras.c, ras_merge.c  NCCL RAS (docs/ras.md): the rules not yet moved
 *                    into the ordinary ones, and the hook that hands their verdicts
 *                    to the job a report joined (one verdict set of them:
 *                    nw_rules_stacks_weigh, nw_fold_launch_only)
 *   facts.h, findings.c  a verdict's findings: facts, not words (words/ says them) */
#ifndef NCCLWATCH_REPORT_DECIDE_H
#define NCCLWATCH_REPORT_DECIDE_H

#include "../model/model.h"
#include "facts.h"

/* ---- verdicts ---- */

/* In order of precedence: a job's verdicts are sorted by kind (highest
 * first), then by the number of ranks concerned. The kinds' table is
 * report/verdict_kinds.h: NW_V_HEALTHY = 0 ... NW_V_GPU_FAULT. */
#define NW_VK_ENUM_(name, severity, hint) NW_V_##name = severity,
enum nw_verdict_kind { NW_VERDICT_KINDS(NW_VK_ENUM_) };
#undef NW_VK_ENUM_

/* A kind's name ("MISSING_RANK") and DESIGN.md's hint are words:
 * nw_verdict_name, nw_verdict_hint (words/words.h). */

struct nw_verdict {
	int kind;                      /* enum nw_verdict_kind */
	uint64_t comm_id;              /* 0: not about one communicator */
	int32_t comm_nranks;
	uint16_t op_kind;              /* enum nw_op_kind of the op concerned, 0 none */
	uint64_t seq;                  /* its sequence number, 0 none */
	uint64_t replay;               /* a replay of a CUDA graph: its replay number (op_kind and seq
	                                * then name the graph's first captured op); 0 none */
	struct nw_rankset culprits;    /* global ranks to blame (empty: the comm/link itself) */
	struct nw_rankset waiting;     /* global ranks that wait because of them */
	struct nw_rankset unknown;     /* ranks concerned whose files are missing */
	char *summary;                 /* one line, the verdict in words: "rank 5 never called
	                                * AllReduce #23 on comm 4f2a... (8 ranks); ranks 0-4,6-7
	                                * wait in it" */
	size_t nevidence;
	char **evidence;               /* lines: what was seen, per rank group */
	const char *hint;              /* a more specific hint, or NULL: nw_words_say gives the
	                                * findings' hint, else the kind's (nw_verdict_hint) */
	uint64_t launches;             /* NCCL RAS: the op as a launch count of its kind ("AllReduce
	                                * launches=6"), not an op number: RAS counts each kind
	                                * apart and never sends/receives; seq is then 0. 0 none */
	struct nw_findings *found;     /* what a converted rule found (facts.h), for words/ to say:
	                                * its lines replace summary, evidence[i], hint; NULL none */
};

/* Read every segment that `paths` name (files or directories, as
 * nw_segment_list), build the jobs and their verdicts. Returns 0, or -1
 * with *err set when nothing at all could be read (no segment found, or
 * out of memory); unreadable files are listed in a->bad and do not fail
 * the call. */
int nw_analyze(const char *const *paths, size_t npaths, const struct nw_analysis_options *opt,
               struct nw_analysis *a, struct nw_read_error *err);
void nw_analysis_free(struct nw_analysis *a);

/* The worst verdict kind of all jobs (NW_V_HEALTHY if none). */
int nw_analysis_worst(const struct nw_analysis *a);

/* ---- the per-job pass ---- */

/* One member's collective position on one comm. */
struct nw_mpos {
	const struct nw_seg_op *pend;    /* its oldest pending (ENQUEUED/STARTED) collective, or NULL */
	uint64_t pend_seq;               /* its seq (0 none) */
	uint64_t age_ns;                 /* how long it has waited (since enqueue) */
	int stuck;                       /* pending longer than the timeout */
};

/* Per process of the job, built once: its kept ops indexed by comm slot. */
struct nw_pctx {
	struct nw_proc *p;
	uint32_t *order;                 /* op indices sorted by (comm slot, seq, ticket) */
	uint32_t *slot_off;              /* [ncomms + 2]: ops of slot s = order[slot_off[s] .. slot_off[s+1]);
	                                  * slot ncomms: ops with no (known) slot */
	uint8_t fault;                   /* has a GPU_FAULT verdict */
	uint8_t behind;                  /* verdicts_coll.c: 0 not known yet, 1 no, 2 a strict
	                                  * majority of one of its comms issued past it */
};

/* A verdict being built, with what the engine needs besides the public part. */
struct nw_vwork {
	struct nw_verdict v;
	uint32_t *blame;                 /* graph nodes whose waiters are `waiting` (culprits, or the
	                                  * stuck members when the comm itself is blamed) */
	size_t nblame, capblame;
	int dropped;                     /* withdrawn (e.g. a pair folded into a deadlock, or a
	                                  * consequence folded into its root cause) */
	size_t created;                  /* its index in x->vw: the order rules made it in */
	int launch_only;                 /* judged on launch-only positions (verdicts_launch.c): what
	                                  * NCCL RAS's counts say, a line beside a segment's verdict */
};

struct nw_jctx {
	struct nw_analysis *a;
	struct nw_job *job;
	struct nw_intern *in;
	uint64_t timeout_ns;
	struct nw_pctx *pc;              /* [job->nprocs] */
	struct nw_graph g;
	uint8_t *sink;                   /* [job->nprocs]: the process waits for nothing: it exited,
	                                  * or died while the job went on (verdicts.c: find_sinks) */
	struct nw_vwork **vw;            /* verdicts so far */
	size_t nvw, capvw;
	/* what the collective pass leaves for the later ones */
	struct nw_sblock *sblocks;       /* STREAM_BLOCKED candidates */
	size_t nsblocks, capsblocks;
	struct nw_rankset **sets;        /* rank sets the candidates share, freed at the end */
	size_t nsets, capsets;
	struct nw_p2p_pair *pairs;       /* unmatched p2p pairs */
	size_t npairs, cappairs;
	size_t nfacts;                   /* vw[0..nfacts): the verdicts of the rules on the model's
	                                  * facts; after them, those from stacks (nw_rules_stacks) */
	size_t nstacks;                  /* vw[nfacts..nstacks): the stacks'; after them, the own
	                                  * verdicts of a source that joined (the hook's) */
	const char *joined;              /* a launch-only source lined up with the job's processes
	                                  * (a NCCL RAS report: the hook, ras_merge.c): its file
	                                  * (interned), NULL none. Its verdicts (launch_only) are
	                                  * weighed against the stacks' (nw_rules_stacks_weigh) or
	                                  * fold into the segments' (nw_fold_launch_only) */
	struct nw_fact joined_line;      /* what it says of the job (kind 0: nothing), on the first
	                                  * verdict left standing */
	int oom;
};

/* A rank whose collective #n (or send/receive, or replay) never started
 * past the timeout. */
struct nw_sblock {
	const struct nw_comm_view *view;
	uint32_t member;                 /* its comm rank */
	const struct nw_seg_op *op;
	uint64_t age_ns;
	const struct nw_rankset *waiting_in_it; /* the members inside the same #n (shared; x->sets) */
};

/* A blocked rank (member r of v, its op pending since age), for
 * nw_rules_stream; `waiting`: the members inside the same op, a set from
 * nw_shared_set (lives until the end of the job's pass). */
void nw_add_sblock(struct nw_jctx *x, const struct nw_comm_view *v, int32_t r, const struct nw_seg_op *op,
                   uint64_t age, const struct nw_rankset *waiting);
const struct nw_rankset *nw_shared_set(struct nw_jctx *x, const struct nw_rankset *src);

/* The CAPTURED NCCL ops of the graph that launch l (one of p's ops, a
 * GraphLaunch) replays, in capture order, at most max: its first op's
 * CAPTURED record (the newest before l of its comm, kind and seq: the
 * launch's redop and root, segment 2.2) and the CAPTURED ops recorded
 * after it, l->count in all. Fewer when the ring lost them; 0 in a 2.1
 * file (verdicts_graph.c). */
size_t nw_graph_ops(const struct nw_proc *p, const struct nw_seg_op *l, const struct nw_seg_op **out, size_t max);
/* p's launch of replay l->seq of the graph that launch l (another
 * process's) replays: the same identity (its first op's kind and seq), on
 * whichever comm p's first op is; NULL if p did not launch it (*launched:
 * the highest replay of that graph p launched, 0 none; 0 and NULL in a 2.1
 * file, whose launches carry no identity). */
const struct nw_seg_op *nw_graph_replay_of(const struct nw_proc *p, const struct nw_seg_op *l, uint64_t *launched);
/* The identity of the graph launch l replays (the seq of its first captured
 * op on its comm; 0 unknown: a 2.1 file), and whether it replays ops on
 * comm `comm` (its first op's, or another captured op's). */
uint64_t nw_graph_ident(const struct nw_proc *p, const struct nw_seg_op *l);
int nw_launch_touches(const struct nw_proc *p, const struct nw_seg_op *l, uint64_t comm);

/* A pending send/receive whose other half was never posted. */
struct nw_p2p_pair {
	const struct nw_comm_view *view;
	uint32_t waiter;                 /* job index of the process that waits */
	uint32_t culprit;                /* job index of the one that did not post (UINT32_MAX: no file) */
	int32_t culprit_crank;           /* its comm rank */
	const struct nw_seg_op *op;      /* the waiter's pending Send/Recv, or a CAPTURED one of... */
	const struct nw_seg_op *launch;  /* ...the graph of this pending GraphLaunch (else NULL) */
	uint64_t peer_pos;               /* the culprit's recv_enqueued from / send_enqueued to the waiter */
	uint32_t primary;                /* a misdirected post: index of the pair whose verdict reports
	                                  * it (its waiter is that pair's culprit), else UINT32_MAX */
	int folded;                      /* reported by a deadlock or another pair's verdict */
	int32_t orphan_crank;            /* >= 0: the comm rank at the other end of a completed send
	                                  * nobody received that makes the culprit's post misdirected
	                                  * (the culprit's send to it; or, culprit == waiter, its send
	                                  * to the waiter), verdicts_p2p.c */
};

struct nw_vwork *nw_verdict_new(struct nw_jctx *x, int kind, const struct nw_comm_view *view,
                                uint16_t op_kind, uint64_t seq);
void nw_verdict_blame(struct nw_jctx *x, struct nw_vwork *w, uint32_t node);
void nw_verdict_culprit(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p);
void nw_verdict_waiting(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p);
void nw_vwork_free(struct nw_vwork *w);
/* Findings (facts.h, findings.c), the only way decide says anything: a
 * fact appended to the summary, as one evidence line, as the hint. A
 * pass that wraps another verdict's summary wraps its findings (or the
 * words it came with): an evidence line of w that is the fact head then
 * from's summary; w's summary after the fact head. (A pass that reads
 * summary or evidence text reads NULL: the words come after decide.) */
void nw_verdict_summary_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f);
void nw_verdict_evidence_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f);
/* One evidence line of n facts. */
void nw_verdict_evidence_facts(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f, size_t n);
void nw_verdict_hint_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *f);
void nw_verdict_evidence_wrap_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *head,
                                   const struct nw_vwork *from);
void nw_verdict_summary_prefix_fact(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *head);
/* w's summary (findings or words) said between facts open and close. */
void nw_verdict_summary_wrap(struct nw_jctx *x, struct nw_vwork *w, const struct nw_fact *open,
                             const struct nw_fact *close);
void nw_line_free(struct nw_line *l);
void nw_set_add(struct nw_jctx *x, struct nw_rankset *s, int32_t rank);
void nw_rankset_clear(struct nw_rankset *s);

/* An age is NW_NO_AGE for none (a set's range of ages: words/ says it
 * where a line's words hold NW_AGE, words_int.h). */
#define NW_NO_AGE UINT64_MAX
/* Evidence grouped across ranks by fact (findings.c): a line of nf facts per process,
 * one line for the processes whose facts are the same but the process
 * (kind and fields; a WHERE fact also what the process shows), said as
 * "ranks 0-4,6-7: " (EG_HEAD) then the facts, whose NW_AGE is the group's
 * range of ages; "... N more groups" (EG_MORE) past `max`. */
struct nw_fgroup;
struct nw_fgroups {
	struct nw_fgroup *g;
	size_t n;
};
void nw_fg_add(struct nw_jctx *x, struct nw_fgroups *eg, const struct nw_proc *p, const struct nw_fact *f,
               size_t nf, uint64_t age);
void nw_fg_flush(struct nw_jctx *x, struct nw_vwork *w, struct nw_fgroups *eg, size_t max);
/* A copy of r the findings of w own, for a fact's `set`. */
const struct nw_fset *nw_findings_set(struct nw_jctx *x, struct nw_vwork *w, const struct nw_rankset *r);
/* The same with `others` processes without rank, other the first of them
 * (said by its label when it is the set's only process), or NULL. */
const struct nw_fset *nw_findings_set_others(struct nw_jctx *x, struct nw_vwork *w, const struct nw_rankset *r,
                                             size_t others, const struct nw_proc *other);
/* An empty set whose range of ages is lo..hi (a line head's: INIT_GONE,
 * PROC_AT). */
const struct nw_fset *nw_findings_aged(struct nw_jctx *x, struct nw_vwork *w, uint64_t lo, uint64_t hi);
/* A set of no rank that names a copy of `host` (one a source lists where
 * the job has no process), for a fact's `set`. */
const struct nw_fset *nw_findings_host(struct nw_jctx *x, struct nw_vwork *w, const char *host);

/* Members of a comm with no file: their global ranks go to `unknown` when
 * the comm numbers its ranks like the world (comm rank = global rank),
 * else their comm ranks are one evidence line (a COMM_NOFILE fact). */
int nw_view_identity(const struct nw_comm_view *v);
void nw_view_unknown_fact(struct nw_jctx *x, const struct nw_comm_view *v, struct nw_vwork *w);
/* The collectives of a member (ops of its slot), sorted by seq. */
const struct nw_seg_op *nw_member_coll(struct nw_jctx *x, const struct nw_member *m, uint64_t seq);
void nw_member_ops(struct nw_jctx *x, const struct nw_member *m, uint32_t **idx, size_t *n);
const struct nw_seg_peer *nw_proc_peer(const struct nw_proc *p, uint32_t slot, int32_t peer);
uint32_t nw_member_slot(const struct nw_member *m);
const struct nw_comm_view *nw_view_of(struct nw_jctx *x, uint64_t id);
/* The index of the process with global rank `rank` in job->procs, or nprocs. */
size_t nw_proc_by_rank(const struct nw_job *job, int32_t rank);
/* The nearest older op on the same stream that has not completed (of any
 * comm, not of the same group), or NULL: the work `op` waits behind. */
const struct nw_seg_op *nw_previous_work(const struct nw_proc *p, const struct nw_seg_op *op);
/* Where a process is, as a fact (WHERE, facts.h): its oldest stuck op, or
 * its newest op; idle time; how it ended; its main stack. Returns its one
 * age (NW_NO_AGE: none). */
uint64_t nw_fact_where(struct nw_jctx *x, const struct nw_proc *p, int with_stack, struct nw_fact *f);
/* 1.4: "file.py:line in function" where op (one of p->ops) was issued, or NULL. */
const char *nw_op_site(const struct nw_proc *p, const struct nw_seg_op *op);
/* The thread of p that runs a CUDA host function (load.c), or NULL
 * (process_view.c; words/ says the one a STREAM_BLOCKED from stacks blames). */
const struct nw_thread_stack *nw_stack_host_fn(const struct nw_proc *p);
/* Evidence: where each process of the graph's component `scc` is, a WHERE
 * fact per process, grouped (nw_fg_*). */
void nw_fact_where_component(struct nw_jctx *x, struct nw_vwork *w, uint32_t scc);

/* The rule files. Each adds verdicts (nw_verdict_new) and graph edges. */
void nw_rules_fault(struct nw_jctx *x);          /* verdicts_fault.c: GPU_FAULT */
/* verdicts_fault.c: whether a comm's async_error is a fault (not
 * ncclSuccess, not ncclInProgress). */
int nw_async_fault(int32_t e);
void nw_rules_init(struct nw_jctx *x);           /* verdicts_init.c: INIT_STALL */
/* verdicts_coll.c: what every rank must agree on in a collective (its
 * signature): ncclBcast as ncclBroadcast (the same collective in place),
 * the root of rooted ops, the redop of reductions (PreMulSum ops as one
 * class: 5), else -1. */
struct nw_coll_sig {
	uint64_t count;
	uint16_t kind;
	uint8_t dtype;
	int32_t root;
	int32_t redop;
};
struct nw_coll_sig nw_coll_sig(const struct nw_seg_op *op);
void nw_rules_coll(struct nw_jctx *x);           /* verdicts_coll.c: MISMATCH, MISSING_RANK,
                                                  * TRANSPORT_STALL; STREAM_BLOCKED candidates */
void nw_rules_graph(struct nw_jctx *x);          /* verdicts_graph.c: stuck replays of CUDA graphs:
                                                  * MISSING_RANK, TRANSPORT_STALL */
void nw_rules_order(struct nw_jctx *x);           /* verdicts_order.c: eager ops and replays on one
                                                  * comm in another order than the majority's */
void nw_rules_lineup(struct nw_jctx *x);          /* verdicts_lineup.c: a comm's collectives as they
                                                  * run (replays expanded), compared past the
                                                  * newest replay every member kept; called by
                                                  * nw_rules_order */
void nw_rules_p2p(struct nw_jctx *x);            /* verdicts_p2p.c: unmatched pairs + edges */
void nw_rules_graph_held(struct nw_jctx *x);     /* verdicts_graph.c: after the p2p edges, a replay
                                                  * stall whose member waits on another comm of the
                                                  * graph is that member's hold, not the link's */
void nw_rules_p2p_verdicts(struct nw_jctx *x);   /* after the graph: P2P_DEADLOCK, P2P_UNMATCHED */
/* verdicts_p2p.c: in the cycle (strongly connected component) s, the
 * processes whose send/receive counts do not add up: in a pair where A's
 * send/receive #k waits for B, which posted fewer than k of the other
 * half, B if B went past k with another peer (it skipped one), else A if A
 * did more with B than with anybody else (one too many). Marks them in
 * deviant[] (if not NULL); returns how many it found. */
size_t nw_p2p_count_deviants(struct nw_jctx *x, uint32_t s, uint8_t *deviant);
void nw_rules_launch(struct nw_jctx *x);         /* verdicts_launch.c: MISSING_RANK, launch counts
                                                  * (launch-only positions) off the majority */
void nw_rules_left(struct nw_jctx *x);           /* verdicts_left.c: MISSING_RANK, a minority ended a
                                                  * comm (positions without op numbers) */
void nw_rules_stream(struct nw_jctx *x);         /* verdicts_coll.c: STREAM_BLOCKED */
void nw_rules_idle(struct nw_jctx *x);           /* verdicts_coll.c: IDLE, HEALTHY */
void nw_rules_lost(struct nw_jctx *x);           /* lost.c: data lost: evidence, no HEALTHY */
int nw_job_lost(struct nw_job *job);             /* lost.c: job->lost (0, -1 oom) */
/* After nw_rules_unexplained: a stall that blames only a communicator
 * whose earlier collective mismatched (a size mismatch shifts its streams
 * for good) becomes an evidence line of that MISMATCH (rootcause.c). */
void nw_fold_shifted(struct nw_jctx *x);
/* A job with segments that a launch-only source joined (x->joined): op
 * numbers decide, launch counts cannot; that source's verdicts (the rules'
 * on its positions and its own: launch_only) never stand, the first of
 * them is one line on each verdict that does (rootcause.c). */
void nw_fold_launch_only(struct nw_jctx *x);
void nw_rootcause(struct nw_jctx *x);            /* rootcause.c: roots, consequences, cycles */
/* After nw_rules_process_fate: verdicts whose culprits are now the same
 * ranks (one process's death) fold into the one of the higher kind
 * (rootcause.c). */
void nw_fold_same_culprits(struct nw_jctx *x);
void nw_rules_unexplained(struct nw_jctx *x, const uint8_t *explained); /* verdicts_coll.c: stuck ops
                                                  * that no verdict explains */
int nw_job_verdicts(struct nw_analysis *a, struct nw_job *job, struct nw_intern *in);

/* Every verdict that blames a rank of a process that is gone blames the
 * other ranks of that process that are gone too (after the rules, before
 * the waiting sets are filled). */
void nw_rules_process_fate(struct nw_jctx *x);
/* rule_fate.c: MISSING_RANK for the processes without op numbers that
 * their source saw gone (nw_proc.gone_how): culprits, their comms' others
 * waiting; when they are most of the world, the few still there. */
void nw_rules_gone(struct nw_jctx *x);
/* Every verdict (but a MISMATCH) that blames a rank whose thread has been
 * inside a group it never ended (nw_open_group_of) for longer than the
 * timeout blames the other ranks that thread holds there too (after the
 * rules, before the root-cause pass: verdicts then naming the same ranks
 * fold into one). */
void nw_rules_thread_fate(struct nw_jctx *x);

/* verdicts_stacks.c: verdicts from stacks alone for a job of snapshots
 * only; in a job with segments, what the snapshots of ranks without a
 * segment show, as evidence of the verdicts that name them. */
void nw_rules_stacks(struct nw_jctx *x);
/* A job of snapshots that a launch-only source joined (x->joined): the
 * verdicts from facts (the rules' and the source's own) against the
 * stacks': the former stand with the stacks' as lines when they name a
 * culprit (or nobody does), else the stacks' stand with the source's as
 * lines (docs/ras.md, "One job, one verdict"). After the hook. */
void nw_rules_stacks_weigh(struct nw_jctx *x);

/* launch_only.c: behind in launches is not always the culprit
 * (docs/ras.md). A process whose positions are launches
 * (NW_CAP_LAUNCH_ONLY) and whose sources see no send/receive (no
 * NW_CAP_SENDRECV), with fewer launches of collective kind `kind` on
 * comm_id than `launches` (the others'), may be waiting in an op no
 * source of it sees (a receive a peer owes it: a point-to-point hang holds
 * every rank's next collective back) when its main thread waits on the
 * GPU or inside another NCCL call than that collective's. 1 then, with
 * *entry the call it waits in (NULL: on the GPU or unknown); 0 when it is
 * to be blamed: no such position, outside NCCL, gone without a stack, or
 * inside the call of that very collective (not launched yet). */
int nw_launch_hidden_wait(const struct nw_proc *p, uint64_t comm_id, uint16_t kind, uint64_t launches,
                          const char **entry);


#endif
