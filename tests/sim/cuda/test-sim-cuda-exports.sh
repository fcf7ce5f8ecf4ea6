#!/bin/sh
# The simulated libcuda.so.1 has the real soname and exports exactly the
# driver API (both spellings where the real driver has both) and the
# sim_stream.h extension: nothing else a program could bind to.
. "$NW_ROOT/tests/lib.sh"
lib="$NW_SIM/libcuda.so.1"
[ -f "$lib" ] || fail "$lib not built"
readelf -d "$lib" | grep -q 'SONAME.*\[libcuda.so.1\]' || fail "soname is not libcuda.so.1"
nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$T/exports"
grep -Ev '^(cu[A-Z][A-Za-z0-9_]*|simStream(Enqueue|EnqueueReplayable|Capturing|Device))$' "$T/exports" > "$T/extra" && \
	fail "unexpected exports: $(tr '\n' ' ' < "$T/extra")"
for name in cuInit cuDriverGetVersion cuDeviceGet cuDeviceGetCount cuDeviceGetName \
	cuDeviceGetPCIBusId cuDeviceGetUuid cuDeviceGetUuid_v2 cuDevicePrimaryCtxRetain \
	cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2 cuCtxGetCurrent cuCtxSetCurrent \
	cuCtxPushCurrent cuCtxPushCurrent_v2 cuCtxPopCurrent cuCtxPopCurrent_v2 cuCtxGetDevice \
	cuCtxSynchronize cuStreamCreate cuStreamDestroy cuStreamDestroy_v2 cuStreamSynchronize \
	cuStreamQuery cuStreamGetCtx cuStreamGetCtx_v2 cuStreamIsCapturing cuStreamBeginCapture \
	cuStreamBeginCapture_v2 cuStreamEndCapture cuStreamWaitEvent cuEventCreate cuEventRecord cuEventRecordWithFlags \
	cuEventQuery cuEventSynchronize cuEventDestroy cuEventDestroy_v2 cuMemAlloc cuMemAlloc_v2 \
	cuMemFree cuMemFree_v2 cuMemcpyHtoD cuMemcpyHtoD_v2 cuMemcpyDtoH cuMemcpyDtoH_v2 \
	cuMemsetD8 cuMemsetD8_v2 cuGetErrorString cuGetErrorName cuGetProcAddress \
	cuGetProcAddress_v2 cuGraphDestroy cuStreamQuery_ptsz cuStreamSynchronize_ptsz \
	cuEventRecord_ptsz cuStreamWaitEvent_ptsz cuMemcpyHtoD_v2_ptds cuMemcpyDtoH_v2_ptds \
	cuGraphInstantiate cuGraphInstantiate_v2 cuGraphInstantiateWithFlags cuGraphInstantiateWithParams \
	cuGraphInstantiateWithParams_ptsz cuGraphLaunch cuGraphLaunch_ptsz cuGraphExecDestroy \
	cuGraphExecUpdate cuGraphExecUpdate_v2 cuGraphUpload cuGraphUpload_ptsz cuGraphGetNodes \
	cuStreamGetCaptureInfo cuStreamGetCaptureInfo_v2 cuStreamGetCaptureInfo_v3 cuStreamGetCaptureInfo_v3_ptsz \
	cuThreadExchangeStreamCaptureMode \
	simStreamEnqueue simStreamEnqueueReplayable simStreamCapturing simStreamDevice; do
	grep -qx "$name" "$T/exports" || fail "$name is not exported"
done
# Every name we export is one the real driver exports too (its stub library
# in the toolkit lists them), when the toolkit has the stub.
stub=$(ls "$CUDA_HOME"/lib64/stubs/libcuda.so "$CUDA_HOME"/lib/stubs/libcuda.so 2>/dev/null | head -n 1)
if [ -n "$stub" ]; then
	nm -D --defined-only "$stub" | awk '{print $3}' | sort > "$T/real"
	grep '^cu' "$T/exports" | comm -23 - "$T/real" > "$T/unknown"
	[ -s "$T/unknown" ] && fail "not in the real driver: $(tr '\n' ' ' < "$T/unknown")"
fi
echo "ok: $(wc -l < "$T/exports") exports"
