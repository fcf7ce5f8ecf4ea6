/* hang_host_lock: 4 ranks all-reduce each step; before step 3 every rank
 * takes a host-side lock of its own process (a data loader's queue lock).
 * On rank 1 a helper thread took that lock and never gives it back: rank
 * 1's main thread blocks in pthread_mutex_lock, outside NCCL, and never
 * issues AllReduce #3, which the three others wait in. */
#include "hang.h"

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t taken;

static void *loader(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&queue_lock);
	pthread_barrier_wait(&taken);
	hang_forever();
	return NULL;
}

static void body(struct hang_rank *h)
{
	ncclComm_t w = hang_world(h, 0);
	for (int step = 1; step <= 3; step++) {
		if (step == 3) {
			if (h->rank == 1) {
				pthread_t t;
				pthread_barrier_init(&taken, NULL, 2);
				pthread_create(&t, NULL, loader, NULL);
				pthread_barrier_wait(&taken);
				hang_say(h, "step 3: the loader holds the lock");
			}
			pthread_mutex_lock(&queue_lock);
			pthread_mutex_unlock(&queue_lock);
		}
		hang_allreduce(h, w, h->stream);
		hang_sync(h->stream);
		hang_say(h, "step %d done", step);
	}
}

int main(void) { return hang_run(4, 1, body); }
