/* hang_init_extra: 4 ranks all-reduce on the world; then rank 3 alone
 * creates a second comm over all 4 ranks (a new_group call only its code
 * path makes) with an id rank 0 made up front; ranks 0-2 go on to the
 * world's AllReduce #2. Rank 3 waits inside ncclCommInitRank for ranks
 * that never enter it; they wait in AllReduce #2 for rank 3. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	hang_say(h, "step 1 done");
	if (h->rank == 3) {
		ncclComm_t extra;
		hang_say(h, "creating an extra comm");
		NC(ncclCommInitRank(&extra, h->nranks, h->id[1], h->rank));
	}
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	hang_say(h, "step 2 done");
}

int main(void) { return hang_run(4, 2, body); }
