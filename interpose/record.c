/* record: see record.h. */
#include "record.h"

#include "groups.h"
#include "hooks.h"

uint32_t nw_op_initial_state = NW_ST_ENQUEUED;

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
		return 0;
	}
	uint32_t state = nw_op_initial_state;
	struct nw_track *tr = NULL;
	if (nw_tls.group_depth == 0)
		tr = nw_track_begin(d->stream, &state);
	uint64_t now = nw_now_ns(), seq;
	int send = d->kind == NW_OP_SEND;
	if (!p2p) {
		seq = atomic_fetch_add_explicit(&c->seg->coll_enqueued, 1, memory_order_relaxed) + 1;
		atomic_store_explicit(&c->seg->coll_enqueued_ns, now, memory_order_relaxed);
	} else {
		struct nw_seg_peer *sp;
		atomic_ullong *counter = nw_peer_counter(c, d->root, send, &sp);
		seq = counter ? atomic_fetch_add_explicit(counter, 1, memory_order_relaxed) + 1 : 0;
		if (sp)
			atomic_store_explicit(&sp->last_ns, now, memory_order_relaxed);
		atomic_fetch_add_explicit(&c->seg->p2p_enqueued, 1, memory_order_relaxed);
		atomic_store_explicit(&c->seg->p2p_enqueued_ns, now, memory_order_relaxed);
	}
	d->seq = seq;
	uint64_t t1 = write_op(c, d, seq, now, state, 0);
	nw_group_took(c, !p2p ? NW_TAKEN_COLL : send ? NW_TAKEN_SEND : NW_TAKEN_RECV, p2p ? d->root : -1, t1,
	              d->stream);
	if (__builtin_expect(state == NW_ST_CAPTURED, 0) && t1)
		nw_graph_captured(d->stream, t1);
	if (tr) {
		nw_track_bind(tr, t1, c, seq, d->kind, d->root);
		d->track = t1 ? tr : NULL;
	}
	return t1;
}

uint64_t nw_op_coll(ncclComm_t comm, struct nw_op_desc *d)
{
	return op_begin(comm, d, 0);
}

uint64_t nw_op_p2p(ncclComm_t comm, struct nw_op_desc *d)
{
	return op_begin(comm, d, 1);
}

void nw_op_after(const struct nw_op_desc *d, uint64_t ticket1, ncclResult_t r)
{
	if (r != ncclSuccess)
		nw_ring_set_result(ticket1, r);
	if (d->track)
		nw_track_end(d->track, r, d->comm);
}

uint64_t nw_record_comm_event(struct nw_comm *c, uint16_t kind, uint32_t state,
                              const struct nw_op_desc *d, uint64_t caller)
{
	struct nw_op_desc local = { .redop = -1, .root = -1 };
	if (d)
		local = *d;
	local.kind = kind;
	local.caller = caller;
	return write_op(c, &local, 0, nw_now_ns(), state, 0);
}

uint64_t nw_record_graph_launch(const struct nw_graph_exec *e, uint64_t exec, uint64_t replay, uint64_t stream,
                                uint64_t caller, uint32_t state)
{
	uint64_t t;
	struct nw_seg_op *op = nw_ring_claim(&t);
	if (!op) {
		nw_count_dropped();
		return 0;
	}
	nw_op_hooks_run(t);
	const struct nw_graph_op *f = &e->first;
	op->comm_id = f->comm_id;
	op->seq = replay;
	op->count = e->nops;
	op->stream = stream;
	op->group_id = exec;
	op->caller = caller;
	op->enqueue_ns = nw_now_ns();
	atomic_store_explicit(&op->start_ns, 0, memory_order_relaxed);
	atomic_store_explicit(&op->end_ns, 0, memory_order_relaxed);
	op->comm_slot = f->comm_slot;
	op->comm_gen = f->comm_gen;
	op->kind = NW_OP_GRAPH_LAUNCH;
	op->datatype = f->datatype;
	op->group_depth = 0;
	op->redop = f->kind;
	op->root = (int32_t)(f->seq & 0x7fffffff);   /* 2.2: the graph's identity on every rank */
	op->rank = f->rank;
	op->nranks = f->nranks;
	op->tid = nw_thread_tid();
	op->flags = 0;
	atomic_store_explicit(&op->state, state, memory_order_relaxed);
	atomic_store_explicit(&op->result, 0, memory_order_relaxed);
	atomic_store_explicit(&op->cuda_error, 0, memory_order_relaxed);
	nw_ring_publish(op, t);
	atomic_fetch_add_explicit(&nw_seg.hdr->graph_launches, 1, memory_order_relaxed);
	return t + 1;
}

uint64_t nw_record_group(uint16_t kind, uint64_t gid, uint32_t depth, uint32_t state, uint64_t caller)
{
	struct nw_op_desc d = { .redop = -1, .root = -1, .kind = kind, .caller = caller };
	(void)depth;
	return write_op(NULL, &d, gid, nw_now_ns(), state, NW_OPF_IN_GROUP);
}
