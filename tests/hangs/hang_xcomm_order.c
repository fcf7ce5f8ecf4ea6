/* hang_xcomm_order: 4 ranks, two communicators A and B (each its own
 * stream). Each step all-reduces on A then on B, waiting for each result
 * (as a framework that synchronizes on every tensor does). At step 3 rank 3
 * goes through the two in the other order: it waits in B #3, which ranks
 * 0-2 never issue (they wait in A #3, which rank 3 never issues). Rank 3's
 * code path differs: the three others agree. With argv[1] = N, N ranks
 * (the last one reverses): with 2, one against one, nobody can tell. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t a = hang_world(h, 0), b = hang_world(h, 1);
	for (int step = 1; step <= 3; step++) {
		int reversed = step == 3 && h->rank == h->nranks - 1;
		if (step == 3)
			hang_say(h, "step 3: %s", reversed ? "B before A" : "A before B");
		ncclComm_t first = reversed ? b : a, second = reversed ? a : b;
		CUstream s1 = reversed ? h->stream2 : h->stream, s2 = reversed ? h->stream : h->stream2;
		hang_allreduce(h, first, s1);
		hang_sync(s1);
		hang_allreduce(h, second, s2);
		hang_sync(s2);
		hang_say(h, "step %d done", step);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (n < 2 || n > 8) {
		fprintf(stderr, "usage: hang-xcomm-order [NRANKS 2..8]\n");
		return 2;
	}
	return hang_run(n, 2, body);
}
