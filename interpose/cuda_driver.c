/* cuda_driver: see cuda_driver.h. */
#include "cuda_driver.h"

#include "libc_dl.h"
#include "log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nw_cuda nw_cu;
int nw_cuda_ok;
CUresult (*nw_cuda_capture_info)(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph);

typedef CUresult (*capture_info_v3_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                       const CUgraphNode **, const CUgraphEdgeData **, size_t *);
typedef CUresult (*capture_info_v2_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                                       const CUgraphNode **, size_t *);
static capture_info_v3_fn capture_info_v3;
static capture_info_v2_fn capture_info_v2;

static CUresult capture_info_by_v3(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph)
{
	const CUgraphNode *deps;
	const CUgraphEdgeData *edges;
	size_t ndeps;
	return capture_info_v3(s, status, id, graph, &deps, &edges, &ndeps);
}

static CUresult capture_info_by_v2(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph)
{
	const CUgraphNode *deps;
	size_t ndeps;
	return capture_info_v2(s, status, id, graph, &deps, &ndeps);
}

static pthread_once_t nw_cuda_once = PTHREAD_ONCE_INIT;

struct entry {
	const char *name;
	void **slot;
	int required;
	int abi;
};

static void load(void)
{
	const char *lib = getenv("NCCLWATCH_CUDA_LIB");
	if (!lib || !*lib)
		lib = "libcuda.so.1";
	if (!strcmp(lib, "none")) {
		nw_log("NCCLWATCH_CUDA_LIB=none: GPU completion is not tracked (ops are UNTRACKED)");
		return;
	}
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		nw_log("no CUDA driver (%s): GPU completion is not tracked (ops are UNTRACKED)", dlerror());
		return;
	}
	nw_libc_dl_init();
	__typeof__(cuGetProcAddress) *get_proc = NULL;
	if (nw_libc_dlsym) {
		/* cuda.h maps cuGetProcAddress to the _v2 ABI; older drivers have only v1. */
		get_proc = (__typeof__(cuGetProcAddress) *)nw_libc_dlsym(h, "cuGetProcAddress_v2");
	}
	if (!get_proc) {
		nw_log("CUDA driver %s has no cuGetProcAddress_v2: GPU completion is not tracked", lib);
		return;
	}
	struct entry entries[] = {
#define NW_CUDA_ENTRY(name, req, abi) { #name, (void **)&nw_cu.name, req, abi },
		NW_CUDA_ENTRY_POINTS(NW_CUDA_ENTRY)
#undef NW_CUDA_ENTRY
	};
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		void *fn = NULL;
		if (get_proc(entries[i].name, &fn, entries[i].abi, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS
		    || status != CU_GET_PROC_ADDRESS_SUCCESS)
			fn = NULL;
		*entries[i].slot = fn;
		if (!fn && entries[i].required) {
			nw_log("CUDA driver %s lacks %s: GPU completion is not tracked", lib, entries[i].name);
			memset(&nw_cu, 0, sizeof(nw_cu));
			return;
		}
	}
	int v = 0;
	if (nw_cu.cuDriverGetVersion(&v) == CUDA_SUCCESS)
		nw_cu.driver_version = v;
	{
		CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		void *fn = NULL;
		int v3 = v >= 12030;
		if (get_proc("cuStreamGetCaptureInfo", &fn, v3 ? 12030 : 11030, CU_GET_PROC_ADDRESS_DEFAULT, &status)
		        == CUDA_SUCCESS && status == CU_GET_PROC_ADDRESS_SUCCESS && fn) {
			if (v3) {
				capture_info_v3 = (capture_info_v3_fn)fn;
				nw_cuda_capture_info = capture_info_by_v3;
			} else {
				capture_info_v2 = (capture_info_v2_fn)fn;
				nw_cuda_capture_info = capture_info_by_v2;
			}
		}
	}
	/* The handle stays open for the life of the process. */
	nw_cuda_ok = 1;
}

int nw_cuda_load(void)
{
	pthread_once(&nw_cuda_once, load);
	return nw_cuda_ok;
}

const char *nw_cuda_error_name(CUresult r)
{
	const char *s = NULL;
	if (nw_cuda_ok && nw_cu.cuGetErrorName && nw_cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "CUDA error";
}

void nw_cuda_device_info(int ordinal, char *name, size_t name_len, char *bus_id, size_t bus_len,
                         unsigned char uuid[16])
{
	CUdevice dev;
	if (!nw_cuda_ok || ordinal < 0 || !nw_cu.cuDeviceGet || nw_cu.cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS)
		return;
	if (name && nw_cu.cuDeviceGetName && nw_cu.cuDeviceGetName(name, (int)name_len, dev) != CUDA_SUCCESS)
		name[0] = 0;
	if (bus_id && nw_cu.cuDeviceGetPCIBusId && nw_cu.cuDeviceGetPCIBusId(bus_id, (int)bus_len, dev) != CUDA_SUCCESS)
		bus_id[0] = 0;
	CUuuid u;
	if (uuid && nw_cu.cuDeviceGetUuid && nw_cu.cuDeviceGetUuid(&u, dev) == CUDA_SUCCESS)
		memcpy(uuid, u.bytes, 16);
}
