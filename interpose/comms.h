/* comms: the communicator table. Private side: a uthash table keyed by
 * ncclComm_t (written only at create/destroy, under a mutex) fronted by a
 * per-thread cache, so a steady-state lookup takes no lock; entries are
 * never freed (caches may point at them). Shared side: the segment's comm
 * table and peer table (per (comm, peer) send/receive positions).
 *
 * A comm that ended (destroyed, aborted, or failed to initialize without a
 * handle) keeps its segment slot, for the post-mortem, until a new comm
 * finds every slot used: then the slot whose comm ended first is given to
 * it, with the next generation (segment.h, struct nw_seg_comm). Only when
 * every slot holds a live comm is a comm not recorded (comms_dropped). */
#ifndef NCCLWATCH_INTERPOSE_COMMS_H
#define NCCLWATCH_INTERPOSE_COMMS_H

#include "visibility.h"
#include "segment_file.h"
#include "thread.h"
#include "evpool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>
#include <nccl.h>

#define NW_PEER_NONE UINT32_MAX    /* no peer slot (table full): counters are private */

/* Per peer rank of a comm: its peer-table slot (assigned on first use with
 * a CAS) and the counters used when it has none. */
struct nw_peer_pos {
	atomic_uint slot;              /* 0 unassigned, NW_PEER_NONE, else slot index + 1 */
	uint32_t pad;
	atomic_ullong send;
	atomic_ullong recv;
};

struct nw_comm {
	ncclComm_t handle;             /* hash key; NULL until the create call returned one */
	uint32_t slot;                 /* index in the segment's comm table */
	uint32_t gen;                  /* the slot's generation for this comm (ops carry it) */
	struct nw_seg_comm *seg;
	uint64_t id;
	int32_t rank;                  /* -1 until known (Split/Shrink: after creation) */
	int32_t nranks;
	int32_t peer_capacity;         /* entries in peers[] (an upper bound of nranks) */
	int32_t blocking;
	struct nw_peer_pos *peers;
	uint64_t init_ticket1;         /* ring ticket + 1 of the COMM_INIT/SPLIT/SHRINK record */
	atomic_ullong splits;          /* ncclCommSplit calls on this comm */
	atomic_ullong shrinks;
	struct nw_comm *all_next;      /* every entry ever made, never freed: see comms.c */
	struct nw_comm *ended_next;    /* the queue of ended comms whose slot may be reused */
	int ended;                     /* queued there once (its slot is not ours after that) */
	const void *identity_wait;     /* made inside a group: the creating thread (its nw_tls), whose
	                                * outermost ncclGroupEnd learns size, rank and device; NULL none */
	_Atomic(struct nw_track *) deferred; /* end events waiting for ncclCommGetAsyncError */
	UT_hash_handle hh;
};

/* The outermost ncclGroupEnd returned: comms created inside the group
 * learn their size, rank and device now (NCCL made them only then). */
void nw_comms_group_done(void);

/* What is known about a communicator before its create call. */
struct nw_comm_spec {
	uint32_t origin;               /* enum nw_comm_origin */
	uint64_t id, parent_id;
	int32_t rank, nranks;          /* -1: learnt after creation */
	int32_t peer_capacity;         /* nranks, or the parent's for Split/Shrink */
	int32_t color, key;
	int32_t blocking;
	const char *name;              /* config.commName, or NULL */
};

extern NW_HIDDEN atomic_uint nw_comm_generation;

int nw_comms_init(void);
void nw_comms_reset_after_fork(void);

/* A new comm slot in state INIT_ENTERED: a slot never used, else the slot
 * of the comm that ended first; NULL (COMMS_FULL, comms_dropped) when
 * every slot holds a live comm. */
struct nw_comm *nw_comm_create(const struct nw_comm_spec *spec);
/* The create call returned `r` and `handle` (may be NULL). */
void nw_comm_created(struct nw_comm *c, ncclComm_t handle, ncclResult_t r);
/* ncclCommGetAsyncError reported `async` for a comm whose init was in progress. */
void nw_comm_async_result(struct nw_comm *c, ncclResult_t async);
/* Life cycle: set the state and the end time; `forget` drops the handle
 * from the table (destroy/abort: the address may be reused) and lets a
 * later comm take the slot. */
void nw_comm_ended(struct nw_comm *c, uint32_t state, int forget);

struct nw_comm *nw_comm_lookup_slow(ncclComm_t handle, uint32_t gen);

static inline struct nw_comm *nw_comm_lookup(ncclComm_t handle)
{
	uint32_t gen = atomic_load_explicit(&nw_comm_generation, memory_order_acquire);
	if (__builtin_expect(nw_tls.cache_gen == gen, 1)) {
		/* Unrolled: constant offsets from the thread pointer, no index. */
		_Static_assert(NW_THREAD_CACHE == 4, "the lookup below reads 4 entries");
		if (nw_tls.cache[0].handle == handle)
			return nw_tls.cache[0].comm;
		if (nw_tls.cache[1].handle == handle)
			return nw_tls.cache[1].comm;
		if (nw_tls.cache[2].handle == handle)
			return nw_tls.cache[2].comm;
		if (nw_tls.cache[3].handle == handle)
			return nw_tls.cache[3].comm;
	}
	return nw_comm_lookup_slow(handle, gen);
}

uint32_t nw_peer_assign(struct nw_comm *c, struct nw_peer_pos *pp, int32_t peer);

/* The counter that numbers sends (or receives) to `peer`, and the segment
 * peer entry when it has one; NULL if the peer is out of range. */
static inline atomic_ullong *nw_peer_counter(struct nw_comm *c, int32_t peer, int send,
                                             struct nw_seg_peer **seg_peer)
{
	*seg_peer = NULL;
	if (peer < 0 || peer >= c->peer_capacity || !c->peers)
		return NULL;
	struct nw_peer_pos *pp = &c->peers[peer];
	uint32_t s = atomic_load_explicit(&pp->slot, memory_order_acquire);
	if (__builtin_expect(s == 0, 0))
		s = nw_peer_assign(c, pp, peer);
	if (s == NW_PEER_NONE)
		return send ? &pp->send : &pp->recv;
	struct nw_seg_peer *sp = &nw_seg.peers[s - 1];
	*seg_peer = sp;
	return (atomic_ullong *)(send ? &sp->send_enqueued : &sp->recv_enqueued);
}

#endif
