/* ring: the out-of-line part of ring.h. */
#include "ring.h"

void nw_ring_finish(uint64_t ticket1, int32_t result, uint32_t state)
{
	struct nw_seg_op *op = nw_ring_hold(ticket1);
	if (!op)
		return;
	atomic_store_explicit(&op->result, result, memory_order_relaxed);
	atomic_store_explicit(&op->end_ns, nw_now_ns(), memory_order_relaxed);
	if (state)
		atomic_store_explicit(&op->state, state, memory_order_relaxed);
	nw_ring_release(op);
}

void nw_ring_set_state(uint64_t ticket1, uint32_t state)
{
	struct nw_seg_op *op = nw_ring_hold(ticket1);
	if (!op)
		return;
	atomic_store_explicit(&op->state, state, memory_order_relaxed);
	nw_ring_release(op);
}
