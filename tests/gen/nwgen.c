/* nwgen: writes the segment files that the N ranks of one job would leave
 * behind in a chosen scenario, byte for byte in the format libncclwatch.so
 * writes (include/ncclwatch/segment.h, docs/FORMAT.md), so that the
 * analysis engine and the CLI can be tested on verdicts that are hard to
 * produce with real processes, and at scale.
 *
 *   nwgen --scenario NAME --ranks N --out DIR [options]     (--help, --list)
 *
 * Files: DIR/<job>/<host>.<pid>.seg, or with --dump
 * DIR/<job>/<host>.<pid>.rank<R>.dump.seg (flag DUMP set). One pwrite per
 * file from a buffer reused for every rank.
 *
 * ---------------------------------------------------------------------------
 * THE JOB (every scenario)
 *
 * Ranks and hosts: rank r has pid 10000 + r, the caller's uid, world size N. Hosts
 * "node0".."node{H-1}" hold blocks of consecutive ranks: P = ceil(N / H)
 * ranks per host (default H = ceil(N / 4): 4 GPUs per node), rank r on host
 * r / P with local rank (and CUDA device) r % P; every rank of a host has
 * the same ppid 5000 + host % 5000.
 *
 * Clocks: each host has its own CLOCK_MONOTONIC: node h's clock reads
 * 1000 s + 100 s * h at job time 0 (so raw times of two hosts must never
 * be compared: an engine measures ages against each process's own "now",
 * its heartbeat). Realtime is shared: job time 0 is 2026-01-01T12:00:00Z.
 * Below, times are job times; jitters of < 0.5 ms per rank are omitted.
 *   0.2 s + r * 0.1 ms (r mod 1000)  the process's first NCCL call: segment
 *                                     created, ncclCommInitRank entered
 *   2.0 s                            world comm ready (INIT_DONE)
 *   2.01 s .. 2.3 s                  ncclCommSplit: comm 1 ready
 *   STEP(s) = 3 s + (s - 1) * 0.2 s  training step s = 1, 2, ...
 *   NOW                              heartbeat (within one 100 ms poll)
 *
 * Communicators (comm table capacity 4, peer table 16, ring --ring = 256):
 *   slot 0  "world": origin InitRank, all N ranks, comm rank = r, id =
 *           hash of a ncclUniqueId derived from --seed (printed on the
 *           "expect" lines), splits = 1.
 *   slot 1  a split of world (origin Split, parent = world, color = r / G,
 *           key = r, so comm rank = r % G): groups of G = --group (default
 *           4) consecutive ranks, the last one smaller if G does not divide
 *           N. id = hash(world id, 0, color), as interpose/comm_id.c.
 *           Named "tp" (carries AllGathers) or "pp" (the p2p scenarios:
 *           carries the pipeline's ring exchange).
 *
 * Steps (one CUDA stream per rank, the host waits for the step's work at
 * the end of each step, like examples/trainer.c):
 *   "tp" scenarios, step s: AllGather on comm 1 (odd s, and the frontier
 *       step) then the world collective #s; history: everything COMPLETED.
 *   "pp" scenarios, step s: the world collective #s, then the ring
 *       exchange on comm 1 in one group (GroupStart, Send #s to comm rank
 *       p+1, Recv #s from p-1, mod the group size; GroupEnd), both ops
 *       sharing the group's start/end; history: everything COMPLETED.
 *   The world collective #s is AllReduce (4194304 bfloat16, sum, in place)
 *   or, every 10th, Broadcast (1048576 float32 from root 0, in place).
 *   --history H steps (default 300) come before the frontier step n = H+1
 *   ("#n" below): with a 256-record ring the oldest records (and the
 *   init/split records) are overwritten, the comm positions are not.
 *
 * Stalls: the frontier's stuck ops are --age seconds old (default 30) at
 * NOW, the timeout is --timeout (default 5 s, header timeout_ms and
 * NCCLWATCH_TIMEOUT). A rank whose watchdog found a stuck op (older than the
 * timeout), a thread inside a blocking init, or a failed op has STALL_SEEN,
 * findings = its stuck comms (+1 for an async error), a capture for its own
 * finding (request_id 0) and dumps = 1; it raised dump request 1, which
 * every other rank served (request_served = 1, dumps = 1, a capture with
 * request_id 1). With --stacks the capture holds the main thread ("train",
 * tid = pid) and the watchdog thread ("ncclwatch", tid = pid + 3), with
 * per-rank load addresses (ASLR): merge stacks by symbol, not by address.
 * Main-thread stacks: "gpu-wait" (cuStreamSynchronize < wait_for_step <
 * train_step < run_rank < main), "init" (in-nccl: poll < libnccl ?? <
 * ncclCommInitRank (libnccl) < ncclCommInitRank (libncclwatch) <
 * setup_communicators < run_rank < main), "load_batch" (nanosleep <
 * load_batch < train_step ...), "load_checkpoint" (read <
 * load_checkpoint < run_rank ...). Without a stall nothing is captured
 * (stacks "never").
 *
 * ---------------------------------------------------------------------------
 * SCENARIOS: expected verdicts (K = --culprit, default N-3, or N-1 if N < 4;
 * world = comm slot 0; "grp(K)" = K's comm 1; A = the comm-1 ring
 * predecessor of K, C = its successor; printed as "expect" lines too)
 *
 * scenario            verdict (primary)  comm     op / seq          culprits   waiting / other facts
 * healthy             HEALTHY            -        -                 -          all COMPLETED through #n (n = H+1) on
 *                                                                              world and comm 1, NOW = STEP(n) + 0.15 s
 * healthy_p2p         HEALTHY            -        -                 -          "pp" pattern, all COMPLETED through step n
 * missing_rank        MISSING_RANK       world    AllReduce #n      K          all others STARTED #n. K: coll_enqueued
 *                                                                              n-1 on world, its last op is AllGather on
 *                                                                              comm 1 (COMPLETED), idle since STEP(n)
 *                                                                              (stack load_batch)
 * alltoall            MISSING_RANK       world    AlltoAll #n       K          as missing_rank, #n is an AlltoAll (65536
 *                                                                              bfloat16 per peer) on the others
 * missing_files       MISSING_RANK       world    AllReduce #n      (see)      missing_rank without the files of --drop
 *                                                                              (default K): culprits = K if K has a file,
 *                                                                              unknown = the dropped ranks, waiting = the
 *                                                                              others with a file; world_size still N
 * mismatch_op         MISMATCH           world    AllReduce #n      K          K issued Broadcast (root 0) as #n (an
 *                                                                              AllReduce if #n is a Broadcast step)
 * mismatch_count      MISMATCH           world    AllReduce #n      K          K's count 2097152 (others 4194304)
 * mismatch_dtype      MISMATCH           world    AllReduce #n      K          K's dtype float16 (others bfloat16)
 * mismatch_root       MISMATCH           world    Broadcast #n      K          #n is a Broadcast everywhere (float32,
 *                                                                              1048576); K's root 1, the others' root 0
 * mismatch_redop      MISMATCH           world    AllReduce #n      K          K's redop max (others sum)
 *   (mismatch_*: every rank STARTED #n, none completed; waiting = the others)
 * transport_stall     TRANSPORT_STALL    world    AllReduce #n      - (comm)   every rank STARTED #n, none completed
 * mixed_nccl          TRANSPORT_STALL    world    AllReduce #n      - (comm)   as transport_stall; env diffs: ranks on
 *                                                                              node1 have NCCL 2.27.3 (22703), driver
 *                                                                              12.4 (12040), NCCL_P2P_DISABLE=1 and
 *                                                                              another nccl_lib path (needs H >= 2)
 * env_diff            TRANSPORT_STALL    world    AllReduce #n      - (comm)   as transport_stall; env diff:
 *                                                                              NCCL_P2P_LEVEL=NVL on ranks 0-3 only
 * stream_blocked      STREAM_BLOCKED     world    AllReduce #n      K          K: #n ENQUEUED (never started) behind its
 *                                                                              AllGather on comm 1 (same stream),
 *                                                                              STARTED and stuck since STEP(n); the other
 *                                                                              members of grp(K) COMPLETED that AllGather;
 *                                                                              all others STARTED #n (waiting = all but K)
 * gpu_fault           GPU_FAULT          world    AllReduce #n      K          K's #n FAILED, cuda_error 700, then an
 *                                                                              AsyncError record (result 1) and comm
 *                                                                              async_error ncclUnhandledCudaError; the
 *                                                                              others STARTED #n (waiting)
 * init_stall          INIT_STALL         world    CommInit, seq 0   K          every rank but K: world comm INIT_ENTERED
 *                                                                              since 0.2 s (its only comm, CommInit record
 *                                                                              INIT_ENTERED); K: a segment with no comm
 *                                                                              and no record (stack load_checkpoint);
 *                                                                              NOW = 0.2 s + age
 * init_stall_all      INIT_STALL         world    CommInit, seq 0   - (comm)   every rank INIT_ENTERED
 * idle                IDLE               world    -, seq 0          all        both comms INIT_DONE, no collective ever,
 *                                                                              NOW = 2.3 s + age; no watchdog finding
 * p2p_unmatched       P2P_UNMATCHED      grp(K)   Send #n A->K      K          A: Send #n to K (and its Recv #n from its
 *                                                                              predecessor, same group) STARTED; K's
 *                                                                              recv_enqueued from A = n-1: at step n K
 *                                                                              sent #n to C but posted no receive, then
 *                                                                              went idle (stack load_batch). Others
 *                                                                              finished step n and STARTED world #n+1.
 *                                                                              MISSING_RANK world #n+1 (A never issued
 *                                                                              it, waiting for K) is folded into it
 * p2p_unexpected_peer P2P_UNMATCHED      grp(K)   Send #n A->K      K          K posted its Recv from C (Recv #1 from C:
 *                                                                              it never received from C before) instead
 *                                                                              of from A; A's Send #n to K STARTED, K's
 *                                                                              recv_enqueued from A = n-1; K's Recv #1
 *                                                                              from C STARTED, C's send_enqueued to K = 0
 *                                                                              (C finished step n). MISSING_RANK world
 *                                                                              #n+1 (A and K wait) is folded. G >= 3
 * p2p_deadlock        P2P_UNMATCHED      grp(K)   Send #n A->K      K          the cycle: A waits in Send #n to K on
 *                     (world)                                                  comm 1 (K's recv_enqueued from A = n-1);
 *                                                                              K skipped that receive and waits in world
 *                                                                              #n+1 (STARTED), which A never issued (A's
 *                                                                              world coll_enqueued = n). Everyone but A
 *                                                                              STARTED world #n+1. K deviates: its
 *                                                                              counts do not add up (it sent #n to C but
 *                                                                              received only n-1 from A). MISSING_RANK
 *                                                                              world #n+1 is a consequence, folded
 *
 * "waiting" on the expect lines: every rank with a pending op (or inside
 * init) that is not a culprit; "unknown": ranks of the verdict with no file.
 *
 * Options that change the picture: --exited R,... marks ranks EXITED
 * (their heartbeat stops 1 s before NOW); --age below --timeout gives the
 * same positions with no watchdog finding (no STALL_SEEN, no dumps).
 *
 * ---------------------------------------------------------------------------
 * SNAPSHOTS (--snapshot SPEC: the files `ncclwatch attach` writes for
 * processes that ran without the preload; tests/gen/snapgen.h has the SPEC)
 *
 * Without --scenario: one snapshot per rank (but the --drop ranks) and no
 * segment, in DIR/<job>/<host>.<pid>.snapshot.seg (job: --job, default
 * gen-snapshot); identity as above (pid 10000 + r, hosts nodeH, RANK,
 * WORLD_SIZE...), proc_start_ticks 100000 + r, flags SNAPSHOT and DUMP, a
 * capture at job time 100 s holding the threads SPEC gives the rank (none:
 * a capture with no thread). With --scenario: the scenario's segments, plus
 * a snapshot of every rank SPEC names, in DIR/<--snapshot-job, default
 * attach-<job>>/: the same processes (host, pid, start ticks) seen by
 * attach, captured at the segments' NOW + 1 s (a mixed job; the segments
 * keep their own captures, --stacks). --alive R: that rank's snapshot
 * names this host and nwgen's parent (the caller's shell: it runs while
 * the test reads the files). --gone LIST: those ranks' snapshots
 * name this host and the pid of a process that has exited (a rank gone
 * since attach saw it).
 *
 * --taint S: S appended to the strings a file holds, for the tests of
 * what the CLI prints of hostile bytes (tests/cli/test-cli-control-chars.sh):
 * every host name (so every file name too), comm 1's name, rank 0's
 * NCCL_SOCKET_IFNAME (an environment difference), and in the captures
 * the main thread's name (cut at 15 bytes), the program's function names
 * and libcuda's module path (a frame without a symbol prints it).
 */
#include "segbuild.h"
#include "snapgen.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <nccl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull
#define SEC 1000000000ull
#define US 1000ull

#define GEN_COMMS 4
#define GEN_PEERS 16
#define GEN_NCCL 22809
#define GEN_DRIVER 13000
#define GEN_OLD_NCCL 22703
#define GEN_OLD_DRIVER 12040
#define GEN_REALTIME0 (1767268800ull * SEC)   /* 2026-01-01T12:00:00Z */
#define GEN_POLL_MS 100

/* ---- scenarios ---- */

enum scen {
	SC_HEALTHY, SC_HEALTHY_P2P, SC_MISSING_RANK, SC_ALLTOALL, SC_MISSING_FILES,
	SC_MISMATCH_OP, SC_MISMATCH_COUNT, SC_MISMATCH_DTYPE, SC_MISMATCH_ROOT, SC_MISMATCH_REDOP,
	SC_TRANSPORT_STALL, SC_MIXED_NCCL, SC_ENV_DIFF, SC_STREAM_BLOCKED, SC_GPU_FAULT,
	SC_INIT_STALL, SC_INIT_STALL_ALL, SC_IDLE, SC_P2P_UNMATCHED, SC_P2P_UNEXPECTED_PEER,
	SC_P2P_DEADLOCK,
};

static const struct scenario {
	const char *name;
	enum scen id;
	int pp;                        /* the "pp" step pattern */
	const char *what;
} scenarios[] = {
	{ "healthy", SC_HEALTHY, 0, "everything COMPLETED, recent activity" },
	{ "healthy_p2p", SC_HEALTHY_P2P, 1, "pipeline ring exchanges, everything COMPLETED" },
	{ "missing_rank", SC_MISSING_RANK, 0, "rank K never issued world #n; the others wait in it" },
	{ "alltoall", SC_ALLTOALL, 0, "rank K never issued the AlltoAll #n the others wait in" },
	{ "missing_files", SC_MISSING_FILES, 0, "missing_rank without the files of --drop (default K)" },
	{ "mismatch_op", SC_MISMATCH_OP, 0, "rank K issued Broadcast as #n, the others AllReduce" },
	{ "mismatch_count", SC_MISMATCH_COUNT, 0, "rank K's #n has half the count" },
	{ "mismatch_dtype", SC_MISMATCH_DTYPE, 0, "rank K's #n is float16, the others' bfloat16" },
	{ "mismatch_root", SC_MISMATCH_ROOT, 0, "Broadcast #n: rank K's root is 1, the others' 0" },
	{ "mismatch_redop", SC_MISMATCH_REDOP, 0, "rank K's #n reduces with max, the others with sum" },
	{ "transport_stall", SC_TRANSPORT_STALL, 0, "every rank STARTED #n, none completed" },
	{ "mixed_nccl", SC_MIXED_NCCL, 0, "transport_stall; node1 runs NCCL 2.27.3, driver 12.4, NCCL_P2P_DISABLE=1" },
	{ "env_diff", SC_ENV_DIFF, 0, "transport_stall; NCCL_P2P_LEVEL=NVL on ranks 0-3 only" },
	{ "stream_blocked", SC_STREAM_BLOCKED, 0, "rank K's #n ENQUEUED behind its stuck AllGather on comm 1" },
	{ "gpu_fault", SC_GPU_FAULT, 0, "rank K's #n FAILED (cuda_error 700), async error" },
	{ "init_stall", SC_INIT_STALL, 0, "all but rank K inside ncclCommInitRank; K never entered" },
	{ "init_stall_all", SC_INIT_STALL_ALL, 0, "every rank inside ncclCommInitRank" },
	{ "idle", SC_IDLE, 0, "comms created, no collective ever, idle for long" },
	{ "p2p_unmatched", SC_P2P_UNMATCHED, 1, "A's Send #n to K unmatched: K posted no receive and went idle" },
	{ "p2p_unexpected_peer", SC_P2P_UNEXPECTED_PEER, 1, "K receives from C instead of A; C never sends to K" },
	{ "p2p_deadlock", SC_P2P_DEADLOCK, 1, "A waits in Send to K on comm 1, K waits in world #n+1 A never issued" },
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* ---- the job ---- */

struct gen {
	const struct scenario *sc;
	int32_t n;                     /* ranks */
	int32_t hosts, per_host;
	int32_t group;                 /* comm 1 group size */
	int32_t culprit;               /* K */
	uint32_t ring;
	uint64_t seed;
	uint64_t history;              /* steps before the frontier */
	uint64_t nseq;                 /* the frontier step n = history + 1 */
	uint64_t timeout_ns, age_ns;
	int dump, stacks;
	const char *out;
	char job[NW_SEG_JOB_LEN];
	struct snap_spec *snap;        /* --snapshot, or NULL */
	int snap_only;                 /* no --scenario: snapshots only */
	char snap_job[NW_SEG_JOB_LEN];
	uint8_t *gone;                 /* [n] flags: --gone */
	int32_t alive;                 /* --alive R, or -1 */
	const char *taint;             /* --taint S, or "" */
	char jobdir[PATH_MAX];
	uint8_t *drop, *exited;        /* [n] flags */
	uint64_t world_id;
	int stalls;                    /* some watchdog of the job found a stall */
	uint64_t first_find;           /* job time of the first finding */
	struct sb_layout layout;
};

/* What the main thread is doing at the capture. */
enum where { W_RUNNING, W_GPU_WAIT, W_INIT, W_LOAD_BATCH, W_LOAD_CKPT };

struct rank_ctx {
	const struct gen *g;
	int32_t r, host, local;
	uint64_t base;                 /* the host's CLOCK_MONOTONIC at job time 0 */
	struct sb_seg seg;
	uint32_t world, grp;           /* comm slots */
	int32_t gfirst, gsize, grank;  /* comm 1: first global rank, size, this rank's comm rank */
	uint64_t app, lib;             /* load addresses (main program, shared libraries) */
	enum where where;
	uint32_t findings;             /* watchdog findings (stuck comms, failures) */
	uint64_t stuck_since;          /* job time of the oldest stuck op or call, 0 none */
	int failed;                    /* a FAILED op: a finding at once */
	uint64_t fail_at;
	uint64_t now;                  /* job time of NOW */
};

static uint64_t mixr(const struct gen *g, int32_t r, uint64_t key)
{
	return sb_mix64(g->seed * 0x100000001b3ull ^ ((uint64_t)(uint32_t)r << 24) ^ sb_mix64(key));
}

/* A small per-rank jitter: [0, 0.5 ms). */
static uint64_t jit(const struct rank_ctx *rc, uint64_t key)
{
	return mixr(rc->g, rc->r, key) % (500 * US);
}

static uint64_t AT(const struct rank_ctx *rc, uint64_t job_ns)
{
	return job_ns ? rc->base + job_ns : 0;
}

static uint64_t step_at(uint64_t s)
{
	return 3 * SEC + (s - 1) * 200 * MS;
}

static uint64_t start_at(int32_t r)
{
	return 200 * MS + (uint64_t)(r % 1000) * 100 * US;
}

static int32_t culprit_default(int32_t n)
{
	return n >= 4 ? n - 3 : n - 1;
}

/* ---- call sites and stacks (module offsets in the fictitious program) ---- */

#define APP_PATH "/opt/app/bin/train"
#define NW_PATH "/opt/ncclwatch/lib/libncclwatch.so"
#define NCCL_PATH "/usr/lib/x86_64-linux-gnu/libnccl.so.2"
#define NCCL_OLD_PATH "/opt/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"
#define CUDA_PATH "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"

enum { CALL_INIT = 0x3a1c, CALL_SPLIT = 0x3b52, CALL_ALLREDUCE = 0x41e7, CALL_BCAST = 0x4262,
       CALL_ALLGATHER = 0x42d5, CALL_ALLTOALL = 0x4331, CALL_GSTART = 0x4412, CALL_SEND = 0x443b,
       CALL_RECV = 0x4471, CALL_GEND = 0x4490, CALL_ASYNC = 0x4a90 };

/* Module indexes + 1 in the capture. */
enum { M_APP = 1, M_NW, M_NCCL, M_CUDA, M_LIBC };

static const struct sb_frame tail_frames[] = {
	{ M_APP, "run_rank", 0x5434, 0x9c },
	{ M_APP, "main", 0x59a2, 0x1b2 },
	{ M_LIBC, "__libc_start_call_main", 0x271ca, 0x7a },
	{ M_LIBC, "__libc_start_main", 0x27285, 0x85 },
	{ M_APP, "_start", 0x2b31, 0x21 },
};
static const struct sb_frame gpu_wait_frames[] = {
	{ M_CUDA, NULL, 0x2f1a3c, 0 },
	{ M_CUDA, "cuStreamSynchronize", 0x3b2d5a, 0x6a },
	{ M_APP, "wait_for_step", 0x4a12, 0x32 },
	{ M_APP, "train_step", 0x4f88, 0x1f8 },
};
static const struct sb_frame load_batch_frames[] = {
	{ M_LIBC, "clock_nanosleep", 0xe5a45, 0xc5 },
	{ M_LIBC, "nanosleep", 0xea6e7, 0x17 },
	{ M_APP, "load_batch", 0x47f3, 0x63 },
	{ M_APP, "train_step", 0x4e18, 0x88 },
};
static const struct sb_frame init_frames[] = {
	{ M_LIBC, "poll", 0xf5a0f, 0x4f },
	{ M_NCCL, NULL, 0x8a1b2, 0 },
	{ M_NCCL, NULL, 0x7e3c0, 0 },
	{ M_NCCL, "ncclCommInitRank", 0x9c4d5, 0x1c5 },
	{ M_NW, "ncclCommInitRank", 0x1d3e, 0x8e },
	{ M_APP, "setup_communicators", 0x3a1c, 0x8c },
};
static const struct sb_frame load_ckpt_frames[] = {
	{ M_LIBC, "read", 0x1075bd, 0x1d },
	{ M_APP, "load_checkpoint", 0x4421, 0x41 },
};
static const struct sb_frame watchdog_frames[] = {
	{ M_NW, NULL, 0x9a41, 0 },
	{ M_NW, NULL, 0x7c20, 0 },
	{ M_LIBC, "start_thread", 0x8e8ba, 0x2f2 },
	{ M_LIBC, "clone3", 0x10e7cc, 0x2c },
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void capture(struct rank_ctx *rc, uint64_t at_job, uint64_t request_id)
{
	struct sb_seg *s = &rc->seg;
	if (!s->stk)
		return;
	const struct nw_seg_header *h = s->h;
	const char *taint = rc->g->taint;
	char cuda_path[NW_STACK_MODULE_PATH_LEN];
	snprintf(cuda_path, sizeof cuda_path, "%s%s", CUDA_PATH, taint);
	struct sb_module mods[] = {
		{ rc->app, 0x20000, APP_PATH },
		{ rc->lib, 0x80000, NW_PATH },
		{ rc->lib + 0x100000, 0x10000000, h->nccl_lib },
		{ rc->lib + 0x10200000, 0x4000000, cuda_path },
		{ rc->lib + 0x14400000, 0x1d0000, LIBC_PATH },
	};
	sb_stack_begin(s, mods, COUNT(mods));
	struct sb_frame f[SB_STACK_FRAMES];
	uint32_t n = 0;
	const struct sb_frame *head = NULL;
	size_t nhead = 0;
	size_t tail_from = 0;           /* run_rank's frame differs under init and checkpoint */
	uint32_t flags = 0;
	switch (rc->where) {
	case W_GPU_WAIT: head = gpu_wait_frames; nhead = COUNT(gpu_wait_frames); break;
	case W_LOAD_BATCH: head = load_batch_frames; nhead = COUNT(load_batch_frames); break;
	case W_INIT: head = init_frames; nhead = COUNT(init_frames); flags = NW_THR_IN_NCCL; break;
	case W_LOAD_CKPT: head = load_ckpt_frames; nhead = COUNT(load_ckpt_frames); break;
	case W_RUNNING: head = gpu_wait_frames + 2; nhead = 2; break;
	}
	for (size_t i = 0; i < nhead; i++)
		f[n++] = head[i];
	if (rc->where == W_INIT || rc->where == W_LOAD_CKPT) {
		f[n++] = (struct sb_frame){ M_APP, "run_rank", rc->where == W_INIT ? 0x53f2 : 0x53c8,
		                            rc->where == W_INIT ? 0x5a : 0x30 };
		tail_from = 1;
	}
	for (size_t i = tail_from; i < COUNT(tail_frames); i++)
		f[n++] = tail_frames[i];
	char names[SB_STACK_FRAMES][128], thread[NW_STACK_NAME_LEN];
	for (uint32_t k = 0; *taint && k < n; k++)
		if (f[k].module == M_APP && f[k].symbol) {   /* --taint: the program's own function names */
			snprintf(names[k], sizeof names[k], "%s%s", f[k].symbol, taint);
			f[k].symbol = names[k];
		}
	snprintf(thread, sizeof thread, "train%s", taint);
	sb_stack_thread(s, (uint32_t)h->pid, thread, flags, f, n);
	sb_stack_thread(s, h->watchdog_tid, "ncclwatch", NW_THR_WATCHDOG, watchdog_frames,
	                COUNT(watchdog_frames));
	sb_stack_end(s, AT(rc, at_job), request_id);
}

/* ---- identity ---- */

static void env_add(char *env, size_t *used, const char *fmt, ...)
{
	char item[256];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(item) || *used + (size_t)len + 2 > NW_SEG_ENV_LEN)
		return;
	memcpy(env + *used, item, (size_t)len + 1);
	*used += (size_t)len + 1;
}

static int mixed_host(const struct gen *g, int32_t host)
{
	return g->sc->id == SC_MIXED_NCCL && host == 1;
}

static void identity(struct rank_ctx *rc)
{
	const struct gen *g = rc->g;
	struct nw_seg_header *h = rc->seg.h;
	int32_t r = rc->r;
	h->pid = 10000 + r;
	h->ppid = 5000 + rc->host % 5000;
	h->start_monotonic_ns = AT(rc, start_at(r));
	h->start_realtime_ns = GEN_REALTIME0 + start_at(r);
	h->proc_start_ticks = 100000 + (uint64_t)r;   /* what pairs a segment with attach's snapshot */
	h->global_rank = r;
	h->local_rank = rc->local;
	h->world_size = g->n;
	h->uid = getuid();   /* the caller's: ncclwatch diagnose skips other users' files */
	snprintf(h->host, sizeof(h->host), "node%d%s", (int)rc->host, g->taint);
	snprintf(h->job, sizeof(h->job), "%s", g->job);
	int old = mixed_host(g, rc->host);
	h->nccl_version = old ? GEN_OLD_NCCL : GEN_NCCL;
	h->cuda_driver_version = old ? GEN_OLD_DRIVER : GEN_DRIVER;
	snprintf(h->nccl_lib, sizeof(h->nccl_lib), "%s", old ? NCCL_OLD_PATH : NCCL_PATH);
	snprintf(h->gpu_name, sizeof(h->gpu_name), "NVIDIA H100 80GB HBM3");

	char devices[128] = "";
	size_t dl = 0;
	for (int32_t d = 0; d < g->per_host && dl + 8 < sizeof(devices); d++)
		dl += (size_t)snprintf(devices + dl, sizeof(devices) - dl, "%s%d", d ? "," : "", (int)d);
	size_t used = 0;
	env_add(h->env, &used, "CUDA_DEVICE_MAX_CONNECTIONS=1");
	env_add(h->env, &used, "CUDA_VISIBLE_DEVICES=%s", devices);
	env_add(h->env, &used, "LOCAL_RANK=%d", (int)rc->local);
	env_add(h->env, &used, "MASTER_ADDR=node0");
	env_add(h->env, &used, "MASTER_PORT=29500");
	env_add(h->env, &used, "NCCLWATCH_TIMEOUT=%g", (double)g->timeout_ns / 1e9);
	env_add(h->env, &used, "NCCL_DEBUG=WARN");
	if (old)
		env_add(h->env, &used, "NCCL_P2P_DISABLE=1");
	if (g->sc->id == SC_ENV_DIFF && r < 4)
		env_add(h->env, &used, "NCCL_P2P_LEVEL=NVL");
	env_add(h->env, &used, "NCCL_SOCKET_IFNAME=eth0%s", r == 0 ? g->taint : "");
	env_add(h->env, &used, "OMP_NUM_THREADS=8");
	env_add(h->env, &used, "RANK=%d", (int)r);
	env_add(h->env, &used, "TORCHELASTIC_RUN_ID=%s", g->job);
	env_add(h->env, &used, "TORCH_NCCL_ASYNC_ERROR_HANDLING=1");
	env_add(h->env, &used, "WORLD_SIZE=%d", (int)g->n);

	h->tracking = NW_TRACK_EVENTS;
	h->watchdog_tid = (uint32_t)h->pid + 3;
	h->poll_ms = GEN_POLL_MS;
	h->timeout_ms = (uint32_t)(g->timeout_ns / MS);
	atomic_store_explicit(&h->flags, NW_SEG_F_RECORDING, memory_order_relaxed);

	rc->seg.tid = (uint32_t)h->pid;
	rc->seg.stream = 0x55d000000000ull + ((mixr(g, r, 7) & 0xffffff) << 8);
	rc->app = 0x555555554000ull + ((mixr(g, r, 11) & 0xfffff) << 12);
	rc->lib = 0x7f0000000000ull + ((mixr(g, r, 13) & 0x7fff) << 24);
}

/* ---- communicators ---- */

static void comm_spec(const struct rank_ctx *rc, int which, struct sb_comm_spec *c)
{
	const struct gen *g = rc->g;
	static const uint8_t buses[8] = { 0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb };
	static char bus[NW_BUSID_LEN];
	static uint8_t uuid[16];
	snprintf(bus, sizeof(bus), "0000:%02x:00.0", buses[rc->local % 8]);
	uint64_t u0 = sb_mix64(g->seed ^ ((uint64_t)rc->host << 32) ^ (uint64_t)rc->local);
	uint64_t u1 = sb_mix64(u0);
	memcpy(uuid, &u0, 8);
	memcpy(uuid + 8, &u1, 8);
	memset(c, 0, sizeof(*c));
	c->device = rc->local;
	c->bus_id = bus;
	c->uuid = uuid;
	c->handle = 0x55d100000000ull + ((mixr(g, rc->r, 17) & 0xffffff) << 8) + (uint64_t)which * 0x40000;
	if (which == 0) {
		c->id = g->world_id;
		c->origin = NW_ORIGIN_INIT_RANK;
		c->rank = rc->r;
		c->nranks = g->n;
	} else {
		int32_t color = rc->r / g->group;
		c->id = sb_comm_id_split(g->world_id, 0, color);
		c->parent_id = g->world_id;
		c->origin = NW_ORIGIN_SPLIT;
		c->rank = rc->grank;
		c->nranks = rc->gsize;
		c->color = color;
		c->key = rc->r;
		static char name[NW_COMM_NAME_LEN];
		snprintf(name, sizeof name, "%s%s", g->sc->pp ? "pp" : "tp", g->taint);
		c->name = name;
	}
}

static void create_comms(struct rank_ctx *rc)
{
	struct sb_comm_spec spec;
	comm_spec(rc, 0, &spec);
	rc->world = sb_comm_enter(&rc->seg, &spec, AT(rc, start_at(rc->r) + 20 * US), rc->app + CALL_INIT);
	sb_comm_done(&rc->seg, rc->world, &spec, AT(rc, 2 * SEC + jit(rc, 1) * 4));
	comm_spec(rc, 1, &spec);
	rc->seg.comms[rc->world].splits = 1;
	rc->grp = sb_comm_enter(&rc->seg, &spec, AT(rc, 2010 * MS + jit(rc, 2)), rc->app + CALL_SPLIT);
	sb_comm_done(&rc->seg, rc->grp, &spec, AT(rc, 2300 * MS + jit(rc, 3)));
}

/* ---- ops ---- */

enum { OUT_DONE, OUT_STARTED, OUT_ENQUEUED, OUT_FAILED };

static void outcome(struct rank_ctx *rc, struct sb_op *op, uint64_t enq, uint64_t end, int out)
{
	op->enqueue_ns = AT(rc, enq);
	op->state = out == OUT_DONE ? NW_ST_COMPLETED : out == OUT_STARTED ? NW_ST_STARTED
	          : out == OUT_ENQUEUED ? NW_ST_ENQUEUED : NW_ST_FAILED;
	op->start_ns = out == OUT_ENQUEUED ? 0 : AT(rc, enq + 300 * US);
	op->end_ns = out == OUT_DONE || out == OUT_FAILED ? AT(rc, end) : 0;
	if (out == OUT_FAILED)
		op->cuda_error = 700;        /* CUDA_ERROR_ILLEGAL_ADDRESS */
	if (out == OUT_STARTED || out == OUT_ENQUEUED) {
		rc->findings++;
		if (!rc->stuck_since || enq < rc->stuck_since)
			rc->stuck_since = enq;
		rc->where = W_GPU_WAIT;
	}
}

static struct sb_op world_desc(const struct gen *g, uint64_t s, const struct rank_ctx *rc)
{
	struct sb_op op = { .redop = -1, .root = -1, .flags = NW_OPF_INPLACE };
	int bcast = s % 10 == 0;
	if (s == g->nseq && g->sc->id == SC_MISMATCH_ROOT)
		bcast = 1;
	if (bcast) {
		op.kind = NW_OP_BROADCAST;
		op.count = 1048576;
		op.datatype = ncclFloat32;
		op.root = 0;
		op.caller = rc->app + CALL_BCAST;
	} else {
		op.kind = NW_OP_ALLREDUCE;
		op.count = 4194304;
		op.datatype = ncclBfloat16;
		op.redop = ncclSum;
		op.caller = rc->app + CALL_ALLREDUCE;
	}
	if (s == g->nseq && g->sc->id == SC_ALLTOALL) {
		op = (struct sb_op){ .kind = NW_OP_ALLTOALL, .count = 65536, .datatype = ncclBfloat16,
		                     .redop = -1, .root = -1, .caller = rc->app + CALL_ALLTOALL };
	}
	if (s != g->nseq || rc->r != g->culprit)
		return op;
	switch (g->sc->id) {
	case SC_MISMATCH_OP:
		if (op.kind == NW_OP_ALLREDUCE)
			op = (struct sb_op){ .kind = NW_OP_BROADCAST, .count = 4194304, .datatype = ncclBfloat16,
			                     .redop = -1, .root = 0, .flags = NW_OPF_INPLACE,
			                     .caller = rc->app + CALL_BCAST };
		else
			op = (struct sb_op){ .kind = NW_OP_ALLREDUCE, .count = 1048576, .datatype = ncclFloat32,
			                     .redop = ncclSum, .root = -1, .flags = NW_OPF_INPLACE,
			                     .caller = rc->app + CALL_ALLREDUCE };
		break;
	case SC_MISMATCH_COUNT: op.count /= 2; break;
	case SC_MISMATCH_DTYPE: op.datatype = ncclFloat16; break;
	case SC_MISMATCH_ROOT: op.root = 1; break;
	case SC_MISMATCH_REDOP: op.redop = op.kind == NW_OP_ALLREDUCE ? ncclMax : op.redop; break;
	default: break;
	}
	return op;
}

static void world_coll(struct rank_ctx *rc, uint64_t s, uint64_t enq, uint64_t end, int out)
{
	struct sb_op op = world_desc(rc->g, s, rc);
	outcome(rc, &op, enq, end, out);
	sb_coll(&rc->seg, rc->world, &op);
}

static void tp_allgather(struct rank_ctx *rc, uint64_t enq, uint64_t end, int out)
{
	struct sb_op op = { .kind = NW_OP_ALLGATHER, .count = 524288, .datatype = ncclBfloat16,
	                    .redop = -1, .root = -1, .caller = rc->app + CALL_ALLGATHER };
	outcome(rc, &op, enq, end, out);
	sb_coll(&rc->seg, rc->grp, &op);
}

/* One ring exchange of step s on comm 1, in a group: a Send to comm rank
 * `to` and a Recv from `from` (-1: not posted), sharing one outcome. */
static void exchange(struct rank_ctx *rc, uint64_t s, int32_t to, int32_t from, int out)
{
	if (rc->gsize < 2 || (to < 0 && from < 0))
		return;
	uint64_t t0 = step_at(s) + 60 * MS + jit(rc, s * 8 + 5);
	uint64_t end = step_at(s) + 90 * MS + jit(rc, s * 8 + 6);
	sb_group_start(&rc->seg, AT(rc, t0), rc->app + CALL_GSTART);
	if (to >= 0) {
		struct sb_op op = { .kind = NW_OP_SEND, .count = 262144, .datatype = ncclBfloat16,
		                    .redop = -1, .root = to, .caller = rc->app + CALL_SEND };
		outcome(rc, &op, t0 + 5 * US, end, out);
		if (op.start_ns)
			op.start_ns = AT(rc, step_at(s) + 61 * MS);   /* the group's start event */
		sb_p2p(&rc->seg, rc->grp, &op);
	}
	if (from >= 0) {
		struct sb_op op = { .kind = NW_OP_RECV, .count = 262144, .datatype = ncclBfloat16,
		                    .redop = -1, .root = from, .caller = rc->app + CALL_RECV };
		outcome(rc, &op, t0 + 8 * US, end, out);
		if (op.start_ns)
			op.start_ns = AT(rc, step_at(s) + 61 * MS);
		sb_p2p(&rc->seg, rc->grp, &op);
	}
	if (out != OUT_DONE && to >= 0 && from >= 0)
		rc->findings--;                /* one finding per comm and class */
	sb_group_end(&rc->seg, AT(rc, t0 + 12 * US), AT(rc, t0 + 300 * US), rc->app + CALL_GEND);
}

static int32_t ring_next(const struct rank_ctx *rc) { return (rc->grank + 1) % rc->gsize; }
static int32_t ring_prev(const struct rank_ctx *rc) { return (rc->grank + rc->gsize - 1) % rc->gsize; }

static void step_tp(struct rank_ctx *rc, uint64_t s)
{
	uint64_t t = step_at(s);
	if (s % 2 == 1 || s == rc->g->nseq)
		tp_allgather(rc, t + 1 * MS + jit(rc, s * 8), t + 8 * MS + jit(rc, s * 8 + 1), OUT_DONE);
	world_coll(rc, s, t + 10 * MS + jit(rc, s * 8 + 2), t + 60 * MS + jit(rc, s * 8 + 3), OUT_DONE);
}

static void step_pp(struct rank_ctx *rc, uint64_t s)
{
	uint64_t t = step_at(s);
	world_coll(rc, s, t + 1 * MS + jit(rc, s * 8 + 2), t + 50 * MS + jit(rc, s * 8 + 3), OUT_DONE);
	exchange(rc, s, ring_next(rc), ring_prev(rc), OUT_DONE);
}

/* ---- scenarios, per rank ---- */

static void frontier_tp(struct rank_ctx *rc)
{
	const struct gen *g = rc->g;
	uint64_t n = g->nseq, t = step_at(n);
	int k = rc->r == g->culprit;
	enum scen id = g->sc->id;
	uint64_t ag_enq = t + 1 * MS + jit(rc, n * 8), ag_end = t + 8 * MS + jit(rc, n * 8 + 1);
	uint64_t enq = t + 10 * MS + jit(rc, n * 8 + 2), end = t + 60 * MS + jit(rc, n * 8 + 3);
	rc->now = t + g->age_ns;

	tp_allgather(rc, ag_enq, ag_end, id == SC_STREAM_BLOCKED && k ? OUT_STARTED : OUT_DONE);
	switch (id) {
	case SC_HEALTHY:
		world_coll(rc, n, enq, end, OUT_DONE);
		rc->now = t + 150 * MS;
		break;
	case SC_MISSING_RANK: case SC_ALLTOALL: case SC_MISSING_FILES:
		if (k)
			rc->where = W_LOAD_BATCH;
		else
			world_coll(rc, n, enq, end, OUT_STARTED);
		break;
	case SC_STREAM_BLOCKED:
		/* K: two findings, the oldest stuck op of each comm. */
		world_coll(rc, n, enq, end, k ? OUT_ENQUEUED : OUT_STARTED);
		break;
	case SC_GPU_FAULT:
		if (k) {
			world_coll(rc, n, enq, enq + 40 * MS, OUT_FAILED);
			rc->failed = 1;
			rc->fail_at = enq + 150 * MS;  /* its last finding: the async error */
			rc->findings += 2;         /* the failed op, the async error */
			rc->where = W_GPU_WAIT;
			sb_async_error(&rc->seg, rc->world, ncclUnhandledCudaError, AT(rc, enq + 150 * MS),
			               rc->app + CALL_ASYNC);
		} else {
			world_coll(rc, n, enq, end, OUT_STARTED);
		}
		break;
	default:                           /* mismatches and transport stalls */
		world_coll(rc, n, enq, end, OUT_STARTED);
		break;
	}
}

static void frontier_pp(struct rank_ctx *rc)
{
	const struct gen *g = rc->g;
	uint64_t n = g->nseq, t = step_at(n), t1 = step_at(n + 1);
	enum scen id = g->sc->id;
	int32_t kg = g->culprit / g->group;            /* K's group */
	int in_group = rc->r / g->group == kg;
	int32_t kr = g->culprit - kg * g->group;      /* K's comm rank */
	int32_t gsz = rc->gsize;
	int32_t a = (kr + gsz - 1) % gsz, c = (kr + 1) % gsz;
	int is_k = in_group && rc->grank == kr, is_a = in_group && rc->grank == a;
	uint64_t enq1 = t1 + 1 * MS + jit(rc, (n + 1) * 8 + 2), end1 = t1 + 50 * MS + jit(rc, (n + 1) * 8 + 3);
	rc->now = t + 60 * MS + g->age_ns;

	world_coll(rc, n, t + 1 * MS + jit(rc, n * 8 + 2), t + 50 * MS + jit(rc, n * 8 + 3), OUT_DONE);
	if (id == SC_HEALTHY_P2P) {
		exchange(rc, n, ring_next(rc), ring_prev(rc), OUT_DONE);
		rc->now = t + 150 * MS;
		return;
	}
	if (is_a) {                                    /* stuck in its exchange: Send to K unmatched */
		exchange(rc, n, ring_next(rc), ring_prev(rc), OUT_STARTED);
		return;
	}
	if (is_k) {
		switch (id) {
		case SC_P2P_UNMATCHED:                 /* sent, never posted its receive, went away */
			exchange(rc, n, c, -1, OUT_DONE);
			rc->where = W_LOAD_BATCH;
			break;
		case SC_P2P_UNEXPECTED_PEER:           /* receives from C instead of A */
			exchange(rc, n, c, c, OUT_STARTED);
			break;
		default:                               /* deadlock: skipped the receive, moved on */
			exchange(rc, n, c, -1, OUT_DONE);
			world_coll(rc, n + 1, enq1, end1, OUT_STARTED);
			break;
		}
		return;
	}
	exchange(rc, n, ring_next(rc), ring_prev(rc), OUT_DONE);
	world_coll(rc, n + 1, enq1, end1, OUT_STARTED);
}

static void init_stall(struct rank_ctx *rc)
{
	const struct gen *g = rc->g;
	uint64_t enter = start_at(rc->r) + 20 * US;
	rc->now = start_at(g->n - 1 < 999 ? g->n - 1 : 999) + g->age_ns;
	if (g->sc->id == SC_INIT_STALL && rc->r == g->culprit) {
		rc->where = W_LOAD_CKPT;                   /* its segment exists: its first NCCL call
		                                            * was ncclGetVersion */
		return;
	}
	struct sb_comm_spec spec;
	comm_spec(rc, 0, &spec);
	rc->world = sb_comm_enter(&rc->seg, &spec, AT(rc, enter), rc->app + CALL_INIT);
	rc->findings = 1;
	rc->stuck_since = enter;
	rc->where = W_INIT;
}

static void finish(struct rank_ctx *rc)
{
	const struct gen *g = rc->g;
	struct nw_seg_header *h = rc->seg.h;
	uint64_t now = rc->now;
	if (g->exited[rc->r]) {
		now -= SEC;
		atomic_fetch_or_explicit(&h->flags, NW_SEG_F_EXITED, memory_order_relaxed);
	}
	uint64_t hb = now - (mixr(g, rc->r, 19) % (GEN_POLL_MS * MS));
	atomic_store_explicit(&h->heartbeat_ns, AT(rc, hb), memory_order_relaxed);
	uint64_t launches = rc->seg.launches;
	atomic_store_explicit(&h->ops_tracked, launches, memory_order_relaxed);
	atomic_store_explicit(&h->event_records, 2 * launches, memory_order_relaxed);
	atomic_store_explicit(&h->events_created, launches ? 2 * 16 : 0, memory_order_relaxed);

	/* The watchdog: its own finding, else the job's dump request. */
	uint64_t find = 0;
	if (rc->failed)
		find = rc->fail_at + 50 * MS + mixr(g, rc->r, 23) % (GEN_POLL_MS * MS);
	else if (rc->findings && rc->stuck_since + g->timeout_ns < now)
		find = rc->stuck_since + g->timeout_ns + mixr(g, rc->r, 23) % (GEN_POLL_MS * MS);
	if (find && find > hb)
		find = hb;
	if (find) {
		atomic_fetch_or_explicit(&h->flags, NW_SEG_F_STALL_SEEN, memory_order_relaxed);
		atomic_store_explicit(&h->findings, rc->findings, memory_order_relaxed);
		atomic_store_explicit(&h->last_finding_ns, AT(rc, find), memory_order_relaxed);
		atomic_store_explicit(&h->dumps, 1, memory_order_relaxed);
		capture(rc, find + 20 * MS > hb ? hb : find + 20 * MS, 0);
	} else if (g->stalls && g->first_find + 300 * MS < hb) {
		uint64_t at = g->first_find + 200 * MS + mixr(g, rc->r, 29) % (GEN_POLL_MS * MS);
		atomic_store_explicit(&h->request_served, 1, memory_order_relaxed);
		atomic_store_explicit(&h->dumps, 1, memory_order_relaxed);
		capture(rc, at, 1);
	}
	if (g->dump)
		atomic_fetch_or_explicit(&h->flags, NW_SEG_F_DUMP, memory_order_relaxed);
	sb_finish(&rc->seg);
}

static void gen_rank(const struct gen *g, int32_t r, uint8_t *buf, struct rank_ctx *rc)
{
	memset(rc, 0, sizeof(*rc));
	rc->g = g;
	rc->r = r;
	rc->host = r / g->per_host;
	rc->local = r % g->per_host;
	rc->base = 1000 * SEC + (uint64_t)rc->host * 100 * SEC;
	rc->gfirst = r / g->group * g->group;
	rc->gsize = g->n - rc->gfirst < g->group ? g->n - rc->gfirst : g->group;
	rc->grank = r - rc->gfirst;
	rc->world = rc->grp = UINT32_MAX;
	rc->where = W_RUNNING;
	sb_begin(&rc->seg, &g->layout, buf);
	identity(rc);

	switch (g->sc->id) {
	case SC_INIT_STALL: case SC_INIT_STALL_ALL:
		init_stall(rc);
		break;
	case SC_IDLE:
		create_comms(rc);
		rc->now = 2300 * MS + g->age_ns;
		rc->where = W_LOAD_BATCH;
		break;
	default:
		create_comms(rc);
		for (uint64_t s = 1; s < g->nseq; s++) {
			if (g->sc->pp)
				step_pp(rc, s);
			else
				step_tp(rc, s);
		}
		if (g->sc->pp)
			frontier_pp(rc);
		else
			frontier_tp(rc);
		break;
	}
	finish(rc);
}

/* ---- expectations ---- */

struct rset { uint8_t *v; int32_t n; };

static void rs_init(struct rset *s, int32_t n) { s->v = calloc((size_t)n, 1); s->n = n; }
static void rs_fill(struct rset *s) { memset(s->v, 1, (size_t)s->n); }

/* "0-4,6-7" (STAT-style), "-" when empty. */
static void rs_print(FILE *out, const struct rset *s)
{
	int any = 0;
	for (int32_t i = 0; i < s->n;) {
		if (!s->v[i]) {
			i++;
			continue;
		}
		int32_t j = i;
		while (j + 1 < s->n && s->v[j + 1])
			j++;
		fprintf(out, "%s%d", any ? "," : "", (int)i);
		if (j > i)
			fprintf(out, "-%d", (int)j);
		any = 1;
		i = j + 1;
	}
	if (!any)
		fputc('-', out);
}

static const char *kind_name(uint16_t k)
{
	switch (k) {
	case NW_OP_ALLREDUCE: return "AllReduce";
	case NW_OP_BROADCAST: return "Broadcast";
	case NW_OP_ALLTOALL: return "AlltoAll";
	case NW_OP_SEND: return "Send";
	case NW_OP_COMM_INIT: return "CommInit";
	default: return "-";
	}
}

/* Ranks marked --exited (NULL: none). An exited rank waits for nothing
 * (docs/diagnosis.md): one the scenario has waiting in the op is a culprit
 * (it will never complete it), not a waiting rank. */
static const uint8_t *exited_ranks;

static void expect_line(FILE *out, const char *tag, const char *verdict, uint64_t comm, int32_t nranks,
                        uint16_t kind, uint64_t seq, const struct rset *culprits,
                        const struct rset *waiting, const struct rset *unknown, const char *detail)
{
	struct rset c2 = { 0 }, w2 = { 0 };
	if (exited_ranks && strcmp(verdict, "HEALTHY") && strcmp(verdict, "IDLE")) {
		rs_init(&c2, culprits->n);
		rs_init(&w2, waiting->n);
		if (c2.v && w2.v) {
			for (int32_t r = 0; r < culprits->n; r++) {
				c2.v[r] = culprits->v[r] || (waiting->v[r] && exited_ranks[r]);
				w2.v[r] = waiting->v[r] && !exited_ranks[r];
			}
			culprits = &c2;
			waiting = &w2;
		}
	}
	fprintf(out, "%s verdict=%s comm=", tag, verdict);
	if (comm)
		fprintf(out, "%016" PRIx64, comm);
	else
		fputc('-', out);
	fprintf(out, " nranks=%d op=%s seq=%" PRIu64 " culprits=", (int)nranks, kind_name(kind), seq);
	rs_print(out, culprits);
	fputs(" waiting=", out);
	rs_print(out, waiting);
	fputs(" unknown=", out);
	rs_print(out, unknown);
	fprintf(out, " # %s\n", detail);
	free(c2.v);
	free(w2.v);
}

static void print_expect(const struct gen *g, FILE *out)
{
	int32_t n = g->n, k = g->culprit;
	struct rset cul, wait, unk;
	rs_init(&cul, n);
	rs_init(&wait, n);
	rs_init(&unk, n);
	uint16_t wk = world_desc(g, g->nseq, &(struct rank_ctx){ .g = g, .r = -1 }).kind;
	char d[512];
	enum scen id = g->sc->id;
	exited_ranks = NULL;
	for (int32_t r = 0; r < n; r++)
		if (g->exited[r])
			exited_ranks = g->exited;
	switch (id) {
	case SC_HEALTHY: case SC_HEALTHY_P2P:
		expect_line(out, "expect", "HEALTHY", 0, 0, 0, 0, &cul, &wait, &unk, "nothing pending");
		break;
	case SC_MISSING_RANK: case SC_ALLTOALL: case SC_MISSING_FILES:
		for (int32_t r = 0; r < n; r++) {
			if (g->drop[r])
				unk.v[r] = 1;
			else if (r == k)
				cul.v[r] = 1;
			else
				wait.v[r] = 1;
		}
		snprintf(d, sizeof d, "rank %d never issued %s #%" PRIu64 " (coll_enqueued %" PRIu64
		         "), idle in load_batch; the others STARTED it", (int)k, kind_name(wk), g->nseq,
		         g->nseq - 1);
		expect_line(out, "expect", "MISSING_RANK", g->world_id, n, wk, g->nseq, &cul, &wait, &unk, d);
		break;
	case SC_MISMATCH_OP: case SC_MISMATCH_COUNT: case SC_MISMATCH_DTYPE: case SC_MISMATCH_ROOT:
	case SC_MISMATCH_REDOP: {
		static const char *const what[] = { "op", "count", "dtype", "root", "redop" };
		cul.v[k] = 1;
		rs_fill(&wait);
		wait.v[k] = 0;
		snprintf(d, sizeof d, "rank %d's #%" PRIu64 " differs in %s; every rank STARTED it", (int)k,
		         g->nseq, what[id - SC_MISMATCH_OP]);
		expect_line(out, "expect", "MISMATCH", g->world_id, n, wk, g->nseq, &cul, &wait, &unk, d);
		break;
	}
	case SC_TRANSPORT_STALL: case SC_MIXED_NCCL: case SC_ENV_DIFF:
		rs_fill(&wait);
		snprintf(d, sizeof d, "every rank STARTED #%" PRIu64 ", none completed%s", g->nseq,
		         id == SC_MIXED_NCCL ? "; env diff: node1 NCCL 2.27.3, driver 12.4, NCCL_P2P_DISABLE=1"
		         : id == SC_ENV_DIFF ? "; env diff: NCCL_P2P_LEVEL=NVL on ranks 0-3" : "");
		expect_line(out, "expect", "TRANSPORT_STALL", g->world_id, n, wk, g->nseq, &cul, &wait, &unk, d);
		break;
	case SC_STREAM_BLOCKED:
		cul.v[k] = 1;
		rs_fill(&wait);
		wait.v[k] = 0;
		snprintf(d, sizeof d, "rank %d's #%" PRIu64 " ENQUEUED behind its AllGather on comm %016" PRIx64
		         " (STARTED, stuck)", (int)k, g->nseq, sb_comm_id_split(g->world_id, 0, k / g->group));
		expect_line(out, "expect", "STREAM_BLOCKED", g->world_id, n, wk, g->nseq, &cul, &wait, &unk, d);
		break;
	case SC_GPU_FAULT:
		cul.v[k] = 1;
		rs_fill(&wait);
		wait.v[k] = 0;
		snprintf(d, sizeof d, "rank %d's #%" PRIu64 " FAILED cuda_error=700, async_error "
		         "ncclUnhandledCudaError", (int)k, g->nseq);
		expect_line(out, "expect", "GPU_FAULT", g->world_id, n, wk, g->nseq, &cul, &wait, &unk, d);
		break;
	case SC_INIT_STALL: case SC_INIT_STALL_ALL:
		rs_fill(&wait);
		if (id == SC_INIT_STALL) {
			cul.v[k] = 1;
			wait.v[k] = 0;
			snprintf(d, sizeof d, "rank %d never entered ncclCommInitRank (no comm); the others "
			         "INIT_ENTERED", (int)k);
		} else {
			snprintf(d, sizeof d, "every rank INIT_ENTERED");
		}
		expect_line(out, "expect", "INIT_STALL", g->world_id, n, NW_OP_COMM_INIT, 0, &cul, &wait, &unk, d);
		break;
	case SC_IDLE:
		rs_fill(&cul);
		expect_line(out, "expect", "IDLE", g->world_id, n, 0, 0, &cul, &wait, &unk,
		            "comms created, no collective ever issued");
		break;
	case SC_P2P_UNMATCHED: case SC_P2P_UNEXPECTED_PEER: case SC_P2P_DEADLOCK: {
		int32_t kg = k / g->group, first = kg * g->group;
		int32_t gsz = n - first < g->group ? n - first : g->group;
		int32_t a = first + (k - first + gsz - 1) % gsz, c = first + (k - first + 1) % gsz;
		uint64_t pp = sb_comm_id_split(g->world_id, 0, kg);
		int deadlock = id == SC_P2P_DEADLOCK;
		/* Waiting: everyone else (A in comm 1, the others in world #n+1). */
		rs_fill(&wait);
		cul.v[k] = 1;
		wait.v[k] = 0;
		if (deadlock)
			snprintf(d, sizeof d, "cycle: rank %d waits in Send #%" PRIu64 " to rank %d on comm %016"
			         PRIx64 " (rank %d's recv_enqueued from %d = %" PRIu64 "); rank %d waits in world "
			         "#%" PRIu64 " that rank %d never issued", (int)a, g->nseq, (int)k, pp, (int)k, (int)a,
			         g->nseq - 1, (int)k, g->nseq + 1, (int)a);
		else if (id == SC_P2P_UNEXPECTED_PEER)
			snprintf(d, sizeof d, "rank %d's Send #%" PRIu64 " to rank %d pending (recv_enqueued from %d = "
			         "%" PRIu64 "); rank %d's Recv #1 from rank %d pending (rank %d's send_enqueued to %d = 0)",
			         (int)a, g->nseq, (int)k, (int)a, g->nseq - 1, (int)k, (int)c, (int)c, (int)k);
		else
			snprintf(d, sizeof d, "rank %d's Send #%" PRIu64 " to rank %d pending; rank %d's recv_enqueued "
			         "from %d = %" PRIu64 ", rank %d idle (load_batch)", (int)a, g->nseq, (int)k, (int)k,
			         (int)a, g->nseq - 1, (int)k);
		/* Even the cycle (p2p_deadlock) is an unmatched pair: K deviates
		 * (docs/diagnosis.md, cycles), its consequence loops back. */
		expect_line(out, "expect", "P2P_UNMATCHED", pp, gsz, NW_OP_SEND,
		            g->nseq, &cul, &wait, &unk, d);
		/* The world collective of the next step, which the stuck ranks never
		 * issued, is a consequence (they wait for K): folded into this
		 * verdict, never a verdict of its own. */
		break;
	}
	}
	free(cul.v);
	free(wait.v);
	free(unk.v);
}

/* ---- the job's stall (for the watchdogs that only served requests) ---- */

static void job_stall(struct gen *g)
{
	uint64_t t = step_at(g->nseq), stuck = 0, now = 0;
	switch (g->sc->id) {
	case SC_HEALTHY: case SC_HEALTHY_P2P: case SC_IDLE:
		return;
	case SC_INIT_STALL: case SC_INIT_STALL_ALL:
		stuck = 200 * MS;
		now = start_at(g->n - 1 < 999 ? g->n - 1 : 999) + g->age_ns;
		break;
	case SC_GPU_FAULT:
		g->stalls = 1;
		g->first_find = t + 10 * MS + 150 * MS + 50 * MS;
		return;
	default:
		stuck = g->sc->pp ? t + 60 * MS : t + 10 * MS;
		now = g->sc->pp ? t + 60 * MS + g->age_ns : t + g->age_ns;
		break;
	}
	if (stuck + g->timeout_ns + GEN_POLL_MS * MS < now) {
		g->stalls = 1;
		g->first_find = stuck + g->timeout_ns;
	}
}

/* ---- command line ---- */

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: nwgen --scenario NAME --ranks N --out DIR [options]\n"
	        "\n"
	        "Writes the ncclwatch segments N ranks of one job would leave in DIR/<job>/\n"
	        "(<host>.<pid>.seg, or <host>.<pid>.rank<R>.dump.seg with --dump) in a scenario,\n"
	        "then prints one summary line and the verdicts the analysis must give\n"
	        "(\"expect verdict=... comm=... nranks=... op=... seq=... culprits=... waiting=...\n"
	        "unknown=... # detail\", then \"also ...\" lines for secondary verdicts).\n"
	        "\n"
	        "  --scenario NAME   see --list (the table is in tests/gen/nwgen.c)\n"
	        "  --ranks N         ranks of the job (1 .. 1048576; most scenarios need 2)\n"
	        "  --out DIR         base directory (created if missing)\n"
	        "  --ring R          op ring records, a power of two >= 16 (default 256)\n"
	        "  --job NAME        job name (default gen-<scenario>)\n"
	        "  --hosts H         hosts node0..node{H-1}, blocks of ceil(N/H) ranks (default ceil(N/4))\n"
	        "  --group G         size of the comm-1 groups (split color r/G; default 4)\n"
	        "  --seed S          ids, jitters and addresses derive from it (default 1)\n"
	        "  --culprit R       the rank at fault (default N-3, or N-1 when N < 4)\n"
	        "  --history H       completed steps before the frontier step H+1 (default 300)\n"
	        "  --timeout SECS    the watchdogs' timeout (default 5)\n"
	        "  --age SECS        age of the stall at the heartbeat (default 30)\n"
	        "  --drop LIST       missing_files (or --snapshot alone): ranks with no file (default K)\n"
	        "  --exited LIST     ranks marked EXITED (LIST: R,R-R,...)\n"
	        "  --taint S         S (any bytes: terminal escapes) appended to every host name (and\n"
	        "                    so file name), comm 1's name, rank 0's NCCL_SOCKET_IFNAME, and with\n"
	        "                    --stacks the main thread's name, the program's function names and\n"
	        "                    libcuda's path\n"
	        "  --dump            write dumps (flag DUMP) instead of live segments\n"
	        "  --stacks          add a stack area (captured when the job stalled)\n"
	        "  --snapshot SPEC   attach's snapshot files (stacks per rank and thread: see\n"
	        "                    tests/gen/snapgen.h); alone: a job of snapshots only;\n"
	        "                    with --scenario: snapshots of the ranks SPEC names too\n"
	        "  --snapshot-job NAME  job of those snapshots (default: attach-<job>)\n"
	        "  --gone LIST       snapshots of these ranks name a process that has exited\n"
	        "  --alive R         rank R's snapshot names this host and nwgen's parent\n"
	        "  --list            list the scenarios\n"
	        "  -h, --help        this text\n");
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*v = x;
	return 0;
}

static int parse_secs(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || *end || !(d > 0) || d > 1e7)
		return -1;
	*ns = (uint64_t)(d * 1e9);
	return 0;
}

/* "R,R-R,..." into flags[n]. */
static int parse_list(const char *s, uint8_t *flags, int32_t n)
{
	char *copy = strdup(s), *save = NULL;
	if (!copy)
		return -1;
	int rc = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;
		if (dash) {
			*dash = 0;
			if (parse_u64(tok, &lo) || parse_u64(dash + 1, &hi) || lo > hi)
				rc = -1;
		} else if (parse_u64(tok, &lo)) {
			rc = -1;
		} else {
			hi = lo;
		}
		if (rc || hi >= (uint64_t)n) {
			rc = -1;
			break;
		}
		for (uint64_t r = lo; r <= hi; r++)
			flags[r] = 1;
	}
	free(copy);
	return rc;
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
		return -1;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("nwgen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 2;
}

/* ---- snapshots ---- */

/* The pid of a process that has exited: a child made and reaped here. */
static int64_t gone_pid(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	if (p < 0)
		return -1;
	waitpid(p, NULL, 0);
	return p;
}

static int write_file(const char *path, const uint8_t *buf, uint64_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return die("%s: %s", path, strerror(errno));
	ssize_t w = pwrite(fd, buf, size, 0);
	if (w != (ssize_t)size) {
		int e = w < 0 ? errno : ENOSPC;
		close(fd);
		return die("%s: write: %s", path, strerror(e));
	}
	if (close(fd) != 0)
		return die("%s: close: %s", path, strerror(errno));
	return 0;
}

/* Rank r's snapshot, as attach would write it for the process whose
 * segment rc holds (or would hold). */
static int write_snapshot(const struct gen *g, int32_t r, const struct rank_ctx *rc, const struct sb_layout *l,
                          uint8_t *buf, const char *dir)
{
	struct nw_seg_header like = *rc->seg.h;
	if (r == g->alive) {
		/* A process that runs: the caller, with its real start ticks. */
		char path[64], stat[1024];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)getppid());
		FILE *f = fopen(path, "r");
		size_t len = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
		if (f)
			fclose(f);
		stat[len] = 0;
		char *rp = strrchr(stat, ')');
		unsigned long long ticks = 0;
		/* Field 22 (starttime); fields 3.. follow the ")". */
		for (int field = 3; rp && field <= 22; field++)
			if (!(rp = strchr(rp + 1, ' ')) || (field == 22 && sscanf(rp + 1, "%llu", &ticks) != 1))
				rp = NULL;
		if (!ticks || gethostname(like.host, sizeof like.host - 1) != 0)
			return die("--alive: cannot read %s", path);
		like.pid = getppid();
		like.proc_start_ticks = ticks;
	}
	if (g->gone[r]) {
		if (gethostname(like.host, sizeof like.host - 1) != 0 || (like.pid = gone_pid()) < 0)
			return die("--gone: cannot make a process that is gone: %s", strerror(errno));
		like.proc_start_ticks = 1;   /* not that pid's if another process takes it */
	}
	uint64_t now = g->snap_only ? 100 * SEC : rc->now + SEC;
	struct sb_seg seg;
	snap_build(&seg, l, buf, g->snap, r, &like, g->snap_job, AT(rc, now), rc->app, rc->lib);
	char path[PATH_MAX + 128];
	int len = snprintf(path, sizeof path, "%s/%s.%" PRId64 ".snapshot.seg", dir, like.host, like.pid);
	if (len < 0 || len >= (int)sizeof path)
		return die("%s: path too long", dir);
	return write_file(path, buf, l->size);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "scenario", required_argument, NULL, 's' }, { "ranks", required_argument, NULL, 'n' },
		{ "out", required_argument, NULL, 'o' },      { "ring", required_argument, NULL, 'R' },
		{ "job", required_argument, NULL, 'j' },      { "hosts", required_argument, NULL, 'H' },
		{ "group", required_argument, NULL, 'G' },    { "seed", required_argument, NULL, 'S' },
		{ "culprit", required_argument, NULL, 'k' },  { "history", required_argument, NULL, 'y' },
		{ "timeout", required_argument, NULL, 't' },  { "age", required_argument, NULL, 'a' },
		{ "drop", required_argument, NULL, 'd' },     { "exited", required_argument, NULL, 'x' },
		{ "dump", no_argument, NULL, 'D' },           { "stacks", no_argument, NULL, 'K' },
		{ "list", no_argument, NULL, 'l' },           { "help", no_argument, NULL, 'h' },
		{ "snapshot", required_argument, NULL, 'P' }, { "snapshot-job", required_argument, NULL, 'J' },
		{ "gone", required_argument, NULL, 'g' },    { "alive", required_argument, NULL, 'A' },
		{ "taint", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	static struct gen g;   /* static: what it holds stays reachable on an error exit */
	memset(&g, 0, sizeof g);
	const char *scenario = NULL, *job = NULL, *drop = NULL, *exited = NULL;
	const char *snapshot = NULL, *snap_job = NULL, *gone = NULL;
	uint64_t alive = UINT64_MAX;
	static struct snap_spec spec;
	uint64_t ranks = 0, ring = 256, hosts = 0, group = 4, culprit = UINT64_MAX, history = 300;
	g.seed = 1;
	g.taint = "";
	g.timeout_ns = 5 * SEC;
	g.age_ns = 30 * SEC;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, "h", options, &li)) != -1) {
		uint64_t *u = NULL;
		switch (c) {
		case 's': scenario = optarg; break;
		case 'T': g.taint = optarg; break;
		case 'n': u = &ranks; break;
		case 'o': g.out = optarg; break;
		case 'R': u = &ring; break;
		case 'j': job = optarg; break;
		case 'H': u = &hosts; break;
		case 'G': u = &group; break;
		case 'S': u = &g.seed; break;
		case 'k': u = &culprit; break;
		case 'y': u = &history; break;
		case 't': if (parse_secs(optarg, &g.timeout_ns)) return die("--timeout: not a number of seconds: %s", optarg); break;
		case 'a': if (parse_secs(optarg, &g.age_ns)) return die("--age: not a number of seconds: %s", optarg); break;
		case 'd': drop = optarg; break;
		case 'x': exited = optarg; break;
		case 'D': g.dump = 1; break;
		case 'K': g.stacks = 1; break;
		case 'P': snapshot = optarg; break;
		case 'J': snap_job = optarg; break;
		case 'g': gone = optarg; break;
		case 'A': u = &alive; break;
		case 'l':
			for (size_t i = 0; i < NSCEN; i++)
				printf("%-20s %s\n", scenarios[i].name, scenarios[i].what);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
		if (u && parse_u64(optarg, u))
			return die("--%s: not a number: %s", options[li].name, optarg);
	}
	if (optind != argc || (!scenario && !snapshot) || !ranks || !g.out) {
		usage(stderr);
		return 2;
	}
	if (!scenario) {
		/* Snapshots only: a healthy job gives each rank its identity. */
		g.snap_only = 1;
		scenario = "healthy";
	}
	for (size_t i = 0; i < NSCEN; i++)
		if (!strcmp(scenarios[i].name, scenario))
			g.sc = &scenarios[i];
	if (!g.sc)
		return die("unknown scenario %s (see --list)", scenario);
	if (ranks > (1u << 20))
		return die("--ranks %" PRIu64 " is over 1048576", ranks);
	g.n = (int32_t)ranks;
	if (g.sc->id != SC_HEALTHY && g.sc->id != SC_HEALTHY_P2P && g.sc->id != SC_INIT_STALL_ALL &&
	    g.sc->id != SC_IDLE && g.sc->id != SC_TRANSPORT_STALL && g.n < 2)
		return die("%s needs at least 2 ranks", scenario);
	if (ring < 16 || ring > NW_SEG_MAX_RING || (ring & (ring - 1)))
		return die("--ring %" PRIu64 ": a power of two from 16 to %u", ring, NW_SEG_MAX_RING);
	g.ring = (uint32_t)ring;
	if (!hosts)
		hosts = ((uint64_t)g.n + 3) / 4;
	if (hosts > (uint64_t)g.n)
		hosts = (uint64_t)g.n;
	g.per_host = (int32_t)(((uint64_t)g.n + hosts - 1) / hosts);
	g.hosts = (g.n + g.per_host - 1) / g.per_host;
	if (g.sc->id == SC_MIXED_NCCL && g.hosts < 2)
		return die("mixed_nccl needs at least 2 hosts (--hosts)");
	if (group < 1 || group > (uint64_t)g.n)
		group = (uint64_t)g.n;
	g.group = (int32_t)group;
	g.culprit = culprit == UINT64_MAX ? culprit_default(g.n) : (int32_t)(culprit < (uint64_t)g.n ? culprit : 0);
	if (culprit != UINT64_MAX && culprit >= (uint64_t)g.n)
		return die("--culprit %" PRIu64 ": ranks are 0..%d", culprit, (int)g.n - 1);
	if (g.sc->pp && g.sc->id != SC_HEALTHY_P2P) {
		int32_t first = g.culprit / g.group * g.group;
		int32_t gsz = g.n - first < g.group ? g.n - first : g.group;
		if (gsz < 2 || (g.sc->id == SC_P2P_UNEXPECTED_PEER && gsz < 3))
			return die("%s: rank %d's group of comm 1 has %d ranks (needs %d: see --group)", scenario,
			           (int)g.culprit, (int)gsz, g.sc->id == SC_P2P_UNEXPECTED_PEER ? 3 : 2);
	}
	if (history > 1000000)
		return die("--history %" PRIu64 " is over 1000000", history);
	g.history = history;
	g.nseq = history + 1;
	snprintf(g.job, sizeof g.job, "%s%s", job ? "" : "gen-", job ? job : g.snap_only ? "snapshot" : scenario);
	if (strchr(g.job, '/') || !strcmp(g.job, ".") || !strcmp(g.job, ".."))
		return die("--job %s: not a directory name", g.job);
	if (g.sc->id != SC_MISSING_FILES && drop && !g.snap_only)
		return die("--drop is for missing_files and --snapshot without --scenario");
	if (snapshot) {
		char why[256];
		if (snap_spec_parse(snapshot, g.n, &spec, why, sizeof why))
			return die("--snapshot: %s", why);
		g.snap = &spec;
		const char *pre = snap_job || g.snap_only ? "" : "attach-", *base = snap_job ? snap_job : g.job;
		if (strlen(pre) + strlen(base) >= sizeof g.snap_job)
			return die("--snapshot-job %s%s: over %d bytes", pre, base, NW_SEG_JOB_LEN - 1);
		memcpy(g.snap_job, pre, strlen(pre));
		memcpy(g.snap_job + strlen(pre), base, strlen(base) + 1);
		if (strchr(g.snap_job, '/') || !strcmp(g.snap_job, ".") || !strcmp(g.snap_job, ".."))
			return die("--snapshot-job %s: not a directory name", g.snap_job);
	} else if (snap_job || gone || alive != UINT64_MAX) {
		return die("--snapshot-job, --gone and --alive are for --snapshot");
	}
	if (alive != UINT64_MAX && alive >= (uint64_t)g.n)
		return die("--alive %" PRIu64 ": ranks are 0..%d", alive, (int)g.n - 1);
	g.alive = alive == UINT64_MAX ? -1 : (int32_t)alive;
	g.gone = calloc((size_t)g.n, 1);
	if (!g.gone)
		return die("out of memory");
	if (gone && parse_list(gone, g.gone, g.n))
		return die("--gone %s: ranks R or R-R from 0 to %d, comma-separated", gone, (int)g.n - 1);
	g.drop = calloc((size_t)g.n, 1);
	g.exited = calloc((size_t)g.n, 1);
	int bad_drop = !g.drop || !g.exited || (drop && parse_list(drop, g.drop, g.n));
	int bad_exited = !bad_drop && exited && parse_list(exited, g.exited, g.n);
	if (bad_drop || bad_exited) {
		int oom = !g.drop || !g.exited;
		free(g.drop);
		free(g.exited);
		if (oom)
			return die("out of memory");
		if (bad_drop)
			return die("--drop %s: ranks R or R-R from 0 to %d, comma-separated", drop, (int)g.n - 1);
		return die("--exited %s: ranks R or R-R from 0 to %d, comma-separated", exited, (int)g.n - 1);
	}
	if (!drop && g.sc->id == SC_MISSING_FILES)
		g.drop[g.culprit] = 1;

	uint8_t uid[128];
	for (size_t i = 0; i < sizeof uid; i += 8) {
		uint64_t v = sb_mix64(g.seed * 0x2545f4914f6cdd1dull + i);
		memcpy(uid + i, &v, 8);
	}
	g.world_id = sb_hash64(uid, sizeof uid);
	sb_layout_init(&g.layout, GEN_COMMS, GEN_PEERS, g.ring, g.stacks);
	job_stall(&g);

	if (snprintf(g.jobdir, sizeof g.jobdir, "%s/%s", g.out, g.job) >= (int)sizeof g.jobdir)
		return die("%s/%s: path too long", g.out, g.job);
	if (mkdirs(g.jobdir) != 0)
		return die("cannot create %s: %s", g.jobdir, strerror(errno));
	char snapdir[PATH_MAX];
	struct sb_layout snapl;
	uint8_t *snapbuf = NULL;
	if (g.snap) {
		if (snprintf(snapdir, sizeof snapdir, "%s/%s", g.out, g.snap_job) >= (int)sizeof snapdir)
			return die("%s/%s: path too long", g.out, g.snap_job);
		if (mkdirs(snapdir) != 0)
			return die("cannot create %s: %s", snapdir, strerror(errno));
		snap_layout(&snapl);
		if (!(snapbuf = aligned_alloc(4096, (snapl.size + 4095) / 4096 * 4096)))
			return die("out of memory");
	}
	uint64_t snaps = 0;

	uint8_t *buf = aligned_alloc(4096, (g.layout.size + 4095) / 4096 * 4096);
	if (!buf)
		return die("out of memory");
	struct rank_ctx rc;
	double t0 = mono_s();
	uint64_t files = 0, bytes = 0;
	for (int32_t r = 0; r < g.n; r++) {
		gen_rank(&g, r, buf, &rc);
		if (g.snap && (g.snap_only ? !g.drop[r] : snap_spec_has(g.snap, r))) {
			if (write_snapshot(&g, r, &rc, &snapl, snapbuf, snapdir))
				return 2;
			snaps++;
		}
		if (g.drop[r] || g.snap_only)
			continue;
		char path[PATH_MAX + 128];
		const struct nw_seg_header *h = rc.seg.h;
		int len = g.dump
			? snprintf(path, sizeof path, "%s/%s.%" PRId64 ".rank%d.dump.seg", g.jobdir, h->host, h->pid, (int)r)
			: snprintf(path, sizeof path, "%s/%s.%" PRId64 ".seg", g.jobdir, h->host, h->pid);
		if (len < 0 || len >= (int)sizeof path)
			return die("%s: path too long", g.jobdir);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return die("%s: %s", path, strerror(errno));
		ssize_t w = pwrite(fd, buf, g.layout.size, 0);
		if (w != (ssize_t)g.layout.size) {
			int e = w < 0 ? errno : ENOSPC;
			close(fd);
			return die("%s: write: %s", path, strerror(e));
		}
		if (close(fd) != 0)
			return die("%s: close: %s", path, strerror(errno));
		files++;
		bytes += g.layout.size;
	}
	double secs = mono_s() - t0;
	if (g.snap)
		printf("nwgen: snapshots: %" PRIu64 " of %" PRIu64 " bytes in %s\n", snaps, snapl.size, snapdir);
	if (g.snap_only) {
		free(buf);
		free(snapbuf);
		snap_spec_free(&spec);
		free(g.drop);
		free(g.exited);
		free(g.gone);
		return 0;
	}
	printf("nwgen: %s: %" PRIu64 " segments of %" PRIu64 " bytes (%" PRIu64 " bytes) in %s in %.2f s\n",
	       g.sc->name, files, g.layout.size, bytes, g.jobdir, secs);
	print_expect(&g, stdout);
	free(snapbuf);
	snap_spec_free(&spec);
	free(g.gone);
	free(buf);
	free(g.drop);
	free(g.exited);
	return 0;
}
