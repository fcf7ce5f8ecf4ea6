/* hang_extra_coll: 4 ranks do 3 all-reduces on the world, then a
 * host-side join (a CPU barrier: all ranks must arrive). Rank 2 issues one
 * all-reduce more (#4) before the join (a loop bound off by one on that
 * rank): it waits in #4, which the others, waiting in the join, never
 * issue. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	int steps = h->rank == 2 ? 4 : 3;
	for (int step = 1; step <= steps; step++) {
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
	hang_say(h, "joining");
	hang_cpu_barrier(h);
}

int main(void) { return hang_run(4, 1, body); }
