/* groups: see groups.h. */
#include "groups.h"

#include "comms.h"
#include "log.h"
#include "record.h"
#include "ring.h"
#include "track.h"

#include <stdatomic.h>

static atomic_ullong nw_group_counter;

uint64_t nw_group_enter(uint64_t caller)
{
	struct nw_thread *t = &nw_tls;
	if (t->group_depth++ > 0)
		return 0;
	t->group_id = atomic_fetch_add_explicit(&nw_group_counter, 1, memory_order_relaxed) + 1;
	t->taken_count = 0;
	t->taken_overflow = 0;
	t->group_stream_count = 0;
	t->group_streams_past = 0;
	t->group_track_count = 0;
	t->group_nb_comm = NULL;
	t->group_end_ticket1 = 0;
	t->group_ticket1 = nw_record_group(NW_OP_GROUP_START, t->group_id, 1, NW_ST_ENQUEUED, caller);
	return t->group_ticket1;
}

void nw_group_entered(uint64_t ticket1, ncclResult_t r)
{
	struct nw_thread *t = &nw_tls;
	nw_ring_finish(ticket1, r, r == ncclSuccess ? NW_ST_INIT_DONE : NW_ST_INIT_FAILED);
	if (r != ncclSuccess && t->group_depth > 0 && --t->group_depth == 0)
		t->group_id = 0;               /* NCCL did not open the group */
}

uint64_t nw_group_leave(uint64_t caller, int simulated)
{
	struct nw_thread *t = &nw_tls;
	if (t->group_depth != 1)
		return 0;
	/* The outermost end launches the group: a blocking call, INIT_ENTERED
	 * until it returns, with the group's event pairs around it. */
	t->group_end_ticket1 = nw_record_group(NW_OP_GROUP_END, t->group_id, 1,
	                                       simulated ? NW_ST_DISCARDED : NW_ST_INIT_ENTERED, caller);
	if (!simulated)
		nw_track_group_begin();
	return t->group_end_ticket1;
}

/* Give back what the discarded group's ops took, newest first. */
static void give_back(struct nw_thread *t)
{
	for (uint32_t i = t->taken_count; i-- > 0;) {
		struct nw_taken *k = &t->taken[i];
		struct nw_comm *c = k->comm;
		if (k->kind == NW_TAKEN_COLL) {
			atomic_fetch_sub_explicit(&c->seg->coll_enqueued, 1, memory_order_relaxed);
		} else {
			struct nw_seg_peer *sp;
			atomic_ullong *counter = nw_peer_counter(c, k->peer, k->kind == NW_TAKEN_SEND, &sp);
			if (counter)
				atomic_fetch_sub_explicit(counter, 1, memory_order_relaxed);
			atomic_fetch_sub_explicit(&c->seg->p2p_enqueued, 1, memory_order_relaxed);
		}
		nw_ring_set_state(k->ticket1, NW_ST_DISCARDED);
	}
	if (t->taken_overflow)
		nw_log("a simulated group held more than %d ops: %u sequence numbers were not given back",
		       NW_GROUP_TAKEN_MAX, t->taken_overflow);
}

void nw_group_left(uint64_t ticket1, ncclResult_t r, int simulated)
{
	struct nw_thread *t = &nw_tls;
	if (t->group_depth == 0)
		return;                        /* unbalanced end, or the group began unrecorded */
	if (--t->group_depth > 0)
		return;
	if (simulated) {
		nw_ring_finish(ticket1, r, 0);
		give_back(t);
	} else {
		nw_track_group_end(r);
		nw_ring_finish(ticket1, r, r == ncclSuccess || r == ncclInProgress ? NW_ST_INIT_DONE : NW_ST_INIT_FAILED);
		if (r == ncclSuccess)
			nw_comms_group_done();
	}
	t->group_stream_count = 0;
	t->group_streams_past = 0;
	t->group_track_count = 0;
	t->group_nb_comm = NULL;
	t->group_end_ticket1 = 0;
	t->group_id = 0;
	t->group_ticket1 = 0;
	t->taken_count = 0;
	t->taken_overflow = 0;
}
