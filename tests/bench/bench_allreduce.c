/* bench_allreduce: the cost of a wrapped ncclAllReduce, for `make bench`
 * (tests/bench/run.sh runs it with and without libncclwatch.so, on the
 * simulated NCCL in null mode, NCCLSIM_NULL=1, where the real call costs
 * next to nothing).
 *
 * THREADS threads (thread t on communicator t % COMMS) each issue CALLS
 * all-reduces, REPEATS times; prints the median over the repeats of the
 * wall time divided by the total number of calls, in ns.
 *
 * With "stream" (5th argument) the calls go to a real stream of the
 * simulated CUDA driver (a primary context on device 0, one stream per
 * thread) instead of the NULL stream without a context: ncclwatch then
 * tracks every call with a pair of pooled events (two cuEventRecord of the
 * simulated driver per call, and its watchdog polls them), while the null
 * NCCL still does nothing. Without it ncclwatch cannot get events (no
 * context) and its records say UNTRACKED: recording only.
 *
 * usage: bench-allreduce THREADS COMMS CALLS REPEATS [stream] */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <cuda.h>
#include <nccl.h>

static int threads, comms;
static long calls;
static ncclComm_t comm[64];
static CUcontext ctx;            /* "stream" mode only */
static pthread_barrier_t go, done;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	float buf[4];
	CUstream stream = NULL;
	if (ctx && (cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	            cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)) {
		fprintf(stderr, "bench-allreduce: cannot create a stream\n");
		exit(1);
	}
	for (;;) {
		pthread_barrier_wait(&go);
		if (calls < 0)
			return NULL;
		for (long i = 0; i < calls; i++)
			ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm[t % comms], (cudaStream_t)stream);
		pthread_barrier_wait(&done);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 5 && !(argc == 6 && !strcmp(argv[5], "stream")))
		return 2;
	threads = atoi(argv[1]);
	comms = atoi(argv[2]);
	calls = atol(argv[3]);
	int repeats = atoi(argv[4]);
	if (threads < 1 || threads > 64 || comms < 1 || comms > 64 || calls < 1 || repeats < 1 || repeats > 1000)
		return 2;
	if (argc == 6) {
		CUdevice dev;
		if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
		    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
			fprintf(stderr, "bench-allreduce: no CUDA context\n");
			return 1;
		}
	}
	if (ncclCommInitAll(comm, comms, NULL) != ncclSuccess)
		return 1;
	pthread_t tid[64];
	pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&done, NULL, (unsigned)threads + 1);
	for (int t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t);
	double *ns = calloc((size_t)repeats, sizeof(*ns));
	for (int r = -1; r < repeats; r++) {      /* r = -1: warm-up */
		uint64_t t0 = now_ns();
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		if (r >= 0)
			ns[r] = (double)(now_ns() - t0) / ((double)calls * threads);
	}
	calls = -1;
	pthread_barrier_wait(&go);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	qsort(ns, (size_t)repeats, sizeof(*ns), cmp_double);
	printf("%.1f\n", ns[repeats / 2]);
	free(ns);
	return 0;
}
