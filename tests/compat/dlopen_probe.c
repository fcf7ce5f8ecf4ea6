/* Loads a real NCCL by path the way JAX's TSL stub does (dlopen + dlsym,
 * never linked), prints which of the functions ncclwatch wraps that library
 * has, then what ncclGetVersion, ncclGetUniqueId and ncclCommInitRank return.
 * Run with and without the preload, the output must be the same. */
#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>

static const char *const wrapped[] = {
	"ncclAllReduce", "ncclBroadcast", "ncclBcast", "ncclReduce", "ncclAllGather",
	"ncclReduceScatter", "ncclAlltoAll", "ncclGather", "ncclScatter", "ncclSend",
	"ncclRecv", "ncclGroupStart", "ncclGroupEnd", "ncclGroupSimulateEnd",
	"ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll",
	"ncclCommInitRankScalable", "ncclCommSplit", "ncclCommShrink", "ncclCommFinalize",
	"ncclCommDestroy", "ncclCommAbort", "ncclCommRevoke", "ncclCommGetAsyncError",
};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dlopen_probe PATH-OF-libnccl.so.2\n");
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen_probe: %s\n", dlerror());
		return 2;
	}
	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++)
		printf("symbol %s %s\n", wrapped[i], dlsym(h, wrapped[i]) ? "found" : "missing");

	ncclResult_t (*get_version)(int *) = (ncclResult_t (*)(int *))dlsym(h, "ncclGetVersion");
	ncclResult_t (*get_id)(ncclUniqueId *) = (ncclResult_t (*)(ncclUniqueId *))dlsym(h, "ncclGetUniqueId");
	ncclResult_t (*init_rank)(ncclComm_t *, int, ncclUniqueId, int) =
		(ncclResult_t (*)(ncclComm_t *, int, ncclUniqueId, int))dlsym(h, "ncclCommInitRank");
	const char *(*error_string)(ncclResult_t) =
		(const char *(*)(ncclResult_t))dlsym(h, "ncclGetErrorString");
	if (!get_version || !get_id || !init_rank || !error_string) {
		fprintf(stderr, "dlopen_probe: %s lacks a basic function\n", argv[1]);
		return 2;
	}
	int version = 0;
	ncclResult_t r = get_version(&version);
	printf("version %d result %d\n", version, r);
	ncclUniqueId id;
	printf("uniqueid result %d\n", get_id(&id));
	ncclComm_t comm = NULL;
	r = init_rank(&comm, 1, id, 0);
	printf("initrank result %d (%s) comm %s\n", r, error_string(r), comm ? "set" : "null");
	return 0;
}
