/* The simulated NCCL's internal interface: the communicator object, the
 * shared-memory layout every rank of a communicator maps, the operation
 * records the stream work items execute, and the helpers the files of
 * tests/sim/nccl/ offer each other. Nothing here is exported.
 */
#ifndef NCCLSIM_SIM_NCCL_H
#define NCCLSIM_SIM_NCCL_H

/* Every nccl.h declaration gets default visibility, so the definitions in
 * this library are exported (the library is built -fvisibility=hidden). */
#pragma GCC visibility push(default)
#include <nccl.h>
#pragma GCC visibility pop
#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Strong pnccl<Name> plus weak nccl<Name>, like the real library. */
#define NCCLSIM_ALIAS(name) extern __typeof(p##name) name __attribute__((weak, alias("p" #name)))

/* ---- configuration read once from the environment (env.c) ---- */
struct sim_fault {
	enum { FAULT_STALL, FAULT_GPUFAULT, FAULT_SLOW, FAULT_INITSTALL } kind;
	int rank;              /* -1: any rank */
	uint64_t seq;          /* 0: any */
	long ms;
	char comm_prefix[17];  /* "" : any communicator */
};
struct sim_env {
	int null_mode;         /* NCCLSIM_NULL=1 */
	int debug;             /* NCCLSIM_DEBUG=1 */
	char dir[4096];        /* NCCLSIM_DIR */
	int nfaults;
	struct sim_fault faults[32];
	uint64_t buffsize;     /* NCCL_BUFFSIZE: a connection's buffer (p2p eager limit) */
	int p2p_eager;         /* NCCL_PROTO leaves LL or LL128: small sends go eagerly */
};
extern struct sim_env sim_env;
void sim_env_load(void);   /* idempotent, thread-safe */
#define SIM_NULL() (__builtin_expect(sim_env.null_mode, 0))
/* The first matching fault of `kind` for (comm key, rank, seq), or NULL. */
const struct sim_fault *sim_fault_find(int kind, uint64_t key, int rank, uint64_t seq);

void sim_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Remember `msg` for ncclGetLastError; returns `res` for convenience. */
ncclResult_t sim_error(ncclResult_t res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

uint64_t sim_fnv1a(uint64_t h, const void *data, size_t len);
#define SIM_FNV_OFFSET 0xcbf29ce484222325ull

/* ---- shared memory (shm.c) ---- */
/* Staging areas: collectives move data through one slot per rank, chunk by
 * chunk; each ordered pair of ranks has a ring of chunk slots for
 * send/recv, the receiver's buffer of the connection: NCCL_BUFFSIZE of the
 * rank that created the file (default 4 MiB), in chunks (progress.c). */
#define SIM_COLL_SLOT (64 * 1024)
#define SIM_P2P_SLOT  (32 * 1024)
#define SIM_BUFFSIZE_DEFAULT (4ull << 20)    /* NCCL's DEFAULT_BUFFSIZE */
#define SIM_BUFFSIZE_MAX (256ull << 20)      /* larger settings are clamped */
#define SIM_MAX_RANKS 512
#define SIM_SHM_MAGIC 0x6e63636c73696d35ull /* "ncclsim5" */

/* ---- transport selection (transport.c) ---- */
enum { SIM_TR_P2P = 1, SIM_TR_SHM, SIM_TR_NET };
struct sim_transport_env {      /* a rank's settings, read at its first init */
	int32_t p2p_disable;    /* NCCL_P2P_DISABLE */
	int32_t p2p_level;      /* NCCL_P2P_LEVEL as a path type, -1 unset */
	int32_t shm_disable;    /* NCCL_SHM_DISABLE */
	int32_t transport;      /* SIM_TR_*: what this rank uses to its peers */
};
void sim_transport_publish(struct sim_transport_env *out);
const char *sim_transport_name(int transport);

struct sim_coll_desc {          /* what a rank issued at one position */
	uint64_t seq;
	int32_t kind, dtype, redop, root;
	uint64_t count;
};
/* What NCCL's RAS thread reads of one rank's ncclComm when it answers a
 * client (src/ras/collectives.cc, rasCollCommsInit): written only by
 * the rank's own process, read by whichever process answers (ras.c). */
#define SIM_RAS_NFUNCS 5        /* NCCL_NUM_FUNCTIONS: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce */
struct sim_ras_rank {
	uint64_t comm_hash;     /* NCCL's comm->commHash (not our key) */
	uint64_t coll_counts[SIM_RAS_NFUNCS]; /* comm->seqNumber[]: at launch, graphs not counted */
	int32_t init_state;     /* comm->initState */
	int32_t async_error;    /* comm->asyncResult */
	int32_t finalize_called, destroy_flag, abort_flag;
	int32_t pad;
};
struct sim_rank_shared {        /* written only by its rank */
	int32_t pid;
	int32_t joined;
	int32_t left;
	int32_t device;
	uint64_t phase;         /* collective progress, see progress.c */
	uint64_t coll_done_seq; /* last collective this rank completed */
	struct sim_coll_desc desc;
	uint64_t split_no;      /* last split/exchange posted */
	int32_t split_color, split_key;
	uint64_t split_done;
	struct sim_transport_env transport;  /* published at join */
	struct sim_ras_rank ras;             /* what NCCL's RAS reads (ras.c) */
};
struct sim_p2p_shared {         /* channel src -> dst */
	uint64_t sent_chunks;   /* written by src */
	uint64_t acked_chunks;  /* written by dst */
	uint64_t send_msgs_done;
	uint64_t recv_msgs_done;
	uint64_t pad;
};
struct sim_comm_shared {
	uint64_t magic;
	uint64_t key;
	int32_t nranks;
	int32_t joined_count;
	int32_t left_count;
	int32_t p2p_ring;       /* chunk slots of each pair's ring */
	uint64_t total_size;
	uint64_t p2p_buffsize;  /* the pairs' buffer in bytes: sends up to it go eagerly */
	/* then: rank[nranks], p2p[nranks*nranks], coll slots, p2p rings */
};
struct sim_shm_view {           /* pointers into one mapping */
	struct sim_comm_shared *hdr;
	struct sim_rank_shared *rank;
	struct sim_p2p_shared *p2p;
	unsigned char *coll_slots;
	unsigned char *p2p_slots;
	size_t p2p_stride;      /* bytes of one pair's ring: p2p_ring slots, then their lengths */
	int p2p_ring;
	size_t size;
};
#define SIM_P2P(v, n, src, dst) (&(v)->p2p[(size_t)(src) * (n) + (dst)])
#define SIM_COLL_SLOT_PTR(v, r) ((v)->coll_slots + (size_t)(r) * SIM_COLL_SLOT)
#define SIM_P2P_RING(v, n, src, dst) ((v)->p2p_slots + ((size_t)(src) * (n) + (dst)) * (v)->p2p_stride)
/* Chunk number k of the pair's stream: its slot, and its length in bytes. */
#define SIM_P2P_SLOT_PTR(v, n, src, dst, k) (SIM_P2P_RING(v, n, src, dst) + (size_t)((k) % (uint64_t)(v)->p2p_ring) * SIM_P2P_SLOT)
#define SIM_P2P_LEN(v, n, src, dst, k) \
	(((uint32_t *)(SIM_P2P_RING(v, n, src, dst) + (size_t)(v)->p2p_ring * SIM_P2P_SLOT))[(k) % (uint64_t)(v)->p2p_ring])

/* Map (creating or replacing a stale one) the file of communicator `key`
 * and register `rank` in it. Does not wait for the others. */
ncclResult_t sim_shm_join(uint64_t key, int nranks, int rank, int device, struct sim_shm_view *view);
/* This rank leaves; the last rank to leave removes the file. Unmaps. */
void sim_shm_leave(uint64_t key, int rank, struct sim_shm_view *view);

/* Read-only view of a communicator file's header and rank array (for the
 * RAS endpoint): 0, or -1 if `path` is not a usable communicator file. */
int sim_shm_map_ranks(const char *path, struct sim_shm_view *v);
void sim_shm_unmap_ranks(struct sim_shm_view *v);

/* The global doorbell: every state change in any shared file rings it;
 * every waiter sleeps on it (a futex in NCCLSIM_DIR/bell). */
uint32_t sim_bell_read(void);
void sim_bell_ring(void);
/* Sleep until the bell changes from `seen` (or `ms` elapse if ms > 0). */
void sim_bell_wait(uint32_t seen, long ms);
/* Block the calling thread for good (an injected stall nobody can undo). */
void sim_block_forever(void) __attribute__((noreturn));

/* ---- communicators (comm.c) ---- */
#define SIM_COMM_MAGIC 0x436f6d6d53696d21ull
struct sim_premul {
	int used;
	ncclDataType_t dtype;
	ncclScalarResidence_t residence;
	unsigned char value[8];  /* host-immediate scalar */
	const void *devptr;      /* device scalar, read when the op runs */
};
struct ncclComm {
	uint64_t magic;
	int rank, nranks, device;
	uint64_t key;
	char keyhex[17];
	int blocking;
	int null_dummy;
	char name[64];
	struct sim_shm_view shm;
	int shm_joined;

	int async_error;           /* ncclResult_t, atomic */
	int aborted;               /* atomic: pending and later work fails */
	int revoked;               /* atomic */
	int user_released;         /* Destroy/Abort called */
	int refs;                  /* atomic: user + queued ops */

	pthread_mutex_t mu;        /* guards what follows */
	pthread_cond_t cv;
	int inflight;              /* queued ops not yet finished */
	uint64_t next_coll_seq;    /* assigned at launch */
	uint64_t coll_steps;       /* atomic: collective steps done, the stream's position (progress.c) */
	uint64_t *next_send, *next_recv; /* per peer, assigned at launch */
	uint64_t split_count, shrink_count;
	struct sim_premul premul[64];
	void *bg_job;              /* last non-blocking background job */
	uint64_t ras_hash;         /* NCCL's commHash of this comm (ras.c) */
	int ras_split_count;       /* NCCL's comm->splitCount: splits and shrinks */
	int ras_ready;             /* atomic: shm.rank[rank].ras is published (ras.c) */
};
int sim_comm_valid(ncclComm_t comm);
void sim_comm_ref(ncclComm_t comm);
void sim_comm_unref(ncclComm_t comm);
/* Wait (blocking) until every rank joined the comm's shared file. */
ncclResult_t sim_comm_wait_joined(ncclComm_t comm);
/* Wait for the previous background job of a non-blocking comm. */
void sim_comm_wait_job(ncclComm_t comm);
/* Run fn(arg) on a detached thread; while it runs the comms' async error
 * is ncclInProgress, afterwards fn's result. */
void sim_comm_start_job(ncclComm_t *comms, int ncomms, ncclResult_t (*fn)(void *), void *arg);
/* Can this rank's connection to `peer` (-1: the ring of a collective) ever
 * complete? Not when the two ends selected different transports. */
int sim_transport_connects(ncclComm_t comm, int peer);

/* ---- datatypes and reductions (datatype.c) ---- */
size_t sim_dtype_size(ncclDataType_t t);
double sim_load(ncclDataType_t t, const void *p, size_t i);
void sim_store(ncclDataType_t t, void *p, size_t i, double v);
/* A resolved reduction: a built-in op, or PreMulSum with its scalar. */
struct sim_redop {
	int base;                  /* ncclSum..ncclAvg, or ncclNumOps for PreMulSum */
	ncclDataType_t dtype;
	unsigned char scalar[8];
	const void *scalar_devptr;
};
/* out[i] = reduce over r < nin of in[r][i], in rank order, for n elements. */
void sim_reduce(const struct sim_redop *op, int nranks, ncclDataType_t t,
                void *out, const void *const *in, size_t n);

/* ---- operations, groups, launch (ops.c) and execution (progress.c) ---- */
enum sim_op_kind {
	OP_ALLREDUCE = 1, OP_BROADCAST, OP_REDUCE, OP_ALLGATHER, OP_REDUCESCATTER,
	OP_ALLTOALL, OP_GATHER, OP_SCATTER, OP_SEND, OP_RECV
};
struct sim_op {
	enum sim_op_kind kind;
	ncclComm_t comm;
	CUstream stream;
	const void *sendbuff;
	void *recvbuff;
	size_t count;
	ncclDataType_t dtype;
	int redop_handle;          /* as the user passed it (for the desc) */
	struct sim_redop redop;
	int root;                  /* root, or peer for send/recv */
	uint64_t seq;              /* collective seq, or per-peer message number */
	/* execution state */
	uint64_t steps, step;
	uint64_t base;             /* collectives: the comm's stream position at its first step */
	int state;
	int eager;                 /* send: completes once buffered at the peer */
	int done, failed;
};
struct sim_unit {                  /* one stream work item: ops run as one */
	int nops;
	int is_template;           /* captured into a graph and replayed: never runs itself */
	uint64_t replays;          /* as a template: runs made from it */
	int captured;              /* captured into a graph: its ops are numbered (and counted
	                            * in flight) by each run made from it, at launch */
	struct sim_op ops[];
};
/* The op's place among its comm's ops (seq), counted in flight. */
void sim_op_number(struct sim_op *op);
CUresult sim_unit_run(void *unit);
void sim_unit_drop(void *unit);
/* A run of a captured unit, for one launch of its graph (sim_stream.h):
 * the first run keeps the numbers the capture took, later ones are
 * numbered at the launch like fresh ops. */
void *sim_unit_replay(void *unit);

/* ---- the RAS endpoint (ras.c) ---- */
/* NCCL's getHash() (src/include/bitops.h) of bytes, and the hash of a
 * child comm: digest of (parent commHash, splitCount, color). */
uint64_t sim_ras_hash(const void *bytes, size_t len);
uint64_t sim_ras_child_hash(uint64_t parent, int split_count, int color);
/* This rank's comm joined its shared file: publish what RAS reports and
 * start the process's RAS thread (once; unless NCCL_RAS_ENABLE=0). */
void sim_ras_comm_join(ncclComm_t comm);
/* The comm's init finished with `state` (ncclSuccess or an error). */
void sim_ras_init_state(ncclComm_t comm, ncclResult_t state);
/* An op of `kind` was launched (numbered and queued, not captured). */
void sim_ras_count_launch(ncclComm_t comm, int kind);
void sim_ras_async_error(ncclComm_t comm, ncclResult_t err);
void sim_ras_flag(ncclComm_t comm, int finalize, int destroy, int abort);

#endif /* NCCLSIM_SIM_NCCL_H */
