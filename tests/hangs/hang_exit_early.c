/* hang_exit_early: 4 ranks all-reduce on the world; rank 3 believes
 * training is over after 2 steps: it finalizes and destroys the world comm
 * and exits with status 0, as a clean end. Ranks 0-2 go on to AllReduce #3
 * and wait in it for ever. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	int steps = h->rank == 3 ? 2 : 3;
	for (int step = 1; step <= steps; step++) {
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
	NC(ncclCommFinalize(w));
	NC(ncclCommDestroy(w));
	hang_say(h, "destroyed the comm");
}

int main(void) { return hang_run(4, 1, body); }
