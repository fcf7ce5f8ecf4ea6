/* record_op: the record of one op, written by the thread that makes the
 * call (inlined into each wrapper of the hot path, and into record.c's
 * other records). Only record.c and the op wrappers include it. */
#ifndef NCCLWATCH_INTERPOSE_RECORD_OP_H
#define NCCLWATCH_INTERPOSE_RECORD_OP_H

#include "record.h"
#include "comms.h"
#include "hooks.h"
#include "thread.h"

/* Remember what an op of the open group took, and its stream (no-op
 * outside groups): what groups.c's group end reads. */
static inline void nw_group_took(struct nw_comm *c, uint32_t kind, int32_t peer, uint64_t ticket1,
                                 uint64_t stream)
{
	struct nw_thread *t = &nw_tls;
	if (__builtin_expect(t->group_depth == 0, 1))
		return;
	if (t->taken_count < NW_GROUP_TAKEN_MAX)
		t->taken[t->taken_count++] = (struct nw_taken){ c, ticket1, stream, peer, kind, 0 };
	else
		t->taken_overflow++;
	if (!c->blocking && !t->group_nb_comm)
		t->group_nb_comm = c;
	for (uint32_t i = 0; i < t->group_stream_count; i++)
		if (t->group_streams[i] == stream)
			return;
	if (t->group_stream_count < NW_GROUP_STREAMS)
		t->group_streams[t->group_stream_count++] = stream;
	else
		t->group_streams_past++;
}

/* Claim a ring slot and write every field of the record; publish it.
 * Inlined: the hot path's callers pass a comm and a descriptor, and the
 * tests of NULL fold away. */
static inline __attribute__((always_inline)) uint64_t write_op(struct nw_comm *c, const struct nw_op_desc *d, uint64_t seq,
                         uint64_t now, uint32_t state, uint32_t extra_flags)
{
	uint64_t t;
	struct nw_seg_op *op = nw_ring_claim(&t);
	if (!op) {
		nw_count_dropped();
		return 0;
	}
	nw_op_hooks_run(t);
	const struct nw_thread *th = &nw_tls;
	uint32_t flags = extra_flags | (d ? d->flags : 0);
	if (th->group_depth)
		flags |= NW_OPF_IN_GROUP;
	if (c && !c->blocking)
		flags |= NW_OPF_NONBLOCKING;
	op->comm_id = c ? c->id : 0;
	op->seq = seq;
	op->count = d ? d->count : 0;
	op->stream = d ? d->stream : 0;
	op->group_id = th->group_id;
	op->caller = d ? d->caller : 0;
	op->enqueue_ns = now;
	atomic_store_explicit(&op->start_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&op->end_ns, 0, memory_order_relaxed);
	op->comm_slot = c ? c->slot : UINT32_MAX;
	op->comm_gen = c ? c->gen : 0;
	op->kind = d ? d->kind : 0;
	op->datatype = d ? d->datatype : 0;
	op->group_depth = (uint8_t)(th->group_depth > 255 ? 255 : th->group_depth);
	op->redop = d ? d->redop : -1;
	op->root = d ? d->root : -1;
	op->rank = c ? __atomic_load_n(&c->rank, __ATOMIC_RELAXED) : -1;
	op->nranks = c ? __atomic_load_n(&c->nranks, __ATOMIC_RELAXED) : -1;
	op->tid = nw_thread_tid();
	op->flags = flags;
	atomic_store_explicit(&op->state, state, memory_order_relaxed);
	atomic_store_explicit(&op->result, 0, memory_order_relaxed);
	atomic_store_explicit(&op->cuda_error, 0, memory_order_relaxed);
	nw_ring_publish(op, t);
	return t + 1;
}

/* An op on a comm the library does not follow (its comm table was full):
 * no record, but outside a group it still gets its event-record node (the
 * sink: nw_graph_op_issued with no op, which adds none unless its stream
 * is being captured), so a graph captured on such a comm has the topology
 * of one captured on a followed comm and cuGraphExecUpdate between them
 * works as without the library. */
static inline void nw_op_unfollowed(struct nw_op_desc *d)
{
	if (nw_tracking_on && nw_graph_op_events && nw_tls.group_depth == 0) {
		d->captured = 1;
		d->graph_op1 = 0;
	}
}

/* The steps of nw_op_coll and nw_op_p2p: the comm's entry, the event pair,
 * the sequence number, the record. */
static inline __attribute__((always_inline)) uint64_t op_begin(ncclComm_t comm, struct nw_op_desc *d, int p2p)
{
	if (__builtin_expect(!nw_recording(), 0)) {
		nw_count_dropped();
		return 0;
	}
	struct nw_comm *c = nw_comm_lookup(comm);
	d->comm = c;
	if (__builtin_expect(!c, 0)) {
		nw_count_dropped();
		nw_op_unfollowed(d);
		return 0;
	}
	uint32_t state = nw_op_initial_state;
	struct nw_track *tr = NULL;
	if (nw_tls.group_depth == 0)
		tr = nw_track_begin(d->stream, &state);
	uint64_t now = nw_now_ns(), seq;
	int send = d->kind == NW_OP_SEND;
	struct nw_seg_comm *sc = c->seg;
	if (!p2p) {
		seq = atomic_fetch_add_explicit(&sc->coll_enqueued, 1, memory_order_relaxed) + 1;
		atomic_store_explicit(&sc->coll_enqueued_ns, now, memory_order_relaxed);
	} else {
		struct nw_seg_peer *sp;
		atomic_ullong *counter = nw_peer_counter(c, d->root, send, &sp);
		seq = counter ? atomic_fetch_add_explicit(counter, 1, memory_order_relaxed) + 1 : 0;
		if (sp)
			atomic_store_explicit(&sp->last_ns, now, memory_order_relaxed);
		atomic_fetch_add_explicit(&sc->p2p_enqueued, 1, memory_order_relaxed);
		atomic_store_explicit(&sc->p2p_enqueued_ns, now, memory_order_relaxed);
	}
	d->seq = seq;
	uint64_t t1 = write_op(c, d, seq, now, state, 0);
	nw_group_took(c, !p2p ? NW_TAKEN_COLL : send ? NW_TAKEN_SEND : NW_TAKEN_RECV, p2p ? d->root : -1, t1,
	              d->stream);
	if (__builtin_expect(state == NW_ST_CAPTURED, 0)) {
		d->captured = 1;   /* followed or not: every captured op gets its node */
		d->graph_op1 = t1 ? nw_graph_captured(d->stream, t1) : 0;
	}
	if (tr) {
		nw_track_bind(tr, t1, c, seq, d->kind, d->root);
		d->track = t1 ? tr : NULL;
	}
	return t1;
}

static inline __attribute__((always_inline)) uint64_t nw_op_coll(ncclComm_t comm, struct nw_op_desc *d)
{
	return op_begin(comm, d, 0);
}

static inline __attribute__((always_inline)) uint64_t nw_op_p2p(ncclComm_t comm, struct nw_op_desc *d)
{
	return op_begin(comm, d, 1);
}

#endif
