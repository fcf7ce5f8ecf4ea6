/* hang_split_skip: 4 ranks all-reduce on the world, then split it into
 * two halves (color rank/2). Rank 3 takes another code path around the
 * split (as a rank that skips a new_group call): it goes straight to the
 * next world all-reduce (#2). Ranks 0-2 wait inside ncclCommSplit, a
 * collective over the world, which rank 3 never entered; rank 3 waits in
 * AllReduce #2, which they never issue. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0), half;
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	hang_say(h, "step 1 done");
	if (h->rank == 3) {
		hang_say(h, "skipping the split");
	} else {
		hang_say(h, "splitting");
		NC(ncclCommSplit(w, h->rank / 2, h->rank, &half, NULL));
		hang_allreduce(h, half, h->stream);
	}
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	hang_say(h, "step 2 done");
}

int main(void) { return hang_run(4, 1, body); }
