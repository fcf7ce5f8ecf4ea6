/* hang_thread_ranks: 2 processes drive 2 ranks each (4 ranks of comms A
 * and B, both made with two ncclCommInitRank in a group), one thread per
 * rank. Each thread all-reduces on A then on B, synchronizing each. At
 * step 2 the second thread of process 1 (rank 3) goes B before A: ranks
 * 0-2 wait in A #2, rank 3 in B #2. */
#include "hang.h"

struct thread_arg { struct hang_rank *h; int rank; CUcontext ctx; ncclComm_t a, b; CUstream s1, s2; };

static void *drive(void *p)
{
	struct thread_arg *t = p;
	CU(cuCtxSetCurrent(t->ctx));
	for (int step = 1; step <= 2; step++) {
		int reversed = step == 2 && t->rank == 3;
		ncclComm_t first = reversed ? t->b : t->a, second = reversed ? t->a : t->b;
		CUstream s1 = reversed ? t->s2 : t->s1, s2 = reversed ? t->s1 : t->s2;
		if (step == 2)
			printf("rank %d: step 2: %s\n", t->rank, reversed ? "B before A" : "A before B");
		hang_allreduce(t->h, first, s1);
		hang_sync(s1);
		hang_allreduce(t->h, second, s2);
		hang_sync(s2);
		printf("rank %d: step %d done\n", t->rank, step);
	}
	return NULL;
}

static void body(struct hang_rank *h)
{
	struct thread_arg t[2];
	ncclComm_t a[2], b[2];
	CUcontext ctx[2];
	/* A GPU per rank, as NCCL wants ("Duplicate GPU detected" otherwise):
	 * process p drives GPUs 2p and 2p+1; each init runs on its rank's. */
	for (int i = 0; i < 2; i++) {
		CUdevice dev;
		CU(cuDeviceGet(&dev, 2 * h->rank + i));
		CU(cuDevicePrimaryCtxRetain(&ctx[i], dev));
	}
	NC(ncclGroupStart());
	for (int i = 0; i < 2; i++) {
		CU(cuCtxSetCurrent(ctx[i]));
		NC(ncclCommInitRank(&a[i], 4, h->id[0], 2 * h->rank + i));
	}
	NC(ncclGroupEnd());
	NC(ncclGroupStart());
	for (int i = 0; i < 2; i++) {
		CU(cuCtxSetCurrent(ctx[i]));
		NC(ncclCommInitRank(&b[i], 4, h->id[1], 2 * h->rank + i));
	}
	NC(ncclGroupEnd());
	pthread_t tid[2];
	for (int i = 0; i < 2; i++) {
		CU(cuCtxSetCurrent(ctx[i]));
		t[i] = (struct thread_arg){ h, 2 * h->rank + i, ctx[i], a[i], b[i], 0, 0 };
		CU(cuStreamCreate(&t[i].s1, CU_STREAM_NON_BLOCKING));
		CU(cuStreamCreate(&t[i].s2, CU_STREAM_NON_BLOCKING));
		pthread_create(&tid[i], NULL, drive, &t[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
}

int main(void) { return hang_run(2, 2, body); }
