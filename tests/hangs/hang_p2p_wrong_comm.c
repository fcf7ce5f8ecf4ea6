/* hang_p2p_wrong_comm: 4 ranks, a pipeline comm "pp" and the world comm.
 * Each step passes activations forward on pp (0 -> 1 -> 2 -> 3: receive
 * from the previous stage, then send to the next), synchronized, then
 * all-reduces on the world. At step 2 rank 2 posts its receive from rank 1
 * on the world comm instead of pp (the wrong process group passed to
 * recv): rank 1's send #2 to rank 2 on pp is never received, rank 2's
 * receive #1 from rank 1 on the world is never sent; rank 3 waits for its
 * receive from rank 2, rank 0 in the world's all-reduce. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0), pp = hang_world(h, 1);
	for (int step = 1; step <= 2; step++) {
		if (h->rank > 0) {
			ncclComm_t c = step == 2 && h->rank == 2 ? w : pp;
			if (c == w)
				hang_say(h, "step 2: receiving from rank 1 on the world comm");
			NC(ncclRecv((void *)h->buf2, HANG_COUNT, ncclFloat, h->rank - 1, c, h->stream));
			hang_sync(h->stream);
		}
		if (h->rank < h->nranks - 1) {
			NC(ncclSend((void *)h->buf, HANG_COUNT, ncclFloat, h->rank + 1, pp, h->stream));
			hang_sync(h->stream);
		}
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
}

int main(void) { return hang_run(4, 2, body); }
