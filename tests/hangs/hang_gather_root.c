/* hang_gather_root: 4 ranks all-reduce, then gather to rank 0 on the world
 * (ncclGather, NCCL 2.28). Rank 3 gathers to rank 3. Every rank hangs in
 * Gather #2: no step of it pairs up. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	int root = h->rank == 3 ? 3 : 0;
	hang_say(h, "gather to root %d", root);
	NC(ncclGather((void *)h->buf, (void *)h->buf2, HANG_COUNT / 4, ncclFloat, root, w, h->stream));
	hang_sync(h->stream);
	hang_say(h, "gather done");
}

int main(void) { return hang_run(4, 1, body); }
