/* nccl_ops: one fixed script of every wrapped NCCL call, on two
 * communicators of one process (ncclCommInitAll; run with NCCLSIM_NULL=1).
 *
 * Built twice from this file: nccl-ops-linked calls NCCL directly, and
 * nccl-ops-dlopen (NW_OPS_DLOPEN) does what JAX/XLA's TSL NCCL stub does:
 * dlopen() the library by path with RTLD_LOCAL and call only through
 * pointers from dlsym(handle, "ncclX"). Under libncclwatch.so both must
 * produce the same records.
 *
 * usage: nccl-ops [LIBNCCL_PATH]   (the dlopen variant needs the path) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <nccl.h>

#define NCCL_FUNCTIONS(X) \
	X(CommInitAll) X(AllReduce) X(Broadcast) X(Bcast) X(Reduce) X(AllGather) \
	X(ReduceScatter) X(AlltoAll) X(Gather) X(Scatter) X(Send) X(Recv) \
	X(GroupStart) X(GroupEnd) X(GroupSimulateEnd) X(CommSplit) \
	X(CommGetAsyncError) X(CommFinalize) X(CommDestroy) X(GetVersion)

static struct {
#define MEMBER(n) __typeof__(nccl##n) *n;
	NCCL_FUNCTIONS(MEMBER)
} nccl;

static void load(const char *path)
{
#ifdef NW_OPS_DLOPEN
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(1);
	}
#define LOOKUP(n) \
	if (!(nccl.n = (__typeof__(nccl##n) *)dlsym(h, "nccl" #n))) { \
		fprintf(stderr, "dlsym nccl" #n ": %s\n", dlerror()); \
		exit(1); \
	}
	NCCL_FUNCTIONS(LOOKUP)
#else
	(void)path;
#define DIRECT(n) nccl.n = nccl##n;
	NCCL_FUNCTIONS(DIRECT)
#endif
}

static int failures;
#define CALL(expr) do { \
	ncclResult_t r_ = (expr); \
	if (r_ != ncclSuccess) { \
		fprintf(stderr, "%s: %d\n", #expr, (int)r_); \
		failures++; \
	} \
} while (0)

int main(int argc, char **argv)
{
	load(argc > 1 ? argv[1] : NULL);
	float buf[64];
	cudaStream_t s = (cudaStream_t)(uintptr_t)0x5000;
	ncclComm_t c[2], sub[2];
	ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
	ncclResult_t async;

	CALL(nccl.CommInitAll(c, 2, NULL));
	/* seq 1, 2: all-reduce and broadcast on both comms */
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++)
		CALL(nccl.AllReduce(buf, buf, 8, ncclFloat, ncclSum, c[i], s));
	CALL(nccl.GroupEnd());
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++)
		CALL(nccl.Broadcast(buf, buf + 8, 4, ncclInt32, 1, c[i], s));
	CALL(nccl.GroupEnd());
	/* seq 3..9: one of each other collective, each group nested once */
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++) {
		CALL(nccl.GroupStart());
		CALL(nccl.Bcast(buf, 3, ncclDouble, 0, c[i], s));
		CALL(nccl.GroupEnd());
		CALL(nccl.Reduce(buf, buf + 16, 5, ncclFloat16, ncclMax, 1, c[i], s));
		CALL(nccl.AllGather(buf, buf + 8, 6, ncclUint8, c[i], s));
		CALL(nccl.ReduceScatter(buf, buf + 8, 7, ncclInt64, ncclMin, c[i], s));
		CALL(nccl.AlltoAll(buf, buf + 8, 2, ncclBfloat16, c[i], s));
		CALL(nccl.Gather(buf, buf + 8, 9, ncclUint32, 0, c[i], s));
		CALL(nccl.Scatter(buf, buf + 8, 10, ncclFloat64, 1, c[i], s));
	}
	CALL(nccl.GroupEnd());
	/* send #1 0->1 and #2, receive #1 and #2 on 1 from 0 */
	for (int k = 0; k < 2; k++) {
		CALL(nccl.GroupStart());
		CALL(nccl.Send(buf, 11, ncclFloat, 1, c[0], s));
		CALL(nccl.Recv(buf, 11, ncclFloat, 0, c[1], s));
		CALL(nccl.GroupEnd());
	}
	/* a simulated group: discarded, its numbers given back */
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++)
		CALL(nccl.AllReduce(buf, buf, 12, ncclFloat, ncclProd, c[i], s));
	CALL(nccl.Send(buf, 13, ncclFloat, 1, c[0], s));
	CALL(nccl.Recv(buf, 13, ncclFloat, 0, c[1], s));
	CALL(nccl.GroupSimulateEnd(&sim));
	/* so this all-reduce is #10 again and this send is #3 */
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++)
		CALL(nccl.AllReduce(buf, buf, 14, ncclFloat, ncclAvg, c[i], s));
	CALL(nccl.Send(buf, 15, ncclFloat, 1, c[0], s));
	CALL(nccl.Recv(buf, 15, ncclFloat, 0, c[1], s));
	CALL(nccl.GroupEnd());
	/* a split of both, and a collective on it */
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++)
		CALL(nccl.CommSplit(c[i], 7, i, &sub[i], NULL));
	CALL(nccl.GroupEnd());
	CALL(nccl.GroupStart());
	for (int i = 0; i < 2; i++)
		CALL(nccl.AllReduce(buf, buf, 16, ncclFloat, ncclSum, sub[i], s));
	CALL(nccl.GroupEnd());
	for (int i = 0; i < 2; i++) {
		CALL(nccl.CommGetAsyncError(c[i], &async));
		CALL(nccl.CommDestroy(sub[i]));
		CALL(nccl.CommFinalize(c[i]));
		CALL(nccl.CommDestroy(c[i]));
	}
	printf("done failures=%d\n", failures);
	return failures != 0;
}
