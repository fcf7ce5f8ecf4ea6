/* sources.h: the engine's bottom layer, and its contract with the layers
 * above (model/, decide/, words/). Every source is an adapter that turns
 * what it reads into the same facts: processes (struct nw_proc: identity,
 * header, the ranks it drives, its communicators, ops with sequence
 * numbers and states, stacks, and what the source cannot tell), never a
 * verdict. The sources:
 *
 *   segment_reader.c  segments (live files, dumps, attach's snapshots): validated snapshots
 *   load.c            paths -> processes (read in parallel, dedupe, keep a compact copy)
 *   comm_instances.c  the comms of a segment whose table slots were reused
 *   waitframes.c      what a Python thread waits in, from its mixed stack
 *   snapshots.c       attach's snapshot and the same process's segment become one process
 *   rank_split.c      a process that drives several ranks becomes one view per rank
 *   fr/               PyTorch Flight Recorder dumps (docs/flight-recorder.md)
 *   summary/          per-host summaries (docs/FORMAT.md, "Per-host summaries")
 *   ras/              NCCL's RAS reports (docs/ras.md)
 *   rankset.c, util.c the facts' small types: sets of ranks, interned strings, text
 *
 * Library code shared by the CLI and libncclwatch-engine.so: it never
 * prints, never exits, and never trusts a file. A file that cannot be read
 * is recorded with its one-line message and the others are read.
 *
 * uthash is configured here not to exit on out-of-memory (library code
 * never exits): a failed insertion sets a flag that nw_hash_oom_taken()
 * reports, and the caller fails with NW_READ_ERR_NOMEM. */
#ifndef NCCLWATCH_REPORT_SOURCES_H
#define NCCLWATCH_REPORT_SOURCES_H

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) nw_hash_oom_hit()
void nw_hash_oom_hit(void);
int nw_hash_oom_taken(void);          /* 1 if an insertion failed since the last call */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <uthash.h>
#include <ncclwatch/segment.h>

#include "segment_reader.h"
#include "../names.h"
#include "../verdict_kinds.h"

#define NW_NS 1000000000ull

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

/* A position as a launch-only source sees it (NW_CAP_LAUNCH_ONLY: NCCL
 * RAS's launch counts): on communicator comm_id (that source's id of it:
 * RAS's commHash), the process launched `launches` collectives of kind
 * `kind` (NW_OP_*); whether the last of them completed is unknown, and
 * sends/receives (and collectives run as them) are not counted. A launch
 * count of one kind, never an op number "#n" (docs/ras.md). */
struct nw_launch_pos {
	uint64_t comm_id;
	int32_t comm_rank, comm_size;
	uint16_t kind;
	uint64_t launches;
};

/* A thread inside a group it never ended (no GROUP_END recorded for its
 * outermost ncclGroupStart): nothing of the group was handed to NCCL, and
 * the thread is stopped before its end (a lock, a host wait). */
struct nw_open_group {
	uint32_t tid;
	uint64_t since_ns;             /* its ncclGroupStart (its clock) */
};
#define NW_OPEN_GROUPS_MAX 8           /* threads of one process kept (copied into rank views) */

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
	/* Sources other than a segment (report/sources/fr/: Flight Recorder dumps). */
	const char *source_note;       /* NULL for a segment; else what the source cannot
	                                * tell, in words (said once per verdict as evidence;
	                                * rules ask caps), interned */
	const char *gone_how;          /* the source saw the process gone while its job's others
	                                * answered (NCCL RAS: did not answer, or declared dead):
	                                * how, in words, static; NULL not known. Without op
	                                * numbers it waits for nothing (a sink, verdicts.c) */
	uint32_t nlaunch;
	struct nw_launch_pos *launch;  /* its launch-only positions (NW_CAP_LAUNCH_ONLY), by comm
	                                * and kind; NULL none */
	uint32_t nopen_groups;         /* the process's threads inside a group they never ended */
	struct nw_open_group open_groups[NW_OPEN_GROUPS_MAX];  /* (load.c; every rank view has the
	                                * process's: nw_open_group_of) */
};

/* Notes in p->open_groups the threads inside a group they never ended:
 * a GroupStart among recs[0..n) (a segment's records, or the ops a summary
 * kept: a kept start's end is newer, so kept too) with no GroupEnd of its
 * group there, and the threads of p's IN_OPEN_GROUP ops. 0, -1 out of
 * memory. */
int nw_note_open_groups(struct nw_proc *p, const struct nw_seg_op *recs, size_t n);
/* The group ids of the GroupEnd records among recs[0..n), sorted
 * (nw_cmp_u64), in a new array of *nends; NULL out of memory. */
uint64_t *nw_group_ends(const struct nw_seg_op *recs, size_t n, size_t *nends);
/* The open group that holds rank view p: the one of the thread that issued
 * p's newest op, NULL when that thread ended its groups. That thread
 * issues nothing more for any rank it drives until it ends the group. */
const struct nw_open_group *nw_open_group_of(const struct nw_proc *p);

/* The process's launch count of collective kind `kind` on comm_id (its
 * launch-only positions), -1 when it has none there. */
int64_t nw_proc_launches(const struct nw_proc *p, uint64_t comm_id, uint16_t kind);

#define NW_ANALYSIS_RECENT 16

struct nw_job;
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
 * sizes and job names, and add processes of its own: nw_analyze with no
 * path reads none and takes the hook's alone), `verdicts` per job after the rules (it may add,
 * drop and annotate verdicts, and name the job's joined source, nw_jctx.joined, whose
 * launch_only verdicts decide then weighs: decide.h). NULL members are skipped. */
struct nw_jctx;
struct nw_source_hook {
	int (*procs)(void *arg, struct nw_proc ***procs, size_t *nprocs); /* it may add processes (the
	                                                                    * array is realloc'able); 0,
	                                                                    * or -1 out of memory */
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

/* Read every file as nw_analyze does and hand over the processes as read
 * (copies of one process reduced to the newest; a process of several
 * ranks not yet split into rank views; only opt->job's when set), for a
 * per-host summary (report/sources/summary/). Their strings are a->intern's: free
 * the processes (nw_proc_free, then the array) before nw_analysis_free(a).
 * 0, or -1 with *err set when nothing could be read. */
int nw_load_processes(const char *const *paths, size_t npaths, const struct nw_analysis_options *opt,
                      struct nw_analysis *a, struct nw_proc ***procs, size_t *nprocs,
                      struct nw_read_error *err);
/* Free one process of nw_load_processes. */
void nw_proc_free(struct nw_proc *p);

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

/* ---- reading ---- */

struct nw_load {                      /* what load.c hands to model.c */
	struct nw_proc **procs;
	size_t nprocs;
};

/* rank_split.c: each process that drives several ranks (comms of several
 * CUDA devices) replaced by one view per rank; 0, or -1 out of memory. */
int nw_split_ranks(struct nw_proc ***procs, size_t *nprocs);
/* rank_split.c: a snapshot p of a process that a source says drives k
 * ranks as k views, views[0] = p, views[1..k) new; which thread each view
 * keeps: rank_split.c. 0, or -1 out of memory (p unchanged). */
int nw_split_snapshot(struct nw_proc *p, uint32_t k, struct nw_proc **views);
/* Whether two views are of one process (host, pid, start time). */
int nw_same_process(const struct nw_proc *a, const struct nw_proc *b);
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
/* Captured ops of CUDA graphs the process never launched were never
 * issued: the comm and peer positions end before them
 * (graph_unlaunched.c); p's comms and peers are ci's. 0, -1 oom. */
int nw_unlaunched_graphs(struct nw_proc *p, const struct nw_segment *seg, const struct nw_comm_instances *ci);

/* split: a process of several ranks becomes one view per rank (rank_split.c). */
int nw_load(const char *const *paths, size_t npaths, int max_threads, int split, struct nw_analysis *a,
            struct nw_load *out, struct nw_read_error *err);
void nw_proc_free(struct nw_proc *p);
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

#endif
