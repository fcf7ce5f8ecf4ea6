/* nccl_hot_loop: the steady state of a wrapped call, measured from inside.
 * Creates one communicator (NCCLSIM_NULL=1), warms up, then issues CALLS
 * all-reduces and prints how many heap allocations happened during them:
 * malloc and friends are defined here (the executable comes first in symbol
 * lookup, before any preloaded library), count, and forward to glibc.
 * With "kill" it sends itself SIGKILL after the calls (post-mortem test),
 * having printed "issued N" first. "setup_allocations" counts those made
 * before the loop (nonzero: proves the counting works).
 *
 * usage: nccl-hot-loop CALLS [kill] */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <nccl.h>

static atomic_long allocations;

/* A sanitizer runtime owns malloc; there the counter stays 0 (the test
 * skips the count under sanitizers). */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

void *malloc(size_t n) { atomic_fetch_add(&allocations, 1); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { atomic_fetch_add(&allocations, 1); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { atomic_fetch_add(&allocations, 1); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { atomic_fetch_add(&allocations, 1); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n)
{
	*out = memalign(a, n);
	return *out ? 0 : 12;
}
void free(void *p) { __libc_free(p); }
#endif

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000;
	int kill_after = argc > 2 && !strcmp(argv[2], "kill");
	ncclComm_t comm;
	float buf[4];
	if (ncclCommInitAll(&comm, 1, NULL) != ncclSuccess)
		return 1;
	for (int i = 0; i < 100; i++)      /* warm-up: lazy start, caches */
		ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, NULL);
	long before = atomic_load(&allocations);
	for (long i = 0; i < calls; i++)
		if (ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, NULL) != ncclSuccess)
			return 1;
	long during = atomic_load(&allocations) - before;
	printf("issued %ld allocations %ld setup_allocations %ld\n", calls + 100, during, before);
	fflush(stdout);
	if (kill_after)
		kill(getpid(), SIGKILL);
	return 0;
}
