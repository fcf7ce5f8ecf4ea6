/* Streams of the simulated CUDA driver, and the sim_stream.h extension the
 * simulated NCCL uses to put work on them.
 *
 * A stream is an in-order queue of work items run by its own worker thread,
 * started at the first item, the way a GPU runs kernels. Each context's
 * NULL (default) stream is an ordinary stream here: it does not synchronise
 * with the context's other streams as the legacy default stream does.
 *
 * A work item may block forever (a hung collective). The process can still
 * exit: workers are detached and nothing ever joins or waits for them at
 * exit. cuStreamDestroy returns at once; the worker finishes what is queued
 * and then frees the stream.
 *
 * Capture: while a stream is captured its work items are kept, not run, as
 * on a GPU: cuStreamEndCapture moves them into the graph it returns,
 * cuGraphInstantiate into an executable graph, and cuGraphLaunch queues
 * them on the launch stream, in capture order: captured work runs only when
 * its graph is launched. Work queued with a replay function
 * (simStreamEnqueueReplayable: NCCL ops, host functions) stays in the
 * executable graph as a template, and every launch queues a fresh copy of
 * each item (replay(arg)), so the graph can be launched any number of
 * times, as on a GPU. An executable graph holding an item without one
 * (plain simStreamEnqueue, a captured event wait) runs once: a second
 * launch is refused (CUDA_ERROR_NOT_SUPPORTED), and so is instantiating a
 * graph holding work twice. Templates and work never launched are handed to
 * drop() when their graph (or executable graph) is destroyed.
 *
 * cuGraphExecUpdate gives an executable graph the work of another graph of
 * the same topology (here: as many nodes, each of the same type, a node's
 * type being its item's function: an NCCL op, a host function...), which
 * then runs at its next launches, as CUDA updates a node's parameters (an
 * NCCL kernel's count, a host function's argument). A different node count
 * fails with CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, a different type
 * with _NODE_TYPE_CHANGED (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE), and the
 * executable graph is left as it was. The work moves out of the graph as
 * at instantiation: a graph holding work that was instantiated (or used
 * for an update) cannot be used again (CUDA_ERROR_NOT_SUPPORTED).
 * cuGraphUpload checks its handles and runs nothing. cuGraphGetNodes gives
 * a graph's node count (no node handles).
 *
 * The graph a capture builds exists from cuStreamBeginCapture on (as in
 * CUDA, where cuStreamGetCaptureInfo names it); it becomes a valid handle
 * at cuStreamEndCapture.
 */
#include <stdlib.h>

#include "sim_cuda.h"

struct sim_graph {
	size_t nodes;            /* work items captured */
	struct sim_item *items;  /* in issue order; NULL once instantiated */
	int instantiated;
};

struct sim_graph_exec {
	size_t nodes;
	simWorkFn *types;        /* each node's type: its item's fn (cuGraphExecUpdate compares them) */
	struct sim_item *items;  /* in issue order; templates when replayable, else NULL once launched */
	int replayable;          /* every item has a replay function */
	int launched;
};

static atomic_ullong capture_ids;

static int is_default_handle(CUstream h)
{
	return h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD;
}

static struct sim_stream *stream_new(struct sim_ctx *ctx, unsigned flags, int is_default)
{
	struct sim_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->ctx = ctx;
	s->flags = flags;
	s->is_default = is_default;
	pthread_cond_init(&s->wake, NULL);
	return s;
}

static void stream_free(struct sim_stream *s)
{
	pthread_cond_destroy(&s->wake);
	free(s);
}

/* A destroyed stream is freed by whoever last lets go of it: its worker,
 * a sleeping caller, or cuStreamDestroy itself when nothing is queued. */
static int stream_can_free_locked(const struct sim_stream *s)
{
	return s->destroyed && !s->worker_running && s->users == 0 && !s->head;
}

CUresult sim_stream_lock_registry_held(CUstream handle, struct sim_stream **out)
{
	if (is_default_handle(handle)) {
		struct sim_ctx *ctx = sim_ctx_current();
		if (!ctx)
			return CUDA_ERROR_INVALID_CONTEXT;
		pthread_mutex_lock(&ctx->lock);
		if (!ctx->default_stream && !(ctx->default_stream = stream_new(ctx, 0, 1))) {
			pthread_mutex_unlock(&ctx->lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		*out = ctx->default_stream;
		return CUDA_SUCCESS;
	}
	if (!sim_registry_has(SIM_KIND_STREAM, handle))
		return CUDA_ERROR_INVALID_HANDLE;
	struct sim_stream *s = (struct sim_stream *)handle;
	pthread_mutex_lock(&s->ctx->lock);
	*out = s;
	return CUDA_SUCCESS;
}

CUresult sim_stream_lock(CUstream handle, struct sim_stream **out)
{
	sim_registry_lock();
	CUresult r = sim_stream_lock_registry_held(handle, out);
	sim_registry_unlock();
	return r;
}

void sim_stream_unlock(struct sim_stream *s)
{
	int free_it = stream_can_free_locked(s);
	pthread_mutex_unlock(&s->ctx->lock);
	if (free_it)
		stream_free(s);
}

static void *stream_worker(void *arg)
{
	struct sim_stream *s = arg;
	struct sim_ctx *ctx = s->ctx;
	pthread_setname_np(pthread_self(), "ncclsim-stream");
	pthread_mutex_lock(&ctx->lock);
	for (;;) {
		while (!s->head && !s->destroyed)
			pthread_cond_wait(&s->wake, &ctx->lock);
		if (!s->head)
			break; /* destroyed and drained */
		struct sim_item *item = s->head;
		s->head = item->next;
		if (!s->head)
			s->tail = NULL;
		CUresult sticky = ctx->sticky;
		CUresult r = CUDA_SUCCESS;
		if (item->reached_locked) {
			item->reached_locked(item->arg, sticky == CUDA_SUCCESS);
		} else {
			pthread_mutex_unlock(&ctx->lock);
			if (sticky != CUDA_SUCCESS) {
				/* a faulted context drops its queued work */
				if (item->drop)
					item->drop(item->arg);
			} else {
				r = item->fn(item->arg);
			}
			pthread_mutex_lock(&ctx->lock);
		}
		free(item);
		if (r != CUDA_SUCCESS && ctx->sticky == CUDA_SUCCESS)
			ctx->sticky = r;
		s->finished++;
		ctx->pending--;
		pthread_cond_broadcast(&ctx->progress);
	}
	s->worker_running = 0;
	sim_stream_unlock(s);
	return NULL;
}

static CUresult start_worker_locked(struct sim_stream *s)
{
	pthread_attr_t attr;
	pthread_t tid;
	if (pthread_attr_init(&attr) != 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int rc = pthread_create(&tid, &attr, stream_worker, s);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		sim_warn("cannot start a stream worker thread (error %d)", rc);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	s->worker_running = 1;
	return CUDA_SUCCESS;
}

static CUresult enqueue_item_locked(struct sim_stream *s, struct sim_item *item)
{
	if (s->capturing) {
		item->next = s->captured;
		s->captured = item;
		s->captured_count++;
		return CUDA_SUCCESS;
	}
	if (!s->worker_running) {
		CUresult r = start_worker_locked(s);
		if (r != CUDA_SUCCESS)
			return r;
	}
	if (s->tail)
		s->tail->next = item;
	else
		s->head = item;
	s->tail = item;
	s->queued++;
	s->ctx->pending++;
	pthread_cond_signal(&s->wake);
	return CUDA_SUCCESS;
}

/* Queue a copy of `tmpl` unless the context has faulted. */
static CUresult enqueue_copy_locked(struct sim_stream *s, const struct sim_item *tmpl)
{
	if (s->ctx->sticky != CUDA_SUCCESS)
		return s->ctx->sticky;
	struct sim_item *item = malloc(sizeof *item);
	if (!item)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*item = *tmpl;
	CUresult r = enqueue_item_locked(s, item);
	if (r != CUDA_SUCCESS)
		free(item);
	return r;
}

CUresult sim_stream_enqueue_locked(struct sim_stream *s, simWorkFn fn,
                                   void (*drop)(void *), void *(*replay)(void *), void *arg)
{
	return enqueue_copy_locked(s, &(struct sim_item){ .fn = fn, .drop = drop, .replay = replay, .arg = arg });
}

/* Markers are never captured: cuEventRecord does not queue one then. */
CUresult sim_stream_enqueue_marker_locked(struct sim_stream *s,
                                          void (*reached_locked)(void *arg, int ran), void *arg)
{
	return enqueue_copy_locked(s, &(struct sim_item){ .reached_locked = reached_locked, .arg = arg });
}

/* An event-record node (captured only): a marker whose arg each launch
 * makes anew (replay), reached like a marker. */
CUresult sim_stream_enqueue_node_locked(struct sim_stream *s, void (*reached_locked)(void *arg, int ran),
                                        void (*drop)(void *arg), void *(*replay)(void *arg), void *arg)
{
	return enqueue_copy_locked(s, &(struct sim_item){ .reached_locked = reached_locked, .drop = drop,
	                                                  .replay = replay, .arg = arg });
}

CUresult sim_stream_wait_locked(struct sim_stream *s)
{
	struct sim_ctx *ctx = s->ctx;
	if (ctx->sticky != CUDA_SUCCESS)
		return ctx->sticky;
	if (s->capturing) { /* illegal during capture; invalidates it */
		s->capture_invalidated = 1;
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	uint64_t target = s->queued;
	s->users++;
	while (s->finished < target && ctx->sticky == CUDA_SUCCESS)
		pthread_cond_wait(&ctx->progress, &ctx->lock);
	s->users--;
	return ctx->sticky;
}

/* Hands captured items to their drop(), outside any lock: drop belongs to
 * the caller and may call back into the driver. */
static void drop_items(struct sim_item *item)
{
	while (item) {
		struct sim_item *next = item->next;
		if (item->drop)
			item->drop(item->arg);
		free(item);
		item = next;
	}
}

/* The captured list is kept newest first; drop in issue order. */
static struct sim_item *reverse(struct sim_item *item)
{
	struct sim_item *out = NULL;
	while (item) {
		struct sim_item *next = item->next;
		item->next = out;
		out = item;
		item = next;
	}
	return out;
}

/* ---- sim_stream.h ----------------------------------------------------- */

SIM_API CUresult simStreamEnqueue(CUstream stream, simWorkFn fn, void (*drop)(void *arg), void *arg)
{
	SIM_REQUIRE_INIT();
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(stream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	r = sim_stream_enqueue_locked(s, fn, drop, NULL, arg);
	sim_stream_unlock(s);
	return r;
}

SIM_API CUresult simStreamEnqueueReplayable(CUstream stream, simWorkFn fn, void (*drop)(void *arg),
                                            void *(*replay)(void *arg), void *arg)
{
	SIM_REQUIRE_INIT();
	if (!fn || !replay)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(stream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	r = sim_stream_enqueue_locked(s, fn, drop, replay, arg);
	sim_stream_unlock(s);
	return r;
}

SIM_API int simStreamCapturing(CUstream stream)
{
	if (!atomic_load(&sim_initialized) || is_default_handle(stream))
		return 0; /* the default stream cannot be captured */
	struct sim_stream *s;
	if (sim_stream_lock(stream, &s) != CUDA_SUCCESS)
		return 0;
	int capturing = s->capturing;
	sim_stream_unlock(s);
	return capturing;
}

SIM_API int simStreamDevice(CUstream stream)
{
	if (!atomic_load(&sim_initialized))
		return -1;
	if (is_default_handle(stream)) {
		struct sim_ctx *ctx = sim_ctx_current();
		return ctx ? ctx->device : -1;
	}
	struct sim_stream *s;
	if (sim_stream_lock(stream, &s) != CUDA_SUCCESS)
		return -1;
	int device = s->ctx->device;
	sim_stream_unlock(s);
	return device;
}

/* ---- driver API --------------------------------------------------------- */

SIM_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	SIM_REQUIRE_INIT();
	if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_ctx *ctx = sim_ctx_current();
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	CUresult sticky = sim_ctx_sticky(ctx);
	if (sticky != CUDA_SUCCESS)
		return sticky;
	struct sim_stream *s = stream_new(ctx, Flags, 0);
	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_registry_lock();
	sim_registry_add(SIM_KIND_STREAM, s);
	sim_registry_unlock();
	*phStream = (CUstream)s;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamDestroy(CUstream hStream)
{
	SIM_REQUIRE_INIT();
	if (is_default_handle(hStream))
		return CUDA_ERROR_INVALID_HANDLE;
	sim_registry_lock();
	if (!sim_registry_remove(SIM_KIND_STREAM, hStream)) {
		sim_registry_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	struct sim_stream *s = (struct sim_stream *)hStream;
	pthread_mutex_lock(&s->ctx->lock);
	sim_registry_unlock();
	s->destroyed = 1;
	struct sim_item *captured = reverse(s->captured);
	s->captured = NULL;
	s->captured_count = 0;
	s->capturing = 0;
	free(s->capture_graph);
	s->capture_graph = NULL;
	pthread_cond_signal(&s->wake);
	sim_stream_unlock(s); /* frees it now if nothing is queued */
	drop_items(captured);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamQuery(CUstream hStream)
{
	SIM_REQUIRE_INIT();
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (s->ctx->sticky != CUDA_SUCCESS) {
		r = s->ctx->sticky;
	} else if (s->capturing) {
		s->capture_invalidated = 1;
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	} else {
		r = s->finished == s->queued ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	}
	sim_stream_unlock(s);
	return r;
}

SIM_API CUresult cuStreamSynchronize(CUstream hStream)
{
	SIM_REQUIRE_INIT();
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	r = sim_stream_wait_locked(s);
	sim_stream_unlock(s);
	return r;
}

static CUresult stream_get_ctx(CUstream hStream, CUcontext *pctx)
{
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	*pctx = (CUcontext)s->ctx;
	sim_stream_unlock(s);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	SIM_REQUIRE_INIT();
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	return stream_get_ctx(hStream, pctx);
}

/* CUDA 12.5: also the green context, which the simulation never has. */
SIM_API CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
	SIM_REQUIRE_INIT();
	if (!pCtx && !pGreenCtx)
		return CUDA_ERROR_INVALID_VALUE;
	CUcontext ctx;
	CUresult r = stream_get_ctx(hStream, &ctx);
	if (r != CUDA_SUCCESS)
		return r;
	if (pCtx)
		*pCtx = ctx;
	if (pGreenCtx)
		*pGreenCtx = NULL;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
	SIM_REQUIRE_INIT();
	if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	if (is_default_handle(hStream))
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* as for the legacy stream */
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (s->ctx->sticky != CUDA_SUCCESS) {
		r = s->ctx->sticky;
	} else if (s->capturing) {
		r = CUDA_ERROR_ILLEGAL_STATE;
	} else if (!(s->capture_graph = calloc(1, sizeof *s->capture_graph))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		s->capturing = 1;
		s->capture_invalidated = 0;
		s->capture_id = atomic_fetch_add(&capture_ids, 1) + 1;
	}
	sim_stream_unlock(s);
	return r;
}


SIM_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	SIM_REQUIRE_INIT();
	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (!s->capturing) {
		sim_stream_unlock(s);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	struct sim_item *captured = reverse(s->captured);
	size_t nodes = s->captured_count;
	int invalidated = s->capture_invalidated;
	struct sim_graph *g = s->capture_graph;
	s->captured = NULL;
	s->captured_count = 0;
	s->capturing = 0;
	s->capture_invalidated = 0;
	s->capture_graph = NULL;
	sim_stream_unlock(s);

	*phGraph = NULL;
	if (invalidated) {
		free(g);
		drop_items(captured);
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	}
	g->nodes = nodes;
	g->items = captured;
	sim_registry_lock();
	sim_registry_add(SIM_KIND_GRAPH, g);
	sim_registry_unlock();
	*phGraph = (CUgraph)g;
	return CUDA_SUCCESS;
}

/* The calling thread's capture interaction mode, exchanged as the driver
 * does (CUDA 10.1). Kept only: the simulation does not refuse the calls a
 * mode forbids while another capture runs. */
static __thread CUstreamCaptureMode thread_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

SIM_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	SIM_REQUIRE_INIT();
	if (!mode || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL && *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	              *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
		return CUDA_ERROR_INVALID_VALUE;
	CUstreamCaptureMode old = thread_capture_mode;
	thread_capture_mode = *mode;
	*mode = old;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	SIM_REQUIRE_INIT();
	if (!captureStatus)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	*captureStatus = !s->capturing          ? CU_STREAM_CAPTURE_STATUS_NONE
	                 : s->capture_invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
	                                          : CU_STREAM_CAPTURE_STATUS_ACTIVE;
	sim_stream_unlock(s);
	return CUDA_SUCCESS;
}

/* cuStreamGetCaptureInfo (every ABI: legacy.c): status, id and the graph
 * being built; no dependency nodes (the simulation's graphs are lists). */
CUresult sim_stream_capture_info(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                 CUgraph *graph)
{
	SIM_REQUIRE_INIT();
	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	*status = !s->capturing          ? CU_STREAM_CAPTURE_STATUS_NONE
	          : s->capture_invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
	                                   : CU_STREAM_CAPTURE_STATUS_ACTIVE;
	if (s->capturing && id)
		*id = s->capture_id;
	if (s->capturing && graph)
		*graph = (CUgraph)s->capture_graph;
	sim_stream_unlock(s);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphDestroy(CUgraph hGraph)
{
	SIM_REQUIRE_INIT();
	sim_registry_lock();
	int known = hGraph && sim_registry_remove(SIM_KIND_GRAPH, hGraph);
	sim_registry_unlock();
	if (!known)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_graph *g = (struct sim_graph *)hGraph;
	drop_items(g->items); /* captured, never instantiated */
	free(g);
	return CUDA_SUCCESS;
}

/* The node count (nodes NULL) a test compares; the simulation's nodes
 * have no handles to give. */
SIM_API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	SIM_REQUIRE_INIT();
	if (!numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	sim_registry_lock();
	int known = hGraph && sim_registry_has(SIM_KIND_GRAPH, hGraph);
	size_t n = known ? ((struct sim_graph *)hGraph)->nodes : 0;
	sim_registry_unlock();
	if (!known)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes) {
		sim_warn("cuGraphGetNodes: the simulation's nodes have no handles (pass nodes=NULL for the count)");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	*numNodes = n;
	return CUDA_SUCCESS;
}

/* The exec runs g's work from now on (registry lock held; e->types has
 * room for g->nodes). */
static void exec_take_items(struct sim_graph_exec *e, struct sim_graph *g)
{
	e->items = g->items;
	e->replayable = 1;
	e->launched = 0;
	size_t n = 0;
	for (struct sim_item *i = e->items; i; i = i->next) {
		e->replayable &= i->replay != NULL;
		e->types[n++] = i->fn;
	}
	g->items = NULL;
	g->instantiated = 1;
}

SIM_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
	SIM_REQUIRE_INIT();
	(void)flags;
	if (!phGraphExec)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_graph_exec *e = calloc(1, sizeof *e);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sim_registry_lock();
	struct sim_graph *g = (struct sim_graph *)hGraph;
	CUresult r = CUDA_SUCCESS;
	if (!hGraph || !sim_registry_has(SIM_KIND_GRAPH, hGraph)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (g->instantiated && g->nodes > 0) {
		sim_warn("cuGraphInstantiate: a graph holding work is instantiated once in the simulation");
		r = CUDA_ERROR_NOT_SUPPORTED;
	} else if (g->nodes && !(e->types = malloc(g->nodes * sizeof *e->types))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		e->nodes = g->nodes;
		exec_take_items(e, g);
		sim_registry_add(SIM_KIND_GRAPH_EXEC, e);
	}
	sim_registry_unlock();
	if (r != CUDA_SUCCESS) {
		free(e);
		return r;
	}
	*phGraphExec = (CUgraphExec)e;
	return CUDA_SUCCESS;
}

/* Fresh copies of an executable graph's templates for one launch, in
 * order (registry lock held: the exec cannot go away meanwhile). */
static CUresult replay_items(const struct sim_item *tmpl, struct sim_item **out)
{
	struct sim_item *head = NULL, **tail = &head;
	for (; tmpl; tmpl = tmpl->next) {
		struct sim_item *item = malloc(sizeof *item);
		void *arg = item ? tmpl->replay(tmpl->arg) : NULL;
		if (!arg) {
			free(item);
			drop_items(head);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		*item = *tmpl;
		item->arg = arg;
		item->next = NULL;
		*tail = item;
		tail = &item->next;
	}
	*out = head;
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	SIM_REQUIRE_INIT();
	sim_registry_lock();
	struct sim_graph_exec *e = (struct sim_graph_exec *)hGraphExec;
	CUresult r = CUDA_SUCCESS;
	struct sim_item *items = NULL;
	if (!hGraphExec || !sim_registry_has(SIM_KIND_GRAPH_EXEC, hGraphExec)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (e->replayable) {
		r = replay_items(e->items, &items);
	} else if (e->launched && e->nodes > 0) {
		sim_warn("cuGraphLaunch: a graph holding work is launched once in the simulation");
		r = CUDA_ERROR_NOT_SUPPORTED;
	} else {
		items = e->items;
		e->items = NULL;
		e->launched = 1;
	}
	sim_registry_unlock();
	if (r != CUDA_SUCCESS || !items)
		return r;
	struct sim_stream *s;
	r = sim_stream_lock(hStream, &s);
	if (r == CUDA_SUCCESS && s->ctx->sticky != CUDA_SUCCESS) {
		r = s->ctx->sticky;
		sim_stream_unlock(s);
	}
	if (r != CUDA_SUCCESS) { /* nothing queued: the work stays the graph's */
		if (e->replayable) {
			drop_items(items);
			return r;
		}
		sim_registry_lock();
		e->items = items;
		e->launched = 0;
		sim_registry_unlock();
		return r;
	}
	while (items) { /* queueing itself cannot fail once the worker runs */
		struct sim_item *next = items->next;
		items->next = NULL;
		r = enqueue_item_locked(s, items);
		if (r != CUDA_SUCCESS) {
			items->next = next;
			sim_stream_unlock(s);
			drop_items(items);
			return r;
		}
		items = next;
	}
	sim_stream_unlock(s);
	return CUDA_SUCCESS;
}

SIM_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	SIM_REQUIRE_INIT();
	sim_registry_lock();
	int known = hGraphExec && sim_registry_remove(SIM_KIND_GRAPH_EXEC, hGraphExec);
	sim_registry_unlock();
	if (!known)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_graph_exec *e = (struct sim_graph_exec *)hGraphExec;
	drop_items(e->items); /* templates, or instantiated and never launched */
	free(e->types);
	free(e);
	return CUDA_SUCCESS;
}

/* cuGraphExecUpdate (every ABI: legacy.c): *result says why it failed,
 * *error_node is always NULL (the simulation's nodes have no handles). */
CUresult sim_graph_exec_update(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResult *result,
                               CUgraphNode *error_node)
{
	SIM_REQUIRE_INIT();
	*result = CU_GRAPH_EXEC_UPDATE_ERROR;
	*error_node = NULL;
	sim_registry_lock();
	struct sim_graph_exec *e = (struct sim_graph_exec *)hGraphExec;
	struct sim_graph *g = (struct sim_graph *)hGraph;
	struct sim_item *old = NULL;
	CUresult r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	if (!hGraphExec || !sim_registry_has(SIM_KIND_GRAPH_EXEC, hGraphExec) || !hGraph ||
	    !sim_registry_has(SIM_KIND_GRAPH, hGraph)) {
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (g->nodes != e->nodes) {
		*result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	} else if (g->nodes && !g->items) {
		sim_warn("cuGraphExecUpdate: the work of a graph is used once in the simulation (it was instantiated)");
		r = CUDA_ERROR_NOT_SUPPORTED;
	} else {
		size_t n = 0;
		const struct sim_item *i = g->items;
		while (i && i->fn == e->types[n]) {
			i = i->next;
			n++;
		}
		if (i) {
			*result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
		} else {
			old = e->items;
			exec_take_items(e, g);
			*result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
			r = CUDA_SUCCESS;
		}
	}
	sim_registry_unlock();
	drop_items(old); /* the previous templates (or work never launched) */
	return r;
}

SIM_API CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
	SIM_REQUIRE_INIT();
	sim_registry_lock();
	int known = hGraphExec && sim_registry_has(SIM_KIND_GRAPH_EXEC, hGraphExec);
	sim_registry_unlock();
	if (!known)
		return CUDA_ERROR_INVALID_VALUE;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r != CUDA_SUCCESS)
		return r;
	r = s->ctx->sticky;
	sim_stream_unlock(s);
	return r;
}

/* A host function is an item like any other: it runs in stream order on the
 * stream's worker, and everything queued behind it waits until it returns. */
struct host_call {
	CUhostFn fn;
	void *data;
};

static CUresult host_call_run(void *arg)
{
	struct host_call *h = arg;
	h->fn(h->data);
	free(h);
	return CUDA_SUCCESS;
}

static void host_call_drop(void *arg) { free(arg); }

/* A launch of a graph that captured it runs it again: a copy per run. */
static void *host_call_replay(void *arg)
{
	struct host_call *h = malloc(sizeof *h);
	if (h)
		*h = *(struct host_call *)arg;
	return h;
}

SIM_API CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	SIM_REQUIRE_INIT();
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	struct host_call *h = malloc(sizeof *h);
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	h->fn = fn;
	h->data = userData;
	struct sim_stream *s;
	CUresult r = sim_stream_lock(hStream, &s);
	if (r == CUDA_SUCCESS) {
		r = sim_stream_enqueue_locked(s, host_call_run, host_call_drop, host_call_replay, h);
		sim_stream_unlock(s);
	}
	if (r != CUDA_SUCCESS)
		free(h);
	return r;
}
