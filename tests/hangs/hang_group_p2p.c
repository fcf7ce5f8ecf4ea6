/* hang_group_p2p: 4 ranks pass a buffer around a ring on the world comm,
 * each step one group { send to rank+1, recv from rank-1 }, then an
 * all-reduce. At step 2 rank 2 computes its successor wrongly and sends to
 * rank 0: rank 3 waits for a receive from rank 2 that is never sent, rank
 * 2's send to rank 0 is never received; ranks 0 and 1 finish their groups
 * and wait in the all-reduce. The group is one launch: rank 2's receive
 * completes, its send does not. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	int n = h->nranks;
	for (int step = 1; step <= 2; step++) {
		int next = (h->rank + 1) % n, prev = (h->rank + n - 1) % n;
		if (step == 2 && h->rank == 2) {
			next = 0;
			hang_say(h, "step 2: sending to rank 0 instead of 3");
		}
		NC(ncclGroupStart());
		NC(ncclSend((void *)h->buf, HANG_COUNT, ncclFloat, next, w, h->stream));
		NC(ncclRecv((void *)h->buf2, HANG_COUNT, ncclFloat, prev, w, h->stream));
		NC(ncclGroupEnd());
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
}

int main(void) { return hang_run(4, 1, body); }
