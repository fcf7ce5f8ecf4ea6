/* ncclwatch segment format, version 2 (minor 2).
 *
 * One segment per process: a file mapped MAP_SHARED by libncclwatch.so
 * (default /dev/shm/ncclwatch-$UID/<job>/<host>.<pid>.seg). The live file
 * and a dump are the same bytes, so a reader in another process, or after
 * the process died, sees everything that was recorded. docs/FORMAT.md
 * describes every field and the rules for changing this file.
 *
 * Layout: [header][comm table][peer table][op ring][stack area], each area
 * at the offset the header gives, 64-byte aligned. Every field has a fixed
 * width; padding is explicit; new fields go at the end of a struct (within
 * its reserved tail) and bump NW_SEG_VERSION_MINOR; any other change bumps
 * NW_SEG_VERSION_MAJOR, which readers of an older major refuse. 2.0 reuses
 * the comm slots of ended communicators: an op or peer entry belongs to
 * its slot only while their generations agree (docs/FORMAT.md, "Comm slot
 * reuse"); a reader of major 1 would give an old op to the slot's new
 * communicator, so it refuses the file. Readers of 2 read 1.x files.
 *
 * All integers are little-endian native (the endian field lets a reader
 * refuse a foreign byte order). Sequence numbers are 1-based; 0 means none.
 * Times are nanoseconds of CLOCK_MONOTONIC unless the name says realtime.
 */
#ifndef NCCLWATCH_SEGMENT_H
#define NCCLWATCH_SEGMENT_H

#include <stdint.h>
#include <stddef.h>
#ifdef __cplusplus
#include <atomic>
#define NW_ATOMIC(t) std::atomic<t>
#else
#include <stdatomic.h>
#define NW_ATOMIC(t) _Atomic t
#endif

#define NW_SEG_MAGIC "NCCLWSEG"           /* 8 bytes, no terminator */
#define NW_SEG_ENDIAN 0x01020304u
#define NW_SEG_VERSION_MAJOR 2
#define NW_SEG_VERSION_MINOR 2
#define NW_SEG_V1_MINOR 4                 /* the last minor of major 1 (readers of 2 read 1.0-1.4) */
#define NW_SEG_ALIGN 64

/* ---- header.flags ---- */
#define NW_SEG_F_RECORDING   0x1u  /* the process is recording into this file */
#define NW_SEG_F_STOPPED     0x2u  /* recording stopped after an internal error (see error[]) */
#define NW_SEG_F_EXITED      0x4u  /* the process ran its exit handler */
#define NW_SEG_F_DUMP        0x8u  /* this file is a dump (a copy), not the live segment */
#define NW_SEG_F_STALL_SEEN  0x10u /* the watchdog saw a stall in this process */
#define NW_SEG_F_PEERS_FULL  0x20u /* the peer table overflowed: some per-peer positions are ring-only */
#define NW_SEG_F_COMMS_FULL  0x40u /* the comm table overflowed (2.0: every slot held a live comm):
                                    * ops on untracked comms are not recorded (comms_dropped) */
#define NW_SEG_F_EXIT_STATUS 0x80u /* 1.2: exit_status holds the status the process passed to exit() */
#define NW_SEG_F_SNAPSHOT    0x100u /* 1.4: written by `ncclwatch attach` from outside a process that
                                     * ran without the preload: identity and environment from /proc,
                                     * a stack area, no comm or peer table and no ring (capacities 0) */
#define NW_SEG_F_LEFT_EARLY  0x200u /* 2.0: the process exited cleanly (status 0, every comm ended, no
                                     * stall) while others of its job still ran: its file stays for
                                     * their diagnosis (where it ended); the job's last process out
                                     * removes it unless a process of the job did not end well */
#define NW_SEG_F_EXIT_POLL_SKIPPED 0x400u /* 2.2: the exit path skipped a poll of the event pairs: the
                                           * watchdog's poll (or a reap) held the lock past the exit's
                                           * wait (1 s), stuck in a driver call, say; op states may be
                                           * a poll old. Readers need not know it */

#define NW_SEG_HOST_LEN 64
#define NW_SEG_JOB_LEN 64
#define NW_SEG_ENV_LEN 3072     /* "NAME=value\0NAME=value\0\0", allowlisted names only */
#define NW_SEG_ERROR_LEN 128
#define NW_SEG_LIBPATH_LEN 256
#define NW_SEG_GPU_NAME_LEN 64

/* The header: 8 KiB, fixed. */
struct nw_seg_header {
	char     magic[8];            /* NW_SEG_MAGIC */
	uint32_t endian;              /* NW_SEG_ENDIAN as written by the producer */
	uint16_t version_major;       /* NW_SEG_VERSION_MAJOR */
	uint16_t version_minor;       /* NW_SEG_VERSION_MINOR */
	uint32_t header_size;         /* sizeof(struct nw_seg_header) */
	NW_ATOMIC(uint32_t) flags;    /* NW_SEG_F_* */
	uint64_t segment_size;        /* total bytes of the file */

	/* Areas. Each *_offset is from the start of the file, NW_SEG_ALIGN aligned. */
	uint64_t comm_offset;
	uint32_t comm_capacity;       /* slots in the comm table (NCCLWATCH_COMMS) */
	uint32_t comm_record_size;    /* sizeof(struct nw_seg_comm) */
	uint64_t peer_offset;
	uint32_t peer_capacity;       /* slots in the peer table (NCCLWATCH_PEERS) */
	uint32_t peer_record_size;    /* sizeof(struct nw_seg_peer) */
	uint64_t ring_offset;
	uint32_t ring_capacity;       /* records in the op ring, a power of two (NCCLWATCH_RING) */
	uint32_t op_record_size;      /* sizeof(struct nw_seg_op) */
	uint64_t stack_offset;        /* stack area (format defined by the watchdog; 0 = none) */
	uint64_t stack_size;

	/* Identity of the process. */
	int64_t  pid;
	int64_t  ppid;
	uint64_t start_realtime_ns;   /* CLOCK_REALTIME when the segment was created */
	uint64_t start_monotonic_ns;  /* CLOCK_MONOTONIC at the same moment */
	int32_t  global_rank;         /* from the launcher (RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMI_RANK); -1 unknown */
	int32_t  local_rank;          /* LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID; -1 unknown */
	int32_t  world_size;          /* WORLD_SIZE, OMPI_COMM_WORLD_SIZE, SLURM_NTASKS; -1 unknown */
	uint32_t uid;
	char     host[NW_SEG_HOST_LEN];   /* gethostname(), NUL-terminated */
	char     job[NW_SEG_JOB_LEN];     /* job id this process belongs to (see README), NUL-terminated */

	/* Live counters, written by the producer while it runs. */
	NW_ATOMIC(uint64_t) ring_head;    /* records ever reserved; record t lives in slot t % ring_capacity */
	NW_ATOMIC(uint32_t) comm_count;   /* comm slots in use (published in order) */
	NW_ATOMIC(uint32_t) peer_count;   /* peer slots in use (published in order) */
	NW_ATOMIC(uint64_t) heartbeat_ns; /* last time the watchdog ran (0 before it starts) */
	NW_ATOMIC(uint64_t) ops_dropped;  /* ops not recorded (comm table full, recording stopped,
	                                   * a ring slot a newer ticket took) */

	/* Environment fingerprint. */
	int32_t  nccl_version;        /* ncclGetVersion() of the real library; 0 unknown */
	int32_t  cuda_driver_version; /* cuDriverGetVersion(); 0 unknown */
	char     nccl_lib[NW_SEG_LIBPATH_LEN];    /* path of the real NCCL library resolved */
	char     gpu_name[NW_SEG_GPU_NAME_LEN];   /* first device's name, if known */
	char     env[NW_SEG_ENV_LEN];             /* allowlisted variables, see docs/FORMAT.md */
	char     error[NW_SEG_ERROR_LEN];         /* why recording stopped (NW_SEG_F_STOPPED) */

	/* v1.1: the watchdog (all zero until it starts). */
	uint32_t tracking;            /* enum nw_tracking */
	uint32_t watchdog_tid;        /* gettid() of the watchdog thread, 0 none */
	uint32_t poll_ms;             /* NCCLWATCH_POLL_MS in effect */
	uint32_t timeout_ms;          /* NCCLWATCH_TIMEOUT in effect, in ms */
	NW_ATOMIC(uint64_t) events_created;  /* CUDA events created (pool growth) */
	NW_ATOMIC(uint64_t) event_records;   /* cuEventRecord calls made around NCCL calls */
	NW_ATOMIC(uint64_t) ops_tracked;     /* ops (or group launches) given a start/end pair */
	NW_ATOMIC(uint64_t) findings;        /* stall findings the watchdog reported */
	NW_ATOMIC(uint64_t) dumps;           /* dumps written */
	NW_ATOMIC(uint64_t) request_served;  /* last dump request served (see docs/FORMAT.md) */
	NW_ATOMIC(uint64_t) last_finding_ns; /* when the last finding was reported, 0 none */

	/* v1.2: identity of the process, exact. */
	uint64_t proc_start_ticks;    /* the process's start time: field 22 of /proc/self/stat (clock
	                               * ticks since boot) when the segment was created; 0 unknown.
	                               * Equal to /proc/<pid>/stat's: the same process (pid not reused) */
	int32_t  exit_status;         /* the status given to exit(), valid with NW_SEG_F_EXIT_STATUS */

	/* 2.0: what was lost, and comm slots reused. */
	uint32_t threads_dropped;     /* watchdog: threads its last capture left out (thread table full) */
	NW_ATOMIC(uint64_t) comms_dropped; /* communicators not recorded: every comm slot held a live one */
	NW_ATOMIC(uint64_t) comm_reuses;   /* comm slots given to a new communicator after theirs ended */

	/* 2.1: CUDA graphs (docs/FORMAT.md, "CUDA graphs"). */
	NW_ATOMIC(uint64_t) graph_launches;   /* GRAPH_LAUNCH records written (launches of graphs holding NCCL ops) */
	NW_ATOMIC(uint64_t) graphs_untracked; /* graphs or executable graphs holding NCCL ops past the
	                                       * library's tables: their launches are not recorded */

	uint8_t  reserved[8192 - 3952];           /* zero; future fields take from here */
};

/* ---- header.tracking: how op completion is known ---- */
enum nw_tracking {
	NW_TRACK_NONE = 0,        /* the watchdog has not started */
	NW_TRACK_EVENTS = 1,      /* CUDA events around every op */
	NW_TRACK_NO_DRIVER = 2,   /* no CUDA driver could be loaded: ops are UNTRACKED */
};

/* ---- comm.state ---- */
enum nw_comm_state {
	NW_COMM_FREE = 0,         /* slot unused */
	NW_COMM_INIT_ENTERED = 1, /* inside ncclCommInit*, Split or Shrink */
	NW_COMM_INIT_DONE = 2,    /* created */
	NW_COMM_INIT_FAILED = 3,  /* creation returned an error (init_result) */
	NW_COMM_INIT_ASYNC = 4,   /* non-blocking init returned ncclInProgress, not finished */
	NW_COMM_FINALIZED = 5,    /* ncclCommFinalize returned */
	NW_COMM_DESTROYED = 6,    /* ncclCommDestroy returned */
	NW_COMM_ABORTED = 7,      /* ncclCommAbort called */
	NW_COMM_REVOKED = 8,      /* ncclCommRevoke called */
};

/* ---- comm.origin: how the communicator was made (and its id derived) ---- */
enum nw_comm_origin {
	NW_ORIGIN_INIT_RANK = 1,      /* id = hash(ncclUniqueId) */
	NW_ORIGIN_INIT_CONFIG = 2,    /* id = hash(ncclUniqueId) */
	NW_ORIGIN_INIT_SCALABLE = 3,  /* id = hash(all nId ids, in order) */
	NW_ORIGIN_INIT_ALL = 4,       /* id = one random id per ncclCommInitAll call */
	NW_ORIGIN_SPLIT = 5,          /* id = hash(parent id, n-th split of parent, color) */
	NW_ORIGIN_SHRINK = 6,         /* id = hash(parent id, n-th shrink of parent, excluded ranks) */
};

#define NW_COMM_NAME_LEN 64
#define NW_BUSID_LEN 16

/* A communicator: 512 bytes. Published by writing every field, then a
 * release store of `state` != FREE and of header.comm_count.
 *
 * 2.0: a slot whose communicator ended (destroyed, aborted, or failed to
 * initialize without a handle) is given to a new one once every slot has
 * been used, the one that ended first first. `gen` counts the comms the
 * slot held before this one; every op and peer entry carries the
 * generation of its comm (comm_gen) and belongs to this slot's comm only
 * when they agree. The writer claims the slot with a CAS of `gen` from a
 * word with no holders to NW_COMM_GEN_WRITING | (gen + 1), writes every
 * other field, then stores gen + 1 with release; a reader re-reads `gen`
 * after its copy and keeps the slot only if both reads agree and neither
 * has WRITING. The watchdog, which moves positions of ops issued long
 * before, holds the slot (a CAS adding NW_COMM_GEN_HOLDER to a word whose
 * generation is its op's, no WRITING) around its stores: a slot is never
 * claimed while held, and an update of a comm that is gone writes nothing. */
#define NW_COMM_GEN_MASK    0x00ffffffu  /* bits 0-23: the generation */
#define NW_COMM_GEN_HOLDER  (1u << 24)   /* bits 24-30: watchdog updaters holding the slot */
#define NW_COMM_GEN_HOLDERS (0x7fu << 24)
#define NW_COMM_GEN_WRITING (1u << 31)   /* being (re)written for the generation in bits 0-23 */
struct nw_seg_comm {
	uint64_t comm_id;             /* cross-rank identity (see origin) */
	uint64_t parent_id;           /* comm_id of the parent for SPLIT/SHRINK, else 0 */
	uint64_t handle;              /* the ncclComm_t value in this process */
	int32_t  rank;                /* rank in this communicator */
	int32_t  nranks;
	int32_t  cuda_device;         /* CUDA device ordinal (ncclCommCuDevice), -1 unknown */
	uint32_t origin;              /* enum nw_comm_origin */
	NW_ATOMIC(uint32_t) state;    /* enum nw_comm_state */
	int32_t  init_result;         /* ncclResult_t of the init/split/shrink call */
	int32_t  split_color;         /* SPLIT: color; SHRINK: excluded count; else 0 */
	int32_t  split_key;           /* SPLIT: key; else 0 */
	uint32_t blocking;            /* config.blocking as passed (1 default, 0 non-blocking) */
	uint32_t pad0;
	uint64_t init_enter_ns;
	uint64_t init_done_ns;
	uint64_t end_ns;              /* when finalize/destroy/abort/revoke was called */
	char     name[NW_COMM_NAME_LEN];   /* config.commName, if set */
	char     bus_id[NW_BUSID_LEN];     /* PCI bus id of cuda_device, if known */
	uint8_t  uuid[16];                 /* device UUID, if known */

	/* Positions of the collective stream: the last sequence number that
	 * reached each state, and when. Survive ring wrap-around. */
	NW_ATOMIC(uint64_t) coll_enqueued;
	NW_ATOMIC(uint64_t) coll_started;
	NW_ATOMIC(uint64_t) coll_completed;
	NW_ATOMIC(uint64_t) coll_enqueued_ns;
	NW_ATOMIC(uint64_t) coll_started_ns;
	NW_ATOMIC(uint64_t) coll_completed_ns;
	/* Point-to-point totals on this comm (per-peer positions: peer table). */
	NW_ATOMIC(uint64_t) p2p_enqueued;
	NW_ATOMIC(uint64_t) p2p_completed;
	NW_ATOMIC(uint64_t) p2p_enqueued_ns;
	NW_ATOMIC(uint64_t) p2p_completed_ns;
	/* Last async error seen (ncclCommGetAsyncError), 0 none. */
	NW_ATOMIC(int32_t)  async_error;
	uint32_t pad1;
	uint64_t splits;              /* ncclCommSplit calls made on this comm (derives child ids) */
	uint64_t shrinks;             /* ncclCommShrink calls made on this comm */
	NW_ATOMIC(uint32_t) gen;      /* 2.0: NW_COMM_GEN_* word: generation, holders, writing */
	uint32_t pad2;                /* zero */

	uint8_t  reserved[512 - 296]; /* zero; future fields */
};

/* Per (comm, peer) positions of sends and receives: 64 bytes. Send #k from
 * A to B matches receive #k on B from A. */
struct nw_seg_peer {
	uint32_t comm_slot;           /* index into the comm table (and comm_gen) */
	int32_t  peer;                /* peer rank in that comm */
	NW_ATOMIC(uint64_t) send_enqueued;
	NW_ATOMIC(uint64_t) send_completed;
	NW_ATOMIC(uint64_t) recv_enqueued;
	NW_ATOMIC(uint64_t) recv_completed;
	NW_ATOMIC(uint64_t) last_ns;  /* last change */
	NW_ATOMIC(uint32_t) used;     /* 1 once published */
	uint32_t comm_gen;            /* 2.0: generation of its comm slot (see struct nw_seg_comm) */
	uint64_t reserved;
};

/* ---- op.kind ---- */
enum nw_op_kind {
	NW_OP_NONE = 0,
	/* collectives: numbered by comm.coll_* */
	NW_OP_ALLREDUCE = 1,
	NW_OP_BROADCAST = 2,
	NW_OP_BCAST = 3,
	NW_OP_REDUCE = 4,
	NW_OP_ALLGATHER = 5,
	NW_OP_REDUCESCATTER = 6,
	NW_OP_ALLTOALL = 7,
	NW_OP_GATHER = 8,
	NW_OP_SCATTER = 9,
	/* point to point: numbered per (comm, peer, direction) */
	NW_OP_SEND = 16,
	NW_OP_RECV = 17,
	/* groups: seq = group id */
	NW_OP_GROUP_START = 24,       /* outermost ncclGroupStart */
	NW_OP_GROUP_END = 25,         /* outermost ncclGroupEnd: the group's launch; a blocking
	                               * call: INIT_ENTERED until it returns (v1.1) */
	/* communicator life cycle: seq = 0 */
	NW_OP_COMM_INIT = 32,         /* any ncclCommInit*; comm.origin tells which */
	NW_OP_COMM_SPLIT = 33,
	NW_OP_COMM_SHRINK = 34,
	NW_OP_COMM_FINALIZE = 35,
	NW_OP_COMM_DESTROY = 36,
	NW_OP_COMM_ABORT = 37,
	NW_OP_COMM_REVOKE = 38,
	NW_OP_ASYNC_ERROR = 39,       /* ncclCommGetAsyncError reported an error */
	/* 2.1: a launch of an executable CUDA graph that holds NCCL ops, timed
	 * like an op (ENQUEUED, STARTED, COMPLETED/FAILED) by one event pair
	 * around the launch. Its fields say (docs/FORMAT.md, "CUDA graphs"):
	 * seq = replay number of the executable graph (1, 2, ...); group_id =
	 * the CUgraphExec; stream = the launch stream; count = NCCL ops captured
	 * into the graph; root = 2.2: the seq of the graph's first captured
	 * NCCL op on its comm (its CAPTURED record's seq, low 31 bits: the
	 * same on every rank, so replays match across ranks by it; 2.1: the
	 * per-process capture id); redop = the kind of its first NCCL op; datatype and
	 * comm_* / rank / nranks = that op's; cuda_error = what cuGraphLaunch
	 * returned when it failed (state FAILED). */
	NW_OP_GRAPH_LAUNCH = 40,
};
/* Bit 63 of op.commit: the slot is being written by the ticket in the low bits. */
#define NW_SEG_COMMIT_WRITING (1ull << 63)
/* 1.3: bits 56-62 of a published commit count the in-place updaters holding
 * the record (see struct nw_seg_op); bits 0-55 are ticket + 1. */
#define NW_SEG_COMMIT_UPDATER  (1ull << 56)
#define NW_SEG_COMMIT_UPDATERS (0x7full << 56)
#define NW_SEG_COMMIT_TICKET   (NW_SEG_COMMIT_UPDATER - 1)

/* The ticket + 1 a commit word publishes, 0 if none (never used, or being
 * written). Updaters at work do not make a record invalid. */
static inline uint64_t nw_seg_commit_ticket1(uint64_t commit)
{
	return commit & NW_SEG_COMMIT_WRITING ? 0 : commit & NW_SEG_COMMIT_TICKET;
}

#define NW_OP_IS_COLL(k) ((k) >= NW_OP_ALLREDUCE && (k) <= NW_OP_SCATTER)
#define NW_OP_IS_P2P(k)  ((k) == NW_OP_SEND || (k) == NW_OP_RECV)

/* ---- op.state ---- */
enum nw_op_state {
	NW_ST_ENQUEUED = 1,     /* API called (and returned, see result) */
	NW_ST_STARTED = 2,      /* the GPU reached the op (start event complete) */
	NW_ST_COMPLETED = 3,    /* end event complete */
	NW_ST_FAILED = 4,       /* event error or async error (cuda_error / result) */
	NW_ST_CAPTURED = 5,     /* issued during CUDA graph capture: recorded once, timed per
	                         * replay by its graph's GRAPH_LAUNCH records (2.1) */
	NW_ST_INIT_ENTERED = 6, /* life-cycle call entered, not returned */
	NW_ST_INIT_DONE = 7,    /* life-cycle call returned ncclSuccess */
	NW_ST_INIT_FAILED = 8,  /* life-cycle call returned an error (result) */
	NW_ST_UNTRACKED = 9,    /* no CUDA driver: completion cannot be known */
	NW_ST_DISCARDED = 10,   /* in a group ended by ncclGroupSimulateEnd: never launched;
	                         * its sequence number was given back */
};

/* ---- op.flags ---- */
#define NW_OPF_IN_GROUP   0x1u  /* issued inside ncclGroupStart/End */
#define NW_OPF_INPLACE    0x2u  /* sendbuff == recvbuff */
#define NW_OPF_NONBLOCKING 0x4u /* the comm is non-blocking; result may be ncclInProgress */
/* A GRAPH_LAUNCH record (2.2+): the watchdog saw, from the per-op events
 * (NCCLWATCH_GRAPH_OP_EVENTS), how many of its graph's NCCL ops this
 * replay completed, in capture order: NW_OP_GRAPH_OPS_DONE(flags). Written
 * after publication, like state (updated in place). */
#define NW_OPF_GRAPH_OPS_KNOWN 0x100u
#define NW_OPF_GRAPH_OPS_SHIFT 16
#define NW_OP_GRAPH_OPS_DONE(flags) ((uint32_t)(flags) >> NW_OPF_GRAPH_OPS_SHIFT)

/* One operation: 128 bytes.
 *
 * Publication protocol (multi-producer, read by other processes): the
 * writer reserves ticket t = fetch_add(header.ring_head, 1), slot
 * t % ring_capacity; claims the slot by a CAS of commit from an older
 * published (or zero) value to NW_SEG_COMMIT_WRITING | t, release fence,
 * writes the fields, then stores commit = t + 1 with release. A writer that
 * finds the slot claimed by an older writer still at work takes a new
 * ticket (the skipped ticket stays a gap); one that finds a newer ticket
 * there gives up (counted in header.ops_dropped), so two writers never
 * write one slot at once. A reader loads commit (acquire),
 * copies the record, acquire fence, loads commit again: the copy is valid
 * only if both loads are equal, nonzero, and name the ticket it expects
 * (1.3: in the low 56 bits, nw_seg_commit_ticket1()).
 *
 * state, start_ns, end_ns, result and cuda_error are updated in place
 * afterwards (single atomic stores) and may be read at any time. 1.3: an
 * updater first holds the record: one CAS of commit from a value whose low
 * bits are exactly its ticket + 1 to that value + NW_SEG_COMMIT_UPDATER,
 * then its stores, then a release subtract of NW_SEG_COMMIT_UPDATER. A
 * writer claims a slot only from a commit with no updater bits, so a held
 * record cannot be reused, and an update whose CAS fails (the slot holds
 * another ticket) writes nothing: no record ever carries another ticket's
 * state. A 1.2 reader sees a held record as not valid (it compares the
 * whole word); a process killed inside an update leaves it so. */
struct nw_seg_op {
	NW_ATOMIC(uint64_t) commit;   /* ticket + 1 when published; NW_SEG_COMMIT_WRITING | ticket while written; 0 never used */
	uint64_t comm_id;             /* comm.comm_id (denormalized: readable after the comm slot is reused) */
	uint64_t seq;                 /* collective seq, per-peer seq (SEND/RECV), group id, or 0 */
	uint64_t count;               /* element count as passed (AllGather: sendcount; ReduceScatter: recvcount) */
	uint64_t stream;              /* cudaStream_t value */
	uint64_t group_id;            /* per-thread group number, 0 if not in a group */
	uint64_t caller;              /* return address of the wrapped call */
	uint64_t enqueue_ns;          /* when the API was called */
	NW_ATOMIC(uint64_t) start_ns; /* when STARTED was observed */
	NW_ATOMIC(uint64_t) end_ns;   /* when COMPLETED/FAILED was observed, or the life-cycle call returned */
	uint32_t comm_slot;           /* index into the comm table, UINT32_MAX if none (and comm_gen) */
	uint16_t kind;                /* enum nw_op_kind */
	uint8_t  datatype;            /* ncclDataType_t */
	uint8_t  group_depth;         /* nesting depth at the call, 0 outside groups */
	int32_t  redop;               /* ncclRedOp_t (>= ncclNumOps: a PreMulSum op), -1 n/a */
	int32_t  root;                /* root (Reduce/Bcast/Broadcast/Gather/Scatter) or peer (Send/Recv), -1 n/a */
	int32_t  rank;                /* comm rank (denormalized) */
	int32_t  nranks;              /* comm size (denormalized) */
	uint32_t tid;                 /* gettid() of the calling thread */
	uint32_t flags;               /* NW_OPF_* */
	NW_ATOMIC(uint32_t) state;    /* enum nw_op_state */
	NW_ATOMIC(int32_t) result;    /* ncclResult_t the call returned (or async error) */
	NW_ATOMIC(int32_t) cuda_error;/* CUresult of a failed event, 0 none */
	uint32_t comm_gen;            /* 2.0: generation of comm_slot when the op was issued: the op
	                               * is of that slot's comm only while its gen agrees */
};

/* ---- The stack area (v1.1) ----
 *
 * Where every thread of the process was at the last capture, written by the
 * watchdog only (a seqlock: `seq` is odd while it writes, a reader copies
 * and retries or reports "being written" if seq changed), plus optional
 * per-op call stacks (NCCLWATCH_STACKS=1). All offsets are from the start
 * of the stack area. Addresses are this process's; every frame also names
 * its module (index into the module table, which holds each mapped
 * object's load address and path) and offset in it, so a reader on another
 * machine can still resolve it, and the symbol the watchdog found. */
#define NW_STACK_MAGIC 0x4b54534eu      /* "NSTK" */
#define NW_STACK_NAME_LEN 16
#define NW_STACK_MODULE_PATH_LEN 240

struct nw_seg_stack_header {            /* 128 bytes */
	uint32_t magic;                     /* NW_STACK_MAGIC */
	NW_ATOMIC(uint32_t) seq;            /* even: stable; odd: being written */
	uint32_t thread_capacity;           /* slots in the thread table */
	uint32_t frame_capacity;            /* frames per thread slot */
	uint32_t module_capacity;
	uint32_t strtab_size;               /* bytes of the string table */
	uint32_t thread_count;              /* threads in the last capture */
	uint32_t module_count;
	uint32_t strtab_used;
	uint32_t opstack_depth;             /* frames per op (0: per-op stacks off) */
	uint32_t opstack_count;             /* op slots = header.ring_capacity, or 0 */
	uint32_t pad0;
	uint64_t thread_offset;             /* struct nw_seg_thread[thread_capacity] */
	uint64_t frame_offset;              /* struct nw_seg_frame[thread_capacity * frame_capacity] */
	uint64_t module_offset;             /* struct nw_seg_module[module_capacity] */
	uint64_t strtab_offset;             /* NUL-terminated strings; offset 0 is "" */
	uint64_t opstack_offset;            /* uint64_t ip[opstack_count][opstack_depth], 0 = none */
	uint64_t capture_ns;                /* CLOCK_MONOTONIC of the last capture, 0 never */
	uint64_t request_id;                /* the dump request it answered (0: own finding) */
	uint64_t captures;                  /* captures made */
	uint64_t ipsym_offset;              /* struct nw_seg_frame[ipsym_capacity]: symbols of op-stack ips */
	uint32_t ipsym_capacity;
	uint32_t ipsym_count;               /* entries in use, sorted by ip */
};

/* 1.4: the area extension, right after the area header (area offset 128).
 * A 1.4 area's tables start after it; a 1.3 area has none. */
struct nw_seg_stack_ext {               /* 128 bytes */
	uint32_t ext_size;                  /* layout: sizeof(struct nw_seg_stack_ext) */
	uint32_t native_note;               /* capture: string table offset of a note on the native
	                                     * stacks of the last capture (e.g. why there are none), 0 none */
	uint32_t python_note;               /* capture: the same for Python stacks, 0 none */
	uint32_t pad0;
	/* 1.4: Python stacks. Every thread that runs Python has its frames in
	 * the Python frame table (thread.py_first/py_count), innermost first. */
	uint64_t pyframe_offset;            /* layout: struct nw_seg_pyframe[pyframe_capacity] */
	uint32_t pyframe_capacity;          /* layout: slots in the Python frame table, 0 = none */
	uint32_t pyframe_count;             /* capture: slots in use */
	/* 1.4: per-op Python call sites (NCCLWATCH_PY_FRAMES): raw references
	 * written by the wrapped call, named by the watchdog in the site table. */
	uint64_t pycall_offset;             /* layout: struct nw_seg_pycall[pycall_count][pycall_depth], 0 = none */
	uint32_t pycall_depth;              /* layout: references per op (innermost first), 0 = off */
	uint32_t pycall_count;              /* layout: op slots = header.ring_capacity, or 0 */
	uint64_t pysite_offset;             /* layout: struct nw_seg_pyframe[pysite_capacity]: names of the
	                                     * references in pycall, sorted by (code, instr) */
	uint32_t pysite_capacity;           /* layout */
	uint32_t pysite_count;              /* capture: entries in use */
	uint32_t python_version;            /* capture: PY_VERSION_HEX of the interpreter found (0x030b04f0
	                                     * = 3.11.4 final), 0 none or unknown */
	uint32_t python_method;             /* capture: enum nw_py_method */
	uint8_t  reserved[128 - 72];        /* zero */
};

/* ---- ext.python_method: how the Python stacks of the last capture were taken ---- */
enum nw_py_method {
	NW_PY_NONE = 0,            /* none taken (python_note says why) */
	NW_PY_DUMP_TRACEBACK = 1,  /* the interpreter's _Py_DumpTracebackThreads, parsed (CPython <= 3.12) */
	NW_PY_DEBUG_OFFSETS = 2,   /* thread and frame states walked with _Py_DebugOffsets (CPython >= 3.13) */
	NW_PY_PY_SPY = 3,          /* `py-spy dump` from outside (ncclwatch attach) */
	NW_PY_WALK_TABLE = 4,      /* thread and frame states walked with a layout ncclwatch knows
	                            * (CPython 3.11), checked against the live interpreter */
};

/* ---- pyframe.flags ---- */
#define NW_PYF_UNREAD  0x1u  /* a reference the watchdog could not name (unreadable, freed) */
#define NW_PYF_NATIVE  0x2u  /* a C function called from Python (py-spy's native frames), not bytecode */

/* A Python frame: 32 bytes. In the Python frame table (a thread's stack)
 * and in the site table (the name of a per-op reference). */
struct nw_seg_pyframe {
	uint64_t code;              /* address of the frame's code object in the process, 0 unknown
	                             * (the site table's key, with instr) */
	uint64_t instr;             /* address of its current instruction, 0 unknown */
	uint32_t file;              /* string table offset of co_filename, 0 unknown */
	uint32_t function;          /* string table offset of co_qualname (co_name before 3.11), 0 unknown */
	int32_t  line;              /* line number, 0 unknown */
	uint32_t flags;             /* NW_PYF_* */
};

/* A per-op call-site reference: 16 bytes, both zero = none. The frame's
 * code object and instruction pointer (CPython 3.11/3.12: prev_instr,
 * 3.13+: instr_ptr), read by the calling thread from its own frames. */
struct nw_seg_pycall {
	uint64_t code;
	uint64_t instr;
};

/* ---- thread.flags ---- */
#define NW_THR_WATCHDOG   0x1u  /* the watchdog thread itself */
#define NW_THR_NO_REPLY   0x2u  /* no stack: did not answer the capture signal in time (signal
                                 * blocked?), or left running by the capture (the note says why) */
#define NW_THR_TRUNCATED  0x4u  /* more frames than frame_capacity */
#define NW_THR_IN_NCCL    0x8u  /* inside a wrapped NCCL call at the capture */
/* 1.4: where the capture took the thread's registers from (at most one). */
#define NW_THR_REGS_SYSCALL 0x10u /* blocked in a system call: pc and sp from /proc/PID/task/TID/syscall;
                                   * nothing was stopped or signalled */
#define NW_THR_REGS_PTRACE  0x20u /* stopped briefly from another process (PTRACE_SEIZE, PTRACE_INTERRUPT) */
#define NW_THR_REGS_SIGNAL  0x40u /* unwound in a signal handler run by the thread itself */

/* ---- thread.py_flags (1.4) ---- */
#define NW_PYT_PYTHON    0x1u  /* a Python thread state runs on this thread (py_first/py_count valid) */
#define NW_PYT_TRUNCATED 0x2u  /* more Python frames than were kept (the innermost are) */
#define NW_PYT_GIL       0x4u  /* it held the GIL at the capture */
#define NW_PYT_MAIN      0x8u  /* the interpreter's main thread */

struct nw_seg_thread {                  /* 64 bytes */
	uint32_t tid;
	uint32_t nframes;                   /* valid frames in its frame slot */
	uint32_t flags;                     /* NW_THR_* */
	uint32_t pad0;
	char     name[NW_STACK_NAME_LEN];   /* /proc/self/task/<tid>/comm */
	/* 1.4: its Python stack, tied to it by tid (zero: none). */
	uint32_t py_first;                  /* index of its innermost frame in the Python frame table */
	uint32_t py_count;                  /* its Python frames: py_first .. py_first + py_count - 1 */
	uint32_t py_name;                   /* string table offset of its Python thread name, 0 unknown */
	uint32_t py_flags;                  /* NW_PYT_* */
	uint32_t py_native;                 /* native frames (from frame 0) that run under its innermost
	                                     * Python frame; its mixed stack is those, the Python
	                                     * frames, then the rest from the first interpreter frame */
	uint8_t  reserved[64 - 52];
};

struct nw_seg_frame {                   /* 32 bytes; frame 0 is the innermost */
	uint64_t ip;                        /* return address (or the interrupted pc for frame 0) */
	uint64_t module_offset;             /* ip - module base */
	uint64_t symbol_offset;             /* ip - symbol start, if symbol != 0 */
	uint32_t module;                    /* module table index + 1, 0 unknown */
	uint32_t symbol;                    /* string table offset of the symbol name, 0 unknown */
};

struct nw_seg_module {                  /* 256 bytes */
	uint64_t base;                      /* load address (dlpi_addr) */
	uint64_t size;                      /* extent of its PT_LOAD segments from base */
	char     path[NW_STACK_MODULE_PATH_LEN];
};

#ifndef __cplusplus
_Static_assert(sizeof(struct nw_seg_stack_header) == 128, "stack header size");
_Static_assert(sizeof(struct nw_seg_stack_ext) == 128, "stack extension size");
_Static_assert(sizeof(struct nw_seg_thread) == 64, "thread size");
_Static_assert(sizeof(struct nw_seg_frame) == 32, "frame size");
_Static_assert(sizeof(struct nw_seg_module) == 256, "module size");
_Static_assert(sizeof(struct nw_seg_pyframe) == 32, "python frame size");
_Static_assert(sizeof(struct nw_seg_pycall) == 16, "python call-site size");
#endif

#ifndef __cplusplus
_Static_assert(sizeof(struct nw_seg_header) == 8192, "header size");
_Static_assert(sizeof(struct nw_seg_comm) == 512, "comm size");
_Static_assert(sizeof(struct nw_seg_peer) == 64, "peer size");
_Static_assert(sizeof(struct nw_seg_op) == 128, "op size");
_Static_assert(offsetof(struct nw_seg_header, ring_head) % 8 == 0, "ring_head aligned");
_Static_assert(offsetof(struct nw_seg_op, commit) == 0, "commit first");
#endif

/* Bounds a reader enforces (a larger value is a malformed segment). */
#define NW_SEG_MAX_COMMS (1u << 16)
#define NW_SEG_MAX_PEERS (1u << 20)
#define NW_SEG_MAX_RING  (1u << 24)
#define NW_SEG_MAX_STACK (64ull << 20)

#endif /* NCCLWATCH_SEGMENT_H */
