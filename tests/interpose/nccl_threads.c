/* nccl_threads: THREADS threads issue CALLS all-reduces each on COMMS
 * communicators (thread t on comm t % COMMS) of one process, all at once
 * (run with NCCLSIM_NULL=1). Every record is self-checking: count =
 * t * 1000000 + i and stream = (t + 1) << 12, so a reader can tell a
 * record mixed from two writes.
 *
 * usage: nccl-threads THREADS COMMS CALLS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <nccl.h>

static int threads, comms, calls;
static ncclComm_t comm[64];
static pthread_barrier_t start;
static int failures;

static void *run(void *arg)
{
	int t = (int)(intptr_t)arg;
	float buf[1];
	cudaStream_t s = (cudaStream_t)(uintptr_t)((uint64_t)(t + 1) << 12);
	pthread_barrier_wait(&start);
	for (int i = 0; i < calls; i++)
		if (ncclAllReduce(buf, buf, (size_t)t * 1000000 + (size_t)i, ncclFloat, ncclSum,
		                  comm[t % comms], s) != ncclSuccess)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	threads = atoi(argv[1]);
	comms = atoi(argv[2]);
	calls = atoi(argv[3]);
	if (threads < 1 || threads > 256 || comms < 1 || comms > 64 || calls < 0)
		return 2;
	if (ncclCommInitAll(comm, comms, NULL) != ncclSuccess) {
		fprintf(stderr, "ncclCommInitAll failed\n");
		return 1;
	}
	pthread_t tid[256];
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	for (int t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, run, (void *)(intptr_t)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	printf("done calls=%d failures=%d\n", threads * calls, failures);
	return failures != 0;
}
