/* nccl_blocked_stream: ops queued on one stream wait while another
 * stream's ops run and finish. Stream A holds K all-reduces (comm A)
 * behind a host function that returns only at the end; stream B then runs
 * N all-reduces (comm B), each followed by a sync. One rank per comm
 * (ncclCommInitAll of 1 device), on the simulated driver.
 *
 * usage: nccl-blocked-stream N K */
#include <cuda.h>
#include <nccl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int release_a;

static void CUDA_CB hold_stream(void *arg)
{
	(void)arg;
	while (!atomic_load(&release_a))
		usleep(1000);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int k = argc > 2 ? atoi(argv[2]) : 10;
	float buf[4] = { 0 };
	CUdevice dev;
	CUcontext ctx;
	CUstream a, b;
	ncclComm_t comm_a, comm_b;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&a, CU_STREAM_NON_BLOCKING) || cuStreamCreate(&b, CU_STREAM_NON_BLOCKING)) {
		fprintf(stderr, "nccl-blocked-stream: CUDA setup failed\n");
		return 1;
	}
	if (ncclCommInitAll(&comm_a, 1, NULL) != ncclSuccess || ncclCommInitAll(&comm_b, 1, NULL) != ncclSuccess) {
		fprintf(stderr, "nccl-blocked-stream: ncclCommInitAll failed\n");
		return 1;
	}
	if (k > 0 && cuLaunchHostFunc(a, hold_stream, NULL) != CUDA_SUCCESS) {
		fprintf(stderr, "nccl-blocked-stream: cuLaunchHostFunc failed\n");
		return 1;
	}
	for (int i = 0; i < k; i++)
		if (ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm_a, (cudaStream_t)a) != ncclSuccess)
			return 1;
	for (long i = 0; i < n; i++)
		if (ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm_b, (cudaStream_t)b) != ncclSuccess ||
		    cuStreamSynchronize(b) != CUDA_SUCCESS)
			return 1;
	atomic_store(&release_a, 1);
	if (cuStreamSynchronize(a) != CUDA_SUCCESS)
		return 1;
	ncclCommDestroy(comm_a);
	ncclCommDestroy(comm_b);
	printf("issued %ld on the running stream, %d on the held one\n", n, k);
	return 0;
}
