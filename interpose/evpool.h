/* evpool: CUDA event pairs, pooled per context.
 *
 * A track is one (start, end) pair of events created with
 * CU_EVENT_DISABLE_TIMING in one context, plus what it measures. Tracks are
 * never destroyed: they go back to their context's pool once both events
 * completed, and the hot path takes them again. The pool is a lock-free
 * stack that tracks are pushed onto one by one and that a calling thread
 * empties at once (atomic exchange) into its own per-thread cache; both
 * operations are immune to ABA, so no lock and no tagged pointer are
 * needed. Who gives a track back is whoever advances it
 * (watchdog/progress.h): the watchdog's poll, or, when a thread finds both
 * its cache and the pool empty, that thread itself, which reaps the
 * oldest pairs in flight that finished (their records brought up to date
 * first, as the poll would). Only then, when the reap left fewer than half
 * a batch, are events created: at the first op on a context, and while the
 * number of ops in flight grows; never in steady state, however far ops
 * outrun the watchdog's poll. The common case (a track in the cache or the
 * pool) takes no lock and makes no system call. */
#ifndef NCCLWATCH_INTERPOSE_EVPOOL_H
#define NCCLWATCH_INTERPOSE_EVPOOL_H

#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>

struct nw_comm;
struct nw_graph_opev;
struct nw_evpool;

/* A single op as the interposer knew it when it issued the op: the
 * watchdog moves its comm's positions with these, never with what the
 * op's ring slot holds later (the slot may have been reused). */
struct nw_op_ident {
	uint64_t seq;                 /* collective or per-peer sequence number, 0 none */
	uint32_t comm_slot;           /* comm table slot, UINT32_MAX none */
	uint16_t kind;                /* enum nw_op_kind */
	uint16_t pad;
	int32_t peer;                 /* SEND/RECV: the peer rank */
	uint32_t comm_gen;            /* the comm slot's generation when the op was issued */
};

struct nw_track {
	struct nw_track *next;        /* in exactly one list: pool, cache, submitted, deferred, pending */
	struct nw_evpool *pool;
	CUevent start, end;
	CUstream stream;              /* where the pair is recorded */
	uint64_t ticket1;             /* single op: its record; group: the GROUP_END record */
	uint64_t first_ticket1;       /* group: the GROUP_START record (ops lie between the two) */
	uint64_t group_id;            /* 0: a single op */
	struct nw_op_ident op;        /* single op: what it is */
	struct nw_graph_opev *opev;   /* a graph launch: its ops' events (a reference), NULL none */
	uint32_t opdone;              /* watchdog: ops of that launch seen completed */
	uint32_t started;             /* watchdog: the start event completed */
	CUresult end_error;           /* cuEventRecord of the end event failed with this */
};

struct nw_evpool {
	CUcontext ctx;
	_Atomic(struct nw_track *) free;
	_Atomic(CUevent) sink;        /* recorded by graph nodes nobody reads (graphs.h); never destroyed */
};

/* The pool of context `ctx` (made on first use); NULL if the table is full. */
struct nw_evpool *nw_evpool_for(CUcontext ctx);

/* A track of `pool` for the calling thread, whose current context must be
 * the pool's; NULL if events cannot be created. */
struct nw_track *nw_track_take(struct nw_evpool *pool);

/* Give a track the calling thread took but did not use back to its cache. */
void nw_track_untake(struct nw_track *t);

/* The watchdog gives a finished track back to its pool. */
void nw_track_give_back(struct nw_track *t);

/* The pool's sink event (made at first use, the current context must be
 * the pool's): what an event-record node whose event nobody reads
 * records. Never given back, so no node of a live graph can ever record
 * an event that tracks something else. NULL if it cannot be created. */
CUevent nw_evpool_sink(struct nw_evpool *pool);

/* Fork child: the parent's contexts and events are gone. */
void nw_evpool_reset_after_fork(void);

/* A pooled track whose end event was just recorded on capturing stream s
 * with CU_EVENT_RECORD_EXTERNAL (an event-record node in the graph being
 * built), taken from the pool of s's context; NULL if that failed (nothing
 * added then). graphs.c keeps it. */
struct nw_track *nw_track_external(CUstream s);

/* The same node recording s's context's sink event: 1 added, 0 not. */
int nw_track_sink(CUstream s);

#endif
