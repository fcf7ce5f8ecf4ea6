/* cuGetProcAddress of the simulated CUDA driver. A caller asks for a base
 * name ("cuMemAlloc") and the CUDA version it was built for; the driver
 * hands back the newest ABI of that name not newer than the version
 * (cuMemAlloc_v2 from CUDA 3.2 on). The table below holds the versions of
 * cudaTypedefs.h for the entry points the simulation exports; the function
 * is then looked up with dlsym on this very library, and only a symbol
 * defined here is accepted (never libc's). With the per-thread-stream flag
 * the _ptsz/_ptds spelling is preferred where one exists (they behave the
 * same here: the simulation has one default stream per context). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "sim_cuda.h"

struct proc_version {
	const char *name;
	int since;              /* CUDA version that introduced the name */
	const char *v2;         /* the newer ABI's symbol, or NULL */
	int v2_since;
	const char *v3;         /* a third ABI's symbol, or NULL */
	int v3_since;
};

static const struct proc_version proc_versions[] = {
	{ "cuInit", 2000, NULL, 0, NULL, 0 },
	{ "cuDriverGetVersion", 2020, NULL, 0, NULL, 0 },
	{ "cuDeviceGet", 2000, NULL, 0, NULL, 0 },
	{ "cuDeviceGetCount", 2000, NULL, 0, NULL, 0 },
	{ "cuDeviceGetName", 2000, NULL, 0, NULL, 0 },
	{ "cuDeviceGetPCIBusId", 4010, NULL, 0, NULL, 0 },
	{ "cuDeviceGetUuid", 9020, "cuDeviceGetUuid_v2", 11040, NULL, 0 },
	{ "cuDevicePrimaryCtxRetain", 7000, NULL, 0, NULL, 0 },
	{ "cuDevicePrimaryCtxRelease", 7000, "cuDevicePrimaryCtxRelease_v2", 11000, NULL, 0 },
	{ "cuCtxGetCurrent", 4000, NULL, 0, NULL, 0 },
	{ "cuCtxSetCurrent", 4000, NULL, 0, NULL, 0 },
	{ "cuCtxPushCurrent", 2000, "cuCtxPushCurrent_v2", 4000, NULL, 0 },
	{ "cuCtxPopCurrent", 2000, "cuCtxPopCurrent_v2", 4000, NULL, 0 },
	{ "cuCtxGetDevice", 2000, "cuCtxGetDevice_v2", 13000, NULL, 0 },
	{ "cuCtxSynchronize", 2000, "cuCtxSynchronize_v2", 13000, NULL, 0 },
	{ "cuStreamCreate", 2000, NULL, 0, NULL, 0 },
	{ "cuStreamDestroy", 2000, "cuStreamDestroy_v2", 4000, NULL, 0 },
	{ "cuStreamSynchronize", 2000, NULL, 0, NULL, 0 },
	{ "cuStreamQuery", 2000, NULL, 0, NULL, 0 },
	{ "cuStreamGetCtx", 9020, "cuStreamGetCtx_v2", 12050, NULL, 0 },
	{ "cuStreamIsCapturing", 10000, NULL, 0, NULL, 0 },
	{ "cuThreadExchangeStreamCaptureMode", 10010, NULL, 0, NULL, 0 },
	{ "cuStreamBeginCapture", 10000, "cuStreamBeginCapture_v2", 10010, NULL, 0 },
	{ "cuStreamEndCapture", 10000, NULL, 0, NULL, 0 },
	{ "cuStreamGetCaptureInfo", 10010, "cuStreamGetCaptureInfo_v2", 11030, "cuStreamGetCaptureInfo_v3", 12030 },
	{ "cuStreamWaitEvent", 3020, NULL, 0, NULL, 0 },
	{ "cuEventCreate", 2000, NULL, 0, NULL, 0 },
	{ "cuEventRecord", 2000, NULL, 0, NULL, 0 },
	{ "cuEventRecordWithFlags", 11010, NULL, 0, NULL, 0 },
	{ "cuEventQuery", 2000, NULL, 0, NULL, 0 },
	{ "cuEventSynchronize", 2000, NULL, 0, NULL, 0 },
	{ "cuEventDestroy", 2000, "cuEventDestroy_v2", 4000, NULL, 0 },
	{ "cuMemAlloc", 2000, "cuMemAlloc_v2", 3020, NULL, 0 },
	{ "cuMemFree", 2000, "cuMemFree_v2", 3020, NULL, 0 },
	{ "cuMemcpyHtoD", 2000, "cuMemcpyHtoD_v2", 3020, NULL, 0 },
	{ "cuMemcpyDtoH", 2000, "cuMemcpyDtoH_v2", 3020, NULL, 0 },
	{ "cuMemsetD8", 2000, "cuMemsetD8_v2", 3020, NULL, 0 },
	{ "cuGetErrorString", 6000, NULL, 0, NULL, 0 },
	{ "cuGetErrorName", 6000, NULL, 0, NULL, 0 },
	{ "cuGetProcAddress", 11030, "cuGetProcAddress_v2", 12000, NULL, 0 },
	{ "cuGraphDestroy", 10000, NULL, 0, NULL, 0 },
	{ "cuGraphInstantiate", 10000, "cuGraphInstantiate_v2", 11000, "cuGraphInstantiateWithFlags", 12000 },
	{ "cuGraphInstantiateWithFlags", 11040, NULL, 0, NULL, 0 },
	{ "cuGraphInstantiateWithParams", 12000, NULL, 0, NULL, 0 },
	{ "cuGraphLaunch", 10000, NULL, 0, NULL, 0 },
	{ "cuGraphExecDestroy", 10000, NULL, 0, NULL, 0 },
	{ "cuGraphExecUpdate", 10020, "cuGraphExecUpdate_v2", 12000, NULL, 0 },
	{ "cuGraphUpload", 11010, NULL, 0, NULL, 0 },
	{ "cuGraphGetNodes", 10000, NULL, 0, NULL, 0 },
	{ "cuLaunchHostFunc", 10000, NULL, 0, NULL, 0 },
};

/* A symbol of this library by exact name, or NULL. */
static void *own_symbol(const char *name)
{
	Dl_info self;
	if (!dladdr((void *)own_symbol, &self) || !self.dli_fname)
		return NULL;
	void *handle = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return NULL;
	void *fn = dlsym(handle, name);
	dlclose(handle);
	Dl_info where;
	if (!fn || !dladdr(fn, &where) || where.dli_fbase != self.dli_fbase)
		return NULL; /* found in a dependency (libc...), not a driver call */
	return fn;
}

/* name, with the per-thread default stream suffix when asked and present */
static void *lookup(const char *name, cuuint64_t flags)
{
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
		static const char *const suffixes[] = { "_ptsz", "_ptds" };
		for (int i = 0; i < 2; i++) {
			char full[128];
			snprintf(full, sizeof full, "%s%s", name, suffixes[i]);
			void *fn = own_symbol(full);
			if (fn)
				return fn;
		}
	}
	return own_symbol(name);
}

SIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *symbolStatus)
{
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	const char *name = symbol;
	for (size_t i = 0; i < sizeof proc_versions / sizeof proc_versions[0]; i++) {
		const struct proc_version *v = &proc_versions[i];
		if (strcmp(v->name, symbol) != 0)
			continue;
		if (cudaVersion < v->since) {
			if (symbolStatus)
				*symbolStatus = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
			return CUDA_ERROR_NOT_FOUND;
		}
		if (v->v3 && cudaVersion >= v->v3_since)
			name = v->v3;
		else if (v->v2 && cudaVersion >= v->v2_since)
			name = v->v2;
		break;
	}
	if (strncmp(name, "cu", 2) != 0)
		return CUDA_ERROR_NOT_FOUND; /* sim* and anything else is not a driver call */
	void *fn = lookup(name, flags);
	if (!fn)
		return CUDA_ERROR_NOT_FOUND;
	*pfn = fn;
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}
