/* The hang generator's plan: a random NCCL job built from a seed, with one
 * injected fault, and the answer that follows from the construction
 * (issue 21). plan.c builds and describes it; hangfuzz.c runs it.
 *
 * Every rank builds the same plan from the seed alone, so the job is SPMD
 * code with the fault as the only deviation, as a real program whose one
 * rank took another path.
 */
#ifndef NCCLWATCH_HANGFUZZ_PLAN_H
#define NCCLWATCH_HANGFUZZ_PLAN_H

#include <stdint.h>
#include <stdio.h>

#define HF_MAX_RANKS 16
#define HF_MAX_OPS 6     /* ops of one step, the closing world op included */

/* Communicators: the world, and the two splits of a TP x DP grid. */
enum hf_comm { HF_WORLD, HF_TP, HF_DP, HF_NCOMMS };

enum hf_op_kind { HF_ALLREDUCE, HF_BROADCAST, HF_REDUCE, HF_ALLGATHER, HF_REDUCESCATTER, HF_RING,
	HF_PIPE /* a pipeline stage (PP): 2 micro-batches of receive from the previous
	         * comm rank, send to the next, no group; drawn apart (plan.c) */ };

/* What the faulty rank does differently at the fault step. */
enum hf_fault {
	HF_NONE,
	HF_SKIP,        /* does not issue op j, goes on with the step */
	HF_EXTRA,       /* one more AllReduce on the world after the step */
	HF_COUNT,       /* op j with another count */
	HF_DTYPE,       /* op j with a datatype of another size */
	HF_ROOT,        /* op j (Broadcast/Reduce) with another root */
	HF_ORDER,       /* the step's closing world op before op j (one stream) */
	HF_SEND_PEER,   /* op j (a grouped ring) sends to the peer after next */
	HF_RECV_PEER,   /* op j (a grouped ring) receives from the one before previous */
	HF_DIE_BEFORE,  /* SIGKILL before op j */
	HF_DIE_INSIDE,  /* SIGKILL once op j started, the peers held back till then */
	HF_EXIT,        /* exit 0 before op j, communicators left alive */
	HF_EXIT_DESTROY,/* destroys its communicators and exits 0 before op j */
	HF_SLEEP,       /* its main thread idles for ever before op j */
	HF_LOCK,        /* its main thread waits for a lock another thread holds */
	HF_HOSTFN,      /* a host function that never returns, before op j on its stream */
	HF_REDOP,       /* op j (a reduction) with ncclMax where the others use ncclSum:
	                 * it completes (wrong numbers, as on NCCL), the job goes on to a
	                 * clean end; drawn apart from the others (plan.c) */
	/* Graph jobs only (seeds from HF_GRAPH_SEEDS on); "the graph" holds ops
	 * g0..g1 of the step, launched on stream 0 (struct hf_plan): */
	HF_G_SKIP,      /* the victim does not launch the graph at the fault step (one
	                 * replay fewer; per step: captures nothing either), goes on */
	HF_G_OTHER,     /* it launches a graph captured with another count, dtype, redop
	                 * or order of ops (gdev): with per-step capture, its capture of
	                 * that step; with one capture, graph B, which it captures at
	                 * the fault step (its shape changed) and launches instead of A */
	HF_G_HOSTFN,    /* a host function that never returns, queued on the launch
	                 * stream before the fault step's launch */
	HF_G_NOLAUNCH,  /* per-step capture: captures the step's graph, destroys it
	                 * unlaunched and goes on with the step's next op, eager */
	HF_G_DIE,       /* SIGKILL once its replay of the fault step started, the
	                 * peers held back till then */
	HF_G_PEER,      /* the graph's grouped ring (op gop) receives from the rank
	                 * before previous, or sends to the one after next (gdev) */
	/* Wide jobs only (seeds from HF_WIDE_SEEDS on): */
	HF_KIND,        /* op j (a collective) issued as another collective kind on
	                 * the same comm: every member hangs in it (as NCCL) */
	HF_DIE_GROUP,   /* SIGKILL inside op j's group (a grouped ring): after its
	                 * ncclSend, before its ncclRecv and ncclGroupEnd */
	HF_NOSPLIT,     /* split comms re-made every step: at the fault step the
	                 * victim's thread makes none (the peers wait in the
	                 * split) and issues the step's ops of the world only */
	HF_NFAULTS
};
/* The graph faults' menu ends here (adding kinds after it must not change
 * the graph seeds already judged). */
#define HF_G_LAST HF_G_PEER
/* The faults drawn from the seed's main stream (the menu before HF_REDOP:
 * adding a kind must not change the seeds already judged). */
#define HF_NDRAWN HF_REDOP

/* Seeds from here on are graph jobs (issue 22): the plan of seed S is
 * drawn as for an eager job, then the graph's draws, from streams of their
 * own, replace its fault (seeds below are the plans they always were). */
#define HF_GRAPH_SEEDS 100000ULL
/* Graph seeds from here on may draw processes whose one thread drives all
 * their ranks: it captures a graph per rank (each on its rank's device and
 * stream, every op of the capture issued for all of them in one group) and
 * launches them one after the other (plan.c, build_graph). The graph seeds
 * below keep their plans (a thread per rank). */
#define HF_ONE_THREAD_SEEDS 110000ULL

/* Seeds from here on are wide eager jobs: the menu and shapes the seeds
 * below never draw (seeds below keep their plans; test-hangfuzz-seeds.sh
 * pins some): a world of 2 ranks or more with a second comm over all of
 * it (a "tp" group as large as the world, as a duplicated process group),
 * so a 2-rank job can swap the order of two comms' ops; the last tp group
 * left out of the split (NCCL_SPLIT_NOCOLOR: its ranks never issue tp
 * ops); the split comms re-created every step (split at its start,
 * destroyed at its end); order swaps on any job size; SIGKILL inside a
 * grouped ring, before or inside its group (HF_DIE_INSIDE, HF_DIE_GROUP);
 * another collective kind (HF_KIND); a split never made (HF_NOSPLIT); a
 * mismatch (count, datatype, root, kind) on a comm of 2 ranks, which its
 * history decides (a comm made once: a 2-rank world, or a pair comm). */
#define HF_WIDE_SEEDS 200000ULL

enum hf_graph_mode {
	HF_EAGER,
	HF_GRAPH_REPLAY,   /* captured once before the first step, launched once per
	                    * step (vLLM's decode graph) */
	HF_GRAPH_PER_STEP, /* captured, instantiated, launched and destroyed every step
	                    * (torch.compile re-capturing per shape) */
};

/* How HF_G_OTHER's graph differs; HF_G_PEER: which half is wrong. */
enum hf_gdev { HF_GD_COUNT, HF_GD_DTYPE, HF_GD_REDOP, HF_GD_ORDER, HF_GD_RECV = 0, HF_GD_SEND = 1 };

struct hf_op {
	enum hf_comm comm;
	enum hf_op_kind kind;
	int root;                /* comm rank, Broadcast/Reduce */
	int stream;              /* 0 or 1 */
};

struct hf_plan {
	uint64_t seed;
	int nranks;
	int rpp;                 /* ranks per process (1, 2, 4): process P drives
	                          * ranks P*rpp .. P*rpp+rpp-1, on its devices 0..rpp-1 */
	int threaded;            /* rpp > 1: 1 one thread per rank, 0 one thread drives
	                          * all its ranks (every op of the step in one group;
	                          * graph jobs: a graph per rank, captured together) */
	int serial_capture;      /* threaded graph jobs: the threads capture one at a time
	                          * (as Python threads under the GIL do), so a
	                          * process's captures of one comm id follow each other */
	int rank_major;          /* one thread drives several ranks (graph jobs): it captures
	                          * rank by rank, every op of the graph in one group (else op
	                          * by op, each op of all its ranks in a group) */
	int launch_reversed;     /* ... and launches its ranks' graphs last rank first */
	int tp;                  /* TP group size (consecutive ranks); 0: no TP comm */
	int dp;                  /* 1: the DP comm (same TP position) exists */
	int wide;                /* a wide job (HF_WIDE_SEEDS) */
	int tp_nocolor;          /* the last TP group passes NCCL_SPLIT_NOCOLOR: not
	                          * in any TP comm (tp < nranks) */
	int resplit;             /* the split comms are made at each step's start
	                          * (ncclCommSplit) and destroyed at its end */
	int nstreams;
	int warm;                /* steps before the fault step */
	long count;              /* elements per op */
	int nops;                /* per step; ops[nops-1] is the world AllReduce */
	struct hf_op ops[HF_MAX_OPS];
	enum hf_fault fault;
	int victim;              /* global rank; -1 with HF_NONE */
	int at;                  /* op index j of the fault step (graph faults: g0) */
	enum hf_graph_mode graph;
	int g0, g1;              /* the graph holds ops g0..g1 (g1 < nops-1: the
	                          * closing world op stays eager), all on stream 0 */
	int gop;                 /* HF_G_OTHER (count, dtype, redop), HF_G_PEER: the op
	                          * of the graph that differs */
	int gdev;                /* enum hf_gdev */
};

/* The oracle: what a correct diagnosis says. */
struct hf_answer {
	char kinds[64];          /* first verdict kind; "A,B" when either is right */
	char culprits[64];       /* "-" for none; "2" or "2-3" (a whole process) */
	int hangs;               /* 0: the job ends by itself with status 0 */
	int may_complete;        /* the faulty op may complete (a size mismatch):
	                          * the job then idles with nothing pending */
	int keep;                /* the job ends cleanly but its files tell the fault
	                          * (NCCLWATCH_KEEP=1, as a user who looks afterwards) */
};

/* Builds the plan of `seed` for a job of `nranks` ranks (0: the seed
 * chooses 2-8). Returns 0. */
int hf_plan_build(struct hf_plan *p, uint64_t seed, int nranks);
void hf_plan_answer(const struct hf_plan *p, struct hf_answer *a);
void hf_plan_describe(const struct hf_plan *p, FILE *f);

const char *hf_fault_name(enum hf_fault f);
/* "count", "dtype", ... for HF_G_OTHER; "recv", "send" for HF_G_PEER. */
const char *hf_gdev_name(const struct hf_plan *p);
const char *hf_comm_name(enum hf_comm c);
const char *hf_op_name(enum hf_op_kind k);

/* Membership: the comm rank of global rank r in comm c, or -1; the size of
 * r's group of c. */
int hf_comm_rank(const struct hf_plan *p, enum hf_comm c, int r);
int hf_comm_size(const struct hf_plan *p, enum hf_comm c, int r);
/* Does fault f take the victim's whole process (all its ranks)? */
int hf_fault_takes_process(const struct hf_plan *p);
/* The split color of r for c (NCCL_SPLIT_NOCOLOR when c does not exist). */
int hf_color(const struct hf_plan *p, enum hf_comm c, int r);

#endif /* NCCLWATCH_HANGFUZZ_PLAN_H */
