/* The simulated CUDA driver's extension for the simulated NCCL: how NCCL
 * puts work on a stream. Exported by tests/sim/libcuda.so.1 only (the real
 * driver has nothing like it); libnccl.so.2 (simulated) links against it.
 *
 * A stream is an in-order queue executed by its own worker thread, like a
 * GPU executes kernels. A work item may block (a collective waiting for its
 * peers): everything queued behind it on the same stream waits too, exactly
 * as on a GPU, and events recorded behind it stay CUDA_ERROR_NOT_READY.
 */
#ifndef NCCLSIM_SIM_STREAM_H
#define NCCLSIM_SIM_STREAM_H

#include <cuda.h>

/* A work item. It returns CUDA_SUCCESS, or an error that becomes the
 * context's sticky error (as after an illegal address on a GPU): from then
 * on every event query/sync, stream query/sync and event record in that
 * context returns it, and later work items on its streams are dropped. */
typedef CUresult (*simWorkFn)(void *arg);

/* Queue fn(arg) at the end of `stream` (NULL: the current context's default
 * stream). Returns at once. While the stream is being captured
 * (cuStreamBeginCapture), the item is not run: it goes into the graph
 * cuStreamEndCapture returns and runs when that graph is launched
 * (cuGraphInstantiate, cuGraphLaunch; once: simStreamEnqueueReplayable
 * for work a graph may run again), or is handed to `drop(arg)`
 * when the graph is destroyed unlaunched, so the caller can free it; drop
 * may be NULL.
 * Returns CUDA_SUCCESS, CUDA_ERROR_INVALID_HANDLE for a destroyed stream, or
 * the sticky error of a faulted context. On an error return nothing was
 * queued and drop is not called: arg stays the caller's. An item queued
 * before a fault but not yet run when it happens is handed to drop(arg). */
CUresult simStreamEnqueue(CUstream stream, simWorkFn fn, void (*drop)(void *arg), void *arg);

/* As simStreamEnqueue, for work a graph may run again: while the stream is
 * captured, the item becomes a template that each launch of an executable
 * graph made from it runs anew, as fn(replay(arg)): replay returns a fresh
 * argument for one run (NULL: out of memory, the launch fails) whose
 * drop is `drop` too. The template itself never runs; drop(arg) is called
 * for it when its graph (or executable graph) is destroyed. Outside capture
 * it is simStreamEnqueue (replay is not called). */
CUresult simStreamEnqueueReplayable(CUstream stream, simWorkFn fn, void (*drop)(void *arg),
                                    void *(*replay)(void *arg), void *arg);

/* 1 if `stream` is being captured right now, else 0. */
int simStreamCapturing(CUstream stream);

/* The CUDA device ordinal of the context that owns `stream` (NULL: current
 * context), or -1. */
int simStreamDevice(CUstream stream);

#endif /* NCCLSIM_SIM_STREAM_H */
