/* nccl_gpufault: one process, a 1-rank communicator, and a GPU fault on its
 * second all-reduce (run with NCCLSIM_FAULT=gpufault:rank=0:seq=2).
 *
 * All-reduce #1 is synchronized (it completes); #2 fails on the "GPU":
 * cuStreamQuery then returns the sticky CUDA_ERROR_ILLEGAL_ADDRESS. Then:
 *   linger  polls ncclCommGetAsyncError until it reports the error, prints
 *           "lingering" and waits until killed (the watchdog has time to
 *           see the failure: nothing else happens in the process);
 *   exit    reacts like the trainer (and most applications): aborts the
 *           communicator, releases the device and exits with status 5
 *           at once.
 * With "wait", the process waits for SIGUSR1 between #1 and #2: a test
 * sends it once the watchdog has seen #1 complete (otherwise the sticky
 * error hides whether #1 completed from the watchdog too).
 * Each step prints one line; errors of calls that should succeed make it
 * exit with status 1.
 *
 * usage: nccl-gpufault linger|exit [wait] */
#include <cuda.h>
#include <nccl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COUNT 256

static void die(const char *what, int code)
{
	printf("%s failed: %d\n", what, code);
	exit(1);
}
#define CU(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) die(#call, (int)r_); } while (0)
#define NC(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) die(#call, (int)r_); } while (0)

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || (strcmp(argv[1], "linger") && strcmp(argv[1], "exit"))
	    || (argc == 3 && strcmp(argv[2], "wait"))) {
		fprintf(stderr, "usage: nccl-gpufault linger|exit [wait]\n");
		return 2;
	}
	int linger = !strcmp(argv[1], "linger"), wait_signal = argc == 3;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Blocked before any thread exists: every thread inherits the mask,
	 * so SIGUSR1 stays pending for sigwait below. */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);

	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUdeviceptr buf;
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, 0));
	CU(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU(cuCtxSetCurrent(ctx));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	static float host[COUNT];
	CU(cuMemAlloc(&buf, sizeof(host)));
	CU(cuMemcpyHtoD(buf, host, sizeof(host)));

	ncclUniqueId id;
	ncclComm_t comm;
	NC(ncclGetUniqueId(&id));
	NC(ncclCommInitRank(&comm, 1, id, 0));

	NC(ncclAllReduce((void *)buf, (void *)buf, COUNT, ncclFloat, ncclSum, comm, s));
	CU(cuStreamSynchronize(s));
	printf("allreduce 1 completed\n");
	if (wait_signal) {
		int sig;
		printf("waiting for SIGUSR1\n");
		sigwait(&usr1, &sig);
	}

	NC(ncclAllReduce((void *)buf, (void *)buf, COUNT, ncclFloat, ncclSum, comm, s));
	CUresult q = CUDA_ERROR_NOT_READY;
	for (int i = 0; i < 10000 && q == CUDA_ERROR_NOT_READY; i++) {
		q = cuStreamQuery(s);
		if (q == CUDA_ERROR_NOT_READY)
			nap_ms(1);
	}
	printf("allreduce 2: stream error %d\n", (int)q);

	if (!linger) {
		ncclCommAbort(comm);
		cuStreamDestroy(s);
		cuDevicePrimaryCtxRelease(dev);
		printf("exiting with status 5\n");
		return 5;
	}
	ncclResult_t async = ncclSuccess;
	for (int i = 0; i < 10000 && (async == ncclSuccess || async == ncclInProgress); i++) {
		NC(ncclCommGetAsyncError(comm, &async));
		if (async == ncclSuccess || async == ncclInProgress)
			nap_ms(1);
	}
	printf("async error %d\n", (int)async);
	printf("lingering\n");
	for (;;)
		pause();
}
