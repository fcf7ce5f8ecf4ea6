/* nccl_capture: NCCL calls issued while their stream is captured into a
 * CUDA graph, then the same calls issued normally. One process, 1-rank
 * communicators, one stream.
 *
 *   comm "graph": during cuStreamBeginCapture .. cuStreamEndCapture, an
 *       all-reduce (#1) and a grouped all-reduce (#2, the group path); the
 *       graph is destroyed without being launched;
 *   comm "eager": after the capture, an all-reduce (#1) and a grouped
 *       all-reduce (#2), then cuStreamSynchronize, results checked.
 *
 * Two communicators because in the simulation (as with NCCL's sequence
 * numbers) collective #s of a comm runs only after #s-1 of that comm ran,
 * and captured work is never run (the graph is not launched): an eager
 * all-reduce on the graph comm would wait forever.
 *
 * With SECONDS, the process sleeps that long after the capture and after
 * the eager calls (so a watchdog with a shorter timeout looks at the
 * captured ops: they must never be reported). Prints "done failures=N".
 *
 * usage: nccl-capture [SECONDS] */
#include <cuda.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COUNT 64

static int failures;
#define CU(call) do { CUresult r_ = (call); \
	if (r_ != CUDA_SUCCESS) { printf("%s: CUDA error %d\n", #call, (int)r_); failures++; } } while (0)
#define NC(call) do { ncclResult_t r_ = (call); \
	if (r_ != ncclSuccess) { printf("%s: NCCL error %d\n", #call, (int)r_); failures++; } } while (0)

static void nap(double secs)
{
	if (secs <= 0)
		return;
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static ncclComm_t one_rank_comm(void)
{
	ncclUniqueId id;
	ncclComm_t c = NULL;
	NC(ncclGetUniqueId(&id));
	NC(ncclCommInitRank(&c, 1, id, 0));
	return c;
}

int main(int argc, char **argv)
{
	double linger = argc > 1 ? atof(argv[1]) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr buf;
	CUgraph graph = NULL;
	float host[COUNT];
	for (int i = 0; i < COUNT; i++)
		host[i] = (float)i;

	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU(cuMemAlloc(&buf, sizeof(host)));
	CU(cuMemcpyHtoD(buf, host, sizeof(host)));
	if (failures) {
		printf("done failures=%d\n", failures);
		return 1;
	}
	ncclComm_t graph_comm = one_rank_comm(), eager_comm = one_rank_comm();

	CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	NC(ncclAllReduce((void *)buf, (void *)buf, COUNT, ncclFloat, ncclSum, graph_comm, s));
	NC(ncclGroupStart());
	NC(ncclAllReduce((void *)buf, (void *)buf, COUNT, ncclFloat, ncclSum, graph_comm, s));
	NC(ncclGroupEnd());
	CU(cuStreamEndCapture(s, &graph));
	if (graph)
		CU(cuGraphDestroy(graph));
	printf("captured 2 all-reduces\n");
	nap(linger);

	NC(ncclAllReduce((void *)buf, (void *)buf, COUNT, ncclFloat, ncclSum, eager_comm, s));
	NC(ncclGroupStart());
	NC(ncclAllReduce((void *)buf, (void *)buf, COUNT, ncclFloat, ncclSum, eager_comm, s));
	NC(ncclGroupEnd());
	CU(cuStreamSynchronize(s));
	float out[COUNT];
	CU(cuMemcpyDtoH(out, buf, sizeof(out)));
	for (int i = 0; i < COUNT; i++)
		if (out[i] != host[i]) {   /* a 1-rank sum leaves the data as it was */
			printf("element %d: %g, expected %g\n", i, (double)out[i], (double)host[i]);
			failures++;
			break;
		}
	printf("eager 2 all-reduces completed\n");
	nap(linger);

	NC(ncclCommDestroy(graph_comm));
	NC(ncclCommFinalize(eager_comm));
	NC(ncclCommDestroy(eager_comm));
	CU(cuMemFree(buf));
	CU(cuStreamDestroy(s));
	CU(cuDevicePrimaryCtxRelease(dev));
	printf("done failures=%d\n", failures);
	return failures != 0;
}
