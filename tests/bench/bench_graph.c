/* bench_graph: the cost of a wrapped cuGraphLaunch of a graph holding N
 * NCCL ops, for `make bench` (tests/bench/graphs.sh runs it with and
 * without libncclwatch.so, on the simulation; with NCCLSIM_NULL=1 the
 * captured AllReduces queue no work, so a launch is the simulated driver's
 * bookkeeping plus what ncclwatch adds: the exec lookup, a GraphLaunch
 * record and one pooled event pair recorded around the launch).
 *
 * One communicator (ncclCommInitAll of 1), N AllReduces captured on a
 * capturing stream, the graph instantiated once; then LAUNCHES launches on
 * a second stream, REPEATS times (after one warm-up round), a stream sync
 * after each round; prints the median over the rounds of the wall time per
 * launch, in ns.
 *
 * usage: bench-graph NOPS LAUNCHES REPEATS
 *        bench-graph NOPS CAPTURES REPEATS capture
 * The second form times captures instead: CAPTURES times begin capture, N
 * AllReduces, end capture, destroy the graph; prints the median ns per
 * captured op (what the per-op event nodes add at capture shows here). */
#include <cuda.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5)
		return 2;
	int captures = argc == 5;
	int nops = atoi(argv[1]), repeats = atoi(argv[3]);
	long launches = atol(argv[2]);
	if (nops < 1 || nops > 1024 || launches < 1 || repeats < 1 || repeats > 1000)
		return 2;
	CUdevice dev;
	CUcontext ctx;
	CUstream run, cap;
	ncclComm_t comm;
	CUdeviceptr buf;
	if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    cuStreamCreate(&run, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
	    cuStreamCreate(&cap, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS || cuMemAlloc(&buf, 64) != CUDA_SUCCESS) {
		fprintf(stderr, "bench-graph: no CUDA context or stream\n");
		return 1;
	}
	if (ncclCommInitAll(&comm, 1, NULL) != ncclSuccess)
		return 1;
	CUgraph graph;
	CUgraphExec exec;
	if (captures) {
		double *cns = calloc((size_t)repeats, sizeof *cns);
		if (!cns)
			return 1;
		for (int r = -1; r < repeats; r++) {
			uint64_t t0 = now_ns();
			for (long k = 0; k < launches; k++) {
				if (cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
					return 1;
				for (int i = 0; i < nops; i++)
					if (ncclAllReduce((void *)buf, (void *)buf, 4, ncclFloat, ncclSum, comm, cap) != ncclSuccess)
						return 1;
				if (cuStreamEndCapture(cap, &graph) != CUDA_SUCCESS || cuGraphDestroy(graph) != CUDA_SUCCESS)
					return 1;
			}
			if (r >= 0)
				cns[r] = (double)(now_ns() - t0) / (double)launches / nops;
		}
		qsort(cns, (size_t)repeats, sizeof *cns, cmp_double);
		printf("%.1f\n", cns[repeats / 2]);
		return 0;
	}
	if (cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) != CUDA_SUCCESS)
		return 1;
	for (int i = 0; i < nops; i++)
		if (ncclAllReduce((void *)buf, (void *)buf, 4, ncclFloat, ncclSum, comm, cap) != ncclSuccess)
			return 1;
	if (cuStreamEndCapture(cap, &graph) != CUDA_SUCCESS ||
	    cuGraphInstantiateWithFlags(&exec, graph, 0) != CUDA_SUCCESS) {
		fprintf(stderr, "bench-graph: capture or instantiation failed\n");
		return 1;
	}
	double *ns = calloc((size_t)repeats, sizeof *ns);
	if (!ns)
		return 1;
	for (int r = -1; r < repeats; r++) {      /* r = -1: warm-up */
		uint64_t t0 = now_ns();
		for (long i = 0; i < launches; i++)
			if (cuGraphLaunch(exec, run) != CUDA_SUCCESS) {
				fprintf(stderr, "bench-graph: cuGraphLaunch failed\n");
				return 1;
			}
		if (cuStreamSynchronize(run) != CUDA_SUCCESS)
			return 1;
		if (r >= 0)
			ns[r] = (double)(now_ns() - t0) / (double)launches;
	}
	qsort(ns, (size_t)repeats, sizeof *ns, cmp_double);
	printf("%.1f\n", ns[repeats / 2]);
	free(ns);
	return 0;
}
