/* hang_allgather_count: 4 ranks all-reduce, then all-gather HANG_COUNT/4
 * floats each, except rank 1 which gathers HANG_COUNT (its shard size
 * computed from another config). The three others need fewer chunks than
 * rank 1 waits for: they complete AllGather #2 and go on to a host-side
 * join (a CPU barrier, as a checkpoint that waits for every rank); rank 1
 * waits in #2 for chunks nobody sends. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	size_t count = h->rank == 1 ? HANG_COUNT : HANG_COUNT / 4;
	hang_say(h, "all-gather %zu", count);
	NC(ncclAllGather((void *)h->buf, (void *)h->buf2, count, ncclFloat, w, h->stream));
	hang_sync(h->stream);
	hang_say(h, "all-gather done; joining");
	hang_cpu_barrier(h);
}

int main(void) { return hang_run(4, 1, body); }
