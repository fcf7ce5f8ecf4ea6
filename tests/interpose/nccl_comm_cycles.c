/* nccl_comm_cycles: communicators made, used and destroyed over and over,
 * as a job does that rebuilds its process groups (elastic training,
 * evaluation loops, tests).
 *
 * usage: nccl-comm-cycles CYCLES PAIRS
 *   Each cycle makes PAIRS pairs of communicators with ncclCommInitAll
 *   (2 ranks in this process, devices 0 and 1), all alive at once; on each
 *   pair: k % 3 + 1 all-reduces in cycle k (one group each: both ranks),
 *   so that comms that follow each other in a slot have different
 *   positions; a send from rank 0 to rank 1 (one group); both streams
 *   synchronized; then every comm of the cycle is destroyed. Prints "done cycles=N comms=N" and exits 0, or
 *   "CALL failed: N" and exits 1. */
#include <cuda.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT 1024
#define MAX_PAIRS 64

static void die(const char *what, int code)
{
	printf("%s failed: %d\n", what, code);
	exit(1);
}
#define CU(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) die(#call, (int)r_); } while (0)
#define NC(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) die(#call, (int)r_); } while (0)

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3)
		die("usage: nccl-comm-cycles CYCLES PAIRS", 2);
	int cycles = atoi(argv[1]), pairs = atoi(argv[2]);
	if (cycles < 1 || pairs < 1 || pairs > MAX_PAIRS)
		die("arguments", 2);
	CUcontext ctx[2];
	CUstream s[2];
	CUdeviceptr buf[2];
	CU(cuInit(0));
	for (int d = 0; d < 2; d++) {
		CUdevice dev;
		CU(cuDeviceGet(&dev, d));
		CU(cuDevicePrimaryCtxRetain(&ctx[d], dev));
		CU(cuCtxSetCurrent(ctx[d]));
		CU(cuStreamCreate(&s[d], CU_STREAM_NON_BLOCKING));
		CU(cuMemAlloc(&buf[d], COUNT * sizeof(float)));
		CU(cuMemsetD8(buf[d], 0, COUNT * sizeof(float)));
	}
	const int devs[2] = { 0, 1 };
	ncclComm_t c[MAX_PAIRS][2];
	for (int k = 0; k < cycles; k++) {
		for (int p = 0; p < pairs; p++)
			NC(ncclCommInitAll(c[p], 2, devs));
		for (int p = 0; p < pairs; p++) {
			for (int n = 0; n <= k % 3; n++) {
				NC(ncclGroupStart());
				for (int r = 0; r < 2; r++)
					NC(ncclAllReduce((void *)buf[r], (void *)buf[r], COUNT, ncclFloat, ncclSum, c[p][r],
					                 (cudaStream_t)s[r]));
				NC(ncclGroupEnd());
			}
			NC(ncclGroupStart());
			NC(ncclSend((void *)buf[0], COUNT, ncclFloat, 1, c[p][0], (cudaStream_t)s[0]));
			NC(ncclRecv((void *)buf[1], COUNT, ncclFloat, 0, c[p][1], (cudaStream_t)s[1]));
			NC(ncclGroupEnd());
			for (int r = 0; r < 2; r++)
				CU(cuStreamSynchronize(s[r]));
		}
		for (int p = 0; p < pairs; p++)
			for (int r = 0; r < 2; r++)
				NC(ncclCommDestroy(c[p][r]));
	}
	printf("done cycles=%d comms=%d\n", cycles, 2 * cycles * pairs);
	return 0;
}
