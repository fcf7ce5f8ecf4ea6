/* hang_tp_skip: 4 ranks; a tensor-parallel comm per pair ({0,1}, {2,3},
 * split from the world by rank/2) and the world. Each step all-reduces on
 * the pair's comm, then on the world (data parallel), synchronizing each.
 * At step 2 rank 1 skips its pair's all-reduce (a branch on a flag only it
 * has): rank 0 waits in tp AllReduce #2 for it; ranks 1-3 wait in the
 * world's AllReduce #2, which rank 0 never reaches. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0), tp;
	NC(ncclCommSplit(w, h->rank / 2, h->rank, &tp, NULL));
	for (int step = 1; step <= 2; step++) {
		if (step == 2 && h->rank == 1) {
			hang_say(h, "step 2: skipping the tp all-reduce");
		} else {
			hang_allreduce(h, tp, h->stream);
			hang_sync(h->stream);
		}
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
}

int main(void) { return hang_run(4, 1, body); }
