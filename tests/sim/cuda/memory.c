/* Device memory of the simulated CUDA driver: host memory. cuMemAlloc
 * mallocs and remembers the block, so cuMemFree refuses pointers it never
 * handed out; copies and memset are plain memcpy/memset, synchronous with
 * the host like the real cuMemcpyHtoD/DtoH (which here do not wait for the
 * default stream). They need a current context and return its sticky
 * error once it faulted. The CUDA 2.0 (32-bit pointer) spellings in
 * legacy.c allocate below 4 GiB with MAP_32BIT. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_cuda.h"
#include "sim_memory.h"

struct allocation {
	uintptr_t addr;
	size_t size;
	int mapped;          /* from mmap (legacy 32-bit) rather than malloc */
	UT_hash_handle hh;
};

static pthread_mutex_t alloc_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct allocation *allocations;

/* In a forked child: the parent's blocks stay valid (the address space was
 * copied), but a thread that held the lock at fork time is gone. */
void sim_memory_reset_after_fork(void)
{
	pthread_mutex_init(&alloc_mutex, NULL);
}

/* The current context, and its sticky error. */
CUresult sim_memory_context_check(void)
{
	struct sim_ctx *ctx = sim_ctx_current();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	return sim_ctx_sticky(ctx);
}

CUresult sim_memory_alloc(uintptr_t *out, size_t size, int below_4g)
{
	CUresult r = sim_memory_context_check();
	if (r != CUDA_SUCCESS)
		return r;
	if (!out || size == 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct allocation *a = calloc(1, sizeof *a);
	if (!a)
		return CUDA_ERROR_OUT_OF_MEMORY;
	void *p;
	if (below_4g) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	} else {
		/* aligned like the driver's allocations (at least 256 bytes) */
		if (posix_memalign(&p, 256, size) != 0)
			p = NULL;
	}
	if (!p) {
		free(a);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	a->addr = (uintptr_t)p;
	a->size = size;
	a->mapped = below_4g;
	pthread_mutex_lock(&alloc_mutex);
	HASH_ADD(hh, allocations, addr, sizeof a->addr, a);
	pthread_mutex_unlock(&alloc_mutex);
	*out = a->addr;
	return CUDA_SUCCESS;
}

CUresult sim_memory_free(uintptr_t addr)
{
	if (addr == 0)
		return CUDA_SUCCESS; /* like free(NULL) */
	struct allocation *a;
	pthread_mutex_lock(&alloc_mutex);
	HASH_FIND(hh, allocations, &addr, sizeof addr, a);
	if (a)
		HASH_DEL(allocations, a);
	pthread_mutex_unlock(&alloc_mutex);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->mapped)
		munmap((void *)a->addr, a->size);
	else
		free((void *)a->addr);
	free(a);
	return CUDA_SUCCESS;
}

CUresult sim_memory_copy(void *dst, const void *src, size_t n)
{
	CUresult r = sim_memory_context_check();
	if (r != CUDA_SUCCESS)
		return r;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	memmove(dst, src, n);
	return CUDA_SUCCESS;
}

CUresult sim_memory_set(void *dst, unsigned char value, size_t n)
{
	CUresult r = sim_memory_context_check();
	if (r != CUDA_SUCCESS)
		return r;
	if (n == 0)
		return CUDA_SUCCESS;
	if (!dst)
		return CUDA_ERROR_INVALID_VALUE;
	memset(dst, value, n);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	SIM_REQUIRE_INIT();
	uintptr_t p = 0;
	CUresult r = sim_memory_alloc(dptr ? &p : NULL, bytesize, 0);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)p;
	return r;
}

SIM_API CUresult cuMemFree(CUdeviceptr dptr)
{
	SIM_REQUIRE_INIT();
	return sim_memory_free((uintptr_t)dptr);
}

SIM_API CUresult cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	SIM_REQUIRE_INIT();
	return sim_memory_copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
}

SIM_API CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	SIM_REQUIRE_INIT();
	return sim_memory_copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
}

SIM_API CUresult cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	SIM_REQUIRE_INIT();
	return sim_memory_set((void *)(uintptr_t)dstDevice, uc, N);
}
