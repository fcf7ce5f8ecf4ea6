/* hang_init_nranks: 4 ranks create the world comm; rank 3 reads the world
 * size from a stale config and passes nranks 5. NCCL's bootstrap root
 * drops the rendezvous on "mismatch in rank count" without an error:
 * every rank stays inside ncclCommInitRank for ever. */
#include "hang.h"

static void body(struct hang_rank *h)
{
	int nranks = h->rank == 3 ? 5 : h->nranks;
	ncclComm_t w;
	hang_say(h, "init with nranks %d", nranks);
	NC(ncclCommInitRank(&w, nranks, h->id[0], h->rank));
	hang_allreduce(h, w, h->stream);
	hang_sync(h->stream);
	hang_say(h, "step 1 done");
}

int main(void) { return hang_run(4, 1, body); }
