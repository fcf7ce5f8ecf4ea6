/* hang_reduce_root: 4 ranks all-reduce then reduce to rank 0 on the world.
 * Rank 2 computes the root wrongly (1): Reduce #2 has two roots. NCCL does
 * not check: the ring's steps never pair up and every rank hangs in it. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	int root = h->rank == 2 ? 1 : 0;
	hang_say(h, "reduce to root %d", root);
	NC(ncclReduce((void *)h->buf, (void *)h->buf2, HANG_COUNT, ncclFloat, ncclSum, root, w, h->stream));
	hang_sync(h->stream);
	hang_say(h, "reduce done");
}

int main(void) { return hang_run(4, 1, body); }
