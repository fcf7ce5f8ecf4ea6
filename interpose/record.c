/* record: see record.h. */
#include "record.h"
#include "record_op.h"

uint32_t nw_op_initial_state = NW_ST_ENQUEUED;

void nw_op_after(struct nw_track *track, struct nw_comm *comm, uint64_t ticket1, ncclResult_t r)
{
	if (r != ncclSuccess)
		nw_ring_set_result(ticket1, r);
	if (track)
		nw_track_end(track, r, comm);
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
