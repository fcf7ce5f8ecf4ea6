/* analysis: the cross-rank engine. It takes a set of segments (live files
 * and dumps, from one host or many), keeps the newest copy of each process,
 * groups processes by job, lines ranks up by communicator id and sequence
 * numbers, and produces per job a ranked list of verdicts (the table of
 * verdicts in docs/ARCHITECTURE.md / DESIGN.md), the environment
 * differences between ranks, and the thread stacks merged into groups of
 * identical stacks.
 *
 * Library code shared by the CLI and by libncclwatch.so's watchdog: it
 * never prints, never exits, and never trusts a file (every segment goes
 * through the segment reader). A file that cannot be read is recorded with
 * its one-line message and the analysis goes on with the others.
 *
 *   load.c       paths -> processes (read, dedupe, keep a compact summary)
 *   model.c      processes -> jobs -> communicator views
 *   verdicts*.c  the rules, one file per family of verdicts
 *   envdiff.c    fingerprint differences across ranks and hosts
 *   stackmerge.c identical symbolized stacks grouped across ranks
 *   rankset.c    sets of ranks and their "0-6,9" form
 *
 * Renderers (report/render/) read the structures below and nothing else. */
#ifndef NCCLWATCH_REPORT_ANALYSIS_H
#define NCCLWATCH_REPORT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>
#include <ncclwatch/segment.h>

#include "../segment_reader.h"
#include "../verdict_kinds.h"

/* ---- rank sets ---- */

/* Sorted, without duplicates. Zero-initialized = empty. */
struct nw_rankset {
	int32_t *v;
	uint32_t n, cap;
};

int nw_rankset_add(struct nw_rankset *s, int32_t rank);        /* 0, or -1 out of memory */
int nw_rankset_has(const struct nw_rankset *s, int32_t rank);
void nw_rankset_free(struct nw_rankset *s);
/* "0-6,9" (STAT-style ranges); "-" when empty. Returns the length it
 * needed (like snprintf; the output is truncated with "..." to fit). */
size_t nw_rankset_format(const struct nw_rankset *s, char *buf, size_t len);

/* ---- what is kept of one process ---- */

/* One thread's stack, symbolized: "symbol" or "module+0xoff" per frame
 * ("??" when neither is known), innermost first. The frame strings and
 * lists are interned: identical stacks share one list (a->intern owns it). */
struct nw_thread_stack {
	uint32_t tid;
	uint32_t flags;                /* NW_THR_* */
	char name[NW_STACK_NAME_LEN];
	const char *py_name;           /* 1.4: its threading.Thread name (interned), NULL unknown */
	uint32_t nframes;
	char **frames;
	/* 1.4: a thread that runs Python (py_flags has NW_PYT_PYTHON): `frames`
	 * is then its Python frames, "function (file.py:line)", innermost
	 * first, or with nw_analysis_options.native its mixed stack (the
	 * native frames under its innermost Python frame, the Python frames,
	 * the interpreter's native frames). */
	uint32_t py_flags;             /* NW_PYT_* */
	uint32_t npy;                  /* its Python frames */
	uint32_t py_at;                /* index in frames[] of its innermost Python frame */
	uint32_t py_app;               /* index in frames[] of its innermost frame of application
	                                * code (not the standard library or site-packages) */
	/* What the verdict from stacks judges (frameclass.c), when it differs
	 * from `frames`: a Python thread's native frames under its innermost
	 * Python frame, then its Python frames with their full file names
	 * (cudaStreamSynchronize under loss.item() waits on the GPU). NULL:
	 * `frames`. Interned like them. */
	char **wait_frames;
	uint32_t nwait_frames;
	/* A CUDA host function (cuLaunchHostFunc, a stream callback) running
	 * on this thread: the CUDA driver's frames call application code.
	 * Its innermost application frame (interned), NULL none. */
	const char *host_fn;
};

/* What the engine keeps of a segment's header: the fields it reads, with
 * the names and types of struct nw_seg_header (segment.h), but the
 * environment and the NCCL library's path as interned strings, shared by
 * the ranks that have the same (3.3 KB of arrays per rank otherwise: a
 * third of the memory at 16,384 ranks, 1 GiB at 131,072). */
struct nw_proc_header {
	uint16_t version_major, version_minor;
	uint32_t flags;                /* NW_SEG_F_* */
	int64_t  pid, ppid;
	uint64_t start_realtime_ns, start_monotonic_ns;
	int32_t  global_rank, local_rank, world_size;
	uint32_t uid;
	char     host[NW_SEG_HOST_LEN];
	char     job[NW_SEG_JOB_LEN];
	uint64_t ring_head;
	uint32_t comm_count, peer_count, comm_capacity;
	uint64_t heartbeat_ns, ops_dropped;
	int32_t  nccl_version, cuda_driver_version;
	const char *nccl_lib;          /* interned; NULL unknown */
	char     gpu_name[NW_SEG_GPU_NAME_LEN];
	const char *env;               /* interned "NAME=value\0...\0\0" (segment.h's env); NULL none */
	char     error[NW_SEG_ERROR_LEN];
	uint32_t tracking, watchdog_tid, poll_ms, timeout_ms;
	uint64_t events_created, event_records, ops_tracked, findings, dumps, request_served;
	uint64_t last_finding_ns, proc_start_ticks;
	int32_t  exit_status;
	uint32_t threads_dropped;
	uint64_t comms_dropped, comm_reuses, graph_launches, graphs_untracked;
};

/* What a source can see of a process (nw_proc.caps): rules ask a bit,
 * never a source's name or its note's words (source_note is the words).
 *   segment        OPNUMS COMPLETION SENDRECV CREATION WAIT_TIME STACKS FINGERPRINT
 *   attach snapshot STACKS (identity and where each thread is; no op numbers)
 *   Flight Recorder OPNUMS COMPLETION FINGERPRINT (its NCCL version), SENDRECV (not
 *                  when its ring wrapped)
 *   NCCL RAS       OPNUMS LAUNCH_ONLY (launch counts of collectives) */
enum nw_cap {
	NW_CAP_OPNUMS      = 1u << 0,  /* positions: ops with their number on each communicator */
	NW_CAP_COMPLETION  = 1u << 1,  /* an op's completion is seen (a launched op and a finished
	                                * one look different) */
	NW_CAP_SENDRECV    = 1u << 2,  /* sends and receives are among its ops */
	NW_CAP_STACKS      = 1u << 3,  /* thread stacks */
	NW_CAP_CREATION    = 1u << 4,  /* communicator creation (init, split) records */
	NW_CAP_WAIT_TIME   = 1u << 5,  /* how long an op has waited, against a timeout of its own;
	                                * without it an op still pending counts as stuck */
	NW_CAP_LAUNCH_ONLY = 1u << 6,  /* a position is the last op it launched, completion
	                                * unknown (NCCL RAS's launch counts) */
	NW_CAP_FINGERPRINT = 1u << 7,  /* NCCL/CUDA versions, library, GPU and environment */
};
#define NW_CAPS_SEGMENT (NW_CAP_OPNUMS | NW_CAP_COMPLETION | NW_CAP_SENDRECV | NW_CAP_STACKS | \
                         NW_CAP_CREATION | NW_CAP_WAIT_TIME | NW_CAP_FINGERPRINT)
#define NW_CAPS_SNAPSHOT NW_CAP_STACKS
#define NW_CAP_COUNT 8
/* A bit's name in the JSON output ("op_numbers"); NULL for no single bit. */
const char *nw_cap_name(uint32_t bit);

/* One process: the newest readable copy of its segment. */
struct nw_proc {
	char *path;                    /* the file read */
	int is_dump;                   /* NW_SEG_F_DUMP */
	int alive;                     /* 1 alive (same host, kill(pid, 0)), 0 dead, -1 unknown (other host) */
	struct nw_proc_header hdr;     /* the header as read (identity, versions, env, counters) */
	int32_t rank;                  /* global rank (hdr.global_rank); when no process of the
	                                * job has one, its rank in the job's largest comm made
	                                * by an init (not a split); else -1 */
	uint64_t now_ns;               /* "now" on this process's CLOCK_MONOTONIC: the reader's clock
	                                * for a live process on this host, else the last heartbeat
	                                * (or the newest time recorded) */
	uint32_t ncomms;
	struct nw_seg_comm *comms;     /* the comm table (published slots) */
	uint32_t npeers;
	struct nw_seg_peer *peers;     /* the peer table (published slots), sorted by
	                                * (comm_slot, peer) so that a position is found by
	                                * binary search */
	size_t nops;
	struct nw_seg_op *ops;         /* the records kept, oldest first: every op not final
	                                * (ENQUEUED, STARTED, FAILED, INIT_ENTERED) and the last
	                                * NW_ANALYSIS_RECENT ops of each communicator */
	uint64_t last_activity_ns;     /* its last NCCL call: the newest of its newest record's
	                                * enqueue_ns and the comm table's times (positions and
	                                * life cycle survive ring wrap-around), 0 none */
	uint32_t nthreads;
	struct nw_thread_stack *threads;  /* from the stack area, if captured */
	uint64_t stacks_ns;            /* when they were captured (its clock), 0 none */
	uint32_t job_index;            /* its position in its job's procs[] */
	int snapshot;                  /* 1.4: its only record is a snapshot `ncclwatch attach` wrote
	                                * (NW_SEG_F_SNAPSHOT): identity and stacks, no op numbers */
	int attached;                  /* its stacks come from attach's snapshot of it (newer than its
	                                * segment's capture, or the segment had none) */
	const char **op_site;          /* [nops] or NULL: each kept op's Python call site,
	                                * "file.py:line in function", interned; an entry may be
	                                * NULL (1.4 per-op call sites; a Flight Recorder entry's frames) */
	uint32_t view_of_process;      /* a process that drives several ranks is read as one view
	                                * per rank (rank_split.c): this view's index among them,
	                                * 0 for the first (and for a process of one rank) */
	uint32_t views_in_process;     /* how many (0 or 1: a process of one rank) */
	uint32_t caps;                 /* NW_CAP_*: what its sources can see (a segment and the
	                                * snapshot of one process: both's) */
	/* Sources other than a segment (report/fr/: Flight Recorder dumps). */
	const char *source_note;       /* NULL for a segment; else what the source cannot
	                                * tell, in words (said once per verdict as evidence;
	                                * rules ask caps), interned */
};

#define NW_ANALYSIS_RECENT 16

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
	struct nw_proc **entering;
	UT_hash_handle hh;             /* keyed by id in nw_job.comms */
};

/* ---- verdicts ---- */

/* In order of precedence: a job's verdicts are sorted by kind (highest
 * first), then by the number of ranks concerned. The kinds' table is
 * report/verdict_kinds.h: NW_V_HEALTHY = 0 ... NW_V_GPU_FAULT. */
#define NW_VK_ENUM_(name, severity, hint) NW_V_##name = severity,
enum nw_verdict_kind { NW_VERDICT_KINDS(NW_VK_ENUM_) };
#undef NW_VK_ENUM_

const char *nw_verdict_name(int kind);     /* "MISSING_RANK" */
const char *nw_verdict_hint(int kind);     /* DESIGN.md's hint, or "" */

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
	const char *hint;              /* nw_verdict_hint(kind) or a more specific one */
	uint64_t launches;             /* NCCL RAS: the op as a launch count of its kind ("AllReduce
	                                * launches=6"), not an op number: RAS counts each kind
	                                * apart and never sends/receives; seq is then 0. 0 none */
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


/* A file that could not be used, and why. */
struct nw_bad_file {
	char *path;
	struct nw_read_error err;
};

struct nw_analysis {
	size_t njobs;
	struct nw_job *jobs;           /* sorted by name */
	size_t nbad;
	struct nw_bad_file *bad;
	size_t nread;                  /* segment files read (before dedupe) */
	struct nw_intern *intern;      /* engine-private: the one copy of every frame string
	                                * and frame list that stacks share */
	size_t nnotes;
	char **notes;                  /* lines about the input that are not errors (e.g. a
	                                * Flight Recorder dump set aside for a segment) */
	int native;                    /* nw_analysis_options.native, as the stacks were built */
	const struct nw_source_hook *hook; /* nw_analysis_options.hook, during nw_analyze only */
};

/* Add a note line (0, or -1 out of memory). */
int nw_analysis_note(struct nw_analysis *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Another source that joins the processes read (NCCL RAS: its report
 * lies next to attach's snapshots, docs/ras.md), without the engine
 * knowing it: `procs` is called after loading (it may set ranks, world
 * sizes and job names), `verdicts` per job after the rules (it may add,
 * drop and annotate verdicts: analysis_int.h). NULL members are skipped. */
struct nw_jctx;
struct nw_source_hook {
	int (*procs)(void *arg, struct nw_proc **procs, size_t nprocs);   /* 0, or -1 out of memory */
	void (*verdicts)(void *arg, struct nw_jctx *x);
	void *arg;
};

struct nw_analysis_options {
	double timeout_s;              /* stall threshold; 0: each job's watchdog setting
	                                * (header.timeout_ms, the largest seen), else 60 */
	const char *job;               /* only this job; NULL: all */
	int native;                    /* 1.4: a Python thread's stack is its mixed stack (native
	                                * frames too), not its Python frames alone (--native) */
	int max_threads;               /* threads that read files: 0 = up to 4 (one per CPU) when
	                                * there are 64 files or more; 1 = only the calling thread
	                                * (e.g. inside a process the engine must not add threads to) */
	const struct nw_source_hook *hook; /* NULL: none */
};

/* Read every segment that `paths` name (files or directories, as
 * nw_segment_list), build the jobs and their verdicts. Returns 0, or -1
 * with *err set when nothing at all could be read (no segment found, or
 * out of memory); unreadable files are listed in a->bad and do not fail
 * the call. */
int nw_analyze(const char *const *paths, size_t npaths, const struct nw_analysis_options *opt,
               struct nw_analysis *a, struct nw_read_error *err);
void nw_analysis_free(struct nw_analysis *a);

/* Read every file as nw_analyze does and hand over the processes as read
 * (copies of one process reduced to the newest; a process of several
 * ranks not yet split into rank views; only opt->job's when set), for a
 * per-host summary (report/summary/). Their strings are a->intern's: free
 * the processes (nw_proc_free, then the array) before nw_analysis_free(a).
 * 0, or -1 with *err set when nothing could be read. */
int nw_load_processes(const char *const *paths, size_t npaths, const struct nw_analysis_options *opt,
                      struct nw_analysis *a, struct nw_proc ***procs, size_t *nprocs,
                      struct nw_read_error *err);
/* Free one process of nw_load_processes. */
void nw_proc_free(struct nw_proc *p);

/* The worst verdict kind of all jobs (NW_V_HEALTHY if none). */
int nw_analysis_worst(const struct nw_analysis *a);

#endif
