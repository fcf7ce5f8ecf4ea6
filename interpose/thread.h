/* thread: the per-thread state of the library, one initial-exec TLS block
 * (no __tls_get_addr on the hot path): the "inside ncclwatch" guard, the
 * cached thread id, the comm lookup cache and the open group. */
#ifndef NCCLWATCH_INTERPOSE_THREAD_H
#define NCCLWATCH_INTERPOSE_THREAD_H

#include "visibility.h"
#include <stdint.h>
#include <unistd.h>
#include <nccl.h>

struct nw_comm;
struct nw_track;

#define NW_THREAD_CACHE 4          /* comm handles remembered per thread */
#define NW_GROUP_TAKEN_MAX 128     /* sequence numbers an open group can give back */
#define NW_GROUP_STREAMS 8         /* distinct streams of a group given event pairs; ops on
                                    * the others are UNTRACKED or CAPTURED (track.h) */

/* What an op of the open group took, so ncclGroupSimulateEnd can give it back. */
enum nw_taken_kind { NW_TAKEN_COLL = 0, NW_TAKEN_SEND = 1, NW_TAKEN_RECV = 2 };
struct nw_taken {
	struct nw_comm *comm;
	uint64_t ticket1;          /* ring ticket + 1 of the op's record, 0 if none */
	uint64_t stream;
	int32_t peer;
	uint32_t kind;             /* enum nw_taken_kind */
	/* Its stream was past the group's first NW_GROUP_STREAMS and captured:
	 * what nw_graph_captured returned (+1 so 0 says "not such an op"). */
	uint32_t past_graph_op1;
};

struct nw_thread {
	int inside;                /* nonzero while a real NCCL function runs under us */
	uint32_t tid;              /* gettid(), 0 until first asked */
	uint32_t cache_gen;        /* nw_comm_generation the cache is valid for */
	uint32_t cache_next;
	struct { ncclComm_t handle; struct nw_comm *comm; } cache[NW_THREAD_CACHE];
	uint32_t group_depth;      /* ncclGroupStart nesting, counted while recording */
	uint64_t group_id;         /* id of the open outermost group, 0 none */
	uint64_t group_ticket1;    /* ticket + 1 of its GROUP_START record */
	uint32_t taken_count;
	uint32_t taken_overflow;   /* ops of the open group not in taken[] */
	struct nw_taken taken[NW_GROUP_TAKEN_MAX];
	/* Completion tracking of the open group (watchdog/track.c). */
	uint64_t group_end_ticket1;         /* its GROUP_END record */
	struct nw_comm *group_nb_comm;      /* its first non-blocking comm, if any */
	uint32_t group_stream_count;
	uint32_t group_streams_past;        /* ops on streams past the first NW_GROUP_STREAMS */
	uint32_t group_track_count;
	uint64_t group_streams[NW_GROUP_STREAMS];
	struct nw_track *group_tracks[NW_GROUP_STREAMS];
	/* Streams of the open group being captured: each gets an event-record
	 * node after ncclGroupEnd (graphs.h), for its last op in its graph. */
	uint8_t group_capturing[NW_GROUP_STREAMS];
	uint32_t group_graph_op1[NW_GROUP_STREAMS];
};

extern NW_HIDDEN __thread struct nw_thread nw_tls __attribute__((tls_model("initial-exec")));

static inline uint32_t nw_thread_tid(void)
{
	if (__builtin_expect(nw_tls.tid == 0, 0))
		nw_tls.tid = (uint32_t)gettid();
	return nw_tls.tid;
}

/* Run a real NCCL function with the guard set, so NCCL calling one of its
 * own wrapped entry points (ncclBcast calls ncclBroadcast) is not recorded
 * twice. Saved and restored, never just cleared. */
#define NW_GUARDED(expr) ({ \
	int nw_saved_ = nw_tls.inside; \
	nw_tls.inside = 1; \
	__typeof__(expr) nw_r_ = (expr); \
	nw_tls.inside = nw_saved_; \
	nw_r_; })

/* Forget this thread's state (fork child: the tid changed, groups are gone). */
void nw_thread_reset(void);

#endif
