/* analysis_int: what the engine's files share and nobody else sees.
 *
 *   analyze.c    nw_analyze, nw_analysis_free
 *   util.c       text buffers, interned strings and frame lists, ages, labels
 *   load.c       nw_load: paths -> deduplicated processes (struct nw_load)
 *   model.c      nw_model: processes -> jobs -> communicator views, then per job
 *                the verdicts, environment differences and merged stacks
 *   graph.c      the wait-for graph (processes and junction nodes), SCCs, reachability
 *   verdict_build.c  building a verdict (below the rules): kinds, summary, evidence,
 *                culprits, waiting, evidence grouped across ranks
 *   process_view.c   read-only questions the rules ask: a member's ops, its collective
 *                #n, peers, the op a stream is busy with, where a process is
 *   verdicts_*.c the rules, one family per file (they add candidate verdicts and edges)
 *   rootcause.c  the wait-for model's decision: which candidates are root causes,
 *                which are consequences, and who deviates inside a cycle
 *   verdicts.c   the per-job pass on top: indexes, runs the rules, the graph, the
 *                root-cause pass, ranks the verdicts
 *   envdiff.c, stackmerge.c, rankset.c: as analysis.h says
 *
 * uthash is configured here not to exit on out-of-memory (library code
 * never exits): a failed insertion sets a flag that nw_hash_oom_taken()
 * reports, and the caller fails the analysis with NW_READ_ERR_NOMEM. */
#ifndef NCCLWATCH_REPORT_ANALYSIS_INT_H
#define NCCLWATCH_REPORT_ANALYSIS_INT_H

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) nw_hash_oom_hit()
void nw_hash_oom_hit(void);
int nw_hash_oom_taken(void);          /* 1 if an insertion failed since the last call */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include "analysis.h"
#include "../names.h"

#define NW_NS 1000000000ull

/* ---- growable text ---- */

struct nw_buf {
	char *s;
	size_t len, cap;
	int oom;                          /* an append failed: the text is incomplete */
};

void nw_buf_printf(struct nw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void nw_buf_vprintf(struct nw_buf *b, const char *fmt, va_list ap);
void nw_buf_puts(struct nw_buf *b, const char *s);
void nw_buf_rankset(struct nw_buf *b, const struct nw_rankset *s);
/* Give the text away (NULL, and the buffer freed, if an append failed). */
char *nw_buf_take(struct nw_buf *b);
void nw_buf_free(struct nw_buf *b);

/* ---- interning: one copy of every frame string and frame list ---- */

struct nw_istr;
struct nw_ilist;
struct nw_intern {
	struct nw_istr *strs;
	struct nw_ilist *lists;
};

/* The one copy of s[0..len); NULL out of memory. */
char *nw_intern_str(struct nw_intern *in, const char *s, size_t len);
/* The one copy of the list of interned strings f[0..n); NULL for n == 0 or
 * out of memory (*oom set then). */
char **nw_intern_list(struct nw_intern *in, char *const *f, uint32_t n, int *oom);
void nw_intern_free(struct nw_intern *in);

/* ---- small helpers ---- */

/* "2.6 s", "31 s", "12 min", "3.1 h". */
const char *nw_fmt_age(uint64_t ns, char buf[32]);
/* "rank 5", or "pid 123 on host" when the global rank is unknown. */
const char *nw_proc_label(const struct nw_proc *p, char buf[128]);
/* "comm 4f2ac2b9efdeda6d" or "comm 4f2ac2b9efdeda6d \"tp\"". */
const char *nw_comm_label(uint64_t id, const char *name, char buf[128]);
/* now - t on the process's clock (0 when t is 0 or in its future). */
uint64_t nw_age(const struct nw_proc *p, uint64_t t);
/* The thread of the process's capture that is its main thread (tid ==
 * pid, else the first that is not the watchdog), or NULL. */
const struct nw_thread_stack *nw_main_thread(const struct nw_proc *p);
/* "frame0 < frame1 < ..." of at most `max` frames. */
void nw_buf_frames(struct nw_buf *b, const struct nw_thread_stack *t, uint32_t max);
/* Op states that are not final: the op waits for the GPU or the call has not returned. */
static inline int nw_op_pending(uint32_t state)
{
	return state == NW_ST_ENQUEUED || state == NW_ST_STARTED;
}
int nw_cmp_u64(uint64_t a, uint64_t b);
/* 0 collective, 1 send/receive, 2 anything else (init, group, ...). */
static inline int nw_op_class(uint16_t kind)
{
	return NW_OP_IS_COLL(kind) ? 0 : NW_OP_IS_P2P(kind) ? 1 : 2;
}

/* ---- load and model ---- */

struct nw_load {                      /* what load.c hands to model.c */
	struct nw_proc **procs;
	size_t nprocs;
};

/* rank_split.c: each process that drives several ranks (comms of several
 * CUDA devices) replaced by one view per rank; 0, or -1 out of memory. */
int nw_split_ranks(struct nw_proc ***procs, size_t *nprocs);
/* Whether two views are of one process (host, pid, start time). */
int nw_same_process(const struct nw_proc *a, const struct nw_proc *b);
/* Whether p has no op pending and another rank of its process has one
 * that thread tid issued: tid, blocked, waits for that rank. */
int nw_sibling_pending(const struct nw_job *job, const struct nw_proc *p, uint32_t tid);
/* Every verdict that blames a rank of a process that is gone blames the
 * other ranks of that process that are gone too (after the rules, before
 * the waiting sets are filled). */
void nw_rules_process_fate(struct nw_jctx *x);

/* comm_instances.c: one comm per comm instance of a segment (2.0 reuses
 * the slots of ended comms; an op or peer entry of an older generation is
 * of a comm rebuilt from its records), in creation order. */
struct nw_comm_instances {
	uint32_t ncomms;
	struct nw_seg_comm *comms;     /* the table's comms and the rebuilt ones */
	uint32_t *op_comm;             /* [seg->op_count]: each op's index in comms, UINT32_MAX none */
	uint32_t npeers;
	struct nw_seg_peer *peers;     /* comm_slot: an index in comms; entries of no known comm left out */
};
int nw_comm_instances(const struct nw_segment *seg, struct nw_comm_instances *out);   /* 0, -1 oom */
void nw_comm_instances_free(struct nw_comm_instances *ci);

/* split: a process of several ranks becomes one view per rank (rank_split.c). */
int nw_load(const char *const *paths, size_t npaths, int max_threads, int split, struct nw_analysis *a,
            struct nw_load *out, struct nw_read_error *err);
void nw_proc_free(struct nw_proc *p);
int nw_model(struct nw_analysis *a, struct nw_load *ld, const struct nw_analysis_options *opt);

/* ---- the wait-for graph ----
 *
 * Nodes 0 .. nprocs-1 are the job's processes (job_index); the others are
 * junctions, one per reason many processes wait for many others (e.g.
 * "collective #n of comm C": every member stuck in it points to the
 * junction, the junction points to every member that did not issue it), so
 * the graph stays linear in the number of ranks. An edge says "src cannot
 * go on until dst does something". */

enum nw_edge_kind {
	NW_E_COLL = 1,       /* a collective dst has not issued */
	NW_E_BLOCK = 2,      /* a collective dst issued but holds up (not started, failed, mismatched) */
	NW_E_P2P = 3,        /* a send/receive dst never posted the other half of */
	NW_E_INIT = 4,       /* a communicator creation dst never entered */
	NW_E_WAIT = 5,       /* a send/receive both sides posted: src waits for dst's progress;
	                      * it counts for who waits, never for cycles or roots */
};

struct nw_edge {
	uint32_t src, dst;
	uint8_t kind;                    /* enum nw_edge_kind */
	const struct nw_seg_op *op;      /* the op src is stuck in (edges out of a process) */
	const struct nw_comm_view *view; /* the comm concerned */
	uint64_t seq;                    /* its seq (or the position the peer is at, for P2P) */
	uint64_t peer_pos;               /* P2P: dst's position on the other side */
};

struct nw_graph {
	uint32_t nprocs, nnodes;
	size_t nedges, cap;
	struct nw_edge *edges;
	/* built by nw_graph_freeze: CSR forward and reverse */
	uint32_t *fwd_off, *fwd;          /* fwd[] = edge indices */
	uint32_t *rev_off, *rev;
	uint32_t *scc;                    /* SCC id per node (NW_E_WAIT edges left out) */
	uint32_t nscc;
	uint32_t *stamp, *stack, gen;     /* nw_graph_waits' scratch */
	const uint8_t *sink;              /* [nprocs]: processes that wait for nothing (dead or
	                                   * exited): edges out of them are not added */
	int oom;
};

uint32_t nw_graph_junction(struct nw_graph *g);
void nw_graph_edge(struct nw_graph *g, uint32_t src, uint32_t dst, int kind, const struct nw_seg_op *op,
                   const struct nw_comm_view *view, uint64_t seq, uint64_t peer_pos);
int nw_graph_freeze(struct nw_graph *g);          /* CSR + SCCs; -1 out of memory */
/* Every node from which one of seeds[] is reachable, the seeds included,
 * into out[] (room for nnodes); returns how many. */
size_t nw_graph_reaching(struct nw_graph *g, const uint32_t *seeds, size_t nseeds, uint32_t *out);
/* Whether node `n` waits for someone (an edge out other than NW_E_WAIT). */
int nw_graph_waits(struct nw_graph *g, uint32_t n);
/* Marks in mark[] (zeroed, [nprocs]) the processes of component s that an
 * edge from inside s says never issued something (a collective, a
 * creation, the other half of a send/receive); returns how many. */
size_t nw_graph_never_issued(const struct nw_graph *g, uint32_t s, uint8_t *mark);
void nw_graph_free(struct nw_graph *g);

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
};

/* A verdict being built, with what the engine needs besides the public part. */
struct nw_vwork {
	struct nw_verdict v;
	uint32_t *blame;                 /* graph nodes whose waiters are `waiting` (culprits, or the
	                                  * stuck members when the comm itself is blamed) */
	size_t nblame, capblame;
	struct nw_buf ev;                /* scratch for one evidence line */
	int dropped;                     /* withdrawn (e.g. a pair folded into a deadlock, or a
	                                  * consequence folded into its root cause) */
	size_t created;                  /* its index in x->vw: the order rules made it in */
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
	int oom;
};

/* A rank whose collective #n never started past the timeout. */
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
void nw_verdict_summary(struct nw_jctx *x, struct nw_vwork *w, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void nw_verdict_evidence(struct nw_jctx *x, struct nw_vwork *w, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The verdict's scratch line (w->ev) as one evidence line. */
void nw_verdict_evidence_flush(struct nw_jctx *x, struct nw_vwork *w);
void nw_verdict_blame(struct nw_jctx *x, struct nw_vwork *w, uint32_t node);
void nw_verdict_culprit(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p);
void nw_verdict_waiting(struct nw_jctx *x, struct nw_vwork *w, const struct nw_proc *p);
void nw_vwork_free(struct nw_vwork *w);
void nw_set_add(struct nw_jctx *x, struct nw_rankset *s, int32_t rank);
void nw_rankset_clear(struct nw_rankset *s);

/* Evidence lines grouped by text across ranks: "ranks 0-4,6-7: TEXT",
 * in the order of each group's first process, at most `max` lines (then
 * "... N more"). */
struct nw_egroup;
struct nw_egroups {
	struct nw_egroup *h;
	struct nw_egroup **order;
	size_t n, cap;
};
/* NW_AGE in a text stands for an age: the group's range of ages
 * ("1.9-2.0 s") when it is flushed; `age` is UINT64_MAX for none. */
#define NW_AGE "\x01"
#define NW_NO_AGE UINT64_MAX
void nw_eg_add(struct nw_jctx *x, struct nw_egroups *eg, const struct nw_proc *p, const char *text,
               uint64_t age);
void nw_eg_flush(struct nw_jctx *x, struct nw_vwork *w, struct nw_egroups *eg, size_t max);

/* Members of a comm with no file: their global ranks go to `unknown` when
 * the comm numbers its ranks like the world (comm rank = global rank). */
int nw_view_identity(const struct nw_comm_view *v);
void nw_view_unknown(struct nw_jctx *x, const struct nw_comm_view *v, struct nw_vwork *w);
/* The collectives of a member (ops of its slot), sorted by seq. */
const struct nw_seg_op *nw_member_coll(struct nw_jctx *x, const struct nw_member *m, uint64_t seq);
void nw_member_ops(struct nw_jctx *x, const struct nw_member *m, uint32_t **idx, size_t *n);
const struct nw_seg_peer *nw_proc_peer(const struct nw_proc *p, uint32_t slot, int32_t peer);
uint32_t nw_member_slot(const struct nw_member *m);
const struct nw_comm_view *nw_view_of(struct nw_jctx *x, uint64_t id);
/* The index of the process with global rank `rank` in job->procs, or nprocs. */
size_t nw_proc_by_rank(const struct nw_job *job, int32_t rank);
/* "AllReduce #5 on comm X", "Send #3 to rank 6 on comm X", "CommInit of comm X". */
void nw_describe_op(struct nw_jctx *x, const struct nw_seg_op *op, struct nw_buf *b);
/* The nearest older op on the same stream that has not completed (of any
 * comm, not of the same group), or NULL: the work `op` waits behind. */
const struct nw_seg_op *nw_previous_work(const struct nw_proc *p, const struct nw_seg_op *op);
/* Where a process is: its oldest stuck op, or its newest op; idle time; main
 * stack. Its one age is written as NW_AGE and returned (NW_NO_AGE: none). */
uint64_t nw_where(struct nw_jctx *x, const struct nw_proc *p, struct nw_buf *b, int with_stack);
/* 1.4: "file.py:line in function" where op (one of p->ops) was issued, or NULL. */
const char *nw_op_site(const struct nw_proc *p, const struct nw_seg_op *op);
/* "; WHAT in f (a.py:1) < g (a.py:9)" for a Python thread (its innermost
 * application frames), else "; WHAT: frame0 < frame1 ...". */
void nw_buf_thread(struct nw_buf *b, const struct nw_thread_stack *t, const char *what, int native);
/* "PREFIX<where p is>" (nw_where) as one of eg's lines. */
void nw_eg_where(struct nw_jctx *x, struct nw_egroups *eg, const struct nw_proc *p, const char *prefix,
                 int with_stack);
/* Evidence: where each process of the graph's component `scc` is, grouped. */
void nw_where_component(struct nw_jctx *x, struct nw_vwork *w, uint32_t scc);
/* text with NW_AGE replaced by the range lo..hi (a new string, NULL out of memory). */
char *nw_age_fill(const char *text, uint64_t lo, uint64_t hi);

/* The rule files. Each adds verdicts (nw_verdict_new) and graph edges. */
void nw_rules_fault(struct nw_jctx *x);          /* verdicts_fault.c: GPU_FAULT */
void nw_rules_init(struct nw_jctx *x);           /* verdicts_init.c: INIT_STALL */
void nw_rules_coll(struct nw_jctx *x);           /* verdicts_coll.c: MISMATCH, MISSING_RANK,
                                                  * TRANSPORT_STALL; STREAM_BLOCKED candidates */
void nw_rules_graph(struct nw_jctx *x);          /* verdicts_graph.c: stuck replays of CUDA graphs:
                                                  * MISSING_RANK, TRANSPORT_STALL */
void nw_rules_p2p(struct nw_jctx *x);            /* verdicts_p2p.c: unmatched pairs + edges */
void nw_rules_p2p_verdicts(struct nw_jctx *x);   /* after the graph: P2P_DEADLOCK, P2P_UNMATCHED */
/* verdicts_p2p.c: in the cycle (strongly connected component) s, the
 * processes whose send/receive counts do not add up: in a pair where A's
 * send/receive #k waits for B, which posted fewer than k of the other
 * half, B if B went past k with another peer (it skipped one), else A if A
 * did more with B than with anybody else (one too many). Marks them in
 * deviant[] (if not NULL); returns how many it found. */
size_t nw_p2p_count_deviants(struct nw_jctx *x, uint32_t s, uint8_t *deviant);
void nw_rules_stream(struct nw_jctx *x);         /* verdicts_coll.c: STREAM_BLOCKED */
void nw_rules_idle(struct nw_jctx *x);           /* verdicts_coll.c: IDLE, HEALTHY */
void nw_rules_lost(struct nw_jctx *x);           /* lost.c: data lost: evidence, no HEALTHY */
int nw_job_lost(struct nw_job *job);             /* lost.c: job->lost (0, -1 oom) */
/* After nw_rules_unexplained: a stall that blames only a communicator
 * whose earlier collective mismatched (a size mismatch shifts its streams
 * for good) becomes an evidence line of that MISMATCH (rootcause.c). */
void nw_fold_shifted(struct nw_jctx *x);
void nw_rootcause(struct nw_jctx *x);            /* rootcause.c: roots, consequences, cycles */
void nw_rules_unexplained(struct nw_jctx *x, const uint8_t *explained); /* verdicts_coll.c: stuck ops
                                                  * that no verdict explains */
int nw_job_verdicts(struct nw_analysis *a, struct nw_job *job, struct nw_intern *in);

/* ---- stacks (attach snapshots) ----
 *
 * frameclass.c: what a frame's text means (docs/diagnosis.md, "Verdicts
 * from stacks alone"). */
enum nw_frame_class {
	NW_FC_OTHER = 0,
	NW_FC_NCCL = 1,                  /* inside NCCL */
	NW_FC_GPU = 2,                   /* the host waits for the GPU (stream/event/device sync) */
	NW_FC_FRAMEWORK = 3,             /* a framework waits for its NCCL work (c10d, torch.distributed,
	                                  * JAX's block_until_ready) */
};
int nw_frame_class(const char *frame);
/* The class of a thread (judged on its wait_frames, else its frames):
 * that of its outermost frame that matches (its text in *entry, may be
 * NULL), else NW_FC_NCCL for a thread the preload marked IN_NCCL, else
 * NW_FC_OTHER. */
int nw_stack_waits(const struct nw_thread_stack *t, const char **entry);
#ifdef NW_PYT_PYTHON
/* waitframes.c: each Python thread's wait_frames from the segment (load.c,
 * after its threads); -1 out of memory. */
int nw_keep_wait_frames(struct nw_proc *p, const struct nw_segment *seg, struct nw_intern *in);
#endif
/* snapshots.c: a snapshot and a segment of one process (host, pid, start
 * ticks) become one process: the segment's, with attach's stacks when they
 * are newer (or it had none); a snapshot job that holds such a process
 * takes that process's job name. -1 out of memory. */
int nw_merge_snapshots(struct nw_load *ld);
/* verdicts_stacks.c: verdicts from stacks alone for a job of snapshots
 * only; in a job with segments, what the snapshots of ranks without a
 * segment show, as evidence of the verdicts that name them. */
void nw_rules_stacks(struct nw_jctx *x);

int nw_job_envdiff(struct nw_job *job);          /* envdiff.c; -1 out of memory */
int nw_job_stacks(struct nw_job *job);           /* stackmerge.c; -1 out of memory */

#endif
