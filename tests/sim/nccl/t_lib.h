/* Helpers shared by the simulated NCCL's test programs (t_*.c): checks that
 * exit with a message, rank processes forked from one unique id, a CUDA
 * context and stream per rank, and observing a hang through an event.
 * Header-only: each test program is one .c file.
 */
#ifndef NCCLSIM_T_LIB_H
#define NCCLSIM_T_LIB_H

#include <cuda.h>
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int t_rank = -1;
static int t_killed_rank = -1;  /* this rank is expected to die by SIGKILL */

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "FAIL rank %d (%s:%d): ", t_rank, __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)
#define NCCL_OK(call)                                                                 \
	do {                                                                          \
		ncclResult_t r_ = (call);                                             \
		CHECK(r_ == ncclSuccess, "%s -> %d (%s)", #call, (int)r_, ncclGetErrorString(r_)); \
	} while (0)
#define CU_OK(call)                                                                   \
	do {                                                                          \
		CUresult c_ = (call);                                                 \
		CHECK(c_ == CUDA_SUCCESS, "%s -> CUDA error %d", #call, (int)c_);     \
	} while (0)

static __attribute__((unused)) void t_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts)) {}
}

/* A context on device (rank % devices) made current, and one stream. */
static __attribute__((unused)) CUstream t_setup_device(int rank)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	int n = 1;
	CU_OK(cuInit(0));
	CU_OK(cuDeviceGetCount(&n));
	CU_OK(cuDeviceGet(&dev, rank % (n > 0 ? n : 1)));
	CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CU_OK(cuCtxSetCurrent(ctx));
	CU_OK(cuStreamCreate(&s, 0));
	return s;
}

/* An id that is the same for the same seed (seed 0: a random one). */
static __attribute__((unused)) ncclUniqueId t_make_id(unsigned seed)
{
	ncclUniqueId id;
	if (seed == 0) {
		NCCL_OK(ncclGetUniqueId(&id));
		return id;
	}
	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) id.internal[i] = (char)(seed * 131 + i * 7);
	return id;
}

/* The simulation's communicator key: FNV-1a-64 of the id's bytes. */
static __attribute__((unused)) unsigned long long t_key_of(const ncclUniqueId *id)
{
	unsigned long long h = 0xcbf29ce484222325ull;
	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++) { h ^= (unsigned char)id->internal[i]; h *= 0x100000001b3ull; }
	return h;
}

/* Record an event on `s` and check it stays NOT_READY for `ms` (a hang seen
 * from outside: the op in front of it never completes). */
static __attribute__((unused)) CUevent t_expect_stuck(CUstream s, long ms, const char *what)
{
	CUevent ev;
	CU_OK(cuEventCreate(&ev, 0));
	CU_OK(cuEventRecord(ev, s));
	for (int i = 0; i < 10; i++) {
		t_sleep_ms(ms / 10);
		CUresult q = cuEventQuery(ev);
		CHECK(q == CUDA_ERROR_NOT_READY, "%s: expected to hang, event query says %d", what, (int)q);
	}
	return ev;
}

typedef void (*t_rank_fn)(int rank, int nranks, ncclUniqueId id, CUstream s);

/* Fork nranks processes running fn; rank `hang_rank` (if >= 0) is expected
 * never to finish: it must still be alive when the others are done, and is
 * then killed. Returns 0 if every other rank exited 0. */
static __attribute__((unused)) int t_run_ranks(int nranks, ncclUniqueId id, t_rank_fn fn, int hang_rank)
{
	pid_t pids[64];
	for (int r = 0; r < nranks; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			t_rank = r;
			CUstream s = t_setup_device(r);
			fn(r, nranks, id, s);
			fflush(stdout);
			_exit(0);
		}
		CHECK(pids[r] > 0, "fork failed");
	}
	/* Any rank failing: the others would wait for it forever, so end them. */
	int bad = 0, left = nranks - (hang_rank >= 0);
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, 0);
		if (p < 0) break;
		int r;
		for (r = 0; r < nranks && pids[r] != p; r++) {}
		if (r == nranks) continue;
		if (r == hang_rank) {
			fprintf(stderr, "rank %d was expected to hang but ended (status %#x)\n", r, st);
			bad = 1;
			hang_rank = -1;
			continue;
		}
		left--;
		if (r == t_killed_rank && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) continue;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "rank %d ended badly (status %#x); killing the others\n", r, st);
			bad = 1;
			for (int q = 0; q < nranks; q++) if (q != r) kill(pids[q], SIGKILL);
			while (waitpid(-1, &st, 0) > 0) {}
			return bad;
		}
	}
	if (hang_rank >= 0) {
		int st;
		if (waitpid(pids[hang_rank], &st, WNOHANG) != 0) {
			fprintf(stderr, "rank %d was expected to hang but ended (status %#x)\n", hang_rank, st);
			bad = 1;
		} else {
			kill(pids[hang_rank], SIGKILL);
			waitpid(pids[hang_rank], &st, 0);
		}
	}
	return bad;
}

#endif /* NCCLSIM_T_LIB_H */
