/* nccl_exit_stuck: a process exits while its watchdog is stuck inside a
 * poll. Run under the test build of the library with the watchdog's ring
 * delay long (NCCLWATCH_TEST_RING_DELAY_US, interpose/test_hooks.h) and
 * NCCLWATCH_POLL_MS small: the watchdog's first poll that moves an op stops there,
 * holding its locks, as a watchdog stuck in a driver call would.
 *
 * On the simulated driver, main makes a comm of one rank
 * (ncclCommInitAll of 1 device), all-reduces once on a stream of its own
 * and synchronizes it (the op completed: the watchdog's poll moves it, and
 * stops there); then it waits
 * until the watchdog thread ("ncclwatch") stops switching (a poll every
 * NCCLWATCH_POLL_MS sleeps, and so switches, each time; a stuck one does
 * not for as long as it is stuck), prints "watchdog stuck", destroys the
 * comm and ends:
 *   return   returns 0 from main
 *   exit N   calls exit(N)
 *
 * usage: nccl-exit-stuck return | exit N */
#include <cuda.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nccl.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The watchdog thread's voluntary context switches, -1 while it has none. */
static long long watchdog_switches(void)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	long long n = -1;
	struct dirent *e;
	while (n < 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], line[128];
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		int ours = f && fgets(line, sizeof(line), f) && !strcmp(line, "ncclwatch\n");
		if (f)
			fclose(f);
		if (!ours)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %lld", &n) == 1)
				break;
		fclose(f);
	}
	closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	int code = 0;
	if (argc == 3 && !strcmp(argv[1], "exit"))
		code = atoi(argv[2]);
	else if (argc != 2 || strcmp(argv[1], "return")) {
		fprintf(stderr, "usage: nccl-exit-stuck return | exit N\n");
		return 2;
	}
	float buf[4] = { 0 };
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	ncclComm_t comm;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
		fprintf(stderr, "nccl-exit-stuck: CUDA setup failed\n");
		return 2;
	}
	if (ncclCommInitAll(&comm, 1, NULL) != ncclSuccess ||
	    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, (cudaStream_t)s) != ncclSuccess ||
	    cuStreamSynchronize(s) != CUDA_SUCCESS) {
		fprintf(stderr, "nccl-exit-stuck: the all-reduce failed\n");
		return 2;
	}
	/* Stuck: no switch over two 100 ms looks in a row (a thread merely
	 * not scheduled for a while switches involuntarily, not voluntarily:
	 * two looks make that unlikely). */
	long long last = watchdog_switches();
	for (int still = 0; still < 2;) {
		sleep_ms(100);
		long long n = watchdog_switches();
		still = n >= 0 && n == last ? still + 1 : 0;
		last = n;
	}
	printf("watchdog stuck\n");
	fflush(stdout);
	ncclCommDestroy(comm);
	if (!strcmp(argv[1], "exit"))
		exit(code);
	return 0;
}
