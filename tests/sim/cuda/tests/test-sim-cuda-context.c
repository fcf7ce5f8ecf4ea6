/* Contexts and memory of the simulated CUDA driver: primary contexts
 * (one per device, retain/release counted), the per-thread context stack
 * (SetCurrent replaces the top, Push/Pop), cuCtxGetDevice, and device
 * memory that is host memory. */
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void *thread_sees_no_context(void *arg)
{
	(void)arg;
	CUcontext c = (CUcontext)1;
	CUdevice d;
	if (cuCtxGetCurrent(&c) != CUDA_SUCCESS || c != NULL)
		return (void *)1;
	if (cuCtxGetDevice(&d) != CUDA_ERROR_INVALID_CONTEXT)
		return (void *)1;
	if (simStreamEnqueue(NULL, gate_item, NULL, NULL) != CUDA_ERROR_INVALID_CONTEXT)
		return (void *)1;
	return NULL;
}

static void test_context_stack(void)
{
	CUcontext c0, c0again, c1, c2, cur, popped;
	CUdevice d;
	OK(cuInit(0));
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == NULL);
	CHECK_CU(cuCtxGetDevice(&d), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_CU(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_CU(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_CU(cuStreamQuery(NULL), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxSetCurrent(NULL)); /* no-op on an empty stack */

	OK(cuDevicePrimaryCtxRetain(&c0, 0));
	OK(cuDevicePrimaryCtxRetain(&c0again, 0));
	CHECK(c0 == c0again); /* one primary context per device */
	OK(cuDevicePrimaryCtxRetain(&c1, 1));
	OK(cuDevicePrimaryCtxRetain(&c2, 2));
	CHECK(c0 != c1 && c1 != c2);
	CHECK_CU(cuDevicePrimaryCtxRetain(&c2, 99), CUDA_ERROR_INVALID_DEVICE);

	OK(cuCtxPushCurrent(c0));
	OK(cuCtxPushCurrent(c1));
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c1);
	OK(cuCtxGetDevice(&d));
	CHECK(d == 1);
	OK(cuCtxGetDevice_v2(&d, c2));
	CHECK(d == 2);
	OK(cuCtxSetCurrent(c2)); /* replaces the top: stack is c0, c2 */
	OK(cuCtxPopCurrent(&popped));
	CHECK(popped == c2);
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c0);
	OK(cuCtxPushCurrent(c1));
	OK(cuCtxSetCurrent(NULL)); /* pops c1 */
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c0);
	OK(cuCtxPopCurrent(NULL));
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == NULL);
	CHECK_CU(cuCtxPushCurrent((CUcontext)&cur), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_CU(cuCtxSetCurrent((CUcontext)&cur), CUDA_ERROR_INVALID_CONTEXT);

	/* the stack is per thread */
	OK(cuCtxSetCurrent(c0));
	pthread_t t;
	void *ret;
	CHECK(pthread_create(&t, NULL, thread_sees_no_context, NULL) == 0);
	pthread_join(t, &ret);
	CHECK(ret == NULL);
	OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c0);

	/* streams belong to the context current at creation */
	CUstream s;
	CUcontext of;
	OK(cuCtxPushCurrent(c1));
	OK(cuStreamCreate(&s, 0));
	OK(cuCtxPopCurrent(NULL));
	OK(cuStreamGetCtx(s, &of));
	CHECK(of == c1);
	CUgreenCtx green = (CUgreenCtx)1;
	OK(cuStreamGetCtx_v2(s, &of, &green));
	CHECK(of == c1 && green == NULL);
	CHECK(simStreamDevice(s) == 1);
	CHECK(simStreamDevice(NULL) == 0);
	/* an event of another context cannot be recorded on this stream */
	CUevent ev;
	OK(cuEventCreate(&ev, 0));
	CHECK_CU(cuEventRecord(ev, s), CUDA_ERROR_INVALID_HANDLE);
	CHECK_CU(cuEventCreate(&ev, CU_EVENT_INTERPROCESS), CUDA_ERROR_INVALID_VALUE);
	CHECK_CU(cuEventCreate(&ev, 0x100), CUDA_ERROR_INVALID_VALUE);
	CHECK_CU(cuStreamCreate(&s, 0x10), CUDA_ERROR_INVALID_VALUE);
	OK(cuStreamDestroy(s));

	OK(cuDevicePrimaryCtxRelease(0));
	OK(cuDevicePrimaryCtxRelease(0));
	CHECK_CU(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT); /* released more than retained */
	OK(cuDevicePrimaryCtxRetain(&c0again, 0));
	CHECK(c0again == c0);
}

static void test_memory(void)
{
	CUdeviceptr p;
	char in[64], out[64];
	for (int i = 0; i < 64; i++)
		in[i] = (char)i;
	OK(cuMemAlloc(&p, sizeof in));
	CHECK(p != 0);
	OK(cuMemcpyHtoD(p, in, sizeof in));
	OK(cuMemcpyDtoH(out, p, sizeof out));
	CHECK(memcmp(in, out, sizeof in) == 0);
	OK(cuMemsetD8(p + 8, 0xab, 4));
	OK(cuMemcpyDtoH(out, p, sizeof out));
	CHECK((unsigned char)out[8] == 0xab && (unsigned char)out[11] == 0xab && out[12] == 12);
	OK(cuMemFree(p));
	CHECK_CU(cuMemFree(p), CUDA_ERROR_INVALID_VALUE); /* not ours any more */
	CHECK_CU(cuMemAlloc(&p, 0), CUDA_ERROR_INVALID_VALUE);

	/* the CUDA 2.0 ABI: 32-bit device pointers */
	typedef CUresult (*alloc_v1_fn)(unsigned int *, unsigned int);
	typedef CUresult (*free_v1_fn)(unsigned int);
	typedef CUresult (*htod_v1_fn)(unsigned int, const void *, unsigned int);
	typedef CUresult (*dtoh_v1_fn)(void *, unsigned int, unsigned int);
	alloc_v1_fn alloc_v1 = (alloc_v1_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc");
	free_v1_fn free_v1 = (free_v1_fn)dlsym(RTLD_DEFAULT, "cuMemFree");
	htod_v1_fn htod_v1 = (htod_v1_fn)dlsym(RTLD_DEFAULT, "cuMemcpyHtoD");
	dtoh_v1_fn dtoh_v1 = (dtoh_v1_fn)dlsym(RTLD_DEFAULT, "cuMemcpyDtoH");
	CHECK(alloc_v1 && free_v1 && htod_v1 && dtoh_v1);
	unsigned int small = 0;
	OK(alloc_v1(&small, 4096));
	CHECK(small != 0);
	OK(htod_v1(small, in, sizeof in));
	memset(out, 0, sizeof out);
	OK(dtoh_v1(out, small, sizeof out));
	CHECK(memcmp(in, out, sizeof in) == 0);
	OK(free_v1(small));

	/* the per-thread-default-stream spellings do the same */
	typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
	typedef CUresult (*query_fn)(CUstream);
	htod_fn htod_ptds = (htod_fn)dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2_ptds");
	query_fn query_ptsz = (query_fn)dlsym(RTLD_DEFAULT, "cuStreamQuery_ptsz");
	CHECK(htod_ptds && query_ptsz);
	OK(cuMemAlloc(&p, sizeof in));
	OK(htod_ptds(p, in, sizeof in));
	memset(out, 0, sizeof out);
	OK(cuMemcpyDtoH(out, p, sizeof out));
	CHECK(memcmp(in, out, sizeof in) == 0);
	OK(cuMemFree(p));
	OK(query_ptsz(NULL));

	/* memory calls need a context */
	CUcontext c;
	OK(cuCtxPopCurrent(&c));
	CHECK_CU(cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
	CHECK_CU(cuMemcpyHtoD(p, in, 1), CUDA_ERROR_INVALID_CONTEXT);
	OK(cuCtxPushCurrent(c));
}

/* A child forked after cuInit (as a launcher forking ranks may do) starts
 * with a fresh driver: it initialises, gets its own contexts and streams,
 * and never sees the parent's. */
static __attribute__((unused)) void test_fork(void)
{
	struct gate gate = GATE_INIT;
	CUstream parent_stream;
	OK(cuStreamCreate(&parent_stream, 0));
	OK(simStreamEnqueue(parent_stream, gate_item, NULL, &gate)); /* a busy worker */
	gate_wait_entered(&gate, 1);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		CUcontext cur = (CUcontext)1;
		if (cuCtxGetCurrent(&cur) != CUDA_ERROR_NOT_INITIALIZED)
			_exit(10);
		setup_device(1);
		if (cuStreamQuery(parent_stream) != CUDA_ERROR_INVALID_HANDLE)
			_exit(11);
		struct gate open_gate = GATE_INIT;
		open_gate.open = 1;
		CUstream s;
		CUevent ev;
		OK(cuStreamCreate(&s, 0));
		OK(cuEventCreate(&ev, 0));
		OK(simStreamEnqueue(s, gate_item, NULL, &open_gate));
		OK(cuEventRecord(ev, s));
		OK(cuEventSynchronize(ev));
		OK(cuStreamSynchronize(NULL));
		_exit(simStreamDevice(s) == 1 ? 0 : 12);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_CU(cuStreamQuery(parent_stream), CUDA_ERROR_NOT_READY); /* the parent's is intact */
	gate_open(&gate);
	OK(cuStreamSynchronize(parent_stream));
	OK(cuStreamDestroy(parent_stream));
}

int main(void)
{
	test_context_stack();
	test_memory();
#ifdef __SANITIZE_THREAD__
	printf("fork case not run: the thread sanitizer cannot start threads after a multi-threaded fork\n");
#else
	test_fork();
#endif
	printf("ok\n");
	return 0;
}
