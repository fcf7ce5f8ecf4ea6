/* hang_abort_early: 4 ranks all-reduce on the world; after 2 steps rank 2
 * takes an error path: it aborts the world comm (ncclCommAbort, as an
 * exception handler does) and waits in a host-side join (a CPU barrier,
 * the launcher's "wait for everybody" at the end). Ranks 0,1,3 go on to
 * AllReduce #3 and wait in it for rank 2, which left the comm. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	int steps = h->rank == 2 ? 2 : 3;
	for (int step = 1; step <= steps; step++) {
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
	NC(ncclCommAbort(w));
	hang_say(h, "aborted the comm; joining");
	hang_cpu_barrier(h);
}

int main(void) { return hang_run(4, 1, body); }
