/* throw_probe: a C program that dlopens a C++ library and has it throw and
 * catch N exceptions (tests/compat/test-compat-unwind-scope.sh, the
 * exception cost of tests/bench/preload.sh).
 *
 * usage: throw-probe LIB N [--nccl GOFILE]
 *   --nccl: first make a 1-rank communicator (under the preload the
 *   watchdog starts with it), print "ready", and wait until GOFILE exists
 *   (the test asks for a stack dump meanwhile, so the preload has loaded
 *   its unwinder by then).
 * Prints "libunwind mapped: yes|no" (whether any libunwind is in the
 * process when the C++ library is loaded) and "caught N in MS ms". */
#include <cuda.h>
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int libunwind_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "/libunwind"))
			found = 1;
	if (f)
		fclose(f);
	return found;
}

static int make_comm(void)
{
	CUdevice dev;
	CUcontext ctx;
	ncclUniqueId id;
	ncclComm_t c = NULL;
	return cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
	       cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS && cuCtxSetCurrent(ctx) == CUDA_SUCCESS &&
	       ncclGetUniqueId(&id) == ncclSuccess && ncclCommInitRank(&c, 1, id, 0) == ncclSuccess;
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 5 && !strcmp(argv[3], "--nccl"))) {
		fprintf(stderr, "usage: throw-probe LIB N [--nccl GOFILE]\n");
		return 2;
	}
	long n = atol(argv[2]);
	if (argc == 5) {
		if (!make_comm()) {
			fprintf(stderr, "throw-probe: cannot make a 1-rank communicator\n");
			return 1;
		}
		printf("ready\n");
		fflush(stdout);
		struct stat st;
		while (stat(argv[4], &st) != 0)
			usleep(10000);
	}
	printf("libunwind mapped: %s\n", libunwind_mapped() ? "yes" : "no");
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "throw-probe: %s\n", dlerror());
		return 1;
	}
	long (*throw_catch)(long) = (long (*)(long))dlsym(h, "nw_throw_catch");
	if (!throw_catch) {
		fprintf(stderr, "throw-probe: %s\n", dlerror());
		return 1;
	}
	throw_catch(1);    /* binds the unwinder before the timing */
	double t0 = now_ms();
	long caught = throw_catch(n);
	printf("caught %ld in %.1f ms\n", caught, now_ms() - t0);
	return caught == n ? 0 : 1;
}
