/* Contexts of the simulated CUDA driver: one primary context per visible
 * device (retain/release counted), the calling thread's context stack
 * (cuCtxSetCurrent replaces its top, Push/Pop), cuCtxGetDevice and
 * cuCtxSynchronize. A context whose retain count fell to zero stays usable
 * here (the real driver destroys it); nothing frees a context's memory. */
#include <stdlib.h>
#include <string.h>

#include "sim_cuda.h"

struct sim_ctx sim_contexts[SIM_MAX_DEVICES];

static __thread struct sim_ctx *ctx_stack[SIM_CTX_STACK_MAX];
static __thread int ctx_depth;

static pthread_mutex_t retain_mutex = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void contexts_init(void)
{
	for (int i = 0; i < SIM_MAX_DEVICES; i++) {
		pthread_mutex_init(&sim_contexts[i].lock, NULL);
		pthread_cond_init(&sim_contexts[i].progress, NULL);
		sim_contexts[i].device = i;
	}
}

void sim_ctx_reset_all(void)
{
	pthread_mutex_init(&retain_mutex, NULL);
	memset(sim_contexts, 0, sizeof sim_contexts); /* parent's streams leak */
	contexts_init();
	ctx_depth = 0;
}

struct sim_ctx *sim_ctx_current(void)
{
	return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
}

struct sim_ctx *sim_ctx_from_handle(CUcontext handle)
{
	struct sim_ctx *c = (struct sim_ctx *)handle;
	if (c < sim_contexts || c >= sim_contexts + sim_device_count)
		return NULL;
	if ((size_t)((char *)c - (char *)sim_contexts) % sizeof *c)
		return NULL;
	return c;
}

CUresult sim_ctx_sticky(struct sim_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	CUresult r = ctx->sticky;
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

SIM_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= sim_device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&retain_mutex);
	sim_contexts[dev].retains++;
	pthread_mutex_unlock(&retain_mutex);
	*pctx = (CUcontext)&sim_contexts[dev];
	return CUDA_SUCCESS;
}

SIM_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	SIM_REQUIRE_INIT();
	if (dev < 0 || dev >= sim_device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	CUresult r = CUDA_SUCCESS;
	pthread_mutex_lock(&retain_mutex);
	if (sim_contexts[dev].retains > 0)
		sim_contexts[dev].retains--;
	else
		r = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&retain_mutex);
	return r;
}

SIM_API CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	SIM_REQUIRE_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	*pctx = (CUcontext)sim_ctx_current();
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxSetCurrent(CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	if (!ctx) { /* the driver pops the top, or does nothing on an empty stack */
		if (ctx_depth > 0)
			ctx_depth--;
		return CUDA_SUCCESS;
	}
	struct sim_ctx *c = sim_ctx_from_handle(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx_depth == 0)
		ctx_depth = 1;
	ctx_stack[ctx_depth - 1] = c;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxPushCurrent(CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	struct sim_ctx *c = sim_ctx_from_handle(ctx);
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx_depth >= SIM_CTX_STACK_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx_stack[ctx_depth++] = c;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuCtxPopCurrent(CUcontext *pctx)
{
	SIM_REQUIRE_INIT();
	if (ctx_depth == 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	struct sim_ctx *c = ctx_stack[--ctx_depth];
	if (pctx)
		*pctx = (CUcontext)c;
	return CUDA_SUCCESS;
}

/* The CUDA 2.0 spelling: the current context's device. */
SIM_API CUresult cuCtxGetDevice(CUdevice *device)
{
	SIM_REQUIRE_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_ctx *c = sim_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = c->device;
	return CUDA_SUCCESS;
}

/* CUDA 13: an explicit context, or NULL for the current one. */
SIM_API CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_ctx *c = ctx ? sim_ctx_from_handle(ctx) : sim_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = c->device;
	return CUDA_SUCCESS;
}

/* Waits until every stream of the context drained (or the context faulted). */
static CUresult ctx_synchronize(struct sim_ctx *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->pending > 0 && c->sticky == CUDA_SUCCESS)
		pthread_cond_wait(&c->progress, &c->lock);
	CUresult r = c->sticky;
	pthread_mutex_unlock(&c->lock);
	return r;
}

SIM_API CUresult cuCtxSynchronize(void)
{
	SIM_REQUIRE_INIT();
	struct sim_ctx *c = sim_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	return ctx_synchronize(c);
}

SIM_API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	SIM_REQUIRE_INIT();
	struct sim_ctx *c = ctx ? sim_ctx_from_handle(ctx) : sim_ctx_current();
	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	return ctx_synchronize(c);
}
