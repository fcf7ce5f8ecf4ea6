/* model.h: the engine's middle layer. Above the sources' processes, the
 * facts the rules judge, computed once: jobs, each rank's communicators
 * lined up by id and sequence numbers (communicator views), the wait-for
 * graph, what a stack waits in, the environment differences and merged
 * stacks; never a verdict.
 *
 *   model.c       processes -> jobs -> communicator views, hosts not heard from
 *   job_ranks.c   questions about a job's ranks and processes
 *   graph.c       the wait-for graph (ranks and junction nodes), SCCs, reachability
 *   lost_data.c   what a job's processes could not record
 *   frameclass.c  what a frame's text means (docs/diagnosis.md, "Verdicts from stacks alone")
 *   envdiff.c     fingerprint differences across ranks and hosts
 *   stackmerge.c  identical symbolized stacks grouped across ranks */
#ifndef NCCLWATCH_REPORT_MODEL_H
#define NCCLWATCH_REPORT_MODEL_H

#include "../sources/sources.h"

struct nw_verdict;

/* ---- communicators across ranks ---- */

struct nw_member {
	struct nw_proc *proc;          /* NULL: no file holds this rank of the comm */
	const struct nw_seg_comm *comm;
};

struct nw_comm_view {
	uint64_t id;
	uint64_t parent_id;
	uint32_t origin;               /* enum nw_comm_origin */
	int32_t nranks;                /* -1 while unknown (every member still inside Split) */
	char name[NW_COMM_NAME_LEN];
	struct nw_member *members;     /* [nranks], by comm rank */
	uint32_t nentering;            /* processes inside its creation whose rank is not known yet */
	struct nw_member *entering;    /* [nentering], each with its slot of this comm */
	UT_hash_handle hh;             /* keyed by id in nw_job.comms */
};

/* ---- environment differences ---- */

struct nw_env_value {
	char *value;                   /* "" when the variable is unset on those ranks */
	struct nw_rankset ranks;
	char **hosts;                  /* distinct hosts of those ranks */
	size_t nhosts;
};

struct nw_env_diff {
	char *name;                    /* "NCCL version", "CUDA driver", "GPU", or a variable name */
	size_t nvalues;                /* >= 2 */
	struct nw_env_value *values;   /* most common first */
};

/* ---- merged stacks ---- */

struct nw_stack_group {
	struct nw_rankset ranks;       /* global ranks (by process) with this stack */
	char *thread_name;
	uint32_t nframes;
	char **frames;                 /* as in nw_thread_stack */
	int python;                    /* 1.4: a Python thread's stack */
	int main;                      /* the processes' main thread */
};

/* ---- what a job's processes could not record (lost.c) ---- */

#define NW_LOST_PIDS 4
struct nw_lost {
	uint64_t ops;                  /* ops not recorded (header.ops_dropped, summed) */
	uint64_t comms;                /* communicators not recorded (2.0 header.comms_dropped) */
	uint64_t threads;              /* threads the last stack captures left out (threads_dropped) */
	uint32_t comms_full;           /* processes whose comm table was full of live comms */
	uint32_t stopped;              /* processes whose recording stopped (an internal error) */
	uint32_t nprocs;               /* processes that lost anything; 0: nothing lost */
	struct nw_rankset ranks;       /* their global ranks */
	uint32_t nunranked;            /* those of no known rank */
	int64_t unranked_pid[NW_LOST_PIDS];   /* the first of their pids */
};

/* ---- a job ---- */

/* Where a job's stall threshold comes from: a header prints a timeout only
 * when a source or the user set one. */
enum nw_timeout_from {
	NW_TIMEOUT_SET = 0,            /* --timeout, the segments' NCCLWATCH_TIMEOUT, RAS's own */
	NW_TIMEOUT_DEFAULT,            /* no file sets one (attach's snapshots): ncclwatch's 60 s */
	NW_TIMEOUT_NONE,               /* the source has none (Flight Recorder dumps): every
	                                * pending op counts as stuck (timeout_s is 1 ms) */
};

struct nw_job {
	char *name;                    /* header.job */
	size_t nprocs;
	struct nw_proc **procs;        /* sorted by global rank, then host, then pid */
	int32_t world_size;            /* the largest header.world_size seen, -1 unknown */
	struct nw_rankset missing;     /* global ranks < world_size with no file */
	/* Hosts not heard from (model.c): when the hosts heard from (2 or
	 * more) each hold one aligned block of ranks_per_host consecutive
	 * ranks, every such block of missing ranks is a host that sent no
	 * file; their names are unknown. 0 / -1 / empty otherwise. */
	uint32_t hosts_unheard;
	int32_t ranks_per_host;
	struct nw_rankset unheard;     /* the ranks of those hosts */
	struct nw_comm_view *comms;    /* uthash by id */
	double timeout_s;              /* the threshold the verdicts used */
	int timeout_from;              /* enum nw_timeout_from: where timeout_s came from */
	size_t nverdicts;
	struct nw_verdict *verdicts;   /* ranked; at least one (HEALTHY when nothing is wrong) */
	size_t ndiffs;
	struct nw_env_diff *diffs;
	size_t nstacks;
	struct nw_stack_group *stacks; /* each process's main thread (the first thread of its
	                                * capture) and its other Python threads, grouped;
	                                * largest group first */
	int native;                    /* Python threads' stacks are mixed (--native) */
	int python;                    /* some stack group is of a Python thread */
	struct nw_lost lost;           /* data its processes lost: never HEALTHY then (lost.c) */
};

/* The processes a job's files came from (a process of several ranks is
 * several views in procs[]). */
size_t nw_job_process_count(const struct nw_job *job);


/* job_ranks.c: the view of global rank `rank` in job->procs, or job->nprocs. */
size_t nw_proc_by_rank(const struct nw_job *job, int32_t rank);
/* Whether p has no op pending and another rank of its process has one
 * that thread tid issued: tid, blocked, waits for that rank. */
int nw_sibling_pending(const struct nw_job *job, const struct nw_proc *p, uint32_t tid);

/* model.c: the jobs of the processes loaded, with their comm views. */
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
/* Whether a thread's entry (nw_stack_waits) is the NCCL call of
 * collective kind `op` ("ncclAllReduce"; "ncclBcast" for Broadcast). */
int nw_entry_calls(const char *entry, uint16_t op);

int nw_job_lost(struct nw_job *job);             /* lost_data.c: job->lost (0, -1 oom) */
int nw_proc_lost(const struct nw_proc *p);       /* lost_data.c: whether p lost anything */
int nw_job_envdiff(struct nw_job *job);          /* envdiff.c; -1 out of memory */
int nw_job_stacks(struct nw_job *job);           /* stackmerge.c; -1 out of memory */


#endif
