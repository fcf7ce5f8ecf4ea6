/* cuda_driver: the CUDA driver entry points ncclwatch uses, loaded once at
 * run time (dlopen of libcuda.so.1, then cuGetProcAddress for each name at
 * the ABI of the cuda.h we compile against). Nothing links libcuda: a
 * machine without a driver just has no table, and ops stay UNTRACKED.
 *
 * Every prototype comes from the real cuda.h (the PFN_ typedefs are built
 * with __typeof__ of the declared functions), so the compiler checks them. */
#ifndef NCCLWATCH_INTERPOSE_CUDA_DRIVER_H
#define NCCLWATCH_INTERPOSE_CUDA_DRIVER_H

#include "visibility.h"
#include <cuda.h>

/* X(name, required, abi): required entry points are needed for tracking
 * at all; optional ones only fill the fingerprint. `abi` is the CUDA
 * version whose ABI the prototype below has: cuda.h declares
 * cuStreamGetCtx with the 9.2 ABI while 12.5 added a _v2 with three
 * arguments, which cuGetProcAddress would hand out for CUDA_VERSION. */
#define NW_CUDA_ENTRY_POINTS(X) \
	X(cuDriverGetVersion, 1, CUDA_VERSION) \
	X(cuCtxGetCurrent, 1, CUDA_VERSION) \
	X(cuCtxPushCurrent, 1, CUDA_VERSION) \
	X(cuCtxPopCurrent, 1, CUDA_VERSION) \
	X(cuStreamGetCtx, 1, 9020) \
	X(cuStreamIsCapturing, 1, CUDA_VERSION) \
	X(cuEventCreate, 1, CUDA_VERSION) \
	X(cuEventRecord, 1, CUDA_VERSION) \
	X(cuEventQuery, 1, CUDA_VERSION) \
	X(cuEventDestroy, 1, CUDA_VERSION) \
	X(cuDeviceGet, 0, CUDA_VERSION) \
	X(cuDeviceGetName, 0, CUDA_VERSION) \
	X(cuDeviceGetPCIBusId, 0, CUDA_VERSION) \
	X(cuDeviceGetUuid, 0, CUDA_VERSION) \
	X(cuGetErrorName, 0, CUDA_VERSION) \
	X(cuThreadExchangeStreamCaptureMode, 0, CUDA_VERSION) \
	X(cuEventRecordWithFlags, 0, CUDA_VERSION)

struct nw_cuda {
#define NW_CUDA_FIELD(name, required, abi) __typeof__(name) *name;
	NW_CUDA_ENTRY_POINTS(NW_CUDA_FIELD)
#undef NW_CUDA_FIELD
	int driver_version;           /* cuDriverGetVersion, 0 unknown */
};

/* The table, valid when nw_cuda_load() returned 1. */
extern NW_HIDDEN struct nw_cuda nw_cu;

/* Load the driver once (thread-safe). 1: every required entry point is
 * there; 0: none (one "ncclwatch:" line says why). NCCLWATCH_CUDA_LIB
 * names another library file to load, or "none". */
int nw_cuda_load(void);

/* Whether nw_cuda_load() succeeded (no loading). */
extern int nw_cuda_ok;

/* cuStreamGetCaptureInfo at the _v3 ABI (CUDA 12.3), which this driver
 * has, or the _v2 ABI (11.3) adapted to it; NULL if neither (loaded by
 * nw_cuda_load). Asked for the ABI the driver knows: a 12.2 driver asked
 * for 12.3 would hand out _v2 under the _v3 prototype. */
extern NW_HIDDEN CUresult (*nw_cuda_capture_info)(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                                                  CUgraph *graph);

/* Make ctx current if it is not: 1 pushed, 0 already current, -1 failed;
 * nw_cu_ctx_leave(that) undoes it. Inline: the tracked op's path. */
static inline int nw_cu_ctx_enter(CUcontext ctx)
{
	CUcontext cur = NULL;
	if (nw_cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == ctx)
		return 0;
	return nw_cu.cuCtxPushCurrent(ctx) == CUDA_SUCCESS ? 1 : -1;
}

static inline void nw_cu_ctx_leave(int pushed)
{
	CUcontext popped;
	if (pushed == 1)
		nw_cu.cuCtxPopCurrent(&popped);
}

/* A short name for a CUresult ("CUDA_ERROR_ILLEGAL_ADDRESS"), never NULL. */
const char *nw_cuda_error_name(CUresult r);

/* The name, PCI bus id and UUID of device ordinal `ordinal` (optional
 * entry points; fields left empty when unknown). */
void nw_cuda_device_info(int ordinal, char *name, size_t name_len, char *bus_id, size_t bus_len,
                         unsigned char uuid[16]);

#endif
