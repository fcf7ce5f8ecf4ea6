/* Internal header of the simulated CUDA driver (tests/sim/cuda/): the
 * objects behind the driver's handles and the helpers the files share.
 * Nothing here is exported; the exported API is cuda.h plus sim_stream.h.
 *
 * Locking: one mutex per context guards that context's streams, queues,
 * events and counters; `progress` is broadcast whenever an item of one of
 * its streams finishes or is dropped (stream, event and context waits all
 * sleep on it). The handle registry (registry.c) has its own lock, taken
 * before a context lock, never after.
 */
#ifndef NCCLSIM_CUDA_SIM_CUDA_H
#define NCCLSIM_CUDA_SIM_CUDA_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uthash.h>

#include "../sim_stream.h"

/* Every definition of an exported entry point carries this; the version
 * script (libcuda.map) then keeps only driver names and sim_stream.h. */
#define SIM_API __attribute__((visibility("default")))

#define SIM_MAX_DEVICES 64
#define SIM_CTX_STACK_MAX 64

/* ---- init.c: devices and process-wide state ---------------------------- */

struct sim_device {
	int physical;          /* index among the NCCLSIM_GPUS simulated GPUs */
	char name[256];
	char pci_bus_id[16];   /* "0000:18:00.0" */
	CUuuid uuid;
};

extern struct sim_device sim_devices[SIM_MAX_DEVICES];
extern int sim_device_count;   /* visible devices, after CUDA_VISIBLE_DEVICES */
extern atomic_int sim_initialized;
extern atomic_int sim_torn_down;   /* the exit handler cuInit registered ran */

/* CUDA_ERROR_NOT_INITIALIZED until cuInit succeeded; CUDA_ERROR_DEINITIALIZED
 * once the driver tore itself down at exit. */
#define SIM_REQUIRE_INIT() \
	do { if (atomic_load_explicit(&sim_torn_down, memory_order_acquire)) \
		return CUDA_ERROR_DEINITIALIZED; \
	     if (!atomic_load_explicit(&sim_initialized, memory_order_acquire)) \
		return CUDA_ERROR_NOT_INITIALIZED; } while (0)

int sim_driver_version(void);

/* ---- context.c ---------------------------------------------------------- */

struct sim_stream;

struct sim_ctx {
	int device;                 /* visible ordinal */
	int retains;                /* primary context retain count */
	pthread_mutex_t lock;
	pthread_cond_t progress;
	CUresult sticky;            /* first error of a work item; under lock */
	uint64_t pending;           /* items queued, not yet finished, all streams */
	struct sim_stream *default_stream; /* created lazily */
};

extern struct sim_ctx sim_contexts[SIM_MAX_DEVICES];

struct sim_ctx *sim_ctx_current(void);
struct sim_ctx *sim_ctx_from_handle(CUcontext handle); /* NULL if not ours */
CUresult sim_ctx_sticky(struct sim_ctx *ctx);
void sim_ctx_reset_all(void);   /* in a forked child */

/* ---- stream.c ------------------------------------------------------------ */

struct sim_item {
	struct sim_item *next;
	/* An event marker has no fn: the worker calls reached_locked(arg, ran)
	 * under the context lock in the same step that counts the item as
	 * finished, so a completed event implies a stream that got past it. */
	void (*reached_locked)(void *arg, int ran);
	simWorkFn fn;
	void (*drop)(void *arg);
	void *(*replay)(void *arg);  /* captured: a fresh arg per graph launch (or NULL: once) */
	void *arg;
};

struct sim_stream {
	struct sim_ctx *ctx;
	unsigned flags;
	int is_default;
	pthread_cond_t wake;         /* the worker sleeps here when idle */
	struct sim_item *head, *tail;
	uint64_t queued, finished;   /* items ever queued / finished or dropped */
	int worker_running;
	int destroyed;               /* handle destroyed; freed once idle */
	int users;                   /* API calls sleeping on it right now */
	int capturing, capture_invalidated;
	uint64_t capture_id;         /* this capture's id (process-wide, from 1) */
	struct sim_graph *capture_graph; /* the graph being built (cuStreamGetCaptureInfo) */
	struct sim_item *captured;   /* items queued during capture, to drop */
	size_t captured_count;
};

/* Resolve a stream handle (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD:
 * the current context's default stream, created on first use) and lock its
 * context. On success *out is set and (*out)->ctx->lock is held; release
 * with sim_stream_unlock. The _registry_held variant is for callers that
 * already hold the registry lock (to validate an event in the same step). */
CUresult sim_stream_lock(CUstream handle, struct sim_stream **out);
CUresult sim_stream_lock_registry_held(CUstream handle, struct sim_stream **out);
/* Queue an item on a locked stream (capture-aware). */
CUresult sim_stream_enqueue_locked(struct sim_stream *s, simWorkFn fn,
                                   void (*drop)(void *), void *(*replay)(void *), void *arg);
CUresult sim_stream_enqueue_node_locked(struct sim_stream *s, void (*reached_locked)(void *arg, int ran),
                                        void (*drop)(void *arg), void *(*replay)(void *arg), void *arg);
CUresult sim_stream_enqueue_marker_locked(struct sim_stream *s,
                                          void (*reached_locked)(void *arg, int ran), void *arg);
/* Wait (ctx lock held) until the stream drained; returns the sticky error. */
CUresult sim_stream_wait_locked(struct sim_stream *s);
/* cuStreamGetCaptureInfo: status (required), capture id and graph (each
 * may be NULL; set only while capturing). */
CUresult sim_stream_capture_info(CUstream hStream, CUstreamCaptureStatus *status, cuuint64_t *id,
                                 CUgraph *graph);
/* cuGraphExecUpdate, every ABI (legacy.c): *result and *error_node are
 * always set. */
CUresult sim_graph_exec_update(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResult *result,
                               CUgraphNode *error_node);
/* Unlock after sim_stream_lock, freeing a destroyed stream that went idle. */
void sim_stream_unlock(struct sim_stream *s);

/* ---- registry.c: live handles, so stale ones are refused -------------- */

enum sim_kind { SIM_KIND_STREAM, SIM_KIND_EVENT, SIM_KIND_GRAPH, SIM_KIND_GRAPH_EXEC };

void sim_registry_lock(void);
void sim_registry_unlock(void);
/* Under the registry lock: */
void sim_registry_add(enum sim_kind kind, void *obj);
int sim_registry_remove(enum sim_kind kind, void *obj); /* 1 if it was there */
int sim_registry_has(enum sim_kind kind, void *obj);
void sim_registry_reset(void);   /* in a forked child */

/* ---- errors ---------------------------------------------------------- */

/* A one-line message on stderr prefixed "ncclsim-cuda:". */
void sim_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* NCCLSIM_CUDA_SIM_CUDA_H */
