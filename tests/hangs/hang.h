/* hang.h: the frame every hang program of tests/hangs/ shares. One parent
 * forks N rank processes (RANK / WORLD_SIZE / LOCAL_RANK set as torchrun
 * does), rank 0 makes the ncclUniqueIds and hands them to every rank through
 * pipes, each rank gets its own device, stream and buffers, then runs the
 * program's body. The parent never calls NCCL (it leaves no segment), waits
 * for its ranks and prints how each ended. A page shared by all ranks holds
 * host-side primitives (a process-shared barrier and mutex) for programs
 * whose ranks wait for each other outside NCCL.
 *
 * Each program prints "rank R: ..." lines (line-buffered) that its test
 * waits for; a call that should succeed and fails makes the rank print it
 * and exit 1. Header-only: each program is one .c file. */
#ifndef NCCLWATCH_TESTS_HANG_H
#define NCCLWATCH_TESTS_HANG_H

#include <cuda.h>
#include <nccl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HANG_MAX_IDS 4
#define HANG_COUNT (64 * 1024) /* floats per buffer: 256 KiB, several sim chunks */

struct hang_shared {
	pthread_barrier_t barrier; /* all ranks */
	pthread_mutex_t lock;
};

struct hang_rank {
	int rank, nranks;
	CUcontext ctx;
	CUstream stream, stream2;
	CUdeviceptr buf, buf2; /* HANG_COUNT * nranks floats each */
	ncclUniqueId id[HANG_MAX_IDS];
	struct hang_shared *shared;
};

static inline void hang_say(const struct hang_rank *h, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	printf("rank %d: %s\n", h->rank, line);
}

static inline void hang_die(const char *what, int code)
{
	printf("%s failed: %d\n", what, code);
	exit(1);
}
#define CU(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) hang_die(#call, (int)r_); } while (0)
#define NC(call) do { ncclResult_t r_ = (call); if (r_ != ncclSuccess) hang_die(#call, (int)r_); } while (0)

/* Never returns: the rank is somewhere else for ever (killed by the test). */
static inline void hang_forever(void)
{
	for (;;)
		pause();
}

/* The process-shared barrier of all ranks ("a host-side join"). */
static inline void hang_cpu_barrier(struct hang_rank *h)
{
	pthread_barrier_wait(&h->shared->barrier);
}

static inline void hang_init_rank(struct hang_rank *h, int read_fd, int nids, const int *write_fds)
{
	CUdevice dev;
	CU(cuInit(0));
	CU(cuDeviceGet(&dev, h->rank % 8));
	CU(cuDevicePrimaryCtxRetain(&h->ctx, dev));
	CU(cuCtxSetCurrent(h->ctx));
	CU(cuStreamCreate(&h->stream, CU_STREAM_NON_BLOCKING));
	CU(cuStreamCreate(&h->stream2, CU_STREAM_NON_BLOCKING));
	size_t bytes = sizeof(float) * HANG_COUNT * (size_t)h->nranks;
	CU(cuMemAlloc(&h->buf, bytes));
	CU(cuMemAlloc(&h->buf2, bytes));
	CU(cuMemsetD8(h->buf, 0, bytes));
	CU(cuMemsetD8(h->buf2, 0, bytes));
	if (h->rank == 0) {
		for (int i = 0; i < nids; i++)
			NC(ncclGetUniqueId(&h->id[i]));
		for (int r = 0; r < h->nranks; r++)
			if (write(write_fds[r], h->id, sizeof h->id) != (ssize_t)sizeof h->id)
				hang_die("write ids", r);
	}
	size_t got = 0;
	while (got < sizeof h->id) {
		ssize_t n = read(read_fd, (char *)h->id + got, sizeof h->id - got);
		if (n <= 0)
			hang_die("read ids", (int)n);
		got += (size_t)n;
	}
}

/* Forks nranks ranks that each run body(h) with nids unique ids, then
 * exit 0. Returns the parent's exit status: 0 when every rank exited 0. */
static inline int hang_run(int nranks, int nids, void (*body)(struct hang_rank *))
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct hang_shared *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
	                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		hang_die("mmap", 0);
	pthread_barrierattr_t ba;
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	pthread_barrier_init(&shared->barrier, &ba, (unsigned)nranks);
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&shared->lock, &ma);

	int fds[64][2], wfds[64];
	pid_t pids[64];
	if (nranks > 64)
		hang_die("nranks", nranks);
	for (int r = 0; r < nranks; r++) {
		if (pipe(fds[r]))
			hang_die("pipe", r);
		wfds[r] = fds[r][1];
	}
	for (int r = 0; r < nranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			hang_die("fork", r);
		if (pids[r] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			char text[16];
			snprintf(text, sizeof text, "%d", r);
			setenv("RANK", text, 1);
			setenv("LOCAL_RANK", text, 1);
			snprintf(text, sizeof text, "%d", nranks);
			setenv("WORLD_SIZE", text, 1);
			setenv("LOCAL_WORLD_SIZE", text, 1);
			for (int i = 0; i < nranks; i++)
				if (r != 0)
					close(fds[i][1]);
			struct hang_rank h = { .rank = r, .nranks = nranks, .shared = shared };
			hang_init_rank(&h, fds[r][0], nids, wfds);
			body(&h);
			hang_say(&h, "exiting");
			exit(0);
		}
	}
	for (int r = 0; r < nranks; r++)
		close(fds[r][1]);
	int status = 0;
	for (int left = nranks; left > 0; left--) {
		/* In the order they end: a rank that exits early says so at once. */
		int st, r = 0;
		pid_t pid = waitpid(-1, &st, 0);
		if (pid < 0)
			hang_die("waitpid", left);
		while (r < nranks && pids[r] != pid)
			r++;
		printf("rank %d ended: %s %d\n", r, WIFEXITED(st) ? "status" : "signal",
		       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			status = 1;
	}
	return status;
}

/* ---- small helpers on the rank's world comm ---------------------------- */

static inline void hang_allreduce(struct hang_rank *h, ncclComm_t comm, CUstream s)
{
	NC(ncclAllReduce((void *)h->buf, (void *)h->buf, HANG_COUNT, ncclFloat, ncclSum, comm, s));
}

static inline void hang_sync(CUstream s)
{
	CU(cuStreamSynchronize(s));
}

static inline ncclComm_t hang_world(struct hang_rank *h, int id)
{
	ncclComm_t comm;
	NC(ncclCommInitRank(&comm, h->nranks, h->id[id], h->rank));
	return comm;
}

#endif
