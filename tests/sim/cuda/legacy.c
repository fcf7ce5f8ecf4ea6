/* The older spellings of the simulated driver's entry points, which the
 * real libcuda.so.1 still exports next to the versioned names cuda.h maps
 * to (cuMemAlloc beside cuMemAlloc_v2, cuCtxPushCurrent beside
 * cuCtxPushCurrent_v2, ...). Built with __CUDA_API_VERSION_INTERNAL, as the
 * driver itself is, so that cuda.h declares these old prototypes and the
 * compiler checks them. Each forwards to the current implementation; the
 * 32-bit pointer memory calls allocate below 4 GiB. */
#include <stdint.h>

#include "sim_cuda.h"
#include "sim_memory.h"

#ifndef __CUDA_API_VERSION_INTERNAL
#error "legacy.c must be built with -D__CUDA_API_VERSION_INTERNAL"
#endif

SIM_API CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
	SIM_REQUIRE_INIT();
	uintptr_t p = 0;
	CUresult r = sim_memory_alloc(dptr ? &p : NULL, bytesize, 1);
	if (r != CUDA_SUCCESS)
		return r;
	if (p > UINT32_MAX) { /* MAP_32BIT was not honoured */
		sim_memory_free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*dptr = (CUdeviceptr_v1)p;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
	SIM_REQUIRE_INIT();
	return sim_memory_free((uintptr_t)dptr);
}

SIM_API CUresult cuMemcpyHtoD(CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
	SIM_REQUIRE_INIT();
	return sim_memory_copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
}

SIM_API CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
	SIM_REQUIRE_INIT();
	return sim_memory_copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
}

SIM_API CUresult cuMemsetD8(CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
	SIM_REQUIRE_INIT();
	return sim_memory_set((void *)(uintptr_t)dstDevice, uc, N);
}

SIM_API CUresult cuCtxPopCurrent(CUcontext *pctx) { return cuCtxPopCurrent_v2(pctx); }
SIM_API CUresult cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }
SIM_API CUresult cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }
SIM_API CUresult cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }
SIM_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
SIM_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

/* CUDA 10.0: no mode argument, global capture. */
SIM_API CUresult cuStreamBeginCapture(CUstream hStream)
{
	return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

/* CUDA 11.3: no symbolStatus. */
SIM_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

/* The per-thread-default-stream spellings (programs built with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM call these). The simulation has one
 * default stream per context, so NULL means that stream here too. */
SIM_API CUresult cuStreamQuery_ptsz(CUstream hStream) { return cuStreamQuery(hStream); }
SIM_API CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return cuStreamSynchronize(hStream); }
SIM_API CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx) { return cuStreamGetCtx(hStream, pctx); }
SIM_API CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
	return cuStreamGetCtx_v2(hStream, pCtx, pGreenCtx);
}
SIM_API CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	return cuStreamWaitEvent(hStream, hEvent, Flags);
}
SIM_API CUresult cuStreamBeginCapture_ptsz(CUstream hStream)
{
	return cuStreamBeginCapture_v2(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
SIM_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
	return cuStreamBeginCapture_v2(hStream, mode);
}
SIM_API CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph) { return cuStreamEndCapture(hStream, phGraph); }
SIM_API CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	return cuStreamIsCapturing(hStream, captureStatus);
}
SIM_API CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return cuEventRecord(hEvent, hStream); }
SIM_API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return cuMemcpyHtoD_v2(dstDevice, srcHost, ByteCount);
}
SIM_API CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return cuMemcpyDtoH_v2(dstHost, srcDevice, ByteCount);
}
SIM_API CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return cuMemsetD8_v2(dstDevice, uc, N);
}

SIM_API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return cuGraphLaunch(hGraphExec, hStream); }
SIM_API CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
	return cuLaunchHostFunc(hStream, fn, userData);
}

/* Instantiation: cuGraphInstantiate (10.0) and _v2 (11.0) take an error
 * node and a log buffer; cuda.h 12 maps cuGraphInstantiate to
 * cuGraphInstantiateWithFlags; WithParams (12.0) reports its result in the
 * parameters. All instantiate the same way here. */
SIM_API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                    char *logBuffer, size_t bufferSize)
{
	if (phErrorNode)
		*phErrorNode = NULL;
	if (logBuffer && bufferSize)
		logBuffer[0] = 0;
	return cuGraphInstantiateWithFlags(phGraphExec, hGraph, 0);
}
SIM_API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                       char *logBuffer, size_t bufferSize)
{
	return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
SIM_API CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	if (params->hUploadStream) /* upload is not simulated: refuse rather than ignore */
		return CUDA_ERROR_NOT_SUPPORTED;
	CUresult r = cuGraphInstantiateWithFlags(phGraphExec, hGraph, params->flags);
	params->hErrNode_out = NULL;
	params->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
	return r;
}
SIM_API CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
	return cuGraphInstantiateWithParams(phGraphExec, hGraph, params);
}

/* cuStreamGetCaptureInfo: 10.1 (status, id), 11.3 _v2 (+ graph,
 * dependencies), 12.3 _v3 (+ edge data). No dependencies are reported. */
static CUresult capture_info(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *ndeps)
{
	CUresult r = sim_stream_capture_info(hStream, status, id, graph);
	if (r == CUDA_SUCCESS) {
		if (deps)
			*deps = NULL;
		if (edges)
			*edges = NULL;
		if (ndeps)
			*ndeps = 0;
	}
	return r;
}
SIM_API CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id)
{
	return capture_info(hStream, status, id, NULL, NULL, NULL, NULL);
}
SIM_API CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id)
{
	return capture_info(hStream, status, id, NULL, NULL, NULL, NULL);
}
SIM_API CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                           CUgraph *graph, const CUgraphNode **deps, size_t *ndeps)
{
	return capture_info(hStream, status, id, graph, deps, NULL, ndeps);
}
SIM_API CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                                CUgraph *graph, const CUgraphNode **deps, size_t *ndeps)
{
	return capture_info(hStream, status, id, graph, deps, NULL, ndeps);
}
SIM_API CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                           CUgraph *graph, const CUgraphNode **deps,
                                           const CUgraphEdgeData **edges, size_t *ndeps)
{
	return capture_info(hStream, status, id, graph, deps, edges, ndeps);
}
SIM_API CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                                CUgraph *graph, const CUgraphNode **deps,
                                                const CUgraphEdgeData **edges, size_t *ndeps)
{
	return capture_info(hStream, status, id, graph, deps, edges, ndeps);
}

/* cuGraphExecUpdate: 10.2 reports the error node and the result apart,
 * 12.0 (_v2, what cuda.h maps the name to) in one result info. */
SIM_API CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                                   CUgraphExecUpdateResult *updateResult_out)
{
	CUgraphNode node = NULL;
	CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_ERROR;
	if (!hErrorNode_out || !updateResult_out)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = sim_graph_exec_update(hGraphExec, hGraph, &result, &node);
	*hErrorNode_out = node;
	*updateResult_out = result;
	return r;
}
SIM_API CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{
	CUgraphNode node = NULL;
	CUgraphExecUpdateResult result = CU_GRAPH_EXEC_UPDATE_ERROR;
	if (!resultInfo)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = sim_graph_exec_update(hGraphExec, hGraph, &result, &node);
	resultInfo->result = result;
	resultInfo->errorNode = node;
	resultInfo->errorFromNode = NULL;
	return r;
}
SIM_API CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return cuGraphUpload(hGraphExec, hStream); }
